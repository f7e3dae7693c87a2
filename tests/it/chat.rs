//! CHAT-1..CHAT-3 through the Rust API, in every wire format: rewind, regenerate, edit and
//! resend, fork — named by the run ids the app gets; refused with stable codes; written to
//! the store as one change; totals that keep what dropped turns spent; and requests that
//! start with the bytes the provider has already seen (COST-4's checks, tests/it/prefix.rs).

use std::sync::Arc;

use arkagent::compress::ContextCompressorConfig;
use arkagent::runtime::Compression;
use arkagent::store::SessionStore;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, AgentState, ErrorCode, InMemorySessionStore, Message, ModelConfig, RunStatus, SequentialIdGenerator,
    SqliteStore, ToolDefinition, ToolRegistry,
};
use serde_json::{json, Value};

use crate::prefix::{assert_extends, assert_same_request, view, Recording};
use crate::store::temp_dir;
use crate::support::*;

pub fn config(store: Option<Arc<dyn SessionStore>>, session: &str) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(speak(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "chat-model")));
    c.system_prompt = "You are a weather assistant.".into();
    let mut tools = ToolRegistry::new();
    tools
        .register(
            ToolDefinition::new("get_weather", "Weather for a city", json!({"type": "object", "properties": {"city": {"type": "string"}}})),
            Arc::new(WeatherTool::default()),
        )
        .unwrap();
    tools
        .register(ToolDefinition::new("pay", "Pays", json!({"type": "object"})).with_approval(), Arc::new(WeatherTool::default()))
        .unwrap();
    c.tools = tools;
    c.session_id = Some(session.into());
    c.id_generator = Arc::new(SequentialIdGenerator::new(session));
    c.model.retry = arkagent::llm::RetryPolicy::none();
    c.store = store;
    c
}

/// Answers from the request alone: `task N` (or `pay N`) gets one tool call, then a text
/// naming the task and how many answers the conversation already had (so a regenerated
/// answer is told apart only by the request it answers).
pub fn model() -> Arc<ScriptedModel> {
    ScriptedModel::with(|body: &Value, _| {
        let size = body.to_string().len() as u64 / 4;
        let messages = body["messages"].as_array().unwrap();
        let task = messages.iter().rev().find(|m| m["role"] == "user").and_then(|m| m["content"].as_str()).unwrap_or_default().to_owned();
        if messages.last().unwrap()["role"] == "user" {
            let (tool, n) = match task.strip_prefix("pay ") {
                Some(n) => ("pay", n.to_owned()),
                None => ("get_weather", task.trim_start_matches("task ").to_owned()),
            };
            return tool_calls_reply(&[(&format!("w-{n}"), tool, json!({"city": format!("city {n}")}))], size);
        }
        text_reply(&format!("answer to {task}"), size)
    })
}

fn code(e: arkagent::ArkAgentError) -> ErrorCode {
    e.code()
}

async fn session(store: Option<Arc<dyn SessionStore>>, id: &str) -> (AgentRuntime, Arc<Recording<ScriptedModel>>, Vec<String>) {
    let transport = Arc::new(Recording::new(model()));
    let rt = AgentRuntime::new(config(store, id), transport.clone()).unwrap();
    let mut runs = Vec::new();
    for i in 1..=3 {
        runs.push(rt.run(&format!("task {i}")).await.unwrap().run_id);
    }
    (rt, transport, runs)
}

#[tokio::test]
async fn chat_3_regenerate_sends_the_same_request_again_and_replaces_the_answer() {
    each_wire(|| async {
        let (rt, transport, runs) = session(None, "regen").await;
        let before = rt.messages();
        let bodies = transport.bodies();
        // Run 3's first request (bodies 4 and 5 are run 3's two calls).
        let outcome = rt.regenerate(&runs[2]).await.unwrap();
        assert_eq!(outcome.status, RunStatus::Completed);
        assert_ne!(outcome.run_id, runs[2], "a regenerated run has a new id");
        let after = transport.bodies();
        assert_eq!(after.len(), bodies.len() + 2);
        // CHAT-3: the same bytes as run 3's first request: the provider's cache serves them.
        assert_same_request(&view().normalise(&bodies[4]), &view().normalise(&after[6]));
        assert_eq!(rt.messages(), before, "same answers to the same requests: the history is as it was");
        // Run 3 is gone; the regenerated run can be named in its place.
        assert_eq!(code(rt.rewind(&runs[2]).unwrap_err()), ErrorCode::UnknownRun);
        let ids: Vec<String> = rt.state().runs.iter().map(|m| m.run_id.clone()).collect();
        assert_eq!(ids, vec![runs[0].clone(), runs[1].clone(), outcome.run_id.clone()]);
    })
    .await;
}

#[tokio::test]
async fn chat_3_edit_and_resend_puts_the_new_input_in_place_and_keeps_the_prefix() {
    each_wire(|| async {
        let (rt, transport, runs) = session(None, "edit").await;
        let bodies = transport.bodies();
        let outcome = rt.edit_and_resend(&runs[1], "task 9").await.unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("answer to task 9"));
        let after = transport.bodies();
        // The first request after the edit extends run 1's last request (CHAT-3).
        assert_extends(view(), &bodies[1], &after[6]);
        let users: Vec<String> =
            rt.messages().iter().filter(|m| matches!(m, Message::User { .. })).map(|m| m.text().unwrap().to_owned()).collect();
        assert_eq!(users, ["task 1", "task 9"]);
        assert_eq!(rt.messages().len(), 8);
    })
    .await;
}

#[tokio::test]
async fn chat_1_rewind_returns_what_it_dropped_and_emits_session_rewound() {
    each_wire(|| async {
        let (rt, _, runs) = session(None, "rewind").await;
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        let r = rt.rewind(&runs[1]).unwrap();
        assert_eq!(r.run_id, runs[1]);
        assert_eq!(r.dropped_run_ids, vec![runs[1].clone(), runs[2].clone()]);
        assert_eq!((r.input_text.as_str(), r.messages_removed, r.message_count), ("task 2", 8, 4));
        assert_eq!(rt.messages().len(), 4);
        assert_eq!(recorder.types(), ["session_rewound"], "no store: no session_committed");
        let event = serde_json::to_value(&recorder.0.lock().unwrap()[0]).unwrap();
        assert_eq!(event["rewound_run_id"], runs[1].as_str());
        assert_eq!(event["run_id"], "");
        assert_eq!(event["discarded"]["call_count"], 4);
        // The JSON every surface gets.
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["input_text"], "task 2");
        assert!(json.get("input").is_none());
        // Rewound runs are gone; the earlier one can still be named.
        assert_eq!(code(rt.rewind(&runs[2]).unwrap_err()), ErrorCode::UnknownRun);
        rt.rewind(&runs[0]).unwrap();
        assert!(rt.messages().is_empty());
        assert!(rt.state().runs.is_empty());
    })
    .await;
}

#[tokio::test]
async fn chat_1_refusals_have_stable_codes_and_change_nothing() {
    let (rt, _, runs) = session(None, "refuse").await;
    let state = rt.state();
    assert_eq!(code(rt.rewind("no-such-run").unwrap_err()), ErrorCode::UnknownRun);
    assert_eq!(code(rt.regenerate("no-such-run").await.unwrap_err()), ErrorCode::UnknownRun);
    assert_eq!(code(rt.edit_and_resend("", "x").await.unwrap_err()), ErrorCode::UnknownRun);
    // While a run is active (its slot claimed): run_in_progress.
    let running = rt.start_run("task 4").unwrap();
    assert_eq!(code(rt.rewind(&runs[0]).unwrap_err()), ErrorCode::RunInProgress);
    assert_eq!(code(rt.regenerate(&runs[0]).await.unwrap_err()), ErrorCode::RunInProgress);
    assert_eq!(code(rt.fork("other", None).unwrap_err()), ErrorCode::RunInProgress);
    drop(running);
    assert_eq!(rt.state(), state, "refusals changed nothing");
    // A fork needs an id of its own.
    assert_eq!(code(rt.fork("refuse", None).unwrap_err()), ErrorCode::SessionExists);
    assert_eq!(code(rt.fork(" ", None).unwrap_err()), ErrorCode::InvalidConfig);
    assert_eq!(code(rt.fork("other", Some("no-such-run")).unwrap_err()), ErrorCode::UnknownRun);
    assert_eq!(rt.state(), state);
}

#[tokio::test]
async fn chat_1_a_point_inside_a_compression_is_refused_with_run_compressed() {
    let transport = Arc::new(Recording::new(ScriptedModel::with(|body: &Value, i| {
        if is_summary_request(body) {
            return text_reply(&snapshot_text("weather", "looked it up"), 10);
        }
        let _ = i;
        text_reply(&"It is sunny and warm, with a light wind from the west. ".repeat(8), body.to_string().len() as u64 / 4)
    })));
    let mut c = config(None, "compressed");
    // A low threshold: the runs compress as they go, keeping the last run's two messages.
    let cfg = ContextCompressorConfig { keep_recent_message_count: 2, min_messages_to_summarize: 2, ..ContextCompressorConfig::with_threshold(50) };
    c.compression = Some(Compression::Default { config: cfg, summarizer: None });
    let rt = AgentRuntime::new(c, transport).unwrap();
    let mut runs = Vec::new();
    for i in 1..=4 {
        runs.push(rt.run(&format!("hello {i}: {}", "what is the weather like in the city today? ".repeat(8))).await.unwrap().run_id);
    }
    let r = rt.compress_now().await.unwrap();
    assert!(!rt.episodic_memories().is_empty(), "the runs compressed: {r:?}");
    let state = rt.state();
    assert_eq!(code(rt.rewind(&runs[0]).unwrap_err()), ErrorCode::RunCompressed);
    assert_eq!(code(rt.regenerate(&runs[1]).await.unwrap_err()), ErrorCode::RunCompressed);
    // Forking through run 1 would cut inside the episode; through the last run it does not.
    assert_eq!(code(rt.fork("f", Some(&runs[0])).unwrap_err()), ErrorCode::RunCompressed);
    assert_eq!(rt.state(), state);
    // Through run 3, whose own input is archived, the cut is run 4's input, which is live.
    assert_eq!(code(rt.rewind(&runs[2]).unwrap_err()), ErrorCode::RunCompressed);
    let live = rt.messages().len();
    let through_3: AgentState = serde_json::from_str(&rt.fork("f3", Some(&runs[2])).unwrap()).unwrap();
    assert_eq!(through_3.runs.len(), 3);
    assert_eq!(through_3.history.messages.len(), live - 2, "all but run 4's input and answer");
    assert_eq!(rt.state(), state);
    // The live runs can be rewound; the episode stays, and so does the compression's cost.
    let episodes = rt.episodic_memories();
    let r = rt.rewind(&runs[3]).unwrap();
    assert_eq!(rt.episodic_memories(), episodes);
    assert_eq!(r.discarded.call_count, 1, "one model call dropped; the compression's summary stays");
    let fork: AgentState = serde_json::from_str(&rt.fork("f", None).unwrap()).unwrap();
    assert_eq!(fork.history.episodic_memories, rt.episodic_memories(), "episodes are copied into a fork");
}

#[tokio::test]
async fn chat_3_totals_keep_what_dropped_turns_spent_counted_once() {
    let (rt, _, runs) = session(None, "totals").await;
    let before = rt.total_usage();
    assert_eq!(before.discarded.call_count, 0);
    let calibration = rt.state().token_calibration;
    assert!(!calibration.is_empty(), "the provider's counts were learned");
    let first = rt.rewind(&runs[2]).unwrap();
    assert_eq!(rt.state().token_calibration, calibration, "CHAT-3: the calibration keeps what it learned");
    let fork: AgentState = serde_json::from_str(&rt.fork("totals-fork", None).unwrap()).unwrap();
    assert_eq!(fork.token_calibration, calibration, "and a fork starts with it");
    let after = rt.total_usage();
    assert_eq!(after.total, before.total, "the provider billed the dropped turns: the total stays");
    assert_eq!(after.discarded, first.discarded);
    assert_eq!(first.discarded.call_count, 2);
    let regenerated = rt.regenerate(&runs[1]).await.unwrap();
    let again = rt.total_usage();
    assert_eq!(again.total.call_count, before.total.call_count + 2);
    // Run 2's two calls are discarded now too; run 3's are not counted twice.
    assert_eq!(again.discarded.call_count, 4);
    // The runs' own usages still add up to the total.
    assert_eq!(regenerated.usage.call_count, 2);
    let flagged = rt.usages().iter().filter(|u| u.discarded).count();
    assert_eq!(flagged, 4);
    // Exported and imported, the flags and the marks survive.
    let json = rt.export_state().unwrap();
    let other = AgentRuntime::new(config(None, "totals-2"), model()).unwrap();
    other.import_state(&json).unwrap();
    assert_eq!(other.total_usage(), rt.total_usage());
    other.rewind(&runs[0]).unwrap();
    assert_eq!(other.total_usage().discarded.call_count, 8);
}

#[tokio::test]
async fn chat_1_a_turn_waiting_for_approval_is_dropped_with_its_run() {
    each_wire(|| async {
        let (rt, _, _) = session(None, "paused").await;
        let paused = rt.run("pay 7").await.unwrap();
        assert_eq!(paused.status, RunStatus::AwaitingApproval);
        // A new run is refused while it waits; a regenerate asks the model again instead.
        assert_eq!(code(rt.run("task 5").await.unwrap_err()), ErrorCode::ApprovalPending);
        let again = rt.regenerate(&paused.run_id).await.unwrap();
        assert_eq!(again.status, RunStatus::AwaitingApproval);
        assert_eq!(rt.pending_approvals().len(), 1);
        let r = rt.rewind(&again.run_id).unwrap();
        assert_eq!(r.message_count, 12, "the input and the paused answer are gone");
        assert!(rt.pending_approvals().is_empty());
        assert!(rt.state().pending_turn.is_none());
        assert_eq!(rt.run("task 5").await.unwrap().status, RunStatus::Completed);
    })
    .await;
}

#[tokio::test]
async fn chat_1_a_rewind_is_written_to_the_store_and_survives_a_restart() {
    each_wire(|| async {
        let dir = temp_dir("chat-store");
        let path = dir.join("chat.db");
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(&path).unwrap());
        let (rt, _, runs) = session(Some(store.clone()), "stored").await;
        let tokens = store.list_sessions().unwrap()[0].total_tokens;
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        rt.rewind(&runs[1]).unwrap();
        assert_eq!(recorder.types(), ["session_rewound", "session_committed"]);
        let expected = rt.state();
        drop(rt);
        let listed = &store.list_sessions().unwrap()[0];
        assert_eq!((listed.message_count, listed.total_tokens), (4, tokens), "rows gone, tokens still counted");
        let resumed = AgentRuntime::new(config(Some(store.clone()), "stored"), model()).unwrap();
        assert_eq!(resumed.state(), expected, "messages, marks and discarded flags as rewound");
        // The marks were stored: the resumed session can regenerate run 1.
        resumed.regenerate(&runs[0]).await.unwrap();
        assert_eq!(resumed.total_usage().discarded.call_count, 6);
        drop(resumed);
        let again = AgentRuntime::new(config(Some(store), "stored"), model()).unwrap();
        assert_eq!(again.total_usage().discarded.call_count, 6);
        assert_eq!(again.messages().len(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
}

/// CHAT-1: a regenerate or an edit-and-resend is one transaction: when its run fails before
/// the model answered (the provider down), the dropped runs come back — in memory and in the
/// store, their usages no longer discarded — so the answer and the user's own message are
/// not lost, and the same gesture works once the provider is back. A run that failed after
/// an answer keeps what it did, as any run does.
#[tokio::test]
async fn chat_1_a_gesture_whose_run_fails_before_an_answer_puts_the_session_back() {
    each_wire(|| async {
        let dir = temp_dir("chat-put-back");
        let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(dir.join("chat.db")).unwrap());
        let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let scripted = model();
        let flag = down.clone();
        let transport = ScriptedModel::with(move |body: &Value, index| {
            if flag.load(std::sync::atomic::Ordering::SeqCst) {
                return Reply::Raw(503, json!({"error": {"message": "overloaded", "type": "server_error"}}).to_string());
            }
            scripted.respond(body, index)
        });
        let rt = AgentRuntime::new(config(Some(store.clone()), "put-back"), transport).unwrap();
        let mut runs = Vec::new();
        for i in 1..=3 {
            runs.push(rt.run(&format!("task {i}")).await.unwrap().run_id);
        }
        let before = rt.state();
        let recorder = Arc::new(Recorder::default());
        let _s = rt.subscribe(recorder.clone());
        down.store(true, std::sync::atomic::Ordering::SeqCst);
        let run_ids = |rt: &AgentRuntime| rt.state().runs.iter().map(|m| m.run_id.clone()).collect::<Vec<_>>();
        let regenerate = rt.regenerate(&runs[2]).await.unwrap_err();
        let edit = rt.edit_and_resend(&runs[1], "task 9").await.unwrap_err();
        for e in [regenerate, edit] {
            assert_eq!(e.code(), ErrorCode::LlmServer, "{e}");
        }
        assert_eq!(rt.messages(), before.history.messages, "the answers and the inputs are back");
        assert_eq!(run_ids(&rt), runs);
        assert_eq!(rt.total_usage().discarded.call_count, 0, "nothing is dropped after all");
        // Listeners heard the rewind, the failed run, then the commit of the session put back.
        let types = recorder.types();
        assert_eq!(types.first().map(String::as_str), Some("session_rewound"), "{types:?}");
        assert_eq!(types.last().map(String::as_str), Some("session_committed"), "{types:?}");
        let committed = recorder.0.lock().unwrap().last().unwrap().kind.clone();
        let arkagent::EventKind::SessionCommitted { message_count, .. } = committed else { unreachable!() };
        assert_eq!(message_count, before.history.messages.len() as u64);
        drop(rt);
        // The store has it too; the same gesture works once the provider is back.
        let listed = &store.list_sessions().unwrap()[0];
        assert_eq!(listed.message_count, before.history.messages.len() as u64);
        down.store(false, std::sync::atomic::Ordering::SeqCst);
        let resumed = AgentRuntime::new(config(Some(store.clone()), "put-back"), model()).unwrap();
        assert_eq!(resumed.messages(), before.history.messages);
        assert_eq!(run_ids(&resumed), runs);
        assert_eq!(resumed.total_usage().discarded.call_count, 0);
        let outcome = resumed.regenerate(&runs[2]).await.unwrap();
        assert_eq!(outcome.final_text.as_deref(), Some("answer to task 3"));
        assert_eq!(resumed.total_usage().discarded.call_count, 2, "run 3's two calls");
        let _ = std::fs::remove_dir_all(&dir);
    })
    .await;
}

/// CHAT-1: the put-back is for a run that failed before an answer only: one that failed
/// after its first answer keeps its input and tool results (the dropped run stays dropped).
#[tokio::test]
async fn chat_1_a_gesture_whose_run_fails_after_an_answer_keeps_the_new_run() {
    each_wire(|| async {
        let scripted = model();
        let transport = ScriptedModel::with(move |body: &Value, index| {
            // The regenerate's second call (request 7: three runs of two, then its first) fails.
            if index == 6 + 1 {
                return Reply::Raw(503, json!({"error": {"message": "overloaded", "type": "server_error"}}).to_string());
            }
            scripted.respond(body, index)
        });
        let rt = AgentRuntime::new(config(None, "keeps"), transport).unwrap();
        let mut runs = Vec::new();
        for i in 1..=3 {
            runs.push(rt.run(&format!("task {i}")).await.unwrap().run_id);
        }
        let e = rt.regenerate(&runs[2]).await.unwrap_err();
        assert_eq!(e.code(), ErrorCode::LlmServer);
        let state = rt.state();
        assert_eq!(state.runs.len(), 3);
        assert_ne!(state.runs[2].run_id, runs[2], "the new run is the third");
        assert!(matches!(state.history.messages.last(), Some(Message::Tool { .. })), "it ends with the tool results");
        assert_eq!(rt.total_usage().discarded.call_count, 2);
    })
    .await;
}

#[tokio::test]
async fn chat_2_a_fork_is_a_new_independent_session_in_the_same_store() {
    each_wire(|| async {
        let store: Arc<dyn SessionStore> = Arc::new(InMemorySessionStore::new());
        let (rt, transport, runs) = session(Some(store.clone()), "source").await;
        let bodies = transport.bodies();
        let json = rt.fork("forked", Some(&runs[0])).unwrap();
        let forked: AgentState = serde_json::from_str(&json).unwrap();
        assert_eq!(forked.session_id, "forked");
        assert_eq!(forked.history.messages, rt.messages()[..4].to_vec(), "through run 1's answer");
        assert!(forked.usages.is_empty(), "what was spent stays the source's");
        assert_eq!(code(rt.fork("forked", None).unwrap_err()), ErrorCode::SessionExists);
        // A runtime on the store resumes the fork; its first request extends run 1's last.
        let fork_transport = Arc::new(Recording::new(model()));
        let fork = AgentRuntime::new(config(Some(store.clone()), "forked"), fork_transport.clone()).unwrap();
        assert_eq!(fork.messages(), forked.history.messages);
        fork.run("task 8").await.unwrap();
        assert_extends(view(), &bodies[1], &fork_transport.bodies()[0]);
        // Independent: each changes without the other.
        fork.rewind(&runs[0]).unwrap();
        assert!(fork.messages().is_empty());
        assert_eq!(rt.messages().len(), 12);
        rt.rewind(&runs[2]).unwrap();
        let fork_total = fork.total_usage().total.call_count;
        assert_eq!(fork_total, 2);
        assert_eq!(rt.total_usage().total.call_count, 6);
        let ids: Vec<String> = store.list_sessions().unwrap().into_iter().map(|s| s.id).collect();
        assert!(ids.contains(&"forked".to_owned()) && ids.contains(&"source".to_owned()));
    })
    .await;
}

#[tokio::test]
async fn chat_2_without_a_store_the_fork_is_the_returned_state() {
    let (rt, _, runs) = session(None, "loose").await;
    let json = rt.fork("loose-2", Some(&runs[1])).unwrap();
    let fork = AgentRuntime::resume(config(None, "loose-2"), model(), &json).unwrap();
    assert_eq!(fork.messages(), rt.messages()[..8].to_vec());
    assert_eq!(fork.session_id(), "loose-2");
    fork.regenerate(&runs[1]).await.unwrap();
    assert_eq!(fork.messages().len(), 8);
    // A fork of the whole session with a turn waiting for approval carries the turn.
    rt.run("pay 1").await.unwrap();
    let paused_json = rt.fork("loose-3", None).unwrap();
    let paused: AgentState = serde_json::from_str(&paused_json).unwrap();
    assert!(paused.pending_turn.is_some());
    // Its history is the committed one, without the paused answer (issue 42: the fork of a
    // turn paused in this process carried the answer twice and did not import).
    let exported: AgentState = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    assert_eq!(paused.history.messages, exported.history.messages);
    let resumed = AgentRuntime::resume(config(None, "loose-3"), model(), &paused_json).unwrap();
    assert_eq!(resumed.pending_approvals().len(), 1, "the fork resumes with the turn waiting");
    let through: AgentState = serde_json::from_str(&rt.fork("loose-4", Some(&runs[2])).unwrap()).unwrap();
    assert!(through.pending_turn.is_none());
    assert_eq!(through.history.messages.len(), 12);
}

/// README: "Sessions stored before schema 7 (and exports without `runs`) have no run ids
/// for their old runs" — such an export imports; its runs cannot be named; new runs can.
#[tokio::test]
async fn chat_1_an_export_without_run_marks_imports_and_only_new_runs_can_be_named() {
    let (rt, _, runs) = session(None, "old").await;
    let mut state: serde_json::Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    state.as_object_mut().unwrap().remove("runs");
    let old = AgentRuntime::new(config(None, "old-2"), model()).unwrap();
    old.import_state(&state.to_string()).unwrap();
    assert_eq!(old.messages().len(), 12);
    assert_eq!(code(old.rewind(&runs[0]).unwrap_err()), ErrorCode::UnknownRun);
    let next = old.run("task 4").await.unwrap();
    old.rewind(&next.run_id).unwrap();
    assert_eq!(old.messages().len(), 12);
}

/// CHAT-1, CORE-2: an imported history can mark a run inside a tool cycle (a hostile or
/// hand-edited export: the call, the run's input, then the call's result); a rewind there
/// is refused with `invalid_state` and changes nothing, never leaving a call unanswered.
#[tokio::test]
async fn chat_1_core_2_a_run_marked_inside_a_tool_cycle_is_not_rewound() {
    let (rt, _, runs) = session(None, "inside").await;
    let mut state: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    let m = state["history"]["messages"].as_array().unwrap().clone();
    assert_eq!((m[0]["role"].as_str(), m[1]["role"].as_str(), m[2]["role"].as_str()), (Some("user"), Some("assistant"), Some("tool")));
    state["history"]["messages"] = json!([m[1], m[0], m[2], m[3]]);
    let mut mark = state["runs"][0].clone();
    mark["message"] = json!(1);
    state["runs"] = json!([mark]);
    let crafted = AgentRuntime::new(config(None, "inside-2"), model()).unwrap();
    crafted.import_state(&state.to_string()).unwrap();
    let before = crafted.messages();
    assert_eq!(code(crafted.rewind(&runs[0]).unwrap_err()), ErrorCode::InvalidState);
    assert_eq!(code(crafted.regenerate(&runs[0]).await.unwrap_err()), ErrorCode::InvalidState);
    assert_eq!(crafted.messages(), before);
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&crafted.messages()));
}
