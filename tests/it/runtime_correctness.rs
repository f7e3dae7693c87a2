//! Runtime correctness found by an acceptance run from the docs alone: compression on the
//! provider's own counts (CMP-3, CMP-11), failed runs that leave the session usable
//! (CORE-4), exports at every moment (CORE-6), secrets from any source (LLM-4), tool error
//! codes the model sees (CORE-2) and non-JSON 200 bodies (LLM-3).

use std::sync::{Arc, Mutex};

use arkagent::compress::{
    apply_compression, compute_safe_split_index, CompressContext, CompressOutcome, CompressReason, CompressResult,
    ContextCompressor, ContextCompressorConfig, StagedCompression,
};
use arkagent::runtime::{Compression, CompressionTrigger};
use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, AgentState, EventKind, HistoryInvariants, Message, ModelConfig,
    ModelUsage, RunStatus, SequentialIdGenerator, ToolCall, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation,
    ToolRegistry, ToolResult,
};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::*;

fn base_config(tools: ToolRegistry) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.tools = tools;
    c.session_id = Some("s".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.model.retry = arkagent::llm::RetryPolicy::none();
    c
}

fn compressing(tools: ToolRegistry, threshold: u64, keep: usize, min: usize) -> AgentRuntimeConfig {
    let mut c = base_config(tools);
    let config = ContextCompressorConfig {
        keep_recent_message_count: keep,
        min_messages_to_summarize: min,
        ..ContextCompressorConfig::with_threshold(threshold)
    };
    c.compression = Some(Compression::Default { config, summarizer: None });
    c
}

fn weather_tools(tool: Arc<dyn ToolExecutor>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(ToolDefinition::new("get_weather", "Weather for a city", json!({"type": "object"})), tool).unwrap();
    r
}

fn compressions(events: &[AgentEvent]) -> Vec<(CompressionTrigger, CompressOutcome, String, Option<u64>)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Compression { trigger, outcome, reason, estimated_prompt_tokens, .. } => {
                Some((*trigger, *outcome, reason.code().to_owned(), *estimated_prompt_tokens))
            }
            _ => None,
        })
        .collect()
}

/// A provider whose own count is far above our estimate (it counts tool schemas, system
/// text or CJK differently): every normal request reports `reported` prompt tokens.
fn counting_provider(reported: u64) -> Arc<ScriptedModel> {
    ScriptedModel::with(move |body, _| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text("keep chatting", "said hello"), 50);
        }
        let n = body["messages"].as_array().unwrap().len();
        text_reply(&format!("answer {n}"), reported)
    })
}

// ------------------------------------------------------------ CMP-3 / CMP-11: provider counts

/// ~130 tokens by our estimate: worth a summary, far below any threshold here.
fn long_input(turn: usize) -> String {
    format!("turn {turn}: {}", "some details about the trip to Hangzhou ".repeat(12))
}

#[tokio::test]
async fn cmp_3_cmp_11_provider_count_above_threshold_compresses_though_the_estimate_is_far_below() {
    let threshold = 2_000;
    let model = counting_provider(5_000);
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), threshold, 2, 3), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    for turn in 0..3 {
        rt.run(&long_input(turn)).await.unwrap();
    }
    let requests = model.requests.lock().unwrap().clone();
    // The local estimate of every normal request is far below the threshold.
    for r in requests.iter().filter(|r| !is_summary_request(r)) {
        assert!(arkagent::compress::estimate_tokens(&r.to_string()) < threshold / 4);
    }
    let summary_at = requests.iter().position(is_summary_request).expect("a summary request was made");
    let before = requests[..summary_at].iter().rev().find(|r| !is_summary_request(r)).unwrap();
    let after = requests[summary_at + 1..].iter().find(|r| !is_summary_request(r)).expect("a request after the summary");
    let count = |r: &Value| r["messages"].as_array().unwrap().iter().filter(|m| m["role"] != "system").count();
    assert!(count(after) < count(before), "later requests are shorter: {} vs {}", count(after), count(before));
    assert_eq!(rt.episodic_memories().len(), 1, "an episode exists");
    let events = recorder.0.lock().unwrap();
    let (_, outcome, _, size) = compressions(&events).into_iter().find(|c| c.1 == CompressOutcome::Compressed).unwrap();
    assert_eq!(outcome, CompressOutcome::Compressed);
    assert!(size.unwrap() >= 5_000, "the checked size is the provider's count plus what came since: {size:?}");
    // model_request reports the same size (documented in EventKind and index.d.ts).
    let requested: Vec<u64> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ModelRequest { estimated_prompt_tokens, .. } => Some(*estimated_prompt_tokens),
            _ => None,
        })
        .collect();
    assert!(requested[0] < threshold / 4, "before any usage: the local estimate ({})", requested[0]);
    assert!(requested[1] >= 5_000, "after a reported usage: the provider's count plus what came since ({})", requested[1]);
}

#[tokio::test]
async fn cmp_3_a_chat_without_tools_compresses_after_the_final_answer() {
    let model = counting_provider(5_000);
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), 2_000, 1, 1), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let outcome = rt.run(&long_input(0)).await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    assert_eq!(outcome.final_text.as_deref(), Some("answer 1"));
    assert_eq!(rt.episodic_memories().len(), 1, "compressed within the run, after its final answer");
    let events = recorder.0.lock().unwrap();
    let types: Vec<&str> = events.iter().map(|e| e.kind.type_name()).collect();
    let compression = types.iter().position(|t| *t == "compression").unwrap();
    assert_eq!(types.last(), Some(&"run_finished"));
    assert!(compression > types.iter().position(|t| *t == "model_response").unwrap());
    assert_eq!(compressions(&events)[0].0, CompressionTrigger::PostTurn);
    assert_eq!(model.request_count(), 2, "the answer, then one summary call");
}

#[tokio::test]
async fn cmp_3_provider_count_is_forgotten_after_a_compression_and_never_loops() {
    // After a commit the old count describes the old history: the next check must not
    // compress again on it (the provider's next count decides).
    let model = ScriptedModel::with(|body, _| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text("g", "a"), 50);
        }
        text_reply("ok", 5_000)
    });
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), 2_000, 1, 1), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    for turn in 0..6 {
        rt.run(&long_input(turn)).await.unwrap();
    }
    let mut normal_since = true;
    for r in model.requests.lock().unwrap().iter() {
        if is_summary_request(r) {
            assert!(normal_since, "two summary requests without a model call between them");
            normal_since = false;
        } else {
            normal_since = true;
        }
    }
    assert!(rt.episodic_memories().len() >= 3);
}

// ------------------------------------------------------------ CMP-2 / CMP-5 reason codes

#[tokio::test]
async fn cmp_2_failed_attempt_reports_what_it_would_have_archived() {
    // COST-3: asked twice on the conversation's bytes, then from the transcript.
    let model = ScriptedModel::new((0..3).map(|_| text_reply("not a snapshot", 5)).collect());
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), 10, 2, 1), model).unwrap();
    let mut state = AgentState::new("s");
    state.history.messages = (0..8).map(|i| if i % 2 == 0 { Message::user(format!("q{i}")) } else { Message::assistant(format!("a{i}")) }).collect();
    state.usages.push(ModelUsage { prompt_tokens: 100, ..Default::default() });
    let expected = compute_safe_split_index(&state.history.messages, 2).unwrap();
    rt.import_state(&state.to_json().unwrap()).unwrap();
    let result = rt.compress_now().await.unwrap();
    assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::MalformedSummary));
    assert_eq!(result.messages_archived, expected);
    assert_eq!(expected, 6);
}

/// A foreign compressor returning whatever it is told.
struct Returning(Mutex<Option<CompressResult>>);

#[async_trait]
impl ContextCompressor for Returning {
    async fn compress(&self, _state: &AgentState, _ctx: &CompressContext) -> CompressResult {
        self.0.lock().unwrap().take().unwrap()
    }
}

fn staged(split: usize, id: &str, summary: &str) -> StagedCompression {
    StagedCompression { split_index: split, summary: summary.into(), episode_id: id.into(), created_at_ms: 1 }
}

#[tokio::test]
async fn cmp_5_bad_staged_compressions_get_their_own_reason_and_change_nothing() {
    let mut state = AgentState::new("s");
    state.history.messages = (0..6).map(|i| Message::user(format!("m{i}"))).collect();
    state.history.episodic_memories.push(arkagent::EpisodicMemory {
        id: "taken".into(),
        summary: "s".into(),
        created_at_ms: 0,
        message_count: 0,
        archived_messages: Arc::new(vec![]),
    });
    let json = state.to_json().unwrap();
    let mut no_staged = CompressResult::compressed(staged(2, "x", "sum"), None);
    no_staged.staged = None;
    let cases = vec![
        (CompressResult::compressed(staged(2, "  ", "sum"), None), CompressReason::InvalidEpisodeId, "invalid_episode_id"),
        (CompressResult::compressed(staged(2, "taken", "sum"), None), CompressReason::InvalidEpisodeId, "invalid_episode_id"),
        (CompressResult::compressed(staged(0, "x", "sum"), None), CompressReason::InvalidSplitIndex, "invalid_split_index"),
        (CompressResult::compressed(staged(7, "x", "sum"), None), CompressReason::InvalidSplitIndex, "invalid_split_index"),
        (no_staged, CompressReason::InvalidSplitIndex, "invalid_split_index"),
        (CompressResult::compressed(staged(2, "x", " "), None), CompressReason::EmptySummary, "empty_summary"),
    ];
    for (result, reason, code) in cases {
        let mut c = base_config(ToolRegistry::new());
        c.compression = Some(Compression::Custom(Arc::new(Returning(Mutex::new(Some(result))))));
        let rt = AgentRuntime::new(c, ScriptedModel::new(vec![])).unwrap();
        rt.import_state(&json).unwrap();
        let before = rt.export_state().unwrap();
        let got = rt.compress_now().await.unwrap();
        assert_eq!((got.outcome, got.reason), (CompressOutcome::Failed, reason));
        assert_eq!(got.reason.code(), code);
        assert_eq!(rt.export_state().unwrap(), before, "{code}: nothing changed");
    }
    // A split that cuts a pair keeps its code.
    let mut paired = AgentState::new("s");
    paired.history.messages = vec![
        Message::assistant_tool_calls(vec![ToolCall { id: "c".into(), name: "t".into(), arguments: "{}".into() }]),
        Message::tool_result("c", "r", false),
        Message::user("u"),
    ];
    assert_eq!(apply_compression(&mut paired, staged(1, "x", "s")), Err(CompressReason::PostCommitPairingViolation));
}

#[tokio::test]
async fn cmp_6_backing_off_after_a_failure_is_announced_in_an_event() {
    // Every summary fails; the automatic attempts that are held back say so.
    let model = ScriptedModel::with(|body, _| {
        if is_summary_request(body) {
            return text_reply("not a snapshot", 5);
        }
        text_reply("ok", 5_000)
    });
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), 2_000, 1, 1), model).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    for turn in 0..3 {
        rt.run(&format!("turn {turn}")).await.unwrap();
    }
    let events = recorder.0.lock().unwrap();
    let seen = compressions(&events);
    assert!(seen.iter().any(|c| c.1 == CompressOutcome::Failed));
    let backing: Vec<_> = seen.iter().filter(|c| c.2 == "backing_off_after_failure").collect();
    assert!(!backing.is_empty(), "{seen:?}");
    assert!(backing.iter().all(|c| c.1 == CompressOutcome::Skipped));
}

// ------------------------------------------------------------ CORE-4: failed runs

fn overflow() -> Reply {
    Reply::Raw(
        400,
        json!({"error": {"message": "This model's maximum context length is 8192 tokens", "type": "invalid_request_error", "code": "context_length_exceeded"}})
            .to_string(),
    )
}

#[tokio::test]
async fn core_4_an_input_too_large_for_the_model_does_not_wedge_the_session() {
    let huge = "word ".repeat(50_000);
    let model = ScriptedModel::with(move |body, _| {
        let messages = body["messages"].as_array().unwrap();
        if messages.iter().any(|m| m["content"].as_str().is_some_and(|c| c.len() > 100_000)) {
            return overflow();
        }
        text_reply("fine", 30)
    });
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), 64_000, 10, 3), model.clone()).unwrap();
    rt.run("first question").await.unwrap();
    let before = rt.export_state().unwrap();
    let err = rt.run(&huge).await.unwrap_err();
    assert_eq!(err.code(), "llm_context_overflow");
    assert_eq!(rt.export_state().unwrap(), before, "the failed input is taken out again");
    // The session goes on, and the next request carries no two user messages in a row.
    let outcome = rt.run("a short question").await.unwrap();
    assert_eq!(outcome.status, RunStatus::Completed);
    let last = model.requests.lock().unwrap().last().unwrap().clone();
    let roles: Vec<&str> = last["messages"].as_array().unwrap().iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert!(roles.windows(2).all(|w| w != ["user", "user"]), "{roles:?}");
    assert_eq!(last["messages"].as_array().unwrap().last().unwrap()["content"], "a short question");
}

#[tokio::test]
async fn core_4_a_failure_after_the_model_answered_keeps_the_paired_turns() {
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("c1", "get_weather", json!({"city": "A"}))], 10),
        Reply::Raw(500, "{}".into()),
    ]);
    let tool = Arc::new(WeatherTool::default());
    let rt = AgentRuntime::new(base_config(weather_tools(tool)), model).unwrap();
    let err = rt.run("weather?").await.unwrap_err();
    assert_eq!(err.code(), "llm_server");
    let messages = rt.messages();
    assert_eq!(messages.len(), 3, "input, the call, its result");
    assert!(matches!(messages.last(), Some(Message::Tool { .. })));
    assert!(HistoryInvariants::tool_calls_paired(&messages));
    // The first call failing takes only that run's input out.
    let model = ScriptedModel::new(vec![Reply::Raw(500, "{}".into())]);
    let rt = AgentRuntime::new(base_config(ToolRegistry::new()), model).unwrap();
    assert_eq!(rt.run("hello").await.unwrap_err().code(), "llm_server");
    assert!(rt.messages().is_empty());
}

// ------------------------------------------------------------ CORE-6: export at any moment

/// Exports on every event and imports the export into a fresh runtime.
struct Exporter {
    runtime: Mutex<Option<AgentRuntime>>,
    seen: Mutex<Vec<String>>,
    failures: Mutex<Vec<String>>,
}

impl Exporter {
    fn check(&self, at: &str) {
        let Some(rt) = self.runtime.lock().unwrap().clone() else { return };
        let exported = rt.export_state().unwrap();
        let fresh = AgentRuntime::new(base_config(ToolRegistry::new()), ScriptedModel::new(vec![])).unwrap();
        if let Err(e) = fresh.import_state(&exported) {
            self.failures.lock().unwrap().push(format!("{at}: {e}"));
        }
        self.seen.lock().unwrap().push(at.to_owned());
    }
}

impl arkagent::AgentObserver for Exporter {
    fn on_event(&self, event: &AgentEvent) {
        self.check(event.kind.type_name());
    }
}

struct ExportingTool(Arc<Exporter>);

#[async_trait]
impl ToolExecutor for ExportingTool {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        self.0.check("tool_executor");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        ToolResult::ok(format!("done {}", call.call_id))
    }
}

fn sse(chunks: &[Value]) -> String {
    let mut out = String::new();
    for c in chunks {
        out.push_str(&format!("data: {c}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

#[tokio::test]
async fn core_6_export_at_every_event_and_from_a_tool_is_importable() {
    let exporter = Arc::new(Exporter { runtime: Mutex::new(None), seen: Mutex::default(), failures: Mutex::default() });
    // Streamed: a text delta, two parallel tool calls, then a final answer; compression on.
    let model = ScriptedModel::with(|body, i| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text("g", "a"), 50);
        }
        let chunk = |delta: Value| json!({"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]});
        if i == 0 {
            Reply::Raw(200, sse(&[
                chunk(json!({"role": "assistant", "content": "checking"})),
                chunk(json!({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]})),
                chunk(json!({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]})),
                json!({"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 5000, "completion_tokens": 3, "total_tokens": 5003}}),
            ]))
        } else {
            Reply::Raw(200, sse(&[
                chunk(json!({"role": "assistant", "content": "all done"})),
                json!({"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 5000, "completion_tokens": 3, "total_tokens": 5003}}),
            ]))
        }
    });
    let mut c = compressing(weather_tools(Arc::new(ExportingTool(exporter.clone()))), 2_000, 1, 1);
    c.model.stream = true;
    let rt = AgentRuntime::new(c, model).unwrap();
    *exporter.runtime.lock().unwrap() = Some(rt.clone());
    let _s = rt.subscribe(exporter.clone());
    // From another thread too, while the run is in flight.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poller = {
        let (e, stop) = (exporter.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                e.check("other_thread");
            }
        })
    };
    rt.run("weather twice").await.unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    poller.join().unwrap();
    let failures = exporter.failures.lock().unwrap();
    assert!(failures.is_empty(), "{failures:?}");
    let seen = exporter.seen.lock().unwrap();
    for kind in [
        "run_started", "model_request", "text_delta", "tool_call_delta", "model_response", "tool_call_started",
        "tool_executor", "tool_call_finished", "compression", "run_finished",
    ] {
        assert!(seen.iter().any(|s| s == kind), "exported at {kind}: {:?}", seen.iter().collect::<std::collections::BTreeSet<_>>());
    }
}

#[tokio::test]
async fn core_6_an_export_taken_while_tools_run_holds_the_last_consistent_history() {
    let exported = Arc::new(Mutex::new(None));
    struct Grab(Arc<Mutex<Option<AgentRuntime>>>, Arc<Mutex<Option<String>>>);
    #[async_trait]
    impl ToolExecutor for Grab {
        async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
            let rt = self.0.lock().unwrap().clone().unwrap();
            *self.1.lock().unwrap() = Some(rt.export_state().unwrap());
            ToolResult::ok("done")
        }
    }
    let holder = Arc::new(Mutex::new(None));
    let model = ScriptedModel::new(vec![
        text_reply("hi", 10),
        tool_calls_reply(&[("c1", "get_weather", json!({})), ("c2", "get_weather", json!({}))], 20),
        text_reply("done", 30),
    ]);
    let rt = AgentRuntime::new(base_config(weather_tools(Arc::new(Grab(holder.clone(), exported.clone())))), model).unwrap();
    *holder.lock().unwrap() = Some(rt.clone());
    rt.run("hello").await.unwrap();
    let committed = rt.messages();
    rt.run("weather").await.unwrap();
    let state = AgentState::from_json(exported.lock().unwrap().as_deref().unwrap()).unwrap();
    // The user input of the second run is committed; its open turn is not.
    let mut expected = committed;
    expected.push(Message::user("weather"));
    assert_eq!(state.history.messages, expected);
    assert_eq!(state.usages.len(), 2, "the open turn's call was paid for and stays counted");
}

// ------------------------------------------------------------ LLM-4: secrets from any source

struct LeakyTool;

#[async_trait]
impl ToolExecutor for LeakyTool {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        if call.arguments["fail"] == true {
            let mut r = ToolResult::failure(format!("auth failed for key {API_KEY}"));
            r.error_code = Some("auth_failed".into());
            r
        } else {
            ToolResult::ok(format!("env: OPENAI_API_KEY={API_KEY}"))
        }
    }
}

#[tokio::test]
async fn llm_4_a_key_echoed_by_a_tool_the_model_or_the_user_never_enters_state_or_events() {
    for stream in [false, true] {
        let model = ScriptedModel::with(move |_, i| match i {
            0 => tool_calls_reply(
                &[("c1", "get_weather", json!({"fail": false})), ("c2", "get_weather", json!({"fail": true, "key": API_KEY}))],
                10,
            ),
            _ if stream => Reply::Raw(200, sse(&[
                json!({"choices": [{"index": 0, "delta": {"content": format!("your key is {API_KEY}")}}]}),
            ])),
            _ => text_reply(&format!("your key is {API_KEY}"), 20),
        });
        let mut c = base_config(weather_tools(Arc::new(LeakyTool)));
        c.model.stream = stream;
        let rt = AgentRuntime::new(c, model.clone()).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        let outcome = rt.run(&format!("my key is {API_KEY}, keep it safe")).await.unwrap();
        assert!(!outcome.final_text.unwrap().contains(API_KEY));
        let export = rt.export_state().unwrap();
        assert!(!export.contains(API_KEY), "stream={stream}: key in the exported state");
        assert!(export.contains("<redacted>"));
        for e in recorder.0.lock().unwrap().iter() {
            assert!(!format!("{e:?}").contains(API_KEY), "stream={stream}: key in event {}", e.kind.type_name());
            assert!(!serde_json::to_string(e).unwrap().contains(API_KEY));
        }
        for r in model.requests.lock().unwrap().iter() {
            assert!(!r.to_string().contains(API_KEY), "the key went back to the model");
        }
    }
}

/// BND-2 (issue 36 item 5): every text an event carries is redacted — a tool's error code
/// and its structured metadata (values and keys) too, which the catch-all arm of the old
/// match let through.
#[tokio::test]
async fn bnd_2_llm_4_a_key_in_a_tools_error_code_or_metadata_never_reaches_an_event() {
    struct Metadata;
    #[async_trait]
    impl ToolExecutor for Metadata {
        async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
            let mut r = ToolResult::failure("refused");
            r.error_code = Some(format!("bad_key_{API_KEY}"));
            r.metadata = Some(json!({"echo": [API_KEY, {"nested": format!("k={API_KEY}")}], API_KEY: 1, "n": 7}));
            r
        }
    }
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("c1", "get_weather", json!({}))], 10), text_reply("ok", 20)]);
    let rt = AgentRuntime::new(base_config(weather_tools(Arc::new(Metadata))), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    rt.run("go").await.unwrap();
    let events = recorder.0.lock().unwrap();
    let finished = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCallFinished { error_code, metadata, .. } => Some((error_code.clone(), metadata.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(finished.0.as_deref(), Some("bad_key_<redacted>"));
    assert_eq!(finished.1, Some(json!({"echo": ["<redacted>", {"nested": "k=<redacted>"}], "<redacted>": 1, "n": 7})));
    for e in events.iter() {
        assert!(!serde_json::to_string(e).unwrap().contains(API_KEY), "key in event {}", e.kind.type_name());
    }
}

/// BND-2 (issue 36 item 5): the runtime's event-redaction match names every `EventKind`
/// variant and has no catch-all arm, so a new event does not compile until someone decides
/// what in it is redacted. Read from the source: the variants from the enum's own names.
#[test]
fn bnd_2_the_event_redaction_match_names_every_variant_without_a_catch_all() {
    let source = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/runtime/agent.rs")).unwrap();
    let start = source.find("fn redact_event(").expect("the runtime redacts events in redact_event");
    let body = &source[start..start + source[start..].find("\n}\n").unwrap()];
    assert!(!body.contains("_ =>"), "redact_event has a catch-all arm");
    assert!(!body.contains(".. }") && !body.contains("..}"), "redact_event skips fields with `..`");
    let events = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/runtime/events.rs")).unwrap();
    let enum_body = &events[events.find("pub enum EventKind {").unwrap()..];
    let enum_body = &enum_body[..enum_body.find("\n}\n").unwrap()];
    let variants: Vec<&str> = enum_body
        .lines()
        .filter_map(|l| l.strip_prefix("    "))
        .filter(|l| l.chars().next().is_some_and(|c| c.is_ascii_uppercase()))
        .map(|l| l.split(|c: char| !c.is_alphanumeric()).next().unwrap())
        .collect();
    assert!(variants.len() >= 12, "{variants:?}");
    for v in variants {
        assert!(body.contains(&format!("EventKind::{v}")), "redact_event does not name EventKind::{v}");
    }
}

// ------------------------------------------------------------ CORE-2: tool error codes

#[tokio::test]
async fn core_2_the_model_sees_a_failed_tools_code_with_its_message() {
    struct Locked;
    #[async_trait]
    impl ToolExecutor for Locked {
        async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
            let mut r = ToolResult::failure("database is locked");
            r.error_code = Some("db_locked".into());
            r
        }
    }
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("c1", "get_weather", json!({}))], 10), text_reply("sorry", 20)]);
    let rt = AgentRuntime::new(base_config(weather_tools(Arc::new(Locked))), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    rt.run("go").await.unwrap();
    let requests = model.requests.lock().unwrap();
    let tool_message = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    let content: Value = serde_json::from_str(tool_message["content"].as_str().unwrap()).unwrap();
    assert_eq!(content, json!({"error": {"code": "db_locked", "message": "database is locked"}}));
    let finished = recorder.0.lock().unwrap().iter().find_map(|e| match &e.kind {
        EventKind::ToolCallFinished { error_code, is_error, content, .. } => Some((error_code.clone(), *is_error, content.clone())),
        _ => None,
    });
    // The event's content is the tool's text as it gave it; the code is `error_code`.
    assert_eq!(finished, Some((Some("db_locked".into()), true, "database is locked".into())));
    // A plain failure without a code stays as the tool wrote it.
    assert_eq!(ToolResult::failure("plain").into_model_content(), "plain");
}

// ------------------------------------------------------------ LLM-3: 200 bodies that are not JSON

#[tokio::test]
async fn llm_3_an_html_page_with_status_200_is_a_malformed_response() {
    let portal = "<!DOCTYPE html><html><body>Please log in to the hotel Wi-Fi</body></html>";
    for stream in [false, true] {
        for body in [portal.to_owned(), format!("\n\n{portal}"), "Service Unavailable".to_owned()] {
            let model = ScriptedModel::new(vec![Reply::Raw(200, body.clone())]);
            let mut c = base_config(ToolRegistry::new());
            c.model.stream = stream;
            let rt = AgentRuntime::new(c, model).unwrap();
            let err = rt.run("hi").await.unwrap_err();
            assert_eq!(err.code(), "llm_malformed_response", "stream={stream} body={body:?}");
            assert!(!err.to_string().contains("[DONE]"), "{err}");
            if body.contains("html") {
                assert!(err.to_string().contains("HTML"), "{err}");
            }
        }
    }
}

// ------------------------------------------------------------ MEM-1, NAPI-2, CMP-1: seed surface

#[tokio::test]
async fn mem_1_host_tools_get_the_read_only_memory_service_in_their_context() {
    struct Reader;
    #[async_trait]
    impl ToolExecutor for Reader {
        async fn execute(&self, _call: ToolInvocation, ctx: ToolContext) -> ToolResult {
            let episodes = ctx.episodes.expect("the runtime always gives tools the memory service");
            let listed = episodes.list_episodes();
            let found = listed.first().and_then(|e| episodes.find_episode(&e.id)).map(|e| e.summary);
            ToolResult::ok(format!("{} episode(s); first: {}", listed.len(), found.unwrap_or_default()))
        }
    }
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("c1", "get_weather", json!({}))], 10), text_reply("ok", 20)]);
    let rt = AgentRuntime::new(base_config(weather_tools(Arc::new(Reader))), model.clone()).unwrap();
    let mut state = AgentState::new("s");
    state.history.episodic_memories.push(arkagent::EpisodicMemory {
        id: "ep1".into(),
        summary: "the user wants a trip plan".into(),
        created_at_ms: 0,
        message_count: 0,
        archived_messages: Arc::new(vec![]),
    });
    rt.import_state(&state.to_json().unwrap()).unwrap();
    rt.run("go").await.unwrap();
    let requests = model.requests.lock().unwrap();
    let tool = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    assert_eq!(tool["content"], "1 episode(s); first: the user wants a trip plan");
}

#[test]
fn sub_6_child_usage_summary_from_usages_and_to_json() {
    use arkagent::subagent::ChildUsageSummary;
    let usages = r#"[{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12},{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}]"#;
    let summary = ChildUsageSummary::from_usages_json(usages).unwrap();
    assert_eq!((summary.prompt_tokens, summary.completion_tokens, summary.total_tokens, summary.call_count), (15, 3, 18, 2));
    let json: Value = serde_json::from_str(&summary.to_json()).unwrap();
    // COST-1: cached and reasoning tokens are in every sum; no price, so no costs.
    assert_eq!(
        json,
        json!({"prompt_tokens": 15, "completion_tokens": 3, "total_tokens": 18, "cached_tokens": 0, "reasoning_tokens": 0, "call_count": 2, "priced_call_count": 0})
    );
    assert_eq!(ChildUsageSummary::from_usages_json("{").unwrap_err().code(), "invalid_json");
}

/// A host compressor answering fixed JSON (or failing), recording what it was given.
struct HostCompressor {
    answer: Result<String, String>,
    seen: Mutex<Vec<(String, String)>>,
}

struct HostRef(Arc<HostCompressor>);

#[async_trait]
impl arkagent::compress::ForeignCompressorCall for HostRef {
    async fn compress_json(&self, state: String, context: String, _cancel: arkagent::CancellationToken) -> Result<String, String> {
        self.0.seen.lock().unwrap().push((state, context));
        self.0.answer.clone()
    }
}

#[tokio::test]
async fn cmp_1_a_foreign_compressor_is_validated_before_anything_commits() {
    let mut state = AgentState::new("s");
    state.history.messages = (0..6).map(|i| Message::user(format!("m{i}"))).collect();
    let json = state.to_json().unwrap();
    let cases: Vec<(Result<String, String>, CompressOutcome, &str)> = vec![
        (Ok(r#"{"outcome":"compressed","split_index":4,"summary":"four messages","usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10}}"#.into()), CompressOutcome::Compressed, "compressed"),
        (Ok(r#"{"outcome":"skipped","reason":"below_threshold"}"#.into()), CompressOutcome::Skipped, "below_threshold"),
        (Ok(r#"{"outcome":"failed","reason":"malformed_summary","split_index":4}"#.into()), CompressOutcome::Failed, "malformed_summary"),
        (Ok(r#"{"outcome":"compressed","split_index":9,"summary":"x"}"#.into()), CompressOutcome::Failed, "invalid_split_index"),
        (Ok(r#"{"outcome":"compressed","split_index":2}"#.into()), CompressOutcome::Failed, "compressor_error"),
        (Ok(r#"{"outcome":"compressed","split_index":2,"summary":"x","episode_id":""}"#.into()), CompressOutcome::Failed, "invalid_episode_id"),
        (Ok(r#"{"outcome":"done"}"#.into()), CompressOutcome::Failed, "compressor_error"),
        (Ok(r#"{"outcome":"skipped","reason":"llm_error"}"#.into()), CompressOutcome::Failed, "compressor_error"),
        (Ok(r#"{"outcome":"failed","reason":"no_such_reason"}"#.into()), CompressOutcome::Failed, "compressor_error"),
        (Ok("not json".into()), CompressOutcome::Failed, "compressor_error"),
        (Err("host threw".into()), CompressOutcome::Failed, "compressor_error"),
    ];
    for (answer, outcome, reason) in cases {
        let host = Arc::new(HostCompressor { answer, seen: Mutex::default() });
        let mut c = base_config(ToolRegistry::new());
        c.compression = Some(Compression::Custom(Arc::new(arkagent::compress::ForeignCompressor::new(HostRef(host.clone()), Some(100)))));
        let rt = AgentRuntime::new(c, ScriptedModel::new(vec![])).unwrap();
        rt.import_state(&json).unwrap();
        let before = rt.export_state().unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!((result.outcome, result.reason.code()), (outcome, reason));
        let (seen_state, seen_context) = host.seen.lock().unwrap()[0].clone();
        assert_eq!(seen_state, before, "the host got the state as exported");
        assert_eq!(serde_json::from_str::<Value>(&seen_context).unwrap(), json!({"estimated_prompt_tokens": null, "force": false}));
        if outcome == CompressOutcome::Compressed {
            assert_eq!(rt.messages().len(), 2);
            let episode = &rt.episodic_memories()[0];
            assert_eq!((episode.summary.as_str(), episode.message_count), ("four messages", 4));
            assert_eq!(rt.usages().last().unwrap().source_name(), Some(arkagent::compress::COMPRESSION_USAGE_SOURCE), "CMP-7 tag");
        } else {
            assert_eq!(rt.export_state().unwrap(), before, "{reason}: nothing changed");
        }
    }
}

#[tokio::test]
async fn llm_4_a_summary_or_an_imported_state_carrying_the_key_does_not_bring_it_in() {
    // A summarizer that echoes the key into the snapshot.
    let model = ScriptedModel::with(|body, _| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text(&format!("use key {API_KEY}"), "a"), 50);
        }
        text_reply("ok", 5_000)
    });
    let rt = AgentRuntime::new(compressing(ToolRegistry::new(), 2_000, 1, 1), model).unwrap();
    rt.run(&long_input(0)).await.unwrap();
    assert_eq!(rt.episodic_memories().len(), 1);
    assert!(!rt.episodic_memories()[0].summary.contains(API_KEY));
    assert!(!rt.export_state().unwrap().contains(API_KEY));
    // A state saved with the key in it (an older version, an edited file).
    let mut state = AgentState::new("s");
    state.history.messages = vec![Message::user(format!("key={API_KEY}")), Message::assistant("noted")];
    let rt = AgentRuntime::new(base_config(ToolRegistry::new()), ScriptedModel::new(vec![])).unwrap();
    rt.import_state(&state.to_json().unwrap()).unwrap();
    assert!(!rt.export_state().unwrap().contains(API_KEY));
    assert_eq!(rt.messages()[0], Message::user("key=<redacted>"));
}

#[tokio::test]
async fn llm_3_a_whitespace_prefix_over_the_limit_fails_whole_as_it_does_chunked() {
    // Chunked, a whitespace-only prefix past 16 MiB always failed; whole, it used to parse.
    let body = format!("{}{}", " ".repeat(arkagent::llm::MAX_EVENT_BYTES + 1), json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]
    }));
    let rt = AgentRuntime::new(base_config(ToolRegistry::new()), ScriptedModel::new(vec![Reply::Raw(200, body)])).unwrap();
    assert_eq!(rt.run("hi").await.unwrap_err().code(), "llm_malformed_response");
}
