use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Cost;

/// Token usage of one model call (CORE-3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelUsage {
    /// Prompt (input) tokens.
    #[serde(default)]
    pub prompt_tokens: u64,
    /// Completion (output) tokens.
    #[serde(default)]
    pub completion_tokens: u64,
    /// Total tokens as reported (or prompt + completion when the provider omits it).
    #[serde(default)]
    pub total_tokens: u64,
    /// Prompt tokens served from the provider's cache, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Reasoning tokens, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Extra attributes; `source` marks where the usage came from (e.g.
    /// `"context_compression"`).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub raw: Map<String, Value>,
    /// What the call cost (COST-2), priced once when it was recorded by the
    /// [`ModelPrice`](super::ModelPrice) of the model config that made it; absent when
    /// that config has no price (never 0 for "unknown"), for a call without reported
    /// usage, and in usages recorded before prices existed. A compression's usage carries
    /// the sum of its summarizer calls' costs; a foreign compressor's usage carries the
    /// cost its host gave, if any. Boxed: a long chat holds a usage per call, most of them
    /// unpriced, and an absent cost then costs a pointer, not the amount and its currency
    /// (PERF-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Box<Cost>>,
}

/// `raw.source` of the usage recorded for a model call whose provider reported none
/// (SUB-6: every call made is in the usages, so counts summed from them see it).
pub const UNREPORTED_USAGE_SOURCE: &str = "unreported";

impl ModelUsage {
    /// `raw.source` as a string, if set.
    pub fn source(&self) -> Option<&str> {
        self.raw.get("source").and_then(Value::as_str)
    }

    /// The usage recorded for a call made without reported usage: zero tokens, source
    /// [`UNREPORTED_USAGE_SOURCE`].
    pub fn unreported() -> Self {
        let mut usage = Self::default();
        usage.raw.insert("source".into(), Value::String(UNREPORTED_USAGE_SOURCE.into()));
        usage
    }

    /// False for the placeholder of a call without reported usage.
    pub fn is_reported(&self) -> bool {
        self.source() != Some(UNREPORTED_USAGE_SOURCE)
    }

    /// Adds `other`'s counts and cost to `self` (summing the calls of one compression),
    /// saturating. The cost is the sum of the costs present, in `self`'s currency (the
    /// calls of one summarizer share one price); an `other` in another currency leaves
    /// the cost as it was.
    pub fn accumulate(&mut self, other: &ModelUsage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        for (sum, part) in [(&mut self.cached_tokens, other.cached_tokens), (&mut self.reasoning_tokens, other.reasoning_tokens)] {
            if let Some(part) = part {
                let t = sum.get_or_insert(0);
                *t = t.saturating_add(part);
            }
        }
        match (&mut self.cost, &other.cost) {
            (Some(sum), Some(part)) if sum.currency == part.currency => sum.nanos = sum.nanos.saturating_add(part.nanos),
            (None, Some(part)) => self.cost = Some(part.clone()),
            _ => {}
        }
    }
}
