//! LLM-4 / REL-4: the API key and the Authorization value never leak — not into errors,
//! events, tool results, exported state or logs — even when the provider echoes them.

use std::sync::{Arc, Mutex};

use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, ChatClient, ChatRequest, Message, ToolContext, ToolDefinition, ToolExecutor,
    ToolInvocation, ToolRegistry, ToolResult, TransportError,
};
use async_trait::async_trait;
use serde_json::json;

use crate::llm_fake::*;

struct Lookup(Mutex<Vec<String>>);

#[async_trait]
impl ToolExecutor for Lookup {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        self.0.lock().unwrap().push(format!("{call:?} {ctx:?}"));
        ToolResult::ok(format!("looked up {}", call.arguments))
    }
}

fn tool_call_body() -> String {
    json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}})
    .to_string()
}

/// Fails unless `text` is free of the key (whole, as a Bearer value, or its tail).
fn assert_clean(what: &str, text: &str) {
    assert!(!text.contains(KEY), "{what} leaks the API key: {text}");
    assert!(!text.contains(&format!("Bearer {KEY}")), "{what} leaks the Authorization value");
    assert!(!text.contains("9f8e7d6c5b4a"), "{what} leaks part of the API key: {text}");
}

#[tokio::test(flavor = "current_thread")]
async fn llm_4_rel_4_key_never_leaks_into_errors_events_tool_results_state_or_logs() {
    each_wire(|| async {
        let trace = TraceBuffer::default();
        let _tracing = trace.install();

        let echo = format!("Incorrect API key provided: {KEY}. Authorization: Bearer {KEY}");
        let steps = vec![
            // Run 1: a tool round trip, then 401 echoing the key.
            Step::ok(tool_call_body()),
            Step::status(401, json!({"error": {"message": echo, "type": "invalid_request_error", "code": "invalid_api_key"}}).to_string()),
            // Run 2: 400 echoing the key in the message, the param and even the code.
            Step::status(400, json!({"error": {"message": echo, "param": format!("Bearer {KEY}"), "code": KEY}}).to_string()),
            // Run 3: HTTP 200 whose body is an error object echoing the key.
            Step::ok(json!({"error": {"message": echo, "type": "invalid_request_error", "code": "invalid_api_key"}}).to_string()),
            // Run 4: an error event inside a 200 stream, key in message and code.
            Step::ok(format!("data: {{\"error\":{{\"message\":\"{echo}\",\"code\":\"{KEY}\"}}}}\n\n")),
            // Run 5: the host transport fails with a message quoting the request headers (retried).
            Step::Fail(TransportError::network(format!("TLS alert while sending Authorization: Bearer {KEY}"))),
            Step::Fail(TransportError::network(format!("TLS alert while sending Authorization: Bearer {KEY}"))),
            Step::Fail(TransportError::network(format!("TLS alert while sending Authorization: Bearer {KEY}"))),
        ];
        let model = FakeProvider::new(steps);
        let lookup = Arc::new(Lookup(Mutex::default()));
        let mut tools = ToolRegistry::new();
        tools.register(ToolDefinition::new("lookup", "Looks things up", json!({"type": "object"})), lookup.clone()).unwrap();
        let mut config = AgentRuntimeConfig::new(config());
        config.tools = tools;
        config.session_id = Some("secret-test".into());
        let runtime = AgentRuntime::new(config, model.clone()).unwrap();
        let events: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = events.clone();
        let _sub = runtime.subscribe(Arc::new(move |e: &AgentEvent| sink.lock().unwrap().push(serde_json::to_string(e).unwrap())));

        let mut codes = Vec::new();
        for input in ["one", "two", "three", "four", "five"] {
            let err = runtime.run(input).await.unwrap_err();
            codes.push(err.code());
            assert_clean("error Display", &err.to_string());
            assert_clean("error Debug", &format!("{err:?}"));
            if let arkagent::ArkAgentError::Llm(llm) = &err {
                assert_clean("LlmError Display", &llm.to_string());
                assert_clean("LlmError Debug", &format!("{llm:?}"));
            }
        }
        assert_eq!(codes, ["llm_auth", "llm_bad_request", "llm_auth", "llm_bad_request", "llm_transport"]);
        assert_eq!(model.request_count(), 8);

        // The tool ran, and neither it nor its result saw the key.
        let tool_calls = lookup.0.lock().unwrap().clone();
        assert_eq!(tool_calls.len(), 1);
        assert_clean("tool input", &tool_calls[0]);
        let messages = runtime.messages();
        let tool_results: Vec<&Message> = messages.iter().filter(|m| matches!(m, Message::Tool { .. })).collect();
        assert_eq!(tool_results.len(), 1);
        assert_clean("tool result", &serde_json::to_string(&tool_results).unwrap());

        let events = events.lock().unwrap().clone();
        assert!(events.iter().any(|e| e.contains("tool_call_finished")) && events.iter().any(|e| e.contains("run_finished")));
        for e in &events {
            assert_clean("event", e);
        }
        assert_clean("exported state", &runtime.export_state().unwrap());
        assert_clean("runtime config Debug", &format!("{:?}", runtime.config()));

        // Logs: the requests and retries were traced, the failures logged, never the key.
        let logs = trace.text();
        assert!(logs.contains("model request") && logs.contains("retrying model call"), "nothing traced: {logs}");
        assert!(logs.contains("llm_auth"));
        assert_clean("tracing output", &logs);
    })
    .await;
}

#[test]
fn llm_4_config_and_request_debug_are_redacted() {
    each_wire_sync(config_and_request_debug_are_redacted);
}

fn config_and_request_debug_are_redacted() {
    let mut c = config();
    c.extra_headers = vec![("api-key".into(), "azure-SECRET-value-1234".into()), ("OpenAI-Organization".into(), "org-1".into())];
    let debug = format!("{c:?}");
    assert_clean("ModelConfig Debug", &debug);
    assert!(!debug.contains("azure-SECRET-value-1234") && debug.contains("org-1") && debug.contains("retry"));
    let client = ChatClient::new(FakeProvider::new(vec![]), c.clone());
    let request = client.build_http_request(&ChatRequest { system_prompt: None, context_messages: &[], messages: &[], tools: &[], tool_choice: None });
    // The key goes in its wire format's header (`Authorization: Bearer …` or `x-api-key`).
    let (header, value) = match wire() {
        Wire::OpenAi => ("Authorization", format!("Bearer {KEY}")),
        Wire::Anthropic => ("x-api-key", KEY.to_owned()),
    };
    assert!(request.headers.iter().any(|(k, v)| k == header && v == &value));
    let debug = format!("{request:?}");
    assert_clean("HttpRequest Debug", &debug);
    assert!(!debug.contains("azure-SECRET-value-1234"));
    // Extra credential headers are scrubbed from error texts too.
    assert_eq!(c.redact("x azure-SECRET-value-1234 y"), "x <redacted> y");
    assert_eq!(c.redact(&format!("Bearer {KEY}")), "Bearer <redacted>");
}

/// LLM-4 (arkagent.h, `arkagent_runtime_run`: "The API key never enters the history or an
/// event, whoever echoes it"): a key the model streams split across deltas — at every cut
/// — never reaches the delta events whole; the deltas still add up to the answer as the
/// history holds it.
#[tokio::test]
async fn llm_4_a_key_split_across_streamed_deltas_never_reaches_an_event() {
    use crate::support::{model_config, Reply, ScriptedModel, API_KEY as KEY};
    let chunk = |t: &str| format!("data: {}\n\n", json!({"id": "s", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"content": t}, "finish_reason": null}]}));
    let end = format!("data: {}\n\ndata: [DONE]\n\n", json!({"id": "s", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}));
    // The API key, and a gateway credential that ends as it begins (a cut must not halve it).
    const LOOP: &str = "s-gateway-credential-s";
    for (secret, cut) in (1..KEY.len()).map(|c| (KEY, c)).chain((1..LOOP.len()).map(|c| (LOOP, c))) {
        let (a, b) = secret.split_at(cut);
        let sse = [chunk("my key is s"), chunk(a), chunk(b), chunk(" and s"), end.clone()].concat();
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", KEY, "m"));
        c.model.extra_headers = vec![("api-key".into(), LOOP.into())];
        c.model.stream = true;
        let rt = AgentRuntime::new(c, ScriptedModel::new(vec![Reply::Raw(200, sse)])).unwrap();
        let deltas: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = deltas.clone();
        let _sub = rt.subscribe(Arc::new(move |e: &AgentEvent| {
            if let arkagent::EventKind::TextDelta { delta, .. } = &e.kind {
                sink.lock().unwrap().push(delta.clone());
            }
        }));
        let out = rt.run("hi").await.unwrap();
        let joined = deltas.lock().unwrap().concat();
        assert!(!joined.contains(KEY) && !joined.contains(LOOP), "cut {cut}: {joined}");
        assert_eq!(Some(joined.as_str()), out.final_text.as_deref(), "cut {cut}: the deltas add up to the answer");
        assert_eq!(joined, "my key is s<redacted> and s");
    }
}
