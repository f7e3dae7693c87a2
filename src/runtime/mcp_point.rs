//! MCP-2, MCP-3: the runtime's side of its MCP servers — at a run's start (the safe
//! point), servers are connected or listed again, each outcome is an `mcp_server` event,
//! and a changed list replaces the tools offered (the registry and the request's tools
//! together) before the run's first request.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::agent::Inner;
use super::events::EventKind;
use crate::tools::ToolRegistry;

impl Inner {
    /// The tools this runtime runs: the host's and the built-ins, then its MCP servers'.
    pub(super) fn tools(&self) -> Arc<ToolRegistry> {
        Arc::clone(&self.tools.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// The safe point: see the module's doc. The run slot is held, so no request is
    /// being built while the tools change. One boxed future for its two callers (a run, a
    /// resumed run): built once, not inlined into each (PERF-9).
    pub(super) fn mcp_point<'a>(&'a self, run_id: &'a str, cancel: &'a CancellationToken) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(self.mcp_point_inner(run_id, cancel))
    }

    async fn mcp_point_inner(&self, run_id: &str, cancel: &CancellationToken) {
        let Some(hub) = &self.mcp else { return };
        let (events, tools) = hub.prepare(self.config.clock.now_ms(), cancel).await;
        for event in events {
            self.emit(run_id, EventKind::McpServer(event));
        }
        let Some(mcp_tools) = tools else { return };
        let mut registry = self.base_tools.clone();
        for tool in mcp_tools {
            // A name a host tool has already: the host's stays (and the server's is not offered).
            let _ = registry.register_with_approval(tool.definition, tool.executor, tool.approval);
        }
        if registry.iter().any(|t| t.definition.requires_approval) {
            self.exec_policy.gated.store(true, Ordering::Relaxed);
        }
        let offered = registry.definitions().into_iter().filter(|d| self.exec_policy.allows(&d.name)).collect();
        *self.tools.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(registry);
        self.session.set_tool_definitions(offered);
    }
}
