//! WIRE-1 on the Rust and C surfaces: `wire_format` in the config JSON (default, known,
//! unknown → `invalid_config`), Anthropic's overload answer retried after its
//! `retry-after`, the C program that runs a tool-call turn over Anthropic Messages
//! (tests/c/wire_anthropic.c), and BND-3's registry-driven C conformance turn
//! (tests/c/wire_conformance.c, over every registered protocol).

use std::time::{Duration, Instant};

use arkagent::llm::{check_wire_format, wire_format, wire_format_names, RetryPolicy, WireFormat};
use arkagent::{AgentRuntimeConfig, CancellationToken, ChatClient, ModelConfig, ToolRegistry};
use serde_json::json;

use crate::llm_fake::{config, request, FakeProvider, Step};

#[test]
fn wire_1_wire_format_in_config_json_defaults_to_openai_and_refuses_unknown_names() {
    let parse = |model: &str| AgentRuntimeConfig::from_json(&format!(r#"{{"model":{model}}}"#), ToolRegistry::new());
    let c = parse(r#"{"base_url":"http://h/v1","api_key":"k","model":"m"}"#).unwrap();
    assert_eq!(c.model.wire_format, WireFormat::OPENAI);
    let c = parse(r#"{"base_url":"http://h/v1","api_key":"k","model":"m","wire_format":"anthropic"}"#).unwrap();
    assert_eq!(c.model.wire_format, WireFormat::ANTHROPIC);
    assert!(format!("{:?}", c.model).contains(r#"wire_format: "anthropic""#));
    for bad in [r#""Anthropic""#, r#""claude""#, r#""""#] {
        let e = parse(&format!(r#"{{"base_url":"http://h/v1","api_key":"k","model":"m","wire_format":{bad}}}"#)).unwrap_err();
        assert_eq!(e.code(), "invalid_config", "{bad}");
        assert!(e.to_string().contains("openai, anthropic"), "{e}");
    }
    // Not a string at all is not a name: the JSON is refused as such.
    let e = parse(r#"{"base_url":"http://h/v1","api_key":"k","model":"m","wire_format":7}"#).unwrap_err();
    assert_eq!(e.code(), "invalid_json");
    assert_eq!(wire_format_names().collect::<Vec<_>>(), ["openai", "anthropic"]);
    assert_eq!(wire_format("openai"), Some(WireFormat::OPENAI));
    let mut unknown: ModelConfig = serde_json::from_value(json!({"base_url": "h", "api_key": "k", "model": "m", "wire_format": "x"})).unwrap();
    assert_eq!(check_wire_format(&unknown).unwrap_err().code(), "invalid_config");
    unknown.wire_format = WireFormat::ANTHROPIC;
    assert!(check_wire_format(&unknown).is_ok());
}

#[tokio::test]
async fn wire_1_a_client_with_an_unknown_wire_format_sends_nothing() {
    let mut c = config();
    c.wire_format = serde_json::from_value(json!("x")).unwrap();
    let model = FakeProvider::new(vec![]);
    let client = ChatClient::new(model.clone(), c);
    let e = client.send(request(&client), &CancellationToken::new()).await.unwrap_err();
    assert_eq!((e.code().as_str(), model.request_count()), ("llm_bad_request", 0));
    assert!(e.to_string().contains("unknown_wire_format"), "{e}");
}

#[tokio::test]
async fn wire_1_anthropic_overloaded_529_waits_its_retry_after_then_succeeds() {
    let overloaded = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}).to_string();
    let ok = json!({"type": "message", "role": "assistant", "content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 3, "output_tokens": 1}})
    .to_string();
    let mut c = config();
    c.wire_format = WireFormat::ANTHROPIC;
    c.retry = RetryPolicy { max_attempts: 2, initial_backoff_ms: 1, max_backoff_ms: 10_000 };
    // Cut steps are served as they are (already Anthropic's shapes).
    let model = FakeProvider::new(vec![Step::Full(529, vec![("retry-after".into(), "0.3".into())], overloaded.into_bytes()), Step::Cut(vec![ok.into_bytes()])]);
    let client = ChatClient::new(model.clone(), c);
    let start = Instant::now();
    let r = client.send(request(&client), &CancellationToken::new()).await.unwrap();
    assert!(start.elapsed() >= Duration::from_millis(300), "waited {:?}", start.elapsed());
    assert_eq!((r.message.text(), r.finish_reason.as_deref(), model.request_count()), (Some("done"), Some("stop"), 2));
}

/// A tool-call turn over Anthropic Messages through the C ABI, and an unknown
/// `wire_format` refused with `ARK_AGENT_RESULT_INVALID_CONFIG`.
#[test]
fn wire_1_c_program_runs_a_tool_call_turn_over_anthropic_messages() {
    let stdout = crate::c_programs::compile_and_run("wire_anthropic");
    assert!(stdout.contains("wire_anthropic: "), "{stdout}");
}

/// BND-3: registering a protocol gives it the scripted-model tests on every surface. In
/// Rust every `each_wire` test runs once per registered protocol (`Wire::registered`, a
/// protocol without a fake fails them all); through the C ABI the protocol-blind program
/// tests/c/wire_conformance.c runs a streamed tool-call turn over each registered name,
/// with that protocol's answers, and every request it sent is checked the way a strict
/// server of the protocol would (key placement, URL, its own rules, pairing).
#[test]
fn bnd_3_every_registered_protocol_runs_a_tool_call_turn_through_the_c_abi() {
    use crate::support::{check_request, render_completion, text_reply, tool_calls_reply, Reply, API_KEY};
    use crate::wire_fake::Wire;
    let exe = crate::c_programs::compile("wire_conformance");
    let json = |r: Reply| match r {
        Reply::Json(v) => v,
        _ => unreachable!(),
    };
    let wires = Wire::registered();
    assert_eq!(wires.len(), wire_format_names().count());
    for wire in wires {
        let dir = crate::store::temp_dir(&format!("wire-{}", wire.name()));
        let call = json(tool_calls_reply(&[("call_1", "get_weather", json!({"city": "Beijing"}))], 40));
        let answer = json(text_reply("Beijing is sunny.", 60));
        std::fs::write(dir.join("reply-1"), render_completion(wire, &call, false)).unwrap();
        std::fs::write(dir.join("reply-2"), render_completion(wire, &answer, true)).unwrap();
        std::fs::write(dir.join("final"), "Beijing is sunny.").unwrap();
        std::fs::write(dir.join("key"), API_KEY).unwrap();
        let out = crate::c_programs::run_program(&exe, &[wire.name(), dir.to_str().unwrap()]);
        assert!(out.contains(&format!("wire_conformance {}: ", wire.name())), "{out}");
        let mut views = Vec::new();
        for n in 1..=2 {
            let read = |suffix: &str| std::fs::read_to_string(dir.join(format!("request-{n}.{suffix}"))).unwrap();
            let headers = read("headers")
                .lines()
                .filter_map(|l| l.split_once(": ").map(|(k, v)| (k.to_owned(), v.to_owned())))
                .collect();
            let request = arkagent::HttpRequest { method: "POST".into(), url: read("url"), headers, body: std::sync::Arc::new(read("body")), stream: true };
            views.push(check_request(wire, &request));
        }
        let roles = |v: &serde_json::Value| v["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap().to_owned()).collect::<Vec<_>>();
        assert_eq!(roles(&views[0]), ["system", "user"], "{wire:?}");
        assert_eq!(roles(&views[1]), ["system", "user", "assistant", "tool"], "{wire:?}");
        assert_eq!(views[1]["messages"][3]["content"], "sunny, 21C", "{wire:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// BND-3: a registered name without a test fake fails loudly, naming what to add.
#[test]
#[should_panic(expected = "have no fake")]
fn bnd_3_a_protocol_without_a_test_fake_fails_every_each_wire_test() {
    crate::wire_fake::Wire::of("gemini");
}
