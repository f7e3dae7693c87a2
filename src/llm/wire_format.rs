//! WIRE-1: the `wire_format` value of a model config: the name of a protocol, as its
//! `WireProtocol::name` spells it. The config sits below the protocols (they read it), so
//! it holds the name, not the protocol; `format::protocol` finds the protocol of a name.
//! Any string is read from JSON; a name no protocol has is refused by validation with
//! `invalid_config` (`check_wire_format`), not by the reader, so the error can name it.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Which provider protocol a model speaks: `"openai"` (OpenAI-compatible Chat
/// Completions, the default) or `"anthropic"` (Anthropic Messages).
///
/// ```
/// use arkagent::llm::WireFormat;
/// let f: WireFormat = serde_json::from_str(r#""anthropic""#).unwrap();
/// assert_eq!(f, WireFormat::ANTHROPIC);
/// assert_eq!(WireFormat::default().as_str(), "openai");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct WireFormat(Cow<'static, str>);

impl WireFormat {
    /// OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`, Bearer key).
    pub const OPENAI: Self = Self(Cow::Borrowed("openai"));
    /// Anthropic Messages (`POST {base_url}/messages`, `x-api-key`).
    pub const ANTHROPIC: Self = Self(Cow::Borrowed("anthropic"));

    /// The format of a protocol's own name (`format::wire_format` checks a name first).
    pub(crate) const fn of_protocol(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    /// The name as written in a config (also one no protocol has, read from JSON).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Default for WireFormat {
    fn default() -> Self {
        Self::OPENAI
    }
}

impl fmt::Debug for WireFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for WireFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for WireFormat {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for WireFormat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Any string: validation, not parsing, refuses an unknown name (`invalid_config`).
        Ok(Self(Cow::Owned(String::deserialize(deserializer)?)))
    }
}
