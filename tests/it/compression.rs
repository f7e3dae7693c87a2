//! CMP-*, MEM-*, REL-1/REL-2 for compression: seed checklist, fault injection, property
//! tests, a long session, and retrieve_memory from the model's side.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::llm::TransportErrorKind;
use arkagent::compress::{
    apply_compression, compute_safe_split_index, estimate_tokens, CompressContext, CompressOutcome, CompressReason,
    CompressResult, ContextCompressor, ContextCompressorConfig, StagedCompression, COMPRESSION_USAGE_SOURCE,
};
use arkagent::runtime::Compression;
use arkagent::{
    AgentEvent, AgentRuntime, AgentRuntimeConfig, AgentState, EventKind, HistoryInvariants, Message,
    ModelUsage, SequentialIdGenerator, ToolCall, ToolRegistry, TransportError,
};
use async_trait::async_trait;
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde_json::{json, Value};

use crate::support::*;

const GOAL: &str = "find the weight-loss rate of the baguette, not the toast";

fn compression_config(threshold: u64, keep: usize) -> ContextCompressorConfig {
    ContextCompressorConfig { keep_recent_message_count: keep, ..ContextCompressorConfig::with_threshold(threshold) }
}

fn runtime_with(model: Arc<ScriptedModel>, threshold: u64, keep: usize, tools: ToolRegistry) -> AgentRuntime {
    let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.tools = tools;
    c.session_id = Some("s".into());
    c.id_generator = Arc::new(SequentialIdGenerator::new("id"));
    c.compression = Some(Compression::Default { config: compression_config(threshold, keep), summarizer: None });
    c.model.retry = arkagent::llm::RetryPolicy::none(); // fault injection: one reply per failure
    AgentRuntime::new(c, model).unwrap()
}

fn call(id: &str) -> ToolCall {
    ToolCall { id: id.into(), name: "get_weather".into(), arguments: r#"{"city":"A"}"#.into() }
}

/// A paired history of `turns` user/tool/answer rounds, then a usage at `prompt_tokens`.
fn state_json(turns: usize, prompt_tokens: u64) -> String {
    let mut messages = vec![Message::user(GOAL)];
    for t in 0..turns {
        messages.push(Message::user(format!("question {t}: {}", "details ".repeat(20))));
        messages.push(Message::assistant_tool_calls(vec![call(&format!("c{t}a")), call(&format!("c{t}b"))]));
        messages.push(Message::tool_result(format!("c{t}a"), "sunny", false));
        messages.push(Message::tool_result(format!("c{t}b"), "rainy", false));
        messages.push(Message::assistant(format!("answer {t}")));
    }
    let mut state = AgentState::new("s");
    state.history.messages = messages;
    state.usages.push(ModelUsage { prompt_tokens, completion_tokens: 10, total_tokens: prompt_tokens + 10, ..Default::default() });
    state.to_json().unwrap()
}

fn snapshot_reply(prompt: u64) -> Reply {
    text_reply(&snapshot_text(GOAL, "checked the weather"), prompt)
}

fn compression_events(events: &[AgentEvent]) -> Vec<(CompressOutcome, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Compression { outcome, reason, .. } => Some((*outcome, reason.code().to_owned())),
            _ => None,
        })
        .collect()
}

// ------------------------------------------------------------ seed checklist

#[tokio::test]
async fn cmp_3_compression_triggers_above_threshold_and_history_gets_shorter() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![snapshot_reply(900)]);
        let rt = runtime_with(model.clone(), 1000, 4, ToolRegistry::new());
        rt.import_state(&state_json(6, 1000)).unwrap();
        let before = rt.messages();
        let result = rt.compress_now().await.unwrap();
        assert_eq!((result.outcome, result.reason), (CompressOutcome::Compressed, CompressReason::Compressed));
        let after = rt.messages();
        assert!(after.len() < before.len(), "history is shorter after success");
        assert!(after.len() >= 4 && HistoryInvariants::tool_calls_paired(&after));
        let episodes = rt.episodic_memories();
        assert_eq!(episodes.len(), 1);
        assert_eq!(episodes[0].id, result.episode_id.clone().unwrap());
        // No message lost: archived + kept == original, in order.
        let mut rebuilt: Vec<Message> = episodes[0].archived_messages.to_vec();
        rebuilt.extend(after);
        assert_eq!(rebuilt, before);
        assert_eq!(episodes[0].message_count, result.messages_archived);
        // CMP-7: the usage is tagged and recorded after the commit.
        let last = rt.usages().last().cloned().unwrap();
        assert_eq!(last.source_name(), Some(COMPRESSION_USAGE_SOURCE));
        assert_eq!(last.prompt_tokens, 900);
        assert!(is_summary_request(&model.requests.lock().unwrap()[0]));
    })
    .await;
}

#[tokio::test]
async fn cmp_3_below_threshold_too_short_and_no_usage_skip_without_a_call() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![]);
        let rt = runtime_with(model.clone(), 1000, 4, ToolRegistry::new());
        assert_eq!(rt.compress_now().await.unwrap().reason, CompressReason::NoUsage);
        rt.import_state(&state_json(6, 999)).unwrap();
        assert_eq!(rt.compress_now().await.unwrap().reason, CompressReason::BelowThreshold);
        rt.import_state(&state_json(0, 5000)).unwrap();
        assert_eq!(rt.compress_now().await.unwrap().reason, CompressReason::HistoryTooShort);
        assert_eq!(model.request_count(), 0);
    })
    .await;
}

#[tokio::test]
async fn cmp_6_history_unchanged_after_failure() {
    each_wire(|| async {
        // COST-3: asked twice on the conversation's bytes, then from the transcript.
        let model = ScriptedModel::new((0..3).map(|_| text_reply("I cannot summarize that.", 900)).collect());
        let rt = runtime_with(model, 1000, 4, ToolRegistry::new());
        rt.import_state(&state_json(6, 1000)).unwrap();
        let before = rt.export_state().unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::MalformedSummary));
        assert_eq!(rt.export_state().unwrap(), before, "byte-identical after failure");
        assert!(result.usage.is_some(), "the failed call's usage is reported, not recorded");
    })
    .await;
}

#[tokio::test]
async fn cmp_4_split_point_never_cuts_a_tool_pair() {
    each_wire(|| async {
        // keep = 2 would split between the tool call and its results: the split moves earlier.
        let model = ScriptedModel::new(vec![snapshot_reply(100)]);
        let rt = runtime_with(model, 1000, 2, ToolRegistry::new());
        let mut state = AgentState::new("s");
        state.history.messages = vec![
            Message::user(GOAL),
            Message::assistant("a long first answer ".repeat(30)),
            Message::user("next question ".repeat(30)),
            Message::assistant("another long answer ".repeat(30)),
            Message::user("weather?"),
            Message::assistant_tool_calls(vec![call("x"), call("y")]),
            Message::tool_result("x", "sunny", false),
            Message::tool_result("y", "rainy", false),
        ];
        state.usages.push(ModelUsage { prompt_tokens: 5000, ..Default::default() });
        rt.import_state(&state.to_json().unwrap()).unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!(result.outcome, CompressOutcome::Compressed);
        assert_eq!(result.messages_archived, 5, "split just before the tool-call message, not between call and results");
        assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
        assert!(HistoryInvariants::tool_calls_paired(&rt.episodic_memories()[0].archived_messages));
    })
    .await;
}

#[tokio::test]
async fn cmp_7_compression_usage_does_not_trigger_another_compression() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![snapshot_reply(5000)]);
        let rt = runtime_with(model.clone(), 1000, 3, ToolRegistry::new());
        rt.import_state(&state_json(6, 1000)).unwrap();
        assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
        // The compression's own usage (5000 prompt tokens) is above the threshold; the loop
        // guard skips instead of compressing again.
        let again = rt.compress_now().await.unwrap();
        assert_eq!((again.outcome, again.reason), (CompressOutcome::Skipped, CompressReason::LastUsageIsCompression));
        assert_eq!(model.request_count(), 1);
    })
    .await;
}

#[tokio::test]
async fn cmp_2_no_safe_split_is_a_visible_skip() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![]);
        let rt = runtime_with(model, 10, 1, ToolRegistry::new());
        // A long-running call answered only at the very end: every split cuts the pair.
        let mut state = AgentState::new("s");
        state.history.messages = vec![
            Message::assistant_tool_calls(vec![call("p")]),
            Message::user(GOAL),
            Message::assistant("waiting for the tool"),
            Message::tool_result("p", "done", false),
        ];
        state.usages.push(ModelUsage { prompt_tokens: 50, ..Default::default() });
        rt.import_state(&state.to_json().unwrap()).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        let result = rt.compress_now().await.unwrap();
        assert_eq!(result.reason, CompressReason::NoSafeSplit);
        assert_eq!(compression_events(&recorder.0.lock().unwrap()), vec![(CompressOutcome::Skipped, "no_safe_split".to_owned())]);
    })
    .await;
}

// ------------------------------------------------------------ REL-1 fault injection

/// `reply` answers every request. An invalid summary is asked for on the conversation's
/// bytes twice, then from the transcript (COST-3): `requests` says how many were made.
async fn assert_failure_leaves_state_identical(reply: impl Fn() -> Reply + Send + Sync + 'static, expected: CompressReason, requests: usize) {
    let model = ScriptedModel::with(move |_, _| reply());
    let rt = runtime_with(model.clone(), 1000, 4, ToolRegistry::new());
    rt.import_state(&state_json(6, 1000)).unwrap();
    let _bad = rt.subscribe(Arc::new(|_: &AgentEvent| panic!("observer bug")));
    let before = rt.export_state().unwrap();
    let result = rt.compress_now().await.unwrap();
    assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, expected));
    assert_eq!(rt.export_state().unwrap(), before);
    assert_eq!(model.request_count(), requests);
}

#[tokio::test]
async fn rel_1_transport_error_leaves_state_identical() {
    each_wire(|| async {
        assert_failure_leaves_state_identical(|| Reply::Fail(TransportError::network("connection reset")), CompressReason::LlmError, 1).await;
    })
    .await;
}

#[tokio::test]
async fn rel_1_http_error_leaves_state_identical() {
    each_wire(|| async {
        assert_failure_leaves_state_identical(|| Reply::Raw(500, "{}".into()), CompressReason::LlmError, 1).await;
        assert_failure_leaves_state_identical(|| Reply::Raw(401, json!({"error": {"message": API_KEY}}).to_string()), CompressReason::LlmError, 1).await;
    })
    .await;
}

#[tokio::test]
async fn rel_1_empty_summary_leaves_state_identical() {
    each_wire(|| async {
        assert_failure_leaves_state_identical(|| text_reply("   ", 10), CompressReason::EmptySummary, 3).await;
    })
    .await;
}

#[tokio::test]
async fn rel_1_malformed_xml_leaves_state_identical() {
    each_wire(|| async {
        let broken = snapshot_text(GOAL, "x").replace("</state_snapshot>", "");
        assert_failure_leaves_state_identical(move || text_reply(&broken, 10), CompressReason::MalformedSummary, 3).await;
    })
    .await;
}

#[tokio::test]
async fn rel_1_missing_section_leaves_state_identical() {
    each_wire(|| async {
        let missing = snapshot_text(GOAL, "x").replace("<file_system_state>none</file_system_state>", "");
        assert_failure_leaves_state_identical(move || text_reply(&missing, 10), CompressReason::MalformedSummary, 3).await;
    })
    .await;
}

#[tokio::test]
async fn rel_1_cancellation_mid_call_leaves_state_identical() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![Reply::Hang]);
        let rt = runtime_with(model.clone(), 1000, 4, ToolRegistry::new());
        rt.import_state(&state_json(6, 1000)).unwrap();
        let before = rt.export_state().unwrap();
        let r2 = rt.clone();
        let handle = tokio::spawn(async move { r2.compress_now().await });
        while model.request_count() == 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        assert!(rt.cancel());
        let result = handle.await.unwrap().unwrap();
        assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::Cancelled));
        assert_eq!(rt.export_state().unwrap(), before);
    })
    .await;
}

/// A compressor that stages a split cutting a tool pair.
struct Cutter;
#[async_trait]
impl ContextCompressor for Cutter {
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult {
        let split = state.history.messages.iter().position(|m| !m.tool_calls().is_empty()).unwrap() + 1;
        let staged = StagedCompression { split_index: split, summary: "s".into(), episode_id: ctx.id_generator.next_id(), created_at_ms: 0 };
        CompressResult::compressed(staged, Some(ModelUsage::default()))
    }
}

struct Panicky;
#[async_trait]
impl ContextCompressor for Panicky {
    async fn compress(&self, _state: &AgentState, _ctx: &CompressContext) -> CompressResult {
        panic!("compressor bug")
    }
}

fn custom_runtime(compressor: Arc<dyn ContextCompressor>) -> AgentRuntime {
    let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m"));
    c.compression = Some(Compression::Custom(compressor));
    AgentRuntime::new(c, ScriptedModel::new(vec![])).unwrap()
}

#[tokio::test]
async fn rel_1_pairing_violation_and_panicking_compressor_leave_state_identical() {
    each_wire(|| async {
        for (compressor, reason) in [
            (Arc::new(Cutter) as Arc<dyn ContextCompressor>, CompressReason::PostCommitPairingViolation),
            (Arc::new(Panicky), CompressReason::CompressorPanicked),
        ] {
            let rt = custom_runtime(compressor);
            rt.import_state(&state_json(3, 1000)).unwrap();
            let before = rt.export_state().unwrap();
            let result = rt.compress_now().await.unwrap();
            assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, reason));
            assert_eq!(rt.export_state().unwrap(), before);
        }
    })
    .await;
}

#[tokio::test]
async fn rel_1_panicking_observer_does_not_stop_a_successful_commit() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![snapshot_reply(10)]);
        let rt = runtime_with(model, 1000, 4, ToolRegistry::new());
        rt.import_state(&state_json(6, 1000)).unwrap();
        let _bad = rt.subscribe(Arc::new(|_: &AgentEvent| panic!("observer bug")));
        assert_eq!(rt.compress_now().await.unwrap().outcome, CompressOutcome::Compressed);
        assert_eq!(rt.episodic_memories().len(), 1);
        assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
    })
    .await;
}

// ------------------------------------------------------------ REL-2 property tests

/// The seed's O(n²) loop, kept verbatim in spirit as the reference.
fn seed_split(messages: &[Message], keep: usize) -> Option<usize> {
    if messages.len() <= keep {
        return None;
    }
    let mut split = messages.len() - keep;
    while split > 0 {
        if HistoryInvariants::tool_calls_paired(&messages[..split]) && HistoryInvariants::tool_calls_paired(&messages[split..]) {
            return Some(split);
        }
        split -= 1;
    }
    None
}

/// Random histories: parallel calls, pending calls, stray and duplicate results.
fn history() -> impl Strategy<Value = Vec<Message>> {
    prop::collection::vec((0u8..10, 1usize..4, 0u8..8), 0..40).prop_map(|ops| {
        let mut out = Vec::new();
        let mut open: Vec<String> = Vec::new();
        let mut next = 0;
        for (op, width, noise) in ops {
            match op {
                0..=2 => out.push(Message::user("u")),
                3 => out.push(Message::assistant("a")),
                4..=6 => {
                    let calls: Vec<ToolCall> = (0..width)
                        .map(|_| {
                            next += 1;
                            call(&format!("t{next}"))
                        })
                        .collect();
                    open.extend(calls.iter().map(|c| c.id.clone()));
                    out.push(Message::assistant_tool_calls(calls));
                }
                7 | 8 if !open.is_empty() => {
                    // Answer in any order; sometimes leave calls pending.
                    let i = noise as usize % open.len();
                    let id = open.remove(i);
                    out.push(Message::tool_result(id, "r", false));
                }
                _ => match noise {
                    0 => out.push(Message::tool_result("stray", "r", false)),
                    1 if next > 0 => out.push(Message::tool_result(format!("t{next}"), "dup", false)),
                    _ => out.push(Message::user("u")),
                },
            }
        }
        out
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn rel_2_cmp_4_linear_split_equals_the_seed_loop(messages in history(), keep in 0usize..12) {
        prop_assert_eq!(compute_safe_split_index(&messages, keep), seed_split(&messages, keep));
    }

    #[test]
    fn rel_2_cmp_5_commit_keeps_pairing_and_loses_nothing(messages in history(), keep in 0usize..12) {
        let mut state = AgentState::new("s");
        state.history.messages = messages.clone();
        let before = state.to_json().unwrap();
        let split = compute_safe_split_index(&messages, keep);
        let staged = StagedCompression { split_index: split.unwrap_or(0), summary: "s".into(), episode_id: "e".into(), created_at_ms: 0 };
        // The message the model has yet to answer (the user's, a tool result) stays.
        let waits = messages.last().is_some_and(|m| !matches!(m, Message::Assistant { .. }));
        let accepted = split.is_some_and(|s| s + usize::from(waits) <= messages.len());
        match apply_compression(&mut state, staged) {
            Ok(()) => {
                prop_assert!(accepted);
                prop_assert!(HistoryInvariants::tool_calls_paired(&state.history.messages));
                let mut rebuilt = state.history.episodic_memories[0].archived_messages.to_vec();
                rebuilt.extend(state.history.messages.iter().cloned());
                prop_assert_eq!(rebuilt, messages);
            }
            Err(_) => {
                prop_assert!(!accepted);
                prop_assert_eq!(state.to_json().unwrap(), before);
            }
        }
    }

    #[test]
    fn rel_2_core_2_pairing_matches_a_direct_definition(messages in history()) {
        // Direct definition: every call id once, answered exactly once later; every result answers an earlier call.
        let mut ok = true;
        for (i, m) in messages.iter().enumerate() {
            for c in m.tool_calls() {
                let calls = messages.iter().flat_map(|m| m.tool_calls()).filter(|d| d.id == c.id).count();
                let later = messages[i + 1..].iter().filter(|m| matches!(m, Message::Tool { tool_call_id, .. } if *tool_call_id == c.id)).count();
                ok &= calls == 1 && later == 1;
            }
            if let Message::Tool { tool_call_id, .. } = m {
                let earlier = messages[..i].iter().flat_map(|m| m.tool_calls()).any(|c| c.id == *tool_call_id);
                let results = messages.iter().filter(|m| matches!(m, Message::Tool { tool_call_id: t, .. } if t == tool_call_id)).count();
                ok &= earlier && results == 1;
            }
        }
        prop_assert_eq!(HistoryInvariants::tool_calls_paired(&messages), ok);
    }
}

#[tokio::test]
async fn rel_2_cmp_6_failed_runtime_attempts_keep_state_byte_identical() {
    each_wire(|| async {
        // Random histories through the runtime: every failing attempt leaves the export identical.
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(64));
        let cases: Vec<Vec<Message>> = (0..64).map(|_| history().new_tree(&mut runner).unwrap().current()).collect();
        for messages in cases {
            if !HistoryInvariants::tool_calls_paired(&messages) {
                continue; // import rejects unpaired state by design
            }
            let model = ScriptedModel::with(|_, _| text_reply("not a snapshot", 5));
            let rt = runtime_with(model, 1, 2, ToolRegistry::new());
            let mut state = AgentState::new("s");
            state.history.messages = messages;
            state.usages.push(ModelUsage { prompt_tokens: 10, ..Default::default() });
            rt.import_state(&state.to_json().unwrap()).unwrap();
            let before = rt.export_state().unwrap();
            let result = rt.compress_now().await.unwrap();
            assert_ne!(result.outcome, CompressOutcome::Compressed);
            assert_eq!(rt.export_state().unwrap(), before);
        }
    })
    .await;
}

// ------------------------------------------------------------ long session

/// A model whose reported prompt tokens follow the request size, answering summary
/// requests with a snapshot that keeps the goal it was given, and one turn in ten with a
/// tool call (turn 57 returns a huge tool result).
/// `summaries` gets the size of each transcript chunk's request, `prefix_calls` counts
/// the answered requests on the conversation's bytes (COST-3).
fn long_session_model(goal_seen: Arc<AtomicUsize>, summaries: Arc<Mutex<Vec<u64>>>, prefix_calls: Arc<AtomicUsize>) -> Arc<ScriptedModel> {
    ScriptedModel::with(move |body, _| {
        let text = body.to_string();
        let prompt = estimate_tokens(&text);
        if is_summary_request(body) {
            let input = if is_transcript_summary_request(body) {
                let input = format!("{}{}", body["messages"][0]["content"].as_str().unwrap(), body["messages"][1]["content"].as_str().unwrap());
                summaries.lock().unwrap().push(estimate_tokens(&input));
                input
            } else {
                prefix_calls.fetch_add(1, Ordering::SeqCst);
                text
            };
            if input.contains(GOAL) {
                goal_seen.fetch_add(1, Ordering::SeqCst);
            }
            let goal = if input.contains(GOAL) { GOAL } else { "unknown" };
            return text_reply(&snapshot_text(goal, "many weather lookups"), prompt);
        }
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap();
        let turn: usize = last["content"].as_str().and_then(|c| c.strip_prefix("turn ")).and_then(|c| c.split(':').next()).and_then(|n| n.parse().ok()).unwrap_or(0);
        if last["role"] == "user" && turn % 10 == 7 {
            let city = if turn == 57 { "HUGE" } else { "A" };
            return tool_calls_reply(&[(&*format!("call{turn}"), "get_weather", json!({"city": city}))], prompt);
        }
        text_reply(&format!("ok {turn}"), prompt)
    })
}

struct HugeWeather;
#[async_trait]
impl arkagent::ToolExecutor for HugeWeather {
    async fn execute(&self, call: arkagent::ToolInvocation, _ctx: arkagent::ToolContext) -> arkagent::ToolResult {
        if call.arguments["city"] == "HUGE" {
            arkagent::ToolResult::ok("天气数据 ".repeat(20_000)) // ~100k tokens on its own
        } else {
            arkagent::ToolResult::ok("sunny")
        }
    }
}

#[tokio::test]
async fn cmp_9_cmp_10_long_session_compresses_repeatedly_never_loops_and_keeps_the_goal() {
    each_wire(|| async {
        let goal_seen = Arc::new(AtomicUsize::new(0));
        let summaries = Arc::new(Mutex::new(Vec::new()));
        let prefix_calls = Arc::new(AtomicUsize::new(0));
        let model = long_session_model(goal_seen.clone(), summaries.clone(), prefix_calls.clone());
        let mut tools = ToolRegistry::new();
        tools.register(arkagent::ToolDefinition::new("get_weather", "w", json!({"type": "object"})), Arc::new(HugeWeather)).unwrap();
        let window = 1500;
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "test-model"));
        c.tools = tools;
        c.session_id = Some("s".into());
        c.model.retry = arkagent::llm::RetryPolicy::none();
        // An explicit summarizer window (the default's size): a request on the
        // conversation's bytes is made only while the conversation fits it (COST-3).
        let summarizer_window = compression_config(window, 6).summarizer_window();
        let config = ContextCompressorConfig { summarizer_max_input_tokens: Some(summarizer_window), ..compression_config(window, 6) };
        c.compression = Some(Compression::Default { config, summarizer: None });
        let rt = AgentRuntime::new(c, model.clone()).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());

        rt.run(&format!("turn 0: my goal: {GOAL}")).await.unwrap();
        for turn in 1..200 {
            let outcome = rt.run(&format!("turn {turn}: {}", "more details about bread ".repeat(8))).await.unwrap();
            assert_eq!(outcome.status, arkagent::RunStatus::Completed, "turn {turn}");
            assert!(HistoryInvariants::tool_calls_paired(&rt.messages()));
        }

        let events = recorder.0.lock().unwrap();
        let compressed = compression_events(&events).iter().filter(|(o, _)| *o == CompressOutcome::Compressed).count();
        assert!(compressed >= 8, "compression happened repeatedly ({compressed})");
        let chunks = summaries.lock().unwrap().len();
        let summary_calls = chunks + prefix_calls.load(Ordering::SeqCst);
        assert_eq!(goal_seen.load(Ordering::SeqCst), summary_calls, "the goal reached every summary request (CMP-9)");
        // CMP-10: no transcript request exceeded its window, though one tool result alone did
        // (and made the conversation too big for a request on its bytes).
        assert!(summaries.lock().unwrap().iter().all(|&t| t <= summarizer_window), "{:?}", summaries.lock().unwrap());
        assert!(summary_calls > compressed, "the huge part was summarized in several chunks");
        assert!(chunks >= 2, "the huge part was summarized in chunks ({chunks})");
        // COST-3: the other compressions asked on the conversation's own bytes.
        assert!(prefix_calls.load(Ordering::SeqCst) >= compressed - 2, "{} of {compressed}", prefix_calls.load(Ordering::SeqCst));
        // Never loops: between two committed compressions there is always a normal model call.
        let mut model_call_since = true;
        for e in events.iter() {
            match &e.kind {
                EventKind::ModelRequest { .. } => model_call_since = true,
                EventKind::Compression { outcome: CompressOutcome::Compressed, .. } => {
                    assert!(model_call_since, "two compressions without a model call between them");
                    model_call_since = false;
                }
                _ => {}
            }
        }
        let requests = model.requests.lock().unwrap();
        // The latest summary is in the prompt context of every request after a compression.
        let last_normal = requests.iter().rev().find(|r| !is_summary_request(r)).unwrap();
        assert!(last_normal["messages"][0]["content"].as_str().unwrap().contains("<state_snapshot>"));
        assert!(last_normal["messages"][0]["content"].as_str().unwrap().contains(GOAL));
        // Every committed compression recorded exactly one tagged usage.
        let tagged = rt.usages().iter().filter(|u| u.source_name() == Some(COMPRESSION_USAGE_SOURCE)).count();
        assert_eq!(tagged, compressed);
    })
    .await;
}

#[tokio::test]
async fn cmp_11_preflight_compresses_chinese_text_before_an_overflow() {
    each_wire(|| async {
        // The provider reports tiny usage (e.g. a proxy that under-reports): only the
        // pre-flight estimate can see that the Chinese history reaches the threshold.
        let model = ScriptedModel::with(|body, _| {
            if is_summary_request(body) {
                return text_reply(&snapshot_text(GOAL, "讨论了法棍"), 10);
            }
            text_reply("好的", 10)
        });
        let rt = runtime_with(model.clone(), 2000, 4, ToolRegistry::new());
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        for i in 0..12 {
            rt.run(&format!("第{i}轮：请详细比较法棍和吐司的失重率，{}", "面包的水分流失很重要。".repeat(30))).await.unwrap();
        }
        let events = recorder.0.lock().unwrap();
        let preflight = events.iter().any(|e| {
            matches!(&e.kind, EventKind::Compression { trigger: arkagent::CompressionTrigger::Preflight, outcome: CompressOutcome::Compressed, .. })
        });
        assert!(preflight, "a pre-flight compression happened");
        for e in events.iter() {
            if let EventKind::ModelRequest { estimated_prompt_tokens, compression_threshold, .. } = &e.kind {
                assert_eq!(*compression_threshold, Some(2000));
                assert!(*estimated_prompt_tokens < 2000 + 400, "sent a request estimated at {estimated_prompt_tokens}");
            }
        }
    })
    .await;
}

#[tokio::test]
async fn cmp_11_context_overflow_forces_one_compression_then_retries() {
    each_wire(|| async {
        // Each format's own overflow answer (Anthropic: "prompt is too long").
        let overflow = match wire() {
            Wire::OpenAi => json!({"error": {"code": "context_length_exceeded", "message": "too long"}}),
            Wire::Anthropic => json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 208000 tokens > 200000 maximum"}}),
        };
        let model = ScriptedModel::with(move |body, i| {
            if is_summary_request(body) {
                return snapshot_reply(10);
            }
            if i == 0 {
                return Reply::Raw(400, overflow.to_string());
            }
            text_reply("fine now", 10)
        });
        let rt = runtime_with(model.clone(), 1_000_000, 4, ToolRegistry::new());
        rt.import_state(&state_json(6, 10)).unwrap();
        let outcome = rt.run("and now?").await.unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("fine now"));
        assert_eq!(rt.episodic_memories().len(), 1);
        assert_eq!(model.request_count(), 3);
    })
    .await;
}

// ------------------------------------------------------------ MEM

async fn retrieve(rt: &AgentRuntime, args: Value) -> (bool, Value) {
    let tool = arkagent::memory::RetrieveMemoryTool::new(rt.memory());
    let call = arkagent::ToolInvocation { call_id: "r".into(), name: "retrieve_memory".into(), arguments: args };
    let ctx = arkagent::ToolContext { session_id: "s".into(), run_id: "r".into(), cancel: Default::default(), abort: Default::default(), memory: rt.working_memory(), episodes: Some(rt.memory()) };
    let result = arkagent::ToolExecutor::execute(&tool, call, ctx).await;
    (result.is_error, serde_json::from_str(&result.content).unwrap())
}

#[tokio::test]
async fn mem_2_retrieve_memory_rejects_bad_arguments_with_codes() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![snapshot_reply(10)]);
        let rt = runtime_with(model, 1000, 4, ToolRegistry::new());
        rt.import_state(&state_json(6, 1000)).unwrap();
        rt.compress_now().await.unwrap();
        for (args, code) in [
            (json!({"snapshot_id": ""}), "invalid_snapshot_id"),
            (json!({"snapshot_id": "   "}), "invalid_snapshot_id"),
            (json!({"snapshot_id": 5}), "invalid_snapshot_id"),
            (json!({"offset": -1}), "invalid_offset"),
            (json!({"offset": 1.5}), "invalid_offset"),
            (json!({"offset": "3"}), "invalid_offset"),
            (json!({"limit": 101}), "invalid_limit"),
            (json!({"limit": 0}), "invalid_limit"),
            (json!({"snapshot_id": "nope"}), "snapshot_not_found"),
        ] {
            let (is_error, body) = retrieve(&rt, args.clone()).await;
            assert!(is_error, "{args}");
            assert_eq!(body["error"]["code"], code, "{args}");
        }
    })
    .await;
}

#[tokio::test]
async fn mem_2_paging_returns_every_archived_message_exactly_once() {
    each_wire(|| async {
        let model = ScriptedModel::with(|_, _| snapshot_reply(10));
        let rt = runtime_with(model, 1000, 4, ToolRegistry::new());
        rt.import_state(&state_json(12, 1000)).unwrap();
        rt.compress_now().await.unwrap();
        let episode = rt.episodic_memories()[0].clone();
        let (_, list) = retrieve(&rt, json!({})).await;
        assert_eq!(list["total"], 1);
        assert_eq!(list["episodes"][0]["snapshot_id"], episode.id);
        let mut seen: Vec<Value> = Vec::new();
        let mut offset = Some(0u64);
        while let Some(o) = offset {
            let (is_error, page) = retrieve(&rt, json!({"snapshot_id": episode.id, "offset": o, "limit": 7})).await;
            assert!(!is_error);
            assert_eq!(page["summary"], episode.summary);
            seen.extend(page["messages"].as_array().unwrap().iter().cloned());
            offset = page["next_offset"].as_u64();
        }
        let expected: Vec<Value> = episode.archived_messages.iter().map(|m| serde_json::to_value(m).unwrap()).collect();
        assert_eq!(seen, expected);
        let (_, default_page) = retrieve(&rt, json!({"snapshot_id": episode.id})).await;
        assert_eq!(default_page["messages"].as_array().unwrap().len(), 20.min(expected.len()));
    })
    .await;
}

#[tokio::test]
async fn mem_1_memory_service_reads_live_state_after_compress_and_import() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![snapshot_reply(10)]);
        let rt = runtime_with(model, 1000, 4, ToolRegistry::new());
        let memory = rt.memory();
        assert!(memory.list_episodes().is_empty());
        rt.import_state(&state_json(6, 1000)).unwrap();
        rt.compress_now().await.unwrap();
        let id = memory.list_episodes()[0].id.clone();
        assert!(memory.find_episode(&id).is_some());
        let exported = rt.export_state().unwrap();
        rt.import_state(&state_json(1, 1)).unwrap();
        assert!(memory.list_episodes().is_empty());
        rt.import_state(&exported).unwrap();
        assert_eq!(memory.list_episodes()[0].id, id);
        assert!(rt.tool_definitions().iter().any(|t| t.name == "retrieve_memory"), "registered with a compressor");
    })
    .await;
}

#[test]
fn mem_3_imported_episode_ids_must_be_unique_and_non_empty() {
    let rt = custom_runtime(Arc::new(Cutter));
    let mut state = AgentState::new("s");
    let episode = arkagent::EpisodicMemory { id: "".into(), summary: "x".into(), created_at_ms: 0, message_count: 0, archived_messages: Default::default() };
    state.history.episodic_memories = vec![episode.clone()];
    assert_eq!(rt.import_state(&state.to_json().unwrap()).unwrap_err().code(), "invalid_state");
    let named = arkagent::EpisodicMemory { id: "e1".into(), ..episode };
    state.history.episodic_memories = vec![named.clone(), named];
    assert_eq!(rt.import_state(&state.to_json().unwrap()).unwrap_err().code(), "invalid_state");
}

#[test]
fn cmp_11_estimator_counts_chinese_per_character() {
    assert_eq!(estimate_tokens(""), 0);
    assert_eq!(estimate_tokens("hello world!"), 3);
    assert_eq!(estimate_tokens("你好，世界"), 5);
    assert_eq!(estimate_tokens("😀😀"), 1);
    let _ = TransportErrorKind::Network;
}

#[tokio::test]
async fn cmp_6_failed_automatic_attempts_back_off_instead_of_paying_every_turn() {
    each_wire(|| async {
        let summaries = Arc::new(AtomicUsize::new(0));
        let count = summaries.clone();
        let model = ScriptedModel::with(move |body, _| {
            // One transcript request per attempt (after two on the conversation's bytes).
            if is_transcript_summary_request(body) {
                count.fetch_add(1, Ordering::SeqCst);
            }
            if is_summary_request(body) {
                return text_reply("not a snapshot", 50);
            }
            text_reply("fine", 100)
        });
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "test-model"));
        c.session_id = Some("s".into());
        c.model.retry = arkagent::llm::RetryPolicy::none();
        let config = ContextCompressorConfig { total_token_threshold: 10, keep_recent_message_count: 2, summarizer_max_input_tokens: Some(8000), ..Default::default() };
        c.compression = Some(Compression::Default { config, summarizer: None });
        let rt = AgentRuntime::new(c, model).unwrap();
        rt.import_state(&state_json(1, 100)).unwrap();
        let before = rt.export_state().unwrap();
        for turn in 0..7 {
            rt.run(&format!("turn {turn}")).await.unwrap();
        }
        // Without a back-off every pre-flight and post-turn check (14) would pay a summary
        // call; with it: turn 1 pre-flight, then one attempt per 3 model calls.
        assert_eq!(summaries.load(Ordering::SeqCst), 3);
        assert!(rt.episodic_memories().is_empty());
        assert!(rt.export_state().unwrap().len() > before.len(), "turns still recorded");
        // A manual attempt is never held back.
        rt.compress_now().await.unwrap();
        assert_eq!(summaries.load(Ordering::SeqCst), 4);
    })
    .await;
}

#[tokio::test]
async fn cmp_10_a_summarizer_window_too_small_fails_with_its_own_reason_and_no_call() {
    each_wire(|| async {
        // The smallest window the config accepts, and a previous snapshot that fills it: no
        // chunk fits next to it, so the attempt fails before any call.
        let model = ScriptedModel::new(vec![]);
        let mut config = compression_config(100, 4);
        config.summarizer_max_input_tokens = Some(config.min_summarizer_window());
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "test-model"));
        c.compression = Some(Compression::Default { config, summarizer: None });
        let rt = AgentRuntime::new(c, model.clone()).unwrap();
        let mut state: AgentState = serde_json::from_str(&state_json(6, 1000)).unwrap();
        state.history.episodic_memories.push(arkagent::EpisodicMemory {
            id: "ep0".into(),
            summary: snapshot_text(&"goal ".repeat(400), "a"),
            created_at_ms: 1,
            message_count: 0,
            archived_messages: Arc::new(vec![]),
        });
        rt.import_state(&state.to_json().unwrap()).unwrap();
        let before = rt.export_state().unwrap();
        let result = rt.compress_now().await.unwrap();
        assert_eq!((result.outcome, result.reason), (CompressOutcome::Failed, CompressReason::SummarizerWindowTooSmall));
        assert_eq!(result.reason.code(), "summarizer_window_too_small");
        assert!(result.messages_archived > 0, "a failed attempt reports what it would have archived");
        assert_eq!(model.request_count(), 0);
        assert_eq!(rt.export_state().unwrap(), before);
    })
    .await;
}

#[test]
fn cmp_3_summarizer_window_defaults_to_a_working_size_and_too_small_is_invalid_config() {
    // Any threshold the config accepts gets a default window that holds the prompt and chunks.
    for threshold in [1, 10, 100, 1_000, 4_096, 64_000, 1_000_000] {
        let config = ContextCompressorConfig::with_threshold(threshold);
        assert_eq!(config.summarizer_max_input_tokens, None, "unset by default");
        assert_eq!(config.summarizer_window(), threshold.max(4096), "documented default: max(threshold, 4096)");
        assert!(config.summarizer_window() >= config.min_summarizer_window() + 1_000, "threshold {threshold}");
        assert!(config.summarizer_window() >= threshold);
        let json = format!(
            r#"{{"model":{{"base_url":"http://h/v1","api_key":"k","model":"m"}},"compression":{{"total_token_threshold":{threshold}}}}}"#
        );
        let parsed = AgentRuntimeConfig::from_json(&json, ToolRegistry::new()).unwrap();
        let Some(Compression::Default { config: c, .. }) = parsed.compression else { panic!("compression") };
        assert_eq!(c.summarizer_max_input_tokens, config.summarizer_max_input_tokens);
        assert_eq!(c.summarizer_window(), config.summarizer_window());
    }
    // An explicit window that cannot hold the summary prompt and a chunk is refused.
    let too_small = r#"{"model":{"base_url":"http://h/v1","api_key":"k","model":"m"},"compression":{"summarizer_max_input_tokens":300}}"#;
    let err = AgentRuntimeConfig::from_json(too_small, ToolRegistry::new()).unwrap_err();
    assert_eq!(err.code(), "invalid_config");
    assert!(err.to_string().contains("summarizer_max_input_tokens"), "{err}");
    let mut c = AgentRuntimeConfig::new(model_config("http://h/v1", "k", "m"));
    c.compression = Some(Compression::Default {
        config: ContextCompressorConfig { summarizer_max_input_tokens: Some(10), ..ContextCompressorConfig::with_threshold(10) },
        summarizer: None,
    });
    assert_eq!(AgentRuntime::new(c, ScriptedModel::new(vec![])).unwrap_err().code(), "invalid_config");
}

// ------------------------------------------------------------ CMP-4: what the next call answers

/// A custom compressor that archives every message it is shown.
struct ArchiveAll;
#[async_trait]
impl ContextCompressor for ArchiveAll {
    async fn compress(&self, state: &AgentState, ctx: &CompressContext) -> CompressResult {
        let staged = StagedCompression { split_index: state.history.messages.len(), summary: "s".into(), episode_id: ctx.id_generator.next_id(), created_at_ms: 0 };
        CompressResult::compressed(staged, None)
    }
}

/// The texts of the user turns of a request (OpenAI view).
fn user_texts(body: &Value) -> Vec<String> {
    body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "user").map(|m| m["content"].to_string()).collect()
}

#[tokio::test]
async fn cmp_4_keep_zero_still_sends_the_users_input_after_a_preflight_compression() {
    each_wire(|| async {
        let model = ScriptedModel::with(|body, _| {
            if is_summary_request(body) {
                return snapshot_reply(10);
            }
            text_reply("the answer", 10)
        });
        // keep_recent_message_count 0: everything before the user's input may go.
        let rt = runtime_with(model.clone(), 10, 0, ToolRegistry::new());
        rt.import_state(&state_json(3, 1000)).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        let outcome = rt.run("QUESTION-7: and the toast?").await.unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("the answer"));
        assert!(compression_events(&recorder.0.lock().unwrap()).contains(&(CompressOutcome::Compressed, "compressed".into())));
        let requests = model.requests.lock().unwrap();
        let call = requests.iter().find(|b| !is_summary_request(b)).expect("the run's model call");
        let users = user_texts(call);
        assert_eq!(users.len(), 1, "only the user's input is left: {users:?}");
        assert!(users[0].contains("QUESTION-7"), "the model is asked the user's question: {call}");
        // The archived part is everything before it, in one episode.
        assert_eq!(rt.episodic_memories()[0].message_count, 1 + 3 * 5);
        assert_eq!(rt.messages()[0], Message::user("QUESTION-7: and the toast?"));
    })
    .await;
}

#[tokio::test]
async fn cmp_4_a_custom_split_that_takes_the_unanswered_input_is_refused_and_changes_nothing() {
    each_wire(|| async {
        let model = ScriptedModel::new(vec![text_reply("the answer", 10)]);
        let mut c = AgentRuntimeConfig::new(model_config("http://127.0.0.1:9/v1", API_KEY, "m"));
        c.compression = Some(Compression::Custom(Arc::new(ArchiveAll)));
        let rt = AgentRuntime::new(c, model.clone()).unwrap();
        rt.import_state(&state_json(2, 1000)).unwrap();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        let outcome = rt.run("QUESTION-8").await.unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("the answer"));
        // Before the call: refused (the model would have been asked nothing), and the
        // call asks the user's question.
        let events = compression_events(&recorder.0.lock().unwrap());
        assert_eq!(events[0], (CompressOutcome::Failed, "invalid_split_index".into()), "{events:?}");
        assert!(rt.episodic_memories().is_empty());
        let requests = model.requests.lock().unwrap().clone();
        assert_eq!(requests.len(), 1);
        assert!(user_texts(&requests[0]).last().is_some_and(|t| t.contains("QUESTION-8")), "{}", requests[0]);
        // Idle, the history ends with the model's answer: the whole of it may go.
        let result = rt.compress_now().await.unwrap();
        assert_eq!((result.outcome, result.messages_archived), (CompressOutcome::Compressed, 2 * 5 + 1 + 2));
        assert!(rt.messages().is_empty());
    })
    .await;
}

#[test]
fn cmp_4_apply_compression_keeps_the_message_the_model_has_yet_to_answer() {
    let staged = |split: usize| StagedCompression { split_index: split, summary: "s".into(), episode_id: format!("e{split}"), created_at_ms: 0 };
    let mut state = AgentState::new("s");
    state.history.messages = vec![Message::user("a"), Message::assistant("b"), Message::user("c")];
    let before = state.to_json().unwrap();
    assert_eq!(apply_compression(&mut state, staged(3)), Err(CompressReason::InvalidSplitIndex));
    assert_eq!(state.to_json().unwrap(), before, "nothing changed");
    state.history.messages.push(Message::assistant_tool_calls(vec![call("t1")]));
    state.history.messages.push(Message::tool_result("t1", "ok", false));
    assert_eq!(apply_compression(&mut state, staged(5)), Err(CompressReason::InvalidSplitIndex), "tool results wait for the model too");
    assert_eq!(apply_compression(&mut state, staged(3)), Ok(()));
    assert_eq!(state.history.messages.len(), 2);
    // Ending with the model's answer, the whole history may go.
    state.history.messages.push(Message::assistant("done"));
    assert_eq!(apply_compression(&mut state, StagedCompression { episode_id: "all".into(), ..staged(3) }), Ok(()));
    assert!(state.history.messages.is_empty());
}
