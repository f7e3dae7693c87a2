//! WIRE-1: a provider protocol behind one seam. [`WireProtocol`] is everything that
//! differs between protocols — the URL and the auth headers, the request body (a
//! [`RequestEncoder`] whose [`BodyWriter`] feeds the session's append-only encoding cache,
//! PERF-2 and PERF-7), the whole and the streamed answer, and the error classification —
//! and nothing else does: the client, the session, compression, calibration, the store
//! and sub-agents call the trait and never name a protocol.
//!
//! The implementations, side by side, each in its own folder: `openai/` (OpenAI-compatible
//! Chat Completions) and `anthropic/` (Anthropic Messages). What they share, named after
//! neither, is `llm::common` (lenient JSON readers, the answer builder, error
//! classification) and `llm::stream` (SSE framing and chunking). A third protocol is a new
//! folder here and its one entry in [`REGISTRY`] (its name is the one its
//! [`WireProtocol::name`] gives); `secrets` reads every registered protocol's credential
//! headers.

mod anthropic;
pub mod openai;
mod secrets;

use super::config::ModelConfig;
use super::delta::StreamEvents;
use super::request::{ChatRequest, ChatResponse, ToolChoice};
use super::stream::StreamParser;
use super::transport::HttpResponse;
use super::thinking::ReasoningReplay;
use crate::error::{ArkAgentError, ErrorCode, LlmError};
use crate::history::{ImageTokenRule, Message};
use crate::tools::ToolDefinition;

pub use anthropic::ANTHROPIC_DEFAULT_MAX_TOKENS;
pub use super::wire_format::WireFormat;
pub use secrets::is_secret_header;

/// Every protocol the library speaks, each named by its [`WireProtocol::name`] (the
/// `wire_format` value that selects it). Registering a protocol is its one entry here.
static REGISTRY: &[&dyn WireProtocol] = &[&openai::OpenAiChat, &anthropic::AnthropicMessages];

/// The protocol named by `format`, if there is one.
pub fn protocol(format: &WireFormat) -> Option<&'static dyn WireProtocol> {
    REGISTRY.iter().find(|p| p.name() == format.as_str()).copied()
}

/// The protocol of `config`; an unknown name (refused by [`check_wire_format`], so only
/// in a config nobody validated) falls back to the default, OpenAI-compatible one.
pub fn protocol_of(config: &ModelConfig) -> &'static dyn WireProtocol {
    protocol(&config.wire_format).unwrap_or(&openai::OpenAiChat)
}

/// The names of the registered protocols, in registry order.
pub fn wire_format_names() -> impl Iterator<Item = &'static str> {
    REGISTRY.iter().map(|p| p.name())
}

/// The [`WireFormat`] named `name`, if a protocol of that name is registered.
///
/// ```
/// assert_eq!(arkagent::llm::wire_format("anthropic"), Some(arkagent::llm::WireFormat::ANTHROPIC));
/// assert_eq!(arkagent::llm::wire_format("Anthropic"), None);
/// ```
pub fn wire_format(name: &str) -> Option<WireFormat> {
    REGISTRY.iter().find(|p| p.name() == name).map(|p| WireFormat::of_protocol(p.name()))
}

/// WIRE-1: refuses a config whose `wire_format` names no registered protocol. Errors:
/// `invalid_config` (the message lists the known names).
pub fn check_wire_format(config: &ModelConfig) -> Result<(), ArkAgentError> {
    match protocol(&config.wire_format) {
        Some(_) => Ok(()),
        None => {
            let known: Vec<&str> = wire_format_names().collect();
            let message = format!("unknown wire_format {:?} (known: {})", config.wire_format.as_str(), known.join(", "));
            Err(ArkAgentError::config(ErrorCode::InvalidConfig, message))
        }
    }
}

/// THINK-4: refuses, before any request, a thinking setting `config`'s provider has no
/// switch for on its wire format (`thinking_unsupported`), an option the thinking model
/// refuses (`thinking_conflict`: a forced `tool_choice` or a `temperature` with Anthropic
/// thinking or an OpenAI reasoning model, Qwen thinking without streaming), and an
/// `extra_body` field the library writes itself (`extra_body_conflict`).
pub fn check_thinking(config: &ModelConfig, tool_choice: Option<&ToolChoice>) -> Result<(), ArkAgentError> {
    let protocol = protocol_of(config);
    let fields = protocol.thinking_fields(config).map_err(|(code, m)| ArkAgentError::config(code, m))?;
    if let Some(message) = protocol.thinking_conflict(config, tool_choice) {
        return Err(ArkAgentError::config(ErrorCode::ThinkingConflict, message));
    }
    if let Some(key) = config.extra_body.keys().find(|k| protocol.owned_fields().contains(&k.as_str()) || fields.contains_key(*k)) {
        let message = format!("extra_body sets {key:?}, which the library writes itself on the {} wire format: use its setting", protocol.name());
        return Err(ArkAgentError::config(ErrorCode::ExtraBodyConflict, message));
    }
    Ok(())
}

/// THINK-2: the reasoning `config`'s requests send back, `auto` resolved by its wire format.
pub fn reasoning_replay_of(config: &ModelConfig) -> ReasoningReplay {
    protocol_of(config).replay(config)
}

/// The image token rule of `config` (IMG-3, IMG-8): its own (`image_tokens`), else its
/// model name's ([`ImageTokenRule::for_model`]), else its wire format's default.
pub fn image_rule_of(config: &ModelConfig) -> ImageTokenRule {
    let high_res = config.extra_body.get("vl_high_resolution_images") == Some(&serde_json::Value::Bool(true));
    config
        .image_tokens
        .or_else(|| ImageTokenRule::for_model(&config.model, high_res))
        .unwrap_or_else(|| protocol_of(config).default_image_rule())
}

/// A [`StreamParser`] reading `format`'s events (the OpenAI-compatible ones for an unknown name).
pub fn stream_parser(config: &ModelConfig) -> StreamParser {
    StreamParser::with_events(protocol_of(config).stream_events())
}

/// What a session's requests carry besides the conversation, fixed for its life.
#[derive(Debug, Clone, Copy)]
pub struct RequestParts<'a> {
    /// The system prompt ("" for none).
    pub system_prompt: &'a str,
    /// The tools offered.
    pub tools: &'a [ToolDefinition],
    /// The tool choice, sent only with tools.
    pub tool_choice: Option<&'a ToolChoice>,
}

/// One provider protocol (WIRE-1). Implementations are stateless values in [`REGISTRY`].
pub trait WireProtocol: Send + Sync {
    /// The `wire_format` value that selects it.
    fn name(&self) -> &'static str;
    /// The URL every request goes to.
    fn url(&self, config: &ModelConfig) -> String;
    /// Pushes the authentication and protocol headers; the client puts `Content-Type`
    /// before them and `Accept` and the config's extra headers after them.
    fn push_headers(&self, config: &ModelConfig, headers: &mut Vec<(String, String)>);
    /// LLM-4: the lowercase names of the headers that carry this protocol's credentials
    /// (the ones `push_headers` writes the key into, and any it accepts in `extra_headers`):
    /// their values are redacted from every text, log and `Debug`, in every config.
    fn secret_headers(&self) -> &'static [&'static str];
    /// The encoder of a session's requests: the fixed parts encoded once.
    fn request_encoder(&self, config: &ModelConfig, parts: RequestParts<'_>) -> Box<dyn RequestEncoder>;
    /// The body of one request, encoded from scratch (a summarizer call; the reference
    /// the session's cached bodies are checked against).
    fn encode_request(&self, config: &ModelConfig, request: &ChatRequest<'_>) -> String;
    /// `request` encoded as a one-off: no later request extends it (a summarizer's chunk of
    /// transcript), so it asks the provider to cache none of its messages (COST-2: an
    /// Anthropic cache write costs 1.25× and would never be read). Default: as
    /// [`encode_request`](Self::encode_request).
    fn encode_one_off(&self, config: &ModelConfig, request: &ChatRequest<'_>) -> String {
        self.encode_request(config, request)
    }
    /// Parses a whole (non-streamed) answer.
    fn parse_response(&self, body: &[u8]) -> Result<ChatResponse, LlmError>;
    /// A fresh reader of a streamed answer's events.
    fn stream_events(&self) -> Box<dyn StreamEvents>;
    /// Classifies a non-2xx answer from its status, its body (at most the first 64 KiB)
    /// and the server's requested wait.
    fn classify_error(&self, status: u16, body: &[u8], retry_after_ms: Option<u64>) -> LlmError;
    /// The image token rule of a config that sets none (IMG-3).
    fn default_image_rule(&self) -> ImageTokenRule;
    /// THINK-4: the body fields that carry the config's thinking setting on this wire
    /// (written after the fixed fields, before `extra_body`), or the code and reason it
    /// cannot be sent.
    fn thinking_fields(&self, config: &ModelConfig) -> Result<serde_json::Map<String, serde_json::Value>, (ErrorCode, String)>;
    /// THINK-4: an option of `config` (or `tool_choice`) its thinking model refuses.
    fn thinking_conflict(&self, config: &ModelConfig, tool_choice: Option<&ToolChoice>) -> Option<String>;
    /// The top-level body fields the library writes on this wire (`extra_body` may not).
    fn owned_fields(&self) -> &'static [&'static str];
    /// THINK-2: the replay policy of `config`, `auto` resolved by this wire's rule.
    fn replay(&self, config: &ModelConfig) -> ReasoningReplay;
    /// The server's requested wait, from the response headers.
    fn retry_after_ms(&self, response: &HttpResponse) -> Option<u64> {
        super::common::retry_after_ms(response)
    }
}

/// A session's request encoding (PERF-7): the fixed parts (model, tools, system prompt)
/// encoded once, and a [`BodyWriter`] per state generation. The reference its bodies
/// must equal byte for byte is [`WireProtocol::encode_request`] of the same request.
pub trait RequestEncoder: Send + Sync {
    /// A writer for a new generation of the encoding cache.
    fn writer(&self) -> Box<dyn BodyWriter>;
    /// Heap bytes of the fixed encodings (PERF-2's report).
    fn heap_bytes(&self) -> usize;
}

/// Writes a request body incrementally (PERF-7): the head once per generation, each
/// history message once, and a closing that the next append takes off again.
///
/// The body the cache holds between requests is `start(context)` followed by
/// `encode(m)` of each message; [`close`](Self::close) turns it into a whole request in
/// place and says how to [`Reopen`] it. Closing and reopening cost O(closing bytes),
/// never O(history).
pub trait BodyWriter: Send {
    /// Everything before the first history message, for these context messages.
    fn start(&mut self, context: &[Message]) -> String;
    /// The bytes that append `message` (separators included; empty when the protocol
    /// sends nothing for it).
    fn encode(&mut self, message: &Message) -> String;
    /// An upper bound of the bytes [`close`](Self::close) adds.
    fn close_len(&self) -> usize;
    /// Completes `body` into a request.
    fn close(&self, body: &mut String) -> Reopen;
    /// Completes `body` into a request whose last message is `last`, a message the
    /// history does not keep (COST-3: a summarizer's instruction after the conversation's
    /// own bytes): `last` is encoded as [`encode`](Self::encode) would append it, then the
    /// body is closed as by [`close`](Self::close) (with Anthropic the moving cache
    /// breakpoint on `last`'s block). The writer does not change, and the [`Reopen`] cuts
    /// `last` off again: the open body comes back byte for byte.
    fn close_with(&self, body: &mut String, last: &Message) -> Reopen;
}

/// How a closed body becomes the open one again: cut it to `keep` bytes, then push
/// `restore` (what the closing changed before `keep`, e.g. a moved cache breakpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reopen {
    /// Bytes of the closed body kept.
    pub keep: usize,
    /// Bytes pushed after them.
    pub restore: &'static str,
}

impl Reopen {
    /// Reopens `body` in place (same allocation).
    pub fn apply(&self, body: &mut String) {
        body.truncate(self.keep);
        body.push_str(self.restore);
    }

    /// The open body copied out of a closed one somebody else still holds.
    pub fn copy(&self, closed: &str) -> String {
        let kept = closed.get(..self.keep).unwrap_or_default();
        let mut body = String::with_capacity(kept.len() + self.restore.len());
        body.push_str(kept);
        body.push_str(self.restore);
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::ToolCall;

    #[test]
    fn wire_1_every_registered_protocol_sits_at_its_name() {
        let names: Vec<&str> = wire_format_names().collect();
        assert_eq!(names, ["openai", "anthropic"]);
        let mut seen = std::collections::HashSet::new();
        for protocol in REGISTRY {
            assert!(seen.insert(protocol.name()), "two protocols named {}", protocol.name());
            let format = wire_format(protocol.name());
            assert_eq!(format.as_ref().map(WireFormat::as_str), Some(protocol.name()));
            assert_eq!(format.as_ref().and_then(super::protocol).map(|p| p.name()), Some(protocol.name()));
        }
        assert_eq!(wire_format("Anthropic"), None);
        assert_eq!(WireFormat::OPENAI.as_str(), "openai");
        assert_eq!(WireFormat::ANTHROPIC.as_str(), "anthropic");
    }

    /// COST-3: in every format, closing a body behind one extra message equals the
    /// from-scratch encoding of the history plus that message, after any prefix of a
    /// history (empty, ending with the user, the model, tool results; starting with the
    /// model; with and without a system prompt and memory context), and the `Reopen` gives
    /// the open body back byte for byte, so the writer goes on as if nothing happened.
    #[test]
    fn cost_3_close_with_equals_scratch_with_the_extra_message_in_every_format() {
        let call = |id: &str| ToolCall { id: id.into(), name: "t".into(), arguments: r#"{"q":1}"#.into() };
        let history = [
            Message::assistant("carried over"),
            Message::user("hi \"there\" 中"),
            Message::Assistant { content: Some("let me".into()), tool_calls: vec![call("a"), call("b")], reasoning: None, thinking: Default::default() },
            Message::tool_result("a", "r1", false),
            Message::tool_result("b", "r2", true),
            Message::assistant("done"),
            Message::user("next"),
        ];
        let extra = Message::user("[instruction] summarize, no tools");
        let tools = [ToolDefinition::new("t", "d", serde_json::json!({"type": "object"}))];
        for protocol in REGISTRY {
            let name = protocol.name();
            let mut config = ModelConfig::new("http://h/v1", "k", "m");
            config.wire_format = wire_format(name).unwrap_or_default();
            for (system, context) in [("", vec![]), ("sys", vec![Message::system("snapshot")])] {
                let parts = RequestParts { system_prompt: system, tools: &tools, tool_choice: Some(&ToolChoice::Auto) };
                let mut writer = protocol.request_encoder(&config, parts).writer();
                let mut body = writer.start(&context);
                for n in 0..=history.len() {
                    if n > 0 {
                        body.push_str(&writer.encode(&history[n - 1]));
                    }
                    let open = body.clone();
                    let reopen = writer.close_with(&mut body, &extra);
                    let mut messages = history[..n].to_vec();
                    messages.push(extra.clone());
                    let request = ChatRequest { system_prompt: Some(system), context_messages: &context, messages: &messages, tools: &tools, tool_choice: Some(&ToolChoice::Auto) };
                    assert_eq!(body, protocol.encode_request(&config, &request), "{name} after {n} messages");
                    assert_eq!(reopen.copy(&body), open, "{name} after {n}");
                    reopen.apply(&mut body);
                    assert_eq!(body, open, "{name} after {n}");
                }
            }
        }
    }
}
