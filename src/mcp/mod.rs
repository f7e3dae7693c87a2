//! MCP-1…MCP-3: tools from Model Context Protocol servers, over the host's own HTTP.
//!
//! A server is reached with Streamable HTTP (a JSON-RPC `POST` answered with JSON or an
//! event stream) through the runtime's [`HttpTransport`](crate::llm::HttpTransport) —
//! NetworkKit on the phone, no socket and no new permission. The client is ours (a few
//! hundred lines: `rpc.rs` speaks the protocol, `tools.rs` turns its tools into ordinary
//! tools, `hub.rs` keeps one runtime's view); BENCHMARKS.md, "MCP client", says why not
//! `rmcp`.
//!
//! - **Versions**: `initialize` offers [`LATEST_PROTOCOL_VERSION`] and accepts any of
//!   [`SUPPORTED_PROTOCOL_VERSIONS`] the server answers; the session id a server hands out
//!   (`Mcp-Session-Id`) is sent back, and a `404` on it re-initialises once. A server that
//!   refuses `initialize` is asked `server/discover` the stateless way
//!   ([`STATELESS_PROTOCOL_VERSION`]) and, when it lists that revision, spoken to so.
//! - **Lazily**: a server is connected (initialise, then every page of `tools/list`) at the
//!   first run of a runtime that has it; its tools then stay put for the session (the
//!   provider's prompt cache depends on it). A `notifications/tools/list_changed` the
//!   server sends is applied at the start of the next run, never mid-run: that request's
//!   whole prompt misses the provider's cache once.
//! - **Isolated**: a server that cannot be reached fails only itself — an `mcp_server`
//!   event with a stable [`McpErrorCode`], the run goes on with the other tools, and the
//!   next run tries again once [`McpServerConfig::retry_after_ms`] has passed. A call to a
//!   tool of a server that went down answers the model with a tool error naming the code.
//! - **Secrets**: header values (static or from [`McpAuth`]) go into requests only; events,
//!   logs, errors, exports and the store never carry them, and a server's error text is
//!   redacted of them.

mod hub;
mod json;
mod rpc;
mod stream;
mod tools;

use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use json::headers_from_json;

use crate::error::{ArkAgentError, ErrorCode};

pub use hub::{McpHub, McpServerEvent, McpServerState};
pub use rpc::McpServer;
pub use tools::{mcp_tool_name, MCP_NAME_SEPARATOR};
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use stream::read_answer_for_fuzzing;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub use tools::{result_for_fuzzing, tool_for_fuzzing};

/// The revision `initialize` offers first.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";
/// The revisions `initialize` accepts, newest first: a server answering it with another
/// one is refused with `mcp_version`.
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
/// The stateless revision (no `initialize`, no session): spoken with a server that refuses
/// `initialize` and lists it in its `server/discover` answer. Each request then carries the
/// revision and the client in `params._meta` and the `Mcp-Method` / `Mcp-Name` headers.
pub const STATELESS_PROTOCOL_VERSION: &str = "2026-07-28";
/// Default deadline of connecting (initialise and list the tools), in ms.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 15_000;
/// Default wait before a server that failed is tried again, in ms.
pub const DEFAULT_RETRY_AFTER_MS: u64 = 30_000;
/// The most bytes one answer may take (a tool's images included); past it the answer is
/// refused with `mcp_too_large`.
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The most bytes a server's tool list may take, all pages together (descriptions and
/// schemas go into every prompt); past it the server is refused with `mcp_too_large`.
pub const MAX_TOOL_LIST_BYTES: usize = 1024 * 1024;
/// The most tools one server may offer.
pub const MAX_TOOLS_PER_SERVER: usize = 256;

/// MCP-3: what went wrong with a server, as a stable code (in `mcp_server` events and in
/// the tool errors the model reads).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpErrorCode {
    /// The host transport failed (network, DNS, TLS, the host's timeout).
    McpUnreachable,
    /// Connecting took longer than [`McpServerConfig::connect_timeout_ms`].
    McpTimeout,
    /// The server answered 401 or 403 (after one refresh through [`McpAuth`], if set).
    McpAuth,
    /// The server answered another HTTP error status.
    McpHttp,
    /// The answer was not MCP: not JSON-RPC, the wrong content type, a stream that ended
    /// before the answer, a result of the wrong shape.
    McpProtocol,
    /// The server speaks none of [`SUPPORTED_PROTOCOL_VERSIONS`].
    McpVersion,
    /// An answer over [`MAX_ANSWER_BYTES`], or a tool list over [`MAX_TOOL_LIST_BYTES`] or
    /// [`MAX_TOOLS_PER_SERVER`].
    McpTooLarge,
    /// The server answered the request with a JSON-RPC error.
    McpRpcError,
    /// The tool ran and reported a failure (`isError`): the model reads the server's text.
    McpToolError,
}

impl McpErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [McpErrorCode; 9] = [
        Self::McpUnreachable,
        Self::McpTimeout,
        Self::McpAuth,
        Self::McpHttp,
        Self::McpProtocol,
        Self::McpVersion,
        Self::McpTooLarge,
        Self::McpRpcError,
        Self::McpToolError,
    ];

    /// The stable string, e.g. `"mcp_unreachable"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::McpUnreachable => "mcp_unreachable",
            Self::McpTimeout => "mcp_timeout",
            Self::McpAuth => "mcp_auth",
            Self::McpHttp => "mcp_http",
            Self::McpProtocol => "mcp_protocol",
            Self::McpVersion => "mcp_version",
            Self::McpTooLarge => "mcp_too_large",
            Self::McpRpcError => "mcp_rpc_error",
            Self::McpToolError => "mcp_tool_error",
        }
    }
}

/// A failure talking to a server: its code and a message free of secrets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code:?}: {message}")]
pub struct McpError {
    /// The stable code.
    pub code: McpErrorCode,
    /// What happened; header values are redacted out of it.
    pub message: String,
}

impl McpError {
    pub(crate) fn new(code: McpErrorCode, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }
}

/// MCP-1: the host's authorization, asked for headers before a server's first request and
/// again (with `refresh`) after the server answered 401 or 403 — where an app runs its
/// OAuth flow or reads a token from its keystore. The headers are kept in memory for the
/// connection and never written anywhere.
#[async_trait]
pub trait McpAuth: Send + Sync {
    /// The headers for `server` (e.g. `[("Authorization", "Bearer …")]`); `Err` with a
    /// message (no secret in it) fails the server with `mcp_auth`.
    async fn headers(&self, server: &str, refresh: bool) -> Result<Vec<(String, String)>, String>;
}

/// MCP-2: which of a server's tools wait for a person's approval (TOOL-1) before they run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpApproval {
    /// None (the default); the runtime's [`ToolPolicy`](crate::tools::ToolPolicy) still
    /// sees every call.
    #[default]
    Never,
    /// Every call.
    Always,
    /// Calls of these tools (the server's own names).
    Tools(Vec<String>),
}

/// MCP-3: one MCP server a runtime offers the tools of.
#[derive(Clone)]
pub struct McpServerConfig {
    /// The tools' namespace: `[A-Za-z0-9-]{1,32}` (no `_`, so the namespace ends where
    /// [`MCP_NAME_SEPARATOR`] begins); the model sees `<name>__<tool>`.
    pub name: String,
    /// The server's endpoint, `https://…` (or `http://` for a server on the device or in
    /// a test). Put no credential in it: the URL is not treated as a secret.
    pub url: String,
    /// Headers sent with every request (e.g. `Authorization`); values are secrets.
    pub headers: Vec<(String, String)>,
    /// Headers from the host at connection time and after a 401/403; see [`McpAuth`].
    pub auth: Option<Arc<dyn McpAuth>>,
    /// Only these of the server's tools are offered (its own names); `None`: all.
    pub allow: Option<Vec<String>>,
    /// These of the server's tools are never offered, even when allowed.
    pub deny: Vec<String>,
    /// Which tools wait for approval.
    pub approval: McpApproval,
    /// The deadline of one tool call in ms (TOOL-4), `None`: the runtime's
    /// `tool_timeout_ms`; `Some(0)`: none.
    pub timeout_ms: Option<u64>,
    /// The deadline of connecting (initialise and list), in ms; > 0.
    pub connect_timeout_ms: u64,
    /// How long a server that failed is left alone before a run tries it again, in ms.
    pub retry_after_ms: u64,
}

impl std::fmt::Debug for McpServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("McpServerConfig")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("auth", &self.auth.as_ref().map(|_| "McpAuth"))
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field("approval", &self.approval)
            .field("timeout_ms", &self.timeout_ms)
            .finish_non_exhaustive()
    }
}

impl McpServerConfig {
    /// A server with no headers, no filter, no approval and the default deadlines.
    pub fn new(name: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            url: url.into(),
            headers: Vec::new(),
            auth: None,
            allow: None,
            deny: Vec::new(),
            approval: McpApproval::Never,
            timeout_ms: None,
            connect_timeout_ms: DEFAULT_CONNECT_TIMEOUT_MS,
            retry_after_ms: DEFAULT_RETRY_AFTER_MS,
        }
    }

    /// This server with a header on every request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Checks the name, the URL and the deadlines. Errors: `invalid_config`.
    pub fn validate(&self) -> Result<(), ArkAgentError> {
        let bad = |m: String| Err(ArkAgentError::config(ErrorCode::InvalidConfig, m));
        let name_ok = !self.name.is_empty() && self.name.len() <= 32 && self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        if !name_ok {
            return bad(format!("MCP server name {:?} must be 1 to 32 of A-Z, a-z, 0-9 and -", self.name));
        }
        let url = self.url.to_ascii_lowercase();
        if !(url.starts_with("https://") || url.starts_with("http://")) || self.url.len() < 9 || self.url.chars().any(char::is_whitespace) {
            return bad(format!("MCP server {:?}: the url must be an http(s) URL", self.name));
        }
        if self.connect_timeout_ms == 0 {
            return bad(format!("MCP server {:?}: connect_timeout_ms must be > 0", self.name));
        }
        if self.headers.iter().any(|(k, _)| k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':')) {
            return bad(format!("MCP server {:?}: a header name is empty or not a token", self.name));
        }
        Ok(())
    }

    /// True when the server's tool `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.allow.as_ref().is_none_or(|a| a.iter().any(|t| t == tool)) && !self.deny.iter().any(|t| t == tool)
    }

    /// True when calls of the server's tool `tool` wait for approval.
    pub fn needs_approval(&self, tool: &str) -> bool {
        match &self.approval {
            McpApproval::Never => false,
            McpApproval::Always => true,
            McpApproval::Tools(names) => names.iter().any(|t| t == tool),
        }
    }
}
