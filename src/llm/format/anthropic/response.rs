//! WIRE-1: Anthropic Messages answers — the whole `message` object, the usage mapping and
//! the error shapes — read in one pass with the lenient readers the OpenAI-compatible
//! parser uses (a field of an unexpected type reads as absent; every byte must still be
//! valid JSON). Shared with the stream reader so both build identical answers.

use std::borrow::Cow;

use serde::de::MapAccess;
use serde_json::Value;

use crate::error::LlmError;
use crate::history::{ModelUsage, OrderRecorder, ThinkingBlock, ThinkingBlocks, ToolCall};
use crate::llm::common::{classify_error_object, classify_status};
use crate::llm::request::ChatResponse;
use crate::llm::common::{finish_message, json_error, Args, Count, Fields, List, Obj, Skip, Text};

/// The `usage` object. `input_tokens` counts only the uncached part of the prompt.
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct UsageWire {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    /// `output_tokens_details.thinking_tokens`: the reasoning part of `output_tokens`.
    thinking_tokens: Option<u64>,
}

impl UsageWire {
    /// The counts of `later` that are present replace these (a stream's `message_delta`
    /// usage is cumulative and may repeat or omit the `message_start` fields).
    pub(super) fn merge(&mut self, later: UsageWire) {
        let pick = |now: &mut Option<u64>, later: Option<u64>| {
            if later.is_some() {
                *now = later;
            }
        };
        pick(&mut self.input_tokens, later.input_tokens);
        pick(&mut self.output_tokens, later.output_tokens);
        pick(&mut self.cache_creation_input_tokens, later.cache_creation_input_tokens);
        pick(&mut self.cache_read_input_tokens, later.cache_read_input_tokens);
        pick(&mut self.thinking_tokens, later.thinking_tokens);
    }

    /// Our usage: `prompt_tokens` is the whole prompt (input + cache read + cache
    /// creation, so the compression trigger and the calibration see its real size),
    /// `cached_tokens` the cache read, and the cache creation kept in
    /// `cache_write_tokens` (it is priced apart). Sums saturate.
    pub(super) fn into_usage(self) -> ModelUsage {
        let creation = self.cache_creation_input_tokens;
        let prompt = self
            .input_tokens
            .unwrap_or(0)
            .saturating_add(self.cache_read_input_tokens.unwrap_or(0))
            .saturating_add(creation.unwrap_or(0));
        let completion = self.output_tokens.unwrap_or(0);
        ModelUsage {
            prompt_tokens: prompt,
            completion_tokens: completion,
            total_tokens: prompt.saturating_add(completion),
            cached_tokens: self.cache_read_input_tokens,
            reasoning_tokens: self.thinking_tokens,
            cache_write_tokens: creation,
            ..ModelUsage::default()
        }
    }
}

impl<'de> Fields<'de> for UsageWire {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        let slot = match key {
            "input_tokens" => &mut self.input_tokens,
            "output_tokens" => &mut self.output_tokens,
            "cache_creation_input_tokens" => &mut self.cache_creation_input_tokens,
            "cache_read_input_tokens" => &mut self.cache_read_input_tokens,
            "output_tokens_details" => {
                if let Obj::Object(details) = map.next_value::<Obj<OutputDetails>>()? {
                    self.thinking_tokens = details.0;
                }
                return Ok(());
            }
            _ => return map.next_value::<Skip>().map(drop),
        };
        *slot = map.next_value::<Count>()?.0;
        Ok(())
    }
}

/// `usage.output_tokens_details`: only `thinking_tokens` is read (THINK-5).
#[derive(Default)]
struct OutputDetails(Option<u64>);

impl<'de> Fields<'de> for OutputDetails {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "thinking_tokens" => self.0 = map.next_value::<Count>()?.0,
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

/// A content block of an answer: `text`, `thinking`, `redacted_thinking`, `tool_use`
/// (others are skipped).
#[derive(Default)]
pub(super) struct BlockWire<'a> {
    pub(super) kind: Text<'a>,
    pub(super) text: Text<'a>,
    pub(super) thinking: Text<'a>,
    pub(super) signature: Text<'a>,
    pub(super) data: Text<'a>,
    pub(super) id: Text<'a>,
    pub(super) name: Text<'a>,
    pub(super) input: Option<Args<'a>>,
}

impl<'de: 'a, 'a> Fields<'de> for BlockWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "type" => self.kind = map.next_value()?,
            "text" => self.text = map.next_value()?,
            "thinking" => self.thinking = map.next_value()?,
            "signature" => self.signature = map.next_value()?,
            "data" => self.data = map.next_value()?,
            "id" => self.id = map.next_value()?,
            "name" => self.name = map.next_value()?,
            "input" => self.input = Some(map.next_value()?),
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

impl<'a> BlockWire<'a> {
    /// The block's type.
    pub(super) fn kind(&self) -> &str {
        self.kind.0.as_deref().unwrap_or_default()
    }

    /// A `thinking` or `redacted_thinking` block, its strings as received (THINK-1).
    pub(super) fn thinking_block(self) -> Option<ThinkingBlock> {
        let owned = |t: Text<'_>| t.0.map(Cow::into_owned).unwrap_or_default();
        match self.kind() {
            "thinking" => Some(ThinkingBlock::Thinking { thinking: owned(self.thinking), signature: owned(self.signature) }),
            "redacted_thinking" => Some(ThinkingBlock::RedactedThinking { data: owned(self.data) }),
            _ => None,
        }
    }

    /// A `tool_use` block's call; its arguments are `input` as compact JSON text.
    pub(super) fn tool_call(self) -> Result<ToolCall, LlmError> {
        let name = self.name.0.filter(|n| !n.is_empty()).ok_or_else(|| LlmError::MalformedResponse("tool use without name".into()))?;
        let arguments = self.input.and_then(Args::into_text).filter(|t| !t.trim().is_empty()).map_or_else(|| "{}".to_owned(), Cow::into_owned);
        // A missing id is filled in by the runtime from its id generator.
        let id = self.id.0.map(Cow::into_owned).unwrap_or_default();
        Ok(ToolCall { id, name: name.into_owned(), arguments })
    }
}

/// A whole answer: the `message` object, or an `error` object served with HTTP 200.
#[derive(Default)]
struct MessageWire<'a> {
    kind: Text<'a>,
    error: Option<Value>,
    content: Option<List<Obj<BlockWire<'a>>>>,
    stop_reason: Text<'a>,
    usage: Option<Obj<UsageWire>>,
}

impl<'de: 'a, 'a> Fields<'de> for MessageWire<'a> {
    fn field<A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<(), A::Error> {
        match key {
            "type" => self.kind = map.next_value()?,
            "error" => self.error = Some(map.next_value()?),
            "content" => self.content = Some(map.next_value()?),
            "stop_reason" => self.stop_reason = map.next_value()?,
            "usage" => self.usage = Some(map.next_value()?),
            _ => map.next_value::<Skip>().map(drop)?,
        }
        Ok(())
    }
}

/// The finish reason for a `stop_reason`, in the OpenAI-compatible words every protocol
/// reports (so a host reads one vocabulary whatever the wire format): `end_turn` and
/// `stop_sequence` are `stop`, `tool_use` is `tool_calls`, `max_tokens` is `length`,
/// `refusal` is `content_filter`; any other reason (`pause_turn`, …) is kept as sent.
pub(super) fn finish_reason(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        "refusal" => "content_filter",
        other => other,
    }
    .to_owned()
}

/// Parses a whole (non-streamed) Messages answer. Text blocks are joined, `thinking` and
/// `redacted_thinking` blocks are kept as received, in order (THINK-1: the message's
/// `thinking`, with their place among the other blocks when they were interleaved; its
/// `reasoning` stays `None`), `tool_use` blocks are the tool calls, the
/// `stop_reason` the finish reason ([`finish_reason`]). Errors: `llm_malformed_response`,
/// or the classified error of an `{"type":"error","error":{…}}` body.
pub(super) fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let message: Obj<MessageWire<'_>> = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
    let Obj::Object(message) = message else { return Err(LlmError::MalformedResponse("no content".into())) };
    if let Some(error) = message.error.filter(|e| !e.is_null()) {
        return Err(classify_error_value(&error));
    }
    if message.kind.0.as_deref() == Some("error") {
        return Err(LlmError::BadRequest { status: 200, provider_code: None });
    }
    let Some(List::Items(blocks)) = message.content else { return Err(LlmError::MalformedResponse("no content".into())) };
    let mut text: Option<String> = None;
    let mut thinking = Vec::new();
    let mut tool_calls = Vec::new();
    let mut order = OrderRecorder::default();
    for block in blocks {
        let Obj::Object(block) = block else { continue };
        match block.kind() {
            "text" => {
                let piece = block.text.0.as_deref().unwrap_or_default();
                text.get_or_insert_with(String::new).push_str(piece);
                order.text(piece.len());
            }
            "thinking" | "redacted_thinking" => {
                if let Some(b) = block.thinking_block() {
                    thinking.push(b);
                    order.reasoning();
                }
            }
            "tool_use" => {
                tool_calls.push(block.tool_call()?);
                order.call();
            }
            _ => {} // server tools and future block types
        }
    }
    let usage = match message.usage {
        Some(Obj::Object(usage)) => Some(usage.into_usage()),
        _ => None,
    };
    Ok(ChatResponse {
        message: finish_message(text, tool_calls, None, ThinkingBlocks::with_order(thinking, order.finish())),
        usage,
        finish_reason: message.stop_reason.0.as_deref().map(finish_reason),
    })
}

/// The HTTP status Anthropic documents for each error type, so that an error inside a
/// 200 body or stream is classified like the same error answered with its status.
fn status_of(kind: &str) -> Option<u16> {
    Some(match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => return None,
    })
}

/// Classifies an error object (`{"type":"overloaded_error","message":…}`) found in a
/// 200 body or a stream's `error` event. Only its type and status survive (LLM-4).
pub(super) fn classify_error_value(error: &Value) -> LlmError {
    let status = error.get("type").and_then(Value::as_str).and_then(status_of);
    match status {
        Some(status) => classify_http(status, &serde_json::json!({ "error": error }).to_string().into_bytes(), None),
        None => classify_error_object(200, error),
    }
}

/// Classifies a non-2xx answer: the shared classification (which reads Anthropic's
/// `{"type":"error","error":{"type","message"}}` shape and 529), plus Anthropic's second
/// overflow message ("input length and `max_tokens` exceed context limit").
pub(super) fn classify_http(status: u16, body: &[u8], retry_after_ms: Option<u64>) -> LlmError {
    let text = String::from_utf8_lossy(body).to_lowercase();
    if text.contains("exceed context limit") {
        return LlmError::ContextOverflow;
    }
    classify_status(status, body, retry_after_ms)
}
