//! What a tool is and gets: its definition for the model, one invocation, the context an
//! executor runs with, and the executor interface.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::namespaced::ScopedMemory;
use super::result::ToolResult;

/// A tool as the model sees it: name, description and a JSON Schema for the arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDefinition {
    /// Unique name (`^[a-zA-Z0-9_-]{1,64}$`, as the providers require).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
    /// TOOL-4: how long one call may run, in ms, before it is answered with a
    /// `tool_timeout` error result and its abort signal fires; `None`: the runtime's
    /// [`tool_timeout_ms`](crate::AgentRuntimeConfig::tool_timeout_ms); `Some(0)`: no
    /// deadline. Never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// TOOL-1: every call waits for a person's answer before it runs (the run pauses with
    /// an `approval_requested` event); `false` (the default): only when the tool's
    /// [`ApprovalPredicate`](super::ApprovalPredicate) or the runtime's
    /// [`ToolPolicy`](super::ToolPolicy) asks. Never sent to the model.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub requires_approval: bool,
}

impl ToolDefinition {
    /// A definition with the runtime's deadline.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        Self { name: name.into(), description: description.into(), parameters, timeout_ms: None, requires_approval: false }
    }

    /// This definition with every call waiting for approval (TOOL-1).
    pub fn with_approval(mut self) -> Self {
        self.requires_approval = true;
        self
    }

    /// This definition with its own deadline in ms (0: none), TOOL-4.
    pub fn with_timeout_ms(mut self, timeout_ms: u64) -> Self {
        self.timeout_ms = Some(timeout_ms);
        self
    }
}

/// One call handed to an executor. `arguments` is already parsed and is a JSON object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolInvocation {
    /// The call id from the model.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// Parsed arguments.
    pub arguments: Value,
}

/// What an executor gets besides the call: identifiers, cancellation and narrow read-only
/// services. Tools never get a mutable agent state (ADR-0013).
#[derive(Clone)]
pub struct ToolContext {
    /// Session id of the calling runtime.
    pub session_id: String,
    /// Id of the current run.
    pub run_id: String,
    /// The call's abort signal (TOOL-4): fires on the call's deadline, when the run is
    /// cancelled and when the runtime stops waiting for the call (dropped mid-run); `abort`
    /// says which. A tool should stop when it fires: nobody reads its result any more. (For
    /// the context a run hands out before its calls, the run's own token.)
    pub cancel: CancellationToken,
    /// Why [`cancel`](Self::cancel) fired (TOOL-4); `None` while it has not.
    pub abort: super::abort::ToolAbort,
    /// Working and short-term memory of the calling runtime's namespace (MEM-4).
    pub memory: ScopedMemory,
    /// Read-only episodic memory of the calling runtime over its live state (MEM-1, seed
    /// 000 §3): `list_episodes`, `find_episode`. Always set by the runtime.
    pub episodes: Option<std::sync::Arc<dyn crate::history::MemoryService>>,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("session_id", &self.session_id)
            .field("run_id", &self.run_id)
            .field("cancel", &self.cancel)
            .field("abort", &self.abort.reason())
            .field("memory", &self.memory)
            .field("episodes", &self.episodes.as_ref().map(|_| "MemoryService"))
            .finish()
    }
}

/// Runs a tool. Implementations must not panic; a panic is caught and turned into a
/// tool error anyway.
#[async_trait]
pub trait ToolExecutor: Send + Sync {
    /// Executes one call.
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult;

    /// TOOL-4: whether the call's execution, once polled, may be polled once more without
    /// waiting when the run is cancelled or the call's deadline passes, so that a result
    /// finished outside the future (a host's completion made, its Promise settled) wins over
    /// the later cancel or deadline. Say true only when such a poll just reads a result, as
    /// the C and JS host tools do; false (the default) for a future whose next poll could
    /// start work — a request, a child (`delegate_task`), an MCP server's `tools/call` after
    /// its handshake — which must not begin after the person pressed stop.
    fn may_poll_after_stop(&self) -> bool {
        false
    }
}
