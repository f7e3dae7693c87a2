//! What every protocol's stream parser shares (WIRE-1): the deltas handed to the caller
//! as an answer arrives, and the trait a protocol implements to turn SSE events into
//! deltas and a [`ChatResponse`]. Below the stream parser and the protocols, so neither
//! imports the other.

use std::fmt;

use super::request::ChatResponse;
use super::sse::{SseError, SseEvent};
use crate::error::LlmError;

/// A piece of a streamed answer, delivered as soon as it is parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamDelta {
    /// Answer text.
    Text(String),
    /// Reasoning text (DeepSeek `reasoning_content`, Anthropic `thinking`), never part of
    /// the answer.
    Reasoning(String),
    /// A reasoning block the provider encrypted began (Anthropic `redacted_thinking`): no
    /// text to show.
    RedactedReasoning,
    /// A tool call began. `index` is the call's position in this answer (an
    /// OpenAI-compatible stream's own `index`; the order of Anthropic's `tool_use`
    /// blocks); `id` may be empty when the provider sends it later or never (the final
    /// [`ChatResponse`] is authoritative).
    ToolCallStarted {
        /// Position of the call.
        index: u32,
        /// Provider id, possibly empty.
        id: String,
        /// Tool name.
        name: String,
    },
    /// More argument text of the call at `index` (concatenate the fragments).
    ToolCallArguments {
        /// Position of the call.
        index: u32,
        /// The new text.
        fragment: String,
    },
}

/// Where deltas go; `None` parses without building them.
pub type DeltaSink<'a> = Option<&'a mut dyn FnMut(StreamDelta)>;

/// Why a protocol's event handler stopped the SSE decoder before the end of a chunk.
#[derive(Debug)]
pub enum StreamHalt {
    /// The protocol's end marker arrived (`[DONE]`, `message_stop`): the rest of the
    /// body, in this chunk or later ones, is never looked at, so the outcome cannot
    /// depend on chunking.
    Done,
    /// The stream failed.
    Failed(LlmError),
}

impl From<SseError> for StreamHalt {
    fn from(e: SseError) -> Self {
        StreamHalt::Failed(e.into())
    }
}

impl From<SseError> for LlmError {
    fn from(e: SseError) -> Self {
        LlmError::MalformedResponse(e.to_string())
    }
}

/// One protocol's reading of a streamed answer (WIRE-1): SSE events in, deltas and the
/// assembled response out. The shared [`StreamParser`](super::StreamParser) does the
/// framing, the chunking and the error latch.
pub trait StreamEvents: Send + fmt::Debug {
    /// Handles one event; `Err(StreamHalt::Done)` once the end marker arrived (and for
    /// every event after it).
    fn on_event(&mut self, event: SseEvent<'_>, sink: &mut DeltaSink<'_>) -> Result<(), StreamHalt>;
    /// True once the end marker arrived.
    fn is_done(&self) -> bool;
    /// The assembled answer; a body that ended before the end marker is a truncated
    /// stream ([`LlmError::Transport`]).
    fn into_response(self: Box<Self>) -> Result<ChatResponse, LlmError>;
    /// The usage the stream reported before its end, if any (Anthropic's `message_start`
    /// carries the input tokens): what a call cut off mid-stream was billed at least.
    fn usage_so_far(&self) -> Option<crate::history::ModelUsage> {
        None
    }
}
