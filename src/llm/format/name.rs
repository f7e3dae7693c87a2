//! WIRE-1: the `wire_format` value of a model config — one byte, the position of a
//! protocol's name in [`WIRE_FORMAT_NAMES`] (the config sits below the protocols, so it
//! names them rather than holding them; `format::REGISTRY` lists the protocols in the same
//! order). A name that is not in the list is read from JSON as an unknown format and
//! refused by validation with `invalid_config` (`check_wire_format`), not by the reader.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The `wire_format` names, in registry order (`format::REGISTRY` has one protocol per
/// name, at the same position).
pub const WIRE_FORMAT_NAMES: [&str; 2] = ["openai", "anthropic"];

/// Which provider protocol a model speaks: `"openai"` (OpenAI-compatible Chat
/// Completions, the default) or `"anthropic"` (Anthropic Messages).
///
/// ```
/// use arkagent::llm::WireFormat;
/// let f: WireFormat = serde_json::from_str(r#""anthropic""#).unwrap();
/// assert_eq!(f, WireFormat::ANTHROPIC);
/// assert_eq!(WireFormat::default().as_str(), "openai");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct WireFormat(u8);

impl WireFormat {
    /// OpenAI-compatible Chat Completions (`POST {base_url}/chat/completions`, Bearer key).
    pub const OPENAI: Self = Self(0);
    /// Anthropic Messages (`POST {base_url}/messages`, `x-api-key`).
    pub const ANTHROPIC: Self = Self(1);
    /// A name that is not in [`WIRE_FORMAT_NAMES`] (only ever read from JSON).
    const UNKNOWN: Self = Self(u8::MAX);

    /// The format named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Self> {
        let at = WIRE_FORMAT_NAMES.iter().position(|n| *n == name)?;
        u8::try_from(at).ok().map(Self)
    }

    /// The name as written in a config; `"unknown"` for a name that is not in the list.
    pub fn as_str(&self) -> &'static str {
        self.index().and_then(|i| WIRE_FORMAT_NAMES.get(i)).copied().unwrap_or("unknown")
    }

    /// The position in [`WIRE_FORMAT_NAMES`] (and in the registry), `None` when unknown.
    pub(crate) fn index(&self) -> Option<usize> {
        (usize::from(self.0) < WIRE_FORMAT_NAMES.len()).then_some(usize::from(self.0))
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
        let name = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
        Ok(Self::from_name(&name).unwrap_or(Self::UNKNOWN))
    }
}
