//! The fuzzed host's side: its HTTP client, tools, compressor, worker factory and event
//! probe. Requests, held tool calls and compression attempts wait in [`Pending`] until a
//! step (or the end of the sequence) answers them.

use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use crate::*;

use super::oracles::{is_paired, take_string};

/// What waits for the host.
#[derive(Default)]
pub(super) struct Pending {
    /// HTTP requests: the completion and whether the library asked for a stream.
    pub http: Vec<(usize, bool)>,
    /// Calls of the tool `hold`, answered by a later step.
    pub tools: Vec<usize>,
    /// Compression attempts: the completion and the state's safe split index (-1: none).
    pub compressions: Vec<(usize, i64)>,
}

impl Pending {
    pub fn is_empty(&self) -> bool {
        self.http.is_empty() && self.tools.is_empty() && self.compressions.is_empty()
    }
}

/// The host of one sequence; alive until every runtime is freed and every thread joined.
#[derive(Default)]
pub(super) struct Host {
    pub pending: Mutex<Pending>,
    /// Signalled whenever something is added to `pending`.
    pub arrived: Condvar,
    /// The run ids that runs returned, with their runtime.
    pub run_ids: Mutex<Vec<(usize, String)>>,
    /// The cancel callback finishes the request itself (as netstack's abort path does).
    pub fail_on_cancel: AtomicBool,
    /// The sequence's threads still running (blocking calls, answers given elsewhere).
    running: AtomicUsize,
    /// The first oracle that failed on one of them.
    pub failure: Mutex<Option<Box<dyn std::any::Any + Send>>>,
    /// The sequence's store (0 before it is opened; freed: its handle is refused).
    pub store: AtomicUsize,
    /// Sessions event probes attached, with their runtime (the sequence takes them over).
    pub attached: Mutex<Vec<(usize, String)>>,
}

/// An event probe's `userdata`: the runtime it watches, and the event (counted from 0) at
/// which it attaches the runtime to the sequence's store, if it does.
pub(super) struct Probe {
    pub runtime: usize,
    pub host: std::sync::Arc<Host>,
    pub attach_at: Option<usize>,
    pub seen: AtomicUsize,
}

impl Host {
    /// Waits up to `ms` for something new to answer or a thread to end, while threads run.
    pub fn wait(&self, ms: u64) {
        let pending = self.pending.lock().unwrap();
        if pending.is_empty() && self.running.load(Ordering::SeqCst) > 0 {
            drop(self.arrived.wait_timeout(pending, Duration::from_millis(ms)).unwrap());
        }
    }

    /// How many of the sequence's threads still run.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// A thread of the sequence starts.
    pub fn started(&self) {
        self.running.fetch_add(1, Ordering::SeqCst);
    }

    /// A thread of the sequence ended: a step waiting for it looks again.
    pub fn ended(&self) {
        let _pending = self.pending.lock().unwrap();
        self.running.fetch_sub(1, Ordering::SeqCst);
        self.arrived.notify_all();
    }

    /// An oracle failed on one of the sequence's threads (the first one is kept).
    pub fn failed(&self, panic: Box<dyn std::any::Any + Send>) {
        self.failure.lock().unwrap().get_or_insert(panic);
    }

    fn push(&self, f: impl FnOnce(&mut Pending)) {
        f(&mut self.pending.lock().unwrap());
        self.arrived.notify_all();
    }
}

/// # Safety
/// `userdata` is a live `Host`.
unsafe fn host<'a>(userdata: *mut c_void) -> &'a Host {
    // SAFETY: the caller's contract: the sequence's Host outlives every runtime and thread.
    unsafe { &*(userdata as *const Host) }
}

pub(super) unsafe extern "C" fn send(userdata: *mut c_void, request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: userdata is the sequence's Host; request is valid during the call.
    let (host, stream) = unsafe { (host(userdata), (*request).stream) };
    host.push(|p| p.http.push((completion as usize, stream)));
}

pub(super) unsafe extern "C" fn cancel(userdata: *mut c_void, completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: userdata is the sequence's Host.
    let host = unsafe { host(userdata) };
    if host.fail_on_cancel.load(Ordering::Relaxed) {
        // SAFETY: the handle `send` was given; finishing it inside the cancel callback is allowed.
        let code = unsafe { arkagent_http_fail(completion, 0, c"aborted".as_ptr()) };
        assert!(matches!(code, ArkAgentResult::Ok | ArkAgentResult::AlreadyCompleted), "a fail from the cancel callback: {code:?}");
    }
}

/// The tool `echo`: answers at once. `ask` (which requires approval) shares it.
pub(super) unsafe extern "C" fn echo(_userdata: *mut c_void, _call_json: *const c_char, completion: *mut ArkAgentToolCompletion) {
    // SAFETY: the completion the library handed over, finished once.
    let code = unsafe { arkagent_tool_complete(completion, c"echoed".as_ptr(), 0) };
    assert_eq!(code, ArkAgentResult::Ok);
}

/// The tool `hold`: its call waits for a step.
pub(super) unsafe extern "C" fn hold(userdata: *mut c_void, _call_json: *const c_char, completion: *mut ArkAgentToolCompletion) {
    // SAFETY: userdata is the sequence's Host.
    unsafe { host(userdata) }.push(|p| p.tools.push(completion as usize));
}

pub(super) unsafe extern "C" fn on_abort(_userdata: *mut c_void, reason: i32) {
    assert!((1..=3).contains(&reason), "an abort callback with reason {reason}");
}

/// The custom compressor: the attempt waits for a step, with the split it may answer.
pub(super) unsafe extern "C" fn compress(userdata: *mut c_void, state_json: *const c_char, context_json: *const c_char, completion: *mut ArkAgentCompressCompletion) {
    // SAFETY: userdata is the sequence's Host; both strings are the library's, valid during the call.
    let (host, state, context) = unsafe { (host(userdata), CStr::from_ptr(state_json), CStr::from_ptr(context_json)) };
    let state: serde_json::Value = serde_json::from_slice(state.to_bytes()).expect("the compressor's state is JSON");
    let context: serde_json::Value = serde_json::from_slice(context.to_bytes()).expect("the compressor's context is JSON");
    assert!(context["force"].is_boolean(), "the compressor's context: {context}");
    let messages = std::ffi::CString::new(state["history"]["messages"].to_string()).unwrap();
    assert!(is_paired(&messages), "the state handed to the compressor is paired");
    let mut split = -1i64;
    // SAFETY: a NUL-terminated array of messages, an out pointer.
    assert_eq!(unsafe { arkagent_compute_safe_split_index(messages.as_ptr(), 2, &mut split) }, ArkAgentResult::Ok);
    host.push(|p| p.compressions.push((completion as usize, split)));
}

pub(super) unsafe extern "C" fn factory(_userdata: *mut c_void, _name: *const c_char, builder: *mut ArkAgentWorkerBuilder) -> i32 {
    // SAFETY: the factory's builder, a NUL-terminated override.
    let code = unsafe { arkagent_worker_configure(builder, c"{\"max_iterations\":3}".as_ptr()) };
    assert_eq!(code, ArkAgentResult::Ok);
    0
}

/// Events: each is a JSON object with its type. With a [`Probe`] as `userdata`, each event
/// also exports the state — it must be paired whatever the moment — imports it back
/// (refused only while a call holds the runtime), tries a blocking call, which a callback
/// must be refused, and at the probe's chosen event attaches the runtime to the store.
pub(super) unsafe extern "C" fn on_event(userdata: *mut c_void, event_json: *const c_char) {
    // SAFETY: the library's NUL-terminated JSON, valid during the call.
    let json = unsafe { CStr::from_ptr(event_json) }.to_str().expect("events are UTF-8");
    assert!(json.starts_with('{') && json.contains("\"type\""), "an event is a JSON object with its type: {json}");
    if userdata.is_null() {
        return;
    }
    // SAFETY: the sequence keeps its probes until every thread has returned.
    let probe = unsafe { &*(userdata as *const Probe) };
    let rt = probe.runtime as *mut ArkAgentRuntime;
    export_import_at_event(rt, json);
    // SAFETY: as above; a NUL-terminated input; no outcome wanted.
    let code = unsafe { arkagent_runtime_run(rt, c"from a callback".as_ptr(), null_mut()) };
    assert!(matches!(code, ArkAgentResult::Reentrant | ArkAgentResult::InvalidHandle), "a run from the callback of {json} on thread {:?}: {code:?}", std::thread::current().name());
    if probe.attach_at == Some(probe.seen.fetch_add(1, Ordering::SeqCst)) {
        attach_at_event(probe, json);
    }
}

/// An export at any event is paired and imports back (refused only while a call holds the
/// runtime; a runtime freed meanwhile on another thread refuses both).
fn export_import_at_event(rt: *mut ArkAgentRuntime, json: &str) {
    let mut out: *mut c_char = null_mut();
    // SAFETY: a handle the library gave (freed meanwhile on another thread: refused), an out pointer.
    let code = unsafe { arkagent_runtime_export_state(rt, &mut out) };
    assert!(matches!(code, ArkAgentResult::Ok | ArkAgentResult::InvalidHandle), "an export from an event: {code:?}");
    if code != ArkAgentResult::Ok {
        return;
    }
    let exported = take_string(out);
    let state: serde_json::Value = serde_json::from_str(&exported).unwrap();
    let messages = std::ffi::CString::new(state["history"]["messages"].to_string()).unwrap();
    assert!(is_paired(&messages), "an export at the event {json} is paired");
    let exported = std::ffi::CString::new(exported).unwrap();
    // SAFETY: as above; a NUL-terminated state.
    let code = unsafe { arkagent_runtime_import_state(rt, exported.as_ptr()) };
    assert!(
        matches!(code, ArkAgentResult::Ok | ArkAgentResult::RunInProgress | ArkAgentResult::InvalidHandle) || super::oracles::store_code(code),
        "an import from the callback of {json}: {code:?}"
    );
}

/// Attaches the probe's runtime to the sequence's store from inside an event: only the
/// codes `arkagent_runtime_attach_store` documents (a run in progress refuses it).
fn attach_at_event(probe: &Probe, json: &str) {
    let store = probe.host.store.load(Ordering::SeqCst);
    if store == 0 {
        return;
    }
    let session = format!("s{}", probe.attach_at.unwrap_or(0) % 4);
    let id = std::ffi::CString::new(session.clone()).unwrap();
    // SAFETY: handles the library gave (either may be freed: refused), a NUL-terminated id.
    let code = unsafe { arkagent_runtime_attach_store(probe.runtime as *mut ArkAgentRuntime, store as *mut ArkAgentStore, id.as_ptr()) };
    assert!(
        matches!(code, ArkAgentResult::Ok | ArkAgentResult::SessionLocked | ArkAgentResult::RunInProgress | ArkAgentResult::InvalidConfig | ArkAgentResult::InvalidHandle)
            || super::oracles::store_code(code),
        "an attach from the callback of {json}: {code:?}"
    );
    if code == ArkAgentResult::Ok {
        probe.host.attached.lock().unwrap().push((probe.runtime, session));
    }
}
