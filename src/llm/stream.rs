//! Streamed answers (LLM-2), whatever the protocol: the SSE framing, the chunking (a body's
//! result never depends on where it was cut), the error latch and the end marker are
//! here; reading the events is the protocol's (`StreamEvents`, from
//! `WireProtocol::stream_events`). A parser made with [`StreamParser::new`] reads
//! OpenAI-compatible Chat Completions, the default format (that constructor is the
//! protocol's: `format/openai/stream.rs`).

use super::delta::{DeltaSink, StreamEvents, StreamHalt as Halt};
use super::request::ChatResponse;
use super::sse::SseDecoder;
use crate::error::LlmError;

/// Incremental parser of a streamed (SSE) answer: an OpenAI-compatible one from
/// [`new`](Self::new), another protocol's from `WireFormat`'s parser (WIRE-1). Feed chunks
/// with [`push`](Self::push) as they arrive, then call [`finish`](Self::finish).
///
/// ```
/// use arkagent::llm::{StreamDelta, StreamParser};
/// let body = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"你好\"}}]}\n\n\
///             data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
/// let mut parser = StreamParser::new();
/// let mut deltas = Vec::new();
/// for chunk in body.as_bytes().chunks(7) {
///     parser.push(chunk, Some(&mut |d| deltas.push(d))).unwrap();
/// }
/// let response = parser.finish(None).unwrap();
/// assert_eq!(response.message.text(), Some("你好"));
/// assert_eq!(deltas, [StreamDelta::Text("你好".into())]);
/// ```
#[derive(Debug)]
pub struct StreamParser {
    sse: SseDecoder,
    /// The protocol's reading of the events.
    events: Box<dyn StreamEvents>,
    /// The first error; every later call returns it again.
    failed: Option<LlmError>,
}

impl StreamParser {
    /// The usage the stream reported so far (see [`StreamEvents::usage_so_far`]).
    pub(crate) fn usage_so_far(&self) -> Option<crate::history::ModelUsage> {
        self.events.usage_so_far()
    }

    /// A parser reading events with a protocol's handler (WIRE-1).
    pub(crate) fn with_events(events: Box<dyn StreamEvents>) -> Self {
        Self { sse: SseDecoder::default(), events, failed: None }
    }

    /// Feeds one chunk of the body. Errors: `llm_malformed_response` for a chunk that is
    /// not JSON or not UTF-8, or the classified error of an error object in the stream.
    /// After the protocol's end marker (`data: [DONE]`, Anthropic's `message_stop`) every
    /// byte is ignored, including the rest of the chunk that carried it. The result of a
    /// body never depends on how it was cut into chunks; after an error, later calls
    /// return the same error.
    pub fn push(&mut self, chunk: &[u8], mut on_delta: DeltaSink<'_>) -> Result<(), LlmError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.events.is_done() {
            return Ok(()); // nothing after the end marker matters
        }
        let Self { sse, events, .. } = self;
        let result = sse.feed(chunk, |event| events.on_event(event, &mut on_delta));
        self.settle(result)
    }

    /// True once the end marker arrived; the rest of the body can be dropped.
    pub fn is_done(&self) -> bool {
        self.events.is_done()
    }

    /// Ends the body and returns the assembled completion. A body that ended before
    /// the end marker is a truncated stream: [`LlmError::Transport`].
    pub fn finish(mut self, mut on_delta: DeltaSink<'_>) -> Result<ChatResponse, LlmError> {
        if self.failed.is_none() && !self.events.is_done() {
            let Self { sse, events, .. } = &mut self;
            let result = sse.finish(|event| events.on_event(event, &mut on_delta));
            self.settle(result)?;
        }
        match self.failed {
            Some(e) => Err(e),
            None => self.events.into_response(),
        }
    }

    fn settle(&mut self, result: Result<(), Halt>) -> Result<(), LlmError> {
        match result {
            Ok(()) | Err(Halt::Done) => Ok(()),
            Err(Halt::Failed(e)) => {
                self.failed = Some(e.clone());
                Err(e)
            }
        }
    }
}
