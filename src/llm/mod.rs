//! Model access: the host-supplied HTTP transport, the provider protocols behind one seam
//! (`format`, WIRE-1: OpenAI-compatible Chat Completions and Anthropic Messages, whole and
//! streamed answers, side by side), error classification with retries, and the client
//! that ties them together. The library builds and parses every request; the host only
//! moves bytes (LLM-1).
//!
//! Inside, imports point one way (no circles; ARCH-1), bottom to top:
//! - `transport`, `request` (the request and response values), `sse`, `wire_format` (the
//!   `wire_format` value), `thinking` (the thinking controls' values): import no sibling;
//! - `retry`, `config` (→ retry, transport, wire_format, thinking), `delta` (→ request,
//!   sse: the deltas and the protocols' stream-event trait);
//! - `common` (→ transport): what the protocols share, named after none of them — the
//!   lenient JSON readers, the answer builder, the error classification;
//! - `format` (→ all of the above): the `WireProtocol` trait and its registry, the
//!   protocols side by side (`format/openai/`, `format/anthropic/`), and `format/secrets`
//!   (the credential headers every protocol declares, the config's redaction);
//! - `stream` (→ delta, sse, request, and `format/openai/stream` for its default parser):
//!   SSE framing and chunking around a protocol's `StreamEvents`;
//! - `client` on top (→ format and the shared parts).
//!
//! Outside `llm`, only the ground (`error`, whose [`LlmError`] every file may use) and
//! `history` and `tools` are imported.

mod client;
mod common;
mod config;
mod delta;
mod format;
pub mod host_call;
mod request;
mod retry;
mod sse;
mod stream;
mod thinking;
mod transport;
mod wire_format;

pub use client::{reasoning_deltas, ChatClient, CutOffUsage};
pub use config::{ModelConfig, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_MAX_IMAGES_PER_REQUEST, DEFAULT_MAX_IMAGE_BYTES, DEFAULT_REQUEST_TIMEOUT_MS};
pub use delta::{DeltaSink, StreamDelta};
pub use common::{classify_error_object, classify_http_error, classify_status, parse_retry_after, retry_after_ms};
pub use format::openai;
pub use format::{check_thinking, check_wire_format, image_rule_of, is_secret_header, reasoning_replay_of, stream_parser, wire_format, wire_format_names, WireFormat, ANTHROPIC_DEFAULT_MAX_TOKENS};
pub(crate) use format::{protocol_of, BodyWriter, Reopen, RequestEncoder, RequestParts};
/// Defined on the ground ([`crate::error`]) so the crate's error type can carry it
/// without importing `llm`.
pub use crate::error::LlmError;
pub use request::{ChatRequest, ChatResponse, ToolChoice};
pub use retry::{Jitter, RetryPolicy, DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_BACKOFF_MS};
pub use sse::{SseDecoder, SseError, SseEvent, MAX_EVENT_BYTES, MAX_EVENT_NAME_BYTES};
pub use format::openai::parse_stream;
pub use stream::StreamParser;
pub use thinking::{Effort, Provider, ReasoningReplay, Thinking};
pub use transport::{parse_host_headers, BodySender, BodyStream, ErrorAnswer, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
