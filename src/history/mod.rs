//! Messages, the history with its invariants, token usage and the agent state.

mod child_usage;
mod invariants;
mod message;
mod state;
mod usage;

pub use child_usage::{ChildUsageRecord, ChildUsageSummary, UsageTotals};
pub use invariants::HistoryInvariants;
pub use message::{Message, ToolCall};
pub use state::{AgentState, History, STATE_FORMAT_VERSION};
pub use usage::{ModelUsage, UNREPORTED_USAGE_SOURCE};
