//! LLM-5: each provider's documented response shapes (tests/fixtures/providers) parse, the
//! stream to exactly its whole-body twin, and all providers to the same normalised result.

use arkagent::llm::{openai, StreamDelta};
use arkagent::{CancellationToken, ChatClient, ChatResponse, Message};
use serde_json::{json, Value};

use crate::llm_fake::*;

const PROVIDERS: [&str; 6] = ["openai", "deepseek", "qwen", "zhipu", "moonshot", "ollama"];

fn fixture(provider: &str, file: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/providers/{provider}/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn parse_both(provider: &str) -> (ChatResponse, ChatResponse) {
    let whole = openai::parse_response(&fixture(provider, "nonstream.json")).unwrap_or_else(|e| panic!("{provider} nonstream: {e}"));
    let streamed = openai::parse_stream(&fixture(provider, "stream.sse")).unwrap_or_else(|e| panic!("{provider} stream: {e}"));
    (whole, streamed)
}

/// What every provider must agree on: text, tool names with parsed arguments, finish
/// reason, token counts. (Ids, reasoning and cache details are provider-specific.)
fn normalise(r: &ChatResponse) -> Value {
    let calls: Vec<Value> = r
        .message
        .tool_calls()
        .iter()
        .map(|c| json!({"name": c.name, "arguments": serde_json::from_str::<Value>(&c.arguments).unwrap(), "has_id": !c.id.is_empty()}))
        .collect();
    let u = r.usage.as_ref().unwrap();
    json!({
        "text": r.message.text(),
        "tool_calls": calls,
        "finish_reason": r.finish_reason,
        "tokens": [u.prompt_tokens, u.completion_tokens, u.total_tokens],
    })
}

#[test]
fn llm_5_each_provider_stream_parses_to_its_nonstream_body() {
    for provider in PROVIDERS {
        let (whole, streamed) = parse_both(provider);
        assert_eq!(streamed, whole, "{provider}");
    }
}

#[test]
fn llm_5_all_providers_normalise_to_the_same_result() {
    let expected = json!({
        "text": "好的，我来查询北京和上海的天气 🌤️",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "北京"}, "has_id": true},
            {"name": "get_weather", "arguments": {"city": "上海"}, "has_id": true},
        ],
        "finish_reason": "tool_calls",
        "tokens": [120, 48, 168],
    });
    for provider in PROVIDERS {
        let (whole, _) = parse_both(provider);
        assert_eq!(normalise(&whole), expected, "{provider}");
    }
}

#[test]
fn llm_5_provider_specific_cache_and_reasoning_fields() {
    // (provider, cached tokens, reasoning tokens, reasoning text starts with)
    type Row = (&'static str, Option<u64>, Option<u64>, Option<&'static str>);
    let table: [Row; 6] = [
        ("openai", Some(64), Some(0), None),
        ("deepseek", Some(64), Some(21), Some("用户想知道")),
        ("qwen", Some(64), None, None),
        ("zhipu", Some(64), None, Some("用户问两个城市")),
        ("moonshot", Some(64), None, None),
        ("ollama", None, None, Some("The user wants")),
    ];
    for (provider, cached, reasoning_tokens, reasoning) in table {
        let (whole, _) = parse_both(provider);
        let u = whole.usage.as_ref().unwrap();
        assert_eq!((u.cached_tokens, u.reasoning_tokens), (cached, reasoning_tokens), "{provider}");
        let Message::Assistant { reasoning: text, content, .. } = &whole.message else { panic!("{provider}: not assistant") };
        assert_eq!(text.is_some(), reasoning.is_some(), "{provider}");
        if let (Some(text), Some(prefix)) = (text, reasoning) {
            assert!(text.starts_with(prefix), "{provider}: {text}");
        }
        // Reasoning never leaks into the answer.
        assert!(!content.as_deref().unwrap_or_default().contains("get_weather"), "{provider}");
    }
}

#[test]
fn llm_5_fixtures_name_their_source_format() {
    for provider in PROVIDERS {
        let whole: Value = serde_json::from_slice(&fixture(provider, "nonstream.json")).unwrap();
        assert!(whole["_fixture"]["source"].as_str().is_some_and(|s| s.starts_with("https://")), "{provider}");
        let stream = String::from_utf8(fixture(provider, "stream.sse")).unwrap();
        assert!(stream.starts_with(": fixture: ") && stream.contains("\n: source: https://"), "{provider}");
    }
}

#[tokio::test]
async fn llm_5_fixture_streams_through_the_client_in_small_chunks() {
    for provider in PROVIDERS {
        let body = fixture(provider, "stream.sse");
        let (whole, _) = parse_both(provider);
        for size in [1, 13] {
            let client = ChatClient::new(FakeProvider::new(vec![Step::chunked(&body, size)]), config());
            let deltas = std::sync::Mutex::new(Vec::new());
            let sink = |d: StreamDelta| deltas.lock().unwrap().push(d);
            let request = client.build_http_request(&arkagent::ChatRequest {
                system_prompt: None,
                context_messages: &[],
                messages: &[],
                tools: &[],
                tool_choice: None,
            });
            let r = client.send_streaming(request, &CancellationToken::new(), &sink).await.unwrap();
            assert_eq!(r, whole, "{provider} / {size}");
            let deltas = deltas.into_inner().unwrap();
            let text: String = deltas.iter().filter_map(|d| if let StreamDelta::Text(t) = d { Some(t.as_str()) } else { None }).collect();
            assert_eq!(Some(text.as_str()), whole.message.text(), "{provider}");
            let started: Vec<(u32, &str)> = deltas
                .iter()
                .filter_map(|d| if let StreamDelta::ToolCallStarted { index, id, .. } = d { Some((*index, id.as_str())) } else { None })
                .collect();
            let ids: Vec<(u32, &str)> = whole.message.tool_calls().iter().enumerate().map(|(i, c)| (i as u32, c.id.as_str())).collect();
            assert_eq!(started, ids, "{provider}");
        }
    }
}

/// WIRE-1: Anthropic Messages' documented shapes (tests/fixtures/providers/anthropic,
/// with thinking and parallel tool use), whole and streamed in small chunks through a
/// client with `wire_format: "anthropic"`, normalise to what every other provider gives.
#[tokio::test]
async fn wire_1_anthropic_fixtures_normalise_to_the_same_result_through_the_client() {
    let mut config = config();
    config.wire_format = arkagent::llm::WireFormat::ANTHROPIC;
    let expected = json!({
        "text": "好的，我来查询北京和上海的天气 🌤️",
        "tool_calls": [
            {"name": "get_weather", "arguments": {"city": "北京"}, "has_id": true},
            {"name": "get_weather", "arguments": {"city": "上海"}, "has_id": true},
        ],
        "finish_reason": "tool_calls",
        "tokens": [120, 48, 168],
    });
    let request = arkagent::ChatRequest { system_prompt: None, context_messages: &[], messages: &[], tools: &[], tool_choice: None };
    for (file, size) in [("nonstream.json", 1 << 20), ("stream.sse", 1), ("stream.sse", 13)] {
        let body = fixture("anthropic", file);
        let chunks = body.chunks(size).map(<[u8]>::to_vec).collect();
        let client = ChatClient::new(FakeProvider::new(vec![Step::Cut(chunks)]), config.clone());
        let deltas = std::sync::Mutex::new(Vec::new());
        let sink = |d: StreamDelta| deltas.lock().unwrap().push(d);
        let r = client.send_streaming(client.build_http_request(&request), &CancellationToken::new(), &sink).await.unwrap();
        assert_eq!(normalise(&r), expected, "{file} / {size}");
        let u = r.usage.as_ref().unwrap();
        assert_eq!((u.cached_tokens, u.cache_write_tokens), (Some(64), Some(36)), "{file}");
        // THINK-1: the thinking block as received, its signature (streamed as a
        // signature_delta) included.
        let Message::Assistant { reasoning: None, thinking, .. } = &r.message else { panic!() };
        assert_eq!(thinking.as_slice(), [arkagent::history::ThinkingBlock::Thinking {
            thinking: "用户想知道两个城市的天气，我应该并行调用两次 get_weather。".into(),
            signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()
        }], "{file} / {size}");
        let deltas = deltas.into_inner().unwrap();
        assert!(matches!(deltas.first(), Some(StreamDelta::Reasoning(_))), "{file}");
    }
    let whole: Value = serde_json::from_slice(&fixture("anthropic", "nonstream.json")).unwrap();
    assert!(whole["_fixture"]["source"].as_str().is_some_and(|s| s.starts_with("https://")));
    let stream = String::from_utf8(fixture("anthropic", "stream.sse")).unwrap();
    assert!(stream.starts_with(": fixture: ") && stream.contains("\n: source: https://"));
}
