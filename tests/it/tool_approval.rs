//! TOOL-1..TOOL-3 (issue 37 items 1-3) on the Rust surface: a tool that requires approval
//! (always, or by its predicate) or a policy that asks pauses the run with
//! `approval_requested` and the pending calls; each call is approved, rejected with a
//! reason or approved with edited arguments; `resume_run` runs the approved calls once and
//! goes on; the paused turn and its decisions survive an export and the SQLite store (a
//! restart), and a call a kill interrupted is answered `tool_interrupted`; hostile answers
//! get stable codes and change nothing. The scripted model checks every request's pairing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arkagent::tools::{ApprovalDecision, ApprovalPredicate, PolicyDecision, ToolPolicy};
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, ArkAgentError, EventKind, ModelConfig, RunStatus, SessionStore, SqliteStore, ToolContext,
    ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult,
};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::{text_reply, tool_calls_reply, Recorder, ScriptedModel, API_KEY};

/// Records every call it runs; answers `{name} done with {arguments}`; waits forever when
/// `hang` is set (a tool a kill interrupts).
#[derive(Default)]
struct Counting {
    calls: Mutex<Vec<(String, Value)>>,
    hang: bool,
    started: AtomicUsize,
}

#[async_trait]
impl ToolExecutor for Counting {
    async fn execute(&self, call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        self.calls.lock().unwrap().push((call.call_id.clone(), call.arguments.clone()));
        self.started.fetch_add(1, Ordering::SeqCst);
        if self.hang {
            std::future::pending::<()>().await;
        }
        ToolResult::ok(format!("{} done with {}", call.name, call.arguments))
    }
}

impl Counting {
    fn ran(&self) -> Vec<String> {
        self.calls.lock().unwrap().iter().map(|(id, _)| id.clone()).collect()
    }
}

fn schema() -> Value {
    json!({"type": "object", "properties": {"amount": {"type": "number"}}, "required": ["amount"]})
}

/// `pay` requires approval; `weather` does not.
fn registry(pay: Arc<Counting>, weather: Arc<Counting>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(ToolDefinition::new("pay", "Pays", schema()).with_approval(), pay).unwrap();
    r.register(ToolDefinition::new("weather", "Weather", json!({"type": "object"})), weather).unwrap();
    r
}

fn config(tools: ToolRegistry) -> AgentRuntimeConfig {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", API_KEY, "test-model"));
    c.tools = tools;
    c.session_id = Some("approvals".into());
    c
}

/// The model pays 500 and asks for the weather in one turn, then answers.
fn pay_and_weather() -> Arc<ScriptedModel> {
    ScriptedModel::new(vec![
        tool_calls_reply(&[("c_pay", "pay", json!({"amount": 500})), ("c_w", "weather", json!({}))], 10),
        text_reply("paid", 20),
    ])
}

/// The tool messages of request `n`, by call id: (content, is it the model's error shape).
fn tool_messages(model: &ScriptedModel, n: usize) -> Vec<(String, String)> {
    let requests = model.requests.lock().unwrap();
    requests[n]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap().to_owned(), m["content"].as_str().unwrap().to_owned()))
        .collect()
}

fn code(e: ArkAgentError) -> String {
    e.code().as_str().to_owned()
}

#[tokio::test]
async fn tool_1_a_tool_requiring_approval_pauses_the_run_and_resume_runs_it_once() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather.clone())), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let outcome = rt.run("pay the bill").await.unwrap();
    assert_eq!(outcome.status, RunStatus::AwaitingApproval);
    assert_eq!(outcome.pending_approvals.len(), 1);
    assert_eq!((outcome.pending_approvals[0].call_id.as_str(), outcome.pending_approvals[0].name.as_str()), ("c_pay", "pay"));
    assert_eq!(serde_json::from_str::<Value>(&outcome.pending_approvals[0].arguments).unwrap(), json!({"amount": 500}));
    assert_eq!(rt.pending_approvals(), outcome.pending_approvals);
    // The call that needs no answer ran at once; the one that does did not.
    assert_eq!(weather.ran(), ["c_w"]);
    assert!(pay.ran().is_empty());
    assert_eq!(model.request_count(), 1);
    let requested: Vec<_> = recorder.0.lock().unwrap().iter().filter_map(|e| match &e.kind {
        EventKind::ApprovalRequested { call_id, name, reason, .. } => Some((call_id.clone(), name.clone(), reason.clone())),
        _ => None,
    }).collect();
    assert_eq!(requested, [("c_pay".to_owned(), "pay".to_owned(), "tool".to_owned())]);
    assert!(recorder.types().ends_with(&["approval_requested".to_owned(), "run_finished".to_owned()]), "{:?}", recorder.types());
    // The exported history stays paired: the open turn is in pending_turn, not the history.
    let exported: Value = serde_json::from_str(&rt.export_state().unwrap()).unwrap();
    assert!(exported["pending_turn"]["calls"].as_array().unwrap().len() == 2);
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&serde_json::from_value::<Vec<arkagent::Message>>(exported["history"]["messages"].clone()).unwrap()));

    rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap();
    let outcome = rt.resume_run().await.unwrap();
    assert_eq!((outcome.status, outcome.final_text.as_deref()), (RunStatus::Completed, Some("paid")));
    assert_eq!(outcome.run_id, requested_run_id(&recorder));
    assert_eq!(pay.ran(), ["c_pay"]);
    assert_eq!(weather.ran(), ["c_w"], "the weather call is not run again");
    let results = tool_messages(&model, 1);
    assert_eq!(results.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["c_pay", "c_w"], "results in the calls' order");
    assert!(results[0].1.contains("pay done"));
    assert!(rt.pending_approvals().is_empty());
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
    // The prefix the provider cached is kept across the pause: request 2 starts with request 1's messages.
    let requests = model.requests.lock().unwrap();
    let (first, second) = (requests[0]["messages"].as_array().unwrap(), requests[1]["messages"].as_array().unwrap());
    assert_eq!(&second[..first.len()], &first[..]);
}

fn requested_run_id(recorder: &Recorder) -> String {
    recorder.0.lock().unwrap().iter().find(|e| matches!(e.kind, EventKind::ApprovalRequested { .. })).unwrap().run_id.clone()
}

#[tokio::test]
async fn tool_1_a_rejection_reaches_the_model_as_tool_rejected_with_the_reason() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather)), model.clone()).unwrap();
    rt.run("pay").await.unwrap();
    rt.answer_approval("c_pay", ApprovalDecision::Reject { reason: "too expensive".into() }).unwrap();
    assert_eq!(rt.resume_run().await.unwrap().status, RunStatus::Completed);
    assert!(pay.ran().is_empty(), "a rejected call never runs");
    let content: Value = serde_json::from_str(&tool_messages(&model, 1)[0].1).unwrap();
    assert_eq!(content["error"]["code"], "tool_rejected");
    assert_eq!(content["error"]["message"], "too expensive");
}

#[tokio::test]
async fn tool_1_edited_arguments_run_and_the_model_reads_what_ran() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather)), model.clone()).unwrap();
    rt.run("pay").await.unwrap();
    rt.answer_approval("c_pay", ApprovalDecision::ApproveWithArguments { arguments: r#"{"amount": 50}"#.into() }).unwrap();
    rt.resume_run().await.unwrap();
    assert_eq!(pay.calls.lock().unwrap()[0].1, json!({"amount": 50}), "the edited arguments ran");
    // The model's own call stays as it made it; its result says what ran.
    let requests = model.requests.lock().unwrap();
    let assistant = requests[1]["messages"].as_array().unwrap().iter().find(|m| m["role"] == "assistant").unwrap().clone();
    assert_eq!(serde_json::from_str::<Value>(assistant["tool_calls"][0]["function"]["arguments"].as_str().unwrap()).unwrap(), json!({"amount": 500}));
    drop(requests);
    let result = &tool_messages(&model, 1)[0].1;
    assert!(result.starts_with("[The user changed the arguments before this call ran; it ran with {\"amount\":50}]"), "{result}");
}

struct AboveHundred;

#[async_trait]
impl ApprovalPredicate for AboveHundred {
    async fn needs_approval(&self, call: &ToolInvocation) -> bool {
        call.arguments["amount"].as_f64().unwrap_or(0.0) > 100.0
    }
}

#[tokio::test]
async fn tool_1_a_predicate_decides_per_call_and_calls_are_answered_independently() {
    let pay = Arc::new(Counting::default());
    let mut tools = ToolRegistry::new();
    tools.register_with_approval(ToolDefinition::new("pay", "Pays", schema()), pay.clone(), Some(Arc::new(AboveHundred))).unwrap();
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("small", "pay", json!({"amount": 5})), ("big1", "pay", json!({"amount": 500})), ("big2", "pay", json!({"amount": 900}))], 10),
        text_reply("done", 20),
    ]);
    let rt = AgentRuntime::new(config(tools), model.clone()).unwrap();
    let outcome = rt.run("pay all").await.unwrap();
    let waiting: Vec<_> = outcome.pending_approvals.iter().map(|p| p.call_id.as_str()).collect();
    assert_eq!(waiting, ["big1", "big2"]);
    assert_eq!(pay.ran(), ["small"]);
    rt.answer_approval("big2", ApprovalDecision::Approve).unwrap();
    // One call still waits: resuming is refused and changes nothing.
    assert_eq!(code(rt.resume_run().await.unwrap_err()), "approval_pending");
    assert_eq!(rt.pending_approvals().len(), 1);
    rt.answer_approval("big1", ApprovalDecision::Reject { reason: String::new() }).unwrap();
    rt.resume_run().await.unwrap();
    assert_eq!(pay.ran(), ["small", "big2"]);
    let results = tool_messages(&model, 1);
    assert_eq!(results.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["small", "big1", "big2"]);
    assert!(results[1].1.contains("tool_rejected"));
}

/// Denies `delete`, asks for `send`, allows the rest.
struct Guardrail(Mutex<Vec<String>>);

#[async_trait]
impl ToolPolicy for Guardrail {
    async fn decide(&self, call: &ToolInvocation) -> PolicyDecision {
        self.0.lock().unwrap().push(call.name.clone());
        match call.name.as_str() {
            "delete" => PolicyDecision::Deny { reason: "deleting is not allowed in this app".into() },
            "send" => PolicyDecision::Ask,
            _ => PolicyDecision::Allow,
        }
    }
}

#[tokio::test]
async fn tool_3_the_policy_allows_denies_with_a_reason_and_asks() {
    let tool = Arc::new(Counting::default());
    let mut tools = ToolRegistry::new();
    for name in ["delete", "send", "read"] {
        tools.register(ToolDefinition::new(name, name, json!({"type": "object"})), tool.clone()).unwrap();
    }
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("d", "delete", json!({})), ("s", "send", json!({})), ("r", "read", json!({})), ("u", "unknown_tool", json!({}))], 10),
        text_reply("ok", 20),
    ]);
    let guard = Arc::new(Guardrail(Mutex::new(Vec::new())));
    let mut c = config(tools);
    c.tool_policy = Some(guard.clone());
    let rt = AgentRuntime::new(c, model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let outcome = rt.run("clean up").await.unwrap();
    assert_eq!(outcome.status, RunStatus::AwaitingApproval);
    assert_eq!(outcome.pending_approvals.iter().map(|p| p.call_id.as_str()).collect::<Vec<_>>(), ["s"]);
    assert_eq!(tool.ran(), ["r"], "allowed runs, denied and asked do not");
    // The policy never sees a call to a tool that does not exist.
    assert_eq!(*guard.0.lock().unwrap(), ["delete", "send", "read"]);
    assert!(recorder.0.lock().unwrap().iter().any(|e| matches!(&e.kind, EventKind::ApprovalRequested { reason, .. } if reason == "policy")));
    rt.answer_approval("s", ApprovalDecision::Approve).unwrap();
    rt.resume_run().await.unwrap();
    assert_eq!(tool.ran(), ["r", "s"]);
    let results: Vec<(String, Value)> = tool_messages(&model, 1).into_iter().map(|(id, c)| (id, serde_json::from_str(&c).unwrap_or(Value::String(c)))).collect();
    assert_eq!(results[0].1["error"]["code"], "tool_denied");
    assert_eq!(results[0].1["error"]["message"], "deleting is not allowed in this app");
    assert_eq!(results[3].1["error"]["code"], "unknown_tool");
}

#[tokio::test]
async fn tool_1_hostile_answers_get_stable_codes_and_change_nothing() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather)), model.clone()).unwrap();
    // Nothing pending yet.
    assert_eq!(code(rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap_err()), "approval_not_pending");
    assert_eq!(code(rt.resume_run().await.unwrap_err()), "approval_not_pending");
    rt.run("pay").await.unwrap();
    let before = rt.export_state().unwrap();
    assert_eq!(code(rt.answer_approval("nope", ApprovalDecision::Approve).unwrap_err()), "approval_unknown_call");
    // The call that ran at once is not waiting.
    assert_eq!(code(rt.answer_approval("c_w", ApprovalDecision::Approve).unwrap_err()), "approval_already_answered");
    for bad in ["not json", "[1,2]", "{}", r#"{"amount": 1"#, "null"] {
        let e = rt.answer_approval("c_pay", ApprovalDecision::ApproveWithArguments { arguments: bad.into() }).unwrap_err();
        assert_eq!(code(e), "tool_arguments_invalid", "{bad}");
    }
    // Nothing else runs on the session while the turn waits.
    assert_eq!(code(rt.run("something else").await.unwrap_err()), "approval_pending");
    assert_eq!(code(rt.start_compress_now().err().unwrap()), "approval_pending");
    assert_eq!(code(rt.resume_run().await.unwrap_err()), "approval_pending");
    assert_eq!(rt.export_state().unwrap(), before, "the refused calls changed nothing");
    rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap();
    assert_eq!(code(rt.answer_approval("c_pay", ApprovalDecision::Reject { reason: "x".into() }).unwrap_err()), "approval_already_answered");
    rt.resume_run().await.unwrap();
    assert_eq!(code(rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap_err()), "approval_not_pending");
    assert_eq!(pay.ran(), ["c_pay"]);
    assert_eq!(model.request_count(), 2);
}

#[tokio::test]
async fn tool_2_an_exported_pause_imports_elsewhere_and_resumes() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather.clone())), model.clone()).unwrap();
    rt.run("pay").await.unwrap();
    rt.answer_approval("c_pay", ApprovalDecision::ApproveWithArguments { arguments: r#"{"amount":60}"#.into() }).unwrap();
    let exported = rt.export_state().unwrap();
    let rt2 = AgentRuntime::resume(config(registry(pay.clone(), weather.clone())), model.clone(), &exported).unwrap();
    assert!(rt2.pending_approvals().is_empty(), "the decision travelled with the export");
    // `messages()`: "While … the turn waits for approval it ends with that turn's model
    // answer" — in the runtime it was imported into too.
    assert_eq!(rt2.messages().last(), rt.messages().last());
    assert_eq!(rt2.messages().last().map(|m| m.tool_calls().len()), Some(2));
    assert_eq!(rt2.resume_run().await.unwrap().final_text.as_deref(), Some("paid"));
    assert_eq!(pay.calls.lock().unwrap().iter().map(|(_, a)| a.clone()).collect::<Vec<_>>(), [json!({"amount": 60})]);
    assert_eq!(weather.ran(), ["c_w"]);
    // An export whose pending turn does not match its answer is refused.
    let mut broken: Value = serde_json::from_str(&exported).unwrap();
    broken["pending_turn"]["calls"][0]["call_id"] = json!("other");
    let e = AgentRuntime::resume(config(ToolRegistry::new()), model, &broken.to_string()).unwrap_err();
    assert_eq!(code(e), "invalid_state");
}

fn store_config(db: &std::path::Path, pay: Arc<Counting>, weather: Arc<Counting>) -> AgentRuntimeConfig {
    let mut c = config(registry(pay, weather));
    let store: Arc<dyn SessionStore> = Arc::new(SqliteStore::open(db).unwrap());
    c.store = Some(store);
    c
}

#[tokio::test]
async fn tool_2_the_store_keeps_the_pause_and_every_decision_across_a_restart() {
    let db = crate::store::temp_dir("approval-restart").join("s.db");
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("a", "pay", json!({"amount": 1})), ("b", "pay", json!({"amount": 2})), ("c_w", "weather", json!({}))], 10),
        text_reply("paid", 20),
    ]);
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    {
        let rt = AgentRuntime::new(store_config(&db, pay.clone(), weather.clone()), model.clone()).unwrap();
        assert_eq!(rt.run("pay twice").await.unwrap().pending_approvals.len(), 2);
        rt.answer_approval("a", ApprovalDecision::Reject { reason: "no".into() }).unwrap();
        // The app is killed here: nothing after the answer's commit.
    }
    let rt = AgentRuntime::new(store_config(&db, pay.clone(), weather.clone()), model.clone()).unwrap();
    let waiting: Vec<_> = rt.pending_approvals().into_iter().map(|p| p.call_id).collect();
    assert_eq!(waiting, ["b"], "the same pending call, the decision on the other kept");
    let calls: Vec<String> = rt.messages().last().unwrap().tool_calls().iter().map(|c| c.id.clone()).collect();
    assert_eq!(calls, ["a", "b", "c_w"], "the paused answer ends the live history after a restart");
    rt.answer_approval("b", ApprovalDecision::Approve).unwrap();
    assert_eq!(rt.resume_run().await.unwrap().status, RunStatus::Completed);
    assert_eq!(pay.ran(), ["b"]);
    assert_eq!(weather.ran(), ["c_w"], "the call that ran before the kill is not run again");
    let results = tool_messages(&model, 1);
    assert_eq!(results.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["a", "b", "c_w"]);
    assert!(results[2].1.contains("weather done"), "its result was kept: {results:?}");
    drop(rt);
    // After the resumed run, the stored session is paired and has no pending turn.
    let rt = AgentRuntime::new(store_config(&db, pay, weather), model).unwrap();
    assert!(rt.pending_approvals().is_empty());
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
    assert_eq!(rt.messages().len(), 6, "user, assistant, three results, answer");
}

/// TOOL-2, STORE-6: `detach_store` — "a turn paused for approval ... goes with the stored
/// session: no call waits here any more (answering or resuming gives
/// `approval_not_pending`), so a call is never answered, nor run, both here and by the
/// runtime that opens the session next". (Found by a JS test of the README: the detached
/// runtime's answer went uncommitted and both runtimes ran the tool.)
#[tokio::test]
async fn tool_2_a_paused_turn_goes_with_the_session_when_its_store_is_detached() {
    let db = crate::store::temp_dir("approval-detach").join("s.db");
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("a", "pay", json!({"amount": 1})), ("c_w", "weather", json!({}))], 10),
        text_reply("paid", 20),
    ]);
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let old = AgentRuntime::new(store_config(&db, pay.clone(), weather.clone()), model.clone()).unwrap();
    assert_eq!(old.run("pay").await.unwrap().pending_approvals.len(), 1);
    assert!(old.detach_store().unwrap());
    assert!(old.pending_approvals().is_empty());
    assert_eq!(code(old.answer_approval("a", ApprovalDecision::Approve).unwrap_err()), "approval_not_pending");
    assert_eq!(code(old.resume_run().await.unwrap_err()), "approval_not_pending");
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&old.messages()), "the old runtime's history stays paired");
    let exported: Value = serde_json::from_str(&old.export_state().unwrap()).unwrap();
    assert!(exported.get("pending_turn").is_none_or(Value::is_null), "{exported}");
    // The page rebuilt on the same session shows the dialog, answers it, runs it once.
    let rebuilt = AgentRuntime::new(store_config(&db, pay.clone(), weather.clone()), model.clone()).unwrap();
    assert_eq!(rebuilt.pending_approvals().into_iter().map(|p| p.call_id).collect::<Vec<_>>(), ["a"]);
    rebuilt.answer_approval("a", ApprovalDecision::Approve).unwrap();
    assert_eq!(rebuilt.resume_run().await.unwrap().status, RunStatus::Completed);
    assert_eq!(pay.ran(), ["a"]);
}

/// TOOL-1: `answer_approval_given` — an answer "given at a moment when a run held the slot
/// ... is refused with `run_in_progress` as of that moment, even when the run has ended
/// since"; the same answer given now is taken.
#[tokio::test]
async fn tool_1_an_answer_given_while_the_run_held_its_slot_is_refused_as_of_then() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather)), pay_and_weather()).unwrap();
    assert!(!rt.run("pay").await.unwrap().pending_approvals.is_empty());
    let before = rt.export_state().unwrap();
    assert_eq!(code(rt.answer_approval_given("c_pay", ApprovalDecision::Approve, true).unwrap_err()), "run_in_progress");
    assert_eq!(rt.export_state().unwrap(), before, "nothing changed");
    rt.answer_approval_given("c_pay", ApprovalDecision::Approve, false).unwrap();
    assert_eq!(rt.resume_run().await.unwrap().status, RunStatus::Completed);
    assert_eq!(pay.ran().len(), 1);
}

#[tokio::test]
async fn tool_2_a_call_a_kill_interrupted_is_answered_tool_interrupted_and_never_run_again() {
    let db = crate::store::temp_dir("approval-interrupted").join("s.db");
    let model = pay_and_weather();
    let weather = Arc::new(Counting::default());
    let hanging = Arc::new(Counting { hang: true, ..Counting::default() });
    {
        let rt = AgentRuntime::new(store_config(&db, hanging.clone(), weather.clone()), model.clone()).unwrap();
        rt.run("pay").await.unwrap();
        rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap();
        let resumed = tokio::spawn({
            let rt = rt.clone();
            async move { rt.resume_run().await }
        });
        while hanging.started.load(Ordering::SeqCst) == 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // Killed mid-execution: the task and the runtime vanish.
        resumed.abort();
        let _ = resumed.await;
    }
    let pay = Arc::new(Counting::default());
    let rt = AgentRuntime::new(store_config(&db, pay.clone(), weather.clone()), model.clone()).unwrap();
    assert!(rt.pending_approvals().is_empty(), "nothing waits: the call had started");
    assert_eq!(rt.resume_run().await.unwrap().status, RunStatus::Completed);
    assert!(pay.ran().is_empty(), "never run again");
    assert_eq!(hanging.ran(), ["c_pay"], "it ran once, before the kill");
    let content: Value = serde_json::from_str(&tool_messages(&model, 1)[0].1).unwrap();
    assert_eq!(content["error"]["code"], "tool_interrupted");
}

/// Records every call it sees and allows it.
struct Watching(Mutex<Vec<String>>);

#[async_trait]
impl ToolPolicy for Watching {
    async fn decide(&self, call: &ToolInvocation) -> PolicyDecision {
        self.0.lock().unwrap().push(call.name.clone());
        PolicyDecision::Allow
    }
}

/// SUB-3, TOOL-1: a resumed run goes on with the paused run's delegation budget. With
/// `max_delegations_per_run` 1, a delegation before the pause and one after the resume
/// are one too many (resume_run gave the run a fresh budget).
#[tokio::test]
async fn sub_3_tool_1_a_resumed_run_keeps_its_delegation_budget() {
    use arkagent::runtime::DelegationConfig;
    use arkagent::subagent::{SubAgentPolicy, DELEGATE_TASK_TOOL_NAME};
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let mut c = config(registry(pay.clone(), weather));
    let policy = SubAgentPolicy { max_delegations_per_run: 1, ..Default::default() };
    c.delegation = Some(DelegationConfig { allow_clone: true, policy, ..Default::default() });
    let model = ScriptedModel::with(|body, _| {
        let messages = body["messages"].as_array().unwrap();
        if messages.iter().any(|m| m["role"] == "user" && m["content"].as_str().is_some_and(|t| t.starts_with("look"))) {
            return text_reply("looked", 5); // the child
        }
        let delegate = |id: &str| tool_calls_reply(&[(id, DELEGATE_TASK_TOOL_NAME, json!({"assignee": "clone", "task_description": "look"}))], 10);
        match messages.iter().filter(|m| m["role"] == "assistant").count() {
            0 => delegate("d1"),
            1 => tool_calls_reply(&[("c_pay", "pay", json!({"amount": 5}))], 10),
            2 => delegate("d2"),
            _ => text_reply("done", 10),
        }
    });
    let rt = AgentRuntime::new(c, model.clone()).unwrap();
    assert_eq!(rt.run("go").await.unwrap().status, RunStatus::AwaitingApproval);
    rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap();
    assert_eq!(rt.resume_run().await.unwrap().status, RunStatus::Completed);
    let results = tool_messages(&model, model.request_count() - 1);
    let answer = |id: &str| results.iter().find(|(call, _)| call == id).unwrap().1.clone();
    assert!(answer("d1").contains("looked"), "the first delegation ran: {results:?}");
    assert!(answer("d2").contains("subagent_run_budget_exceeded"), "the second is over the run's budget: {results:?}");
}

/// Clone delegation with the role `reader` (read_file, pay); `pay` requires approval.
fn delegating(tool: Arc<Counting>, policy: Option<Arc<dyn ToolPolicy>>) -> AgentRuntimeConfig {
    use arkagent::runtime::DelegationConfig;
    let mut tools = ToolRegistry::new();
    tools.register(ToolDefinition::new("pay", "Pays", schema()).with_approval(), tool.clone()).unwrap();
    for name in ["read_file", "write_file"] {
        tools.register(ToolDefinition::new(name, name, json!({"type": "object"})), tool.clone()).unwrap();
    }
    let mut delegation = DelegationConfig { allow_clone: true, ..Default::default() };
    delegation.role_whitelists.insert("reader".into(), Some(vec!["read_file".into(), "pay".into()]));
    let mut c = config(tools);
    c.delegation = Some(delegation);
    c.tool_policy = policy;
    c
}

/// The parent delegates to a `reader` clone; the child calls write_file, pay and read_file,
/// then answers with what pay's result said.
fn delegating_model() -> Arc<ScriptedModel> {
    use arkagent::subagent::DELEGATE_TASK_TOOL_NAME;
    ScriptedModel::with(|body, _| {
        let parent = body["tools"].as_array().into_iter().flatten().any(|t| t["function"]["name"] == DELEGATE_TASK_TOOL_NAME);
        let messages = body["messages"].as_array().unwrap();
        let last = messages.last().unwrap()["role"].as_str().unwrap().to_owned();
        match (parent, last.as_str()) {
            (true, "user") => tool_calls_reply(&[("d1", DELEGATE_TASK_TOOL_NAME, json!({"assignee": "clone", "task_description": "read", "role": "reader"}))], 10),
            (true, _) => text_reply("parent done", 10),
            (false, "user") => tool_calls_reply(&[("w", "write_file", json!({})), ("p", "pay", json!({"amount": 7})), ("r", "read_file", json!({}))], 10),
            (false, _) => {
                let pay = messages.iter().find(|m| m["tool_call_id"] == "p").unwrap()["content"].as_str().unwrap().to_owned();
                text_reply(&format!("child read: {pay}"), 10)
            }
        }
    })
}

/// Waits until the root lists a sub-agent's waiting call; returns it.
async fn waiting_child_call(rt: &AgentRuntime) -> arkagent::runtime::PendingApproval {
    for _ in 0..400 {
        if let Some(p) = rt.pending_approvals().into_iter().find(|p| !p.path.is_empty()) {
            return p;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    panic!("no sub-agent call waited");
}

/// A delegating runtime (no policy) whose run is going, its child's `pay` call waiting.
async fn delegation_waiting_for_approval() -> (Arc<Counting>, AgentRuntime, tokio::task::JoinHandle<Result<arkagent::runtime::RunOutcome, arkagent::ArkAgentError>>, arkagent::runtime::PendingApproval) {
    let tool = Arc::new(Counting::default());
    let rt = AgentRuntime::new(delegating(tool.clone(), None), delegating_model()).unwrap();
    let run = tokio::spawn({
        let rt = rt.clone();
        async move { rt.run("delegate").await }
    });
    let waiting = waiting_child_call(&rt).await;
    (tool, rt, run, waiting)
}

/// The child's record: its messages' tool results by call id.
fn child_result(rt: &AgentRuntime, id: &str) -> String {
    let registry = rt.sub_agent_registry().unwrap();
    let child = registry.history()[0].clone();
    child.messages.iter().find_map(|m| match m {
        arkagent::Message::Tool { tool_call_id, content, .. } if tool_call_id == id => Some(content.to_string()),
        _ => None,
    }).unwrap()
}

/// TOOL-3 with ISO-2: a sub-agent inherits the policy, and its role's whitelist applies
/// first (a call the role may not make never reaches the policy). Issue 37 item 5: the
/// child's call that needs approval waits in flight, reaches the root's host with the
/// child's identity (a `sub_agent` event carrying `approval_requested`, and
/// `pending_approvals` with its path), the child makes no model call meanwhile, and the
/// root's answer lets it go on.
#[tokio::test]
async fn tool_3_a_sub_agents_call_waits_for_the_roots_host_after_its_whitelist_and_the_policy() {
    use arkagent::subagent::DELEGATE_TASK_TOOL_NAME;
    let tool = Arc::new(Counting::default());
    let watching = Arc::new(Watching(Mutex::new(Vec::new())));
    let model = delegating_model();
    let rt = AgentRuntime::new(delegating(tool.clone(), Some(watching.clone())), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let run = tokio::spawn({
        let rt = rt.clone();
        async move { rt.run("delegate").await }
    });
    let waiting = waiting_child_call(&rt).await;
    assert!(waiting.call_id.ends_with("/p") && waiting.name == "pay", "{waiting:?}");
    assert_eq!(waiting.path.len(), 1, "{waiting:?}");
    assert!(waiting.call_id.starts_with(&format!("{}/", waiting.path[0])));
    let requests = model.request_count();
    tokio::time::sleep(std::time::Duration::from_millis(60)).await;
    assert_eq!(model.request_count(), requests, "a waiting child makes no model call");
    assert_eq!(tool.ran(), ["r"], "the call that needs no answer ran; write_file was refused");
    let bridged = recorder.0.lock().unwrap().iter().any(|e| match &e.kind {
        EventKind::SubAgent(child) => matches!(&child.event.kind, EventKind::ApprovalRequested { call_id, path, .. } if *call_id == waiting.call_id && *path == waiting.path),
        _ => false,
    });
    assert!(bridged, "the root's observers hear the child's approval_requested");
    let e = rt.answer_approval(&waiting.call_id, ApprovalDecision::ApproveWithArguments { arguments: "{}".into() }).unwrap_err();
    assert_eq!(code(e), "tool_arguments_invalid", "the child's tool schema is checked");
    rt.answer_approval(&waiting.call_id, ApprovalDecision::ApproveWithArguments { arguments: r#"{"amount": 3}"#.into() }).unwrap();
    let outcome = run.await.unwrap().unwrap();
    assert_eq!((outcome.status, outcome.final_text.as_deref()), (RunStatus::Completed, Some("parent done")));
    assert!(rt.pending_approvals().is_empty());
    assert_eq!(code(rt.answer_approval(&waiting.call_id, ApprovalDecision::Approve).unwrap_err()), "approval_already_answered", "answered: said so, also after the run");
    assert_eq!(*watching.0.lock().unwrap(), [DELEGATE_TASK_TOOL_NAME, "pay", "read_file"], "write_file was stopped by the whitelist first");
    assert_eq!(tool.ran(), ["r", "p"]);
    assert_eq!(tool.calls.lock().unwrap()[1].1, json!({"amount": 3}));
    assert!(child_result(&rt, "w").contains("tool_not_allowed"));
    assert!(child_result(&rt, "p").starts_with("[The user changed the arguments"));
}

/// TOOL-1 (issue 42's finding): a sub-agent's call answered twice while the root's run
/// goes on — a dialog tapped twice — gets `approval_already_answered`, not
/// `run_in_progress` (a "try again later" for a call that will never wait again).
#[tokio::test]
async fn tool_1_a_sub_agents_call_answered_twice_while_the_run_goes_is_already_answered() {
    let (tool, rt, run, waiting) = delegation_waiting_for_approval().await;
    rt.answer_approval(&waiting.call_id, ApprovalDecision::Approve).unwrap();
    // No await in between: on this single-threaded test runtime the run cannot have moved.
    assert!(rt.is_running());
    let again = rt.answer_approval(&waiting.call_id, ApprovalDecision::Reject { reason: "no".into() }).unwrap_err();
    assert_eq!(code(again), "approval_already_answered");
    assert_eq!(run.await.unwrap().unwrap().status, RunStatus::Completed);
    assert_eq!(tool.ran(), ["r", "p"], "the first answer stands");
}

#[tokio::test]
async fn tool_1_a_sub_agents_rejected_call_never_runs() {
    let (tool, rt, run, waiting) = delegation_waiting_for_approval().await;
    rt.answer_approval(&waiting.call_id, ApprovalDecision::Reject { reason: "no payments today".into() }).unwrap();
    assert_eq!(run.await.unwrap().unwrap().status, RunStatus::Completed);
    assert_eq!(tool.ran(), ["r"]);
    assert!(child_result(&rt, "p").contains("no payments today"));
}

#[tokio::test]
async fn tool_1_the_parents_cancel_and_a_force_completion_answer_a_waiting_childs_call() {
    for force in [false, true] {
        let (tool, rt, run, waiting) = delegation_waiting_for_approval().await;
        if force {
            let registry = rt.sub_agent_registry().unwrap();
            assert!(registry.force_complete(&waiting.path[0], "the user left", 0));
        } else {
            assert!(rt.cancel());
        }
        let outcome = run.await.unwrap().unwrap();
        assert_eq!(outcome.status, if force { RunStatus::Completed } else { RunStatus::Cancelled });
        assert!(rt.pending_approvals().is_empty(), "nothing waits after the child ended");
        assert_eq!(code(rt.answer_approval(&waiting.call_id, ApprovalDecision::Approve).unwrap_err()), "approval_not_pending");
        assert_eq!(tool.ran(), ["r"], "pay never ran");
        // The parent's history stays paired (its delegate_task answered); the child's record
        // is archived when it ended (SUB-6), before its last answers are in.
        assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
    }
}

/// A memory store whose commits fail with `store_full` while armed.
struct Armed {
    inner: arkagent::InMemorySessionStore,
    fail: Arc<std::sync::atomic::AtomicBool>,
}

struct ArmedLease {
    inner: Box<dyn arkagent::store::SessionLease>,
    fail: Arc<std::sync::atomic::AtomicBool>,
}

impl arkagent::store::SessionLease for ArmedLease {
    fn commit(&self, commit: &arkagent::store::Commit) -> Result<u64, arkagent::StoreError> {
        if self.fail.load(Ordering::SeqCst) {
            return Err(arkagent::StoreError::Full("simulated".into()));
        }
        self.inner.commit(commit)
    }
}

impl SessionStore for Armed {
    fn open_session(&self, id: &str) -> Result<arkagent::store::OpenedSession, arkagent::StoreError> {
        let opened = self.inner.open_session(id)?;
        Ok(arkagent::store::OpenedSession { lease: Box::new(ArmedLease { inner: opened.lease, fail: self.fail.clone() }), state: opened.state })
    }
    fn list_sessions(&self) -> Result<Vec<arkagent::SessionSummary>, arkagent::StoreError> {
        self.inner.list_sessions()
    }
    fn delete_session(&self, id: &str) -> Result<bool, arkagent::StoreError> {
        self.inner.delete_session(id)
    }
}

#[tokio::test]
async fn tool_2_a_commit_that_fails_while_resuming_keeps_every_decision() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let fail = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mem = arkagent::InMemorySessionStore::new();
    let mut c = config(registry(pay.clone(), weather));
    c.store = Some(Arc::new(Armed { inner: mem.clone(), fail: fail.clone() }));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(c, model.clone()).unwrap();
    rt.run("pay").await.unwrap();
    // An answer whose commit fails is taken back.
    fail.store(true, Ordering::SeqCst);
    assert_eq!(code(rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap_err()), "store_full");
    assert_eq!(rt.pending_approvals().len(), 1, "the refused answer is not kept");
    fail.store(false, Ordering::SeqCst);
    rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap();
    // The disk fills while resuming: nothing runs, the approval stands.
    fail.store(true, Ordering::SeqCst);
    assert_eq!(code(rt.resume_run().await.unwrap_err()), "store_full");
    assert!(pay.ran().is_empty());
    let state = rt.state();
    assert!(matches!(state.pending_turn.as_ref().unwrap().calls[0].state, arkagent::history::PendingCallState::Approved { .. }));
    fail.store(false, Ordering::SeqCst);
    assert_eq!(rt.resume_run().await.unwrap().status, RunStatus::Completed);
    assert_eq!(pay.ran(), ["c_pay"]);
    assert!(tool_messages(&model, 1)[0].1.contains("pay done"), "run, not answered tool_interrupted");
}

/// A tool that waits until its call is cancelled.
#[derive(Default)]
struct UntilCancelled;

#[async_trait]
impl ToolExecutor for UntilCancelled {
    async fn execute(&self, _call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        ctx.cancel.cancelled().await;
        ToolResult::ok("stopped")
    }
}

#[tokio::test]
async fn tool_1_a_cancel_while_the_turn_pauses_ends_the_run_cancelled_with_nothing_waiting() {
    let pay = Arc::new(Counting::default());
    let mut tools = ToolRegistry::new();
    tools.register(ToolDefinition::new("pay", "Pays", schema()).with_approval(), pay.clone()).unwrap();
    tools.register(ToolDefinition::new("weather", "Weather", json!({"type": "object"})), Arc::new(UntilCancelled)).unwrap();
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("c_pay", "pay", json!({"amount": 500})), ("c_w", "weather", json!({}))], 10),
        text_reply("next answer", 20),
    ]);
    let rt = AgentRuntime::new(config(tools), model.clone()).unwrap();
    let recorder = Arc::new(Recorder::default());
    let _s = rt.subscribe(recorder.clone());
    let canceller = {
        let rt = rt.clone();
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            rt.cancel()
        })
    };
    let outcome = rt.run("pay").await.unwrap();
    assert!(canceller.await.unwrap());
    assert_eq!(outcome.status, RunStatus::Cancelled);
    assert!(outcome.pending_approvals.is_empty() && rt.pending_approvals().is_empty());
    assert!(!recorder.types().contains(&"approval_requested".to_owned()));
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
    assert!(pay.ran().is_empty());
    // Nothing waits: the next run goes on.
    assert_eq!(rt.run("next").await.unwrap().final_text.as_deref(), Some("next answer"));
    let cancelled = tool_messages(&model, 1);
    assert!(cancelled.iter().all(|(_, c)| c.contains("cancelled")), "{cancelled:?}");
}

#[tokio::test]
async fn tool_1_cancel_approvals_closes_the_turn_without_a_model_call() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("c_pay", "pay", json!({"amount": 500})), ("c_w", "weather", json!({}))], 10),
        text_reply("fresh start", 20),
    ]);
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather.clone())), model.clone()).unwrap();
    assert!(!rt.cancel_approvals().unwrap(), "nothing waits yet");
    rt.run("pay").await.unwrap();
    assert!(!rt.cancel(), "cancel() leaves a paused turn alone: no run is active");
    assert_eq!(rt.pending_approvals().len(), 1);
    assert!(rt.cancel_approvals().unwrap());
    assert_eq!(model.request_count(), 1, "no model call");
    assert!(rt.pending_approvals().is_empty());
    assert_eq!(code(rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap_err()), "approval_not_pending");
    assert_eq!(code(rt.resume_run().await.unwrap_err()), "approval_not_pending");
    assert!(!rt.cancel_approvals().unwrap());
    let messages = rt.messages();
    assert!(arkagent::HistoryInvariants::tool_calls_paired(&messages));
    let texts: Vec<String> = messages.iter().filter_map(|m| match m {
        arkagent::Message::Tool { content, .. } => Some(content.to_string()),
        _ => None,
    }).collect();
    assert!(texts[0].contains("cancelled") && texts[1].contains("weather done"), "{texts:?}");
    assert!(pay.ran().is_empty());
    assert_eq!(rt.run("something else").await.unwrap().final_text.as_deref(), Some("fresh start"));
}

/// README: "`cancelApprovals()` closes the paused turn … the calls that did not run are
/// answered `cancelled`, a rejected one keeps its `tool_rejected`".
#[tokio::test]
async fn tool_1_cancel_approvals_keeps_a_rejection() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = ScriptedModel::new(vec![tool_calls_reply(&[("a", "pay", json!({"amount": 1})), ("b", "pay", json!({"amount": 2}))], 10)]);
    let rt = AgentRuntime::new(config(registry(pay.clone(), weather)), model).unwrap();
    rt.run("pay twice").await.unwrap();
    rt.answer_approval("a", ApprovalDecision::Reject { reason: "too much".into() }).unwrap();
    assert!(rt.cancel_approvals().unwrap());
    let codes: Vec<(String, Option<String>)> = rt
        .messages()
        .iter()
        .filter_map(|m| match m {
            arkagent::Message::Tool { tool_call_id, content, .. } => {
                let v: Value = serde_json::from_str(&content.text()).ok()?;
                Some((tool_call_id.clone(), v["error"]["code"].as_str().map(str::to_owned)))
            }
            _ => None,
        })
        .collect();
    assert_eq!(codes, [("a".to_owned(), Some("tool_rejected".to_owned())), ("b".to_owned(), Some("cancelled".to_owned()))]);
    assert!(pay.ran().is_empty());
}

/// README ("One registry per runtime tree"): runtimes built from clones of one Rust config
/// share its registry (one view of all sessions); a `SubAgentRegistry::new()` of its own
/// in each runtime's `DelegationConfig` keeps them apart.
#[test]
fn iso_4_a_cloned_config_shares_its_registry_unless_given_its_own() {
    use arkagent::runtime::DelegationConfig;
    use arkagent::subagent::SubAgentRegistry;
    let mut c = config(ToolRegistry::new());
    c.delegation = Some(DelegationConfig { allow_clone: true, ..Default::default() });
    let model = ScriptedModel::new(vec![]);
    let (a, b) = (AgentRuntime::new(c.clone(), model.clone()).unwrap(), AgentRuntime::new(c.clone(), model.clone()).unwrap());
    assert!(Arc::ptr_eq(&a.sub_agent_registry().unwrap(), &b.sub_agent_registry().unwrap()), "one view");
    if let Some(d) = c.delegation.as_mut() {
        d.registry = Arc::new(SubAgentRegistry::new());
    }
    let own = AgentRuntime::new(c, model).unwrap();
    assert!(!Arc::ptr_eq(&a.sub_agent_registry().unwrap(), &own.sub_agent_registry().unwrap()), "its own");
}

#[tokio::test]
async fn tool_1_answers_from_two_threads_at_once_both_land() {
    for round in 0..10 {
        let db = crate::store::temp_dir("approval-concurrent").join("s.db");
        let model = ScriptedModel::new(vec![
            tool_calls_reply(&[("a", "pay", json!({"amount": 1})), ("b", "pay", json!({"amount": 2}))], 10),
            text_reply("paid", 20),
        ]);
        let pay = Arc::new(Counting::default());
        let rt = AgentRuntime::new(store_config(&db, pay.clone(), Arc::new(Counting::default())), model).unwrap();
        rt.run("pay both").await.unwrap();
        let answer = |id: &'static str| {
            let rt = rt.clone();
            std::thread::spawn(move || rt.answer_approval(id, ApprovalDecision::Approve))
        };
        let (a, b) = (answer("a"), answer("b"));
        a.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
        b.join().unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
        rt.resume_run().await.unwrap();
        assert_eq!(pay.ran().len(), 2);
    }
}

#[tokio::test]
async fn tool_1_what_the_person_types_never_stores_the_key() {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let model = pay_and_weather();
    let rt = AgentRuntime::new(config(registry(pay, weather)), model.clone()).unwrap();
    rt.run("pay").await.unwrap();
    rt.answer_approval("c_pay", ApprovalDecision::Reject { reason: format!("my key is {API_KEY}") }).unwrap();
    assert!(!rt.export_state().unwrap().contains(API_KEY));
    rt.resume_run().await.unwrap();
    assert!(!tool_messages(&model, 1)[0].1.contains(API_KEY));
}

#[test]
fn tool_2_an_import_with_a_bad_pending_turn_is_refused() {
    let model = pay_and_weather();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let exported = rt.block_on(async {
        let a = AgentRuntime::new(config(registry(Arc::default(), Arc::default())), model.clone()).unwrap();
        a.run("pay").await.unwrap();
        a.export_state().unwrap()
    });
    let base: Value = serde_json::from_str(&exported).unwrap();
    let mut bad = Vec::new();
    for iteration in [json!(0), json!(4_294_967_295u64)] {
        let mut v = base.clone();
        v["pending_turn"]["iteration"] = iteration;
        bad.push(v);
    }
    let mut v = base.clone();
    v["pending_turn"]["calls"][0]["state"] = json!({"approved": {"edited_arguments": "[1]"}});
    bad.push(v);
    for v in bad {
        let e = AgentRuntime::resume(config(ToolRegistry::new()), model.clone(), &v.to_string()).unwrap_err();
        assert_eq!(code(e), "invalid_state", "{}", v["pending_turn"]);
    }
}

/// Answers with one image.
struct Photo;

#[async_trait]
impl ToolExecutor for Photo {
    async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        let image = arkagent::ImageData::new(arkagent::history::tiny_png()).unwrap();
        ToolResult::ok("a photo").with_images(vec![arkagent::ImagePart::data(image, None)])
    }
}

/// IMG-5 over a paused turn: results made at different times (one while pausing, one after
/// the approval) are counted together against the model's image limit.
#[tokio::test]
async fn tool_1_a_paused_turns_results_stay_within_the_image_limit_together() {
    let mut tools = ToolRegistry::new();
    tools.register(ToolDefinition::new("snap", "Takes a photo", json!({"type": "object"})), Arc::new(Photo)).unwrap();
    tools.register(ToolDefinition::new("snap_private", "Takes a private photo", json!({"type": "object"})).with_approval(), Arc::new(Photo)).unwrap();
    let model = ScriptedModel::new(vec![
        tool_calls_reply(&[("s1", "snap", json!({})), ("s2", "snap_private", json!({}))], 10),
        text_reply("two photos?", 20),
    ]);
    let mut c = config(tools);
    c.model.max_images_per_request = 1;
    let rt = AgentRuntime::new(c, model.clone()).unwrap();
    rt.run("photos").await.unwrap();
    rt.answer_approval("s2", ApprovalDecision::Approve).unwrap();
    rt.resume_run().await.unwrap();
    let results = tool_messages(&model, 1);
    assert!(!results[0].1.contains("too_many_images"), "{results:?}");
    assert!(results[1].1.contains("too_many_images"), "the second image would pass the limit: {results:?}");
}

/// README: when every call was answered before the kill, pending_approvals is empty after
/// the restart and resume_run goes on; with no paused turn it gives approval_not_pending.
#[tokio::test]
async fn tool_2_a_turn_answered_in_full_before_a_kill_resumes_after_the_restart() {
    let db = crate::store::temp_dir("approval-answered").join("s.db");
    let model = pay_and_weather();
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    {
        let rt = AgentRuntime::new(store_config(&db, pay.clone(), weather.clone()), model.clone()).unwrap();
        rt.run("pay").await.unwrap();
        rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap();
        // Killed before resume_run.
    }
    let rt = AgentRuntime::new(store_config(&db, pay.clone(), weather), model).unwrap();
    assert!(rt.pending_approvals().is_empty());
    assert_eq!(rt.resume_run().await.unwrap().final_text.as_deref(), Some("paid"));
    assert_eq!(pay.ran(), ["c_pay"]);
    assert_eq!(code(rt.resume_run().await.unwrap_err()), "approval_not_pending");
}

/// The commit an armed [`Gated`] store holds: it says it began, waits to be let go, then
/// fails with `store_full` (a disk filling while an answer is written).
type Gate = Arc<Mutex<Option<(std::sync::mpsc::Sender<()>, std::sync::mpsc::Receiver<()>)>>>;

/// A memory store whose next commit, once armed, is held at the [`Gate`].
struct Gated {
    inner: arkagent::InMemorySessionStore,
    gate: Gate,
}

struct GatedLease {
    inner: Box<dyn arkagent::store::SessionLease>,
    gate: Gate,
}

impl arkagent::store::SessionLease for GatedLease {
    fn commit(&self, commit: &arkagent::store::Commit) -> Result<u64, arkagent::StoreError> {
        let armed = self.gate.lock().unwrap().take();
        if let Some((entered, release)) = armed {
            entered.send(()).unwrap();
            release.recv().unwrap();
            return Err(arkagent::StoreError::Full("simulated".into()));
        }
        self.inner.commit(commit)
    }
}

impl SessionStore for Gated {
    fn open_session(&self, id: &str) -> Result<arkagent::store::OpenedSession, arkagent::StoreError> {
        let opened = self.inner.open_session(id)?;
        Ok(arkagent::store::OpenedSession { lease: Box::new(GatedLease { inner: opened.lease, gate: self.gate.clone() }), state: opened.state })
    }
    fn list_sessions(&self) -> Result<Vec<arkagent::SessionSummary>, arkagent::StoreError> {
        self.inner.list_sessions()
    }
    fn delete_session(&self, id: &str) -> Result<bool, arkagent::StoreError> {
        self.inner.delete_session(id)
    }
}

/// A paused turn whose answer's commit is held, then fails, while `op` runs on another
/// thread (given the paused run's id); returns the runtime and the memory store behind it
/// once both are over.
async fn answer_failing_while(op: fn(&AgentRuntime, &str)) -> (AgentRuntime, arkagent::InMemorySessionStore) {
    let (pay, weather) = (Arc::new(Counting::default()), Arc::new(Counting::default()));
    let (mem, gate) = (arkagent::InMemorySessionStore::new(), Gate::default());
    let mut c = config(registry(pay.clone(), weather));
    c.store = Some(Arc::new(Gated { inner: mem.clone(), gate: gate.clone() }));
    let rt = AgentRuntime::new(c, pay_and_weather()).unwrap();
    let paused = rt.run("pay").await.unwrap();
    assert_eq!(paused.pending_approvals.len(), 1);
    let ((entered_tx, entered), (release, release_rx)) = (std::sync::mpsc::channel(), std::sync::mpsc::channel());
    *gate.lock().unwrap() = Some((entered_tx, release_rx));
    let answer = std::thread::spawn({
        let rt = rt.clone();
        move || rt.answer_approval("c_pay", ApprovalDecision::Approve)
    });
    entered.recv().unwrap(); // the answer is set and being written
    let other = std::thread::spawn({
        let rt = rt.clone();
        move || op(&rt, &paused.run_id)
    });
    std::thread::sleep(std::time::Duration::from_millis(30)); // it gets as far as it can
    release.send(()).unwrap();
    assert_eq!(code(answer.join().unwrap().unwrap_err()), "store_full", "the answer's commit failed");
    other.join().unwrap();
    assert!(pay.ran().is_empty());
    (rt, mem)
}

/// TOOL-1, TOOL-2 (review of issue 42): a detach, a rewind or an import while an answer is
/// being written waits for it; an answer whose commit failed is taken back without putting
/// back a turn that has gone since (the detached session's turn, a rewound one, an
/// imported state's), so the call is never answerable — and run — twice.
#[tokio::test]
async fn tool_2_a_detach_rewind_or_import_during_a_failing_answer_never_brings_its_turn_back() {
    for round in 0..5 {
        // Detached: the turn went with the stored session, still waiting there.
        let (rt, mem) = answer_failing_while(|rt, _| assert!(rt.detach_store().unwrap())).await;
        assert!(rt.pending_approvals().is_empty(), "round {round}: the detached runtime waits for nothing");
        assert_eq!(code(rt.answer_approval("c_pay", ApprovalDecision::Approve).unwrap_err()), "approval_not_pending");
        assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
        let mut c = config(registry(Arc::default(), Arc::default()));
        c.store = Some(Arc::new(mem));
        let reopened = AgentRuntime::new(c, pay_and_weather()).unwrap();
        let waiting = reopened.state().pending_turn.expect("the stored session keeps its turn");
        assert_eq!(waiting.calls[0].state, arkagent::history::PendingCallState::AwaitingApproval, "the failed answer is not stored");
        // Rewound to the paused run: nothing waits any more.
        let (rt, _) = answer_failing_while(|rt, run_id| {
            rt.rewind(run_id).unwrap();
        })
        .await;
        assert!(rt.pending_approvals().is_empty() && rt.state().pending_turn.is_none(), "round {round}: the rewound turn came back");
        assert!(arkagent::HistoryInvariants::tool_calls_paired(&rt.messages()));
        // An imported state without a paused turn replaces it.
        let (rt, _) = answer_failing_while(|rt, _| rt.import_state(&AgentRuntime::new(config(ToolRegistry::new()), pay_and_weather()).unwrap().export_state().unwrap()).unwrap()).await;
        assert!(rt.state().pending_turn.is_none(), "round {round}: the imported state got the old turn back");
    }
}
