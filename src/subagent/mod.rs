//! Delegation to isolated sub-agents under hard budgets (seed 000 §4–6: SUB-1..SUB-9).
//!
//! The parent model calls `delegate_task { assignee, task_description }`; the runtime
//! builds a worker (a named [`SubAgentDefinition`] or a `clone` of the parent), runs it
//! on its own history seeded with a pairing-safe slice of the parent's, bridges its
//! events, and answers the call with the worker's final text and a [`ChildUsageSummary`]
//! in the result metadata. Workers never delegate (three independent layers).

mod definition;
mod delegate;
mod policy;
mod session_id;
mod usage;

pub use definition::{SubAgentDefinition, SubAgentFactory};
pub use delegate::{
    build_worker_tool_registry, delegate_task_definition, force_worker_config, parent_context_slice, DelegationConfig,
    SubAgentChildEvent,
};
pub(crate) use delegate::{DelegateTaskTool, SubAgentService};
pub use policy::SubAgentPolicy;
pub use session_id::allocate_isolated_session_id;
pub use usage::{ChildUsageRecord, ChildUsageSummary, UsageTotals};

/// The delegation tool's name.
pub const DELEGATE_TASK_TOOL_NAME: &str = "delegate_task";
/// The assignee that clones the parent's configuration.
pub const CLONE_ASSIGNEE: &str = "clone";
/// Service id of the sub-agent service (in tool result metadata).
pub const SUB_AGENT_SERVICE_ID: &str = "arkagent.sub_agent";
