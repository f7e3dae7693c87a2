//! MCP-3 through the C ABI: the servers are the config's `"mcp_servers"` (see
//! `arkagent_runtime_new`); the host's authorization is a callback on the tool set.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::handle::{ArkAgentTools, ToolSet};
use crate::boundary::boundary;
use crate::callbacks::UserData;
use crate::codes::{poisoned, ArkAgentResult};
use crate::handles::{self, Kind};
use arkagent::mcp::McpAuth;

/// The most bytes an auth callback may write, NUL included.
const HEADERS_CAP: usize = 16 * 1024;

/// MCP-1: writes the headers for MCP server `server` (its config's `"name"`; NUL-terminated,
/// owned by the library, valid only during the call) into `headers_json` (a buffer owned by
/// the library, valid only during the call) as a NUL-terminated JSON object (`{"Authorization":"Bearer …"}`) or
/// array of `[name, value]` pairs, at most `headers_cap` bytes with the NUL, and returns
/// 0; any other value (or text that does not parse) fails the server with `mcp_auth` in
/// its `mcp_server` event. Called before the server's first request and, with `refresh`
/// true, once after it answered 401/403 (run the app's OAuth refresh then). Called on the
/// thread running the run; must return promptly. The headers stay in memory for the
/// connection; they are never logged, stored or put in an event.
pub type ArkAgentMcpAuthCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, server: *const c_char, refresh: bool, headers_json: *mut c_char, headers_cap: usize) -> i32>;

struct HostAuth {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, bool, *mut c_char, usize) -> i32,
    userdata: UserData,
}

#[async_trait]
impl McpAuth for HostAuth {
    async fn headers(&self, server: &str, refresh: bool) -> Result<Vec<(String, String)>, String> {
        let name = CString::new(server).map_err(|_| "the server name holds a NUL".to_owned())?;
        let mut buf = vec![0u8; HEADERS_CAP];
        // SAFETY: the host registered this callback and promised userdata stays valid;
        // `buf` is writable for HEADERS_CAP bytes.
        let status = unsafe { (self.callback)(self.userdata.get(), name.as_ptr(), refresh, buf.as_mut_ptr().cast(), HEADERS_CAP) };
        if status != 0 {
            return Err(format!("the app's auth callback returned {status}"));
        }
        let end = buf.iter().position(|b| *b == 0).unwrap_or(HEADERS_CAP);
        let text = std::str::from_utf8(&buf[..end]).map_err(|_| "the app's headers are not UTF-8".to_owned())?;
        parse_headers(text).ok_or_else(|| "the app's headers are not a JSON object or [name, value] pairs".to_owned())
    }
}

fn parse_headers(text: &str) -> Option<Vec<(String, String)>> {
    arkagent::mcp::headers_from_json(serde_json::from_str(text).ok()?)
}

/// MCP-1: sets the auth callback of the MCP servers of runtimes created with these tools
/// from now on (`callback` NULL removes it); a runtime keeps the one it was created with,
/// and its servers' static `"headers"` are sent too. `userdata` is passed to `callback`
/// and must stay valid until every runtime created with it is freed. Errors:
/// `ARK_AGENT_RESULT_NULL_ARGUMENT` (`tools` NULL), `ARK_AGENT_RESULT_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn arkagent_tools_set_mcp_auth(tools: *mut ArkAgentTools, callback: ArkAgentMcpAuthCallback, userdata: *mut c_void) -> ArkAgentResult {
    boundary(|| {
        let set: Arc<Mutex<ToolSet>> = handles::get(Kind::Tools, tools)?;
        let auth = callback.map(|callback| Arc::new(HostAuth { callback, userdata: UserData(userdata) }) as Arc<dyn McpAuth>);
        set.lock().map_err(|_| poisoned())?.mcp_auth = auth;
        Ok(())
    })
}
