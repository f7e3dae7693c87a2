//! MCP-3: a server's JSON form — an entry of the C config's `"mcp_servers"` and an ArkTS
//! `McpServerOptions` (its camelCase numbers) — read by hand from the JSON value: one small
//! reader for both surfaces instead of a derived decoder per input (PERF-9).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{McpApproval, McpAuth, McpServer, McpServerConfig, DEFAULT_CONNECT_TIMEOUT_MS, DEFAULT_RETRY_AFTER_MS};
use crate::error::{ArkAgentError, ErrorCode};

/// Headers as JSON — an object (`{"Authorization": "Bearer …"}`) or `[name, value]` pairs —
/// or `None` for anything else.
pub fn headers_from_json(value: Value) -> Option<Vec<(String, String)>> {
    let text = |v: Value| match v {
        Value::String(s) => Some(s),
        _ => None,
    };
    match value {
        Value::Object(map) => map.into_iter().map(|(k, v)| Some((k, text(v)?))).collect(),
        Value::Array(pairs) => pairs
            .into_iter()
            .map(|pair| match pair {
                Value::Array(mut p) if p.len() == 2 => {
                    let value = text(p.pop()?)?;
                    Some((text(p.pop()?)?, value))
                }
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn shape(what: String) -> ArkAgentError {
    ArkAgentError::InvalidJson(format!("MCP server: {what}"))
}

/// The members of one server, taken out of its object as they are read.
struct Members(Map<String, Value>);

impl Members {
    fn take(&mut self, keys: &[&str]) -> Option<Value> {
        keys.iter().find_map(|k| self.0.remove(*k)).filter(|v| !v.is_null())
    }

    fn text(&mut self, key: &str) -> Result<Option<String>, ArkAgentError> {
        match self.take(&[key]) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(shape(format!("{key} must be a string"))),
        }
    }

    fn names(&mut self, key: &str) -> Result<Option<Vec<String>>, ArkAgentError> {
        match self.take(&[key]) {
            None => Ok(None),
            Some(Value::Array(items)) => items.into_iter().map(|v| v.as_str().map(str::to_owned).ok_or_else(|| shape(format!("{key} must be strings")))).collect::<Result<_, _>>().map(Some),
            Some(_) => Err(shape(format!("{key} must be an array of strings"))),
        }
    }

    fn millis(&mut self, keys: &[&str]) -> Result<Option<u64>, ArkAgentError> {
        match self.take(keys) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| shape(format!("{} must be a whole number of ms, 0 or more", keys[0]))),
        }
    }
}

impl McpServer {
    /// A server from its JSON form (`{"name", "url", "headers"?, "allow"?, "deny"?,
    /// "approval"?, "timeout_ms"?, "connect_timeout_ms"?, "retry_after_ms"?}`, the numbers
    /// also camelCase), with the host's `auth`. Errors: `invalid_json` (not that shape: a
    /// missing or unknown member, a wrong type, a negative or fractional number),
    /// `invalid_config` (see [`McpServerConfig::validate`]; an approval other than
    /// `"never"`, `"always"` or names).
    pub fn from_json(value: Value, auth: Option<Arc<dyn McpAuth>>) -> Result<Self, ArkAgentError> {
        let Value::Object(map) = value else { return Err(shape("must be an object".to_owned())) };
        let mut m = Members(map);
        let (Some(name), Some(url)) = (m.text("name")?, m.text("url")?) else {
            return Err(shape("name and url are required".to_owned()));
        };
        let mut c = McpServerConfig::new(name, url);
        c.auth = auth;
        if let Some(h) = m.take(&["headers"]) {
            c.headers = headers_from_json(h).ok_or_else(|| shape("headers must be an object of strings or [name, value] pairs".to_owned()))?;
        }
        c.allow = m.names("allow")?;
        c.deny = m.names("deny")?.unwrap_or_default();
        c.approval = match m.take(&["approval"]) {
            None => McpApproval::Never,
            Some(Value::String(w)) if w == "never" => McpApproval::Never,
            Some(Value::String(w)) if w == "always" => McpApproval::Always,
            Some(Value::String(w)) => {
                let message = format!("MCP approval {w:?}: expected \"never\", \"always\" or tool names");
                return Err(ArkAgentError::config(ErrorCode::InvalidConfig, message));
            }
            Some(v) => McpApproval::Tools(Members(Map::from_iter([("approval".to_owned(), v)])).names("approval")?.unwrap_or_default()),
        };
        c.timeout_ms = m.millis(&["timeout_ms", "timeoutMs"])?;
        c.connect_timeout_ms = m.millis(&["connect_timeout_ms", "connectTimeoutMs"])?.unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS);
        c.retry_after_ms = m.millis(&["retry_after_ms", "retryAfterMs"])?.unwrap_or(DEFAULT_RETRY_AFTER_MS);
        if let Some(unknown) = m.0.keys().next() {
            return Err(shape(format!("unknown member {unknown:?}")));
        }
        Self::new(c)
    }
}
