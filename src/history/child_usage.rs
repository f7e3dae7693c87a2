use serde::{Deserialize, Serialize};

use super::ModelUsage;

/// A child's usage, summed (SUB-6). Goes into the delegate tool result's metadata and
/// the parent's [`ChildUsageRecord`]s — never into the parent's own usages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildUsageSummary {
    /// Sum of prompt tokens over the child's calls.
    pub prompt_tokens: u64,
    /// Sum of completion tokens.
    pub completion_tokens: u64,
    /// Sum of total tokens.
    pub total_tokens: u64,
    /// Model calls made: every call of the run loop the model answered (usage reported
    /// or not: a call without reported usage is recorded as a zero usage with source
    /// `"unreported"`) or cut off mid-answer, and every summarizer call of a committed
    /// compression (a summary written in N chunks is N calls). The same number whether
    /// summed from usages ([`from_usages`](Self::from_usages)) or read from a total.
    pub call_count: u64,
}

/// Model calls one recorded usage stands for: a compression's usage sums its summarizer
/// calls and says how many in `raw.calls`; any other usage is one call.
pub(crate) fn calls_in(usage: &ModelUsage) -> u64 {
    usage.raw.get("calls").and_then(serde_json::Value::as_u64).unwrap_or(1)
}

impl ChildUsageSummary {
    /// Sums `usages`, saturating at `u64::MAX` (provider numbers are not trusted);
    /// `call_count` counts the model calls they stand for (a chunked
    /// compression's one usage counts as its N calls).
    pub fn from_usages(usages: &[ModelUsage]) -> Self {
        usages.iter().fold(Self::default(), |acc, u| Self {
            prompt_tokens: acc.prompt_tokens.saturating_add(u.prompt_tokens),
            completion_tokens: acc.completion_tokens.saturating_add(u.completion_tokens),
            total_tokens: acc.total_tokens.saturating_add(u.total_tokens),
            call_count: acc.call_count.saturating_add(calls_in(u)),
        })
    }

    /// `self + other`, field by field, saturating at `u64::MAX`.
    pub fn plus(self, other: Self) -> Self {
        Self {
            prompt_tokens: self.prompt_tokens.saturating_add(other.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(other.completion_tokens),
            total_tokens: self.total_tokens.saturating_add(other.total_tokens),
            call_count: self.call_count.saturating_add(other.call_count),
        }
    }
}

/// One finished delegation as the parent records it (part of the exported state).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildUsageRecord {
    /// The delegate_task call id in the parent's history.
    pub call_id: String,
    /// The child's session id.
    pub child_session_id: String,
    /// Worker name or `clone`.
    pub assignee: String,
    /// The child's usage.
    pub usage: ChildUsageSummary,
}

/// The one documented total of what a session cost (SUB-6): the parent's own calls
/// (including compression) plus every child's, each counted once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// The parent's own model calls.
    pub parent: ChildUsageSummary,
    /// All children's model calls.
    pub children: ChildUsageSummary,
    /// `parent + children`.
    pub total: ChildUsageSummary,
}

impl ChildUsageSummary {
    /// `{"prompt_tokens":…,"completion_tokens":…,"total_tokens":…,"call_count":…}` — the
    /// form every surface uses (C, ArkTS `toJson()`).
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "call_count": self.call_count,
        })
        .to_string()
    }

    /// Sums usages given as a JSON array of [`ModelUsage`] objects (C and ArkTS
    /// `fromUsages`). Errors: `invalid_json`.
    pub fn from_usages_json(json: &str) -> Result<Self, crate::error::ArkAgentError> {
        let usages: Vec<ModelUsage> = serde_json::from_str(json)?;
        Ok(Self::from_usages(&usages))
    }
}
