//! MCP-4: the client the protocol's conformance suite drives (`@modelcontextprotocol/
//! conformance client --command "arkagent-mcp-conformance"`, scripts/mcp-conformance.sh):
//! the server's URL is the last argument, the scenario is `MCP_CONFORMANCE_SCENARIO`. It
//! connects with arkagent's MCP client over a real HTTP transport (initialize, the tool
//! list), then calls each tool the scenario asks for (`add_numbers` in `tools_call`,
//! `test_reconnection` in `sse-retry`) as a run would. Exits 0 when every step worked.

use std::process::ExitCode;
use std::sync::Arc;

use arkagent::mcp::{McpHub, McpServer, McpServerConfig};
use arkagent::tools::{NamespacedMemoryStore, ToolAbort};
use arkagent::{CancellationToken, ToolContext, ToolInvocation};
use arkagent_demo::transport::UreqTransport;
use serde_json::json;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: arkagent-mcp-conformance URL");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let server = match McpServer::new(McpServerConfig::new("conformance", url)) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("bad server URL: {e}");
            return ExitCode::from(2);
        }
    };
    let hub = McpHub::new(vec![server], Arc::new(UreqTransport::loopback()));
    let cancel = CancellationToken::new();
    let (events, tools) = hub.prepare(0, &cancel).await;
    let mut ok = true;
    for e in &events {
        println!("mcp_server {}: {:?} {} tools {:?} {:?}", e.server, e.state, e.tool_count, e.error_code, e.message);
        ok &= e.error_code.is_none();
    }
    let wanted: &[(&str, serde_json::Value)] = match scenario.as_str() {
        "tools_call" => &[("add_numbers", json!({"a": 5, "b": 3}))],
        "sse-retry" => &[("test_reconnection", json!({}))],
        _ => &[],
    };
    for tool in tools.unwrap_or_default() {
        let Some((_, arguments)) = wanted.iter().find(|(name, _)| tool.definition.name == format!("conformance__{name}")) else { continue };
        let ctx = ToolContext {
            session_id: "conformance".into(),
            run_id: "run".into(),
            cancel: cancel.clone(),
            abort: ToolAbort::default(),
            memory: NamespacedMemoryStore::new().scope("conformance"),
            episodes: None,
        };
        let call = ToolInvocation { call_id: "call_1".into(), name: tool.definition.name.clone(), arguments: arguments.clone() };
        let result = tool.executor.execute(call, ctx).await;
        println!("{} -> error {} {}", tool.definition.name, result.is_error, result.content);
        ok &= !result.is_error;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
