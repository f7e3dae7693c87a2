//! MCP-2: a server's tools as ordinary tools — names namespaced per server, the list read
//! page by page within bounds, a call's result turned into what the model reads (text,
//! images as image parts, structured content), and the `notifications/cancelled` a call
//! the run stopped waiting for sends.

use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::rpc::{Connection, RemoteTool};
use super::{McpError, McpErrorCode, McpServer, MAX_ANSWER_BYTES, MAX_TOOLS_PER_SERVER, MAX_TOOL_LIST_BYTES};
use crate::history::{ImageData, ImagePart};
use crate::llm::host_call::CancelScope;
use crate::llm::HttpTransport;
use crate::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolResult};

/// Between the server's name and its tool's in the name the model sees.
pub const MCP_NAME_SEPARATOR: &str = "__";

/// The most characters of a tool's description kept (the rest is cut, marked `…`).
const MAX_DESCRIPTION_CHARS: usize = 4096;

/// The name the model sees for `server`'s tool `tool`: `<server>__<tool>` when that is a
/// valid provider tool name (`^[A-Za-z0-9_-]{1,64}$`); otherwise every other character
/// becomes `_`, the name is cut to 57 characters and `-` plus 6 hex digits of the tool
/// name's SHA-256 are appended, so two tools never meet under one name.
///
/// ```
/// use arkagent::mcp::mcp_tool_name;
/// assert_eq!(mcp_tool_name("maps", "search"), "maps__search");
/// let odd = mcp_tool_name("maps", "geo.search/v2");
/// assert!(odd.starts_with("maps__geo_search_v2-") && odd.len() == "maps__geo_search_v2-".len() + 6);
/// ```
pub fn mcp_tool_name(server: &str, tool: &str) -> String {
    let plain = format!("{server}{MCP_NAME_SEPARATOR}{tool}");
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    if plain.len() <= 64 && plain.chars().all(valid) {
        return plain;
    }
    let mut name: String = plain.chars().map(|c| if valid(c) { c } else { '_' }).take(57).collect();
    let digest = Sha256::digest(tool.as_bytes());
    name.push('-');
    name.extend(digest.iter().take(3).map(|b| format!("{b:02x}")));
    name
}

/// Every page of `tools/list`, within [`MAX_TOOL_LIST_BYTES`] and [`MAX_TOOLS_PER_SERVER`].
pub(super) async fn list_tools(conn: &Connection, transport: &dyn HttpTransport, cancel: &CancellationToken) -> Result<Vec<RemoteTool>, McpError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut bytes = 0usize;
    for _page in 0..64 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let result = conn.request(transport, (conn.next_id(), "tools/list", params), cancel, MAX_TOOL_LIST_BYTES, &mut |_| {}).await?;
        let Some(page) = result["tools"].as_array() else {
            return Err(McpError::new(McpErrorCode::McpProtocol, "tools/list: the result has no tools array"));
        };
        for tool in page {
            bytes += tool.to_string().len();
            if bytes > MAX_TOOL_LIST_BYTES || tools.len() >= MAX_TOOLS_PER_SERVER {
                return Err(McpError::new(McpErrorCode::McpTooLarge, format!("the tool list is over {MAX_TOOL_LIST_BYTES} bytes or {MAX_TOOLS_PER_SERVER} tools")));
            }
            tools.push(tool_of(tool)?);
        }
        match result["nextCursor"].as_str() {
            Some(next) if !next.is_empty() && cursor.as_deref() != Some(next) => cursor = Some(next.to_owned()),
            _ => return Ok(tools),
        }
    }
    Err(McpError::new(McpErrorCode::McpTooLarge, "tools/list: more than 64 pages"))
}

/// One entry of a `tools/list` page (REL-7: fuzzed by `arkagent::fuzzing::check_mcp_tools`):
/// a tool needs a non-empty name; a schema that is not an object's becomes the empty
/// object schema (a provider refuses a tools array with another kind: one odd schema must
/// not fail every request of the run).
pub(super) fn tool_of(tool: &Value) -> Result<RemoteTool, McpError> {
    let Some(name) = tool["name"].as_str().filter(|n| !n.is_empty()) else {
        return Err(McpError::new(McpErrorCode::McpProtocol, "tools/list: a tool has no name"));
    };
    let schema = match &tool["inputSchema"] {
        Value::Object(o) if o.get("type").is_none_or(|t| t == "object") => {
            let mut o = o.clone();
            o.insert("type".to_owned(), json!("object"));
            Value::Object(o)
        }
        _ => json!({"type": "object"}),
    };
    Ok(RemoteTool { name: name.to_owned(), description: description_of(tool), input_schema: schema })
}

/// The description the model reads: the server's words unchanged (title first when the
/// description is missing), cut at [`MAX_DESCRIPTION_CHARS`].
fn description_of(tool: &Value) -> String {
    let text = tool["description"].as_str().or(tool["title"].as_str()).unwrap_or("");
    match text.char_indices().nth(MAX_DESCRIPTION_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The definition the model sees for `tool` of `server`.
pub(super) fn definition_of(server: &McpServer, tool: &RemoteTool) -> ToolDefinition {
    let config = server.config();
    let mut definition = ToolDefinition::new(mcp_tool_name(&config.name, &tool.name), tool.description.clone(), tool.input_schema.clone());
    definition.timeout_ms = config.timeout_ms;
    definition.requires_approval = config.needs_approval(&tool.name);
    definition
}

/// Runs one of a server's tools with `tools/call`.
pub(super) struct McpTool {
    pub(super) server: McpServer,
    pub(super) transport: Arc<dyn HttpTransport>,
    /// The server's own name of the tool.
    pub(super) remote: String,
}

#[async_trait]
impl ToolExecutor for McpTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        let conn = &self.server.inner;
        let id = conn.next_id();
        let mut note = CancelNote { conn: Arc::clone(conn), transport: Arc::clone(&self.transport), id, armed: true };
        let params = json!({"name": self.remote, "arguments": call.arguments, "_meta": {"progressToken": call.call_id}});
        let answer = conn.request(&*self.transport, (id, "tools/call", params), &ctx.cancel, MAX_ANSWER_BYTES, &mut |_| {}).await;
        note.armed = ctx.cancel.is_cancelled();
        match answer {
            Ok(result) => {
                let mut out = result_of(&self.server.config().name, &self.remote, result);
                // A server's text never carries this server's credentials to the model, nor
                // its structured content to the host's events.
                out.content = conn.redact(&out.content);
                if let Some(meta) = out.metadata.as_mut() {
                    conn.redact_value(meta);
                }
                out
            }
            Err(e) => ToolResult::error(e.code.as_str(), &e.message),
        }
    }
}

/// MCP-1: a call the run stopped waiting for (cancelled, past its deadline, dropped) is
/// cancelled at the server too — `notifications/cancelled`, best effort, once the call's
/// future is gone: before the blocking call that made it returns, on its thread (C:
/// [`CancelScope::defer`]; at most [`CANCEL_NOTE_MS`], then the host's request is
/// cancelled), or on the executor where no blocking call waits (Rust, N-API).
struct CancelNote {
    conn: Arc<Connection>,
    transport: Arc<dyn HttpTransport>,
    id: u64,
    armed: bool,
}

impl Drop for CancelNote {
    fn drop(&mut self) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else { return };
        // 2026-07-28 cancels by closing the stream, which dropping the call does; a
        // connection whose handshake was cut (as the call was dropped) has no session to
        // cancel it in.
        let initialised = self.conn.lock().protocol.as_deref().is_some_and(|p| p != super::STATELESS_PROTOCOL_VERSION);
        if !self.armed || !initialised {
            return;
        }
        let (conn, transport, id) = (Arc::clone(&self.conn), Arc::clone(&self.transport), self.id);
        let note = Box::pin(async move {
            let params = json!({"requestId": id, "reason": "the run stopped waiting for this call"});
            let give_up = CancellationToken::new();
            let notify = conn.notify(&*transport, "notifications/cancelled", Some(params), &give_up);
            tokio::pin!(notify);
            if tokio::time::timeout(std::time::Duration::from_millis(CANCEL_NOTE_MS), &mut notify).await.is_err() {
                // Past its time: the host's request is cancelled (its cancel callback runs).
                give_up.cancel();
                let _ = notify.await;
            }
        });
        if let Err(note) = CancelScope::defer(note) {
            handle.spawn(note);
        }
    }
}

/// How long a call's `notifications/cancelled` may take (a cancelled C call waits for it).
const CANCEL_NOTE_MS: u64 = 1_000;

/// What the model reads of a `tools/call` result: the text blocks, images as image parts,
/// other blocks as one line each; the structured content as JSON text when there is no
/// text; `isError` as a tool error (`mcp_tool_error`) with the server's text. The host
/// gets the server, the tool and the structured content in the metadata.
pub(super) fn result_of(server: &str, tool: &str, mut result: Value) -> ToolResult {
    let mut lines: Vec<String> = Vec::new();
    let mut images = Vec::new();
    for block in result["content"].as_array().map(Vec::as_slice).unwrap_or_default() {
        match block["type"].as_str().unwrap_or("") {
            "text" => lines.push(block["text"].as_str().unwrap_or("").to_owned()),
            "image" => match image_of(block) {
                Ok(image) => images.push(image),
                Err(code) => lines.push(format!("[an image the server sent was refused: {code}]")),
            },
            "resource" => match block["resource"]["text"].as_str() {
                Some(text) => lines.push(text.to_owned()),
                None => lines.push(format!("[resource {} omitted]", block["resource"]["uri"].as_str().unwrap_or("?"))),
            },
            "resource_link" => lines.push(format!("[resource link: {} {}]", block["name"].as_str().unwrap_or(""), block["uri"].as_str().unwrap_or(""))),
            other => lines.push(format!("[{other} content omitted]")),
        }
    }
    // Moved, not copied (PERF-2: a large structured answer is held once).
    let structured = result.get_mut("structuredContent").map(Value::take).filter(|v| !v.is_null());
    if lines.is_empty() {
        if let Some(s) = &structured {
            lines.push(s.to_string());
        }
    }
    let text = lines.join("\n");
    let mut out = if result["isError"].as_bool() == Some(true) {
        let mut failed = ToolResult::failure(text);
        failed.error_code = Some(McpErrorCode::McpToolError.as_str().to_owned());
        failed
    } else {
        ToolResult::ok(text)
    };
    let mut meta = json!({"server": server, "tool": tool});
    if let Some(s) = structured {
        meta["structured_content"] = s;
    }
    out.metadata = Some(json!({"mcp": meta}));
    out.with_images(images)
}

fn image_of(block: &Value) -> Result<ImagePart, &'static str> {
    let data = block["data"].as_str().ok_or("image_invalid")?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(data.trim()).map_err(|_| "image_invalid")?;
    let image = match block["mimeType"].as_str() {
        Some(mime) => ImageData::with_mime(mime, bytes),
        None => ImageData::new(bytes),
    };
    image.map(|i| ImagePart::data(i, None)).map_err(|e| e.code().as_str())
}

/// REL-7: one `tools/list` entry as the runtime reads it — the model-facing name, the
/// description and the schema, or the error code — for `arkagent::fuzzing::check_mcp_tools`.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn tool_for_fuzzing(server: &str, tool: &Value) -> Result<(String, String, Value), &'static str> {
    let remote = tool_of(tool).map_err(|e| e.code.as_str())?;
    Ok((mcp_tool_name(server, &remote.name), remote.description, remote.input_schema))
}

/// REL-7: what the model reads of a `tools/call` result, for `arkagent::fuzzing::check_mcp_tools`.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub fn result_for_fuzzing(server: &str, tool: &str, result: Value) -> ToolResult {
    result_of(server, tool, result)
}
