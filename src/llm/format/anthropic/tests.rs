//! WIRE-1: Anthropic Messages — body shape, automatic breakpoints, the incremental writer
//! against the from-scratch reference, answers (whole and streamed) and errors.
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{json, Value};

use super::AnthropicMessages;
use crate::error::LlmError;
use crate::history::{Message, ThinkingBlock, ToolCall};
use crate::llm::format::{RequestParts, WireFormat, WireProtocol};
use crate::llm::{ChatRequest, ModelConfig, StreamDelta, StreamParser, ToolChoice};
use crate::tools::ToolDefinition;

const KEY: &str = "sk-ant-api03-SECRET-abcdef";

fn config() -> ModelConfig {
    let mut c = ModelConfig::new("https://api.anthropic.com/v1/", KEY, "claude-x");
    c.wire_format = WireFormat::ANTHROPIC;
    c
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

fn request<'a>(system: &'a str, context: &'a [Message], messages: &'a [Message], tools: &'a [ToolDefinition], choice: Option<&'a ToolChoice>) -> ChatRequest<'a> {
    ChatRequest { system_prompt: Some(system), context_messages: context, messages, tools, tool_choice: choice }
}

#[test]
fn wire_1_anthropic_body_has_the_documented_shape_with_three_breakpoints() {
    let mut c = config();
    c.temperature = Some(0.5);
    c.stream = true;
    let tools = [ToolDefinition::new("f", "d", json!({"type": "object"})), ToolDefinition::new("g", "e", json!({"type": "object"}))];
    let messages = [
        Message::user("hi"),
        Message::Assistant {
            content: Some("let me".into()),
            tool_calls: vec![call("c1", "f", r#"{"x":1}"#), call("c2", "g", "not json")],
            reasoning: Some("secret thoughts".into()),
            thinking: Default::default(),
        },
        Message::tool_result("c1", "r1", false),
        Message::tool_result("c2", "bad", true),
        Message::user("and?"),
    ];
    let memory = [Message::system("snapshot")];
    let choice = ToolChoice::Function("f".into());
    let body = AnthropicMessages.encode_request(&c, &request("sys", &memory, &messages, &tools, Some(&choice)));
    let v: Value = serde_json::from_str(&body).unwrap();
    let mark = json!({"type": "ephemeral"});
    assert_eq!(
        v,
        json!({
            "model": "claude-x", "max_tokens": 4096,
            "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"}},
                      {"name": "g", "description": "e", "input_schema": {"type": "object"}, "cache_control": mark}],
            "tool_choice": {"type": "tool", "name": "f"},
            "temperature": 0.5, "stream": true,
            "system": [{"type": "text", "text": "sys", "cache_control": mark}, {"type": "text", "text": "snapshot"}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "let me"},
                    {"type": "tool_use", "id": "c1", "name": "f", "input": {"x": 1}},
                    {"type": "tool_use", "id": "c2", "name": "g", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "r1"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "bad", "is_error": true},
                    {"type": "text", "text": "and?", "cache_control": mark}]}
            ]
        })
    );
    assert!(!body.contains("secret thoughts"), "reasoning is never sent back");
    assert!(!body.contains(KEY));
    assert_eq!(body.matches("cache_control").count(), 3);
}

#[test]
fn wire_1_anthropic_tool_choice_max_tokens_and_endpoint() {
    let tools = [ToolDefinition::new("f", "d", json!({"type": "object"}))];
    let mut c = config();
    c.max_tokens = Some(1000);
    for (choice, wire) in [
        (ToolChoice::Auto, json!({"type": "auto"})),
        (ToolChoice::Required, json!({"type": "any"})),
        (ToolChoice::None, json!({"type": "none"})),
        (ToolChoice::Function("f".into()), json!({"type": "tool", "name": "f"})),
    ] {
        let body = AnthropicMessages.encode_request(&c, &request("", &[], &[], &tools, Some(&choice)));
        let v: Value = serde_json::from_str(&body).unwrap();
        assert_eq!((&v["tool_choice"], &v["max_tokens"]), (&wire, &json!(1000)));
        assert!(v.get("system").is_none(), "no system prompt: no system field");
    }
    // No tools: neither tools nor tool_choice; no stream field unless streaming.
    let body = AnthropicMessages.encode_request(&config(), &request("", &[], &[], &[], Some(&ToolChoice::Auto)));
    assert_eq!(body, r#"{"model":"claude-x","max_tokens":4096,"messages":[]}"#);
    assert_eq!(AnthropicMessages.url(&config()), "https://api.anthropic.com/v1/messages");
    let mut headers = Vec::new();
    AnthropicMessages.push_headers(&config(), &mut headers);
    assert_eq!(headers, [("x-api-key".to_owned(), KEY.to_owned()), ("anthropic-version".to_owned(), "2023-06-01".to_owned())]);
}

#[test]
fn wire_1_a_history_starting_with_the_model_gets_a_user_turn_first() {
    let messages = [Message::assistant("earlier answer"), Message::user(""), Message::user("next")];
    let body = AnthropicMessages.encode_request(&config(), &request("", &[], &messages, &[], None));
    let v: Value = serde_json::from_str(&body).unwrap();
    let turns = v["messages"].as_array().unwrap();
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[0]["role"], "user");
    assert!(turns[0]["content"][0]["text"].as_str().unwrap().contains("continues"));
    assert_eq!(turns[1], json!({"role": "assistant", "content": [{"type": "text", "text": "earlier answer"}]}));
    // The empty user text is not sent (Anthropic refuses empty text blocks).
    assert_eq!(turns[2]["content"], json!([{"type": "text", "text": "next", "cache_control": {"type": "ephemeral"}}]));
}

// ------------------------------------------------------------ incremental writer

fn message() -> impl Strategy<Value = Message> {
    let text = "[a-z \"\\\\\n中😀]{0,6}";
    prop_oneof![
        3 => text.prop_map(Message::user),
        1 => text.prop_map(Message::system),
        3 => (prop::option::of(text), prop::collection::vec(("[a-c]{1,2}", prop_oneof![Just("{\"q\":1}"), Just("[1]"), Just("oops"), Just("{}")]), 0..3))
            .prop_map(|(content, calls)| Message::Assistant {
                content,
                tool_calls: calls.into_iter().map(|(id, args)| call(&id, "t", args)).collect(),
                reasoning: Some("r".into()),
                thinking: Default::default(),
            }),
        3 => ("[a-c]{1,2}", text, any::<bool>()).prop_map(|(id, content, error)| Message::tool_result(id, content, error)),
    ]
}

/// Checks a closed body as a strict server would: valid JSON, user first, roles
/// alternate, no empty text block, at most 4 breakpoints, one on the last block.
fn check_strictly(body: &str) {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    let turns = v["messages"].as_array().unwrap();
    if let Some(first) = turns.first() {
        assert_eq!(first["role"], "user", "{body}");
        let last = turns.last().unwrap()["content"].as_array().unwrap().last().unwrap();
        assert_eq!(last["cache_control"], json!({"type": "ephemeral"}), "{body}");
    }
    for pair in turns.windows(2) {
        assert_ne!(pair[0]["role"], pair[1]["role"], "{body}");
    }
    for block in turns.iter().flat_map(|t| t["content"].as_array().unwrap()) {
        assert_ne!(block["text"], "", "{body}");
        if block["type"] == "tool_use" {
            assert!(block["input"].is_object());
        }
    }
    assert!(body.matches("cache_control").count() <= 4);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// PERF-7 for Anthropic: after every append the closed body equals the from-scratch
    /// encoding; reopening restores the open body exactly (in place and by copy); the
    /// next request starts with the previous one's bytes up to its moving breakpoint.
    #[test]
    fn wire_1_anthropic_writer_equals_scratch_and_reopens_in_o_marker(
        history in prop::collection::vec(message(), 0..12),
        system in prop_oneof![Just(String::new()), Just("sys \"p\"".to_owned())],
        memory in any::<bool>(),
        with_tools in any::<bool>(),
    ) {
        let tools = [ToolDefinition::new("t", "d", json!({"type": "object"}))];
        let tools: &[ToolDefinition] = if with_tools { &tools } else { &[] };
        let context: Vec<Message> = if memory { vec![Message::system("snapshot 中")] } else { vec![] };
        let parts = RequestParts { system_prompt: &system, tools, tool_choice: Some(&ToolChoice::Auto) };
        let encoder = AnthropicMessages.request_encoder(&config(), parts);
        let mut writer = encoder.writer();
        let mut body = writer.start(&context);
        let mut previous: Option<String> = None;
        for n in 0..=history.len() {
            if n > 0 {
                body.push_str(&writer.encode(&history[n - 1]));
            }
            let open = body.clone();
            let mut closed = body.clone();
            let reopen = writer.close(&mut closed);
            prop_assert!(closed.len() - open.len() <= writer.close_len() + 1);
            let scratch = AnthropicMessages.encode_request(&config(), &request(&system, &context, &history[..n], tools, Some(&ToolChoice::Auto)));
            prop_assert_eq!(&closed, &scratch);
            check_strictly(&closed);
            prop_assert_eq!(reopen.copy(&closed), open.clone());
            reopen.apply(&mut closed);
            prop_assert_eq!(&closed, &open);
            if let Some(previous) = &previous {
                prop_assert!(open.starts_with(previous.as_str()));
            }
            previous = Some(open);
        }
    }
}

// ------------------------------------------------------------ answers

fn fixture(file: &str) -> Vec<u8> {
    std::fs::read(format!("{}/tests/fixtures/providers/anthropic/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

fn parse_stream(body: &[u8], cut: usize) -> (Result<crate::llm::ChatResponse, LlmError>, Vec<StreamDelta>) {
    let mut parser = StreamParser::with_events(AnthropicMessages.stream_events());
    let mut deltas = Vec::new();
    let mut sink = |d| deltas.push(d);
    for chunk in body.chunks(cut.max(1)) {
        if let Err(e) = parser.push(chunk, Some(&mut sink)) {
            return (Err(e), deltas);
        }
    }
    let r = parser.finish(Some(&mut sink));
    (r, deltas)
}

#[test]
fn wire_1_anthropic_whole_answer_maps_blocks_and_usage() {
    let r = AnthropicMessages.parse_response(&fixture("nonstream.json")).unwrap();
    let Message::Assistant { content, tool_calls, reasoning, thinking } = &r.message else { panic!() };
    assert_eq!(content.as_deref(), Some("好的，我来查询北京和上海的天气 🌤️"));
    // THINK-1: the block exactly as received, signature included; no separate reasoning.
    assert_eq!(reasoning, &None);
    assert_eq!(thinking.as_slice(), [ThinkingBlock::Thinking {
        thinking: "用户想知道两个城市的天气，我应该并行调用两次 get_weather。".into(),
        signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()
    }]);
    assert_eq!(r.message.reasoning_text().as_deref(), Some("用户想知道两个城市的天气，我应该并行调用两次 get_weather。"));
    assert_eq!(tool_calls, &[call("toolu_01A09q90qw90lq917835lq9", "get_weather", r#"{"city":"北京"}"#), call("toolu_01B7Hx2kPq8zVn3mWc5tRy4e", "get_weather", r#"{"city":"上海"}"#)]);
    assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"), "stop_reason tool_use in the shared vocabulary");
    let u = r.usage.unwrap();
    // The whole prompt: 20 uncached + 64 read + 36 written.
    assert_eq!((u.prompt_tokens, u.completion_tokens, u.total_tokens, u.cached_tokens, u.reasoning_tokens), (120, 48, 168, Some(64), None));
    assert_eq!(u.cache_write_tokens, Some(36));
}

#[test]
fn wire_1_anthropic_stream_equals_the_whole_answer_in_any_chunking() {
    let whole = AnthropicMessages.parse_response(&fixture("nonstream.json")).unwrap();
    let body = fixture("stream.sse");
    for cut in [1, 2, 3, 7, 64, body.len()] {
        let (r, deltas) = parse_stream(&body, cut);
        let r = r.unwrap();
        // Streamed arguments are the fragments as sent; the whole body's are compact JSON.
        let args: Vec<Value> = r.message.tool_calls().iter().map(|c| serde_json::from_str(&c.arguments).unwrap()).collect();
        assert_eq!(args, [json!({"city": "北京"}), json!({"city": "上海"})]);
        let strip = |m: &Message| match m {
            Message::Assistant { content, reasoning, tool_calls, thinking } => (
                content.clone(),
                reasoning.clone(),
                thinking.clone(),
                tool_calls.iter().map(|c| (c.id.clone(), c.name.clone())).collect::<Vec<_>>(),
            ),
            _ => panic!(),
        };
        assert_eq!(strip(&r.message), strip(&whole.message), "cut {cut}");
        assert_eq!((&r.usage, &r.finish_reason), (&whole.usage, &whole.finish_reason), "cut {cut}");
        let text: String = deltas.iter().filter_map(|d| if let StreamDelta::Text(t) = d { Some(t.as_str()) } else { None }).collect();
        assert_eq!(text, "好的，我来查询北京和上海的天气 🌤️");
        assert!(matches!(&deltas[0], StreamDelta::Reasoning(_)));
        let starts: Vec<&StreamDelta> = deltas.iter().filter(|d| matches!(d, StreamDelta::ToolCallStarted { .. })).collect();
        assert_eq!(starts[1], &StreamDelta::ToolCallStarted { index: 1, id: "toolu_01B7Hx2kPq8zVn3mWc5tRy4e".into(), name: "get_weather".into() });
        let args1: String = deltas
            .iter()
            .filter_map(|d| match d {
                StreamDelta::ToolCallArguments { index: 1, fragment } => Some(fragment.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(args1, r#"{"city": "上海"}"#);
    }
}

#[test]
fn wire_1_anthropic_stream_errors_truncation_and_end_marker() {
    let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n";
    let text = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n";
    let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let (r, deltas) = parse_stream(format!("{start}{text}{overloaded}").as_bytes(), 5);
    assert_eq!(r.unwrap_err(), LlmError::Server { status: 529, retry_after_ms: None });
    assert_eq!(deltas, [StreamDelta::Text("hi".into())]);
    let (r, _) = parse_stream(format!("{start}{text}").as_bytes(), 9);
    assert_eq!(r.unwrap_err().code(), "llm_transport", "no message_stop: truncated");
    let (r, _) = parse_stream(format!("{text}event: message_stop\ndata: {{\"type\":\"message_stop\"}}\n\n").as_bytes(), 9);
    assert_eq!(r.unwrap_err().code(), "llm_malformed_response", "no message_start");
    let (r, _) = parse_stream(b"data: {oops\n\n", 4);
    assert_eq!(r.unwrap_err().code(), "llm_malformed_response");
    // Whatever follows message_stop is never read; the usage of message_delta is cumulative.
    let end = "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n\
               data: {\"type\":\"message_stop\"}\n\ndata: {not json\n\n";
    let (r, _) = parse_stream(format!("{start}: comment\n\n{text}{end}").as_bytes(), 3);
    let r = r.unwrap();
    assert_eq!(r.message, Message::assistant("hi"));
    let u = r.usage.unwrap();
    assert_eq!((u.prompt_tokens, u.completion_tokens, u.cached_tokens, r.finish_reason.as_deref()), (5, 9, None, Some("stop")));
    assert_eq!(u.cache_write_tokens, None);
}

#[test]
fn wire_1_anthropic_errors_are_classified_without_echoing() {
    let body = |kind: &str, message: &str| json!({"type": "error", "error": {"type": kind, "message": message}}).to_string().into_bytes();
    let a = AnthropicMessages;
    assert_eq!(a.classify_error(529, &body("overloaded_error", "Overloaded"), Some(3000)), LlmError::Server { status: 529, retry_after_ms: Some(3000) });
    assert_eq!(a.classify_error(429, &body("rate_limit_error", "slow"), Some(1000)), LlmError::RateLimited { retry_after_ms: Some(1000) });
    assert_eq!(a.classify_error(401, &body("authentication_error", &format!("bad key {KEY}")), None), LlmError::Auth { status: 401 });
    assert_eq!(a.classify_error(400, &body("invalid_request_error", "prompt is too long: 208000 tokens > 200000 maximum"), None), LlmError::ContextOverflow);
    assert_eq!(
        a.classify_error(400, &body("invalid_request_error", "input length and `max_tokens` exceed context limit: 197000 + 8192 > 200000"), None),
        LlmError::ContextOverflow
    );
    let e = a.classify_error(400, &body("invalid_request_error", &format!("messages.1: {KEY}")), None);
    assert_eq!(e, LlmError::BadRequest { status: 400, provider_code: Some("invalid_request_error".into()) });
    assert!(!e.to_string().contains(KEY));
    // An error object served with HTTP 200 is classified like its status.
    assert_eq!(a.parse_response(&body("overloaded_error", "x")).unwrap_err(), LlmError::Server { status: 529, retry_after_ms: None });
    assert_eq!(a.parse_response(br#"{"type":"message","content":"x"}"#).unwrap_err().code(), "llm_malformed_response");
}

#[test]
fn wire_1_anthropic_stop_reasons_are_reported_in_the_shared_words() {
    for (stop, finish) in [("end_turn", "stop"), ("stop_sequence", "stop"), ("tool_use", "tool_calls"), ("max_tokens", "length"), ("refusal", "content_filter"), ("pause_turn", "pause_turn")] {
        let body = json!({"type": "message", "content": [{"type": "text", "text": "x"}], "stop_reason": stop}).to_string();
        assert_eq!(AnthropicMessages.parse_response(body.as_bytes()).unwrap().finish_reason.as_deref(), Some(finish), "{stop}");
    }
}

fn parse_cut(body: &[u8], cuts: &[usize]) -> Result<crate::llm::ChatResponse, LlmError> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    cuts.sort_unstable();
    let mut parser = StreamParser::with_events(AnthropicMessages.stream_events());
    let mut start = 0;
    for cut in cuts.into_iter().chain([body.len()]) {
        parser.push(&body[start..cut], None)?;
        start = cut;
    }
    parser.finish(None)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// REL-3 for the Anthropic parsers: any chunking of the fixture stream gives the
    /// identical answer; arbitrary or corrupted bodies never panic and either parse or
    /// fail with a classified code.
    #[test]
    fn wire_1_anthropic_parsers_are_chunking_invariant_and_never_panic(
        cuts in prop::collection::vec(any::<usize>(), 0..24),
        noise in prop::collection::vec(any::<u8>(), 0..256),
        flips in prop::collection::vec((any::<usize>(), any::<u8>()), 0..6),
    ) {
        let body = fixture("stream.sse");
        prop_assert_eq!(parse_cut(&body, &cuts).unwrap(), parse_cut(&body, &[]).unwrap());
        let _ = AnthropicMessages.parse_response(&noise);
        let _ = parse_cut(&noise, &cuts);
        for name in ["stream.sse", "nonstream.json"] {
            let mut bytes = fixture(name);
            for (at, byte) in &flips {
                let len = bytes.len();
                bytes[at % len] = *byte;
            }
            let results = [parse_cut(&bytes, &cuts), AnthropicMessages.parse_response(&bytes)];
            for e in results.into_iter().filter_map(Result::err) {
                let codes = ["llm_malformed_response", "llm_transport", "llm_bad_request", "llm_auth", "llm_rate_limited", "llm_server", "llm_context_overflow", "llm_timeout"];
                prop_assert!(codes.contains(&e.code().as_str()), "{:?}", e);
            }
        }
    }
}

/// The tool-call argument fragments among `deltas`, with their call's index.
fn argument_fragments(deltas: &[StreamDelta]) -> Vec<(u32, &str)> {
    deltas
        .iter()
        .filter_map(|d| match d {
            StreamDelta::ToolCallArguments { index, fragment } => Some((*index, fragment.as_str())),
            _ => None,
        })
        .collect()
}

/// Issue 40 item 15: what the streamed answer keeps is what the whole message keeps.
#[test]
fn llm_2_anthropic_stream_keeps_arguments_sent_whole_skips_unknown_events_and_spells_no_arguments_as_braces() {
    let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n";
    let block = |i: u32, input: &str| {
        format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{i}\",\"name\":\"get_weather\",\"input\":{input}}}}}\n\n")
    };
    let delta = |i: u32, json: &str| {
        format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{json}}}}}\n\n")
    };
    let stop = |i: u32| format!("event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n");
    let notice = "event: usage_notice\ndata: {\"type\":\"usage_notice\",\"message\":\"you are near your limit\",\"index\":\"x\",\"delta\":7}\n\n";
    let end = "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\ndata: {\"type\":\"message_stop\"}\n\n";
    // (a) the whole input with the start, then one empty fragment (gateways do this); (d) a
    // call with no input at all, and one whose only fragment is empty; (b) an unknown event
    // with a string `message` between them.
    let body = format!(
        "{start}{}{}{}{notice}{}{}{}{}{}{end}",
        block(0, r#"{"city":"Shenzhen"}"#),
        delta(0, r#""""#),
        stop(0),
        block(1, "{}"),
        stop(1),
        block(2, "{}"),
        delta(2, r#""""#),
        stop(2)
    );
    for cut in [1, 3, 7, 64, body.len()] {
        let (r, deltas) = parse_stream(body.as_bytes(), cut);
        let r = r.unwrap_or_else(|e| panic!("cut {cut}: {e:?}"));
        let args: Vec<&str> = r.message.tool_calls().iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(args, [r#"{"city":"Shenzhen"}"#, "{}", "{}"], "cut {cut}: nothing lost, one spelling for none");
        // (c) arguments that came whole reach the listeners as one fragment.
        let fragments = argument_fragments(&deltas);
        assert_eq!(fragments, [(0, r#"{"city":"Shenzhen"}"#)], "cut {cut}: a call without arguments has none to hand");
    }
    // Not JSON at all is still malformed; a whole answer's empty input is `{}` too.
    let (r, _) = parse_stream(b"event: usage_notice\ndata: {oops\n\n", 4);
    assert_eq!(r.unwrap_err().code(), "llm_malformed_response");
    let whole = br#"{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":""}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}}"#;
    assert_eq!(AnthropicMessages.parse_response(whole).unwrap().message.tool_calls()[0].arguments, "{}");
}

/// Issue 42 (`stream_chunking` at 9.0 million executions): arguments that came whole with
/// their start reach the listeners once — also when their block never stops before
/// `message_stop`, and when its stop arrives twice — and what the message keeps is what the
/// listeners got (a fragment after the hand-over is ignored by both).
#[test]
fn llm_2_anthropic_whole_arguments_reach_the_listeners_once_whatever_the_stops() {
    let start = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n";
    let block = |i: u32| {
        format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{i}\",\"name\":\"get_weather\",\"input\":{{\"city\":\"c{i}\"}}}}}}\n\n")
    };
    let stop = |i: u32| format!("event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n");
    let late = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n";
    let end = "data: {\"type\":\"message_stop\"}\n\n";
    // Block 0 never stops; block 1 stops twice, then gets a fragment.
    let body = format!("{start}{}{}{}{}{late}{end}", block(0), block(1), stop(1), stop(1));
    for cut in [1, 5, 64, body.len()] {
        let (r, deltas) = parse_stream(body.as_bytes(), cut);
        let r = r.unwrap_or_else(|e| panic!("cut {cut}: {e:?}"));
        let args: Vec<&str> = r.message.tool_calls().iter().map(|c| c.arguments.as_str()).collect();
        assert_eq!(args, [r#"{"city":"c0"}"#, r#"{"city":"c1"}"#], "cut {cut}");
        let fragments = argument_fragments(&deltas);
        assert_eq!(fragments, [(1, r#"{"city":"c1"}"#), (0, r#"{"city":"c0"}"#)], "cut {cut}: each once, block 0's at message_stop");
    }
}

/// Issue 40 item 8: a one-off request (a summarizer's chunk) marks no breakpoint on its
/// messages — Anthropic would bill the write at 1.25× and no request ever reads it — while
/// the conversation's requests keep theirs.
#[test]
fn cost_2_a_one_off_anthropic_request_asks_for_no_cache_write_on_its_messages() {
    let messages = [Message::user("<conversation>\nuser: hi\n</conversation>")];
    let request = request("Summarize.", &[], &messages, &[], None);
    let body: Value = serde_json::from_str(&AnthropicMessages.encode_one_off(&config(), &request)).unwrap();
    assert!(body["messages"].to_string().find("cache_control").is_none(), "{body}");
    let conversation: Value = serde_json::from_str(&AnthropicMessages.encode_request(&config(), &request)).unwrap();
    assert!(conversation["messages"].to_string().contains("cache_control"), "the conversation keeps its moving breakpoint");
}

/// The content blocks of Claude's interleaved-thinking answer: reasoning, a preamble, a
/// call, more reasoning (redacted), a second call.
fn interleaved_blocks() -> Vec<Value> {
    vec![
        json!({"type": "thinking", "thinking": "Two cities: start with 北京.", "signature": "EqQB/first=="}),
        json!({"type": "text", "text": "Let me check."}),
        json!({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "北京"}}),
        json!({"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3p=="}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {"city": "上海"}}),
    ]
}

/// The same answer as Anthropic streams it.
fn interleaved_sse() -> String {
    let event = |v: Value| format!("event: {}\ndata: {v}\n\n", v["type"].as_str().unwrap());
    let mut out = event(json!({"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}));
    for (index, block) in interleaved_blocks().into_iter().enumerate() {
        let (start, delta) = match block["type"].as_str().unwrap() {
            "thinking" => (json!({"type": "thinking", "thinking": ""}), vec![
                json!({"type": "thinking_delta", "thinking": block["thinking"]}),
                json!({"type": "signature_delta", "signature": block["signature"]}),
            ]),
            "text" => (json!({"type": "text", "text": ""}), vec![json!({"type": "text_delta", "text": "Let me "}), json!({"type": "text_delta", "text": "check."})]),
            "tool_use" => (json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}), vec![json!({"type": "input_json_delta", "partial_json": block["input"].to_string()})]),
            _ => (block.clone(), vec![]),
        };
        out += &event(json!({"type": "content_block_start", "index": index, "content_block": start}));
        for d in delta {
            out += &event(json!({"type": "content_block_delta", "index": index, "delta": d}));
        }
        out += &event(json!({"type": "content_block_stop", "index": index}));
    }
    out += &event(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}));
    out + &event(json!({"type": "message_stop"}))
}

/// The assistant turn of `body`, its blocks without `cache_control`.
fn answer_blocks(body: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(body).unwrap();
    let turn = v["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap().clone();
    turn["content"].as_array().unwrap().iter().map(|b| {
        let mut b = b.clone();
        b.as_object_mut().unwrap().remove("cache_control");
        b
    }).collect()
}

#[test]
fn think_2_an_interleaved_answer_goes_back_in_the_order_it_came_whole_streamed_stored() {
    let whole_body = json!({"id": "msg", "type": "message", "role": "assistant", "content": interleaved_blocks(), "stop_reason": "tool_use",
                            "usage": {"input_tokens": 10, "output_tokens": 30}});
    let whole = AnthropicMessages.parse_response(whole_body.to_string().as_bytes()).unwrap().message;
    let Message::Assistant { content, thinking, .. } = &whole else { panic!() };
    assert_eq!(content.as_deref(), Some("Let me check."));
    assert_eq!(thinking.order(), Some("tx13utu"));
    let sse = interleaved_sse();
    for cut in [1, 5, 64, sse.len()] {
        let (r, _) = parse_stream(sse.as_bytes(), cut);
        let streamed = r.unwrap().message;
        let Message::Assistant { thinking: t, .. } = &streamed else { panic!() };
        assert_eq!(t.order(), Some("tx13utu"), "cut {cut}");
        assert_eq!(t, thinking, "cut {cut}");
    }
    // Kept through the message's JSON (history, export, store)…
    let json = serde_json::to_string(&whole).unwrap();
    assert!(json.ends_with(r#","block_order":"tx13utu"}"#), "{json}");
    let back: Message = serde_json::from_str(&json).unwrap();
    assert_eq!(back, whole);
    // …and sent back as it came, from scratch and through the incremental writer.
    let history = vec![Message::user("weather?"), back, Message::tool_result("toolu_1", "sunny", false), Message::tool_result("toolu_2", "rain", false)];
    let body = AnthropicMessages.encode_request(&config(), &request("sys", &[], &history, &[], None));
    let mut want = interleaved_blocks();
    want[2]["input"] = json!({"city": "北京"});
    assert_eq!(answer_blocks(&body), want);
    let encoder = AnthropicMessages.request_encoder(&config(), RequestParts { system_prompt: "sys", tools: &[], tool_choice: None });
    let mut writer = encoder.writer();
    let mut incremental = writer.start(&[]);
    for m in &history {
        incremental.push_str(&writer.encode(m));
    }
    writer.close(&mut incremental);
    assert_eq!(answer_blocks(&incremental), want);
    assert_eq!(incremental, body, "the incremental body is the from-scratch one");
    // An answer whose blocks came first keeps no order; one whose text changed since
    // (the order no longer fits) sends its blocks first, as before.
    let mut changed = whole.clone();
    if let Message::Assistant { content, .. } = &mut changed {
        *content = Some("Let me check, [REDACTED].".into());
    }
    let history = vec![Message::user("weather?"), changed, Message::tool_result("toolu_1", "sunny", false), Message::tool_result("toolu_2", "rain", false)];
    let kinds: Vec<Value> = answer_blocks(&AnthropicMessages.encode_request(&config(), &request("sys", &[], &history, &[], None))).iter().map(|b| b["type"].clone()).collect();
    assert_eq!(kinds, [json!("thinking"), json!("redacted_thinking"), json!("text"), json!("tool_use"), json!("tool_use")]);
}

#[test]
fn think_2_a_text_delta_without_its_block_start_still_counts_in_the_block_order() {
    // A gateway that leaves out the text block's start: its text is still a block of its
    // own in the order, so the order fits the answer and the blocks go back in place.
    let sse: String = interleaved_sse().split_inclusive("\n\n").filter(|e| !(e.contains("content_block_start") && e.contains(r#""type":"text""#))).collect();
    let (r, _) = parse_stream(sse.as_bytes(), 7);
    let Message::Assistant { content, thinking, .. } = r.unwrap().message else { panic!() };
    assert_eq!(content.as_deref(), Some("Let me check."));
    assert_eq!(thinking.order(), Some("tx13utu"));
}

#[test]
fn think_2_perf_7_an_answer_ending_with_a_reasoning_block_closes_alike_in_both_encoders() {
    // [thinking, tool_use, thinking] (an answer cut off after its last reasoning): the
    // latest block takes no breakpoint, in the reference and in the incremental writer.
    let blocks = vec![
        json!({"type": "thinking", "thinking": "a", "signature": "EqQB/a=="}),
        json!({"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}),
        json!({"type": "thinking", "thinking": "b", "signature": "EqQB/b=="}),
    ];
    let body = json!({"type": "message", "role": "assistant", "content": blocks, "stop_reason": "max_tokens", "usage": {"input_tokens": 1, "output_tokens": 1}});
    let answer = AnthropicMessages.parse_response(body.to_string().as_bytes()).unwrap().message;
    let Message::Assistant { thinking, .. } = &answer else { panic!() };
    assert_eq!(thinking.order(), Some("tut"));
    let history = vec![Message::user("weather?"), answer];
    let reference = AnthropicMessages.encode_request(&config(), &request("sys", &[], &history, &[], None));
    let encoder = AnthropicMessages.request_encoder(&config(), RequestParts { system_prompt: "sys", tools: &[], tool_choice: None });
    let mut writer = encoder.writer();
    let mut incremental = writer.start(&[]);
    for m in &history {
        incremental.push_str(&writer.encode(m));
    }
    let open = incremental.clone();
    let reopen = writer.close(&mut incremental);
    assert_eq!(incremental, reference);
    assert_eq!(answer_blocks(&incremental), blocks);
    incremental.truncate(reopen.keep);
    incremental.push_str(reopen.restore);
    assert_eq!(incremental, open, "reopened as it was");
}
