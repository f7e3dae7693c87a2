//! Model access: the host-supplied HTTP transport, the OpenAI-compatible Chat Completions
//! codec (whole and streamed answers), error classification with retries, and the client
//! that ties them together. The library builds and parses every request; the host only
//! moves bytes (LLM-1).
//!
//! Inside, imports point one way (no circles; ARCH-1), bottom to top:
//! - `transport`, `request` (the request and response values), `sse`: import no sibling;
//! - `retry`, `config` (→ retry, transport), `classify` (→ transport);
//! - `wire` (→ request, config): the typed request encoders and the response and chunk
//!   shapes, shared by the codec and the stream parser;
//! - `stream` (→ wire, sse, classify, request), then `openai`, the codec (→ wire, stream,
//!   classify, request, config);
//! - `client` on top (→ all of the above).
//!
//! Outside `llm`, only the ground (`error`, whose [`LlmError`] every file may use) and
//! `history` and `tools` are imported.

mod classify;
mod client;
mod config;
pub mod host_call;
pub mod openai;
mod request;
mod retry;
mod sse;
mod stream;
mod transport;
pub mod wire;

pub use client::ChatClient;
pub use config::{ModelConfig, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS};
/// Defined on the ground ([`crate::error`]) so the crate's error type can carry it
/// without importing `llm`.
pub use crate::error::LlmError;
pub use request::{ChatRequest, ChatResponse, ToolChoice};
pub use retry::{Jitter, RetryPolicy, DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_BACKOFF_MS};
pub use sse::{SseDecoder, SseError, SseEvent, MAX_EVENT_BYTES, MAX_EVENT_NAME_BYTES};
pub use stream::{parse_stream, DeltaSink, StreamDelta, StreamParser};
pub use transport::{parse_host_headers, BodySender, BodyStream, ErrorAnswer, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
