//! The OpenAI Chat Completions wire shapes the simulated server sends: one
//! `chat.completion` object, or a sequence of `chat.completion.chunk` SSE events ending
//! with an optional usage chunk and `data: [DONE]`.

use serde_json::{json, Value};

use super::reply::Reply;

/// Fields shared by every object of one response.
#[derive(Debug, Clone)]
pub struct Envelope {
    /// `chatcmpl-…` id.
    pub id: String,
    /// Unix seconds.
    pub created: u64,
    /// Model name, echoed from the request.
    pub model: String,
}

/// Token counts the simulated model reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    /// Grows with the request size (characters / 4), so compression can be demonstrated.
    pub prompt_tokens: u64,
    /// Characters of the reply / 4.
    pub completion_tokens: u64,
    /// Prompt tokens an earlier request already sent ([`super::cache::PromptCache`]).
    pub cached_tokens: u64,
}

impl Usage {
    /// Usage for a request body of `request_chars` characters answered by `reply`.
    pub fn estimate(request_chars: usize, reply: &Reply) -> Self {
        let reply_chars = match reply {
            Reply::Text(t) => t.chars().count(),
            Reply::ToolCalls(calls) => calls
                .iter()
                .map(|c| c.name.len() + c.arguments.chars().count())
                .sum(),
        };
        Self {
            prompt_tokens: (request_chars as u64).div_ceil(4).max(1),
            completion_tokens: (reply_chars as u64).div_ceil(4).max(1),
            cached_tokens: 0,
        }
    }

    fn to_json(self) -> Value {
        json!({
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": 0}
        })
    }
}

/// A non-streaming `chat.completion` object.
pub fn completion(envelope: &Envelope, reply: &Reply, usage: Usage) -> Value {
    let message = match reply {
        Reply::Text(text) => json!({"role": "assistant", "content": text, "refusal": null}),
        Reply::ToolCalls(calls) => json!({
            "role": "assistant",
            "content": null,
            "refusal": null,
            "tool_calls": calls.iter().map(|c| json!({
                "id": c.id, "type": "function",
                "function": {"name": c.name, "arguments": c.arguments}
            })).collect::<Vec<_>>()
        }),
    };
    json!({
        "id": envelope.id,
        "object": "chat.completion",
        "created": envelope.created,
        "model": envelope.model,
        "system_fingerprint": "fp_simulated",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": reply.finish_reason()}],
        "usage": usage.to_json()
    })
}

/// The SSE `data:` payloads of a streamed reply, in order, `[DONE]` last. Text is split
/// into several deltas; each tool call is announced (index, id, name) and its arguments
/// follow in several fragments.
pub fn stream_events(
    envelope: &Envelope,
    reply: &Reply,
    usage: Usage,
    include_usage: bool,
) -> Vec<String> {
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut c = json!({
            "id": envelope.id,
            "object": "chat.completion.chunk",
            "created": envelope.created,
            "model": envelope.model,
            "system_fingerprint": "fp_simulated",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        });
        if include_usage {
            // As OpenAI does: every chunk carries `usage: null` until the last one.
            c["usage"] = Value::Null;
        }
        c.to_string()
    };
    let mut events = Vec::new();
    match reply {
        Reply::Text(text) => {
            events.push(chunk(
                json!({"role": "assistant", "content": "", "refusal": null}),
                None,
            ));
            for piece in split_words(text, 3) {
                events.push(chunk(json!({"content": piece}), None));
            }
        }
        Reply::ToolCalls(calls) => {
            events.push(chunk(
                json!({"role": "assistant", "content": null, "refusal": null}),
                None,
            ));
            for (index, call) in calls.iter().enumerate() {
                events.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                        "function": {"name": call.name, "arguments": ""}}]}),
                    None,
                ));
                for piece in split_chars(&call.arguments, 3) {
                    events.push(chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        None,
                    ));
                }
            }
        }
    }
    events.push(chunk(json!({}), Some(reply.finish_reason())));
    if include_usage {
        events.push(
            json!({
                "id": envelope.id,
                "object": "chat.completion.chunk",
                "created": envelope.created,
                "model": envelope.model,
                "system_fingerprint": "fp_simulated",
                "choices": [],
                "usage": usage.to_json()
            })
            .to_string(),
        );
    }
    events.push("[DONE]".to_owned());
    events
}

/// Groups of `per_chunk` words, keeping the whitespace so the pieces concatenate back.
fn split_words(text: &str, per_chunk: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut current = String::new();
    let mut count = 0;
    for word in text.split_inclusive(char::is_whitespace) {
        current.push_str(word);
        count += 1;
        if count == per_chunk {
            pieces.push(std::mem::take(&mut current));
            count = 0;
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// About `parts` pieces of `text`, split on character boundaries.
fn split_chars(text: &str, parts: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let size = chars.len().div_ceil(parts.max(1)).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::super::reply::PlannedCall;
    use super::*;

    fn envelope() -> Envelope {
        Envelope {
            id: "chatcmpl-sim-1".into(),
            created: 1,
            model: "m".into(),
        }
    }

    #[test]
    fn llm_2_stream_splits_text_and_arguments_and_ends_with_usage_and_done() {
        let text = Reply::Text("one two three four five six seven".into());
        let usage = Usage::estimate(400, &text);
        assert_eq!(usage.prompt_tokens, 100);
        let events = stream_events(&envelope(), &text, usage, true);
        assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
        let parsed: Vec<Value> = events[..events.len() - 1]
            .iter()
            .filter_map(|e| serde_json::from_str(e).ok())
            .collect();
        assert_eq!(parsed.len(), events.len() - 1);
        let deltas: String = parsed
            .iter()
            .filter_map(|c| {
                c.pointer("/choices/0/delta/content")
                    .and_then(Value::as_str)
            })
            .collect();
        assert_eq!(deltas, "one two three four five six seven");
        assert!(
            parsed
                .iter()
                .filter(|c| c.pointer("/choices/0/delta/content").is_some())
                .count()
                >= 3
        );
        assert_eq!(
            parsed
                .last()
                .and_then(|c| c.pointer("/usage/total_tokens"))
                .and_then(Value::as_u64),
            Some(100 + 9)
        );

        let calls = Reply::ToolCalls(vec![
            PlannedCall {
                id: "a".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Beijing"}"#.into(),
            },
            PlannedCall {
                id: "b".into(),
                name: "get_weather".into(),
                arguments: r#"{"city":"Shenzhen"}"#.into(),
            },
        ]);
        let events = stream_events(&envelope(), &calls, Usage::estimate(10, &calls), false);
        let parsed: Vec<Value> = events
            .iter()
            .filter_map(|e| serde_json::from_str(e).ok())
            .collect();
        let args_of = |i: u64| -> String {
            parsed
                .iter()
                .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
                .filter(|t| t.get("index").and_then(Value::as_u64) == Some(i))
                .filter_map(|t| t.pointer("/function/arguments").and_then(Value::as_str))
                .collect()
        };
        assert_eq!(args_of(0), r#"{"city":"Beijing"}"#);
        assert_eq!(args_of(1), r#"{"city":"Shenzhen"}"#);
        assert!(parsed.iter().all(|c| c.get("usage").is_none()));
        assert_eq!(
            parsed
                .last()
                .and_then(|c| c.pointer("/choices/0/finish_reason"))
                .and_then(Value::as_str),
            Some("tool_calls")
        );
    }
}
