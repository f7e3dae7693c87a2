//! LLM-2 streaming through the client, and bad input (REL-3 style) — each case a test.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::llm::{openai, BodyStream, StreamDelta, StreamParser};
use arkagent::{CancellationToken, ChatClient, ChatResponse, LlmError, Message, ToolCall, TransportError};
use proptest::prelude::*;
use serde_json::json;

use crate::llm_fake::*;

/// A recording delta sink.
#[derive(Default, Clone)]
struct Deltas(Arc<Mutex<Vec<StreamDelta>>>);

impl Deltas {
    fn sink(&self) -> impl Fn(StreamDelta) + Send + Sync + 'static {
        let list = self.0.clone();
        move |d| list.lock().unwrap().push(d)
    }
    fn all(&self) -> Vec<StreamDelta> {
        self.0.lock().unwrap().clone()
    }
    fn text(&self) -> String {
        self.all().into_iter().filter_map(|d| if let StreamDelta::Text(t) = d { Some(t) } else { None }).collect()
    }
}

fn weather_stream() -> String {
    let mut s = String::new();
    s += &delta_event(r#"{"role":"assistant","content":""}"#);
    s += &delta_event(r#"{"content":"查一下"}"#);
    s += &delta_event(r#"{"content":"天气 🌧️"}"#);
    s += &delta_event(r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":""}}]}"#);
    s += &delta_event(r#"{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}"#);
    s += &delta_event(r#"{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"北京\"}"}}]}"#);
    s += &delta_event(r#"{"tool_calls":[{"index":1,"function":{"arguments":"\"上海\"}"}}]}"#);
    s += &finish_events("tool_calls");
    s
}

fn weather_response() -> ChatResponse {
    let body = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "查一下天气 🌧️",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"北京\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"上海\"}"}}]}}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18, "prompt_tokens_details": {"cached_tokens": 3}}
    });
    openai::parse_response(body.to_string().as_bytes()).unwrap()
}

#[tokio::test]
async fn llm_2_streamed_answer_equals_the_non_streaming_parse_for_every_chunk_size() {
    each_wire(|| async {
        let body = weather_stream();
        for size in [1, 2, 3, 5, 7, 64, body.len()] {
            let model = FakeProvider::new(vec![Step::chunked(body.as_bytes(), size)]);
            let client = ChatClient::new(model.clone(), config());
            let deltas = Deltas::default();
            let request = client.build_http_request(&empty_request());
            assert!(request.stream);
            let response = client.send_streaming(request, &CancellationToken::new(), &deltas.sink()).await.unwrap();
            assert_eq!(response, weather_response(), "chunk size {size}");
            assert_eq!(deltas.text(), "查一下天气 🌧️");
            let all = deltas.all();
            assert!(all.contains(&StreamDelta::ToolCallStarted { index: 1, id: "call_2".into(), name: "get_weather".into() }));
            let args: String = all
                .iter()
                .filter_map(|d| match d {
                    StreamDelta::ToolCallArguments { index: 0, fragment } => Some(fragment.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(args, r#"{"city":"北京"}"#);
            let u = response.usage.unwrap();
            assert_eq!((u.prompt_tokens, u.cached_tokens), (11, Some(3)));
        }
    })
    .await;
}

fn empty_request() -> arkagent::ChatRequest<'static> {
    arkagent::ChatRequest { system_prompt: Some("sys"), context_messages: &[], messages: &[], tools: &[], tool_choice: None }
}

#[tokio::test]
async fn llm_2_request_asks_for_a_stream_with_usage() {
    each_wire(|| async {
        let client = ChatClient::new(FakeProvider::new(vec![]), config());
        let request = client.build_http_request(&empty_request());
        let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["stream"], true);
        // Chat Completions reports usage in a stream only when asked; Messages always does.
        let usage_option = match wire() {
            Wire::OpenAi => json!({"include_usage": true}),
            Wire::Anthropic => serde_json::Value::Null,
        };
        assert_eq!(body["stream_options"], usage_option);
        assert!(request.headers.iter().any(|(k, v)| k == "Accept" && v == "text/event-stream"));
    })
    .await;
}

#[tokio::test]
async fn llm_2_deltas_arrive_before_the_stream_ends() {
    each_wire(|| async {
        let (tx, rx) = BodyStream::channel();
        let model = FakeProvider::new(vec![Step::Stream(rx)]);
        let client = ChatClient::new(model, config());
        let deltas = Deltas::default();
        let sink = deltas.sink();
        let cancel = CancellationToken::new();
        let call = client.send_streaming(client.build_http_request(&empty_request()), &cancel, &sink);
        tokio::pin!(call);
        tx.send(delta_event(r#"{"content":"流"}"#).into_bytes());
        // The call is still pending (no [DONE]) but the first delta is already out.
        let waited = tokio::time::timeout(Duration::from_millis(100), &mut call).await;
        assert!(waited.is_err(), "call finished before [DONE]");
        assert_eq!(deltas.text(), "流");
        tx.send(delta_event(r#"{"content":"式"}"#).into_bytes());
        tx.send(finish_events("stop").into_bytes());
        let response = call.await.unwrap();
        assert_eq!(response.message.text(), Some("流式"));
        assert_eq!(deltas.all(), [StreamDelta::Text("流".into()), StreamDelta::Text("式".into())]);
    })
    .await;
}

#[tokio::test]
async fn llm_2_reasoning_deltas_stay_apart_from_the_answer() {
    each_wire(|| async {
        let mut body = String::from(": keep-alive\n\n");
        body += &delta_event(r#"{"role":"assistant","content":null,"reasoning_content":"先想"}"#);
        body += &delta_event(r#"{"content":null,"reasoning_content":"一想"}"#);
        body += &delta_event(r#"{"content":"答案是 4","reasoning_content":null}"#);
        body += &finish_events("stop");
        let client = ChatClient::new(FakeProvider::new(vec![Step::chunked(body.as_bytes(), 4)]), config());
        let deltas = Deltas::default();
        let r = client.send_streaming(client.build_http_request(&empty_request()), &CancellationToken::new(), &deltas.sink()).await.unwrap();
        assert_eq!(r.message, as_received(Message::Assistant { content: Some("答案是 4".into()), tool_calls: vec![], reasoning: Some("先想一想".into()), thinking: Default::default() }));
        assert_eq!(
            deltas.all(),
            [StreamDelta::Reasoning("先想".into()), StreamDelta::Reasoning("一想".into()), StreamDelta::Text("答案是 4".into())]
        );
    })
    .await;
}

#[tokio::test]
async fn llm_2_send_streaming_accepts_a_json_body_and_emits_it_whole() {
    each_wire(|| async {
        let body = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": "好的", "reasoning_content": "想",
            "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "f", "arguments": "{\"a\":1}"}}]}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}});
        // Whole, and as a chunked body (a server that ignored `stream: true`).
        for step in [Step::ok(body.to_string()), Step::chunked(body.to_string().as_bytes(), 5)] {
            let client = ChatClient::new(FakeProvider::new(vec![step]), config());
            let deltas = Deltas::default();
            let r = client.send_streaming(client.build_http_request(&empty_request()), &CancellationToken::new(), &deltas.sink()).await.unwrap();
            let mut expected = openai::parse_response(body.to_string().as_bytes()).unwrap();
            expected.message = as_received(expected.message);
            assert_eq!(r, expected);
            assert_eq!(
                deltas.all(),
                [
                    StreamDelta::Reasoning("想".into()),
                    StreamDelta::Text("好的".into()),
                    StreamDelta::ToolCallStarted { index: 0, id: "c9".into(), name: "f".into() },
                    StreamDelta::ToolCallArguments { index: 0, fragment: "{\"a\":1}".into() },
                ]
            );
        }
    })
    .await;
}

#[tokio::test]
async fn llm_2_plain_send_also_reads_an_sse_body() {
    each_wire(|| async {
        let client = ChatClient::new(FakeProvider::new(vec![Step::chunked(weather_stream().as_bytes(), 9)]), config());
        let r = client.send(client.build_http_request(&empty_request()), &CancellationToken::new()).await.unwrap();
        assert_eq!(r, weather_response());
    })
    .await;
}

// ------------------------------------------------------------------ bad input

#[tokio::test]
async fn llm_2_truncated_stream_without_done_is_a_classified_error() {
    each_wire(|| async {
        let mut body = delta_event(r#"{"content":"半"}"#);
        body += &delta_event(r#"{"content":"截"}"#);
        // The connection ends cleanly but early: no finish, no [DONE]. Deltas went out, so
        // the error is returned without a retry.
        let model = FakeProvider::new(vec![Step::chunked(body.as_bytes(), 10)]);
        let client = ChatClient::new(model.clone(), config());
        let deltas = Deltas::default();
        let e = client.send_streaming(client.build_http_request(&empty_request()), &CancellationToken::new(), &deltas.sink()).await.unwrap_err();
        assert_eq!(e.code(), "llm_transport");
        assert!(e.to_string().contains(end_marker()), "{e}");
        assert_eq!(model.request_count(), 1);
        // Cut in the middle of a JSON line: the fragment is not JSON.
        let sent = wire_body(body.as_bytes());
        let cut = &sent[..sent.len() - 8];
        assert_eq!(parse_stream_wire(cut).unwrap_err().code(), "llm_malformed_response");
        // Ended by a host-reported connection failure.
        let step = Step::Chunks { chunks: vec![body.clone().into_bytes()], gap: Duration::ZERO, then_fail: Some(TransportError::network("reset")) };
        let client = ChatClient::new(FakeProvider::new(vec![step]), config());
        let e = client.send_streaming(client.build_http_request(&empty_request()), &CancellationToken::new(), &Deltas::default().sink()).await.unwrap_err();
        assert_eq!(e, LlmError::Transport("reset".into()));
    })
    .await;
}

#[tokio::test]
async fn llm_2_invalid_json_in_one_chunk_is_malformed_response() {
    each_wire(|| async {
        let mut body = delta_event(r#"{"content":"ok"}"#);
        body += "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}\n\n"; // missing ]}
        body += &finish_events("stop");
        let client = ChatClient::new(FakeProvider::new(vec![Step::chunked(body.as_bytes(), 16)]), config());
        let e = client.send(client.build_http_request(&empty_request()), &CancellationToken::new()).await.unwrap_err();
        assert_eq!(e.code(), "llm_malformed_response");
        assert!(!e.is_retryable());
        assert_eq!(openai::parse_stream(b"data: [1, 2\n\ndata: [DONE]\n\n").unwrap_err().code(), "llm_malformed_response");
        assert_eq!(openai::parse_stream(b"data: \"text\"\n\ndata: [DONE]\n\n").unwrap_err().code(), "llm_malformed_response");
    })
    .await;
}

#[tokio::test]
async fn llm_2_tool_arguments_that_are_not_json_are_kept_verbatim() {
    each_wire(|| async {
        let mut body = delta_event(r#"{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{city: 北京"}}]}"#);
        body += &delta_event(r#"{"tool_calls":[{"index":0,"function":{"arguments":" (unquoted"}}]}"#);
        body += &finish_events("tool_calls");
        let r = parse_stream_wire(&wire_body(body.as_bytes())).unwrap();
        assert_eq!(r.message.tool_calls(), [ToolCall { id: "c1".into(), name: "f".into(), arguments: "{city: 北京 (unquoted".into() }]);
        let whole = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{city: 北京 (unquoted"}}]}, "finish_reason": "tool_calls"}]});
        let client = ChatClient::new(FakeProvider::new(vec![Step::ok(whole.to_string())]), no_retry());
        let parsed = client.send(client.build_http_request(&empty_request()), &CancellationToken::new()).await.unwrap();
        assert_eq!(parsed.message, r.message);
    })
    .await;
}

#[tokio::test]
async fn llm_3_http_200_with_an_error_object_is_classified() {
    each_wire(|| async {
        let bodies = [
            (json!({"error": {"message": "Rate limit reached", "type": "requests", "code": "rate_limit_exceeded"}}).to_string(), "llm_rate_limited"),
            (json!({"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}).to_string(), "llm_auth"),
            (json!({"error": {"code": "1261", "message": "Prompt 超长"}}).to_string(), "llm_context_overflow"),
            (json!({"code": "InvalidParameter", "message": "Required parameter(s) missing", "request_id": "r"}).to_string(), "llm_bad_request"),
            ("data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}\n\n".to_owned(), "llm_server"),
        ];
        for (body, code) in bodies {
            let client = ChatClient::new(FakeProvider::new(vec![Step::ok(body.clone())]), no_retry());
            let e = client.send(client.build_http_request(&empty_request()), &CancellationToken::new()).await.unwrap_err();
            assert_eq!(e.code(), code, "{body}");
        }
    })
    .await;
}

fn no_retry() -> arkagent::ModelConfig {
    let mut c = config();
    c.retry = arkagent::llm::RetryPolicy::none();
    c
}

#[tokio::test]
async fn llm_2_empty_choices_is_malformed_response() {
    each_wire(|| async {
        let whole = json!({"id": "x", "object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 1}}).to_string();
        let stream = "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n";
        for body in [whole.as_str(), stream, ""] {
            let client = ChatClient::new(FakeProvider::new(vec![Step::ok(body)]), no_retry());
            let e = client.send(client.build_http_request(&empty_request()), &CancellationToken::new()).await.unwrap_err();
            assert_eq!(e.code(), "llm_malformed_response", "{body:?}");
        }
    })
    .await;
}

// ------------------------------------------------------------------ proptest

/// A stream with the given content fragments and argument fragments, with `eol` line
/// endings, comments and a BOM.
fn build_stream(texts: &[String], args: &[String], eol: &str) -> String {
    let mut events = vec![": hello".to_owned()];
    let enc = |s: &str| serde_json::to_string(s).unwrap();
    events.push("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}".to_owned());
    for t in texts {
        events.push(format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":{}}}}}]}}", enc(t)));
    }
    events.push(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_東\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}".to_owned(),
    );
    for a in args {
        events.push(format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{}}}}}]}}}}]}}", enc(a)));
    }
    events.push("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}".to_owned());
    events.push("data: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6,\"total_tokens\":11}}".to_owned());
    events.push("data: [DONE]".to_owned());
    let mut out = String::from("\u{feff}");
    for e in events {
        out += &e;
        out += eol;
        out += eol;
    }
    out
}

fn parse_in_chunks(body: &[u8], cuts: &[usize]) -> (Result<ChatResponse, LlmError>, Vec<StreamDelta>) {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut parser = StreamParser::new();
    let mut deltas = Vec::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        if let Err(e) = parser.push(&body[start..cut], Some(&mut |d| deltas.push(d))) {
            return (Err(e), deltas);
        }
        start = cut;
    }
    (parser.finish(None), deltas)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn llm_2_any_chunking_of_a_valid_stream_gives_the_identical_response(
        texts in prop::collection::vec("[a-z 北京上海天气晴😀🌤️\"\\\\\n]{0,6}", 0..6),
        args in prop::collection::vec("[{}:,\"a-z 中文🚀]{0,5}", 0..5),
        eol in prop::sample::select(vec!["\n", "\r\n", "\r"]),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let body = build_stream(&texts, &args, eol);
        let whole = openai::parse_stream(body.as_bytes()).unwrap();
        let (chunked, deltas) = parse_in_chunks(body.as_bytes(), &cuts);
        prop_assert_eq!(&chunked.unwrap(), &whole);
        // Independent of the parser: the assembled parts are exactly what was sent.
        let text: String = texts.concat();
        prop_assert_eq!(whole.message.text(), if text.is_empty() { None } else { Some(text.as_str()) });
        prop_assert_eq!(&whole.message.tool_calls()[0].arguments, &args.concat());
        prop_assert_eq!(whole.usage.as_ref().map(|u| u.total_tokens), Some(11));
        let streamed: String = deltas.iter().filter_map(|d| if let StreamDelta::Text(t) = d { Some(t.as_str()) } else { None }).collect();
        prop_assert_eq!(streamed, text);
    }
}

#[tokio::test]
async fn llm_2_body_kind_is_sniffed_after_leading_whitespace_chunks() {
    each_wire(|| async {
        let json_body = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}).to_string();
        let sse_body = format!("{}{}", delta_event(r#"{"content":"hi"}"#), finish_events("stop"));
        for body in [json_body, sse_body] {
            let step = Step::Chunks { chunks: vec![b"\xEF\xBB\xBF".to_vec(), b"\r\n".to_vec(), body.into_bytes()], gap: Duration::ZERO, then_fail: None };
            let client = ChatClient::new(FakeProvider::new(vec![step]), no_retry());
            let r = client.send(client.build_http_request(&empty_request()), &CancellationToken::new()).await.unwrap();
            assert_eq!(r.message.text(), Some("hi"));
        }
    })
    .await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// REL-3 (fuzz-style): arbitrary bytes, and valid streams with bytes flipped, never
    /// panic the SSE or the response parser; they parse or give a classified error.
    #[test]
    fn llm_2_arbitrary_or_corrupted_bodies_never_panic(
        noise in prop::collection::vec(any::<u8>(), 0..512),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..8),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let _ = openai::parse_stream(&noise);
        let _ = openai::parse_response(&noise);
        let mut body = build_stream(&["北京".to_owned(), "😀".to_owned()], &["{\"a\":1}".to_owned()], "\r\n").into_bytes();
        for (at, byte) in flips {
            let len = body.len();
            body[at % len] = byte;
        }
        let (result, _) = parse_in_chunks(&body, &cuts);
        if let Err(e) = result {
            prop_assert!(["llm_malformed_response", "llm_transport", "llm_bad_request", "llm_auth", "llm_rate_limited", "llm_server", "llm_context_overflow"].contains(&e.code().as_str()));
        }
    }
}
