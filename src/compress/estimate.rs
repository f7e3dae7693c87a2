//! CMP-11: a CJK-aware prompt token estimate, used before a model call (no tokenizer on
//! device). Deliberately conservative: over-estimating compresses a little early,
//! under-estimating overflows.

use super::calibration::TokenCounts;
use super::image_tokens::image_part_tokens;
use crate::history::{Content, ContentPart, ImageTokenRule, Message};
use crate::llm::{image_rule_of, reasoning_replay_of, ModelConfig, ReasoningReplay};
use crate::tools::ToolDefinition;

/// Tokens per message for role and framing.
const MESSAGE_OVERHEAD: u64 = 4;

/// Estimated tokens of `text`: ASCII ≈ 4 characters a token; CJK ideographs, kana,
/// Hangul and full-width forms ≈ 1 token each; other characters ≈ 2 a token.
///
/// ```
/// use arkagent::compress::estimate_tokens;
/// assert_eq!(estimate_tokens("abcdefgh"), 2);
/// assert_eq!(estimate_tokens("法棍失重率"), 5);
/// ```
pub fn estimate_tokens(text: &str) -> u64 {
    count_tokens(text).total()
}

/// [`estimate_tokens`] split by script class (CMP-12): what a calibration scales.
///
/// ```
/// use arkagent::compress::count_tokens;
/// let c = count_tokens("法棍 ok 😀 20261208");
/// assert_eq!((c.ascii, c.digits, c.cjk, c.other, c.framing), (2, 2, 2, 1, 0));
/// ```
pub fn count_tokens(text: &str) -> TokenCounts {
    if text.is_ascii() {
        // The common case, checked a word at a time: every char is one ASCII byte.
        let digits = text.bytes().filter(u8::is_ascii_digit).count() as u64;
        return ascii_counts(text.len() as u64, digits);
    }
    let mut chars = CharClasses::default();
    text.chars().for_each(|c| chars.push(c));
    chars.counts()
}

/// Characters of a text by script class, as [`count_tokens`] counts them: a text's
/// counts are a function of these four numbers alone.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct CharClasses {
    ascii: u64,
    digits: u64,
    cjk: u64,
    other: u64,
}

impl CharClasses {
    /// Counts one more character.
    pub(super) fn push(&mut self, c: char) {
        if c.is_ascii() {
            self.ascii += 1;
            self.digits += u64::from(c.is_ascii_digit());
        } else if is_cjk(c) {
            self.cjk += 1;
        } else {
            self.other += 1;
        }
    }

    /// [`count_tokens`] of the characters counted.
    pub(super) fn counts(&self) -> TokenCounts {
        TokenCounts { cjk: self.cjk, other: self.other.div_ceil(2), ..ascii_counts(self.ascii, self.digits) }
    }
}

/// `chars` ASCII characters, `digits` of them digits: `chars / 4` tokens (rounded up),
/// split between digits and the rest by their characters.
fn ascii_counts(chars: u64, digits: u64) -> TokenCounts {
    let tokens = chars.div_ceil(4);
    let digit_tokens = (tokens * digits).checked_div(chars).unwrap_or(0);
    TokenCounts { ascii: tokens - digit_tokens, digits: digit_tokens, ..TokenCounts::default() }
}

pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3000..=0x303F     // CJK symbols and punctuation
        | 0x3040..=0x30FF   // Hiragana, Katakana
        | 0x3400..=0x4DBF   // CJK extension A
        | 0x4E00..=0x9FFF   // CJK unified ideographs
        | 0xAC00..=0xD7AF   // Hangul syllables
        | 0xF900..=0xFAFF   // CJK compatibility ideographs
        | 0xFF00..=0xFFEF   // half-width and full-width forms
        | 0x20000..=0x2FFFF // extensions B–F
    )
}

/// Estimated tokens of one message, including tool calls and framing.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    count_message_tokens(message).total()
}

/// [`estimate_message_tokens`] split by script class (CMP-12); images by the default
/// rule of the OpenAI-compatible format ([`ImageTokenRule::OpenAiTiles`]).
pub fn count_message_tokens(message: &Message) -> TokenCounts {
    count_message_tokens_for(message, ImageTokenRule::OpenAiTiles)
}

/// How one model's prompt is counted: its image rule (IMG-3) and which earlier reasoning it
/// sends back (THINK-2: what is not sent is not counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counting {
    /// The model family's image rule.
    pub image_rule: ImageTokenRule,
    /// The model's replay policy, resolved by its wire format.
    pub replay: ReasoningReplay,
}

impl Counting {
    /// The counting of `config`'s requests.
    pub fn of(config: &ModelConfig) -> Self {
        Self { image_rule: image_rule_of(config), replay: reasoning_replay_of(config) }
    }
}

/// Counted by `rule`, with the reasoning of answers that called a tool (the default replay
/// of every wire format but Qwen's).
impl From<ImageTokenRule> for Counting {
    fn from(image_rule: ImageTokenRule) -> Self {
        Self { image_rule, replay: ReasoningReplay::ToolCalls }
    }
}

/// [`count_message_tokens`] with images counted by the rule (IMG-3, their own class) and
/// the reasoning the model sends back (THINK-2) of `counting`.
pub fn count_message_tokens_for(message: &Message, counting: impl Into<Counting>) -> TokenCounts {
    let Counting { image_rule: rule, replay } = counting.into();
    let calls: TokenCounts = message
        .tool_calls()
        .iter()
        .map(|c| count_tokens(&c.name) + count_tokens(&c.arguments) + count_tokens(&c.id) + framing())
        .sum();
    let content = match message {
        Message::User { content } | Message::Tool { content, .. } => count_content(content, rule),
        Message::System { content } => count_tokens(content),
        Message::Assistant { content, tool_calls, reasoning, thinking } => {
            // THINK-2: the reasoning that goes back is part of the prompt.
            let replayed = if !replay.sends(!tool_calls.is_empty()) {
                TokenCounts::default()
            } else {
                reasoning.as_deref().map(count_tokens).unwrap_or_default() + thinking.iter().map(|b| count_tokens(b.text())).sum()
            };
            content.as_deref().map(count_tokens).unwrap_or_default() + replayed
        }
    };
    framing() + content + calls
}

/// A content's text by script class and its images by `rule`.
fn count_content(content: &Content, rule: ImageTokenRule) -> TokenCounts {
    match content {
        Content::Text(text) => count_tokens(text),
        Content::Parts(parts) => parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => count_tokens(text),
                ContentPart::Image(image) => TokenCounts { images: image_part_tokens(rule, image), ..TokenCounts::default() },
            })
            .sum(),
    }
}

fn framing() -> TokenCounts {
    TokenCounts { framing: MESSAGE_OVERHEAD, ..TokenCounts::default() }
}

/// Estimated prompt tokens of a request with these parts.
pub fn estimate_request_tokens(system_prompt: &str, context: &[Message], messages: &[Message], tools: &[ToolDefinition]) -> u64 {
    count_request_tokens(system_prompt, context, messages, tools).total()
}

/// [`estimate_request_tokens`] split by script class (CMP-12).
pub fn count_request_tokens(system_prompt: &str, context: &[Message], messages: &[Message], tools: &[ToolDefinition]) -> TokenCounts {
    count_request_tokens_for(system_prompt, context, messages, tools, ImageTokenRule::OpenAiTiles)
}

/// [`count_request_tokens`] with images counted by `rule` (IMG-3).
pub fn count_request_tokens_for(
    system_prompt: &str,
    context: &[Message],
    messages: &[Message],
    tools: &[ToolDefinition],
    counting: impl Into<Counting>,
) -> TokenCounts {
    let counting = counting.into();
    let tools: TokenCounts = tools
        .iter()
        .map(|t| count_tokens(&t.name) + count_tokens(&t.description) + count_tokens(&t.parameters.to_string()) + framing())
        .sum();
    let system = if system_prompt.is_empty() { TokenCounts::default() } else { framing() + count_tokens(system_prompt) };
    system + context.iter().chain(messages).map(|m| count_message_tokens_for(m, counting)).sum::<TokenCounts>() + tools
}
