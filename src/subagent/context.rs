//! ISO-1: the record of one sub-agent: who, what, with which tools, and how it ended.

use serde::{Deserialize, Serialize};

use crate::history::{ChildUsageSummary, Message};

/// Lifecycle status.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubAgentStatus {
    /// Running.
    Active,
    /// Finished (normally or forced; see the result's `forced_reason`).
    Completed,
    /// Failed (the result's `error_code` says why).
    Failed,
}

/// What a sub-agent produced.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SubAgentResult {
    /// The three-level summary the parent received (ISO-3).
    pub summary: String,
    /// Structured outputs (e.g. the full final text when it was summarized).
    pub artifacts: Vec<String>,
    /// Tokens the child used (reported where available, estimated otherwise: a call cut
    /// off mid-answer counts its estimate so far; one answered with an error before any
    /// answer arrived used none), its own children's included, up to its end — however it
    /// ended (ISO-4).
    pub token_count: u64,
    /// Distinct tools it called, in first-use order (however it ended).
    pub tools_used: Vec<String>,
    /// Why it was force-completed (`token-budget-exceeded`, `max-iterations`,
    /// `cancelled`, `session-closed`), if it was.
    pub forced_reason: Option<String>,
    /// The error code when it failed.
    pub error_code: Option<String>,
    /// What its model calls used, its own children's included (COST-1, COST-2): the same
    /// summary the parent records and the delegate tool's metadata carries as
    /// `child_usage` — tokens, cached and reasoning tokens, calls and costs. Absent in
    /// records written before it existed (all zero).
    #[serde(default)]
    pub usage: ChildUsageSummary,
}

/// One sub-agent (seed 003 `SubAgentContext`).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubAgentContext {
    /// The child's session id.
    pub id: String,
    /// The parent's session id.
    pub parent_id: Option<String>,
    /// Role (`general` when none was given).
    pub role: String,
    /// Worker name or `clone`.
    pub assignee: String,
    /// The task.
    pub task: String,
    /// The child's own, isolated messages (filled when it ends; a force-completed
    /// child's are those it had then, completed once its run wound down).
    #[cfg_attr(feature = "schema", schemars(with = "Vec<serde_json::Value>"))]
    pub messages: Vec<Message>,
    /// Tools it may use; `None` = all.
    pub allowed_tools: Option<Vec<String>>,
    /// Its iteration limit.
    pub max_iterations: u32,
    /// Status.
    pub status: SubAgentStatus,
    /// The result once it ended.
    pub result: Option<SubAgentResult>,
    /// Start time (injected clock), ms.
    pub started_at_ms: u64,
    /// End time, ms.
    pub ended_at_ms: Option<u64>,
}

impl SubAgentContext {
    /// Ends an active context as completed with `[force-completed: reason]`, keeping any
    /// result already there. No effect once ended.
    pub fn force_complete(&mut self, reason: &str, now_ms: u64) {
        if self.status != SubAgentStatus::Active {
            return;
        }
        let mut result = self.result.take().unwrap_or_default();
        if result.summary.is_empty() {
            result.summary = format!("[force-completed: {reason}]");
        }
        result.forced_reason = Some(reason.to_owned());
        self.result = Some(result);
        self.status = SubAgentStatus::Completed;
        self.ended_at_ms = Some(now_ms);
    }

    /// JSON (the seed's `toJSON`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
