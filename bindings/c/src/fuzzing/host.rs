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

/// Events: each is a JSON object with its type. With a runtime as `userdata` (a probe), each
/// event also exports the state — it must be paired whatever the moment — imports it back
/// (refused only while a call holds the runtime), and tries a blocking call, which a
/// callback must be refused.
pub(super) unsafe extern "C" fn on_event(userdata: *mut c_void, event_json: *const c_char) {
    // SAFETY: the library's NUL-terminated JSON, valid during the call.
    let json = unsafe { CStr::from_ptr(event_json) }.to_str().expect("events are UTF-8");
    assert!(json.starts_with('{') && json.contains("\"type\""), "an event is a JSON object with its type: {json}");
    if userdata.is_null() {
        return;
    }
    let rt = userdata as *mut ArkAgentRuntime;
    let mut out: *mut c_char = null_mut();
    // SAFETY: a handle the library gave (freed meanwhile on another thread: refused), an out pointer.
    let code = unsafe { arkagent_runtime_export_state(rt, &mut out) };
    assert!(matches!(code, ArkAgentResult::Ok | ArkAgentResult::InvalidHandle), "an export from an event: {code:?}");
    if code == ArkAgentResult::Ok {
        let exported = take_string(out);
        let state: serde_json::Value = serde_json::from_str(&exported).unwrap();
        let messages = std::ffi::CString::new(state["history"]["messages"].to_string()).unwrap();
        assert!(is_paired(&messages), "an export at the event {json} is paired");
        // The export imports back at any event (refused only while a call holds the runtime).
        let exported = std::ffi::CString::new(exported).unwrap();
        // SAFETY: as above; a NUL-terminated state.
        let code = unsafe { arkagent_runtime_import_state(rt, exported.as_ptr()) };
        assert!(
            matches!(code, ArkAgentResult::Ok | ArkAgentResult::RunInProgress | ArkAgentResult::InvalidHandle) || super::oracles::store_code(code),
            "an import from the callback of {json}: {code:?}"
        );
    }
    // SAFETY: as above; a NUL-terminated input; no outcome wanted.
    let code = unsafe { arkagent_runtime_run(rt, c"from a callback".as_ptr(), null_mut()) };
    assert!(matches!(code, ArkAgentResult::Reentrant | ArkAgentResult::InvalidHandle), "a run from the callback of {json} on thread {:?}: {code:?}", std::thread::current().name());
}
