//! Model access: the host-supplied HTTP transport, the OpenAI-compatible Chat Completions
//! codec and the client that ties them together. The library builds and parses every
//! request; the host only moves bytes (LLM-1).

mod client;
mod config;
mod error;
pub mod openai;
mod transport;

pub use client::{ChatClient, ChatRequest, ChatResponse, ToolChoice};
pub use config::ModelConfig;
pub use error::LlmError;
pub use transport::{parse_host_headers, BodySender, BodyStream, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
