//! OpenAI-compatible Chat Completions: request bodies and response parsing (LLM-2).
//! DeepSeek, Qwen (DashScope compatible mode), Moonshot, Zhipu GLM and Ollama speak the
//! same shape with small extensions handled here (`reasoning_content`, cache-hit fields).

use serde_json::{Map, Value};

pub use super::classify::{classify_error_object, classify_http_error, classify_status, parse_retry_after, retry_after_ms};
use super::client::{ChatRequest, ChatResponse};
pub use super::stream::parse_stream;
use super::{LlmError, ModelConfig};
use crate::history::{Message, ModelUsage, ToolCall};

/// Builds the JSON body of a chat completions request from scratch (typed wire structs,
/// [`wire::encode_body`](super::wire::encode_body)).
pub fn build_request_body(config: &ModelConfig, request: &ChatRequest<'_>) -> String {
    super::wire::encode_body(config, request)
}

/// Parses a non-streaming response body.
pub fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
    if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
        // Some providers answer HTTP 200 with an error object.
        return Err(classify_error_object(200, err));
    }
    let choices = match value.get("choices") {
        Some(Value::Array(choices)) => choices,
        // DashScope-native style `{"code", "message"}` without choices is an error too.
        None if value.get("code").is_some_and(|c| !c.is_null()) => return Err(classify_error_object(200, &value)),
        _ => return Err(LlmError::MalformedResponse("no choices".into())),
    };
    let choice = choices.first().ok_or_else(|| LlmError::MalformedResponse("no choices".into()))?;
    let message = choice
        .get("message")
        .and_then(Value::as_object)
        .ok_or_else(|| LlmError::MalformedResponse("choice has no message".into()))?;
    let content = message.get("content").and_then(Value::as_str).map(str::to_owned);
    // `reasoning_content` (DeepSeek, Qwen, GLM, Kimi) wins over `reasoning` (Ollama, vLLM).
    let reasoning = match message.get("reasoning_content") {
        Some(Value::String(r)) => Some(r),
        _ => message.get("reasoning").and_then(|r| match r {
            Value::String(r) => Some(r),
            _ => None,
        }),
    }
    .filter(|r| !r.is_empty())
    .cloned();
    let mut tool_calls = Vec::new();
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for call in calls {
            tool_calls.push(parse_tool_call(call)?);
        }
    }
    let usage = value.get("usage").filter(|u| u.is_object()).map(parse_usage);
    Ok(ChatResponse {
        message: finish_message(content, tool_calls, reasoning),
        usage,
        finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned),
    })
}

/// The assistant message of a completion; shared with the stream parser so both paths
/// build identical messages. Empty text beside tool calls is dropped.
pub(crate) fn finish_message(content: Option<String>, tool_calls: Vec<ToolCall>, reasoning: Option<String>) -> Message {
    Message::Assistant { content: content.filter(|c| !c.is_empty() || tool_calls.is_empty()), tool_calls, reasoning }
}

/// A JSON error without the offending input (which could echo anything, a key included).
pub(crate) fn json_error(what: &str, e: &serde_json::Error) -> LlmError {
    LlmError::MalformedResponse(format!("{what} is not valid JSON ({:?} error at line {} column {})", e.classify(), e.line(), e.column()))
}

fn parse_tool_call(call: &Value) -> Result<ToolCall, LlmError> {
    let function = call
        .get("function")
        .ok_or_else(|| LlmError::MalformedResponse("tool call without function".into()))?;
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| LlmError::MalformedResponse("tool call without name".into()))?;
    // Arguments are a JSON text per the spec (kept verbatim, even when it is not valid
    // JSON: the runtime answers that with a tool error); some servers send an object.
    let arguments = match function.get("arguments") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "{}".to_owned(),
        Some(other) => other.to_string(),
    };
    // A missing id is filled in by the runtime from its id generator.
    let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(ToolCall { id, name: name.to_owned(), arguments })
}

/// Parses a `usage` object, including cached and reasoning token details. Cached tokens:
/// `prompt_tokens_details.cached_tokens` (OpenAI, Qwen, GLM, DeepSeek), DeepSeek's
/// `prompt_cache_hit_tokens`, or a top-level `cached_tokens` (Moonshot). A missing
/// `total_tokens` is prompt + completion, saturating at `u64::MAX` (the numbers come from
/// the provider and are not trusted to be small).
pub fn parse_usage(usage: &Value) -> ModelUsage {
    let n = |v: Option<&Value>| v.and_then(Value::as_u64);
    let prompt = n(usage.get("prompt_tokens")).unwrap_or(0);
    let completion = n(usage.get("completion_tokens")).unwrap_or(0);
    let total = n(usage.get("total_tokens")).unwrap_or(prompt.saturating_add(completion));
    let cached = n(usage.pointer("/prompt_tokens_details/cached_tokens"))
        .or_else(|| n(usage.get("prompt_cache_hit_tokens")))
        .or_else(|| n(usage.get("cached_tokens")));
    let reasoning = n(usage.pointer("/completion_tokens_details/reasoning_tokens"));
    ModelUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: total,
        cached_tokens: cached,
        reasoning_tokens: reasoning,
        raw: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llm_2_parses_tool_calls_usage_and_reasoning() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":null,"reasoning_content":"think",
            "tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},
            "finish_reason":"tool_calls"}],
            "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,
            "prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":2}}}"#;
        let r = parse_response(body).unwrap();
        assert_eq!(r.message.tool_calls()[0].arguments, r#"{"x":1}"#);
        let u = r.usage.unwrap();
        assert_eq!((u.prompt_tokens, u.cached_tokens, u.reasoning_tokens), (10, Some(4), Some(2)));
        assert!(matches!(r.message, Message::Assistant { reasoning: Some(ref t), content: None, .. } if t == "think"));
    }

    #[test]
    fn llm_3_classifies_errors_without_echoing_bodies() {
        let body = br#"{"error":{"message":"Incorrect API key provided: sk-secret","code":"invalid_api_key"}}"#;
        let e = classify_http_error(401, body, None);
        assert_eq!(e.code(), "llm_auth");
        assert!(!e.to_string().contains("sk-secret"));
        let e = classify_http_error(400, br#"{"error":{"code":"context_length_exceeded","message":"x"}}"#, None);
        assert_eq!(e, LlmError::ContextOverflow);
        assert_eq!(classify_http_error(429, b"", Some("2")), LlmError::RateLimited { retry_after_ms: Some(2000) });
        assert_eq!(parse_response(br#"{"choices":[]}"#).unwrap_err().code(), "llm_malformed_response");
        assert_eq!(parse_response(br#"{"error":{"code":"500","message":"boom"}}"#).unwrap_err().code(), "llm_server");
    }
}
