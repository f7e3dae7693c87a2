//! WIRE-1: OpenAI-compatible Chat Completions (`wire_format: "openai"`), spoken by
//! DeepSeek, Qwen (DashScope compatible mode), Moonshot, Zhipu GLM, Ollama and vLLM:
//! `POST {base_url}/chat/completions` with `Authorization: Bearer`. Typed request bodies
//! in `encode` (their content parts and tool images in `parts`, each provider's thinking
//! switch in `thinking`), whole answers in `parse` (over the shapes of `response`),
//! streamed ones in `stream` (over the chunk shapes of `chunk`). Public as `llm::openai`:
//! the encoders and parsers benchmarks and tools use directly.

mod chunk;
mod encode;
mod parse;
mod parts;
mod response;
mod stream;
mod thinking;

use std::sync::Arc;

pub use encode::{append_message, encode_body, encode_message, encode_system, replay_of, BodyTemplate};
pub use parse::{build_request_body, parse_response, parse_usage};
pub use stream::parse_stream;

use super::{BodyWriter, Reopen, RequestEncoder, RequestParts, WireProtocol};
use crate::error::{ErrorCode, LlmError};
use crate::history::{ImageTokenRule, Message};
use crate::llm::common::classify_status;
use crate::llm::config::ModelConfig;
use crate::llm::delta::StreamEvents;
use crate::llm::request::{ChatRequest, ChatResponse, ToolChoice};
use crate::llm::thinking::ReasoningReplay;
use encode::{encode_in_turn, Echo};
use parts::ToolImageCarrier;
use thinking::{thinking_conflict, thinking_fields, OWNED_FIELDS};

/// The OpenAI-compatible Chat Completions protocol (`wire_format: "openai"`).
pub(super) struct OpenAiChat;

impl WireProtocol for OpenAiChat {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn url(&self, config: &ModelConfig) -> String {
        config.chat_completions_url()
    }

    fn push_headers(&self, config: &ModelConfig, headers: &mut Vec<(String, String)>) {
        headers.push(("Authorization".to_owned(), format!("Bearer {}", config.api_key)));
    }

    fn secret_headers(&self) -> &'static [&'static str] {
        // `api-key`: Azure OpenAI's key header, sent through `extra_headers`.
        &["authorization", "api-key"]
    }

    fn request_encoder(&self, config: &ModelConfig, parts: RequestParts<'_>) -> Box<dyn RequestEncoder> {
        let system = if parts.system_prompt.is_empty() { String::new() } else { encode_system(parts.system_prompt) };
        let template = BodyTemplate::new(config, parts.tools, parts.tool_choice);
        Box::new(Encoder(Arc::new(Fixed { template, system, echo: Echo::of(config) })))
    }

    fn encode_request(&self, config: &ModelConfig, request: &ChatRequest<'_>) -> String {
        encode_body(config, request)
    }

    fn parse_response(&self, body: &[u8]) -> Result<ChatResponse, LlmError> {
        parse_response(body)
    }

    fn stream_events(&self) -> Box<dyn StreamEvents> {
        stream::events()
    }

    fn classify_error(&self, status: u16, body: &[u8], retry_after_ms: Option<u64>) -> LlmError {
        classify_status(status, body, retry_after_ms)
    }

    fn default_image_rule(&self) -> ImageTokenRule {
        ImageTokenRule::OpenAiTiles
    }

    fn thinking_fields(&self, config: &ModelConfig) -> Result<serde_json::Map<String, serde_json::Value>, (ErrorCode, String)> {
        thinking_fields(config)
    }

    fn thinking_conflict(&self, config: &ModelConfig, tool_choice: Option<&ToolChoice>) -> Option<String> {
        thinking_conflict(config, tool_choice)
    }

    fn owned_fields(&self) -> &'static [&'static str] {
        OWNED_FIELDS
    }

    fn replay(&self, config: &ModelConfig) -> ReasoningReplay {
        replay_of(config)
    }
}

/// The fixed encodings.
struct Fixed {
    /// The model, tools array, tool choice and sampling fields.
    template: BodyTemplate,
    /// The system prompt message ("" when there is none).
    system: String,
    /// Which reasoning goes back (THINK-2), resolved.
    echo: Echo,
}

struct Encoder(Arc<Fixed>);

impl RequestEncoder for Encoder {
    fn writer(&self) -> Box<dyn BodyWriter> {
        Box::new(Writer { fixed: Arc::clone(&self.0), any: false, carrier: ToolImageCarrier::default() })
    }

    fn heap_bytes(&self) -> usize {
        self.0.template.heap_bytes() + self.0.system.capacity()
    }
}

/// The body is the template's head, `[`, the comma-separated system prompt, context
/// and history messages; closing adds `]` and the template's tail.
#[derive(Clone)]
struct Writer {
    fixed: Arc<Fixed>,
    /// Something follows the `[` (the next message needs a comma first).
    any: bool,
    /// Where a turn's tool images go (IMG-2; the from-scratch encoder runs the same).
    carrier: ToolImageCarrier,
}

impl BodyWriter for Writer {
    fn start(&mut self, context: &[Message]) -> String {
        let f = &self.fixed;
        let mut head = String::with_capacity(f.template.head().len() + 1 + f.system.len());
        head.push_str(f.template.head());
        head.push('[');
        head.push_str(&f.system);
        self.any = !f.system.is_empty();
        self.carrier = ToolImageCarrier::default();
        for m in context {
            head.push_str(&self.encode(m));
        }
        head
    }

    fn encode(&mut self, message: &Message) -> String {
        let encoded = encode_in_turn(&mut self.carrier, message, self.fixed.echo);
        if !std::mem::replace(&mut self.any, true) {
            return encoded;
        }
        let mut piece = String::with_capacity(encoded.len() + 1);
        piece.push(',');
        piece.push_str(&encoded);
        piece
    }

    fn close_len(&self) -> usize {
        self.fixed.template.tail().len() + 1
    }

    fn close(&self, body: &mut String) -> Reopen {
        let keep = body.len();
        body.push(']');
        body.push_str(self.fixed.template.tail());
        Reopen { keep, restore: "" }
    }

    fn close_with(&self, body: &mut String, last: &Message) -> Reopen {
        let keep = body.len();
        let mut writer = self.clone();
        let piece = writer.encode(last);
        body.reserve_exact(piece.len() + writer.close_len());
        body.push_str(&piece);
        writer.close(body);
        Reopen { keep, restore: "" }
    }
}
