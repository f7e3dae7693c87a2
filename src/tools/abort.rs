//! TOOL-4: why a tool call was told to stop. Each call gets its own cancellation token
//! ([`ToolContext::cancel`](super::ToolContext::cancel)) and this record of the reason,
//! set once, before the token fires.

use std::sync::{Arc, OnceLock};

/// Why a tool call's abort signal fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbortReason {
    /// The call ran past its deadline (the tool's `timeout_ms`, else the runtime's
    /// `tool_timeout_ms`); the model gets a `tool_timeout` error result.
    ToolTimeout,
    /// The run was cancelled ([`AgentRuntime::cancel`](crate::AgentRuntime::cancel), or a
    /// sub-agent's force-completion); the call is answered `cancelled`.
    Cancelled,
    /// The runtime stopped waiting for the call otherwise: it was dropped (closed, freed,
    /// collected) mid-run.
    Closed,
}

impl AbortReason {
    /// Every reason, in declaration order.
    pub const ALL: [AbortReason; 3] = [AbortReason::ToolTimeout, AbortReason::Cancelled, AbortReason::Closed];

    /// The stable code: `tool_timeout`, `cancelled` or `closed`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AbortReason::ToolTimeout => "tool_timeout",
            AbortReason::Cancelled => "cancelled",
            AbortReason::Closed => "closed",
        }
    }
}

/// The reason a call was aborted, shared by everyone holding its context. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct ToolAbort(Arc<OnceLock<AbortReason>>);

impl ToolAbort {
    /// Why the call's token fired; `None` while it has not.
    pub fn reason(&self) -> Option<AbortReason> {
        self.0.get().copied()
    }

    /// Records `reason` unless one is recorded already (the first reason wins).
    pub(crate) fn set(&self, reason: AbortReason) {
        let _ = self.0.set(reason);
    }
}
