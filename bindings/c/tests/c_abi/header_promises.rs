//! Promises of include/arkagent.h about behaviour, read by someone who has only the header:
//! each test quotes the sentence it holds the library to (above it) and drives the C ABI
//! the way a C host would. Tests that found the library doing something else are kept,
//! `#[ignore]`d with the finding, so the suite stays green until the library or the header
//! changes.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use arkagent_c::{
    self as ffi, ArkAgentCompressCompletion, ArkAgentHttp, ArkAgentHttpCompletion, ArkAgentHttpRequest, ArkAgentResult, ArkAgentRuntime, ArkAgentStore,
    ArkAgentToolCompletion, ArkAgentTools,
};

pub(crate) const CONFIG: &str = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m","retry":{"max_attempts":1}}}"#;

// ------------------------------------------------------------------ the scripted host

pub(crate) fn chat(message: Value) -> String {
    json!({"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":message,"finish_reason":"stop"}],
        "usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}})
    .to_string()
}

pub(crate) fn reply_text(text: &str) -> String {
    chat(json!({"role":"assistant","content":text}))
}

/// An answer calling `(id, tool name)` each with `{}` arguments.
pub(crate) fn reply_calls(calls: &[(&str, &str)]) -> String {
    let calls: Vec<Value> = calls.iter().map(|(id, name)| json!({"id":id,"type":"function","function":{"name":name,"arguments":"{}"}})).collect();
    chat(json!({"role":"assistant","content":null,"tool_calls":calls}))
}

pub(crate) type OnSend = dyn Fn(usize, &str, *mut ArkAgentHttpCompletion) + Send + Sync;

/// The host's HTTP client: records every body, hands request `n`, its body and its
/// completion to `on_send`.
pub(crate) struct Model {
    bodies: Mutex<Vec<String>>,
    on_send: Box<OnSend>,
}

impl Model {
    pub(crate) fn new(on_send: impl Fn(usize, &str, *mut ArkAgentHttpCompletion) + Send + Sync + 'static) -> Box<Self> {
        Box::new(Self { bodies: Mutex::new(Vec::new()), on_send: Box::new(on_send) })
    }

    /// Request `n` is answered with `replies[n]` (the last one again after the end).
    pub(crate) fn replying(replies: Vec<String>) -> Box<Self> {
        Self::new(move |n, _, c| assert_eq!(complete(c, 200, &replies[n.min(replies.len() - 1)]), ArkAgentResult::Ok))
    }

    pub(crate) fn requests(&self) -> usize {
        self.bodies.lock().unwrap().len()
    }

    pub(crate) fn body(&self, n: usize) -> String {
        self.bodies.lock().unwrap()[n].clone()
    }

    pub(crate) fn http(&self) -> ArkAgentHttp {
        ArkAgentHttp { send: Some(model_send), cancel: None, userdata: ud(self) }
    }
}

unsafe extern "C" fn model_send(userdata: *mut c_void, request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: the tests pass a live Model that outlives the runtime; the request is valid
    // during this call, its body for `body_len` bytes.
    let (model, body) = unsafe {
        let request = &*request;
        (&*userdata.cast::<Model>(), String::from_utf8(std::slice::from_raw_parts(request.body, request.body_len).to_vec()).unwrap())
    };
    let n = {
        let mut bodies = model.bodies.lock().unwrap();
        bodies.push(body.clone());
        bodies.len() - 1
    };
    (model.on_send)(n, &body, completion);
}

pub(crate) fn complete(c: *mut ArkAgentHttpCompletion, status: u16, body: &str) -> ArkAgentResult {
    // SAFETY: a completion handle is a number to the library; the body is valid for its length.
    unsafe { ffi::arkagent_http_complete(c, status, std::ptr::null(), body.as_ptr(), body.len()) }
}

pub(crate) fn ud<T>(value: &T) -> *mut c_void {
    std::ptr::from_ref(value).cast_mut().cast()
}

pub(crate) type OnCall = dyn Fn(&str, *mut ArkAgentToolCompletion) + Send + Sync;

/// A host tool: hands each call's JSON and completion to `on_call`.
pub(crate) struct Tool(pub(crate) Box<OnCall>);

unsafe extern "C" fn tool_call(userdata: *mut c_void, call_json: *const c_char, completion: *mut ArkAgentToolCompletion) {
    // SAFETY: a live Tool; the JSON is valid during the call.
    let (tool, call) = unsafe { (&*userdata.cast::<Tool>(), CStr::from_ptr(call_json).to_str().unwrap()) };
    (tool.0)(call, completion);
}

/// A tool set with `(definition JSON, tool)` registered.
pub(crate) fn tools(defs: &[(&str, &Tool)]) -> *mut ArkAgentTools {
    let mut tools: *mut ArkAgentTools = std::ptr::null_mut();
    // SAFETY: an out pointer; NUL-terminated definitions; the tools outlive every runtime.
    unsafe {
        assert_eq!(ffi::arkagent_tools_new(&mut tools), ArkAgentResult::Ok);
        for (def, tool) in defs {
            let def = CString::new(*def).unwrap();
            assert_eq!(ffi::arkagent_tools_register(tools, def.as_ptr(), Some(tool_call), ud(*tool)), ArkAgentResult::Ok);
        }
    }
    tools
}

pub(crate) fn def(name: &str, extra: &str) -> String {
    format!(r#"{{"name":"{name}","description":"d","parameters":{{"type":"object"}}{extra}}}"#)
}

pub(crate) type OnEvent = dyn Fn(&Value) + Send + Sync;

/// An event subscriber: keeps every event, hands each to `on_event` first.
pub(crate) struct Events {
    seen: Mutex<Vec<Value>>,
    on_event: Box<OnEvent>,
}

impl Events {
    pub(crate) fn new(on_event: impl Fn(&Value) + Send + Sync + 'static) -> Box<Self> {
        Box::new(Self { seen: Mutex::new(Vec::new()), on_event: Box::new(on_event) })
    }

    pub(crate) fn of_type(&self, kind: &str) -> Vec<Value> {
        self.seen.lock().unwrap().iter().filter(|e| e["type"] == kind).cloned().collect()
    }
}

unsafe extern "C" fn on_event(userdata: *mut c_void, event_json: *const c_char) {
    // SAFETY: a live Events; the JSON is valid during the call.
    let (events, json) = unsafe { (&*userdata.cast::<Events>(), CStr::from_ptr(event_json).to_str().unwrap()) };
    let event: Value = serde_json::from_str(json).unwrap();
    (events.on_event)(&event);
    events.seen.lock().unwrap().push(event);
}

pub(crate) fn subscribe(rt: *mut ArkAgentRuntime, events: &Events) {
    let mut id = 0u64;
    // SAFETY: a live runtime; `events` outlives it.
    assert_eq!(unsafe { ffi::arkagent_runtime_subscribe(rt, Some(on_event), ud(events), &mut id) }, ArkAgentResult::Ok);
}

pub(crate) fn runtime(config: &str, tools: *const ArkAgentTools, model: &Model) -> *mut ArkAgentRuntime {
    let config = CString::new(config).unwrap();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    // SAFETY: valid strings and out pointer; `model` outlives the runtime.
    let r = unsafe { ffi::arkagent_runtime_new(config.as_ptr(), tools, std::ptr::null(), &model.http(), &mut rt) };
    assert_eq!(r, ArkAgentResult::Ok);
    rt
}

pub(crate) type Compressor = dyn Fn(&str, &str, *mut ArkAgentCompressCompletion) + Send + Sync;

/// A C compressor: hands (state, context, completion) to the closure.
pub(crate) struct Squeeze(pub(crate) Box<Compressor>, pub(crate) AtomicUsize);

unsafe extern "C" fn squeeze(userdata: *mut c_void, state: *const c_char, context: *const c_char, completion: *mut ArkAgentCompressCompletion) {
    // SAFETY: a live Squeeze; both strings valid during the call.
    let (s, state, context) = unsafe { (&*userdata.cast::<Squeeze>(), CStr::from_ptr(state).to_str().unwrap(), CStr::from_ptr(context).to_str().unwrap()) };
    s.1.fetch_add(1, Ordering::SeqCst);
    (s.0)(state, context, completion);
}

pub(crate) fn runtime_with_compressor(config: &str, model: &Model, squeezer: &Squeeze, threshold: u64) -> *mut ArkAgentRuntime {
    let config = CString::new(config).unwrap();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    // SAFETY: valid strings and out pointer; `model` and `squeezer` outlive the runtime.
    let r = unsafe {
        ffi::arkagent_runtime_new_with_compressor(config.as_ptr(), std::ptr::null(), std::ptr::null(), &model.http(), Some(squeeze), ud(squeezer), threshold, &mut rt)
    };
    assert_eq!(r, ArkAgentResult::Ok);
    rt
}

/// Takes a string the library wrote: copies it and frees it with `arkagent_string_free`.
pub(crate) fn take(out: *mut c_char) -> String {
    assert!(!out.is_null());
    // SAFETY: a NUL-terminated string this library returned, freed once.
    unsafe {
        let s = CStr::from_ptr(out).to_str().unwrap().to_owned();
        ffi::arkagent_string_free(out);
        s
    }
}

/// Calls `f` with an out pointer; returns the code and the string (when written).
pub(crate) fn out_string(f: impl FnOnce(*mut *mut c_char) -> ArkAgentResult) -> (ArkAgentResult, Option<String>) {
    let mut out: *mut c_char = std::ptr::null_mut();
    let r = f(&mut out);
    (r, (!out.is_null()).then(|| take(out)))
}

pub(crate) fn run(rt: *mut ArkAgentRuntime, input: &str) -> (ArkAgentResult, Option<Value>) {
    let input = CString::new(input).unwrap();
    // SAFETY: a live runtime, a NUL-terminated input, an out pointer.
    let (r, out) = out_string(|out| unsafe { ffi::arkagent_runtime_run(rt, input.as_ptr(), out) });
    (r, out.map(|s| serde_json::from_str(&s).unwrap()))
}

pub(crate) fn messages(rt: *mut ArkAgentRuntime) -> Vec<Value> {
    // SAFETY: a live runtime and an out pointer.
    let (r, out) = out_string(|out| unsafe { ffi::arkagent_runtime_messages(rt, out) });
    assert_eq!(r, ArkAgentResult::Ok);
    serde_json::from_str::<Vec<Value>>(&out.unwrap()).unwrap()
}

pub(crate) fn export(rt: *mut ArkAgentRuntime) -> String {
    // SAFETY: a live runtime and an out pointer.
    let (r, out) = out_string(|out| unsafe { ffi::arkagent_runtime_export_state(rt, out) });
    assert_eq!(r, ArkAgentResult::Ok);
    out.unwrap()
}

pub(crate) fn free(rt: *mut ArkAgentRuntime) {
    ffi::arkagent_runtime_free(rt);
}

pub(crate) fn is_paired(messages: &[Value]) -> bool {
    let json = CString::new(serde_json::to_string(messages).unwrap()).unwrap();
    let mut paired = -1;
    // SAFETY: a NUL-terminated string and an out pointer.
    assert_eq!(unsafe { ffi::arkagent_tool_calls_paired(json.as_ptr(), &mut paired) }, ArkAgentResult::Ok);
    paired == 1
}

/// A scratch directory of this test's own.
pub(crate) fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("arkagent-header-promises-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) fn open_store(path: &std::path::Path) -> *mut ArkAgentStore {
    let path = CString::new(path.to_str().unwrap()).unwrap();
    let mut store: *mut ArkAgentStore = std::ptr::null_mut();
    // SAFETY: a NUL-terminated path and an out pointer.
    assert_eq!(unsafe { ffi::arkagent_store_open(path.as_ptr(), &mut store) }, ArkAgentResult::Ok);
    store
}

/// Threads a test starts from inside callbacks, joined before the test ends.
#[derive(Clone, Default)]
struct Helpers(Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>);

impl Helpers {
    fn spawn(&self, f: impl FnOnce() + Send + 'static) {
        self.0.lock().unwrap().push(std::thread::spawn(f));
    }

    fn join(&self) {
        let handles: Vec<_> = self.0.lock().unwrap().drain(..).collect();
        for handle in handles {
            handle.join().unwrap();
        }
    }
}



// ------------------------------------------------------------------ TOOL-4: abort callbacks

/// What an abort callback heard: (reason, the name of the thread it ran on).
#[derive(Default)]
struct AbortProbe(Mutex<Vec<(i32, Option<String>)>>);

unsafe extern "C" fn heard_abort(userdata: *mut c_void, reason: i32) {
    // SAFETY: a live AbortProbe (the blocking call that started the tool call waits for this).
    let probe = unsafe { &*userdata.cast::<AbortProbe>() };
    probe.0.lock().unwrap().push((reason, std::thread::current().name().map(str::to_owned)));
}

// arkagent_tool_on_abort: "calls `callback(userdata, reason)` once, on a library thread,
// when this tool call's abort signal fires (`reason` as [`arkagent_tool_abort_reason`] gives
// it) — at once if it already fired — unless the call is finished first. Never after the
// blocking call that started the tool call returned (that call waits for it)".
#[test]
fn tool_4_c_on_abort_after_the_signal_fired_calls_back_once_on_a_library_thread_before_the_run_returns() {
    let held = Arc::new(Mutex::new(None::<usize>));
    let probe = Box::new(AbortProbe::default());
    let probe_addr = ud(&*probe) as usize;
    let slot = Arc::clone(&held);
    // The tool never answers: only its 1 ms deadline ends the call.
    let tool = Tool(Box::new(move |_, c| *slot.lock().unwrap() = Some(c as usize)));
    let slot = Arc::clone(&held);
    let registered = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&registered);
    let model = Model::new(move |n, _, c| {
        if n == 1 {
            // The model is asked again: the deadline fired. Register the callback only now.
            let held = slot.lock().unwrap().unwrap_or(0) as *mut ArkAgentToolCompletion;
            let polled = ffi::arkagent_tool_abort_reason(held);
            let r = ffi::arkagent_tool_on_abort(held, Some(heard_abort), probe_addr as *mut c_void);
            seen.lock().unwrap().push((polled, r));
        }
        let body = if n == 0 { reply_calls(&[("call_slow", "slow")]) } else { reply_text("Done.") };
        assert_eq!(complete(c, 200, &body), ArkAgentResult::Ok);
    });
    let set = tools(&[(&def("slow", r#","timeout_ms":1"#), &tool)]);
    let rt = runtime(CONFIG, set, &model);
    ffi::arkagent_tools_free(set);
    let (r, outcome) = run(rt, "Do the slow thing");
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["status"], "completed");
    assert!(model.body(1).contains("tool_timeout"), "the model was answered tool_timeout");
    let timeout = ffi::ArkAgentToolAbort::ToolTimeout as i32;
    assert_eq!(*registered.lock().unwrap(), [(timeout, ArkAgentResult::Ok)], "polled TOOL_TIMEOUT, then registered");
    let heard = probe.0.lock().unwrap().clone();
    assert_eq!(heard.len(), 1, "called once, before the run returned: {heard:?}");
    assert_eq!(heard[0].0, timeout);
    assert_eq!(heard[0].1.as_deref(), Some("arkagent"), "on a library thread (the executor threads are named \"arkagent\")");
    // The completion stays valid: finishing it afterwards is allowed and ignored.
    let held = held.lock().unwrap().unwrap() as *mut ArkAgentToolCompletion;
    // SAFETY: a handle number and a NUL-terminated string.
    assert_eq!(unsafe { ffi::arkagent_tool_complete(held, c"late".as_ptr(), 0) }, ArkAgentResult::Ok);
    assert_eq!(probe.0.lock().unwrap().len(), 1, "never again after the run returned");
    free(rt);
}

// arkagent_tool_on_abort: "... when this tool call's abort signal fires ... — unless the
// call is finished first." A tool finished from its own thread, the run cancelled right
// after: the callback never runs and the result stands. (Found by a JS test of the same
// promise: a cancel that came after the result could win the race inside the run.)
#[test]
fn tool_4_c_a_cancel_right_after_the_result_never_fires_the_abort_callback() {
    for round in 0..30 {
        let probe = Box::new(AbortProbe::default());
        let probe_addr = ud(&*probe) as usize;
        let rt_cell = Arc::new(AtomicUsize::new(0));
        let rt_seen = Arc::clone(&rt_cell);
        let tool = Tool(Box::new(move |_, c| {
            let (c, rt) = (c as usize, rt_seen.load(Ordering::SeqCst));
            std::thread::spawn(move || {
                let c = c as *mut ArkAgentToolCompletion;
                assert_eq!(ffi::arkagent_tool_on_abort(c, Some(heard_abort), probe_addr as *mut c_void), ArkAgentResult::Ok);
                std::thread::sleep(std::time::Duration::from_millis(1));
                // SAFETY: the library's completion and a NUL-terminated result.
                assert_eq!(unsafe { ffi::arkagent_tool_complete(c, c"done".as_ptr(), 0) }, ArkAgentResult::Ok);
                assert_eq!(ffi::arkagent_runtime_cancel(rt as *mut ArkAgentRuntime), ArkAgentResult::Ok);
            });
        }));
        let model = Model::replying(vec![reply_calls(&[("call_fast", "fast")]), reply_text("Done.")]);
        let set = tools(&[(&def("fast", ""), &tool)]);
        let rt = runtime(CONFIG, set, &model);
        ffi::arkagent_tools_free(set);
        rt_cell.store(rt as usize, Ordering::SeqCst);
        let (r, _) = run(rt, "Do the fast thing");
        assert!(matches!(r, ArkAgentResult::Ok | ArkAgentResult::Cancelled), "round {round}: {r:?}");
        assert!(probe.0.lock().unwrap().is_empty(), "round {round}: the abort callback ran for a finished call");
        let result = messages(rt).into_iter().find(|m| m["role"] == "tool").expect("the tool's message");
        assert_eq!(result["content"], "done", "round {round}: the result stands");
        free(rt);
    }
}

// ------------------------------------------------------------------ CORE-4: cancel from a callback

// arkagent_runtime_cancel: "Cancels the active run, if any. Any thread, including from
// inside a callback."
#[test]
fn core_4_c_cancel_from_inside_the_event_callback_ends_the_run_cancelled_and_paired() {
    let held = Arc::new(Mutex::new(None::<usize>));
    let slot = Arc::clone(&held);
    let tool = Tool(Box::new(move |_, c| *slot.lock().unwrap() = Some(c as usize)));
    let model = Model::replying(vec![reply_calls(&[("call_hold", "hold")]), reply_text("never")]);
    let set = tools(&[(&def("hold", ""), &tool)]);
    let rt = runtime(CONFIG, set, &model);
    ffi::arkagent_tools_free(set);
    let (rt_addr, cancels) = (rt as usize, Arc::new(Mutex::new(Vec::new())));
    let seen = Arc::clone(&cancels);
    let events = Events::new(move |e| {
        if e["type"] == "tool_call_started" {
            seen.lock().unwrap().push(ffi::arkagent_runtime_cancel(rt_addr as *mut ArkAgentRuntime));
        }
    });
    subscribe(rt, &events);
    let (r, outcome) = run(rt, "hold it");
    assert_eq!(*cancels.lock().unwrap(), [ArkAgentResult::Ok], "the cancel from the event callback is accepted");
    let status = outcome.as_ref().map(|o| o["status"].clone());
    assert!(r == ArkAgentResult::Cancelled || (r == ArkAgentResult::Ok && status == Some(json!("cancelled"))), "{r:?} {outcome:?}");
    assert_eq!(model.requests(), 1, "no model call after the cancel");
    let finished = events.of_type("run_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "cancelled");
    let history = messages(rt);
    assert!(is_paired(&history), "a cancelled call gets a tool result: {history:?}");
    assert!(history.iter().any(|m| m["role"] == "tool" && m["tool_call_id"] == "call_hold"));
    if let Some(h) = *held.lock().unwrap() {
        let h = h as *mut ArkAgentToolCompletion;
        assert_eq!(ffi::arkagent_tool_abort_reason(h), ffi::ArkAgentToolAbort::Cancelled as i32);
        // SAFETY: a handle number and a NUL-terminated string.
        assert_eq!(unsafe { ffi::arkagent_tool_complete(h, c"late".as_ptr(), 0) }, ArkAgentResult::Ok, "finishing after a cancel is ignored");
    }
    free(rt);
}

// ------------------------------------------------------------------ CORE-5: reentrancy

// ArkAgentEventCallback: "Do not call blocking arkagent functions from it (they return
// `ARK_AGENT_RESULT_REENTRANT`, whichever call emitted the event)."
#[test]
fn core_5_c_blocking_calls_from_events_of_every_blocking_call_are_refused_reentrant() {
    let model = Model::replying(vec![reply_text("fine")]);
    let other_model = Model::replying(vec![reply_text("other")]);
    // SAFETY (in the closure): the library's completion handle.
    let squeezer = Squeeze(Box::new(|_, _, c| assert_eq!(unsafe { ffi::arkagent_compress_fail(c, std::ptr::null()) }, ArkAgentResult::Ok)), AtomicUsize::new(0));
    let config = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m","retry":{"max_attempts":1}},"delegation":{"allow_clone":true}}"#;
    let rt = runtime_with_compressor(config, &model, &squeezer, u64::MAX);
    let other = runtime(CONFIG, std::ptr::null(), &other_model);
    let during = Arc::new(Mutex::new(""));
    let tried = Arc::new(Mutex::new(Vec::<(&str, String, String, ArkAgentResult)>::new()));
    let (now, log, targets) = (Arc::clone(&during), Arc::clone(&tried), [("own", rt as usize), ("other", other as usize)]);
    let events = Events::new(move |e| {
        let (now, kind) = (*now.lock().unwrap(), e["type"].as_str().unwrap_or_default().to_owned());
        let mut log = log.lock().unwrap();
        for (whose, target) in targets {
            let t = target as *mut ArkAgentRuntime;
            // SAFETY: live runtimes, NUL-terminated strings, NULL or valid out pointers.
            let codes = unsafe {
                [
                    ("run", ffi::arkagent_runtime_run(t, c"x".as_ptr(), std::ptr::null_mut())),
                    ("run_parts", ffi::arkagent_runtime_run_parts(t, c"[{\"type\":\"text\",\"text\":\"x\"}]".as_ptr(), std::ptr::null_mut())),
                    ("compress_now", ffi::arkagent_runtime_compress_now(t, std::ptr::null_mut())),
                    ("run_decomposed", out_string(|o| ffi::arkagent_runtime_run_decomposed(t, c"[]".as_ptr(), 0, o)).0),
                ]
            };
            log.extend(codes.into_iter().map(|(call, code)| (now, kind.clone(), format!("{whose} {call}"), code)));
        }
        log.push((now, kind, "arkagent_shutdown".into(), ffi::arkagent_shutdown()));
    });
    subscribe(rt, &events);
    *during.lock().unwrap() = "run";
    assert_eq!(run(rt, "hi").0, ArkAgentResult::Ok);
    *during.lock().unwrap() = "compress_now";
    // SAFETY: a live runtime and an out pointer.
    let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    assert!(result.unwrap().contains("\"outcome\":\"failed\""));
    *during.lock().unwrap() = "run_decomposed";
    let tasks = c"[{\"assignee\":\"clone\",\"task_description\":\"look it up\"}]";
    // SAFETY: a live runtime, a NUL-terminated string and an out pointer.
    let (r, _) = out_string(|o| unsafe { ffi::arkagent_runtime_run_decomposed(rt, tasks.as_ptr(), 1, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    let tried = tried.lock().unwrap().clone();
    for emitter in ["run", "compress_now", "run_decomposed"] {
        assert!(tried.iter().any(|(d, ..)| *d == emitter), "no event during {emitter}");
    }
    let wrong: Vec<_> = tried.iter().filter(|t| t.3 != ArkAgentResult::Reentrant).collect();
    assert!(wrong.is_empty(), "(emitting call, event, call made from it, result) not refused REENTRANT: {wrong:#?}");
    assert_eq!(other_model.requests(), 0, "nothing ran on the other runtime");
    free(rt);
    free(other);
}

// ------------------------------------------------------------------ STORE: attach, delete

pub(crate) fn store_list(store: *mut ArkAgentStore) -> Vec<Value> {
    // SAFETY: a live store and an out pointer.
    let (r, out) = out_string(|o| unsafe { ffi::arkagent_store_list(store, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    serde_json::from_str(&out.unwrap()).unwrap()
}

pub(crate) fn delete(store: *mut ArkAgentStore, id: &CStr) -> (ArkAgentResult, bool) {
    let mut deleted = true;
    // SAFETY: a live store, a NUL-terminated id and an out pointer.
    let r = unsafe { ffi::arkagent_store_delete(store, id.as_ptr(), &mut deleted) };
    (r, deleted)
}

// arkagent_runtime_attach_store: "a new session starts from the runtime's current state,
// written to the store before this returns (freed or killed right after, nothing is lost)."
// arkagent_store_delete: "`*out_deleted` (if `out_deleted` is not NULL) gets whether it
// existed."
#[test]
fn store_6_c_attach_store_writes_a_new_session_before_it_returns() {
    let dir = scratch("attach");
    let path = dir.join("sessions.db");
    let model = Model::replying(vec![reply_text("remembered")]);
    let config = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"},"session_id":"hp-fresh"}"#;
    let rt = runtime(config, std::ptr::null(), &model);
    assert_eq!(run(rt, "before any store").0, ArkAgentResult::Ok);
    let before = messages(rt);
    assert_eq!(before.len(), 2);
    let store = open_store(&path);
    // SAFETY: live handles; NULL session id (the runtime's own).
    assert_eq!(unsafe { ffi::arkagent_runtime_attach_store(rt, store, std::ptr::null()) }, ArkAgentResult::Ok);
    // Nothing else happened since: another handle on the file already has the whole session.
    let second = open_store(&path);
    let list = store_list(second);
    let session = list.iter().find(|s| s["id"] == "hp-fresh");
    assert!(session.is_some_and(|s| s["message_count"] == 2), "the new session is in the file when attach returns: {list:?}");
    free(rt); // freed right after
    ffi::arkagent_store_free(store);
    let resumed = runtime(CONFIG, std::ptr::null(), &model);
    // SAFETY: live handles and a NUL-terminated id.
    assert_eq!(unsafe { ffi::arkagent_runtime_attach_store(resumed, second, c"hp-fresh".as_ptr()) }, ArkAgentResult::Ok);
    assert_eq!(messages(resumed), before, "nothing was lost");
    free(resumed);
    assert_eq!(delete(second, c"no-such-session"), (ArkAgentResult::Ok, false));
    assert_eq!(delete(second, c"hp-fresh"), (ArkAgentResult::Ok, true));
    ffi::arkagent_store_free(second);
    let _ = std::fs::remove_dir_all(dir);
}

// ------------------------------------------------------------------ FFI: handles, structs, errors

// ArkAgentHttpCompletion: "After that final call every completion function gives
// `ARK_AGENT_RESULT_ALREADY_COMPLETED` for it; … A handle is a number the library checks,
// never memory: a late or racing call on it cannot touch freed memory, and numbers are
// never reused."
#[test]
fn ffi_2_c_http_completion_numbers_are_never_reused_and_stay_finished() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    for _ in 0..3 {
        let handles = Arc::clone(&seen);
        let model = Model::new(move |_, _, c| {
            handles.lock().unwrap().push(c as usize);
            assert_eq!(complete(c, 200, &reply_text("ok")), ArkAgentResult::Ok);
        });
        let rt = runtime(CONFIG, std::ptr::null(), &model);
        for _ in 0..5 {
            assert_eq!(run(rt, "hi").0, ArkAgentResult::Ok);
        }
        free(rt);
    }
    let handles = seen.lock().unwrap().clone();
    assert_eq!(handles.len(), 15);
    let distinct: std::collections::BTreeSet<usize> = handles.iter().copied().collect();
    assert_eq!(distinct.len(), 15, "a completion number was handed out twice: {handles:x?}");
    for h in handles {
        let c = h as *mut ArkAgentHttpCompletion;
        let done = ArkAgentResult::AlreadyCompleted;
        assert_eq!(complete(c, 200, "{}"), done);
        // SAFETY: handle numbers; NULL or short valid buffers.
        unsafe {
            assert_eq!(ffi::arkagent_http_fail(c, 0, std::ptr::null()), done);
            assert_eq!(ffi::arkagent_http_stream_begin(c, 200, std::ptr::null()), done);
            assert_eq!(ffi::arkagent_http_stream_chunk(c, b"x".as_ptr(), 1), done);
            assert_eq!(ffi::arkagent_http_stream_end(c, std::ptr::null()), done);
        }
        assert!(ffi::arkagent_http_is_cancelled(c), "a finished request reads as cancelled");
    }
}

// ArkAgentHttp: "The host's HTTP client, given to `arkagent_runtime_new` /
// `arkagent_runtime_new_with_compressor` (copied; the struct itself need not outlive that
// call)."
#[test]
fn ffi_3_c_the_http_struct_is_copied_and_need_not_outlive_runtime_new() {
    let model = Model::replying(vec![reply_text("copied")]);
    // SAFETY (in the closure): the library's completion and a NUL-terminated answer.
    let squeezer = Squeeze(Box::new(|_, _, c| assert_eq!(unsafe { ffi::arkagent_compress_complete(c, c"{\"outcome\":\"skipped\"}".as_ptr()) }, ArkAgentResult::Ok)), AtomicUsize::new(0));
    let config = CString::new(CONFIG).unwrap();
    let mut runtimes = Vec::new();
    for with_compressor in [false, true] {
        let mut http = Box::new(model.http());
        let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
        // SAFETY: valid strings, struct and out pointer; `model` and `squeezer` outlive the runtime.
        let r = unsafe {
            if with_compressor {
                ffi::arkagent_runtime_new_with_compressor(config.as_ptr(), std::ptr::null(), std::ptr::null(), &*http, Some(squeeze), ud(&squeezer), u64::MAX, &mut rt)
            } else {
                ffi::arkagent_runtime_new(config.as_ptr(), std::ptr::null(), std::ptr::null(), &*http, &mut rt)
            }
        };
        assert_eq!(r, ArkAgentResult::Ok);
        // The host reuses the struct's memory, then frees it.
        // SAFETY: a valid, aligned, owned struct.
        unsafe { std::ptr::write_volatile(&mut *http, ArkAgentHttp { send: None, cancel: None, userdata: std::ptr::null_mut() }) };
        drop(http);
        runtimes.push(rt);
    }
    for rt in runtimes {
        let (r, outcome) = run(rt, "hi");
        assert_eq!(r, ArkAgentResult::Ok);
        assert_eq!(outcome.unwrap()["final_text"], "copied");
        free(rt);
    }
    assert_eq!(model.requests(), 2, "each runtime called the host's send with its userdata");
}

fn last_error(buf: &mut [u8]) -> usize {
    // SAFETY: `buf` is valid for its length.
    unsafe { ffi::arkagent_last_error_message(buf.as_mut_ptr().cast(), buf.len()) }
}

// arkagent_last_error_message: "Copies the calling thread's last error message into `buf`
// (NUL-terminated, cut at a UTF-8 character boundary when `buf_len` is too small) and
// returns the message's full length in bytes, without the NUL. … The message is empty
// after a successful call." arkagent_validate_episodic_memory_ids: "(the message names the
// offending id)".
#[test]
fn ffi_2_c_last_error_message_is_cut_at_a_character_boundary_and_empty_after_success() {
    let episodes = r#"[{"id":"记忆甲","summary":"s","created_at_ms":1,"message_count":1},{"id":"记忆甲","summary":"s","created_at_ms":2,"message_count":1}]"#;
    let episodes = CString::new(episodes).unwrap();
    // SAFETY: a NUL-terminated string.
    assert_eq!(unsafe { ffi::arkagent_validate_episodic_memory_ids(episodes.as_ptr()) }, ArkAgentResult::InvalidState);
    // SAFETY: NULL buffer: only the length.
    let full = unsafe { ffi::arkagent_last_error_message(std::ptr::null_mut(), 0) };
    let mut whole = vec![0xAAu8; full + 1];
    assert_eq!(last_error(&mut whole), full);
    let message = CStr::from_bytes_until_nul(&whole).unwrap().to_str().unwrap().to_owned();
    assert_eq!(message.len(), full);
    assert!(message.contains("记忆甲"), "the message names the offending id: {message}");
    for buf_len in 1..=full + 1 {
        let mut buf = vec![0xAAu8; buf_len];
        assert_eq!(last_error(&mut buf), full, "buf_len {buf_len}");
        let nul = buf.iter().position(|b| *b == 0).unwrap_or_else(|| panic!("not NUL-terminated at buf_len {buf_len}"));
        let text = std::str::from_utf8(&buf[..nul]).unwrap_or_else(|_| panic!("cut inside a character at buf_len {buf_len}: {:?}", &buf[..nul]));
        let fits = (0..=(buf_len - 1).min(full)).rev().find(|&n| message.is_char_boundary(n)).unwrap();
        assert_eq!(text, &message[..fits], "buf_len {buf_len}: the longest whole-character prefix that fits");
    }
    // SAFETY: a NUL-terminated string and an out pointer.
    let (r, _) = out_string(|o| unsafe { ffi::arkagent_summarize_result(c"ok".as_ptr(), o) });
    assert_eq!(r, ArkAgentResult::Ok);
    let mut buf = [0x55u8; 8];
    assert_eq!(last_error(&mut buf), 0, "empty after a successful call");
    assert_eq!(buf[0], 0);
}

// ------------------------------------------------------------------ CMP-1: the C compressor

// ArkAgentCompressCallback: "`context_json`: `{"estimated_prompt_tokens": n | null, "force":
// bool}` (`force` is true after the model refused the context as too long)";
// arkagent_runtime_new_with_compressor: "`arkagent_runtime_compress_now` and a context
// overflow always call it."
#[test]
fn cmp_1_c_a_context_overflow_calls_the_compressor_with_force_true() {
    let overflow = json!({"error":{"message":"This model's maximum context length is 8192 tokens","type":"invalid_request_error","code":"context_length_exceeded"}}).to_string();
    let model = Model::new(move |_, _, c| assert_eq!(complete(c, 400, &overflow), ArkAgentResult::Ok));
    let contexts = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&contexts);
    let squeezer = Squeeze(
        Box::new(move |_, context, c| {
            seen.lock().unwrap().push(context.to_owned());
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, c"{\"outcome\":\"skipped\"}".as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    );
    // Automatic attempts never reach the threshold: only the overflow can call it.
    let rt = runtime_with_compressor(CONFIG, &model, &squeezer, u64::MAX);
    let (r, _) = run(rt, "a huge question");
    assert_eq!(r, ArkAgentResult::LlmContextOverflow);
    let contexts = contexts.lock().unwrap().clone();
    assert!(!contexts.is_empty(), "a context overflow always calls the compressor");
    for context in &contexts {
        let value: Value = serde_json::from_str(context).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["estimated_prompt_tokens", "force"], "{context}");
        assert!(value["estimated_prompt_tokens"].is_u64() || value["estimated_prompt_tokens"].is_null(), "{context}");
    }
    assert!(contexts.iter().any(|c| c.contains("\"force\":true")), "force is true after the overflow: {contexts:?}");
    free(rt);
}

// arkagent_runtime_new_with_compressor: "It is reported in the `compression` and
// `model_request` events (`"threshold"`, `"compression_threshold"`)." arkagent_compress_fail:
// "Fails a compression attempt (reason `compressor_error`; the state is unchanged …)".
#[test]
fn cmp_1_c_the_c_compressors_threshold_is_reported_in_model_request_and_compression_events() {
    let model = Model::replying(vec![reply_text("fine")]);
    // SAFETY (in the closure): the library's completion; a NULL message.
    let squeezer = Squeeze(Box::new(|_, _, c| assert_eq!(unsafe { ffi::arkagent_compress_fail(c, std::ptr::null()) }, ArkAgentResult::Ok)), AtomicUsize::new(0));
    let rt = runtime_with_compressor(CONFIG, &model, &squeezer, 12_345);
    let events = Events::new(|_| {});
    subscribe(rt, &events);
    assert_eq!(run(rt, "hi").0, ArkAgentResult::Ok);
    let requests = events.of_type("model_request");
    assert!(!requests.is_empty());
    assert!(requests.iter().all(|e| e["compression_threshold"] == 12_345), "{requests:?}");
    let before = export(rt);
    // SAFETY: a live runtime and an out pointer.
    let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    let result: Value = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!((&result["outcome"], &result["reason"]), (&json!("failed"), &json!("compressor_error")));
    assert_eq!(export(rt), before, "the state is unchanged");
    assert_eq!(squeezer.1.load(Ordering::SeqCst), 1);
    let compressions = events.of_type("compression");
    assert_eq!(compressions.len(), 1, "{compressions:?}");
    assert_eq!(compressions[0]["threshold"], 12_345);
    assert_eq!(compressions[0]["outcome"], "failed");
    free(rt);
}

// arkagent_runtime_compress_now: "On `failed` or `skipped` the state is unchanged. Without
// `"compression"` in the config the outcome is `skipped`."
#[test]
fn cmp_6_c_compress_now_without_compression_is_skipped_and_changes_nothing() {
    let model = Model::replying(vec![reply_text("fine")]);
    let rt = runtime(CONFIG, std::ptr::null(), &model);
    for input in ["one", "two", "three"] {
        assert_eq!(run(rt, input).0, ArkAgentResult::Ok);
    }
    let before = export(rt);
    // SAFETY: a live runtime and an out pointer.
    let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    let result: Value = serde_json::from_str(&result.unwrap()).unwrap();
    assert_eq!(result["outcome"], "skipped", "{result}");
    assert_eq!(export(rt), before);
    assert_eq!(model.requests(), 3, "no summary request");
    free(rt);
}

// ------------------------------------------------------------------ ISO-3: summaries at their bounds

fn summarize(content: &str) -> String {
    let content = CString::new(content).unwrap();
    // SAFETY: a NUL-terminated string and an out pointer.
    let (r, out) = out_string(|o| unsafe { ffi::arkagent_summarize_result(content.as_ptr(), o) });
    assert_eq!(r, ArkAgentResult::Ok);
    out.unwrap()
}

// arkagent_summarize_result: "`content` as it is when it has at most 500 characters
// (Unicode scalar values, never cut inside one); otherwise its `## Summary` section (or else
// its `## Result` section: the heading line to the next `## ` heading) when that has at
// most 1000; otherwise the first 500 characters followed by `[truncated, N chars]`, N the
// full length."
#[test]
fn iso_3_c_summarize_result_bounds_hold_at_exactly_500_and_1000_characters() {
    let at = "字".repeat(500);
    assert_eq!(summarize(&at), at, "500 characters: as is");
    let over = "字".repeat(501);
    assert_eq!(summarize(&over), format!("{at}[truncated, 501 chars]"));
    for (body, fits) in [(989, true), (990, false)] {
        let section = format!("## Summary\n{}", "结".repeat(body));
        assert_eq!(section.chars().count(), if fits { 1000 } else { 1001 });
        let content = format!("{}\n{section}\n## Details\nmore", "x".repeat(600));
        let n = content.chars().count();
        let want = if fits { section } else { format!("{}[truncated, {n} chars]", "x".repeat(500)) };
        assert_eq!(summarize(&content), want, "a section of {} characters", body + 11);
    }
}

// ------------------------------------------------------------------ TOOL-3: the policy callback

#[derive(Default)]
struct PolicyProbe(Mutex<Vec<(String, bool, usize)>>);

/// Denies, filling `reason` to its cap: `reason_cap - 1` bytes of `r` and the NUL.
unsafe extern "C" fn deny_to_the_cap(userdata: *mut c_void, call_json: *const c_char, reason: *mut c_char, reason_cap: usize) -> i32 {
    // SAFETY: a live PolicyProbe; the JSON and `reason_cap` bytes of `reason` are valid during the call.
    unsafe {
        let probe = &*userdata.cast::<PolicyProbe>();
        let started_empty = reason_cap > 0 && *reason == 0;
        probe.0.lock().unwrap().push((CStr::from_ptr(call_json).to_str().unwrap().to_owned(), started_empty, reason_cap));
        if reason_cap > 0 {
            std::ptr::write_bytes(reason.cast::<u8>(), b'r', reason_cap - 1);
            *reason.add(reason_cap - 1) = 0;
        }
    }
    ffi::ArkAgentPolicy::Deny as i32
}

// ArkAgentToolPolicyCallback: "the app's check before every tool call (… never for a tool
// that does not exist). … On deny it may write the reason the model reads into `reason`,
// NUL-terminated, at most `reason_cap` bytes with the NUL (`reason` is valid only during
// the call; it starts empty). `call_json` (`{"call_id","name","arguments":{…}}`)".
// arkagent_tools_set_policy: "A runtime keeps the policy it was created with".
#[test]
fn tool_3_c_policy_reason_starts_empty_reaches_the_model_whole_and_unknown_tools_are_not_asked() {
    let ran = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ran);
    let tool = Tool(Box::new(move |_, c| {
        count.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the library's completion and a NUL-terminated string.
        unsafe { ffi::arkagent_tool_complete(c, c"ran".as_ptr(), 0) };
    }));
    let set = tools(&[(&def("act", ""), &tool)]);
    let probe = Box::new(PolicyProbe::default());
    assert_eq!(ffi::arkagent_tools_set_policy(set, Some(deny_to_the_cap), ud(&*probe)), ArkAgentResult::Ok);
    let model = Model::replying(vec![reply_calls(&[("c_act", "act"), ("c_ghost", "ghost")]), reply_text("ok")]);
    let rt = runtime(CONFIG, set, &model);
    // Removed from the set afterwards: the runtime keeps the policy it was created with.
    assert_eq!(ffi::arkagent_tools_set_policy(set, None, std::ptr::null_mut()), ArkAgentResult::Ok);
    ffi::arkagent_tools_free(set);
    let (r, outcome) = run(rt, "act");
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["status"], "completed");
    let calls = probe.0.lock().unwrap().clone();
    assert_eq!(calls.len(), 1, "asked once, for the tool that exists: {calls:?}");
    let (json, started_empty, cap) = &calls[0];
    let call: Value = serde_json::from_str(json).unwrap();
    let keys: std::collections::BTreeSet<&str> = call.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["arguments", "call_id", "name"].into(), "{json}");
    assert_eq!((&call["call_id"], &call["name"], call["arguments"].is_object()), (&json!("c_act"), &json!("act"), true));
    assert!(*started_empty, "reason starts empty");
    assert!(*cap > 1);
    assert_eq!(ran.load(Ordering::SeqCst), 0, "a denied call does not run");
    let body = model.body(1);
    let reason = "r".repeat(cap - 1);
    assert!(body.contains("tool_denied"), "{body}");
    assert!(body.contains(&reason) && !body.contains(&format!("{reason}r")), "the model reads the whole reason of reason_cap - 1 bytes");
    free(rt);
}

// ------------------------------------------------------------------ IMG-5: the default image bound

/// A valid 1×1 PNG.
const PNG_B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn run_images(rt: *mut ArkAgentRuntime, n: usize) -> ArkAgentResult {
    let mut parts = vec![json!({"type":"text","text":"what are these?"})];
    parts.extend((0..n).map(|_| json!({"type":"image","mime_type":"image/png","data":PNG_B64})));
    let parts = CString::new(Value::Array(parts).to_string()).unwrap();
    // SAFETY: a live runtime and a NUL-terminated string.
    unsafe { ffi::arkagent_runtime_run_parts(rt, parts.as_ptr(), std::ptr::null_mut()) }
}

// arkagent_runtime_new: "`"max_images_per_request"?` (default 100) bound what
// `arkagent_runtime_run_parts` and tool results may carry." arkagent_runtime_run_parts:
// "Nothing is written and nothing sent when an image is refused: … `ARK_AGENT_RESULT_TOO_MANY_IMAGES`
// (the request would carry more than `"max_images_per_request"`, default 100)".
#[test]
fn img_5_c_the_default_bound_takes_100_images_a_request_and_refuses_101() {
    let model = Model::replying(vec![reply_text("seen")]);
    let rt = runtime(CONFIG, std::ptr::null(), &model);
    assert_eq!(run_images(rt, 101), ArkAgentResult::TooManyImages);
    assert_eq!((model.requests(), messages(rt).len()), (0, 0), "nothing sent, nothing written");
    assert_eq!(run_images(rt, 100), ArkAgentResult::Ok);
    assert_eq!(model.requests(), 1);
    assert_eq!(model.body(0).matches("data:image/png;base64,").count(), 100, "the request carries all 100");
    assert_eq!(run_images(rt, 1), ArkAgentResult::TooManyImages, "the next request would carry 101");
    assert_eq!((model.requests(), messages(rt).len()), (1, 2));
    free(rt);
}

// ------------------------------------------------------------------ CORE-6: the live and committed history

// arkagent_runtime_messages: "They are the live history: while a turn's tools run or the
// turn waits for approval it ends with that turn's model answer (mid-turn, with the results
// so far), which `arkagent_runtime_export_state` — the committed history, always paired —
// leaves out until the turn is paired." arkagent_runtime_export_state: "while a turn's tools
// are running it holds the last consistent history, without that open turn."
// ArkAgentToolCallback: "`call_json` (`{"call_id","name","arguments":{…},"session_id","run_id"}`)".
#[test]
fn core_6_c_mid_turn_messages_end_with_the_model_answer_and_the_export_leaves_the_open_turn_out() {
    let rt_slot = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Mutex::new(Vec::<(String, Vec<Value>, String)>::new()));
    let (slot, log) = (Arc::clone(&rt_slot), Arc::clone(&seen));
    let tool = Tool(Box::new(move |call, c| {
        let rt = slot.load(Ordering::SeqCst) as *mut ArkAgentRuntime;
        log.lock().unwrap().push((call.to_owned(), messages(rt), export(rt)));
        // SAFETY: the library's completion and a NUL-terminated string.
        unsafe { ffi::arkagent_tool_complete(c, c"looked".as_ptr(), 0) };
    }));
    let set = tools(&[(&def("look", ""), &tool)]);
    let model = Model::replying(vec![reply_text("first answer"), reply_calls(&[("call_look", "look")]), reply_text("after the tool")]);
    let config = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"},"session_id":"hp-midturn"}"#;
    let rt = runtime(config, set, &model);
    rt_slot.store(rt as usize, Ordering::SeqCst);
    ffi::arkagent_tools_free(set);
    assert_eq!(run(rt, "first").0, ArkAgentResult::Ok);
    let (r, outcome) = run(rt, "second");
    assert_eq!(r, ArkAgentResult::Ok);
    let outcome = outcome.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    let (call, live, exported) = &seen[0];
    let call: Value = serde_json::from_str(call).unwrap();
    let keys: std::collections::BTreeSet<&str> = call.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["arguments", "call_id", "name", "run_id", "session_id"].into(), "{call}");
    assert_eq!((&call["call_id"], &call["name"], call["arguments"].is_object()), (&json!("call_look"), &json!("look"), true));
    assert_eq!((&call["session_id"], &call["run_id"]), (&json!("hp-midturn"), &outcome["run_id"]));
    let last = live.last().unwrap();
    assert_eq!((&last["role"], &last["tool_calls"][0]["id"]), (&json!("assistant"), &json!("call_look")), "live ends with the model answer: {live:?}");
    let exported: Value = serde_json::from_str(exported).unwrap();
    let committed = exported["history"]["messages"].as_array().unwrap();
    assert_eq!(committed.as_slice(), &live[..live.len() - 1], "the export is the live history without the open turn");
    assert!(is_paired(committed));
    free(rt);
}

// ------------------------------------------------------------------ ISO-7, CORE-5: a decomposed job's events

// arkagent_runtime_run_decomposed: "`*out_results_json` gets one `{"content","is_error",
// "error_code"?,"metadata"?}` per task, in input order. … Subscribers see it as a run:
// `"run_started"` first …, the children's `"sub_agent"` events, `"run_finished"` last …,
// all with the job's `"run_id"`." ArkAgentEventCallback: "Receives one event … in order, on
// the thread running `arkagent_runtime_run`";
// AgentEvent (include/JSON-SHAPES.md): "`seq` … Per-runtime sequence number, strictly
// increasing."
#[test]
fn iso_7_c_decomposed_results_keep_input_order_and_events_carry_the_jobs_run_id_in_order() {
    // Each child answers its own task; both are held until both asked, then the second
    // task's child is answered first.
    let held = Arc::new(Mutex::new(Vec::<(usize, String)>::new()));
    let slot = Arc::clone(&held);
    let model = Model::new(move |_, body, c| {
        let task = if body.contains("task A") { "A" } else { "B" };
        let mut held = slot.lock().unwrap();
        held.push((c as usize, format!("answer to task {task}")));
        if held.len() == 2 {
            held.sort_by(|a, b| b.1.cmp(&a.1));
            for (c, answer) in held.drain(..) {
                assert_eq!(complete(c as *mut ArkAgentHttpCompletion, 200, &reply_text(&answer)), ArkAgentResult::Ok);
            }
        }
    });
    let config = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"},"delegation":{"allow_clone":true,"policy":{"max_concurrent_children":2}}}"#;
    let rt = runtime(config, std::ptr::null(), &model);
    let threads = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&threads);
    let events = Events::new(move |_| log.lock().unwrap().push(std::thread::current().id()));
    subscribe(rt, &events);
    let tasks = c"[{\"assignee\":\"clone\",\"task_description\":\"task A\"},{\"assignee\":\"clone\",\"task_description\":\"task B\"}]";
    // SAFETY: a live runtime, a NUL-terminated string and an out pointer.
    let (r, results) = out_string(|o| unsafe { ffi::arkagent_runtime_run_decomposed(rt, tasks.as_ptr(), 2, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    let results: Vec<Value> = serde_json::from_str(&results.unwrap()).unwrap();
    assert_eq!(results.len(), 2);
    let seen = events.seen.lock().unwrap().clone();
    let kinds: Vec<&str> = seen.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!((kinds.first(), kinds.last()), (Some(&"run_started"), Some(&"run_finished")), "{kinds:?}");
    let job = &seen[0]["run_id"];
    assert!(job.is_string());
    assert!(seen.iter().all(|e| &e["run_id"] == job), "every event carries the job's run_id: {seen:#?}");
    let seqs: Vec<u64> = seen.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "delivered in order, seq strictly increasing: {seqs:?}");
    for (result, task) in results.iter().zip(["task A", "task B"]) {
        assert_eq!(result["is_error"], false, "{result}");
        assert!(result["content"].as_str().is_some_and(|c| c.contains(&format!("answer to {task}"))), "results in input order: {results:?}");
    }
    assert_eq!(events.of_type("sub_agent").iter().filter(|e| e["event"]["type"] == "run_started").count(), 2);
    let me = std::thread::current().id();
    assert!(threads.lock().unwrap().iter().all(|t| *t == me), "events on the thread running the blocking call");
    free(rt);
}

// ------------------------------------------------------------------ FFI-3: which thread calls back

/// (callback, thread) of every callback of the test below (the only user).
static THREADS: Mutex<Vec<(&str, std::thread::ThreadId)>> = Mutex::new(Vec::new());

fn note(what: &'static str) {
    THREADS.lock().unwrap().push((what, std::thread::current().id()));
}

unsafe extern "C" fn allow_noting(_: *mut c_void, _: *const c_char, _: *mut c_char, _: usize) -> i32 {
    note("policy");
    ffi::ArkAgentPolicy::Allow as i32
}

unsafe extern "C" fn approval_noting(_: *mut c_void, _: *const c_char) -> bool {
    note("approval");
    false
}

unsafe extern "C" fn factory_noting(_: *mut c_void, _: *const c_char, _: *mut ffi::ArkAgentWorkerBuilder) -> i32 {
    note("factory");
    0
}

/// Runs `call` on a new thread; returns that thread's id and the callbacks noted meanwhile.
fn on_own_thread(call: impl FnOnce() -> ArkAgentResult + Send) -> (std::thread::ThreadId, Vec<(&'static str, std::thread::ThreadId)>) {
    let from = THREADS.lock().unwrap().len();
    let (id, r) = std::thread::scope(|s| s.spawn(|| (std::thread::current().id(), call())).join().unwrap());
    assert_eq!(r, ArkAgentResult::Ok);
    (id, THREADS.lock().unwrap()[from..].to_vec())
}

// ArkAgentCompressCallback: "Called on the thread running `arkagent_runtime_run`,
// `arkagent_runtime_compress_now` or `arkagent_runtime_run_decomposed` … a delegated
// `clone` child inherits the compressor". ArkAgentToolPolicyCallback and
// ArkAgentApprovalCallback: "Called on the thread running `arkagent_runtime_run` or
// `arkagent_runtime_resume_run`". ArkAgentWorkerFactory: "Called on the thread running
// `arkagent_runtime_run`, synchronously." ArkAgentToolCallback: "Called on the thread
// running `arkagent_runtime_run`".
#[test]
fn ffi_3_c_compressor_policy_approval_factory_and_tool_run_on_the_blocking_calls_thread() {
    let delegate = r#"{"assignee":"w","task_description":"sub task"}"#;
    let first = chat(json!({"role":"assistant","content":null,"tool_calls":[
        {"id":"c_act","type":"function","function":{"name":"act","arguments":"{}"}},
        {"id":"c_del","type":"function","function":{"name":"delegate_task","arguments":delegate}}]}));
    let model = Model::replying(vec![first, reply_text("done")]);
    let squeezer = Squeeze(
        Box::new(|_, _, c| {
            note("compressor");
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, c"{\"outcome\":\"skipped\"}".as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    );
    let tool = Tool(Box::new(|_, c| {
        note("tool");
        // SAFETY: the library's completion and a NUL-terminated string.
        unsafe { ffi::arkagent_tool_complete(c, c"acted".as_ptr(), 0) };
    }));
    let config = CString::new(r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"},"delegation":{"allow_clone":true}}"#).unwrap();
    let act = CString::new(def("act", "")).unwrap();
    let (mut set, mut workers, mut rt) = (std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: out pointers, NUL-terminated strings; `tool`, `model` and `squeezer` outlive the runtime.
    unsafe {
        assert_eq!(ffi::arkagent_tools_new(&mut set), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_tools_register_with_approval(set, act.as_ptr(), Some(tool_call), Some(approval_noting), ud(&tool)), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_tools_set_policy(set, Some(allow_noting), std::ptr::null_mut()), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_workers_new(&mut workers), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_workers_add(workers, c"w".as_ptr(), c"a worker".as_ptr(), Some(factory_noting), std::ptr::null_mut()), ArkAgentResult::Ok);
        let r = ffi::arkagent_runtime_new_with_compressor(config.as_ptr(), set, workers, &model.http(), Some(squeeze), ud(&squeezer), 0, &mut rt);
        assert_eq!(r, ArkAgentResult::Ok);
    }
    ffi::arkagent_tools_free(set);
    ffi::arkagent_workers_free(workers);
    let rt_addr = rt as usize;
    // SAFETY (each call): a live runtime, NUL-terminated strings, NULL or valid out pointers.
    let phases = [
        ("arkagent_runtime_run", on_own_thread(|| unsafe { ffi::arkagent_runtime_run(rt_addr as *mut ArkAgentRuntime, c"go".as_ptr(), std::ptr::null_mut()) })),
        ("arkagent_runtime_compress_now", on_own_thread(|| unsafe { ffi::arkagent_runtime_compress_now(rt_addr as *mut ArkAgentRuntime, std::ptr::null_mut()) })),
        (
            "arkagent_runtime_run_decomposed",
            on_own_thread(|| {
                let tasks = c"[{\"assignee\":\"clone\",\"task_description\":\"cloned task\"}]";
                out_string(|o| unsafe { ffi::arkagent_runtime_run_decomposed(rt_addr as *mut ArkAgentRuntime, tasks.as_ptr(), 1, o) }).0
            }),
        ),
    ];
    let wanted: [&[&str]; 3] = [&["compressor", "policy", "approval", "tool", "factory"], &["compressor"], &["compressor"]];
    for ((call, (thread, noted)), wanted) in phases.iter().zip(wanted) {
        for what in wanted {
            assert!(noted.iter().any(|(w, _)| w == what), "no {what} callback during {call}: {noted:?}");
        }
        let elsewhere: Vec<_> = noted.iter().filter(|(_, t)| t != thread).map(|(w, _)| *w).collect();
        assert!(elsewhere.is_empty(), "during {call}, called on another thread than the blocking call's: {elsewhere:?}");
    }
    free(rt);
}

// ------------------------------------------------------------------ CORE-4: a failed first call

// arkagent_runtime_run: "When it fails with a model error and the model had produced
// nothing in this run (its first call failed), the input is taken out again: the history
// is as before the run (a compression committed meanwhile stays)".
#[test]
fn core_4_c_a_failed_first_call_takes_the_input_out_and_keeps_a_compression_committed_meanwhile() {
    let model = Model::new(|n, _, c| {
        let (status, body) = if n < 2 { (200, reply_text("fine")) } else { (500, r#"{"error":{"message":"down"}}"#.to_owned()) };
        assert_eq!(complete(c, status, &body), ArkAgentResult::Ok);
    });
    let armed = Arc::new(AtomicUsize::new(0));
    let arm = Arc::clone(&armed);
    let squeezer = Squeeze(
        Box::new(move |_, _, c| {
            let answer: &CStr = if arm.swap(0, Ordering::SeqCst) == 1 {
                c"{\"outcome\":\"compressed\",\"split_index\":2,\"summary\":\"The user said one; the assistant answered.\"}"
            } else {
                c"{\"outcome\":\"skipped\"}"
            };
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, answer.as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    );
    // Threshold 0: called before every model call; it compresses once, when armed.
    let rt = runtime_with_compressor(CONFIG, &model, &squeezer, 0);
    assert_eq!(run(rt, "one").0, ArkAgentResult::Ok);
    assert_eq!(run(rt, "two").0, ArkAgentResult::Ok);
    let before = messages(rt);
    assert_eq!(before.len(), 4);
    armed.store(1, Ordering::SeqCst);
    assert_eq!(run(rt, "three").0, ArkAgentResult::LlmServer);
    assert_eq!(armed.load(Ordering::SeqCst), 0, "the compressor compressed before the failing call");
    // SAFETY: a live runtime and an out pointer.
    let (r, episodes) = out_string(|o| unsafe { ffi::arkagent_runtime_episodes(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    let episodes: Vec<Value> = serde_json::from_str(&episodes.unwrap()).unwrap();
    assert_eq!(episodes.len(), 1, "the compression committed meanwhile stays");
    assert_eq!(messages(rt), before[2..].to_vec(), "the input is taken out; what was archived stays archived");
    free(rt);
}

// ------------------------------------------------------------------ CORE-4: one run at a time

// ArkAgentResult: "`ARK_AGENT_RESULT_RUN_IN_PROGRESS`: A run is already active on this
// runtime." arkagent_runtime_import_state: "`ARK_AGENT_RESULT_RUN_IN_PROGRESS` during a run;
// the old state is kept on error". arkagent_runtime_rewind, arkagent_runtime_fork: "Errors:
// … `_RUN_IN_PROGRESS` …; then nothing changed." arkagent_runtime_cancel_approvals:
// "Errors: `_RUN_IN_PROGRESS`". arkagent_runtime_cancel: "Cancels the active run, if any."
#[test]
fn core_4_c_while_a_run_is_active_other_calls_on_it_are_refused_run_in_progress_and_change_nothing() {
    let dir = scratch("busy");
    let store = open_store(&dir.join("sessions.db"));
    let model = Model::replying(vec![reply_text("first"), reply_calls(&[("c_busy", "busy")]), reply_text("second")]);
    let rt_slot = Arc::new(AtomicUsize::new(0));
    let earlier = Arc::new(Mutex::new((CString::default(), CString::default())));
    let tried = Arc::new(Mutex::new(Vec::<(&str, ArkAgentResult, bool)>::new()));
    let (slot, state, log) = (Arc::clone(&rt_slot), Arc::clone(&earlier), Arc::clone(&tried));
    let helpers = Helpers::default();
    let helper = helpers.clone();
    let tool = Tool(Box::new(move |_, c| {
        let rt = slot.load(Ordering::SeqCst) as *mut ArkAgentRuntime;
        let (export, run_id) = state.lock().unwrap().clone();
        let mut closed = false;
        // SAFETY: a live runtime, NUL-terminated strings and out pointers.
        let tries = unsafe {
            [
                ("import_state", ffi::arkagent_runtime_import_state(rt, export.as_ptr()), false),
                ("rewind", out_string(|o| ffi::arkagent_runtime_rewind(rt, run_id.as_ptr(), o)).0, false),
                ("fork", out_string(|o| ffi::arkagent_runtime_fork(rt, c"hp-busy-fork".as_ptr(), std::ptr::null(), o)).0, false),
                ("cancel_approvals", ffi::arkagent_runtime_cancel_approvals(rt, &mut closed), closed),
            ]
        };
        log.lock().unwrap().extend(tries);
        // Another thread starts a run on the same runtime; the tool answers once it returned
        // (or, were it to wait for this run, after a minute, so the test fails instead of hanging).
        let (completion, rt_addr, log) = (c as usize, rt as usize, Arc::clone(&log));
        helper.spawn(move || {
            let (tx, rx) = std::sync::mpsc::channel();
            let concurrent = std::thread::spawn(move || {
                // SAFETY: a live runtime and a NUL-terminated input.
                let _ = tx.send(unsafe { ffi::arkagent_runtime_run(rt_addr as *mut ArkAgentRuntime, c"concurrent".as_ptr(), std::ptr::null_mut()) });
            });
            let r = rx.recv_timeout(std::time::Duration::from_secs(60)).unwrap_or(ArkAgentResult::Internal);
            if r != ArkAgentResult::Internal {
                concurrent.join().unwrap();
            }
            log.lock().unwrap().push(("arkagent_runtime_run from another thread", r, false));
            // SAFETY: the library's completion and a NUL-terminated string.
            unsafe { ffi::arkagent_tool_complete(completion as *mut ArkAgentToolCompletion, c"busy done".as_ptr(), 0) };
        });
    }));
    let set = tools(&[(&def("busy", ""), &tool)]);
    let config = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"},"session_id":"hp-busy"}"#;
    let rt = runtime(config, set, &model);
    ffi::arkagent_tools_free(set);
    rt_slot.store(rt as usize, Ordering::SeqCst);
    // SAFETY: live handles; NULL: the runtime's own session id.
    assert_eq!(unsafe { ffi::arkagent_runtime_attach_store(rt, store, std::ptr::null()) }, ArkAgentResult::Ok);
    let (r, first) = run(rt, "one");
    assert_eq!(r, ArkAgentResult::Ok);
    *earlier.lock().unwrap() = (CString::new(export(rt)).unwrap(), CString::new(first.unwrap()["run_id"].as_str().unwrap()).unwrap());
    assert_eq!(ffi::arkagent_runtime_cancel(rt), ArkAgentResult::Ok, "no active run: nothing to cancel");
    let (r, outcome) = run(rt, "two");
    assert_eq!(r, ArkAgentResult::Ok);
    assert_eq!(outcome.unwrap()["status"], "completed", "a cancel with no run active does not cancel the next run");
    helpers.join();
    let tried = tried.lock().unwrap().clone();
    assert_eq!(tried.len(), 5);
    let wrong: Vec<_> = tried.iter().filter(|(_, code, wrote)| *code != ArkAgentResult::RunInProgress || *wrote).collect();
    assert!(wrong.is_empty(), "not refused RUN_IN_PROGRESS (or wrote an output): {wrong:?}");
    assert_eq!(model.requests(), 3, "the concurrent run sent nothing");
    let history = messages(rt);
    assert_eq!(history.len(), 6, "nothing imported, rewound or added: {history:?}");
    let ids: Vec<Value> = store_list(store).iter().map(|s| s["id"].clone()).collect();
    assert_eq!(ids, [json!("hp-busy")], "no fork was written");
    free(rt);
    ffi::arkagent_store_free(store);
    let _ = std::fs::remove_dir_all(dir);
}

// arkagent_tool_fail: "the model sees `{"error":{"code":"<code>","message":"<message>"}}`
// and the `tool_call_finished` event carries `"is_error":true,"error_code":"<code>"`. …
// `message` may be NULL (then empty). Both are copied before the call returns."
#[test]
fn core_2_c_tool_fail_with_a_null_message_gives_the_model_an_empty_message() {
    let tool = Tool(Box::new(|_, c| {
        let code = CString::new("quota_exceeded").unwrap();
        // SAFETY: the library's completion and a NUL-terminated code.
        let r = unsafe { ffi::arkagent_tool_fail(c, code.as_ptr(), std::ptr::null()) };
        drop(code); // copied before the call returned
        assert_eq!(r, ArkAgentResult::Ok);
    }));
    let set = tools(&[(&def("quota", ""), &tool)]);
    let model = Model::replying(vec![reply_calls(&[("c_q", "quota")]), reply_text("sorry")]);
    let rt = runtime(CONFIG, set, &model);
    ffi::arkagent_tools_free(set);
    let events = Events::new(|_| {});
    subscribe(rt, &events);
    assert_eq!(run(rt, "go").0, ArkAgentResult::Ok);
    let body: Value = serde_json::from_str(&model.body(1)).unwrap();
    let result = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap().clone();
    assert_eq!(result["content"], r#"{"error":{"code":"quota_exceeded","message":""}}"#);
    let finished = events.of_type("tool_call_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!((&finished[0]["is_error"], &finished[0]["error_code"]), (&json!(true), &json!("quota_exceeded")));
    free(rt);
}

// ------------------------------------------------------------------ the config's keys and bounds

fn new_runtime_code(config: &str, tools: *const ArkAgentTools) -> ArkAgentResult {
    let model = Model::replying(vec![reply_text("unused")]);
    let config = CString::new(config).unwrap();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    // SAFETY: valid strings and out pointer; `model` outlives the runtime (freed at once).
    let r = unsafe { ffi::arkagent_runtime_new(config.as_ptr(), tools, std::ptr::null(), &model.http(), &mut rt) };
    assert_eq!(r == ArkAgentResult::Ok, !rt.is_null(), "a refused call writes nothing to *out");
    free(rt);
    r
}

const MODEL: &str = r#""model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m""#;

// arkagent_runtime_new: "Unknown keys give `ARK_AGENT_RESULT_INVALID_JSON`." (the config
// `{"model":{…},"system_prompt"?,…,"compression"?:{…},"delegation"?:{"policy"?:{…},…},
// "mcp_servers"?:[{…}]}`).
#[test]
fn ffi_5_c_unknown_config_keys_at_every_level_are_invalid_json() {
    let good = [
        format!("{{{MODEL}}}}}"),
        format!(r#"{{{MODEL}}},"compression":{{"keep_recent_message_count":4}}}}"#),
        format!(r#"{{{MODEL}}},"delegation":{{"allow_clone":true,"policy":{{"max_depth":1}}}}}}"#),
        format!(r#"{{{MODEL}}},"mcp_servers":[{{"name":"files","url":"http://127.0.0.1:9/mcp"}}]}}"#),
    ];
    for config in &good {
        assert_eq!(new_runtime_code(config, std::ptr::null()), ArkAgentResult::Ok, "{config}");
    }
    let typos = [
        format!(r#"{{{MODEL}}},"sesion_id":"s"}}"#),
        format!(r#"{{{MODEL},"temprature":0.5}}}}"#),
        format!(r#"{{{MODEL}}},"compression":{{"keep_recent":4}}}}"#),
        format!(r#"{{{MODEL}}},"compression":{{"summarizer_model":{{"base_url":"http://h/v1","api_key":"k","model":"s","strem":true}}}}}}"#),
        format!(r#"{{{MODEL}}},"delegation":{{"allow_clones":true}}}}"#),
        format!(r#"{{{MODEL}}},"mcp_servers":[{{"name":"files","url":"http://127.0.0.1:9/mcp","timeout":5}}]}}"#),
        format!(r#"{{{MODEL},"thinking":{{"efort":"low"}}}}}}"#),
        format!(r#"{{{MODEL}}},"compression":{{"summarizer_model":{{"base_url":"http://h/v1","api_key":"k","model":"s","retry":{{"attempts":2}}}}}}}}"#),
    ];
    let accepted: Vec<(&String, ArkAgentResult)> =
        typos.iter().map(|c| (c, new_runtime_code(c, std::ptr::null()))).filter(|(_, r)| *r != ArkAgentResult::InvalidJson).collect();
    assert!(accepted.is_empty(), "configs with an unknown key not refused INVALID_JSON: {accepted:#?}");
}

// arkagent_runtime_new: "`"delegation"?:{"policy"?:{"max_depth"?,"max_delegations_per_run"?,
// "max_concurrent_children"?,"parent_context_message_count"?},…}` … Unknown keys give
// `ARK_AGENT_RESULT_INVALID_JSON`."
#[test]
fn ffi_5_c_an_unknown_delegation_policy_key_is_invalid_json() {
    for typo in ["max_dept", "max_delegation_per_run", "max_concurrent_child"] {
        let config = format!(r#"{{{MODEL}}},"delegation":{{"allow_clone":true,"policy":{{"{typo}":9}}}}}}"#);
        assert_eq!(new_runtime_code(&config, std::ptr::null()), ArkAgentResult::InvalidJson, "{config}");
    }
}

// arkagent_runtime_new (COST-2): "A currency that is empty, longer than 16 bytes or holds
// spaces, or a rate that is negative, not finite or above 1e9 gives
// `ARK_AGENT_RESULT_INVALID_CONFIG`."
#[test]
fn cost_2_c_a_price_at_its_bounds_is_taken_and_past_them_refused() {
    let price = |currency: &str, output: &str| {
        format!(r#"{{{MODEL},"price":{{"currency":"{currency}","input_per_million":0,"cached_input_per_million":0,"output_per_million":{output}}}}}}}"#)
    };
    let sixteen = "ABCDEFGHIJKLMNOP";
    assert_eq!(new_runtime_code(&price(sixteen, "1"), std::ptr::null()), ArkAgentResult::Ok, "16 bytes");
    assert_eq!(new_runtime_code(&price("元人民币元x", "1"), std::ptr::null()), ArkAgentResult::Ok, "16 bytes of UTF-8 (6 characters)");
    assert_eq!(new_runtime_code(&price("元人民币元xy", "1"), std::ptr::null()), ArkAgentResult::InvalidConfig, "17 bytes of UTF-8 (7 characters)");
    assert_eq!(new_runtime_code(&price("USD", "1e9"), std::ptr::null()), ArkAgentResult::Ok, "exactly 1e9");
    assert_eq!(new_runtime_code(&price("USD", "1000000000.001"), std::ptr::null()), ArkAgentResult::InvalidConfig, "above 1e9");
    assert_eq!(new_runtime_code(&price("USD", "-0.000001"), std::ptr::null()), ArkAgentResult::InvalidConfig, "negative");
    assert_eq!(new_runtime_code(&price("US\\tD", "1"), std::ptr::null()), ArkAgentResult::InvalidConfig, "a tab is a space");
}

// arkagent_tools_register: "`"timeout_ms"` … not a whole number of ms (negative, fractional,
// a string): `ARK_AGENT_RESULT_INVALID_JSON`." arkagent_runtime_new: "`"tool_timeout_ms"` …
// not a whole number of ms: `ARK_AGENT_RESULT_INVALID_JSON`."
#[test]
fn tool_4_c_fractional_timeouts_are_invalid_json() {
    let tool = Tool(Box::new(|_, _| {}));
    let mut set: *mut ArkAgentTools = std::ptr::null_mut();
    // SAFETY: an out pointer.
    assert_eq!(unsafe { ffi::arkagent_tools_new(&mut set) }, ArkAgentResult::Ok);
    for (extra, want) in [(r#","timeout_ms":1.5"#, ArkAgentResult::InvalidJson), (r#","timeout_ms":1e3"#, ArkAgentResult::InvalidJson), (r#","timeout_ms":1000"#, ArkAgentResult::Ok)] {
        let definition = CString::new(def("t", extra)).unwrap();
        // SAFETY: a live tool set, a NUL-terminated definition; `tool` outlives the set.
        assert_eq!(unsafe { ffi::arkagent_tools_register(set, definition.as_ptr(), Some(tool_call), ud(&tool)) }, want, "{extra}");
    }
    ffi::arkagent_tools_free(set);
    assert_eq!(new_runtime_code(&format!(r#"{{{MODEL}}},"tool_timeout_ms":2.5}}"#), std::ptr::null()), ArkAgentResult::InvalidJson);
    assert_eq!(new_runtime_code(&format!(r#"{{{MODEL}}},"tool_timeout_ms":2500}}"#), std::ptr::null()), ArkAgentResult::Ok);
}

// ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD: "the seed's totalTokenThreshold default (the
// "compression" object's "total_token_threshold" when absent …)". model_request
// (include/JSON-SHAPES.md): "`compression_threshold` … The compression threshold, when
// compression is on".
#[test]
fn cmp_3_c_the_default_threshold_is_64000_and_reported_only_when_compression_is_on() {
    for (extra, want) in [(r#","compression":{}"#, json!(64_000)), ("", Value::Null)] {
        let model = Model::replying(vec![reply_text("fine")]);
        let rt = runtime(&format!("{{{MODEL}}}{extra}}}"), std::ptr::null(), &model);
        let events = Events::new(|_| {});
        subscribe(rt, &events);
        assert_eq!(run(rt, "hi").0, ArkAgentResult::Ok);
        let requests = events.of_type("model_request");
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0]["compression_threshold"], want, "config extra {extra:?}");
        free(rt);
    }
}

// ------------------------------------------------------------------ LLM-3: the documented codes

// ArkAgentResult: "`ARK_AGENT_RESULT_LLM_AUTH` 401/403. `_LLM_RATE_LIMITED` 429. `_LLM_SERVER`
// 5xx. `_LLM_TIMEOUT` Timed out. … `_LLM_BAD_REQUEST` Other 4xx. `_LLM_MALFORMED_RESPONSE`
// The response did not parse. `_LLM_TRANSPORT` The host transport failed."
// arkagent_http_complete: "`body` may be NULL when `body_len` is 0." ArkAgentTransportError:
// "`ARK_AGENT_TRANSPORT_ERROR_TIMEOUT`: The request timed out."
#[test]
fn llm_3_c_each_status_and_transport_failure_ends_the_run_with_its_documented_code() {
    use ArkAgentResult as R;
    let error = r#"{"error":{"message":"no"}}"#;
    let cases: Vec<(u16, Option<&str>, ArkAgentResult)> = vec![
        (401, Some(error), R::LlmAuth),
        (403, Some(error), R::LlmAuth),
        (429, Some(error), R::LlmRateLimited),
        (500, Some(error), R::LlmServer),
        (599, Some(error), R::LlmServer),
        (400, Some(error), R::LlmBadRequest),
        (404, Some(error), R::LlmBadRequest),
        (499, Some(error), R::LlmBadRequest),
        (200, Some("not json"), R::LlmMalformedResponse),
        (200, None, R::LlmMalformedResponse),
    ];
    let mut wrong = Vec::new();
    for (status, body, want) in cases {
        let model = Model::new(move |_, _, c| {
            // SAFETY: a handle number; NULL with length 0, or a body valid for its length.
            let r = unsafe { ffi::arkagent_http_complete(c, status, std::ptr::null(), body.map_or(std::ptr::null(), str::as_ptr), body.map_or(0, str::len)) };
            assert_eq!(r, ArkAgentResult::Ok);
        });
        let rt = runtime(CONFIG, std::ptr::null(), &model);
        let got = run(rt, "hi").0;
        if got != want {
            wrong.push(format!("{status} {body:?}: {got:?}, not {want:?}"));
        }
        free(rt);
    }
    for (kind, want) in [(ffi::ArkAgentTransportError::Network as i32, R::LlmTransport), (ffi::ArkAgentTransportError::Timeout as i32, R::LlmTimeout)] {
        // SAFETY: a handle number and a NUL-terminated message.
        let model = Model::new(move |_, _, c| assert_eq!(unsafe { ffi::arkagent_http_fail(c, kind, c"down".as_ptr()) }, ArkAgentResult::Ok));
        let rt = runtime(CONFIG, std::ptr::null(), &model);
        let got = run(rt, "hi").0;
        if got != want {
            wrong.push(format!("arkagent_http_fail kind {kind}: {got:?}, not {want:?}"));
        }
        free(rt);
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

// arkagent_compress_complete: "`compressed` needs `split_index` (the messages before it move
// into a new episode) and a non-blank `summary`. … a `split_index` out of range (0, past
// the last message, …) with `invalid_split_index`, … a blank `episode_id` with
// `invalid_episode_id`; then the state is unchanged."
#[test]
fn cmp_5_c_compressor_answers_out_of_range_or_blank_fail_with_their_reason_and_change_nothing() {
    let model = Model::replying(vec![reply_text("fine")]);
    let answer = Arc::new(Mutex::new(CString::default()));
    let current = Arc::clone(&answer);
    let squeezer = Squeeze(
        Box::new(move |_, _, c| {
            let answer = current.lock().unwrap().clone();
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, answer.as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    );
    let rt = runtime_with_compressor(CONFIG, &model, &squeezer, u64::MAX);
    for input in ["one", "two", "three"] {
        assert_eq!(run(rt, input).0, ArkAgentResult::Ok);
    }
    let n = messages(rt).len();
    assert_eq!(n, 6);
    let cases = [
        (json!({"outcome":"compressed","split_index":0,"summary":"s"}), "invalid_split_index"),
        (json!({"outcome":"compressed","split_index":n + 1,"summary":"s"}), "invalid_split_index"),
        (json!({"outcome":"compressed","split_index":2,"summary":"s","episode_id":"   "}), "invalid_episode_id"),
    ];
    let mut wrong = Vec::new();
    for (reply, reason) in cases {
        *answer.lock().unwrap() = CString::new(reply.to_string()).unwrap();
        let before = export(rt);
        // SAFETY: a live runtime and an out pointer.
        let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
        let result: Value = serde_json::from_str(&result.unwrap_or_default()).unwrap_or_default();
        if r != ArkAgentResult::Ok || result["outcome"] != "failed" || result["reason"] != reason || export(rt) != before {
            wrong.push(format!("{reply} → {r:?} {result}, want failed/{reason}, state unchanged"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The same answer with a valid split commits (so the checks above were real).
    *answer.lock().unwrap() = CString::new(json!({"outcome":"compressed","split_index":2,"summary":"s"}).to_string()).unwrap();
    // SAFETY: a live runtime and an out pointer.
    let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    assert!(result.unwrap().contains("\"outcome\":\"compressed\""));
    assert_eq!(messages(rt).len(), n - 2);
    free(rt);
}

// arkagent_compress_complete: "a `split_index` out of range (0, past the last message, or
// equal to the number of messages while the history ends with one the model has yet to
// answer: the user's input or a tool result, as before a model call) with
// `invalid_split_index`"
#[test]
fn cmp_4_c_a_split_taking_the_users_unanswered_input_fails_and_the_model_is_still_asked() {
    let model = Model::replying(vec![reply_text("fine")]);
    // Every attempt answers "archive every message I was shown".
    let squeezer = Squeeze(
        Box::new(|state, _, c| {
            let n = serde_json::from_str::<Value>(state).unwrap()["history"]["messages"].as_array().unwrap().len();
            let answer = CString::new(json!({"outcome":"compressed","split_index":n,"summary":"s"}).to_string()).unwrap();
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, answer.as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    );
    let rt = runtime_with_compressor(CONFIG, &model, &squeezer, 0);
    let events = Events::new(|_| {});
    subscribe(rt, &events);
    assert_eq!(run(rt, "QUESTION-9").0, ArkAgentResult::Ok);
    let compressions = events.of_type("compression");
    assert_eq!((compressions[0]["outcome"].as_str(), compressions[0]["reason"].as_str()), (Some("failed"), Some("invalid_split_index")), "{compressions:?}");
    assert_eq!(model.requests(), 1);
    assert!(model.bodies.lock().unwrap()[0].contains("QUESTION-9"), "the model is asked the user's input");
    // Idle after the answer, the same answer archives everything.
    // SAFETY: a live runtime and an out pointer.
    let (r, result) = out_string(|o| unsafe { ffi::arkagent_runtime_compress_now(rt, o) });
    assert_eq!(r, ArkAgentResult::Ok);
    assert!(result.unwrap().contains("\"outcome\":\"compressed\""));
    assert!(messages(rt).is_empty());
    free(rt);
}

// ------------------------------------------------------------------ CORE-5: unsubscribe

/// A subscriber that logs the type of every event delivered once `flag` is non-zero.
fn logged_once(flag: &Arc<AtomicUsize>) -> (Arc<Mutex<Vec<Value>>>, Box<Events>) {
    let late = Arc::new(Mutex::new(Vec::new()));
    let (log, flag) = (Arc::clone(&late), Arc::clone(flag));
    let events = Events::new(move |e| {
        if flag.load(Ordering::SeqCst) != 0 {
            log.lock().unwrap().push(e["type"].clone());
        }
    });
    (late, events)
}

// arkagent_runtime_subscribe: "`userdata` must stay valid until unsubscribed or the runtime
// is freed and, either way, every blocking call of this runtime running then has returned
// ...: an event already on its way on another thread may still arrive ... Events of
// blocking calls started after the unsubscribe never reach it." (Issue 42's third stop: the
// header used to promise more — "until unsubscribed" — which the library did not keep.)
#[test]
fn core_5_c_after_unsubscribe_and_the_running_call_returned_no_event_reaches_the_subscription() {
    let model = Model::replying(vec![reply_text("fine"), reply_text("again")]);
    let rt = runtime(CONFIG, std::ptr::null(), &model);
    let (rt_addr, second_id) = (rt as usize, Arc::new(AtomicUsize::new(0)));
    let returned = Arc::new(AtomicUsize::new(0));
    let (unsubscribed, id) = (Arc::clone(&returned), Arc::clone(&second_id));
    let helpers = Helpers::default();
    let helper = helpers.clone();
    // The first subscriber, at the first event: another thread unsubscribes the second one;
    // this callback returns once that unsubscribe returned (or after 10 s, were unsubscribe
    // to wait for the event being emitted — which would keep the promise).
    let first = Events::new(move |_| {
        if unsubscribed.load(Ordering::SeqCst) != 0 {
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let (done, id) = (Arc::clone(&unsubscribed), Arc::clone(&id));
        helper.spawn(move || {
            let r = ffi::arkagent_runtime_unsubscribe(rt_addr as *mut ArkAgentRuntime, id.load(Ordering::SeqCst) as u64);
            done.store(if r == ArkAgentResult::Ok { 1 } else { 2 }, Ordering::SeqCst);
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(std::time::Duration::from_secs(10));
    });
    let (late, second) = logged_once(&returned);
    subscribe(rt, &first);
    let mut id = 0u64;
    // SAFETY: a live runtime; `second` outlives it.
    assert_eq!(unsafe { ffi::arkagent_runtime_subscribe(rt, Some(on_event), ud(&*second), &mut id) }, ArkAgentResult::Ok);
    second_id.store(id as usize, Ordering::SeqCst);
    assert_eq!(run(rt, "hi").0, ArkAgentResult::Ok);
    helpers.join();
    assert_eq!(returned.load(Ordering::SeqCst), 1, "the unsubscribe was accepted");
    // What was on its way during that run may have arrived; nothing of a later call does.
    late.lock().unwrap().clear();
    assert_eq!(run(rt, "again").0, ArkAgentResult::Ok);
    assert!(late.lock().unwrap().is_empty(), "events of a later run reached the removed subscription: {:?}", late.lock().unwrap());
    free(rt);
}

// arkagent_runtime_subscribe: "`userdata` must stay valid until unsubscribed or the runtime
// is freed and, either way, every blocking call of this runtime running then has returned
// ...: a run cancelled by arkagent_runtime_free still reports its `run_finished`."
// arkagent_runtime_free: "Frees a runtime; an active run is cancelled and finishes on its
// own thread".
#[test]
fn core_5_c_a_run_cancelled_by_a_free_reports_run_finished_before_its_call_returns_and_nothing_after() {
    let freed = Arc::new(AtomicUsize::new(0));
    let rt_slot = Arc::new(AtomicUsize::new(0));
    let held = Arc::new(Mutex::new(None::<usize>));
    let (flag, slot, keep) = (Arc::clone(&freed), Arc::clone(&rt_slot), Arc::clone(&held));
    let helpers = Helpers::default();
    let helper = helpers.clone();
    // The request is held; another thread frees the runtime; send returns once it did.
    let model = Model::new(move |_, _, c| {
        *keep.lock().unwrap() = Some(c as usize);
        let (tx, rx) = std::sync::mpsc::channel();
        let (flag, rt) = (Arc::clone(&flag), slot.load(Ordering::SeqCst));
        helper.spawn(move || {
            free(rt as *mut ArkAgentRuntime);
            flag.store(1, Ordering::SeqCst);
            let _ = tx.send(());
        });
        let _ = rx.recv_timeout(std::time::Duration::from_secs(10));
    });
    let rt = runtime(CONFIG, std::ptr::null(), &model);
    rt_slot.store(rt as usize, Ordering::SeqCst);
    let (late, events) = logged_once(&freed);
    subscribe(rt, &events);
    let (r, outcome) = run(rt, "hi");
    let after_free: Vec<Value> = std::mem::take(&mut *late.lock().unwrap());
    freed.store(2, Ordering::SeqCst);
    helpers.join();
    assert_eq!(after_free.last(), Some(&json!("run_finished")), "the cancelled run reported its end before run() returned: {after_free:?}");
    let status = outcome.as_ref().map(|o| o["status"].clone());
    assert!(r == ArkAgentResult::Cancelled || (r == ArkAgentResult::Ok && status == Some(json!("cancelled"))), "{r:?} {outcome:?}");
    if let Some(c) = *held.lock().unwrap() {
        assert_eq!(complete(c as *mut ArkAgentHttpCompletion, 200, &reply_text("late")), ArkAgentResult::Ok, "a late answer is ignored");
    }
    assert!(late.lock().unwrap().is_empty(), "events delivered after the blocking call returned: {:?}", late.lock().unwrap());
}

/// A policy callback: the closure decides from the call's JSON.
struct Policy(Box<dyn Fn(&str) -> i32 + Send + Sync>);

unsafe extern "C" fn policy_call(userdata: *mut c_void, call_json: *const c_char, _reason: *mut c_char, _cap: usize) -> i32 {
    // SAFETY: a live Policy; the JSON is valid during the call.
    let (policy, call) = unsafe { (&*userdata.cast::<Policy>(), CStr::from_ptr(call_json).to_str().unwrap()) };
    (policy.0)(call)
}

// arkagent_tools_set_policy: "`userdata` is passed to `callback` and must stay valid until
// every runtime created with it is freed." arkagent_tools_register: "`userdata` must stay
// valid until every runtime created with these tools is freed." arkagent_runtime_free: "an
// active run is cancelled".
#[test]
fn tool_3_c_no_policy_or_tool_callback_after_the_runtime_was_freed() {
    let freed = Arc::new(AtomicUsize::new(0));
    let late = Arc::new(Mutex::new(Vec::<String>::new()));
    let rt_slot = Arc::new(AtomicUsize::new(0));
    let (flag, log, slot) = (Arc::clone(&freed), Arc::clone(&late), Arc::clone(&rt_slot));
    let helpers = Helpers::default();
    let helper = helpers.clone();
    // At its first call the policy has another thread free the runtime, and returns once
    // that free returned.
    let policy = Box::new(Policy(Box::new(move |call| {
        if flag.load(Ordering::SeqCst) != 0 {
            log.lock().unwrap().push(format!("policy {call}"));
        } else {
            let (tx, rx) = std::sync::mpsc::channel();
            let (flag, rt) = (Arc::clone(&flag), slot.load(Ordering::SeqCst));
            helper.spawn(move || {
                free(rt as *mut ArkAgentRuntime);
                flag.store(1, Ordering::SeqCst);
                let _ = tx.send(());
            });
            let _ = rx.recv_timeout(std::time::Duration::from_secs(10));
        }
        ffi::ArkAgentPolicy::Allow as i32
    })));
    let (flag, log) = (Arc::clone(&freed), Arc::clone(&late));
    let tool = Tool(Box::new(move |call, c| {
        if flag.load(Ordering::SeqCst) != 0 {
            log.lock().unwrap().push(format!("tool {call}"));
        }
        // SAFETY: the library's completion and a NUL-terminated string.
        unsafe { ffi::arkagent_tool_complete(c, c"done".as_ptr(), 0) };
    }));
    let set = tools(&[(&def("first", ""), &tool), (&def("second", ""), &tool)]);
    assert_eq!(ffi::arkagent_tools_set_policy(set, Some(policy_call), ud(&*policy)), ArkAgentResult::Ok);
    let model = Model::replying(vec![reply_calls(&[("c1", "first"), ("c2", "second")]), reply_text("done")]);
    let rt = runtime(CONFIG, set, &model);
    ffi::arkagent_tools_free(set);
    rt_slot.store(rt as usize, Ordering::SeqCst);
    let (r, outcome) = run(rt, "go");
    helpers.join();
    assert_eq!(freed.load(Ordering::SeqCst), 1, "the free returned inside the first policy call");
    let status = outcome.as_ref().map(|o| o["status"].clone());
    assert!(r == ArkAgentResult::Cancelled || (r == ArkAgentResult::Ok && status == Some(json!("cancelled"))), "{r:?} {outcome:?}");
    assert!(late.lock().unwrap().is_empty(), "callbacks with the tool set's userdata after arkagent_runtime_free returned: {:?}", late.lock().unwrap());
    assert_eq!(model.requests(), 1);
}

// arkagent_runtime_new_with_compressor: "the compressor is called only when the prompt size
// reaches it (and a model call was made since the last compression, whether or not it
// reported a usage: else `last_usage_is_compression`) ... 0 ...: the compressor is called
// before every model call and after every turn (except ... right after a compression)".
// (Found by a JS test of the README's sentence: a compressor that reported no usage was
// called, and compressed, again right after its own compression.)
#[test]
fn cmp_7_c_right_after_a_compression_without_usage_the_next_attempt_is_skipped() {
    let model = Model::replying(vec![reply_text("fine")]);
    // Archives all but the last message, and reports no usage (it calls no model).
    let squeezer = Squeeze(
        Box::new(|state, _, c| {
            let n = serde_json::from_str::<Value>(state).unwrap()["history"]["messages"].as_array().unwrap().len();
            let answer = if n >= 2 { json!({"outcome":"compressed","split_index":n - 1,"summary":"s"}) } else { json!({"outcome":"skipped","reason":"history_too_short"}) };
            let answer = CString::new(answer.to_string()).unwrap();
            // SAFETY: the library's completion and a NUL-terminated answer.
            assert_eq!(unsafe { ffi::arkagent_compress_complete(c, answer.as_ptr()) }, ArkAgentResult::Ok);
        }),
        AtomicUsize::new(0),
    );
    let rt = runtime_with_compressor(CONFIG, &model, &squeezer, 0);
    let events = Events::new(|_| {});
    subscribe(rt, &events);
    for input in ["one", "two", "three"] {
        assert_eq!(run(rt, input).0, ArkAgentResult::Ok);
    }
    let seen: Vec<String> = events
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "compression" || e["type"] == "model_request")
        .map(|e| if e["type"] == "compression" { format!("{}/{}", e["outcome"].as_str().unwrap(), e["reason"].as_str().unwrap()) } else { "request".into() })
        .collect();
    // Run 1: nothing to archive before its call (quiet), its answer compressed after it;
    // runs 2 and 3: skipped before the call (no call since), compressed after it.
    let mut want = vec!["request".to_owned(), "compressed/compressed".into()];
    for _ in 0..2 {
        want.extend(["skipped/last_usage_is_compression".to_owned(), "request".into(), "compressed/compressed".into()]);
    }
    assert_eq!(seen, want);
    free(rt);
}
