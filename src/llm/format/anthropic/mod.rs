//! WIRE-1: Anthropic Messages (`wire_format: "anthropic"`), served by Anthropic and by
//! the Anthropic-compatible endpoints of DeepSeek, Moonshot, Zhipu GLM and DashScope:
//! `POST {base_url}/messages` with `x-api-key` and `anthropic-version: 2023-06-01`.
//! Bodies and automatic cache breakpoints in `encode`, whole answers, usage and errors in
//! `response`, streamed answers in `stream`.

mod encode;
mod response;
mod stream;
mod thinking;
mod tools;

use super::{RequestEncoder, RequestParts, WireProtocol};
use crate::error::{ErrorCode, LlmError};
use crate::llm::request::ToolChoice;
use crate::llm::thinking::ReasoningReplay;
use crate::llm::config::ModelConfig;
use crate::llm::delta::StreamEvents;
use crate::llm::request::{ChatRequest, ChatResponse};

pub use encode::ANTHROPIC_DEFAULT_MAX_TOKENS;

/// The API version header every request carries.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The Anthropic Messages protocol.
pub(super) struct AnthropicMessages;

impl WireProtocol for AnthropicMessages {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn url(&self, config: &ModelConfig) -> String {
        format!("{}/messages", config.base_url.trim_end_matches('/'))
    }

    fn push_headers(&self, config: &ModelConfig, headers: &mut Vec<(String, String)>) {
        headers.push(("x-api-key".to_owned(), config.api_key.clone()));
        headers.push(("anthropic-version".to_owned(), ANTHROPIC_VERSION.to_owned()));
    }

    fn secret_headers(&self) -> &'static [&'static str] {
        &["x-api-key"]
    }

    fn request_encoder(&self, config: &ModelConfig, parts: RequestParts<'_>) -> Box<dyn RequestEncoder> {
        Box::new(encode::Encoder::new(config, parts))
    }

    fn encode_request(&self, config: &ModelConfig, request: &ChatRequest<'_>) -> String {
        encode_whole(config, request, true)
    }

    fn encode_one_off(&self, config: &ModelConfig, request: &ChatRequest<'_>) -> String {
        encode_whole(config, request, false)
    }

    fn parse_response(&self, body: &[u8]) -> Result<ChatResponse, LlmError> {
        response::parse_response(body)
    }

    fn stream_events(&self) -> Box<dyn StreamEvents> {
        Box::<stream::Events>::default()
    }

    fn classify_error(&self, status: u16, body: &[u8], retry_after_ms: Option<u64>) -> LlmError {
        response::classify_http(status, body, retry_after_ms)
    }

    fn default_image_rule(&self) -> crate::history::ImageTokenRule {
        crate::history::ImageTokenRule::Anthropic
    }

    fn thinking_fields(&self, config: &ModelConfig) -> Result<serde_json::Map<String, serde_json::Value>, (ErrorCode, String)> {
        thinking::thinking_fields(config, ANTHROPIC_DEFAULT_MAX_TOKENS)
    }

    fn thinking_conflict(&self, config: &ModelConfig, tool_choice: Option<&ToolChoice>) -> Option<String> {
        thinking::thinking_conflict(config, tool_choice)
    }

    fn owned_fields(&self) -> &'static [&'static str] {
        thinking::OWNED_FIELDS
    }

    fn replay(&self, config: &ModelConfig) -> ReasoningReplay {
        thinking::replay(config)
    }
}

#[cfg(test)]
mod tests;

/// `request` encoded from scratch; `mark_latest`: its latest block is a cache breakpoint
/// (every request but a one-off).
fn encode_whole(config: &ModelConfig, request: &ChatRequest<'_>, mark_latest: bool) -> String {
    let parts = RequestParts { system_prompt: request.system_prompt.unwrap_or_default(), tools: request.tools, tool_choice: request.tool_choice };
    encode::encode_request(config, parts, request.context_messages, request.messages, mark_latest)
}
