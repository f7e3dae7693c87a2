//! Model access: the host-supplied HTTP transport, the OpenAI-compatible Chat Completions
//! codec (whole and streamed answers), error classification with retries, and the client
//! that ties them together. The library builds and parses every request; the host only
//! moves bytes (LLM-1).

mod classify;
mod client;
mod config;
mod error;
pub mod host_call;
pub mod openai;
mod retry;
mod sse;
mod stream;
mod transport;
pub mod wire;

pub use client::{ChatClient, ChatRequest, ChatResponse, ToolChoice};
pub use config::{ModelConfig, DEFAULT_IDLE_TIMEOUT_MS, DEFAULT_REQUEST_TIMEOUT_MS};
pub use error::LlmError;
pub use retry::{Jitter, RetryPolicy, DEFAULT_INITIAL_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS, DEFAULT_MAX_BACKOFF_MS};
pub use sse::{SseDecoder, SseError, SseEvent, MAX_EVENT_BYTES, MAX_EVENT_NAME_BYTES};
pub use stream::{parse_stream, DeltaSink, StreamDelta, StreamParser};
pub use transport::{parse_host_headers, BodySender, BodyStream, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
