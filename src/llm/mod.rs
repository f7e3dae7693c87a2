//! Model access: the host-supplied HTTP transport, the provider protocols behind one seam
//! (`format`, WIRE-1: OpenAI-compatible Chat Completions and Anthropic Messages, whole and
//! streamed answers), error classification with retries, and the client that ties them
//! together. The library builds and parses every request; the host only moves bytes
//! (LLM-1).
//!
//! Inside, imports point one way (no circles; ARCH-1), bottom to top:
//! - `transport`, `request` (the request and response values), `sse`, `format/name`
//!   (the `wire_format` value): import no sibling;
//! - `thinking` (the thinking controls' values): imports no sibling either;
//! - `retry`, `config` (→ retry, transport, format/name, thinking), `classify` (→ transport),
//!   `delta` (→ request, sse: the deltas and the protocols' stream-event trait);
//! - `wire` (→ request, config): the OpenAI-compatible typed request encoders and the
//!   response and chunk shapes, shared by the codec and the stream parser;
//! - `stream` (→ delta, wire, sse, classify, request), then `openai`, the codec (→ wire,
//!   stream, classify, request, config);
//! - `format` (→ all of the above): the `WireProtocol` trait, its implementations
//!   (`format/openai` over the codec above, `format/anthropic/`) and their registry;
//! - `client` on top (→ format and the shared parts).
//!
//! Outside `llm`, only the ground (`error`, whose [`LlmError`] every file may use) and
//! `history` and `tools` are imported.

mod classify;
mod client;
mod config;
mod delta;
mod format;
pub mod host_call;
pub mod openai;
mod request;
mod retry;
mod sse;
mod stream;
mod thinking;
mod transport;
pub mod wire;

pub use client::{reasoning_deltas, ChatClient};
pub use config::{ModelConfig, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_IMAGES_PER_REQUEST, DEFAULT_MAX_IMAGE_BYTES, DEFAULT_REQUEST_TIMEOUT_MS};
pub use delta::{DeltaSink, StreamDelta};
pub use format::{check_thinking, check_wire_format, image_rule_of, reasoning_replay_of, stream_parser, wire_format, wire_format_names, WireFormat, ANTHROPIC_DEFAULT_MAX_TOKENS};
pub(crate) use format::{protocol_of, BodyWriter, Reopen, RequestEncoder, RequestParts};
/// Defined on the ground ([`crate::error`]) so the crate's error type can carry it
/// without importing `llm`.
pub use crate::error::LlmError;
pub use request::{ChatRequest, ChatResponse, ToolChoice};
pub use retry::{Jitter, RetryPolicy, DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_BACKOFF_MS};
pub use sse::{SseDecoder, SseError, SseEvent, MAX_EVENT_BYTES, MAX_EVENT_NAME_BYTES};
pub use stream::{parse_stream, StreamParser};
pub use thinking::{Effort, Provider, ReasoningReplay, Thinking};
pub use transport::{parse_host_headers, BodySender, BodyStream, ErrorAnswer, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
