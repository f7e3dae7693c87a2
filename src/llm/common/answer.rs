//! What every protocol's parsers build the same way (LLM-2): the assistant message of an
//! answer, whole or streamed, and a JSON error that never echoes its input.

use crate::error::LlmError;
use crate::history::{Message, ThinkingBlocks, ToolCall};

/// The assistant message of a completion; shared with the stream parser so both paths
/// build identical messages. Empty text beside tool calls is dropped.
///
/// PERF-2, PERF-9: the message is kept for the session's life, so it carries no spare
/// capacity: a vector of calls grown by `push` holds 4 slots for 1 call (216 bytes
/// empty per answer on the Anthropic wire: 2.2 MB at 10,000 turns), and texts assembled
/// from stream deltas up to twice their length. Exact buffers are left as they are.
/// THINK-1: the reasoning as received (`Some("")` kept apart from `None`), and Anthropic's
/// reasoning blocks in order.
pub(crate) fn finish_message(content: Option<String>, mut tool_calls: Vec<ToolCall>, reasoning: Option<String>, thinking: ThinkingBlocks) -> Message {
    let exact = |mut text: String| {
        text.shrink_to_fit();
        text
    };
    tool_calls.shrink_to_fit();
    for call in &mut tool_calls {
        call.id.shrink_to_fit();
        call.name.shrink_to_fit();
        call.arguments.shrink_to_fit();
    }
    let content = content.filter(|c| !c.is_empty() || tool_calls.is_empty()).map(exact);
    Message::Assistant { content, tool_calls, reasoning: reasoning.map(String::into_boxed_str), thinking }
}

/// A JSON error without the offending input (which could echo anything, a key included).
pub(crate) fn json_error(what: &str, e: &serde_json::Error) -> LlmError {
    LlmError::MalformedResponse(format!("{what} is not valid JSON ({:?} error at line {} column {})", e.classify(), e.line(), e.column()))
}

