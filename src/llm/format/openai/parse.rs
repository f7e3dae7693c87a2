//! OpenAI-compatible Chat Completions: request bodies and response parsing (LLM-2).
//! DeepSeek, Qwen (DashScope compatible mode), Moonshot, Zhipu GLM and Ollama speak the
//! same shape with small extensions handled here (`reasoning_content`, cache-hit fields).
//!
//! Responses are read into typed wire structs (`response`) in one pass, borrowing every
//! string that has no escapes; no `serde_json::Value` tree is built for a completion.
//! The structs are exactly as lenient as reading the fields out of a `Value` was: a field
//! of an unexpected type reads as absent, a repeated key takes its last value, and every
//! byte of the body (fields we do not read included) must still be valid JSON, so a body
//! is accepted or rejected exactly as before. `Value` remains only on cold paths: error
//! objects, and tool arguments sent as a JSON object instead of a JSON text (kept in their
//! compact serialization, as before).

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::encode::encode_body;
use super::response::{CallWire, ChoiceWire, CompletionWire, UsageWire};
use crate::error::LlmError;
use crate::history::{ModelUsage, ThinkingBlocks, ToolCall};
use crate::llm::common::{classify_error_object, finish_message, json_error, Args, First, List, Obj};
use crate::llm::config::ModelConfig;
use crate::llm::request::{ChatRequest, ChatResponse};

/// Builds the JSON body of a chat completions request from scratch (typed wire structs,
/// [`encode_body`]).
pub fn build_request_body(config: &ModelConfig, request: &ChatRequest<'_>) -> String {
    encode_body(config, request)
}

/// Parses a non-streaming response body.
pub fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let completion: Obj<CompletionWire<'_>> = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
    // Not an object: no field can be read.
    let Obj::Object(completion) = completion else { return Err(LlmError::MalformedResponse("no choices".into())) };
    if let Some(err) = completion.error.filter(|e| !e.is_null()) {
        // Some providers answer HTTP 200 with an error object.
        return Err(classify_error_object(200, &err));
    }
    let choice = match completion.choices {
        Some(First::Items(first)) => first,
        // DashScope-native style `{"code", "message"}` without choices is an error too;
        // the whole object is classified (a cold path: the body is read again as a tree).
        None if completion.code_not_null => {
            let value: Value = serde_json::from_slice(body).map_err(|e| json_error("body", &e))?;
            return Err(classify_error_object(200, &value));
        }
        _ => return Err(LlmError::MalformedResponse("no choices".into())),
    };
    let choice = choice.ok_or_else(|| LlmError::MalformedResponse("no choices".into()))?;
    let Obj::Object(ChoiceWire { message: Some(Obj::Object(message)), finish_reason }) = choice else {
        return Err(LlmError::MalformedResponse("choice has no message".into()));
    };
    let content = message.content.0.map(Cow::into_owned);
    // `reasoning_content` (DeepSeek, Qwen, GLM, Kimi) wins over `reasoning` (Ollama, vLLM),
    // even when it is empty; an empty field is kept as received (THINK-1: the provider may
    // want `""` back).
    let reasoning = message.reasoning_content.0.or(message.reasoning.0).map(Cow::into_owned);
    let mut tool_calls = Vec::new();
    if let Some(List::Items(calls)) = message.tool_calls {
        tool_calls.reserve_exact(calls.len());
        for call in calls {
            tool_calls.push(tool_call(call)?);
        }
    }
    let usage = match completion.usage {
        Some(Obj::Object(usage)) => Some(usage.into_usage()),
        _ => None,
    };
    Ok(ChatResponse {
        message: finish_message(content, tool_calls, reasoning, ThinkingBlocks::new()),
        usage,
        finish_reason: finish_reason.0.map(Cow::into_owned),
    })
}

fn tool_call(call: Obj<CallWire<'_>>) -> Result<ToolCall, LlmError> {
    let Obj::Object(call) = call else { return Err(LlmError::MalformedResponse("tool call without function".into())) };
    let function = call.function.ok_or_else(|| LlmError::MalformedResponse("tool call without function".into()))?;
    let (name, arguments) = match function {
        Obj::Object(f) => (f.name.0, f.arguments),
        Obj::Other => (None, None),
    };
    let name = name.filter(|n| !n.is_empty()).ok_or_else(|| LlmError::MalformedResponse("tool call without name".into()))?;
    // Arguments are a JSON text per the spec (kept verbatim, even when it is not valid
    // JSON: the runtime answers that with a tool error); some servers send an object.
    let arguments = arguments.and_then(Args::into_text).map_or_else(|| "{}".to_owned(), Cow::into_owned);
    // A missing id is filled in by the runtime from its id generator.
    let id = call.id.0.map(Cow::into_owned).unwrap_or_default();
    Ok(ToolCall { id, name: name.into_owned(), arguments })
}

/// Parses a `usage` object, including cached and reasoning token details. Cached tokens:
/// `prompt_tokens_details.cached_tokens` (OpenAI, Qwen, GLM, DeepSeek), DeepSeek's
/// `prompt_cache_hit_tokens`, or a top-level `cached_tokens` (Moonshot). A missing
/// `total_tokens` is prompt + completion, saturating at `u64::MAX` (the numbers come from
/// the provider and are not trusted to be small). A value that is not an object gives
/// zero counts.
pub fn parse_usage(usage: &Value) -> ModelUsage {
    match Obj::<UsageWire>::deserialize(usage) {
        Ok(Obj::Object(usage)) => usage.into_usage(),
        _ => UsageWire::default().into_usage(),
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::llm::common::classify_http_error;
    use crate::history::Message;

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
        assert!(matches!(r.message, Message::Assistant { reasoning: Some(ref t), content: None, .. } if &**t == "think"));
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

    /// The parser as it was before the typed wire structs (reading a `serde_json::Value`
    /// tree): the reference the typed parser must agree with on every input.
    mod reference {
        use serde_json::Value;

        use super::super::{classify_error_object, finish_message, json_error};
        use crate::history::{ModelUsage, ThinkingBlocks, ToolCall};
        use crate::llm::{ChatResponse, LlmError};

        /// Parses a non-streaming response body.
        pub(super) fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
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
            .cloned();
            let mut tool_calls = Vec::new();
            if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
                for call in calls {
                    tool_calls.push(parse_tool_call(call)?);
                }
            }
            let usage = value.get("usage").filter(|u| u.is_object()).map(parse_usage);
            Ok(ChatResponse {
                message: finish_message(content, tool_calls, reasoning, ThinkingBlocks::new()),
                usage,
                finish_reason: choice.get("finish_reason").and_then(Value::as_str).map(str::to_owned),
            })
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
        fn parse_usage(usage: &Value) -> ModelUsage {
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
                ..ModelUsage::default()
            }
        }
    }

    /// Keys the parser reads, and one it does not.
    const KEYS: &[&str] = &[
        "choices", "message", "content", "reasoning_content", "reasoning", "tool_calls", "function", "name", "arguments", "id",
        "usage", "prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details",
        "cached_tokens", "reasoning_tokens", "prompt_cache_hit_tokens", "error", "code", "finish_reason", "other",
    ];

    /// JSON text with repeated keys allowed (a `Value` cannot hold them) and the odd
    /// escape, big number or `null` in every position.
    fn json_text() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_owned()),
            Just("true".to_owned()),
            Just("0".to_owned()),
            Just("7".to_owned()),
            Just("-3".to_owned()),
            Just("2.5".to_owned()),
            Just("18446744073709551615".to_owned()),
            Just("18446744073709551616".to_owned()),
            Just("1e400".to_owned()),
            Just(r#""""#.to_owned()),
            Just(r#""stop""#.to_owned()),
            Just(r#""f""#.to_owned()),
            Just(r#""{\"x\":1}""#.to_owned()),
            Just(r#""\u00e9\n北京""#.to_owned()),
            Just(r#""\ud800""#.to_owned()),
            Just(r#""\ud83d\ude00""#.to_owned()),
        ];
        leaf.prop_recursive(5, 48, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec((prop::sample::select(KEYS), any::<bool>(), inner), 0..5).prop_map(|fields| {
                    let fields: Vec<String> = fields
                        .into_iter()
                        .map(|(k, escaped, v)| {
                            // An escaped key must read as the same key.
                            let key = if escaped { k.replacen('o', "\\u006f", 1) } else { k.to_owned() };
                            format!("\"{key}\": {v}")
                        })
                        .collect();
                    format!("{{{}}}", fields.join(","))
                }),
            ]
        })
    }

    fn fixtures() -> Vec<Vec<u8>> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/providers");
        ["openai", "deepseek", "qwen", "zhipu", "moonshot", "ollama"]
            .iter()
            .map(|p| std::fs::read(format!("{dir}/{p}/nonstream.json")).unwrap())
            .collect()
    }

    #[test]
    fn llm_2_typed_parser_agrees_with_the_value_parser_on_quirks() {
        let cases: &[&[u8]] = &[
            br#"{"choices":[{"message":{"content":null,"tool_calls":[{"function":{"name":"f","arguments":{"b":1, "a":"\u00e9"}}}]}}]}"#,
            br#"{"choices":[{"message":{"content":"x","tool_calls":[{"id":5,"function":{"name":"f","arguments":null}}]}}]}"#,
            br#"{"choices":[{"message":{"content":"x","tool_calls":[{"function":null}]}}]}"#,
            br#"{"choices":[{"message":{"content":"x","tool_calls":[7]}}]}"#,
            br#"{"choices":[{"message":{"reasoning_content":"","reasoning":"r"}}]}"#,
            br#"{"choices":[{"message":{"reasoning_content":3,"reasoning":"r"}}]}"#,
            br#"{"choices":[{"message":{"content":"a"},"finish_reason":"stop"}],"choices":[]}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens":1.0,"completion_tokens":-1,"prompt_tokens_details":[],"cached_tokens":3}}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"usage":{"prompt_tokens_details":{"cached_tokens":2},"prompt_cache_hit_tokens":5}}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"usage":[1]}"#,
            br#"{"choices":[{"message":{"content":"a"}}, 5],"x":"\ud800"}"#,
            br#"{"choices":[{"message":{"content":"a"}}],"x":1e400}"#,
            b"{\"choices\":[{\"message\":{\"content\":\"a\"}}],\"x\":\"\xFF\"}",
            br#"{"code":"InvalidApiKey","message":"bad"}"#,
            br#"{"code":null,"message":"bad"}"#,
            br#"{"choices":{},"code":"x"}"#,
            br#"{"error":null,"choices":[{"message":{"content":"a"}}]}"#,
            br#"{"error":"model not found"}"#,
            br#"[1,2]"#,
            br#""text""#,
            br#"{"choices":[{"message":"x"}]}"#,
            br#"{"choices":[{"message":{"content":"a"}}]} x"#,
            br#"{"choices":[{"message":{"content":"a"}}"#,
        ];
        for body in cases {
            assert_eq!(parse_response(body), reference::parse_response(body), "{}", String::from_utf8_lossy(body));
        }
        for body in fixtures() {
            assert_eq!(parse_response(&body), reference::parse_response(&body));
            assert!(parse_response(&body).is_ok());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: if cfg!(miri) { 8 } else { 2048 }, ..ProptestConfig::default() })]

        /// Any JSON (repeated keys, every type in every field) and any corruption of the
        /// providers' fixtures: the typed parser returns exactly what the `Value` parser
        /// returned — the same completion or the same error, message included.
        #[test]
        fn llm_2_typed_parser_agrees_with_the_value_parser(
            text in json_text(),
            fixture in 0usize..6,
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<u8>()), 0..4),
        ) {
            prop_assert_eq!(parse_response(text.as_bytes()), reference::parse_response(text.as_bytes()), "{}", text);
            let wrapped = format!(r#"{{"choices":[{{"message":{text}}}],"usage":{text}}}"#);
            prop_assert_eq!(parse_response(wrapped.as_bytes()), reference::parse_response(wrapped.as_bytes()));
            let mut body = fixtures().swap_remove(fixture);
            for (at, op, byte) in edits {
                let i = at.index(body.len());
                match op {
                    0 => body[i] = byte,
                    1 => { body.remove(i); }
                    _ => body.insert(i, byte),
                }
            }
            prop_assert_eq!(parse_response(&body), reference::parse_response(&body));
        }
    }
}
