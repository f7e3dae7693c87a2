//! MCP-3: a runtime's MCP servers (`AgentRuntimeConfig.addMcpServer`), their options and
//! the app's authorization callback. The options object is read as JSON (as
//! `ModelConfig.extraBody` is) and decoded by the core like the C config's `"mcp_servers"`
//! entries (camelCase numbers accepted): one decoder for both surfaces (PERF-9).

use std::sync::Arc;

use async_trait::async_trait;
use napi_derive_ohos::napi;

use crate::callback::{JsAsyncFn, JsFunction};
use crate::codes::ModuleCode;
use crate::error::{internal, thrown, Thrown};

/// MCP-3: one MCP server whose tools the runtime offers (AgentRuntimeConfig.addMcpServer).
/// The model sees its tools as `<name>__<tool>`. The server is reached through the
/// runtime's HttpTransport (NetworkKit on the phone) at the start of the first run, which
/// emits an "mcp_server" event; a server that cannot be reached fails only itself.
#[napi(object, js_name = "McpServerOptions", object_to_js = false)]
#[allow(dead_code)] // declares index.d.ts's interface; the options are read as JSON
pub struct JsMcpServer {
    /// The tools' namespace: 1 to 32 of A-Z, a-z, 0-9 and "-".
    pub name: String,
    /// The server's Streamable HTTP endpoint (https:, or http: for a local server). Put no
    /// credential in it: the URL is not treated as a secret.
    pub url: String,
    /// Headers sent with every request (e.g. Authorization). Their values are secrets:
    /// never in events, logs, errors or exports.
    #[napi(ts_type = "Record<string, string>")]
    pub headers: Option<()>,
    /// Only these of the server's tools are offered (its own names); absent: all.
    pub allow: Option<Vec<String>>,
    /// These of the server's tools are never offered.
    pub deny: Option<Vec<String>>,
    /// Which calls wait for a person's approval (TOOL-1): "never" (the default), "always",
    /// or the server's names of the tools that do.
    #[napi(ts_type = "string | string[]")]
    pub approval: Option<()>,
    /// One call's deadline in ms (TOOL-4); absent: the runtime's toolTimeoutMs; 0: none.
    pub timeout_ms: Option<f64>,
    /// The deadline of connecting (initialize and tools/list), in ms (default 15000).
    pub connect_timeout_ms: Option<f64>,
    /// How long a server that failed is left alone before a run tries again, in ms
    /// (default 30000).
    pub retry_after_ms: Option<f64>,
}

/// What an McpAuthorize callback is asked for: the server's name, and whether the server
/// refused the last headers (401/403: refresh the token).
#[napi(object, js_name = "McpAuthRequest")]
pub struct JsMcpAuthRequest {
    pub server: String,
    pub refresh: bool,
}

/// The core server of one `McpServerOptions` (a JS object, as JSON). Errors:
/// `invalid_argument` (not an object of that shape: a missing or unknown member, a wrong
/// type, a negative or fractional number), `invalid_config` (a value the core refuses).
pub fn server_config(options: serde_json::Value, authorize: Option<JsFunction<'_, JsMcpAuthRequest>>) -> Result<arkagent::mcp::McpServer, Thrown> {
    let auth = match authorize {
        Some(f) => Some(Arc::new(JsMcpAuth { authorize: JsAsyncFn::new(f).map_err(internal)? }) as Arc<dyn arkagent::mcp::McpAuth>),
        None => None,
    };
    let shape = |message: String| napi_ohos::Error::new(ModuleCode::InvalidArgument.to_owned_code(), message);
    if !options.is_object() {
        return Err(shape("McpServerOptions must be an object".to_owned()));
    }
    arkagent::mcp::McpServer::from_json(options, auth).map_err(|e| match e.code() {
        arkagent::ErrorCode::InvalidJson => shape(format!("McpServerOptions: {e}")),
        _ => thrown(e),
    })
}

/// MCP-1: a JS McpAuthorize as the core's.
struct JsMcpAuth {
    authorize: JsAsyncFn<JsMcpAuthRequest, serde_json::Map<String, serde_json::Value>>,
}

#[async_trait]
impl arkagent::mcp::McpAuth for JsMcpAuth {
    async fn headers(&self, server: &str, refresh: bool) -> Result<Vec<(String, String)>, String> {
        match self.authorize.call(JsMcpAuthRequest { server: server.to_owned(), refresh }).await {
            Ok(headers) => arkagent::mcp::headers_from_json(serde_json::Value::Object(headers)).ok_or_else(|| "the app's authorize callback gave no header object".to_owned()),
            // The app's message may quote a token: only that it failed.
            Err(_) => Err("the app's authorize callback threw or rejected".to_owned()),
        }
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: McpServerOptions

// declare: McpAuthRequest

/**
 * MCP-1: the app's authorization for an MCP server (AgentRuntimeConfig.addMcpServer):
 * resolves with the headers to send (e.g. { 'Authorization': 'Bearer ' + token }), asked
 * before the server's first request and again with `refresh` true once after it answered
 * 401 or 403 — where the app runs its OAuth flow or reads its keystore. A throw or
 * rejection fails the server with "mcp_auth". The headers are kept in memory only.
 */
export type McpAuthorize = (request: McpAuthRequest) => Record<string, string> | Promise<Record<string, string>>;
*/
