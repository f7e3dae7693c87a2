//! More promises of include/arkagent.h, read by someone who has only the header: approvals
//! (answering, cancelling and resuming a paused turn), the chat gestures (rewind,
//! regenerate, edit and resend, fork), the session store and named workers. Each test
//! quotes the sentence it holds the library to (above it) and drives the C ABI the way a
//! C host would, with hostile inputs where the sentence allows them. Tests that found the
//! library doing something else are kept, `#[ignore]`d with the finding.

use std::ffi::{c_char, c_void, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use arkagent_c::{self as ffi, ArkAgentResult, ArkAgentRuntime, ArkAgentStore, ArkAgentToolCompletion, ArkAgentWorkerBuilder, ArkAgentWorkers};

use crate::header_promises::{
    chat, complete, delete, export, free, is_paired, messages, open_store, out_string, reply_text, run, runtime, runtime_with_compressor, scratch, store_list,
    subscribe, tools, ud, Events, Model, Squeeze, Tool, CONFIG,
};

// ------------------------------------------------------------------ helpers of this module

/// A config with its own session id.
fn config(session_id: &str) -> String {
    format!(r#"{{"model":{{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m","retry":{{"max_attempts":1}}}},"session_id":"{session_id}"}}"#)
}

/// An answer calling `(id, tool name, arguments JSON)`.
fn reply_args(calls: &[(&str, &str, &str)]) -> String {
    let calls: Vec<Value> = calls.iter().map(|(id, name, args)| json!({"id":id,"type":"function","function":{"name":name,"arguments":args}})).collect();
    chat(json!({"role":"assistant","content":null,"tool_calls":calls}))
}

/// `pay`: needs approval; its schema requires `amount`.
const PAY: &str = r#"{"name":"pay","description":"d","parameters":{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]},"requires_approval":true}"#;
const WEATHER: &str = r#"{"name":"weather","description":"d","parameters":{"type":"object"}}"#;

/// A tool that records the arguments of every call and answers `answer` at once.
struct Recorder {
    tool: Tool,
    calls: Arc<Mutex<Vec<Value>>>,
}

fn recorder(answer: &'static str) -> Recorder {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&calls);
    let tool = Tool(Box::new(move |call, c| {
        let call: Value = serde_json::from_str(call).unwrap();
        seen.lock().unwrap().push(call["arguments"].clone());
        let answer = CString::new(answer).unwrap();
        // SAFETY: the library's completion and a NUL-terminated result.
        assert_eq!(unsafe { ffi::arkagent_tool_complete(c, answer.as_ptr(), 0) }, ArkAgentResult::Ok);
    }));
    Recorder { tool, calls }
}

impl Recorder {
    fn count(&self) -> usize {
        self.calls.lock().unwrap().len()
    }
}

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn pending(rt: *mut ArkAgentRuntime) -> Vec<Value> {
    // SAFETY: a live runtime and an out pointer.
    let (r, out) = out_string(|o| unsafe { ffi::arkagent_runtime_pending_approvals(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    serde_json::from_str(&out.unwrap()).unwrap()
}

fn approve(rt: *mut ArkAgentRuntime, call_id: &str, edited: Option<&str>) -> ArkAgentResult {
    let (id, edited) = (cstr(call_id), edited.map(cstr));
    // SAFETY: NUL-terminated strings or NULL.
    unsafe { ffi::arkagent_runtime_approve(rt, id.as_ptr(), edited.as_ref().map_or(std::ptr::null(), |e| e.as_ptr())) }
}

fn reject(rt: *mut ArkAgentRuntime, call_id: &str, reason: &str) -> ArkAgentResult {
    let (id, reason) = (cstr(call_id), cstr(reason));
    // SAFETY: NUL-terminated strings.
    unsafe { ffi::arkagent_runtime_reject(rt, id.as_ptr(), reason.as_ptr()) }
}

fn resume(rt: *mut ArkAgentRuntime) -> (ArkAgentResult, Option<Value>) {
    // SAFETY: an out pointer.
    let (r, out) = out_string(|o| unsafe { ffi::arkagent_runtime_resume_run(rt, o) });
    (r, out.map(|s| serde_json::from_str(&s).unwrap()))
}

fn cancel_approvals(rt: *mut ArkAgentRuntime) -> (ArkAgentResult, bool) {
    let mut closed = false;
    // SAFETY: an out pointer.
    let r = unsafe { ffi::arkagent_runtime_cancel_approvals(rt, &mut closed) };
    (r, closed)
}

fn rewind(rt: *mut ArkAgentRuntime, run_id: &str) -> (ArkAgentResult, Option<Value>) {
    let id = cstr(run_id);
    // SAFETY: a NUL-terminated string and an out pointer.
    let (r, out) = out_string(|o| unsafe { ffi::arkagent_runtime_rewind(rt, id.as_ptr(), o) });
    (r, out.map(|s| serde_json::from_str(&s).unwrap()))
}

fn regenerate(rt: *mut ArkAgentRuntime, run_id: &str) -> (ArkAgentResult, Option<String>) {
    let id = cstr(run_id);
    // SAFETY: a NUL-terminated string and an out pointer.
    out_string(|o| unsafe { ffi::arkagent_runtime_regenerate(rt, id.as_ptr(), o) })
}

fn edit_and_resend(rt: *mut ArkAgentRuntime, run_id: &str, input: &str) -> (ArkAgentResult, Option<String>) {
    let (id, input) = (cstr(run_id), cstr(input));
    // SAFETY: NUL-terminated strings and an out pointer.
    out_string(|o| unsafe { ffi::arkagent_runtime_edit_and_resend(rt, id.as_ptr(), input.as_ptr(), o) })
}

fn fork(rt: *mut ArkAgentRuntime, new_id: &str, through: Option<&str>) -> (ArkAgentResult, Option<String>) {
    let (id, through) = (cstr(new_id), through.map(cstr));
    // SAFETY: NUL-terminated strings or NULL and an out pointer.
    out_string(|o| unsafe { ffi::arkagent_runtime_fork(rt, id.as_ptr(), through.as_ref().map_or(std::ptr::null(), |t| t.as_ptr()), o) })
}

fn attach(rt: *mut ArkAgentRuntime, store: *mut ArkAgentStore, session_id: Option<&str>) -> ArkAgentResult {
    let id = session_id.map(cstr);
    // SAFETY: NULL or a NUL-terminated string.
    unsafe { ffi::arkagent_runtime_attach_store(rt, store, id.as_ref().map_or(std::ptr::null(), |i| i.as_ptr())) }
}

fn store_list_raw(store: *mut ArkAgentStore) -> (ArkAgentResult, Option<String>) {
    // SAFETY: an out pointer.
    out_string(|o| unsafe { ffi::arkagent_store_list(store, o) })
}

fn usages(rt: *mut ArkAgentRuntime) -> Vec<Value> {
    // SAFETY: an out pointer.
    let (r, out) = out_string(|o| unsafe { ffi::arkagent_runtime_usages(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    serde_json::from_str(&out.unwrap()).unwrap()
}

fn run_id(outcome: &Option<Value>) -> String {
    outcome.as_ref().unwrap()["run_id"].as_str().unwrap().to_owned()
}

fn tool_result<'a>(history: &'a [Value], call_id: &str) -> Vec<&'a Value> {
    history.iter().filter(|m| m["role"] == "tool" && m["tool_call_id"] == call_id).collect()
}

/// Copies the store file (and its WAL) as a kill right now would leave them.
fn snapshot(path: &Path, to: &Path) {
    std::fs::copy(path, to).unwrap();
    let wal = PathBuf::from(format!("{}-wal", path.display()));
    if wal.exists() {
        std::fs::copy(&wal, format!("{}-wal", to.display())).unwrap();
    }
}

// ------------------------------------------------------------------ TOOL-1 / TOOL-2: approvals

// arkagent_runtime_approve: "... with `edited_arguments_json` instead of the model's
// arguments when not NULL ...; that answer is committed to the session store before this
// returns: a kill after it loses nothing." arkagent_runtime_reject: "Committed like
// [`arkagent_runtime_approve`]". The store file is copied while the runtime still lives
// (what a kill right after the call leaves); a runtime on the copy has nothing left to ask
// and runs the edited call once.
#[test]
fn tool_2_c_an_answer_is_in_the_store_file_when_approve_or_reject_returns() {
    let dir = scratch("h2-approve-durable");
    let (path, copy) = (dir.join("s.db"), dir.join("copy.db"));
    let two_pays = reply_args(&[("c_a", "pay", r#"{"amount":500}"#), ("c_b", "pay", r#"{"amount":7}"#)]);
    let model = Model::replying(vec![two_pays, reply_text("Paid.")]);
    let pay = recorder("paid");
    let set = tools(&[(PAY, &pay.tool)]);
    let rt = runtime(&config("h2-approve"), set, &model);
    ffi::arkagent_tools_free(set);
    let store = open_store(&path);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    let (r, outcome) = run(rt, "pay both");
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["status"], "awaiting_approval");
    assert_eq!(approve(rt, "c_a", Some(r#"{"amount":50}"#)), ArkAgentResult::Ok);
    assert_eq!(reject(rt, "c_b", "not this one"), ArkAgentResult::Ok);
    // The "kill": the files as they are now, the runtime not freed.
    snapshot(&path, &copy);

    let model2 = Model::replying(vec![reply_text("Paid after the restart.")]);
    let pay2 = recorder("paid");
    let set2 = tools(&[(PAY, &pay2.tool)]);
    let restarted = runtime(&config("h2-approve"), set2, &model2);
    ffi::arkagent_tools_free(set2);
    let copied = open_store(&copy);
    assert_eq!(attach(restarted, copied, None), ArkAgentResult::Ok);
    assert_eq!(pending(restarted), Vec::<Value>::new(), "both answers survived: nothing waits");
    let (r, outcome) = resume(restarted);
    assert_eq!(r, ArkAgentResult::Ok, "every call was answered before the kill: the run goes on");
    assert_eq!(outcome.unwrap()["status"], "completed");
    assert_eq!(*pay2.calls.lock().unwrap(), [json!({"amount":50})], "the edited call ran once, the rejected one never");
    assert_eq!(pay.count(), 0);
    let last = model2.body(0);
    assert!(last.contains("tool_rejected") && last.contains("not this one"), "the rejection and its reason survived: {last}");
    assert!(is_paired(&messages(restarted)));
    free(restarted);
    free(rt);
    ffi::arkagent_store_free(store);
    ffi::arkagent_store_free(copied);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_runtime_cancel_approvals: "every call that did not run is answered as on a
// cancel (`cancelled`; `tool_rejected` and `tool_interrupted` as decided), the calls that
// ran keep their results, the turn joins the history paired and is committed; no model
// call. `*out_closed` ... true when a turn was closed, false when none waited. Answering
// afterwards gives `ARK_AGENT_RESULT_APPROVAL_NOT_PENDING`."
#[test]
fn tool_1_c_cancel_approvals_keeps_ran_results_and_rejections_and_commits_the_closed_turn() {
    let dir = scratch("h2-cancel-approvals");
    let path = dir.join("s.db");
    let calls = reply_args(&[("c_w", "weather", "{}"), ("c_a", "pay", r#"{"amount":1}"#), ("c_b", "pay", r#"{"amount":2}"#)]);
    let model = Model::replying(vec![calls, reply_text("never")]);
    let (pay, weather) = (recorder("paid"), recorder("sunny"));
    let set = tools(&[(PAY, &pay.tool), (WEATHER, &weather.tool)]);
    let rt = runtime(&config("h2-cancel"), set, &model);
    let store = open_store(&path);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    let (r, outcome) = run(rt, "weather, then pay twice");
    assert_eq!((r, outcome.unwrap()["status"].clone()), (ArkAgentResult::Ok, json!("awaiting_approval")));
    assert_eq!(weather.count(), 1, "the call needing no answer ran");
    assert_eq!(approve(rt, "c_a", None), ArkAgentResult::Ok);
    assert_eq!(reject(rt, "c_b", "too much"), ArkAgentResult::Ok);
    assert_eq!(cancel_approvals(rt), (ArkAgentResult::Ok, true));
    assert_eq!(model.requests(), 1, "no model call");
    assert_eq!(pay.count(), 0, "the approved call did not run");
    let history = messages(rt);
    assert!(is_paired(&history), "{history:?}");
    let content = |id: &str| {
        let results = tool_result(&history, id);
        assert_eq!(results.len(), 1, "{id} answered once: {history:?}");
        results[0]["content"].to_string()
    };
    assert!(content("c_w").contains("sunny"), "the call that ran keeps its result");
    assert!(content("c_a").contains("cancelled"), "the approved call that did not run: cancelled, {}", content("c_a"));
    let rejected = content("c_b");
    assert!(rejected.contains("tool_rejected") && rejected.contains("too much"), "the rejection as decided: {rejected}");
    assert_eq!(approve(rt, "c_a", None), ArkAgentResult::ApprovalNotPending);
    assert_eq!(reject(rt, "c_b", "x"), ArkAgentResult::ApprovalNotPending);
    assert_eq!(resume(rt).0, ArkAgentResult::ApprovalNotPending);
    assert_eq!(cancel_approvals(rt), (ArkAgentResult::Ok, false), "none waits any more");
    free(rt);
    // Committed: a runtime resuming the session has the closed turn.
    let again = runtime(&config("h2-cancel"), set, &model);
    ffi::arkagent_tools_free(set);
    assert_eq!(attach(again, store, None), ArkAgentResult::Ok);
    assert_eq!(messages(again), history, "the closed turn is in the store");
    assert_eq!(pending(again), Vec::<Value>::new());
    free(again);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_runtime_cancel_approvals: "Errors: `_RUN_IN_PROGRESS`". arkagent_runtime_resume_run:
// "Errors: ... `_RUN_IN_PROGRESS`". arkagent_runtime_rewind / arkagent_runtime_fork:
// "`_RUN_IN_PROGRESS` ...; then nothing changed". arkagent_runtime_pending_approvals: "Any
// thread, also while a run is going". While a resumed run holds the session (its approved
// tool is running), another thread tries every answer and gesture.
#[test]
fn tool_1_c_answers_and_gestures_from_another_thread_during_a_resume_are_run_in_progress() {
    let model = Model::replying(vec![reply_args(&[("c_pay", "pay", r#"{"amount":3}"#)]), reply_text("Paid.")]);
    let rt_cell = Arc::new(AtomicUsize::new(0));
    let paused_run = Arc::new(Mutex::new(String::new()));
    let run_seen = Arc::clone(&paused_run);
    let tried = Arc::new(Mutex::new(Vec::<(&str, ArkAgentResult)>::new()));
    let seen_pending = Arc::new(Mutex::new(None::<String>));
    let (rt_seen, log, pending_log) = (Arc::clone(&rt_cell), Arc::clone(&tried), Arc::clone(&seen_pending));
    let runs = Arc::new(AtomicUsize::new(0));
    let ran = Arc::clone(&runs);
    let pay = Tool(Box::new(move |_, c| {
        ran.fetch_add(1, Ordering::SeqCst);
        let (c, rt, log, pending_log) = (c as usize, rt_seen.load(Ordering::SeqCst), Arc::clone(&log), Arc::clone(&pending_log));
        let paused = cstr(&run_seen.lock().unwrap());
        std::thread::spawn(move || {
            let rt = rt as *mut ArkAgentRuntime;
            let mut closed = true;
            // SAFETY: a live runtime (its blocking call waits for this tool), strings, out pointers.
            let codes = unsafe {
                [
                    ("cancel_approvals", ffi::arkagent_runtime_cancel_approvals(rt, &mut closed)),
                    ("resume_run", ffi::arkagent_runtime_resume_run(rt, std::ptr::null_mut())),
                    ("rewind", ffi::arkagent_runtime_rewind(rt, paused.as_ptr(), std::ptr::null_mut())),
                    ("fork", ffi::arkagent_runtime_fork(rt, c"h2-during-fork".as_ptr(), std::ptr::null(), std::ptr::null_mut())),
                    ("run", ffi::arkagent_runtime_run(rt, c"interloper".as_ptr(), std::ptr::null_mut())),
                ]
            };
            log.lock().unwrap().extend(codes);
            // SAFETY: a live runtime and an out pointer.
            let (r, list) = out_string(|o| unsafe { ffi::arkagent_runtime_pending_approvals(rt, o) });
            assert_eq!(r, ArkAgentResult::Ok, "pending_approvals while a run is going");
            *pending_log.lock().unwrap() = list;
            // SAFETY: the library's completion.
            assert_eq!(unsafe { ffi::arkagent_tool_complete(c as *mut ArkAgentToolCompletion, c"paid".as_ptr(), 0) }, ArkAgentResult::Ok);
        });
    }));
    let set = tools(&[(PAY, &pay)]);
    let rt = runtime(&config("h2-during"), set, &model);
    ffi::arkagent_tools_free(set);
    rt_cell.store(rt as usize, Ordering::SeqCst);
    let (_, outcome) = run(rt, "pay");
    assert_eq!(outcome.as_ref().unwrap()["status"], "awaiting_approval");
    *paused_run.lock().unwrap() = run_id(&outcome);
    assert_eq!(approve(rt, "c_pay", None), ArkAgentResult::Ok);
    let (r, outcome) = resume(rt);
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["status"], "completed");
    let busy = ArkAgentResult::RunInProgress;
    assert_eq!(
        *tried.lock().unwrap(),
        [("cancel_approvals", busy), ("resume_run", busy), ("rewind", busy), ("fork", busy), ("run", busy)],
        "every call on the busy session from another thread is refused RUN_IN_PROGRESS"
    );
    assert!(seen_pending.lock().unwrap().is_some());
    assert_eq!(runs.load(Ordering::SeqCst), 1, "the approved call ran once");
    assert_eq!(model.requests(), 2, "nothing else reached the model");
    let history = messages(rt);
    assert_eq!(tool_result(&history, "c_pay").len(), 1);
    assert!(history.iter().all(|m| m["content"] != "interloper"), "the refused run left no input");
    assert_eq!(history[0]["content"], "pay", "the refused rewind dropped nothing");
    assert_eq!(fork(rt, "h2-during-fork", None).0, ArkAgentResult::Ok, "the refused fork left the id free");
    free(rt);
}

// ArkAgentEventCallback: "Do not call blocking arkagent functions from it (they return
// `ARK_AGENT_RESULT_REENTRANT`, whichever call emitted the event)." arkagent_runtime_regenerate /
// arkagent_runtime_edit_and_resend: "blocking the calling thread like `arkagent_runtime_run`
// ... Errors: ... `_REENTRANT`"; arkagent_runtime_resume_run: "blocking the calling thread
// ... `_REENTRANT`". Tried from events of a run, of a resume and of a rewind.
// (Found by this test: the three returned RUN_IN_PROGRESS; the reentrancy is now checked
// before anything else.)
#[test]
fn chat_1_c_regenerate_edit_and_resume_from_an_event_callback_are_refused_reentrant() {
    let replies = vec![reply_text("one"), reply_args(&[("c_pay", "pay", r#"{"amount":1}"#)]), reply_text("paid")];
    let model = Model::replying(replies);
    let pay = recorder("paid");
    let set = tools(&[(PAY, &pay.tool)]);
    let rt = runtime(&config("h2-reentrant"), set, &model);
    ffi::arkagent_tools_free(set);
    let (r, first) = run(rt, "first");
    assert_eq!(r, ArkAgentResult::Ok);
    let r1 = run_id(&first);
    let target = Arc::new(Mutex::new(r1.clone()));
    let tried = Arc::new(Mutex::new(Vec::<(String, &str, ArkAgentResult)>::new()));
    let (rt_addr, log, r1_seen) = (rt as usize, Arc::clone(&tried), Arc::clone(&target));
    let events = Events::new(move |e| {
        let rt = rt_addr as *mut ArkAgentRuntime;
        let id = cstr(&r1_seen.lock().unwrap());
        let kind = e["type"].as_str().unwrap_or_default().to_owned();
        // SAFETY: a live runtime, NUL-terminated strings, NULL out pointers.
        let codes = unsafe {
            [
                ("regenerate", ffi::arkagent_runtime_regenerate(rt, id.as_ptr(), std::ptr::null_mut())),
                ("edit_and_resend", ffi::arkagent_runtime_edit_and_resend(rt, id.as_ptr(), c"edited".as_ptr(), std::ptr::null_mut())),
                ("resume_run", ffi::arkagent_runtime_resume_run(rt, std::ptr::null_mut())),
            ]
        };
        log.lock().unwrap().extend(codes.into_iter().map(|(call, code)| (kind.clone(), call, code)));
    });
    subscribe(rt, &events);
    let (_, second) = run(rt, "second");
    assert_eq!(second.as_ref().unwrap()["status"], "awaiting_approval");
    assert_eq!(approve(rt, "c_pay", None), ArkAgentResult::Ok);
    let (r, outcome) = resume(rt);
    assert_eq!((r, outcome.unwrap()["status"].clone()), (ArkAgentResult::Ok, json!("completed")));
    let r2 = run_id(&second);
    // A rewind is not blocking; its session_rewound event still may not start a run.
    assert_eq!(rewind(rt, &r2).0, ArkAgentResult::Ok);
    let tried = tried.lock().unwrap().clone();
    assert!(tried.iter().any(|(k, ..)| k == "approval_requested"), "events of the paused run were tried");
    assert!(tried.iter().any(|(k, ..)| k == "session_rewound"), "the rewind's event was tried");
    let wrong: Vec<_> = tried.iter().filter(|t| t.2 != ArkAgentResult::Reentrant).collect();
    assert!(wrong.is_empty(), "(event, call, result) not refused REENTRANT: {wrong:#?}");
    assert_eq!(model.requests(), 3, "no refused call reached the model");
    assert_eq!(events.of_type("run_started").len(), 2, "only the run and the resume started runs");
    let history = messages(rt);
    assert_eq!(history.len(), 2, "after the rewind: run 1 only, as it was: {history:?}");
    assert_eq!(history[0]["content"], "first");
    free(rt);
}

// ------------------------------------------------------------------ CHAT-1: rewind, regenerate, edit

// arkagent_runtime_rewind: "that run and every later one are dropped (their messages, a
// turn of theirs waiting for approval) as one change, written to the attached store
// first". README: "A turn waiting for approval is dropped with its run (its calls never
// run)."
#[test]
fn chat_1_c_rewind_drops_a_turn_waiting_for_approval_and_its_call_never_runs() {
    let dir = scratch("h2-rewind-paused");
    let path = dir.join("s.db");
    let model = Model::replying(vec![reply_text("hello"), reply_args(&[("c_pay", "pay", r#"{"amount":9}"#)]), reply_text("next answer")]);
    let pay = recorder("paid");
    let set = tools(&[(PAY, &pay.tool)]);
    let rt = runtime(&config("h2-rewind-paused"), set, &model);
    let store = open_store(&path);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    run(rt, "hi");
    let (_, second) = run(rt, "pay it");
    assert_eq!(second.as_ref().unwrap()["status"], "awaiting_approval");
    let (r, result) = rewind(rt, &run_id(&second));
    assert_eq!(r, ArkAgentResult::Ok);
    let result = result.unwrap();
    assert_eq!(result["dropped_run_ids"], json!([run_id(&second)]));
    assert_eq!(result["input_text"], "pay it");
    assert_eq!(pending(rt), Vec::<Value>::new(), "the waiting turn is gone");
    assert_eq!(approve(rt, "c_pay", None), ArkAgentResult::ApprovalNotPending);
    assert_eq!(resume(rt).0, ArkAgentResult::ApprovalNotPending);
    assert_eq!(cancel_approvals(rt), (ArkAgentResult::Ok, false));
    free(rt);
    // Written to the store: a runtime resuming the session has nothing waiting either.
    let again = runtime(&config("h2-rewind-paused"), set, &model);
    ffi::arkagent_tools_free(set);
    assert_eq!(attach(again, store, None), ArkAgentResult::Ok);
    assert_eq!(pending(again), Vec::<Value>::new(), "the store has no waiting turn");
    assert_eq!(messages(again).len(), 2, "run 1 only");
    let (r, next) = run(again, "something else");
    assert_eq!(r, ArkAgentResult::Ok, "not refused approval_pending");
    assert_eq!(next.unwrap()["status"], "completed");
    assert_eq!(pay.count(), 0, "the dropped call never ran");
    assert!(!model.body(2).contains("c_pay"), "the dropped turn is not in the next request");
    assert_eq!(tool_result(&messages(again), "c_pay").len(), 0);
    free(again);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

fn compressing_squeezer() -> Squeeze {
    Squeeze(
        Box::new(|_, _, c| {
            let answer = c"{\"outcome\":\"compressed\",\"split_index\":2,\"summary\":\"The user said one; the assistant answered.\"}";
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, answer.as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    )
}

// arkagent_runtime_rewind: "Errors: `ARK_AGENT_RESULT_UNKNOWN_RUN` (no such run, or an
// earlier rewind dropped it), `_RUN_COMPRESSED` (a compression archived its input),
// `_RUN_IN_PROGRESS`, the store's codes; then nothing changed." arkagent_runtime_regenerate /
// arkagent_runtime_edit_and_resend: "Errors: the rewind's (then no run starts)".
// arkagent_runtime_fork: "Errors: `_UNKNOWN_RUN`, `_RUN_COMPRESSED`" (the cut inside what a
// compression archived: a fork through run 1 cuts at run 2's input, live here). Nothing changed: the
// export and the store's list are byte-identical, no event, no model call, no out string.
#[test]
fn chat_1_c_refused_rewinds_regenerates_edits_and_forks_change_nothing() {
    let dir = scratch("h2-refused-rewind");
    let path = dir.join("s.db");
    let model = Model::replying(vec![reply_text("one"), reply_text("two"), reply_text("three"), reply_text("four")]);
    let squeezer = compressing_squeezer();
    let rt = runtime_with_compressor(&config("h2-refused"), &model, &squeezer, u64::MAX);
    let store = open_store(&path);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    let ids: Vec<String> = ["first", "second", "third", "fourth"].iter().map(|i| run_id(&run(rt, i).1)).collect();
    assert_eq!(rewind(rt, &ids[3]).0, ArkAgentResult::Ok, "run 4 dropped");
    // SAFETY: a live runtime and an out pointer.
    let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    assert!(result.unwrap().contains("\"outcome\":\"compressed\""), "run 1's input archived");
    let heard = Arc::new(Mutex::new(Vec::<Value>::new()));
    let log = Arc::clone(&heard);
    let events = Events::new(move |e| log.lock().unwrap().push(e.clone()));
    subscribe(rt, &events);
    let (before, listed_before, requests_before) = (export(rt), store_list_raw(store), model.requests());
    let json = |(r, v): (ArkAgentResult, Option<Value>)| (r, v.map(|v| v.to_string()));
    let refused: Vec<(&str, (ArkAgentResult, Option<String>))> = vec![
        ("rewind unknown", json(rewind(rt, "no-such-run"))),
        ("rewind dropped", json(rewind(rt, &ids[3]))),
        ("rewind compressed", json(rewind(rt, &ids[0]))),
        ("regenerate unknown", regenerate(rt, "no-such-run")),
        ("regenerate dropped", regenerate(rt, &ids[3])),
        ("regenerate compressed", regenerate(rt, &ids[0])),
        ("edit dropped", edit_and_resend(rt, &ids[3], "x")),
        ("edit compressed", edit_and_resend(rt, &ids[0], "x")),
        ("fork unknown", fork(rt, "h2-refused-f", Some("no-such-run"))),
        ("fork dropped", fork(rt, "h2-refused-f", Some(&ids[3]))),
    ];
    let codes: Vec<(&str, ArkAgentResult)> = refused.iter().map(|(what, (code, _))| (*what, *code)).collect();
    let (unknown, compressed) = (ArkAgentResult::UnknownRun, ArkAgentResult::RunCompressed);
    assert_eq!(
        codes,
        [
            ("rewind unknown", unknown),
            ("rewind dropped", unknown),
            ("rewind compressed", compressed),
            ("regenerate unknown", unknown),
            ("regenerate dropped", unknown),
            ("regenerate compressed", compressed),
            ("edit dropped", unknown),
            ("edit compressed", compressed),
            ("fork unknown", unknown),
            ("fork dropped", unknown),
        ]
    );
    assert!(refused.iter().all(|(_, (_, out))| out.is_none()), "no out string on a refusal: {refused:?}");
    assert_eq!(export(rt), before, "the state is byte-identical");
    assert_eq!(store_list_raw(store), listed_before, "the store is as it was");
    assert_eq!(model.requests(), requests_before, "no run started");
    assert_eq!(*heard.lock().unwrap(), Vec::<Value>::new(), "no event");
    // A fork through run 1, whose input is archived, cuts at run 2's input, which is live.
    let (r, forked) = fork(rt, "h2-refused-f", Some(&ids[0]));
    assert_eq!(r, ArkAgentResult::Ok);
    assert!(forked.is_some_and(|s| s.contains("\"session_id\":\"h2-refused-f\"")));
    free(rt);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_runtime_regenerate: "`arkagent_runtime_rewind` to run `run_id`, then a new run
// (a new run id) of the same input". arkagent_runtime_edit_and_resend: "then a new run of
// `input` in its place". The dropped ids stay unknown afterwards; the later run is dropped
// too, and the one session_rewound lists both.
#[test]
fn chat_1_c_regenerate_and_edit_drop_every_later_run_and_their_ids_stay_unknown() {
    let model = Model::new(|n, body, c| {
        let v: Value = serde_json::from_str(body).unwrap();
        let last = v["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap_or_default().to_owned();
        assert_eq!(complete(c, 200, &reply_text(&format!("answer {n} to {last}"))), ArkAgentResult::Ok);
    });
    let rt = runtime(&config("h2-regen"), std::ptr::null(), &model);
    let ids: Vec<String> = ["a", "b", "c"].iter().map(|i| run_id(&run(rt, i).1)).collect();
    let events = Events::new(|_| {});
    subscribe(rt, &events);
    let (r, outcome) = regenerate(rt, &ids[1]);
    assert_eq!(r, ArkAgentResult::Ok);
    let outcome: Value = serde_json::from_str(&outcome.unwrap()).unwrap();
    let regenerated = outcome["run_id"].as_str().unwrap().to_owned();
    assert!(!ids.contains(&regenerated), "a new run id");
    assert_eq!(outcome["final_text"], "answer 3 to b", "the same input again");
    let rewound = events.of_type("session_rewound");
    assert_eq!(rewound.len(), 1);
    assert_eq!(rewound[0]["dropped_run_ids"], json!([ids[1], ids[2]]), "that run and every later one");
    let contents: Vec<Value> = messages(rt).iter().map(|m| m["content"].clone()).collect();
    assert_eq!(contents, [json!("a"), json!("answer 0 to a"), json!("b"), json!("answer 3 to b")]);
    for dropped in [&ids[1], &ids[2]] {
        assert_eq!(rewind(rt, dropped).0, ArkAgentResult::UnknownRun, "a dropped id is unknown");
    }
    let (r, outcome) = edit_and_resend(rt, &regenerated, "B!");
    assert_eq!(r, ArkAgentResult::Ok);
    assert!(outcome.unwrap().contains("answer 4 to B!"));
    let contents: Vec<Value> = messages(rt).iter().map(|m| m["content"].clone()).collect();
    assert_eq!(contents, [json!("a"), json!("answer 0 to a"), json!("B!"), json!("answer 4 to B!")]);
    assert_eq!(regenerate(rt, &regenerated).0, ArkAgentResult::UnknownRun);
    assert_eq!(model.requests(), 5);
    free(rt);
}

// ------------------------------------------------------------------ CHAT-2: fork

// arkagent_runtime_fork: "(... NULL: the whole session, a turn waiting for approval
// included): the messages, ...; its usages start empty (what was spent stays this
// session's). With a store attached the fork is written into it as a new session ...; a
// runtime attached to the store with `new_session_id` resumes it. ... This session does
// not change."
#[test]
fn chat_2_c_a_fork_of_a_paused_session_carries_the_waiting_turn_and_leaves_the_source_unchanged() {
    let dir = scratch("h2-fork-paused");
    let path = dir.join("s.db");
    let model = Model::replying(vec![reply_text("hello"), reply_args(&[("c_pay", "pay", r#"{"amount":4}"#)]), reply_text("paid in the fork")]);
    let pay = recorder("paid");
    let set = tools(&[(PAY, &pay.tool)]);
    let rt = runtime(&config("h2-src"), set, &model);
    let store = open_store(&path);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    run(rt, "hi");
    let (_, paused) = run(rt, "pay");
    assert_eq!(paused.unwrap()["status"], "awaiting_approval");
    let source_usages = usages(rt);
    assert_eq!(source_usages.len(), 2);
    let (before, history) = (export(rt), messages(rt));
    let listed = store_list(store);
    let source_entry = listed.iter().find(|s| s["id"] == "h2-src").cloned().unwrap();
    let (r, state) = fork(rt, "h2-fork", None);
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(export(rt), before, "this session does not change: the export is byte-identical");
    let after = store_list(store);
    assert_eq!(after.iter().find(|s| s["id"] == "h2-src"), Some(&source_entry), "nor its stored entry");
    assert!(after.iter().any(|s| s["id"] == "h2-fork"), "the fork is a new session of the store: {after:?}");
    // The state written out: usages empty; imported elsewhere, the same call waits.
    let imported = runtime(&config("h2-imported"), set, &model);
    let state = cstr(state.as_ref().unwrap());
    // SAFETY: a NUL-terminated state.
    assert_eq!(unsafe { ffi::arkagent_runtime_import_state(imported, state.as_ptr()) }, ArkAgentResult::Ok);
    assert_eq!(pending(imported).len(), 1, "the waiting turn is in the fork's state");
    assert_eq!(usages(imported), Vec::<Value>::new(), "its usages start empty");
    free(imported);
    // The stored fork resumes with the waiting call, and goes on independently.
    let forked = runtime(&config("h2-fork"), set, &model);
    ffi::arkagent_tools_free(set);
    assert_eq!(attach(forked, store, None), ArkAgentResult::Ok);
    let waiting = pending(forked);
    assert_eq!(waiting.len(), 1);
    assert_eq!((waiting[0]["call_id"].clone(), waiting[0]["arguments"].clone()), (json!("c_pay"), json!(r#"{"amount":4}"#)));
    assert_eq!(usages(forked), Vec::<Value>::new(), "what was spent stays the source's");
    assert_eq!(approve(forked, "c_pay", None), ArkAgentResult::Ok);
    let (r, outcome) = resume(forked);
    assert_eq!((r, outcome.unwrap()["status"].clone()), (ArkAgentResult::Ok, json!("completed")));
    assert_eq!(pay.count(), 1);
    assert_eq!(pending(rt).len(), 1, "the source still waits");
    assert_eq!(messages(rt), history);
    assert_eq!(export(rt), before);
    free(forked);
    free(rt);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_runtime_fork: "Errors: ... `_SESSION_EXISTS` (the store has that session, or it
// is this session's id), `_INVALID_CONFIG` (an empty id), ..." — and, as for every
// refusal, nothing is written: no out string, the export and the store byte-identical.
#[test]
fn chat_2_c_fork_onto_a_taken_or_empty_id_is_refused_with_its_code_and_writes_nothing() {
    let dir = scratch("h2-fork-refused");
    let path = dir.join("s.db");
    let model = Model::replying(vec![reply_text("fine")]);
    let store = open_store(&path);
    let other = runtime(&config("h2-other"), std::ptr::null(), &model);
    assert_eq!(attach(other, store, None), ArkAgentResult::Ok);
    assert_eq!(run(other, "other's input").0, ArkAgentResult::Ok);
    free(other);
    assert!(store_list(store).iter().any(|s| s["id"] == "h2-other"), "the store has h2-other: {:?}", store_list(store));
    // Without a store: its own id is taken all the same.
    let loose = runtime(&config("h2-loose"), std::ptr::null(), &model);
    let r1 = run_id(&run(loose, "hi").1);
    let before = export(loose);
    assert_eq!(fork(loose, "h2-loose", None), (ArkAgentResult::SessionExists, None), "this session's id, no store");
    assert_eq!(fork(loose, "h2-loose", Some(&r1)), (ArkAgentResult::SessionExists, None));
    assert_eq!(fork(loose, "", None), (ArkAgentResult::InvalidConfig, None));
    assert_eq!(export(loose), before);
    free(loose);
    let rt = runtime(&config("h2-forker"), std::ptr::null(), &model);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    let r1 = run_id(&run(rt, "hi").1);
    let (before, listed) = (export(rt), store_list_raw(store));
    assert_eq!(fork(rt, "h2-other", None), (ArkAgentResult::SessionExists, None), "the store has that session");
    assert_eq!(fork(rt, "h2-other", Some(&r1)), (ArkAgentResult::SessionExists, None));
    assert_eq!(fork(rt, "h2-forker", None), (ArkAgentResult::SessionExists, None), "this session's id");
    assert_eq!(fork(rt, "", Some(&r1)), (ArkAgentResult::InvalidConfig, None));
    assert_eq!(export(rt), before);
    assert_eq!(store_list_raw(store), listed, "nothing written");
    // The other session is untouched: resumed, it has its own messages only.
    free(rt);
    let resumed = runtime(&config("h2-other"), std::ptr::null(), &model);
    assert_eq!(attach(resumed, store, None), ArkAgentResult::Ok);
    assert_eq!(messages(resumed)[0]["content"], "other's input");
    assert_eq!(messages(resumed).len(), 2);
    free(resumed);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------------------------ STORE: handles, attach, open

// ArkAgentStore: "A runtime it was attached to keeps the store open on its own."
// arkagent_store_free: "Runtimes it was attached to keep the file open until they are
// freed. NULL and already-freed handles are ignored." arkagent_store_delete:
// "`ARK_AGENT_RESULT_SESSION_LOCKED` while a runtime (in any process) has it open." An
// answer given after the handle was freed is still committed.
#[test]
fn store_4_c_a_runtime_keeps_committing_after_its_store_handle_was_freed() {
    let dir = scratch("h2-store-freed");
    let path = dir.join("s.db");
    let model = Model::replying(vec![reply_text("one"), reply_args(&[("c_pay", "pay", r#"{"amount":5}"#)]), reply_text("paid")]);
    let pay = recorder("paid");
    let set = tools(&[(PAY, &pay.tool)]);
    let rt = runtime(&config("h2-freed"), set, &model);
    let store = open_store(&path);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    ffi::arkagent_store_free(store);
    ffi::arkagent_store_free(store);
    ffi::arkagent_store_free(std::ptr::null_mut());
    assert_eq!(store_list_raw(store), (ArkAgentResult::InvalidHandle, None), "the freed handle is refused");
    assert_eq!(delete(store, c"h2-freed").0, ArkAgentResult::InvalidHandle);
    let late = runtime(CONFIG, std::ptr::null(), &model);
    assert_eq!(attach(late, store, None), ArkAgentResult::InvalidHandle);
    free(late);
    let committed = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&committed);
    let events = Events::new(move |e| {
        if e["type"] == "session_committed" {
            count.fetch_add(1, Ordering::SeqCst);
        }
    });
    subscribe(rt, &events);
    assert_eq!(run(rt, "one").0, ArkAgentResult::Ok);
    let (_, paused) = run(rt, "pay");
    assert_eq!(paused.unwrap()["status"], "awaiting_approval");
    assert!(committed.load(Ordering::SeqCst) >= 3, "commits went on");
    assert_eq!(approve(rt, "c_pay", Some(r#"{"amount":6}"#)), ArkAgentResult::Ok);
    // Another handle on the file sees the session; it may not delete it while rt has it.
    let second = open_store(&path);
    let list = store_list(second);
    assert!(list.iter().any(|s| s["id"] == "h2-freed"), "{list:?}");
    assert_eq!(delete(second, c"h2-freed").0, ArkAgentResult::SessionLocked);
    assert!(store_list(second).iter().any(|s| s["id"] == "h2-freed"), "nothing deleted");
    free(rt);
    let again = runtime(&config("h2-freed"), set, &model);
    ffi::arkagent_tools_free(set);
    assert_eq!(attach(again, second, None), ArkAgentResult::Ok);
    assert_eq!(pending(again), Vec::<Value>::new(), "the answer given after the handle was freed was committed");
    assert_eq!(resume(again).0, ArkAgentResult::Ok);
    assert_eq!(*pay.calls.lock().unwrap(), [json!({"amount":6})]);
    free(again);
    assert_eq!(delete(second, c"h2-freed"), (ArkAgentResult::Ok, true));
    ffi::arkagent_store_free(second);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_runtime_attach_store: "Errors: `ARK_AGENT_RESULT_SESSION_LOCKED` while another
// runtime (in any process) has the session, ..., `ARK_AGENT_RESULT_INVALID_CONFIG` (a
// store is already attached, or `session_id` is empty)". A refused runtime is not
// attached: it can attach once the other runtime is freed.
#[test]
fn store_4_c_attach_refusals_have_their_documented_codes() {
    let dir = scratch("h2-attach-refused");
    let path = dir.join("s.db");
    let model = Model::replying(vec![reply_text("fine")]);
    let (store, other_handle) = (open_store(&path), open_store(&path));
    let first = runtime(&config("h2-shared"), std::ptr::null(), &model);
    assert_eq!(attach(first, store, None), ArkAgentResult::Ok);
    assert_eq!(attach(first, store, None), ArkAgentResult::InvalidConfig, "a store is already attached");
    assert_eq!(attach(first, other_handle, Some("h2-elsewhere")), ArkAgentResult::InvalidConfig, "also another store");
    let second = runtime(CONFIG, std::ptr::null(), &model);
    assert_eq!(attach(second, store, Some("h2-shared")), ArkAgentResult::SessionLocked);
    assert_eq!(attach(second, other_handle, Some("h2-shared")), ArkAgentResult::SessionLocked, "through another handle on the file too");
    assert_eq!(attach(second, store, Some("")), ArkAgentResult::InvalidConfig, "an empty session id");
    assert_eq!(run(first, "hi").0, ArkAgentResult::Ok);
    free(first);
    assert_eq!(attach(second, other_handle, Some("h2-shared")), ArkAgentResult::Ok, "the refused runtime was left unattached");
    assert_eq!(messages(second).len(), 2, "and resumes the session");
    free(second);
    ffi::arkagent_store_free(store);
    ffi::arkagent_store_free(other_handle);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_runtime_attach_store: "a new session starts from the runtime's current state,
// written to the store before this returns (freed or killed right after, nothing is lost; a
// runtime with nothing in it yet has nothing to write: its session is listed from its first
// commit, and while this runtime holds it another runtime's fork onto that id gives
// `ARK_AGENT_RESULT_SESSION_LOCKED`)". (Found by this test: the header promised a written
// session for an empty runtime too.)
#[test]
fn store_6_c_an_empty_runtime_attached_is_listed_from_its_first_commit_and_its_id_is_held() {
    let dir = scratch("h2-attach-empty");
    let model = Model::replying(vec![reply_text("fine")]);
    let store = open_store(&dir.join("s.db"));
    let fresh = runtime(&config("h2-empty"), std::ptr::null(), &model);
    assert_eq!(attach(fresh, store, None), ArkAgentResult::Ok);
    assert!(!store_list(store).iter().any(|s| s["id"] == "h2-empty"), "nothing to write yet");
    // Another runtime on the same store cannot fork onto the held id.
    let other = runtime(&config("h2-other"), std::ptr::null(), &model);
    assert_eq!(attach(other, store, None), ArkAgentResult::Ok);
    assert_eq!(run(other, "hello").0, ArkAgentResult::Ok);
    assert_eq!(fork(other, "h2-empty", None).0, ArkAgentResult::SessionLocked);
    // Its first commit lists it.
    assert_eq!(run(fresh, "first").0, ArkAgentResult::Ok);
    let listed = store_list(store);
    let entry = listed.iter().find(|s| s["id"] == "h2-empty").expect("listed after its first commit");
    assert_eq!(entry["message_count"], 2, "{entry}");
    free(fresh);
    free(other);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

fn open_code(path: &Path) -> (ArkAgentResult, bool) {
    let p = cstr(path.to_str().unwrap());
    let mut out: *mut ArkAgentStore = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path and an out pointer.
    let r = unsafe { ffi::arkagent_store_open(p.as_ptr(), &mut out) };
    let got = !out.is_null();
    ffi::arkagent_store_free(out);
    (r, got)
}

// arkagent_store_open: "Errors: `ARK_AGENT_RESULT_STORE_CORRUPT` (not a readable SQLite
// file: corrupt, truncated or something else), `ARK_AGENT_RESULT_STORE_FOREIGN` (another
// application's database), ...; the file is left as it was."
#[test]
fn store_5_c_refused_files_give_their_code_and_are_left_byte_identical() {
    let dir = scratch("h2-store-open");
    // A real store with a session, closed: the whole database in its main file.
    let good = dir.join("good.db");
    let model = Model::replying(vec![reply_text("kept")]);
    let store = open_store(&good);
    let rt = runtime(&config("h2-open"), std::ptr::null(), &model);
    assert_eq!(attach(rt, store, None), ArkAgentResult::Ok);
    assert_eq!(run(rt, "hi").0, ArkAgentResult::Ok);
    free(rt);
    ffi::arkagent_store_free(store);
    let bytes = std::fs::read(&good).unwrap();
    assert!(bytes.len() >= 4096 && bytes.starts_with(b"SQLite format 3\0"));
    let text = dir.join("text.db");
    std::fs::write(&text, "not a database, just text that is long enough to fill a header\n".repeat(64)).unwrap();
    let truncated = dir.join("truncated.db");
    std::fs::write(&truncated, &bytes[..1000]).unwrap();
    // Another application's database: the same file with another application_id (offset 68).
    let foreign = dir.join("foreign.db");
    let mut other = bytes.clone();
    other[68..72].copy_from_slice(&0x1234_5678u32.to_be_bytes());
    std::fs::write(&foreign, &other).unwrap();
    for (file, code) in [(&text, ArkAgentResult::StoreCorrupt), (&truncated, ArkAgentResult::StoreCorrupt), (&foreign, ArkAgentResult::StoreForeign)] {
        let before = std::fs::read(file).unwrap();
        assert_eq!(open_code(file), (code, false), "{}", file.display());
        assert_eq!(std::fs::read(file).unwrap(), before, "{} left as it was", file.display());
    }
    assert_eq!(open_code(&good), (ArkAgentResult::Ok, true), "the original still opens");
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------------------------ SUB: named workers

/// What a worker factory saw and did.
#[derive(Default)]
struct Factory {
    names: Mutex<Vec<String>>,
    codes: Mutex<Vec<(&'static str, ArkAgentResult)>>,
    builder: AtomicUsize,
    result: i32,
}

unsafe extern "C" fn worker_factory(userdata: *mut c_void, worker_name: *const c_char, builder: *mut ArkAgentWorkerBuilder) -> i32 {
    // SAFETY: a live Factory; the name is valid during the call.
    let (f, name) = unsafe { (&*userdata.cast::<Factory>(), CStr::from_ptr(worker_name).to_str().unwrap().to_owned()) };
    f.names.lock().unwrap().push(name);
    f.builder.store(builder as usize, Ordering::SeqCst);
    let delegate = r#"{"name":"delegate_task","description":"d","parameters":{"type":"object"}}"#;
    let own = r#"{"name":"worker_probe","description":"d","parameters":{"type":"object"}}"#;
    let (delegate, own) = (cstr(delegate), cstr(own));
    // SAFETY: the factory's builder, NUL-terminated strings; the tools are never called.
    let codes = unsafe {
        [
            ("configure", ffi::arkagent_worker_configure(builder, c"{\"system_prompt\":\"WORKER PROMPT\"}".as_ptr())),
            (
                "configure bad price",
                ffi::arkagent_worker_configure(builder, c"{\"system_prompt\":\"OTHER PROMPT\",\"max_tokens\":99,\"price\":{\"currency\":\"USD\",\"input_per_million\":-1,\"cached_input_per_million\":0,\"output_per_million\":1}}".as_ptr()),
            ),
            ("register delegate_task", ffi::arkagent_worker_register_tool(builder, delegate.as_ptr(), Some(no_tool), std::ptr::null_mut())),
            ("register own", ffi::arkagent_worker_register_tool(builder, own.as_ptr(), Some(no_tool), std::ptr::null_mut())),
        ]
    };
    f.codes.lock().unwrap().extend(codes);
    f.result
}

unsafe extern "C" fn no_tool(_: *mut c_void, _: *const c_char, c: *mut ArkAgentToolCompletion) {
    // SAFETY: the library's completion.
    unsafe { ffi::arkagent_tool_complete(c, c"unexpected".as_ptr(), 1) };
}

unsafe extern "C" fn never_compress(_: *mut c_void, _: *const c_char, _: *const c_char, c: *mut ffi::ArkAgentCompressCompletion) {
    // SAFETY: the library's completion.
    unsafe { ffi::arkagent_compress_fail(c, std::ptr::null()) };
}

fn workers_with(entries: &[(&str, &Factory)]) -> *mut ArkAgentWorkers {
    let mut workers: *mut ArkAgentWorkers = std::ptr::null_mut();
    // SAFETY: an out pointer; NUL-terminated strings; the factories outlive every runtime.
    unsafe {
        assert_eq!(ffi::arkagent_workers_new(&mut workers), ArkAgentResult::Ok);
        for (name, factory) in entries {
            let name = cstr(name);
            assert_eq!(ffi::arkagent_workers_add(workers, name.as_ptr(), c"a worker".as_ptr(), Some(worker_factory), ud(*factory)), ArkAgentResult::Ok);
        }
    }
    workers
}

fn delegate_call(id: &str, assignee: &str, task: &str) -> (String, String) {
    (id.to_owned(), json!({"assignee": assignee, "task_description": task}).to_string())
}

fn tool_names(body: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(body).unwrap();
    v["tools"].as_array().map(|t| t.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()).unwrap_or_default()
}

// ArkAgentWorkerBuilder: "It starts as a copy of the parent's configuration ... Whatever
// it is given, the runtime strips `delegate_task` from the final worker".
// arkagent_workers_add: "Its factory configures a copy of the delegating runtime's
// settings, its tools included". arkagent_worker_configure: "on error the worker is
// unchanged. ... An invalid price or model gives `ARK_AGENT_RESULT_INVALID_CONFIG`."
// arkagent_worker_register_tool: "A `delegate_task` registered here is removed before the
// worker runs." ArkAgentWorkerFactory: "`worker_name` and `builder` are valid only during
// the call." (arkagent_worker_set_compressor: "`ARK_AGENT_RESULT_INVALID_HANDLE` after it")
#[test]
fn sub_1_c_a_worker_has_the_parents_tools_no_delegate_task_and_a_refused_configure_changed_nothing() {
    let factory = Factory::default();
    let workers = workers_with(&[("researcher", &factory)]);
    let (id, args) = delegate_call("c_del", "researcher", "WORKER TASK");
    let model = Model::new(move |_, body, c| {
        let reply = if body.contains("WORKER TASK") && !body.contains("\"tool_call_id\":\"c_del\"") {
            if body.contains("WORKER PROMPT") {
                reply_text("worker result")
            } else {
                reply_text("root sees the task")
            }
        } else if body.contains("\"tool_call_id\":\"c_del\"") {
            reply_text("root done")
        } else {
            reply_args(&[(&id, "delegate_task", &args)])
        };
        assert_eq!(complete(c, 200, &reply), ArkAgentResult::Ok);
    });
    let lookup = recorder("looked up");
    let set = tools(&[(r#"{"name":"lookup","description":"d","parameters":{"type":"object"}}"#, &lookup.tool)]);
    let config = cstr(CONFIG);
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    // SAFETY: valid strings, handles and out pointer; `model` and `factory` outlive the runtime.
    assert_eq!(unsafe { ffi::arkagent_runtime_new(config.as_ptr(), set, workers, &model.http(), &mut rt) }, ArkAgentResult::Ok);
    ffi::arkagent_tools_free(set);
    ffi::arkagent_workers_free(workers);
    ffi::arkagent_workers_free(workers);
    let (r, outcome) = run(rt, "delegate it");
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["final_text"], "root done");
    assert_eq!(*factory.names.lock().unwrap(), ["researcher"]);
    assert_eq!(
        *factory.codes.lock().unwrap(),
        [
            ("configure", ArkAgentResult::Ok),
            ("configure bad price", ArkAgentResult::InvalidConfig),
            ("register delegate_task", ArkAgentResult::Ok),
            ("register own", ArkAgentResult::Ok)
        ]
    );
    let bodies: Vec<String> = (0..model.requests()).map(|n| model.body(n)).collect();
    let worker: Vec<&String> = bodies.iter().filter(|b| b.contains("WORKER PROMPT")).collect();
    assert_eq!(worker.len(), 1, "one worker request with the first configure's prompt: {bodies:#?}");
    let worker = worker[0];
    assert!(!worker.contains("OTHER PROMPT") && !worker.contains("\"max_tokens\":99"), "the refused configure changed nothing: {worker}");
    let names = tool_names(worker);
    assert!(names.contains(&"lookup".to_owned()), "the parent's tools: {names:?}");
    assert!(names.contains(&"worker_probe".to_owned()), "its own tool: {names:?}");
    assert!(!names.contains(&"delegate_task".to_owned()), "delegate_task stripped: {names:?}");
    assert!(tool_names(&bodies[0]).contains(&"delegate_task".to_owned()), "the parent delegates");
    let builder = factory.builder.load(Ordering::SeqCst) as *mut ArkAgentWorkerBuilder;
    // SAFETY: a handle number and NUL-terminated strings; the callback is never called.
    unsafe {
        assert_eq!(ffi::arkagent_worker_configure(builder, c"{}".as_ptr()), ArkAgentResult::InvalidHandle);
        assert_eq!(ffi::arkagent_worker_register_tool(builder, c"{\"name\":\"late\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}".as_ptr(), Some(no_tool), std::ptr::null_mut()), ArkAgentResult::InvalidHandle);
        assert_eq!(ffi::arkagent_worker_set_compressor(builder, Some(never_compress), std::ptr::null_mut(), 0), ArkAgentResult::InvalidHandle);
    }
    free(rt);
}

// ArkAgentWorkerFactory: "return `ARK_AGENT_RESULT_OK` (0) as a plain integer; any other
// number fails that delegation with `subagent_factory_failed`." Only that delegation: the
// other one of the same turn runs, and the run completes.
#[test]
fn sub_2_c_a_factory_returning_non_zero_fails_only_its_delegation_with_subagent_factory_failed() {
    let failing = Factory { result: 7, ..Factory::default() };
    let working = Factory::default();
    let workers = workers_with(&[("broken", &failing), ("fine", &working)]);
    let (id_a, args_a) = delegate_call("c_broken", "broken", "TASK A");
    let (id_b, args_b) = delegate_call("c_fine", "fine", "TASK B");
    let model = Model::new(move |_, body, c| {
        let reply = if body.contains("WORKER PROMPT") {
            reply_text("fine result")
        } else if body.contains("\"tool_call_id\"") {
            reply_text("root done")
        } else {
            reply_args(&[(&id_a, "delegate_task", &args_a), (&id_b, "delegate_task", &args_b)])
        };
        assert_eq!(complete(c, 200, &reply), ArkAgentResult::Ok);
    });
    let config = cstr(CONFIG);
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    // SAFETY: valid strings, handles and out pointer; `model` and the factories outlive the runtime.
    assert_eq!(unsafe { ffi::arkagent_runtime_new(config.as_ptr(), std::ptr::null(), workers, &model.http(), &mut rt) }, ArkAgentResult::Ok);
    ffi::arkagent_workers_free(workers);
    let (r, outcome) = run(rt, "two delegations");
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["final_text"], "root done");
    assert_eq!(*failing.names.lock().unwrap(), ["broken"]);
    assert_eq!(*working.names.lock().unwrap(), ["fine"]);
    let history = messages(rt);
    let broken = tool_result(&history, "c_broken");
    assert_eq!(broken.len(), 1);
    assert!(broken[0]["content"].to_string().contains("subagent_factory_failed"), "{:?}", broken[0]);
    let fine = tool_result(&history, "c_fine");
    assert!(fine.len() == 1 && fine[0]["content"].to_string().contains("fine result"), "the other delegation ran: {fine:?}");
    free(rt);
}
