//! The steps of the call-sequence check beyond runs and answers: blocking calls of every
//! kind, the session store, approvals, sub-agents, rewinds and forks — and the stored
//! session's oracle at the end.

use std::ffi::{c_char, CString};
use std::ptr::null_mut;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::*;

use super::answers::PARTS;
use super::oracles::{export, json_out, never_broken, run_code, store_code};
use super::{create_runtime, keep_run_id, Sequence, Store, STORES};

use ArkAgentResult as R;

impl Sequence<'_> {
    /// Starts a blocking call on another thread (of the pool: threads are reused); `kind` picks which.
    pub(super) fn start(&mut self, rt: usize, freed: bool, kind: u8) {
        let host = Arc::clone(&self.host);
        let run_id = self.run_id_of(rt, kind);
        self.spawn(move || {
            let r = rt as *mut ArkAgentRuntime;
            let mut out: *mut c_char = null_mut();
            // SAFETY: a handle the library gave (freed: it must be refused); NUL-terminated
            // inputs; out pointers.
            let code = unsafe {
                match kind % 8 {
                    0 | 1 => arkagent_runtime_run(r, c"what is the weather?".as_ptr(), &mut out),
                    2 => arkagent_runtime_run_parts(r, PARTS.as_ptr(), &mut out),
                    3 => arkagent_runtime_resume_run(r, &mut out),
                    4 => arkagent_runtime_regenerate(r, run_id.as_ptr(), &mut out),
                    5 => arkagent_runtime_edit_and_resend(r, run_id.as_ptr(), c"and tomorrow?".as_ptr(), &mut out),
                    6 => arkagent_runtime_run_decomposed(r, c"[{\"assignee\":\"helper\",\"task_description\":\"a\"},{\"assignee\":\"clone\",\"task_description\":\"b\"}]".as_ptr(), 2, &mut out),
                    _ => arkagent_runtime_compress_now(r, &mut out),
                }
            };
            never_broken(code, "a blocking call");
            assert!(run_code(code), "blocking call {} returned {code:?}", kind % 8);
            assert!(!freed || code == R::InvalidHandle, "a freed runtime ran: {code:?}");
            if code != R::Ok {
                assert!(out.is_null(), "a failed call wrote its outcome");
            } else if kind % 8 < 6 {
                keep_run_id(&host, rt, out);
            } else if !out.is_null() {
                super::take_string(out);
            }
        });
    }

    /// A run id of `rt` (one it returned, else an unknown one).
    fn run_id_of(&self, rt: usize, kind: u8) -> CString {
        let ids = self.host.run_ids.lock().unwrap();
        let mine: Vec<_> = ids.iter().filter(|(r, _)| *r == rt).collect();
        let id = if mine.is_empty() || kind & 0x80 != 0 { "run-unknown".to_owned() } else { mine[usize::from(kind >> 3) % mine.len()].1.clone() };
        CString::new(id).unwrap()
    }

    /// Opens the store, attaches a session (one another runtime may hold), lists, deletes
    /// a session, or frees the store (runtimes keep it open).
    pub(super) fn store_step(&mut self) {
        let how = self.byte().unwrap_or(0);
        self.take_event_attachments();
        if self.store.is_none() {
            let path = std::env::temp_dir().join(format!("arkagent-fuzz-{}-{}.db", std::process::id(), STORES.fetch_add(1, Ordering::Relaxed)));
            let handle = open_store(&path);
            self.host.store.store(handle, Ordering::SeqCst);
            self.store = Some(Store { handle, path, freed: false });
        }
        let store = self.store.as_ref().map(|s| (s.handle, s.freed)).unwrap();
        match how % 4 {
            0 | 1 => {
                let Some((rt, freed)) = self.pick() else { return };
                let session = CString::new(format!("s{}", how >> 6)).unwrap();
                // SAFETY: handles the library gave (either may be freed: refused), a NUL-terminated id.
                let code = unsafe { arkagent_runtime_attach_store(rt as *mut ArkAgentRuntime, store.0 as *mut ArkAgentStore, session.as_ptr()) };
                never_broken(code, "attach");
                assert!(matches!(code, R::Ok | R::SessionLocked | R::RunInProgress | R::InvalidConfig | R::InvalidHandle) || store_code(code), "attach: {code:?}");
                assert!(!(freed || store.1) || code == R::InvalidHandle, "a freed handle attached: {code:?}");
                if code == R::Ok {
                    self.runtimes.iter_mut().find(|r| r.handle == rt).unwrap().session = Some(session.into_string().unwrap());
                }
            }
            2 => {
                // SAFETY: a handle the library gave, an out pointer.
                let listed = json_out("store_list", |out| unsafe { arkagent_store_list(store.0 as *mut ArkAgentStore, out) });
                assert!(if store.1 { listed == Err(R::InvalidHandle) } else { listed.is_ok_and(|l| l.is_array()) }, "store_list");
                let mut deleted = false;
                // SAFETY: as above, a NUL-terminated id, an out pointer.
                let code = unsafe { arkagent_store_delete(store.0 as *mut ArkAgentStore, c"s1".as_ptr(), &mut deleted) };
                assert!(matches!(code, R::Ok | R::SessionLocked | R::InvalidHandle) || store_code(code), "store_delete: {code:?}");
                if code == R::Ok && deleted {
                    for r in self.runtimes.iter_mut().filter(|r| r.session.as_deref() == Some("s1")) {
                        r.session = None;
                    }
                }
            }
            _ => {
                arkagent_store_free(store.0 as *mut ArkAgentStore);
                self.store.as_mut().unwrap().freed = true;
            }
        }
    }

    /// A runtime of the pool and the JSON `read` writes for it; `None` when the pool is
    /// empty or the runtime was freed (then `read` must refuse it: `INVALID_HANDLE`).
    fn live_json(&mut self, what: &str, read: impl FnOnce(*mut ArkAgentRuntime, *mut *mut c_char) -> R) -> Option<(*mut ArkAgentRuntime, serde_json::Value)> {
        let (rt, freed) = self.pick()?;
        let r = rt as *mut ArkAgentRuntime;
        let value = json_out(what, |out| read(r, out));
        if freed {
            assert_eq!(value.err(), Some(R::InvalidHandle), "{what} of a freed runtime");
            return None;
        }
        Some((r, value.unwrap_or_else(|code| panic!("{what} of a live runtime: {code:?}"))))
    }

    /// Answers the first waiting approval (approve, approve with edited arguments, reject,
    /// or an unknown call) or closes the paused turn.
    pub(super) fn approval_step(&mut self) {
        let how = self.byte().unwrap_or(0);
        // SAFETY: a handle the library gave, an out pointer.
        let Some((r, waiting)) = self.live_json("pending_approvals", |r, out| unsafe { arkagent_runtime_pending_approvals(r, out) }) else { return };
        let first = waiting.as_array().and_then(|w| w.first()).and_then(|c| c["call_id"].as_str()).unwrap_or("call-unknown");
        let call = CString::new(if how & 0x80 != 0 { "call-unknown" } else { first }).unwrap();
        let mut closed = false;
        // SAFETY: a live handle, NUL-terminated ids and arguments, out pointers.
        let code = unsafe {
            match how % 4 {
                0 => arkagent_runtime_approve(r, call.as_ptr(), null_mut()),
                1 => arkagent_runtime_approve(r, call.as_ptr(), c"{\"edited\":true}".as_ptr()),
                2 => arkagent_runtime_reject(r, call.as_ptr(), c"not now".as_ptr()),
                _ => arkagent_runtime_cancel_approvals(r, &mut closed),
            }
        };
        never_broken(code, "an approval answer");
        assert!(
            matches!(code, R::Ok | R::ApprovalNotPending | R::ApprovalUnknownCall | R::ApprovalAlreadyAnswered | R::ToolArgumentsInvalid | R::RunInProgress | R::InvalidHandle)
                || store_code(code),
            "an approval answer ({}): {code:?}",
            how % 4
        );
    }

    /// Approves every sub-agent call of `rt` waiting for approval (those with a `path`).
    pub(super) fn approve_sub_agent_calls(&self, rt: usize) {
        let r = rt as *mut ArkAgentRuntime;
        // SAFETY: a live handle, an out pointer.
        let waiting = json_out("pending_approvals", |out| unsafe { arkagent_runtime_pending_approvals(r, out) }).expect("pending approvals");
        for call in waiting.as_array().into_iter().flatten().filter(|c| c["path"].as_array().is_some_and(|p| !p.is_empty())) {
            let id = CString::new(call["call_id"].as_str().unwrap()).unwrap();
            // SAFETY: a live handle, a NUL-terminated id.
            let code = unsafe { arkagent_runtime_approve(r, id.as_ptr(), null_mut()) };
            assert!(matches!(code, R::Ok | R::ApprovalNotPending | R::ApprovalUnknownCall | R::ApprovalAlreadyAnswered), "a sub-agent's approval: {code:?}");
        }
    }

    /// Force-completes the first running sub-agent, closes them all, or cleans them up.
    pub(super) fn sub_agent_step(&mut self) {
        let how = self.byte().unwrap_or(0);
        // SAFETY: a handle the library gave, an out pointer.
        let Some((r, agents)) = self.live_json("sub_agents", |r, out| unsafe { arkagent_runtime_sub_agents(r, out) }) else { return };
        let id = agents["active"].as_array().and_then(|a| a.first()).and_then(|a| a["id"].as_str()).unwrap_or("child-unknown");
        let id = CString::new(id).unwrap();
        let (mut found, mut count) = (0i32, 0usize);
        // SAFETY: a live handle, NUL-terminated strings, out pointers.
        let code = unsafe {
            match how % 3 {
                0 => arkagent_runtime_force_complete_sub_agent(r, id.as_ptr(), c"the user left".as_ptr(), &mut found),
                1 => arkagent_runtime_close_sub_agents(r, &mut count),
                _ => arkagent_runtime_cleanup_sub_agents(r, 0, &mut count),
            }
        };
        assert_eq!(code, R::Ok, "a sub-agent call ({}) on a live runtime", how % 3);
    }

    /// Rewinds to a run, or forks the session (through a run or whole).
    pub(super) fn rewind_step(&mut self) {
        let how = self.byte().unwrap_or(0);
        let Some((rt, freed)) = self.pick() else { return };
        let run_id = self.run_id_of(rt, how);
        let fork_id = CString::new(format!("fork-{}", STORES.fetch_add(1, Ordering::Relaxed))).unwrap();
        let r = rt as *mut ArkAgentRuntime;
        // SAFETY: a handle the library gave (freed: refused), NUL-terminated ids, out pointers.
        let result = json_out("rewind or fork", |out| unsafe {
            match how % 3 {
                0 => arkagent_runtime_rewind(r, run_id.as_ptr(), out),
                1 => arkagent_runtime_fork(r, fork_id.as_ptr(), run_id.as_ptr(), out),
                _ => arkagent_runtime_fork(r, fork_id.as_ptr(), std::ptr::null(), out),
            }
        });
        match result {
            Err(code) => {
                assert!(matches!(code, R::UnknownRun | R::RunCompressed | R::SessionExists | R::RunInProgress | R::InvalidHandle) || store_code(code), "rewind/fork: {code:?}");
                assert!(!freed || code == R::InvalidHandle, "a freed runtime rewound: {code:?}");
            }
            Ok(value) if !how.is_multiple_of(3) => self.fork_imports(&value),
            Ok(_) => {}
        }
    }

    /// A fork's state imports into a fresh runtime with the same history.
    fn fork_imports(&mut self, state: &serde_json::Value) {
        let Some(fresh) = self.new_runtime(0) else { return };
        let json = CString::new(state.to_string()).unwrap();
        // SAFETY: a fresh idle runtime, NUL-terminated JSON.
        let code = unsafe { arkagent_runtime_import_state(fresh as *mut ArkAgentRuntime, json.as_ptr()) };
        assert_eq!(code, R::Ok, "a fork imports ({}): {state}", super::oracles::last_error());
        assert_eq!(export(fresh)["history"], state["history"], "a fork imports unchanged");
    }

    /// The runtime `i` (idle, every call answered) is freed; when it had a session in the
    /// store, a new runtime attached to that session resumes the same history.
    pub(super) fn stored_session_resumes(&mut self, i: usize) {
        let (handle, session) = (self.runtimes[i].handle, self.runtimes[i].session.clone());
        let Some((session, path)) = session.zip(self.store.as_ref().map(|s| s.path.clone())) else {
            arkagent_runtime_free(handle as *mut ArkAgentRuntime);
            return;
        };
        let before = export(handle);
        arkagent_runtime_free(handle as *mut ArkAgentRuntime);
        let store = open_store(&path);
        let resumed = create_runtime(self.userdata(), u8::from(self.runtimes[i].stream));
        let session = CString::new(session).unwrap();
        // SAFETY: live handles, a NUL-terminated id.
        let code = unsafe { arkagent_runtime_attach_store(resumed as *mut ArkAgentRuntime, store as *mut ArkAgentStore, session.as_ptr()) };
        assert_eq!(code, R::Ok, "a freed runtime's session can be attached again");
        assert_eq!(export(resumed)["history"], before["history"], "a stored session resumes as it was left");
        arkagent_runtime_free(resumed as *mut ArkAgentRuntime);
        arkagent_store_free(store as *mut ArkAgentStore);
    }

    pub(super) fn close_store(&mut self) {
        if let Some(store) = self.store.take() {
            arkagent_store_free(store.handle as *mut ArkAgentStore);
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", store.path.display()));
            }
            // The store's directory of session lock files beside it.
            let _ = std::fs::remove_dir_all(format!("{}.locks", store.path.display()));
        }
    }
}

fn open_store(path: &std::path::Path) -> usize {
    let c = CString::new(path.to_str().unwrap()).unwrap();
    let mut out = null_mut();
    // SAFETY: a NUL-terminated path, an out pointer.
    assert_eq!(unsafe { arkagent_store_open(c.as_ptr(), &mut out) }, R::Ok, "a store opens in the temporary directory");
    out as usize
}
