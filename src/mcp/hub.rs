//! MCP-2, MCP-3: one runtime's servers — connected lazily at a run's start (the safe
//! point), their tools kept stable between runs, a failing server isolated.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::rpc::{Connection, RemoteTool};
use super::tools::{definition_of, list_tools, McpTool};
use super::{McpError, McpErrorCode, McpServer};
use crate::llm::HttpTransport;
use crate::tools::RegisteredTool;

/// What happened to a server at a run's start (the `mcp_server` event's fields).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerEvent {
    /// The server's name (its tools' namespace).
    pub server: String,
    /// `connected`, `tools_changed` (listed again after the server's `list_changed`) or
    /// `failed`.
    pub state: McpServerState,
    /// Tools offered from it now (after the allow/deny filter).
    pub tool_count: usize,
    /// The revision agreed on, once connected.
    pub protocol_version: Option<String>,
    /// Why it failed.
    pub error_code: Option<McpErrorCode>,
    /// What failed, free of secrets.
    pub message: Option<String>,
}

/// A server's state in an `mcp_server` event.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    /// Connected and listed for the first time.
    Connected,
    /// Listed again after the server said its list changed; the new list is offered from
    /// this run on.
    ToolsChanged,
    /// Could not be connected or listed; its tools (if it had any before) stay as they
    /// were, and the next run tries again after `retry_after_ms`.
    Failed,
}

/// One runtime's MCP servers and the tool lists it offers from them.
pub struct McpHub {
    servers: Vec<McpServer>,
    transport: Arc<dyn HttpTransport>,
    /// The lists this runtime built its tools from (by pointer): a server whose list is
    /// another one rebuilds them.
    seen: Mutex<Vec<Option<Arc<Vec<RemoteTool>>>>>,
}

impl McpHub {
    /// The hub of `servers`, reached through `transport`.
    pub fn new(servers: Vec<McpServer>, transport: Arc<dyn HttpTransport>) -> Self {
        let seen = Mutex::new(vec![None; servers.len()]);
        Self { servers, transport, seen }
    }

    /// The safe point (a run's start): connects and lists what is not yet (or again, after
    /// `list_changed`), skipping a server that failed less than its `retry_after_ms` ago.
    /// Returns the events to emit and, when any list this runtime offers changed, every
    /// server's tools anew.
    pub async fn prepare(&self, now_ms: u64, cancel: &CancellationToken) -> (Vec<McpServerEvent>, Option<Vec<RegisteredTool>>) {
        // One after another: an app has a server or two, and a server that does not answer
        // is bounded by its connect_timeout_ms.
        let mut events = Vec::new();
        for server in &self.servers {
            events.extend(self.prepare_one(server, now_ms, cancel).await);
        }
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        let now: Vec<Option<Arc<Vec<RemoteTool>>>> = self.servers.iter().map(|s| s.inner.lock().tools.clone()).collect();
        let same = now.iter().zip(seen.iter()).all(|(a, b)| match (a, b) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        });
        if same {
            return (events, None);
        }
        let tools = self.servers.iter().zip(&now).flat_map(|(server, list)| self.registered(server, list.as_deref().map_or(&[][..], Vec::as_slice))).collect();
        *seen = now;
        (events, Some(tools))
    }

    fn registered(&self, server: &McpServer, list: &[RemoteTool]) -> Vec<RegisteredTool> {
        list.iter()
            .filter(|t| server.config().offers(&t.name))
            .map(|t| RegisteredTool {
                definition: definition_of(server, t),
                executor: Arc::new(McpTool { server: server.clone(), transport: Arc::clone(&self.transport), remote: t.name.clone() }),
                approval: None,
            })
            .collect()
    }

    async fn prepare_one(&self, server: &McpServer, now_ms: u64, cancel: &CancellationToken) -> Option<McpServerEvent> {
        let conn: &Connection = &server.inner;
        let config = server.config();
        let relist = {
            let state = conn.lock();
            let waiting = state.failed_at.is_some_and(|at| now_ms.saturating_sub(at) < config.retry_after_ms);
            match (&state.tools, state.list_changed) {
                (Some(_), false) => return None,
                _ if waiting => return None,
                (had, _) => had.is_some(),
            }
        };
        let deadline = std::time::Duration::from_millis(config.connect_timeout_ms);
        let connect = async {
            conn.ensure_initialized(&*self.transport, cancel).await?;
            list_tools(conn, &*self.transport, cancel).await
        };
        conn.lock().list_changed = false; // a change announced while listing lists again
        // The run was cancelled: not the server's failure, and a change still to list is
        // listed at the next run.
        let cancelled = || {
            conn.lock().list_changed |= relist;
            None
        };
        let listed = tokio::select! {
            biased;
            () = cancel.cancelled() => return cancelled(),
            listed = tokio::time::timeout(deadline, connect) => match listed {
                Ok(listed) => listed,
                Err(_) => Err(McpError::new(McpErrorCode::McpTimeout, format!("connecting took longer than {} ms", config.connect_timeout_ms))),
            },
        };
        if listed.is_err() && cancel.is_cancelled() {
            return cancelled();
        }
        let mut state = conn.lock();
        let (kind, error) = match listed {
            Ok(tools) => {
                state.tools = Some(Arc::new(tools));
                state.failed_at = None;
                (if relist { McpServerState::ToolsChanged } else { McpServerState::Connected }, None)
            }
            Err(e) => {
                state.failed_at = Some(now_ms);
                state.list_changed |= relist; // listed again at a later run
                state.protocol = None; // initialised afresh next time
                state.session = None;
                (McpServerState::Failed, Some(e))
            }
        };
        let tool_count = state.tools.as_ref().map_or(0, |t| t.iter().filter(|t| config.offers(&t.name)).count());
        let protocol_version = state.protocol.clone();
        drop(state);
        Some(McpServerEvent {
            server: config.name.clone(),
            state: kind,
            tool_count,
            protocol_version,
            error_code: error.as_ref().map(|e| e.code),
            message: error.map(|e| e.message),
        })
    }
}
