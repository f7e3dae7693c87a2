//! How runs end and what starts a compression attempt: the small types the loop,
//! events and delegation share.

use serde::{Deserialize, Serialize};

/// How a run ended.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The model gave a final answer.
    Completed,
    /// [`AgentRuntime::cancel`](crate::AgentRuntime::cancel) was called; the history is paired.
    Cancelled,
    /// `max_iterations` model calls were made without a final answer.
    MaxIterations,
    /// The run failed (only in events; `run` returns the error).
    Failed,
    /// TOOL-1: a tool call waits for a person's answer: the run paused (the
    /// outcome's `pending_approvals`); answer each and resume it.
    AwaitingApproval,
}

/// What started a compression attempt.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompressionTrigger {
    /// Before a model call, from the prompt estimate (CMP-11).
    Preflight,
    /// After a loop turn, from the last usage (CORE-4, CMP-3).
    PostTurn,
    /// The provider reported a context overflow; forced once, then the call is retried.
    Overflow,
    /// [`AgentRuntime::compress_now`](crate::AgentRuntime::compress_now).
    Manual,
}

/// The result of [`AgentRuntime::run`](crate::AgentRuntime::run).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunOutcome {
    /// Run id.
    pub run_id: String,
    /// How it ended.
    pub status: RunStatus,
    /// The final answer text, when completed.
    pub final_text: Option<String>,
    /// Model calls made.
    pub iterations: u32,
    /// What the run used (COST-1, COST-2): its own model calls (compression included)
    /// plus the children it delegated to — tokens, cached and reasoning tokens, calls
    /// and per-currency costs (absent without a price), summed from the usages the run
    /// recorded. What this runtime's runs used, plus each compression `compress_now`
    /// committed (its `CompressResult::usage`) and the usages a resumed or imported state
    /// brought, adds up to [`total_usage`](crate::AgentRuntime::total_usage).
    #[serde(default)]
    pub usage: crate::history::ChildUsageSummary,
    /// TOOL-1: the calls waiting for an answer when the run paused (status
    /// `awaiting_approval`); empty otherwise.
    #[serde(default)]
    pub pending_approvals: Vec<PendingApproval>,
}

/// TOOL-1: a tool call waiting for a person's answer, as the run's outcome lists it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// Call id: what the answer names.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// The arguments as the model made them (JSON object text).
    pub arguments: String,
    /// For a sub-agent's call (issue 37 item 5), the session ids of the delegation path from
    /// the root's child down to the sub-agent that made it; its `call_id` is then
    /// `<that sub-agent's session id>/<its call id>`. Empty for the runtime's own calls.
    #[serde(default)]
    pub path: Vec<String>,
}
