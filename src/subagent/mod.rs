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
mod ending;
mod meter;
mod names;
mod policy;
mod progress;
mod registry;
mod roles;
mod session_id;
mod summary;
mod worker;

pub use condense::condense_parent_context;
pub use context::{SubAgentContext, SubAgentResult, SubAgentStatus};
pub use ending::ChildEnding;
pub use registry::{RegistrySnapshot, SubAgentRegistry, SubAgentStats, REGISTRY_HISTORY_CAPACITY};
pub use roles::{default_role_whitelists, ToolWhitelist, GENERAL_ROLE};
pub use summary::{summarize_result, SUMMARY_DIRECT_LIMIT, SUMMARY_SECTION_LIMIT};
pub use worker::{build_worker_tool_registry, parent_context_slice, DecomposedTask, TOKEN_BUDGET_EXCEEDED};
pub(crate) use budget::DelegationBudget;
pub(crate) use meter::Meter;
pub(crate) use progress::{ChildProgress, ChildSpending};
pub(crate) use worker::{cancelled, intersect_tools, run_decomposed_tasks};
pub use names::{
    CLONE_ASSIGNEE, DEFAULT_DECOMPOSE_CONCURRENCY, DELEGATE_TASK_TOOL_NAME, DELEGATION_PROMPT, SUB_AGENT_SERVICE_ID,
};
pub use policy::SubAgentPolicy;
pub use session_id::allocate_isolated_session_id;
pub use crate::history::{ChildUsageRecord, ChildUsageSummary, UsageTotals};
