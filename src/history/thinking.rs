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
/// JSON array (left out of a message's JSON when empty). When the answer interleaved its
/// blocks with its text and tool calls (Claude's interleaved thinking), that order is kept
/// with them ([`ThinkingBlocks::order`]; the message's `block_order`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
// One pointer, not a `Vec`'s three words or a boxed slice's two: the extra allocation is
// paid only by answers that have blocks, the slot size by every message (PERF-2).
pub struct ThinkingBlocks(Option<Box<Kept>>);

/// What an answer with blocks keeps: the blocks, and their order among the answer's other
/// blocks when they did not all come first.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    blocks: Vec<ThinkingBlock>,
    order: Option<Box<str>>,
}

impl ThinkingBlocks {
    /// No blocks.
    pub const fn new() -> Self {
        Self(None)
    }

    /// `blocks` in the answer's block order `order` (see [`ThinkingBlocks::order`];
    /// `None`: the blocks came first). Empty `blocks` keep no order.
    pub fn with_order(blocks: Vec<ThinkingBlock>, order: Option<Box<str>>) -> Self {
        let mut kept = Self::from(blocks);
        kept.put_order(order);
        kept
    }

    /// Sets the block order (nothing when there is no block).
    pub(crate) fn put_order(&mut self, order: Option<Box<str>>) {
        if let Some(k) = self.0.as_deref_mut() {
            k.order = order;
        }
    }

    /// True when there is no block.
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|k| k.blocks.is_empty())
    }

    /// The blocks, in order.
    pub fn as_slice(&self) -> &[ThinkingBlock] {
        self.0.as_deref().map_or(&[], |k| k.blocks.as_slice())
    }

    /// The blocks, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, ThinkingBlock> {
        self.as_slice().iter()
    }

    /// THINK-2: the order of the answer's content blocks when a reasoning block came after
    /// its text or a tool call (Claude's interleaved thinking: `[thinking, tool_use,
    /// thinking, tool_use]`), which Anthropic wants back as it was — each block's signature
    /// covers what precedes it. One letter per block: `t` the next reasoning block, `u` the
    /// next tool call, `x` and a byte count the next text block (that many bytes of the
    /// answer's joined text): `"tx12utu"`. `None` when the blocks came first.
    pub fn order(&self) -> Option<&str> {
        self.0.as_deref().and_then(|k| k.order.as_deref())
    }

    /// LLM-4, THINK-2: the answer's text `before` became `after` by the redaction of each
    /// of its text blocks with `redact`: the order now counts the redacted blocks' bytes, so
    /// the blocks still go back in place. When `after` is not the blocks redacted one by
    /// one (a secret across two blocks) the order is dropped: the blocks then go first.
    pub(crate) fn recount_text(&mut self, before: &str, after: &str, redact: impl Fn(&str) -> String) {
        let Some(order) = self.order() else { return };
        if before == after {
            return;
        }
        let recount = || {
            let (mut at, mut joined, mut out) = (0usize, String::new(), String::new());
            for slot in slots(order)? {
                match slot {
                    Slot::Reasoning => out.push('t'),
                    Slot::Call => out.push('u'),
                    Slot::Text(n) => {
                        let piece = redact(before.get(at..at.checked_add(n)?)?);
                        at += n;
                        out.push('x');
                        out.push_str(&piece.len().to_string());
                        joined.push_str(&piece);
                    }
                }
            }
            (at == before.len() && joined == after).then(|| out.into_boxed_str())
        };
        let recounted = recount();
        self.put_order(recounted);
    }

    /// Removes every block (and their order).
    pub fn clear(&mut self) {
        self.0 = None;
    }

    /// The readable reasoning: every `thinking` block's text, in order.
    pub fn text(&self) -> String {
        self.iter().map(ThinkingBlock::text).collect()
    }

    /// Heap bytes (PERF-2's memory report).
    pub fn heap_bytes(&self) -> usize {
        self.0.as_ref().map_or(0, |k| {
            std::mem::size_of::<Kept>()
                + k.blocks.capacity() * std::mem::size_of::<ThinkingBlock>()
                + k.blocks.iter().map(ThinkingBlock::heap_bytes).sum::<usize>()
                + k.order.as_ref().map_or(0, |o| o.len())
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
        Self(Some(Box::new(Kept { blocks, order: None })))
    }
}

/// One content block of an answer, in a [`ThinkingBlocks::order`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The next reasoning block.
    Reasoning,
    /// The next tool call.
    Call,
    /// A text block: the next this many bytes of the answer's text.
    Text(usize),
}

/// The slots of `order`, or `None` when it does not parse.
pub(crate) fn slots(order: &str) -> Option<Vec<Slot>> {
    let mut out = Vec::new();
    let mut rest = order;
    while let Some(c) = rest.chars().next() {
        rest = rest.get(c.len_utf8()..)?;
        out.push(match c {
            't' => Slot::Reasoning,
            'u' => Slot::Call,
            'x' => {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                let n = rest.get(..digits)?.parse().ok()?;
                rest = rest.get(digits..)?;
                Slot::Text(n)
            }
            _ => return None,
        });
    }
    Some(out)
}

/// Records an answer's content blocks as they arrive (whole or streamed) and tells its
/// [`ThinkingBlocks::order`] at the end.
#[derive(Debug, Default)]
pub(crate) struct OrderRecorder {
    slots: Vec<Slot>,
}

impl OrderRecorder {
    /// A reasoning block began.
    pub(crate) fn reasoning(&mut self) {
        self.slots.push(Slot::Reasoning);
    }

    /// A tool call began.
    pub(crate) fn call(&mut self) {
        self.slots.push(Slot::Call);
    }

    /// A text block began with `len` bytes.
    pub(crate) fn text(&mut self, len: usize) {
        self.slots.push(Slot::Text(len));
    }

    /// `len` more bytes of the text block that began last.
    pub(crate) fn more_text(&mut self, len: usize) {
        if let Some(Slot::Text(n)) = self.slots.last_mut() {
            *n += len;
        }
    }

    /// The order, when a reasoning block came after another block; `None` otherwise.
    pub(crate) fn finish(self) -> Option<Box<str>> {
        let first_other = self.slots.iter().position(|s| *s != Slot::Reasoning)?;
        if !self.slots[first_other..].contains(&Slot::Reasoning) {
            return None;
        }
        let mut order = String::new();
        for slot in self.slots {
            match slot {
                Slot::Reasoning => order.push('t'),
                Slot::Call => order.push('u'),
                Slot::Text(n) => {
                    order.push('x');
                    order.push_str(&n.to_string());
                }
            }
        }
        Some(order.into_boxed_str())
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
    fn think_2_an_interleaved_answers_block_order_is_recorded_and_read_back() {
        let record = |slots: &[Slot]| {
            let mut r = OrderRecorder::default();
            for s in slots {
                match s {
                    Slot::Reasoning => r.reasoning(),
                    Slot::Call => r.call(),
                    Slot::Text(n) => {
                        r.text(1);
                        r.more_text(n - 1);
                    }
                }
            }
            r.finish()
        };
        use Slot::{Call as U, Reasoning as T, Text as X};
        // The blocks first: no order to keep.
        assert_eq!(record(&[T, T, X(5), U, U]), None);
        assert_eq!(record(&[X(5), U]), None);
        assert_eq!(record(&[]), None);
        // Interleaved.
        for (kinds, order) in [(vec![T, U, T, U], "tutu"), (vec![T, X(12), U, T, X(3), U], "tx12utx3u"), (vec![X(7), T, U], "x7tu")] {
            assert_eq!(record(&kinds).as_deref(), Some(order));
            assert_eq!(slots(order), Some(kinds.clone()));
        }
        for bad in ["x", "tq", "x-1", "ux99999999999999999999999", "tü", "é"] {
            assert_eq!(slots(bad), None, "{bad}");
        }
        let kept = ThinkingBlocks::with_order(vec![ThinkingBlock::RedactedThinking { data: "d".into() }], Some("utu".into()));
        assert_eq!(kept.order(), Some("utu"));
        // Redacted text blocks are recounted; a secret across two blocks drops the order.
        let redact = |s: &str| s.replace("KEY", "<redacted>");
        let mut blocks = ThinkingBlocks::with_order(vec![ThinkingBlock::RedactedThinking { data: "d".into() }], Some("x6tux3".into()));
        blocks.recount_text("a KEY.b c", &redact("a KEY.b c"), redact);
        assert_eq!(blocks.order(), Some("x13tux3"));
        let split = |s: &str| s.replace("KE", "").replace("Y.", "");
        let mut blocks = ThinkingBlocks::with_order(vec![ThinkingBlock::RedactedThinking { data: "d".into() }], Some("x4tx3".into()));
        blocks.recount_text("a KEY.b", "a <redacted>b", split);
        assert_eq!(blocks.order(), None);
        assert_eq!(ThinkingBlocks::with_order(Vec::new(), Some("utu".into())).order(), None);
    }

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
        assert_eq!(blocks.order(), None);
        // PERF-2, PERF-9: reasoning kept exactly costs the history's slots nothing (an
        // answer's exact reasoning and its blocks fit where the reasoning was before).
        assert!(std::mem::size_of::<super::super::Message>() <= 72, "{}", std::mem::size_of::<super::super::Message>());
    }
}
