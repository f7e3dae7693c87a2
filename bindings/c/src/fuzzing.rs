//! REL-6 (issue 42 item 1): random call sequences over the C ABI, as a host makes them
//! (the cargo-fuzz target `c_abi_sequence` and the stable replay of its seeds and
//! regressions, bindings/c/tests/c_abi/fuzz_replay.rs). Not part of the C API.
//! The input decides each step on a small pool of runtimes: create one, free one (also
//! while its run is in flight: it is cancelled and finishes on its own thread), start a
//! blocking run on a thread of its own, answer the oldest pending HTTP request (text, a
//! call of the host tool `echo`, garbage, a 503, a failure), answer it again, cancel, export and import into
//! another runtime, subscribe and unsubscribe, and call with forged or stale handles. At
//! the end every pending request is answered until every run thread returns.
//! Oracles, beyond "no crash" (ASan, LeakSanitizer at exit): every call returns a code its
//! header documents for it and never `PANIC`/`INTERNAL`; a freed or forged handle is
//! refused; a finished runtime's messages are paired (CORE-2); an export imports into a
//! fresh runtime and exports again with the same history; no run thread hangs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::{c_char, c_void, CStr};
use std::ptr::null_mut;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::*;


/// The host: requests wait here until a step answers them.
struct Host {
    pending: Mutex<Vec<usize>>,
}

unsafe extern "C" fn send(userdata: *mut c_void, _request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: userdata is the input's Host, alive until every runtime is freed and every run thread joined.
    let host = unsafe { &*(userdata as *const Host) };
    host.pending.lock().unwrap().push(completion as usize);
}

unsafe extern "C" fn on_event(_userdata: *mut c_void, event_json: *const c_char) {
    // SAFETY: the library's NUL-terminated JSON, valid during the call.
    let json = unsafe { CStr::from_ptr(event_json) }.to_str().expect("events are UTF-8");
    assert!(json.starts_with('{') && json.contains("\"type\""), "an event is a JSON object with its type: {json}");
}

const CONFIG: &CStr = c"{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-fuzz-0123456789\",\"model\":\"m\",\"retry\":{\"initial_backoff_ms\":1,\"max_backoff_ms\":2}}}";
const TEXT: &[u8] = br#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}}"#;
const TOOL_CALL: &[u8] = br#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"echo","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}}"#;
const ECHO: &CStr = c"{\"name\":\"echo\",\"description\":\"Echoes\",\"parameters\":{\"type\":\"object\"}}";

/// The host tool: answers at once.
unsafe extern "C" fn echo(_userdata: *mut c_void, _call_json: *const c_char, completion: *mut ArkAgentToolCompletion) {
    // SAFETY: the completion the library handed over, finished once.
    let code = unsafe { arkagent_tool_complete(completion, c"echoed".as_ptr(), 0) };
    assert_eq!(code, ArkAgentResult::Ok);
}
const GARBAGE: &[u8] = br#"{"choices":[{"index":0,"message":"#;

/// What `run` may return: its header's codes (no approval tools, no store here).
fn run_code(code: ArkAgentResult) -> bool {
    use ArkAgentResult as R;
    matches!(
        code,
        R::Ok | R::RunInProgress | R::InvalidHandle | R::Cancelled | R::LlmServer | R::LlmMalformedResponse | R::LlmTransport | R::LlmTimeout | R::LlmBadRequest
    )
}

fn never_broken(code: ArkAgentResult, what: &str) {
    assert!(!matches!(code, ArkAgentResult::Panic | ArkAgentResult::Internal), "{what}: {code:?}");
}

struct Runtime {
    handle: usize,
    freed: bool,
}

struct Sequence<'a> {
    data: &'a [u8],
    at: usize,
    host: Box<Host>,
    runtimes: Vec<Runtime>,
    threads: Vec<JoinHandle<()>>,
    subscriptions: Vec<(usize, u64)>,
}

impl Sequence<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    fn http(&self) -> ArkAgentHttp {
        ArkAgentHttp { send: Some(send), cancel: None, userdata: &*self.host as *const Host as *mut c_void }
    }

    fn new_runtime(&mut self) -> Option<usize> {
        if self.runtimes.iter().filter(|r| !r.freed).count() >= 3 {
            return None;
        }
        let (mut out, mut tools) = (null_mut(), null_mut());
        let http = self.http();
        // SAFETY: out pointers, a NUL-terminated definition, a callback; a NUL-terminated
        // config, a valid ArkAgentHttp; the tool set freed once the runtime has it.
        unsafe {
            assert_eq!(arkagent_tools_new(&mut tools), ArkAgentResult::Ok);
            assert_eq!(arkagent_tools_register(tools, ECHO.as_ptr(), Some(echo), null_mut()), ArkAgentResult::Ok);
            assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), tools, std::ptr::null(), &http, &mut out), ArkAgentResult::Ok);
        }
        arkagent_tools_free(tools);
        self.runtimes.push(Runtime { handle: out as usize, freed: false });
        Some(out as usize)
    }

    /// A runtime of the pool (a freed one too: its handle must be refused).
    fn pick(&mut self) -> Option<(usize, bool)> {
        let n = self.byte()? as usize;
        let r = self.runtimes.get(n % self.runtimes.len().max(1))?;
        Some((r.handle, r.freed))
    }

    fn start_run(&mut self, rt: usize, freed: bool) {
        self.threads.push(std::thread::spawn(move || {
            let mut out: *mut c_char = null_mut();
            // SAFETY: a handle the library gave (possibly freed: it must refuse it), a NUL-terminated input.
            let code = unsafe { arkagent_runtime_run(rt as *mut ArkAgentRuntime, c"what is the weather?".as_ptr(), &mut out) };
            never_broken(code, "run");
            assert!(run_code(code), "run returned {code:?}");
            assert!(!freed || code == ArkAgentResult::InvalidHandle, "a freed runtime ran: {code:?}");
            if !out.is_null() {
                // SAFETY: the library's string.
                unsafe { arkagent_string_free(out) };
            }
        }));
    }

    /// Answers the oldest pending request as `how` says.
    fn answer(&mut self, how: u8) {
        let Some(completion) = ({ let mut p = self.host.pending.lock().unwrap(); (!p.is_empty()).then(|| p.remove(0)) }) else { return };
        let c = completion as *mut ArkAgentHttpCompletion;
        // SAFETY: a completion the library handed to `send` (finished at most once below; a
        // second finish must be refused, not used).
        let code = unsafe {
            match how % 5 {
                0 => arkagent_http_complete(c, 200, std::ptr::null(), TEXT.as_ptr(), TEXT.len()),
                1 => arkagent_http_complete(c, 200, std::ptr::null(), TOOL_CALL.as_ptr(), TOOL_CALL.len()),
                2 => arkagent_http_complete(c, 200, std::ptr::null(), GARBAGE.as_ptr(), GARBAGE.len()),
                3 => arkagent_http_complete(c, 503, std::ptr::null(), b"{}".as_ptr(), 2),
                _ => arkagent_http_fail(c, 0, c"connection reset".as_ptr()),
            }
        };
        never_broken(code, "http answer");
        assert!(matches!(code, ArkAgentResult::Ok | ArkAgentResult::Cancelled | ArkAgentResult::AlreadyCompleted | ArkAgentResult::InvalidHandle), "answer: {code:?}");
        if how >= 128 {
            // SAFETY: the same completion again: finished already, it must be refused.
            let again = unsafe { arkagent_http_complete(c, 200, std::ptr::null(), TEXT.as_ptr(), TEXT.len()) };
            assert!(matches!(again, ArkAgentResult::AlreadyCompleted | ArkAgentResult::InvalidHandle), "a second answer: {again:?}");
        }
    }

    fn export_import(&mut self, rt: usize, freed: bool) {
        let mut out: *mut c_char = null_mut();
        // SAFETY: a handle the library gave, an out pointer.
        let code = unsafe { arkagent_runtime_export_state(rt as *mut ArkAgentRuntime, &mut out) };
        never_broken(code, "export");
        if freed {
            assert_eq!(code, ArkAgentResult::InvalidHandle, "a freed runtime exported");
            return;
        }
        assert_eq!(code, ArkAgentResult::Ok);
        // SAFETY: the library's NUL-terminated JSON.
        let exported = unsafe { CStr::from_ptr(out) }.to_str().unwrap().to_owned();
        let Some(fresh) = self.new_runtime() else {
            // SAFETY: the library's string.
            unsafe { arkagent_string_free(out) };
            return;
        };
        // SAFETY: a fresh idle runtime, the exported JSON.
        let imported = unsafe { arkagent_runtime_import_state(fresh as *mut ArkAgentRuntime, out) };
        // SAFETY: the library's string.
        unsafe { arkagent_string_free(out) };
        assert_eq!(imported, ArkAgentResult::Ok, "an export imports into a fresh runtime");
        let again = history_of(fresh);
        let before: serde_json::Value = serde_json::from_str(&exported).unwrap();
        assert_eq!(again["history"], before["history"], "an export imports unchanged");
    }
}

fn history_of(rt: usize) -> serde_json::Value {
    let mut out: *mut c_char = null_mut();
    // SAFETY: a live handle, an out pointer.
    assert_eq!(unsafe { arkagent_runtime_export_state(rt as *mut ArkAgentRuntime, &mut out) }, ArkAgentResult::Ok);
    // SAFETY: the library's NUL-terminated JSON, freed right after.
    let value = serde_json::from_str(unsafe { CStr::from_ptr(out) }.to_str().unwrap()).unwrap();
    unsafe { arkagent_string_free(out) };
    value
}

fn paired(rt: usize) {
    let mut out: *mut c_char = null_mut();
    // SAFETY: a live handle, an out pointer.
    assert_eq!(unsafe { arkagent_runtime_messages(rt as *mut ArkAgentRuntime, &mut out) }, ArkAgentResult::Ok);
    let mut is_paired = 0;
    // SAFETY: the library's JSON, an out pointer.
    assert_eq!(unsafe { arkagent_tool_calls_paired(out, &mut is_paired) }, ArkAgentResult::Ok);
    unsafe { arkagent_string_free(out) };
    assert_eq!(is_paired, 1, "a finished runtime's history is paired");
}

/// Runs the sequence `data` describes; panics when an oracle fails.
pub fn check_c_abi_sequence(data: &[u8]) {
    let mut s = Sequence { data, at: 0, host: Box::new(Host { pending: Mutex::new(Vec::new()) }), runtimes: Vec::new(), threads: Vec::new(), subscriptions: Vec::new() };
    s.new_runtime();
    while let Some(op) = s.byte() {
        s.step(op);
    }
    s.finish();
}

impl Sequence<'_> {
    fn step(&mut self, op: u8) {
        match op % 10 {
            0 => {
                self.new_runtime();
            }
            1 | 2 => {
                if let Some((rt, freed)) = self.pick() {
                    self.start_run(rt, freed);
                }
            }
            3 | 4 => {
                let how = self.byte().unwrap_or(0);
                self.answer(how);
            }
            5 => {
                if let Some((rt, freed)) = self.pick() {
                    let code = arkagent_runtime_cancel(rt as *mut ArkAgentRuntime);
                    assert_eq!(code, if freed { ArkAgentResult::InvalidHandle } else { ArkAgentResult::Ok });
                }
            }
            6 => {
                if let Some((rt, freed)) = self.pick() {
                    self.export_import(rt, freed);
                }
            }
            7 => {
                let n = self.byte().unwrap_or(0) as usize;
                if let Some(r) = self.runtimes.get_mut(n % 3) {
                    // Freed with its run in flight: cancelled, it finishes on its own thread.
                    arkagent_runtime_free(r.handle as *mut ArkAgentRuntime);
                    r.freed = true;
                }
            }
            8 => self.subscription(),
            _ => {
                // A forged handle is refused by every call.
                let forged = (0xA5A5_0000usize | usize::from(self.byte().unwrap_or(1))) as *mut ArkAgentRuntime;
                assert_eq!(arkagent_runtime_cancel(forged), ArkAgentResult::InvalidHandle);
            }
        }
    }

    fn subscription(&mut self) {
        if let Some((rt, freed)) = self.pick() {
            let mut id = 0u64;
            // SAFETY: a handle the library gave, a callback, an out pointer.
            let code = unsafe { arkagent_runtime_subscribe(rt as *mut ArkAgentRuntime, Some(on_event), null_mut(), &mut id) };
            assert_eq!(code, if freed { ArkAgentResult::InvalidHandle } else { ArkAgentResult::Ok });
            if code == ArkAgentResult::Ok {
                self.subscriptions.push((rt, id));
            }
        } else if let Some((rt, id)) = self.subscriptions.pop() {
            let code = arkagent_runtime_unsubscribe(rt as *mut ArkAgentRuntime, id);
            never_broken(code, "unsubscribe");
        }
    }

    /// Answers everything until every run thread has returned, then frees the pool.
    fn finish(mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.threads.iter().any(|t| !t.is_finished()) {
            assert!(Instant::now() < deadline, "a run thread hangs with every request answered");
            self.answer(0);
            std::thread::sleep(Duration::from_millis(1));
        }
        for t in self.threads.drain(..) {
            t.join().expect("a run thread's oracle");
        }
        for r in &self.runtimes {
            if !r.freed {
                paired(r.handle);
                arkagent_runtime_free(r.handle as *mut ArkAgentRuntime);
            }
        }
        // A freed handle is refused afterwards too.
        for r in &self.runtimes {
            assert_eq!(arkagent_runtime_cancel(r.handle as *mut ArkAgentRuntime), ArkAgentResult::InvalidHandle);
        }
    }
}
