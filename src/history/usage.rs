use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

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
}
