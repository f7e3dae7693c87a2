//! THINK-1: a model's signed reasoning, kept exactly as the provider sent it.
//!
//! Anthropic Messages answers carry their reasoning as content blocks: `thinking` (the
//! text and a `signature` that authenticates it) and `redacted_thinking` (encrypted
//! `data`). When the model called a tool, the provider wants those blocks back, complete
//! and unmodified, before the `tool_use` of that turn; a changed byte, a dropped
//! `redacted_thinking` or a rebuilt block is refused. So they are kept apart from the
//! answer's text, in the order received, and never touched by the library (no redaction,
//! no image handling, no compression rewrite: see `ThinkingBlocks`' users).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One reasoning block of an answer, in Anthropic's own shape (`{"type":"thinking",
/// "thinking","signature"}` or `{"type":"redacted_thinking","data"}`), so it serializes
/// to exactly what goes back on the wire.
///
/// ```
/// use arkagent::history::ThinkingBlock;
/// let b = ThinkingBlock::Thinking { thinking: "hm".into(), signature: "sig".into() };
/// assert_eq!(serde_json::to_string(&b).unwrap(), r#"{"type":"thinking","thinking":"hm","signature":"sig"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingBlock {
    /// Reasoning text the model showed, with its signature (the text may be empty when
    /// the provider omits it; the signature is what counts).
    Thinking {
        /// The reasoning text, as sent.
        thinking: String,
        /// The provider's signature of the block, as sent.
        signature: String,
    },
    /// Reasoning the provider encrypted: only `data` travels.
    RedactedThinking {
        /// The encrypted reasoning, as sent.
        data: String,
    },
}

impl ThinkingBlock {
    /// The readable text (empty for a redacted block).
    pub fn text(&self) -> &str {
        match self {
            Self::Thinking { thinking, .. } => thinking,
            Self::RedactedThinking { .. } => "",
        }
    }

    /// Heap bytes of the block's strings (PERF-2's memory report).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Self::Thinking { thinking, signature } => thinking.capacity() + signature.capacity(),
            Self::RedactedThinking { data } => data.capacity(),
        }
    }
}

/// The reasoning blocks of one answer, in the order received; empty for most messages.
/// One pointer wide (PERF-2: every history slot pays for this field), serialized as a
/// JSON array (left out of a message's JSON when empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
// One pointer, not a `Vec`'s three words or a boxed slice's two: the extra allocation is
// paid only by answers that have blocks, the slot size by every message (PERF-2).
#[allow(clippy::box_collection)]
pub struct ThinkingBlocks(Option<Box<Vec<ThinkingBlock>>>);

impl ThinkingBlocks {
    /// No blocks.
    pub const fn new() -> Self {
        Self(None)
    }

    /// True when there is no block.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|b| b.is_empty())
    }

    /// The blocks, in order.
    pub fn as_slice(&self) -> &[ThinkingBlock] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    /// The blocks, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, ThinkingBlock> {
        self.as_slice().iter()
    }

    /// Removes every block.
    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// The readable reasoning: every `thinking` block's text, in order.
    pub fn text(&self) -> String {
        self.iter().map(ThinkingBlock::text).collect()
    }

    /// Heap bytes (PERF-2's memory report).
    pub fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |b| {
            std::mem::size_of::<Vec<ThinkingBlock>>() + b.capacity() * std::mem::size_of::<ThinkingBlock>() + b.iter().map(ThinkingBlock::heap_bytes).sum::<usize>()
        })
    }
}

impl From<Vec<ThinkingBlock>> for ThinkingBlocks {
    fn from(mut blocks: Vec<ThinkingBlock>) -> Self {
        if blocks.is_empty() {
            return Self(None);
        }
        // PERF-2: kept for the session's life, so without spare capacity.
        blocks.shrink_to_fit();
        for block in &mut blocks {
            match block {
                ThinkingBlock::Thinking { thinking, signature } => {
                    thinking.shrink_to_fit();
                    signature.shrink_to_fit();
                }
                ThinkingBlock::RedactedThinking { data } => data.shrink_to_fit(),
            }
        }
        Self(Some(Box::new(blocks)))
    }
}

impl<'a> IntoIterator for &'a ThinkingBlocks {
    type Item = &'a ThinkingBlock;
    type IntoIter = std::slice::Iter<'a, ThinkingBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Serialize for ThinkingBlocks {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(serializer)
    }
}

/// A block's kind (its `type`).
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum BlockKind {
    Thinking,
    RedactedThinking,
}

/// Both kinds' fields in one flat record, read in one pass (PERF-9: no buffering).
#[derive(Deserialize)]
struct BlockRepr {
    #[serde(rename = "type")]
    kind: BlockKind,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    data: Option<String>,
}

/// Anthropic's shape: `{"type":"thinking","thinking","signature"}` or
/// `{"type":"redacted_thinking","data"}`.
impl<'de> Deserialize<'de> for ThinkingBlock {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let r = BlockRepr::deserialize(deserializer)?;
        match r.kind {
            BlockKind::Thinking => Ok(Self::Thinking {
                thinking: r.thinking.ok_or_else(|| D::Error::missing_field("thinking"))?,
                signature: r.signature.ok_or_else(|| D::Error::missing_field("signature"))?,
            }),
            BlockKind::RedactedThinking => Ok(Self::RedactedThinking { data: r.data.ok_or_else(|| D::Error::missing_field("data"))? }),
        }
    }
}

impl<'de> Deserialize<'de> for ThinkingBlocks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Vec::<ThinkingBlock>::deserialize(deserializer).map(Self::from)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn think_1_perf_2_blocks_round_trip_in_anthropics_shape_and_stay_one_pointer_wide() {
        let blocks = ThinkingBlocks::from(vec![
            ThinkingBlock::Thinking { thinking: "a\u{1F600}\"b".into(), signature: "EqQB+/=".into() },
            ThinkingBlock::RedactedThinking { data: "ENC".into() },
        ]);
        let json = serde_json::to_string(&blocks).unwrap();
        assert_eq!(json, r#"[{"type":"thinking","thinking":"a😀\"b","signature":"EqQB+/="},{"type":"redacted_thinking","data":"ENC"}]"#);
        assert_eq!(serde_json::from_str::<ThinkingBlocks>(&json).unwrap(), blocks);
        assert_eq!(blocks.text(), "a\u{1F600}\"b");
        assert!(ThinkingBlocks::from(Vec::new()).is_empty());
        assert_eq!(std::mem::size_of::<ThinkingBlocks>(), std::mem::size_of::<usize>());
        // PERF-2, PERF-9: reasoning kept exactly costs the history's slots nothing (an
        // answer's exact reasoning and its blocks fit where the reasoning was before).
        assert!(std::mem::size_of::<super::super::Message>() <= 72, "{}", std::mem::size_of::<super::super::Message>());
    }
}
