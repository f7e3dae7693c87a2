use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Cost;

/// Where a usage came from when it is not a plain model call (CMP-7, SUB-6). JSON: its
/// name.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageSource {
    /// The summarizer calls of one compression (CMP-7: the trigger does not fire again
    /// right after one).
    ContextCompression,
    /// A model call whose provider reported no usage (a call cut off mid-answer): zero
    /// tokens, but a call made (SUB-6).
    Unreported,
}

impl UsageSource {
    /// Every source.
    pub const ALL: [UsageSource; 2] = [Self::ContextCompression, Self::Unreported];

    /// The source's name (its JSON).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::ContextCompression => "context_compression",
            Self::Unreported => "unreported",
        }
    }

    /// The source named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }
}

/// Token usage of one model call (CORE-3), or of the calls one record stands for (a
/// compression's summarizer calls). Every field is typed (BND-1); usages written by
/// earlier versions, with a `raw` map (`source`, `calls`, `cache_creation_input_tokens`),
/// read into these fields.
///
/// ```
/// use arkagent::history::{ModelUsage, UsageSource};
/// let old: ModelUsage = serde_json::from_str(
///     r#"{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10,"raw":{"source":"context_compression","calls":2}}"#,
/// ).unwrap();
/// assert_eq!((old.source, old.call_count), (Some(UsageSource::ContextCompression), 2));
/// assert_eq!(serde_json::to_string(&old).unwrap(),
///     r#"{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10,"source":"context_compression","call_count":2}"#);
/// ```
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "UsageRecord")]
pub struct ModelUsage {
    /// Prompt (input) tokens.
    pub prompt_tokens: u64,
    /// Completion (output) tokens, reasoning included.
    pub completion_tokens: u64,
    /// Total tokens as reported (or prompt + completion when the provider omits it).
    pub total_tokens: u64,
    /// Prompt tokens served from the provider's cache, when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Reasoning tokens (part of the completion tokens), when reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Prompt tokens written to the provider's cache (Anthropic's
    /// `cache_creation_input_tokens`), when reported: priced apart (COST-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// Where the usage came from, when it is not a plain model call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<UsageSource>,
    /// The model calls this usage stands for: 1, or a chunked compression's N summarizer
    /// calls (left out of the JSON when 1).
    #[serde(skip_serializing_if = "is_one")]
    pub call_count: u32,
    /// What the call cost (COST-2), priced once when it was recorded by the
    /// [`ModelPrice`](super::ModelPrice) of the model config that made it; absent when
    /// that config has no price (never 0 for "unknown"), for a call without reported
    /// usage, and in usages recorded before prices existed. A compression's usage carries
    /// the sum of its summarizer calls' costs; a foreign compressor's usage carries the
    /// cost its host gave, if any. Boxed: a long chat holds a usage per call, most of them
    /// unpriced, and an absent cost then costs a pointer, not the amount and its currency
    /// (PERF-2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<Box<Cost>>,
    /// CHAT-1: the call answered a turn a rewind dropped. Its tokens and cost stay in
    /// every total (the provider billed them); the totals
    /// sums them apart (`UsageTotals.discarded`). Absent (false) otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub discarded: bool,
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Default for ModelUsage {
    fn default() -> Self {
        Self {
            prompt_tokens: 0,
            completion_tokens: 0,
            total_tokens: 0,
            cached_tokens: None,
            reasoning_tokens: None,
            cache_write_tokens: None,
            source: None,
            call_count: 1,
            cost: None,
            discarded: false,
        }
    }
}

/// A usage as JSON has it, today's or an earlier version's (whose `raw` map held the
/// source, the call count and Anthropic's cache writes).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Deserialize)]
struct UsageRecord {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
    #[serde(default)]
    cached_tokens: Option<u64>,
    #[serde(default)]
    reasoning_tokens: Option<u64>,
    #[serde(default)]
    cache_write_tokens: Option<u64>,
    #[serde(default)]
    source: Option<UsageSource>,
    #[serde(default)]
    call_count: Option<u32>,
    #[serde(default)]
    cost: Option<Box<Cost>>,
    #[serde(default)]
    discarded: bool,
    /// Before BND-1: `source`, `calls`, `cache_creation_input_tokens` (other keys ignored).
    #[serde(default)]
    raw: Option<Map<String, Value>>,
}

impl From<UsageRecord> for ModelUsage {
    fn from(r: UsageRecord) -> Self {
        let raw = r.raw.unwrap_or_default();
        let old_source = raw.get("source").and_then(Value::as_str).and_then(UsageSource::from_name);
        let old_calls = raw.get("calls").and_then(Value::as_u64).and_then(|c| u32::try_from(c).ok());
        let old_writes = raw.get("cache_creation_input_tokens").and_then(Value::as_u64);
        Self {
            prompt_tokens: r.prompt_tokens,
            completion_tokens: r.completion_tokens,
            total_tokens: r.total_tokens,
            cached_tokens: r.cached_tokens,
            reasoning_tokens: r.reasoning_tokens,
            cache_write_tokens: r.cache_write_tokens.or(old_writes),
            source: r.source.or(old_source),
            call_count: r.call_count.or(old_calls).unwrap_or(1),
            cost: r.cost,
            discarded: r.discarded,
        }
    }
}

/// The name of [`UsageSource::Unreported`], the usage recorded for a model call whose
/// provider reported none (SUB-6: every call made is in the usages, so counts summed from
/// them see it).
pub const UNREPORTED_USAGE_SOURCE: &str = UsageSource::Unreported.as_str();

impl ModelUsage {
    /// The source's name, if set.
    pub fn source_name(&self) -> Option<&'static str> {
        self.source.map(UsageSource::as_str)
    }

    /// The usage recorded for a call made without reported usage: zero tokens, source
    /// [`UsageSource::Unreported`].
    pub fn unreported() -> Self {
        Self { source: Some(UsageSource::Unreported), ..Self::default() }
    }

    /// False for the placeholder of a call without reported usage.
    pub fn is_reported(&self) -> bool {
        self.source != Some(UsageSource::Unreported)
    }

    /// Adds `other`'s counts and cost to `self` (summing the calls of one compression),
    /// saturating. The cost is the sum of the costs present, in `self`'s currency (the
    /// calls of one summarizer share one price); an `other` in another currency leaves
    /// the cost as it was.
    pub fn accumulate(&mut self, other: &ModelUsage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.total_tokens = self.total_tokens.saturating_add(other.total_tokens);
        for (sum, part) in [
            (&mut self.cached_tokens, other.cached_tokens),
            (&mut self.reasoning_tokens, other.reasoning_tokens),
            (&mut self.cache_write_tokens, other.cache_write_tokens),
        ] {
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bnd_1_usages_written_with_a_raw_map_read_into_typed_fields() {
        let old = r#"{"prompt_tokens":120,"completion_tokens":48,"total_tokens":168,"cached_tokens":64,
            "raw":{"cache_creation_input_tokens":36,"other":"x"}}"#;
        let u: ModelUsage = serde_json::from_str(old).unwrap();
        assert_eq!((u.cache_write_tokens, u.source, u.call_count), (Some(36), None, 1));
        let unreported: ModelUsage = serde_json::from_str(r#"{"raw":{"source":"unreported"}}"#).unwrap();
        assert_eq!(unreported, ModelUsage::unreported());
        // Today's spelling round-trips, and an unknown old source is no source.
        let json = serde_json::to_string(&u).unwrap();
        assert_eq!(json, r#"{"prompt_tokens":120,"completion_tokens":48,"total_tokens":168,"cached_tokens":64,"cache_write_tokens":36}"#);
        assert_eq!(serde_json::from_str::<ModelUsage>(&json).unwrap(), u);
        let odd: ModelUsage = serde_json::from_str(r#"{"raw":{"source":"mine","calls":7}}"#).unwrap();
        assert_eq!((odd.source, odd.call_count), (None, 7));
        // PERF-2: no map in every usage (an 88-byte record, as before, with the writes typed).
        assert!(std::mem::size_of::<ModelUsage>() <= 88, "{}", std::mem::size_of::<ModelUsage>());
    }
}
