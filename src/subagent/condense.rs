//! ISO-6: auto-condensation of the parent's context for a child given no explicit one.

use crate::history::Message;

/// Assistant messages looked at.
const CONDENSE_MESSAGES: usize = 3;
/// Characters kept from each.
const CONDENSE_CHARS: usize = 200;

/// The first 200 characters (Unicode scalars) of each of the parent's last 3 assistant
/// messages with text, oldest first, one per line; empty when there are none.
pub fn condense_parent_context(messages: &[Message]) -> String {
    let mut picked: Vec<String> = messages
        .iter()
        .rev()
        .filter_map(|m| match m {
            Message::Assistant { content: Some(text), .. } if !text.trim().is_empty() => Some(text.chars().take(CONDENSE_CHARS).collect()),
            _ => None,
        })
        .take(CONDENSE_MESSAGES)
        .collect();
    picked.reverse();
    picked.join("\n")
}
