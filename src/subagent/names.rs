//! The names and texts delegation shares with the model and the hosts.

/// The delegation tool's name.
pub const DELEGATE_TASK_TOOL_NAME: &str = "delegate_task";
/// The assignee that clones the parent's configuration.
pub const CLONE_ASSIGNEE: &str = "clone";
/// Service id of the sub-agent service (in tool result metadata).
pub const SUB_AGENT_SERVICE_ID: &str = "arkagent.sub_agent";
/// ISO-8: the system-prompt section on when to delegate, appended when `delegate_task`
/// is offered.
pub const DELEGATION_PROMPT: &str = include_str!("delegation_prompt.md");
/// ISO-7: batch size of decomposed tasks by default.
pub const DEFAULT_DECOMPOSE_CONCURRENCY: usize = 3;
