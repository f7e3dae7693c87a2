//! CMP-11: a CJK-aware prompt token estimate, used before a model call (no tokenizer on
//! device). Deliberately conservative: over-estimating compresses a little early,
//! under-estimating overflows.

use crate::history::Message;
use crate::tools::ToolDefinition;

/// Tokens per message for role and framing.
const MESSAGE_OVERHEAD: u64 = 4;

/// Estimated tokens of `text`: ASCII ≈ 4 characters a token; CJK ideographs, kana,
/// Hangul and full-width forms ≈ 1 token each; other characters ≈ 2 a token.
///
/// ```
/// use arkagent::memory::estimate_tokens;
/// assert_eq!(estimate_tokens("abcdefgh"), 2);
/// assert_eq!(estimate_tokens("法棍失重率"), 5);
/// ```
pub fn estimate_tokens(text: &str) -> u64 {
    if text.is_ascii() {
        // The common case, checked a word at a time: every char is one ASCII byte.
        return (text.len() as u64).div_ceil(4);
    }
    let (mut ascii, mut cjk, mut other) = (0u64, 0u64, 0u64);
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else if is_cjk(c) {
            cjk += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + cjk + other.div_ceil(2)
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
    let calls: u64 = message
        .tool_calls()
        .iter()
        .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + estimate_tokens(&c.id) + MESSAGE_OVERHEAD)
        .sum();
    MESSAGE_OVERHEAD + message.text().map_or(0, estimate_tokens) + calls
}

/// Estimated prompt tokens of a request with these parts.
pub fn estimate_request_tokens(system_prompt: &str, context: &[Message], messages: &[Message], tools: &[ToolDefinition]) -> u64 {
    let tools: u64 = tools
        .iter()
        .map(|t| estimate_tokens(&t.name) + estimate_tokens(&t.description) + estimate_tokens(&t.parameters.to_string()) + MESSAGE_OVERHEAD)
        .sum();
    let system = if system_prompt.is_empty() { 0 } else { MESSAGE_OVERHEAD + estimate_tokens(system_prompt) };
    system + context.iter().chain(messages).map(estimate_message_tokens).sum::<u64>() + tools
}
