use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, EventKind, HistoryInvariants, Message, ModelConfig,
    RunStatus, SequentialIdGenerator, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry,
    ToolResult,
};
use async_trait::async_trait;
use serde_json::json;

use crate::support::*;

fn weather_def() -> ToolDefinition {
    ToolDefinition::new(
        "get_weather",
        "Weather for a city",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
}

fn config(tools: ToolRegistry) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.system_prompt = "You are helpful.".into();
    c.tools = tools;
    c.session_id = Some("session-1".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c
}

fn registry(tool: Arc<dyn ToolExecutor>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(weather_def(), tool).unwrap();
    r
}

fn two_call_script() -> Vec<Reply> {
    vec![
        tool_calls_reply(
            &[("call_a", "get_weather", json!({"city": "Beijing"})), ("call_b", "get_weather", json!({"city": "Shenzhen"}))],
            100,
        ),
        text_reply("Both sunny.", 160),
    ]
}

#[tokio::test]
async fn core_4_acceptance_parallel_tool_calls_then_final_answer() {
    let model = ScriptedModel::new(two_call_script());
    // A slow tool: both calls must be in flight together (started, started, finished, finished).
    let tool = Arc::new(WeatherTool { delay: Some(Duration::from_millis(20)), ..Default::default() });
    let runtime = AgentRuntime::new(config(registry(tool.clone())), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = runtime.subscribe(recorder.clone());

    let outcome = runtime.run("Weather in Beijing and Shenzhen?").await.unwrap();

    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.final_text.as_deref(), Some("Both sunny."));
    assert_eq!(outcome.iterations, 2);
    let args = tool.calls.lock().unwrap().clone();
    assert_eq!(args, vec![json!({"city": "Beijing"}), json!({"city": "Shenzhen"})]);

    let messages = runtime.messages();
    assert!(HistoryInvariants::tool_calls_paired(&messages));
    assert_eq!(messages.len(), 5); // user, assistant(calls), tool, tool, assistant
    assert_eq!(messages[2], Message::tool_result("call_a", "weather in Beijing: sunny", false));
    assert_eq!(messages[3], Message::tool_result("call_b", "weather in Shenzhen: sunny", false));

    let usages = runtime.usages();
    assert_eq!(usages.iter().map(|u| u.prompt_tokens).collect::<Vec<_>>(), vec![100, 160]);
    assert_eq!(usages[1].total_tokens, 165);

    // The second request carries the system prompt, both calls and both results.
    let second = &model.requests.lock().unwrap()[1];
    assert_eq!(second["messages"][0], json!({"role": "system", "content": "You are helpful."}));
    assert_eq!(second["messages"].as_array().unwrap().len(), 5);
    assert_eq!(second["tools"][0]["function"]["name"], "get_weather");

    assert_eq!(
        recorder.types(),
        [
            "run_started", "model_request", "model_response", "tool_call_started", "tool_call_started",
            "tool_call_finished", "tool_call_finished", "model_request", "model_response", "text_delta", "run_finished",
        ]
    );
    let events = recorder.0.lock().unwrap();
    assert!(events.windows(2).all(|w| w[0].seq < w[1].seq), "seq strictly increasing");
    assert!(events.iter().all(|e| e.session_id == "session-1" && e.run_id == outcome.run_id));
}

#[tokio::test]
async fn core_6_export_then_resume_continues_the_same_history() {
    let model = ScriptedModel::new(two_call_script());
    let tool = Arc::new(WeatherTool::default());
    let runtime = AgentRuntime::new(config(registry(tool.clone())), model.clone()).unwrap();
    runtime.run("Weather?").await.unwrap();
    let exported = runtime.export_state().unwrap();
    assert!(!exported.contains(API_KEY));

    let model2 = ScriptedModel::new(vec![text_reply("You asked about the weather.", 200)]);
    let resumed = AgentRuntime::resume(config(registry(tool)), model2.clone(), &exported).unwrap();
    assert_eq!(resumed.session_id(), "session-1");
    let outcome = resumed.run("What did I ask?").await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    let sent = &model2.requests.lock().unwrap()[0]["messages"];
    assert_eq!(sent.as_array().unwrap().len(), 1 + 5 + 1, "system + previous five + new user");
    assert_eq!(sent[1]["content"], "Weather?");
    assert_eq!(resumed.messages().len(), 7);
    assert_eq!(resumed.usages().len(), 3);
}

#[tokio::test]
async fn core_6_import_rejects_bad_state_and_keeps_the_old_one() {
    let runtime = AgentRuntime::new(config(ToolRegistry::new()), ScriptedModel::new(vec![])).unwrap();
    let before = runtime.export_state().unwrap();
    assert_eq!(runtime.import_state("{not json").unwrap_err().code(), "invalid_json");
    let unpaired = json!({"version": 1, "session_id": "s", "usages": [], "history": {"messages": [
        {"role": "assistant", "tool_calls": [{"id": "x", "name": "t", "arguments": "{}"}]}]}});
    assert_eq!(runtime.import_state(&unpaired.to_string()).unwrap_err().code(), "invalid_state");
    let dup = json!({"version": 1, "session_id": "s", "usages": [], "history": {"messages": [], "episodic_memories": [
        {"id": "e", "summary": "", "created_at_ms": 0, "message_count": 0},
        {"id": "e", "summary": "", "created_at_ms": 0, "message_count": 0}]}});
    assert_eq!(runtime.import_state(&dup.to_string()).unwrap_err().code(), "invalid_state");
    assert_eq!(runtime.export_state().unwrap(), before);
}

#[tokio::test]
async fn core_4_cancel_while_tool_in_flight_leaves_history_paired() {
    let model = ScriptedModel::new(two_call_script());
    let tool = Arc::new(WeatherTool { hang: true, ..Default::default() });
    let runtime = AgentRuntime::new(config(registry(tool.clone())), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _sub = runtime.subscribe(recorder.clone());
    let r2 = runtime.clone();
    let handle = tokio::spawn(async move { r2.run("Weather?").await });
    while tool.calls.lock().unwrap().len() < 2 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert!(runtime.cancel());
    let outcome = handle.await.unwrap().unwrap();
    assert_eq!(outcome.status, RunStatus::Cancelled);
    let messages = runtime.messages();
    assert!(HistoryInvariants::tool_calls_paired(&messages));
    let Message::Tool { content, is_error, .. } = &messages[2] else { panic!("tool result expected") };
    assert!(*is_error && content.text().contains("\"cancelled\""));
    assert_eq!(model.request_count(), 1, "no model call after cancellation");
    let last = recorder.0.lock().unwrap().last().cloned().unwrap();
    assert!(matches!(last.kind, EventKind::RunFinished { status: RunStatus::Cancelled, .. }));
    assert!(!runtime.is_running());
}

#[tokio::test]
async fn core_4_cancel_during_model_call_and_run_again() {
    let model = ScriptedModel::new(vec![Reply::Hang, text_reply("hello", 10)]);
    let runtime = AgentRuntime::new(config(ToolRegistry::new()), model.clone()).unwrap();
    let r2 = runtime.clone();
    let handle = tokio::spawn(async move { r2.run("hi").await });
    while model.request_count() < 1 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    runtime.cancel();
    assert_eq!(handle.await.unwrap().unwrap().status, RunStatus::Cancelled);
    assert_eq!(runtime.messages(), vec![Message::user("hi")]);
    let outcome = runtime.run("hi again").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("hello"));
}

/// Issue 42 (found by the C call-sequence fuzzer): a runtime closed (a C host freed it)
/// before another thread's run claimed the slot refuses that run — and every later one,
/// decomposed jobs and compressions included — rather than running it with nobody left
/// to answer or cancel it.
#[tokio::test]
async fn core_4_a_closed_runtime_refuses_every_later_run() {
    let model = ScriptedModel::new(vec![text_reply("never", 10)]);
    let runtime = AgentRuntime::new(config(ToolRegistry::new()), model.clone()).unwrap();
    runtime.close();
    assert_eq!(runtime.run("hi").await.unwrap_err().code(), "cancelled");
    assert_eq!(runtime.compress_now().await.unwrap_err().code(), "cancelled");
    assert_eq!(model.request_count(), 0, "nothing was sent");
    assert!(runtime.messages().is_empty(), "nothing was written");
    assert!(!runtime.is_running());
}

#[tokio::test]
async fn core_4_close_cancels_the_active_run() {
    let model = ScriptedModel::new(vec![Reply::Hang]);
    let runtime = AgentRuntime::new(config(ToolRegistry::new()), model.clone()).unwrap();
    let r2 = runtime.clone();
    let handle = tokio::spawn(async move { r2.run("one").await });
    while model.request_count() < 1 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    runtime.close();
    assert_eq!(handle.await.unwrap().unwrap().status, RunStatus::Cancelled);
    assert_eq!(runtime.run("two").await.unwrap_err().code(), "cancelled");
}

#[tokio::test]
async fn core_4_run_in_progress_is_rejected() {
    let model = ScriptedModel::new(vec![Reply::Hang]);
    let runtime = AgentRuntime::new(config(ToolRegistry::new()), model.clone()).unwrap();
    let r2 = runtime.clone();
    let handle = tokio::spawn(async move { r2.run("one").await });
    while model.request_count() < 1 {
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    assert_eq!(runtime.run("two").await.unwrap_err().code(), "run_in_progress");
    assert_eq!(runtime.import_state(&runtime.export_state().unwrap()).unwrap_err().code(), "run_in_progress");
    runtime.cancel();
    handle.await.unwrap().unwrap();
}

#[tokio::test]
async fn core_4_unknown_tool_and_invalid_arguments_become_tool_errors() {
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("c1", "no_such_tool", json!({}))], 10),
        arkagent_raw_bad_args(),
        text_reply("done", 30),
    ]);
    let tool = Arc::new(WeatherTool::default());
    let runtime = AgentRuntime::new(config(registry(tool.clone())), model.clone()).unwrap();
    let outcome = runtime.run("go").await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    let messages = runtime.messages();
    assert!(HistoryInvariants::tool_calls_paired(&messages));
    let errors: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, is_error: true, .. } => content.as_text(),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 2);
    assert!(errors[0].contains("unknown_tool"));
    assert!(errors[1].contains("invalid_tool_arguments"));
    assert!(tool.calls.lock().unwrap().is_empty(), "the executor never saw invalid arguments");
}

fn arkagent_raw_bad_args() -> Reply {
    Reply::Json(json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Bei"}}]},
        "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 20, "completion_tokens": 1, "total_tokens": 21}}))
}

struct Panicker;
#[async_trait]
impl ToolExecutor for Panicker {
    async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        panic!("tool bug")
    }
}

#[tokio::test]
async fn core_5_panicking_observer_and_tool_do_not_break_the_run() {
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("c1", "get_weather", json!({"city": "X"}))], 10), text_reply("ok", 20)]);
    let runtime = AgentRuntime::new(config(registry(Arc::new(Panicker))), model).unwrap();
    let _bad = runtime.subscribe(Arc::new(|_: &AgentEvent| panic!("observer bug")));
    let recorder = Arc::new(Recorder::default());
    let _good = runtime.subscribe(recorder.clone());
    let outcome = runtime.run("go").await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert!(runtime.messages()[2].text().unwrap().contains("tool_panicked"));
    assert_eq!(recorder.types().last().map(String::as_str), Some("run_finished"));
}

#[tokio::test]
async fn core_5_unsubscribe_stops_events() {
    let model = ScriptedModel::new(vec![text_reply("a", 1), text_reply("b", 1), text_reply("c", 1)]);
    let runtime = AgentRuntime::new(config(ToolRegistry::new()), model).unwrap();
    let recorder = Arc::new(Recorder::default());
    let sub = runtime.subscribe(recorder.clone());
    runtime.run("1").await.unwrap();
    let n = recorder.0.lock().unwrap().len();
    assert!(n > 0);
    assert!(runtime.unsubscribe(sub.id()));
    runtime.run("2").await.unwrap();
    assert_eq!(recorder.0.lock().unwrap().len(), n);
    drop(sub); // already unsubscribed: dropping is harmless

    let counted = Arc::new(Recorder::default());
    let sub2 = runtime.subscribe(counted.clone());
    drop(sub2); // dropping the handle unsubscribes
    runtime.run("3").await.unwrap();
    assert!(counted.0.lock().unwrap().is_empty());
}

#[tokio::test]
async fn core_4_max_iterations_stops_the_loop_with_history_paired() {
    let replies = (0..3).map(|i| tool_calls_reply(&[(&*format!("c{i}"), "get_weather", json!({"city": "A"}))], 10)).collect();
    let model = ScriptedModel::new(replies);
    let mut cfg = config(registry(Arc::new(WeatherTool::default())));
    cfg.max_iterations = 3;
    let runtime = AgentRuntime::new(cfg, model.clone()).unwrap();
    let outcome = runtime.run("loop").await.unwrap();
    assert_eq!(outcome.status, RunStatus::MaxIterations);
    assert_eq!(model.request_count(), 3);
    assert!(HistoryInvariants::tool_calls_paired(&runtime.messages()));
}

struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
    order: Mutex<Vec<String>>,
}
#[async_trait]
impl ToolExecutor for Gauge {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let n = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(n, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.now.fetch_sub(1, Ordering::SeqCst);
        self.order.lock().unwrap().push(call.call_id.clone());
        ToolResult::ok(call.call_id)
    }
}

#[tokio::test]
async fn core_4_tool_calls_run_concurrently_bounded_and_answer_in_call_order() {
    let calls: Vec<(String, &str, serde_json::Value)> = (0..5).map(|i| (format!("c{i}"), "get_weather", json!({"city": "A"}))).collect();
    let refs: Vec<(&str, &str, serde_json::Value)> = calls.iter().map(|(a, b, c)| (a.as_str(), *b, c.clone())).collect();
    let model = ScriptedModel::new(vec![tool_calls_reply(&refs, 10), text_reply("ok", 20)]);
    let gauge = Arc::new(Gauge { now: AtomicUsize::new(0), max: AtomicUsize::new(0), order: Mutex::default() });
    let mut cfg = config(registry(gauge.clone()));
    cfg.max_parallel_tools = 2;
    let runtime = AgentRuntime::new(cfg, model).unwrap();
    runtime.run("go").await.unwrap();
    assert_eq!(gauge.max.load(Ordering::SeqCst), 2, "two at a time, never more");
    let ids: Vec<String> = runtime.messages()[2..7]
        .iter()
        .map(|m| match m { Message::Tool { tool_call_id, .. } => tool_call_id.clone(), _ => panic!() })
        .collect();
    assert_eq!(ids, ["c0", "c1", "c2", "c3", "c4"]);
}

#[tokio::test]
async fn llm_3_model_error_fails_the_run_with_a_code_and_keeps_history_paired() {
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("c1", "get_weather", json!({"city": "A"}))], 10),
        Reply::Raw(401, json!({"error": {"message": format!("Incorrect API key provided: {API_KEY}"), "code": "invalid_api_key"}}).to_string()),
    ]);
    let runtime = AgentRuntime::new(config(registry(Arc::new(WeatherTool::default()))), model).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = runtime.subscribe(recorder.clone());
    let err = runtime.run("go").await.unwrap_err();
    assert_eq!(err.code(), "llm_auth");
    assert!(!err.to_string().contains(API_KEY));
    assert!(HistoryInvariants::tool_calls_paired(&runtime.messages()));
    let last = recorder.0.lock().unwrap().last().cloned().unwrap();
    assert!(matches!(last.kind, EventKind::RunFinished { status: RunStatus::Failed, ref error_code, .. } if error_code.map(|c| c.as_str()) == Some("llm_auth")));
}

#[tokio::test]
async fn core_4_missing_or_repeated_tool_call_ids_are_replaced() {
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("", "get_weather", json!({"city": "A"})), ("", "get_weather", json!({"city": "B"}))], 10),
        tool_calls_reply(&[("dup", "get_weather", json!({"city": "C"})), ("dup", "get_weather", json!({"city": "D"}))], 10),
        text_reply("ok", 20),
    ]);
    let runtime = AgentRuntime::new(config(registry(Arc::new(WeatherTool::default()))), model).unwrap();
    runtime.run("go").await.unwrap();
    assert!(HistoryInvariants::tool_calls_paired(&runtime.messages()));
}

#[test]
fn core_4_invalid_config_is_rejected_with_a_code() {
    let mut c = config(ToolRegistry::new());
    c.max_iterations = 0;
    assert_eq!(AgentRuntime::new(c, ScriptedModel::new(vec![])).unwrap_err().code(), "invalid_config");
    let mut r = ToolRegistry::new();
    assert_eq!(r.register(ToolDefinition::new("bad name", "", json!({})), Arc::new(Panicker)).unwrap_err().code(), "tool_name_invalid");
    r.register(weather_def(), Arc::new(Panicker)).unwrap();
    assert_eq!(r.register(weather_def(), Arc::new(Panicker)).unwrap_err().code(), "tool_name_duplicate");
}

/// Streams an SSE body chunk by chunk with pauses, recording when the last chunk went out.
struct SlowSse {
    chunks: Vec<String>,
    done: Arc<std::sync::atomic::AtomicBool>,
}

#[async_trait]
impl arkagent::HttpTransport for SlowSse {
    async fn send(&self, request: arkagent::HttpRequest, _c: arkagent::CancellationToken) -> Result<arkagent::HttpResponse, arkagent::TransportError> {
        assert!(request.stream);
        let body: serde_json::Value = serde_json::from_str(&request.body).unwrap();
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        let (tx, rx) = arkagent::BodyStream::channel();
        let chunks = self.chunks.clone();
        let done = self.done.clone();
        tokio::spawn(async move {
            for c in chunks {
                tokio::time::sleep(Duration::from_millis(15)).await;
                tx.send(c.into_bytes());
            }
            done.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        Ok(arkagent::HttpResponse { status: 200, headers: vec![], body: arkagent::HttpBody::Stream(rx) })
    }
}

#[tokio::test]
async fn llm_2_streamed_deltas_reach_observers_as_they_arrive() {
    let chunk = |delta: serde_json::Value| format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": delta}]}));
    let chunks = vec![
        chunk(json!({"role": "assistant", "reasoning_content": "thinking…"})),
        chunk(json!({"content": "Hel"})),
        chunk(json!({"content": "lo 你"})),
        chunk(json!({"content": "好"})),
        format!("data: {}\n\n", json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}})),
        "data: [DONE]\n\n".to_owned(),
    ];
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut c = config(ToolRegistry::new());
    c.model.stream = true;
    let runtime = AgentRuntime::new(c, Arc::new(SlowSse { chunks, done: done.clone() })).unwrap();
    let first_delta_before_end = Arc::new(Mutex::new(None));
    let (flag, seen) = (done.clone(), first_delta_before_end.clone());
    let _s = runtime.subscribe(Arc::new(move |e: &AgentEvent| {
        if matches!(e.kind, EventKind::TextDelta { .. }) {
            seen.lock().unwrap().get_or_insert(!flag.load(std::sync::atomic::Ordering::SeqCst));
        }
    }));
    let recorder = Arc::new(Recorder::default());
    let _r = runtime.subscribe(recorder.clone());
    let outcome = runtime.run("hi").await.unwrap();
    assert_eq!(outcome.final_text.as_deref(), Some("Hello 你好"));
    assert_eq!(*first_delta_before_end.lock().unwrap(), Some(true), "the first text delta arrived before the body ended");
    let types = recorder.types();
    assert_eq!(
        types,
        ["run_started", "model_request", "reasoning_delta", "text_delta", "text_delta", "text_delta", "model_response", "run_finished"]
    );
    assert_eq!(runtime.usages()[0].total_tokens, 16);
    let Message::Assistant { reasoning, .. } = &runtime.messages()[1] else { panic!() };
    assert_eq!(reasoning.as_deref(), Some("thinking…"), "reasoning kept apart from the answer");
}

/// PERF-1: events nobody observes are not built, yet they are counted: an observer that
/// subscribes later sees the same sequence numbers as one subscribed from the start.
#[tokio::test]
async fn perf_1_unobserved_events_still_count_in_seq() {
    let script = || two_call_script().into_iter().chain(two_call_script()).collect::<Vec<_>>();
    let seqs_of_second_run = |late: bool| async move {
        let runtime = AgentRuntime::new(config(registry(Arc::new(WeatherTool::default()))), ScriptedModel::new(script())).unwrap();
        let recorder = Arc::new(Recorder::default());
        let mut sub = (!late).then(|| runtime.subscribe(recorder.clone()));
        runtime.run("Weather in Beijing and Shenzhen?").await.unwrap();
        recorder.0.lock().unwrap().clear();
        sub.get_or_insert_with(|| runtime.subscribe(recorder.clone()));
        runtime.run("And again?").await.unwrap();
        let events = recorder.0.lock().unwrap().iter().map(|e| (e.seq, e.kind.type_name().to_owned())).collect::<Vec<_>>();
        events
    };
    let early = seqs_of_second_run(false).await;
    assert_eq!(early.len(), 11);
    assert_eq!(early[0].0, 12, "the first run emitted 11 events");
    assert_eq!(seqs_of_second_run(true).await, early);
}
