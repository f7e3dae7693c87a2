use serde::{Deserialize, Serialize};

use super::cost::{add_cost, subtract_costs};
use super::{Cost, ModelUsage};

/// Usage of model calls, summed (SUB-6, COST-1, COST-2): a child's (it goes into the
/// delegate tool result's metadata and the parent's [`ChildUsageRecord`]s — never into the
/// parent's own usages), a run's, or a session's ([`UsageTotals`]).
///
/// JSON (C, ArkTS `toJson()`, the delegate metadata's `child_usage`, stored records):
/// `{"prompt_tokens","completion_tokens","total_tokens","cached_tokens",
/// "reasoning_tokens","call_count","priced_call_count","costs"?:[{"currency","nanos"}]}`;
/// records written before cached tokens and money existed load with those at 0 / absent.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChildUsageSummary {
    /// Sum of prompt tokens over the calls.
    pub prompt_tokens: u64,
    /// Sum of completion tokens.
    pub completion_tokens: u64,
    /// Sum of total tokens.
    pub total_tokens: u64,
    /// Sum of prompt tokens served from the provider's prompt cache (COST-1; a call that
    /// reported none counts 0).
    #[serde(default)]
    pub cached_tokens: u64,
    /// Sum of reasoning tokens (COST-1; part of the completion tokens; a call that
    /// reported none counts 0).
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// Model calls made: every call of the run loop the model answered (usage reported
    /// or not: a call without reported usage is recorded as a zero usage with source
    /// `"unreported"`) or cut off mid-answer, and every summarizer call of a committed
    /// compression (a summary written in N chunks is N calls). The same number whether
    /// summed from usages ([`from_usages`](Self::from_usages)) or read from a total.
    pub call_count: u64,
    /// How many of `call_count` carry a cost (COST-2): the rest had no price (or no
    /// reported usage), so `costs` is complete exactly when this equals `call_count`.
    #[serde(default)]
    pub priced_call_count: u64,
    /// What the priced calls cost: one exact sum per currency, sorted by currency code;
    /// empty (absent in JSON) when no call was priced — never a 0 standing for
    /// "unknown". Calls priced in different currencies are never converted or added
    /// together: each currency keeps its own sum.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<Cost>,
}

/// Model calls one recorded usage stands for: a compression's usage sums its summarizer
/// calls and says how many (`call_count`); any other usage is one call.
pub(crate) fn calls_in(usage: &ModelUsage) -> u64 {
    u64::from(usage.call_count)
}

impl ChildUsageSummary {
    /// Sums `usages`, saturating at `u64::MAX` (provider numbers are not trusted);
    /// `call_count` counts the model calls they stand for (a chunked
    /// compression's one usage counts as its N calls).
    /// Cached and reasoning tokens and per-currency costs are summed the same way; a
    /// usage with a cost counts its calls as priced.
    pub fn from_usages(usages: &[ModelUsage]) -> Self {
        Self::from_usages_iter(usages)
    }

    /// [`from_usages`](Self::from_usages) over any usages.
    pub fn from_usages_iter<'a>(usages: impl IntoIterator<Item = &'a ModelUsage>) -> Self {
        let mut sum = Self::default();
        for u in usages {
            sum.add_usage(u);
        }
        sum
    }

    /// Adds one usage (see [`from_usages`](Self::from_usages)).
    pub fn add_usage(&mut self, u: &ModelUsage) {
        let calls = calls_in(u);
        self.prompt_tokens = self.prompt_tokens.saturating_add(u.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(u.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(u.total_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(u.cached_tokens.unwrap_or(0));
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(u.reasoning_tokens.unwrap_or(0));
        self.call_count = self.call_count.saturating_add(calls);
        if let Some(cost) = &u.cost {
            self.priced_call_count = self.priced_call_count.saturating_add(calls);
            add_cost(&mut self.costs, cost);
        }
    }

    /// `self + other`, field by field (costs per currency), saturating at `u64::MAX`.
    pub fn plus(mut self, other: Self) -> Self {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        self.cached_tokens = self.cached_tokens.saturating_add(other.cached_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_add(other.reasoning_tokens);
        self.call_count = self.call_count.saturating_add(other.call_count);
        self.priced_call_count = self.priced_call_count.saturating_add(other.priced_call_count);
        for cost in &other.costs {
            add_cost(&mut self.costs, cost);
        }
        self
    }

    /// `self - other`, field by field (costs per currency), saturating at 0: what a
    /// subtree used itself once its descendants' part is taken out.
    pub fn minus(mut self, other: &Self) -> Self {
        self.prompt_tokens = self.prompt_tokens.saturating_sub(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_sub(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_sub(other.total_tokens);
        self.cached_tokens = self.cached_tokens.saturating_sub(other.cached_tokens);
        self.reasoning_tokens = self.reasoning_tokens.saturating_sub(other.reasoning_tokens);
        self.call_count = self.call_count.saturating_sub(other.call_count);
        self.priced_call_count = self.priced_call_count.saturating_sub(other.priced_call_count);
        subtract_costs(&mut self.costs, &other.costs);
        self
    }

    /// True when nothing is summed (every field zero, no cost).
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The sum in `currency`, if any call was priced in it.
    pub fn cost_in(&self, currency: &str) -> Option<&Cost> {
        self.costs.iter().find(|c| c.currency == currency)
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
    /// CHAT-1: the delegation belonged to a turn a rewind dropped (its cost stays counted;
    /// [`UsageTotals::discarded`] sums it apart).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub discarded: bool,
}

/// The one documented total of what a session cost (SUB-6): the parent's own calls
/// (including compression) plus every child's, each counted once; tokens, cached and
/// reasoning tokens, calls and per-currency costs alike, so `total` is exactly
/// `parent + children` and `parent` exactly the sum of the session's usages.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageTotals {
    /// The parent's own model calls.
    pub parent: ChildUsageSummary,
    /// All children's model calls.
    pub children: ChildUsageSummary,
    /// `parent + children`.
    pub total: ChildUsageSummary,
    /// CHAT-1: the part of `total` spent by turns a rewind dropped (their answers are
    /// gone, their cost is not); all zero when nothing was dropped.
    #[serde(default)]
    pub discarded: ChildUsageSummary,
}

impl ChildUsageSummary {
    /// `{"prompt_tokens":…,"completion_tokens":…,"total_tokens":…,"cached_tokens":…,
    /// "reasoning_tokens":…,"call_count":…,"priced_call_count":…,"costs"?:[…]}` — the
    /// form every surface uses (C, ArkTS `toJson()`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Sums usages given as a JSON array of [`ModelUsage`] objects (C and ArkTS
    /// `fromUsages`). Errors: `invalid_json`.
    pub fn from_usages_json(json: &str) -> Result<Self, crate::error::ArkAgentError> {
        let usages: Vec<ModelUsage> = serde_json::from_str(json)?;
        Ok(Self::from_usages(&usages))
    }
}
