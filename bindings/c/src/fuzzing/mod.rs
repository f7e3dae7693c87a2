//! REL-6 (issue 42 item 1): random call sequences over the C ABI, as a host makes them
//! (the cargo-fuzz target `c_abi_sequence` and the stable replay of its seeds and
//! regressions, bindings/c/tests/c_abi/fuzz_replay.rs). Not part of the C API.
//!
//! The input decides each step on a small pool of runtimes (plain or streaming; with a C
//! compressor called on every attempt or at the default threshold; with a worker to
//! delegate to): create one; free one (also mid-run, also from another thread); start a
//! blocking call on another thread (`run`, `run_parts` with a photo, `resume_run`,
//! `regenerate`, `edit_and_resend`, `run_decomposed`, `compress_now`); answer the oldest
//! HTTP request (a text, tool calls of `echo`, `hold`, `ask` (approval), `delegate_task`
//! or an unknown tool, garbage, a 503, a transport failure, a context overflow, a stream
//! cut anywhere or broken midway — also from another thread, also twice); answer held
//! tool calls and compression attempts (early, late, twice, with a bad split, garbage);
//! cancel; export and import into another runtime; subscribe (an event probe exports and
//! imports at every event, is refused a blocking call, and may attach its runtime to the
//! store at an event) and unsubscribe; open a store, attach
//! sessions (also one already taken), list, delete, free it mid-run; answer approvals
//! (approve, edit, reject, an unknown call) and close a paused turn; force-complete,
//! close and clean up sub-agents; rewind and fork; forged and stale handles. At the end
//! every request, call and attempt is answered until every thread returns.
//!
//! Oracles, beyond "no crash" (ASan, LeakSanitizer at exit): every call returns a code
//! its header documents for it and never `PANIC`/`INTERNAL`; a freed or forged handle is
//! refused; exports taken at any event are paired, and so is every finished runtime
//! (CORE-2); an export imports into a fresh runtime unchanged; `"parent"` totals are the
//! sum of the usages and `"total"` parent + children; a runtime's stored session resumes
//! in a new runtime with the same history; no thread hangs (within 30 s, or
//! `ARKAGENT_SEQUENCE_DEADLINE` seconds: shorter while minimising a hang).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod answers;
mod host;
mod ops;
mod oracles;
mod pool;

use std::ffi::{c_char, c_void, CStr};
use std::path::PathBuf;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::*;

use answers::{answer_compression, answer_tool, HttpAnswer};
use host::Host;
use oracles::{export, json_out, never_broken, paired, take_string, totals_are_sums};

const CONFIG: &str = r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"sk-fuzz-0123456789","model":"m","stream":STREAM,"retry":{"initial_backoff_ms":1,"max_backoff_ms":2}},"tool_timeout_ms":0}"#;
const ECHO: &CStr = c"{\"name\":\"echo\",\"description\":\"Echoes\",\"parameters\":{\"type\":\"object\"}}";
const HOLD: &CStr = c"{\"name\":\"hold\",\"description\":\"Answers later\",\"parameters\":{\"type\":\"object\"}}";
const ASK: &CStr = c"{\"name\":\"ask\",\"description\":\"Asks a person first\",\"parameters\":{\"type\":\"object\"},\"requires_approval\":true}";

static STORES: AtomicU64 = AtomicU64::new(0);

struct Runtime {
    handle: usize,
    freed: bool,
    /// The session it attached in the sequence's store.
    session: Option<String>,
    stream: bool,
}

struct Store {
    handle: usize,
    path: PathBuf,
    freed: bool,
}

struct Sequence<'a> {
    data: &'a [u8],
    at: usize,
    host: Arc<Host>,
    runtimes: Vec<Runtime>,
    subscriptions: Vec<(usize, u64)>,
    /// The event probes' userdata, kept until every thread has returned (boxed: the
    /// library holds their addresses while the vector grows).
    #[allow(clippy::vec_box)]
    probes: Vec<Box<host::Probe>>,
    store: Option<Store>,
    /// Held tool calls and compressions the host does not answer until its user gives up.
    abandoned: host::Pending,
}

/// Runs the sequence `data` describes; panics when an oracle fails.
pub fn check_c_abi_sequence(data: &[u8]) {
    let host = Arc::new(Host::default());
    host.fail_on_cancel.store(data.first().is_some_and(|b| b & 1 == 1), Ordering::Relaxed);
    let mut s = Sequence { data, at: 1, host: Arc::clone(&host), runtimes: Vec::new(), subscriptions: Vec::new(), probes: Vec::new(), store: None, abandoned: host::Pending::default() };
    s.new_runtime(0);
    while let Some(op) = s.byte() {
        s.step(op);
    }
    s.finish();
    pool::wait_released(&host);
}

impl Sequence<'_> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.data.get(self.at)?;
        self.at += 1;
        Some(b)
    }

    /// Runs `f` on another thread (of the pool); its end wakes a waiting step. A failed
    /// oracle there fails the sequence when it quiesces.
    fn spawn(&mut self, f: impl FnOnce() + Send + 'static) {
        let host = Arc::clone(&self.host);
        host.started();
        struct Ended(Arc<Host>);
        impl Drop for Ended {
            fn drop(&mut self) {
                self.0.ended();
            }
        }
        pool::run(Box::new(move || {
            let ended = Ended(host);
            if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
                ended.0.failed(panic);
            }
        }));
    }

    fn userdata(&self) -> *mut c_void {
        Arc::as_ptr(&self.host) as *mut c_void
    }

    /// A runtime as `flags` says: bit 0 streaming, bit 1 a C compressor (bit 2: called on
    /// every attempt), bit 3 a worker `helper` to delegate to.
    fn new_runtime(&mut self, flags: u8) -> Option<usize> {
        if self.runtimes.iter().filter(|r| !r.freed).count() >= 3 {
            return None;
        }
        let stream = flags & 1 == 1;
        let handle = create_runtime(self.userdata(), flags);
        self.runtimes.push(Runtime { handle, freed: false, session: None, stream });
        Some(handle)
    }

    /// A runtime of the pool (a freed one too: its handle must be refused).
    fn pick(&mut self) -> Option<(usize, bool)> {
        let n = self.byte()? as usize;
        let r = self.runtimes.get(n % self.runtimes.len().max(1))?;
        Some((r.handle, r.freed))
    }

    fn step(&mut self, op: u8) {
        match op % 20 {
            0 => {
                let flags = self.byte().unwrap_or(0);
                self.new_runtime(flags);
            }
            1 | 2 => {
                let kind = self.byte().unwrap_or(0);
                if let Some((rt, freed)) = self.pick() {
                    self.start(rt, freed, kind);
                }
            }
            3..=5 | 18 | 19 => self.answer_http(),
            6 => {
                let how = self.byte().unwrap_or(0);
                self.host.wait(2);
                let held = { self.host.pending.lock().unwrap().tools.first().copied() };
                if let Some(c) = held {
                    self.host.pending.lock().unwrap().tools.remove(0);
                    if how % 16 == 15 {
                        self.abandoned.tools.push(c);
                    } else {
                        answer_tool(c, how);
                    }
                }
            }
            7 => {
                let how = self.byte().unwrap_or(0);
                self.host.wait(2);
                let attempt = { self.host.pending.lock().unwrap().compressions.first().copied() };
                if let Some((c, split)) = attempt {
                    self.host.pending.lock().unwrap().compressions.remove(0);
                    if how % 16 == 15 {
                        self.abandoned.compressions.push((c, split));
                    } else {
                        answer_compression(c, split, how);
                    }
                }
            }
            8 => {
                if let Some((rt, freed)) = self.pick() {
                    let code = arkagent_runtime_cancel(rt as *mut ArkAgentRuntime);
                    assert_eq!(code, if freed { ArkAgentResult::InvalidHandle } else { ArkAgentResult::Ok });
                }
            }
            9 => {
                if let Some((rt, freed)) = self.pick() {
                    self.export_import(rt, freed);
                }
            }
            10 => self.free_runtime(),
            11 => self.subscription(),
            12 => {
                let b = self.byte().unwrap_or(1);
                if b & 1 == 0 {
                    // A forged handle is refused by every call.
                    let forged = (0xA5A5_0000usize | usize::from(b)) as *mut ArkAgentRuntime;
                    assert_eq!(arkagent_runtime_cancel(forged), ArkAgentResult::InvalidHandle);
                } else {
                    oracles::null_handles_refused();
                }
            }
            13 => self.store_step(),
            14 => self.approval_step(),
            15 => self.sub_agent_step(),
            16 => self.rewind_step(),
            _ => {
                // The app waits: every request, call and attempt is answered until every
                // blocking call has returned (a sequence can then act on an idle runtime).
                if self.byte().unwrap_or(0) & 1 == 1 {
                    self.quiesce();
                } else {
                    self.answer_everything();
                }
            }
        }
    }

    /// Answers the oldest pending request (on another thread when bit 6 of `how` is set).
    fn answer_http(&mut self) {
        let answer = HttpAnswer { how: self.byte().unwrap_or(0), pick: self.byte().unwrap_or(0), cut: self.byte().unwrap_or(0) };
        if self.host.running() > 0 {
            // A request on its way is waited for a moment, as a host's network would be.
            self.host.wait(5);
        }
        let Some((c, stream)) = ({ let mut p = self.host.pending.lock().unwrap(); (!p.http.is_empty()).then(|| p.http.remove(0)) }) else { return };
        if answer.how & 0x40 != 0 {
            self.spawn(move || answer.give(c, stream));
        } else {
            answer.give(c, stream);
        }
    }

    fn free_runtime(&mut self) {
        let n = self.byte().unwrap_or(0);
        let Some(r) = self.runtimes.get_mut(usize::from(n) % 3) else { return };
        r.freed = true;
        let handle = r.handle;
        // Freed with its run in flight: cancelled, it finishes on its own thread. Freed from
        // another thread, it races the run's thread there (delivering events, calling back).
        if n & 0x80 != 0 {
            pool::run_and_wait(move || arkagent_runtime_free(handle as *mut ArkAgentRuntime));
        } else {
            arkagent_runtime_free(handle as *mut ArkAgentRuntime);
        }
    }

    fn export_import(&mut self, rt: usize, freed: bool) {
        // SAFETY: a handle the library gave (freed: refused), an out pointer.
        let exported = json_out("export", |out| unsafe { arkagent_runtime_export_state(rt as *mut ArkAgentRuntime, out) });
        if freed {
            assert_eq!(exported.err(), Some(ArkAgentResult::InvalidHandle), "a freed runtime exported");
            return;
        }
        let exported = exported.expect("a live runtime exports at any moment");
        let Some(fresh) = self.new_runtime(self.data.get(self.at).copied().unwrap_or(0) & 1) else { return };
        let json = std::ffi::CString::new(exported.to_string()).unwrap();
        // SAFETY: a fresh idle runtime, the exported JSON.
        let imported = unsafe { arkagent_runtime_import_state(fresh as *mut ArkAgentRuntime, json.as_ptr()) };
        assert_eq!(imported, ArkAgentResult::Ok, "an export imports into a fresh runtime");
        assert_eq!(export(fresh)["history"], exported["history"], "an export imports unchanged");
    }

    /// Subscribes to a runtime of the pool (bit 7 of the byte picking it: an event probe;
    /// bit 6 too: one that attaches the runtime to the store at the event bits 3–5 count),
    /// or unsubscribes the latest subscription when the pool is empty.
    fn subscription(&mut self) {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        if let Some((rt, freed)) = self.pick() {
            let userdata = if b & 0x80 != 0 {
                let attach_at = (b & 0x40 != 0).then_some(usize::from((b >> 3) & 7));
                let probe = Box::new(host::Probe { runtime: rt, host: Arc::clone(&self.host), attach_at, seen: Default::default() });
                let userdata = &*probe as *const host::Probe as *mut c_void;
                self.probes.push(probe);
                userdata
            } else {
                null_mut()
            };
            let mut id = 0u64;
            // SAFETY: a handle the library gave, a callback, an out pointer.
            let code = unsafe { arkagent_runtime_subscribe(rt as *mut ArkAgentRuntime, Some(host::on_event), userdata, &mut id) };
            assert_eq!(code, if freed { ArkAgentResult::InvalidHandle } else { ArkAgentResult::Ok });
            if code == ArkAgentResult::Ok {
                self.subscriptions.push((rt, id));
            }
        } else if let Some((rt, id)) = self.subscriptions.pop() {
            let code = arkagent_runtime_unsubscribe(rt as *mut ArkAgentRuntime, id);
            never_broken(code, "unsubscribe");
        }
    }

    /// Takes over the sessions event probes attached (their runtime's session).
    fn take_event_attachments(&mut self) {
        let attached = std::mem::take(&mut *self.host.attached.lock().unwrap());
        for (rt, session) in attached {
            if let Some(r) = self.runtimes.iter_mut().find(|r| r.handle == rt && !r.freed) {
                r.session = Some(session);
            }
        }
    }

    /// Answers everything until every thread has returned, then checks and frees the pool.
    fn finish(mut self) {
        self.quiesce();
        self.answer_everything();
        self.take_event_attachments();
        for i in 0..self.runtimes.len() {
            if !self.runtimes[i].freed {
                let handle = self.runtimes[i].handle;
                paired(handle);
                totals_are_sums(handle);
                self.runtimes[i].freed = true;
                self.stored_session_resumes(i);
            }
        }
        // A freed handle is refused afterwards too.
        for r in &self.runtimes {
            assert_eq!(arkagent_runtime_cancel(r.handle as *mut ArkAgentRuntime), ArkAgentResult::InvalidHandle);
        }
        self.close_store();
    }

    /// Answers everything until every thread has returned; joins them.
    fn quiesce(&mut self) {
        let started = Instant::now();
        let deadline = started + Duration::from_secs(std::env::var("ARKAGENT_SEQUENCE_DEADLINE").ok().and_then(|s| s.parse().ok()).unwrap_or(30));
        let mut gave_up = false;
        while self.host.running() > 0 {
            assert!(Instant::now() < deadline, "a thread hangs with every request answered");
            self.answer_everything();
            if !gave_up && !self.abandoned.is_empty() && started.elapsed() > Duration::from_millis(20) {
                // A call or compression nobody answers: the user gives up, and every run ends.
                for r in self.runtimes.iter().filter(|r| !r.freed) {
                    assert_eq!(arkagent_runtime_cancel(r.handle as *mut ArkAgentRuntime), ArkAgentResult::Ok);
                }
                gave_up = true;
            }
            self.host.wait(2);
        }
        if let Some(failure) = self.host.failure.lock().unwrap().take() {
            std::panic::resume_unwind(failure);
        }
        // Finished late, as the contract asks (after the cancel: allowed and ignored).
        let abandoned = std::mem::take(&mut self.abandoned);
        for c in abandoned.tools {
            answer_tool(c, 0);
        }
        for (c, split) in abandoned.compressions {
            answer_compression(c, split, 0);
        }
    }

    fn answer_everything(&self) {
        let pending = std::mem::take(&mut *self.host.pending.lock().unwrap());
        for (c, stream) in pending.http {
            HttpAnswer { how: 0, pick: 7, cut: 0 }.give(c, stream);
        }
        for c in pending.tools {
            answer_tool(c, 0);
        }
        for (c, split) in pending.compressions {
            answer_compression(c, split, 0);
        }
        // A sub-agent's call that waits for approval waits while its run goes on: a person
        // answers it (nothing expires by itself).
        for r in self.runtimes.iter().filter(|r| !r.freed) {
            self.approve_sub_agent_calls(r.handle);
        }
    }
}

/// Creates a runtime with the host's tools as `flags` says (see `Sequence::new_runtime`).
fn create_runtime(userdata: *mut c_void, flags: u8) -> usize {
    let config = std::ffi::CString::new(CONFIG.replace("STREAM", if flags & 1 == 1 { "true" } else { "false" })).unwrap();
    let http = ArkAgentHttp { send: Some(host::send), cancel: Some(host::cancel), userdata };
    let (mut out, mut tools, mut workers) = (null_mut(), null_mut(), null_mut());
    // SAFETY: out pointers, NUL-terminated definitions and config, callbacks whose userdata
    // (the Host) outlives the runtime; the sets are freed once the runtime has its copies.
    unsafe {
        assert_eq!(arkagent_tools_new(&mut tools), ArkAgentResult::Ok);
        assert_eq!(arkagent_tools_register(tools, ECHO.as_ptr(), Some(host::echo), null_mut()), ArkAgentResult::Ok);
        assert_eq!(arkagent_tools_register(tools, HOLD.as_ptr(), Some(host::hold), userdata), ArkAgentResult::Ok);
        assert_eq!(arkagent_tools_register_with_approval(tools, ASK.as_ptr(), Some(host::echo), None, null_mut()), ArkAgentResult::Ok);
        if flags & 8 != 0 {
            assert_eq!(arkagent_workers_new(&mut workers), ArkAgentResult::Ok);
            assert_eq!(arkagent_workers_add(workers, c"helper".as_ptr(), c"Looks things up".as_ptr(), Some(host::factory), null_mut()), ArkAgentResult::Ok);
        }
        let code = if flags & 2 != 0 {
            let threshold = if flags & 4 != 0 { 0 } else { 64_000 };
            arkagent_runtime_new_with_compressor(config.as_ptr(), tools, workers, &http, Some(host::compress), userdata, threshold, &mut out)
        } else {
            arkagent_runtime_new(config.as_ptr(), tools, workers, &http, &mut out)
        };
        assert_eq!(code, ArkAgentResult::Ok);
    }
    arkagent_tools_free(tools);
    arkagent_workers_free(workers);
    out as usize
}

/// A blocking call's outcome: its run id is kept for rewinds.
fn keep_run_id(host: &Host, rt: usize, out: *mut c_char) {
    if out.is_null() {
        return;
    }
    let outcome: serde_json::Value = serde_json::from_str(&take_string(out)).expect("an outcome is JSON");
    if let Some(id) = outcome["run_id"].as_str() {
        host.run_ids.lock().unwrap().push((rt, id.to_owned()));
    }
}
