//! Delegation to isolated sub-agents under hard budgets (seed 000 §4–6: SUB-1..SUB-9).
//!
//! The parent model calls `delegate_task { assignee, task_description }`; the runtime
//! builds a worker (a named `SubAgentDefinition` or a `clone` of the parent), runs it
//! on its own history seeded with a pairing-safe slice of the parent's, bridges its
//! events, and answers the call with the worker's final text and a [`ChildUsageSummary`]
//! in the result metadata. Workers never delegate (three independent layers); with
//! `max_depth` > 1 a child below it delegates under the root's shared budgets (see
//! [`SubAgentPolicy`]). The [`SubAgentRegistry`] is the one source of truth for running
//! children.

mod budget;
mod condense;
mod context;
mod meter;
mod policy;
mod registry;
mod roles;
mod session_id;
mod summary;
mod worker;

pub use condense::condense_parent_context;
pub use context::{SubAgentContext, SubAgentResult, SubAgentStatus};
pub use registry::{SubAgentRegistry, SubAgentStats, REGISTRY_HISTORY_CAPACITY};
pub use roles::{default_role_whitelists, ToolWhitelist, GENERAL_ROLE};
pub use summary::{summarize_result, SUMMARY_DIRECT_LIMIT, SUMMARY_SECTION_LIMIT};
pub use worker::{build_worker_tool_registry, parent_context_slice, DecomposedTask, TOKEN_BUDGET_EXCEEDED};
pub(crate) use budget::DelegationBudget;
pub(crate) use meter::Meter;
pub(crate) use worker::{cancelled, intersect_tools, run_decomposed_tasks};
pub use policy::SubAgentPolicy;
pub use session_id::allocate_isolated_session_id;
pub use crate::history::{ChildUsageRecord, ChildUsageSummary, UsageTotals};

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
