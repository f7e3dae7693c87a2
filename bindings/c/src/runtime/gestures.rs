//! CHAT-1, CHAT-2 on the C surface: rewind, regenerate, edit and resend, fork — each one
//! call, named by a run id (`RunOutcome.run_id`, every event's `run_id`).

use std::ffi::c_char;

use crate::boundary::boundary;
use crate::codes::ArkAgentResult;
use crate::strings::{opt_str_arg, str_arg, write_out_json, write_out_string};
use super::executor::{block_on, refuse_inside_callback};
use super::handle::{runtime_handle, ArkAgentRuntime};

/// CHAT-1: goes back to just before run `run_id` began — that run and every later one are
/// dropped (their messages, a turn of theirs waiting for approval) as one change, written
/// to the attached store first, in one transaction, on the calling thread: a kill leaves
/// the old session or the rewound one, never half of it. What the dropped turns spent
/// stays in `arkagent_runtime_total_usage` (its `"discarded"` part). The next request starts
/// with the bytes the provider already saw up to that point (its prompt cache still
/// serves them). Emits `session_rewound` (then `session_committed` with a store).
/// `*out_result_json` (if not NULL) gets a `RewindResult` (`include/JSON-SHAPES.md`: the
/// dropped run ids, the dropped input's text for an "edit" box, what was discarded); free
/// it with `arkagent_string_free`. Errors: `ARK_AGENT_RESULT_UNKNOWN_RUN` (no such run,
/// or an earlier rewind dropped it), `_RUN_COMPRESSED` (a compression archived its
/// input), `_INVALID_STATE` (an imported history marks the run inside a tool cycle),
/// `_RUN_IN_PROGRESS`, the store's codes; then nothing changed.
///
/// # Safety
/// `run_id` a NUL-terminated string; `out_result_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_rewind(runtime: *mut ArkAgentRuntime, run_id: *const c_char, out_result_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let run_id = unsafe { str_arg(run_id, "run_id") }?;
        let result = handle.runtime.rewind(run_id)?;
        if out_result_json.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out_result_json, &result) }
    })
}

/// CHAT-1: "regenerate this answer" — `arkagent_runtime_rewind` to run `run_id`, then a new
/// run (a new run id) of the same input, blocking the calling thread like
/// `arkagent_runtime_run`. `*out_outcome_json` (if not NULL) gets the new run's
/// `RunOutcome`. Errors: `_REENTRANT` from a library callback (checked first: nothing
/// changed), the rewind's (then no run starts), then a run's; when the run failed before
/// the model answered (the provider down), the session is put back as it was before the
/// call, in the store too (`session_committed`): nothing is lost and the call can be made
/// again.
///
/// # Safety
/// `run_id` a NUL-terminated string; `out_outcome_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_regenerate(runtime: *mut ArkAgentRuntime, run_id: *const c_char, out_outcome_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let run_id = unsafe { str_arg(run_id, "run_id") }?;
        refuse_inside_callback("arkagent_runtime_regenerate")?;
        let future = handle.runtime.start_regenerate_holding_slot(run_id)?;
        // SAFETY: forwarded contract.
        unsafe { rerun("arkagent_runtime_regenerate", future, out_outcome_json) }
    })
}

/// CHAT-1: "edit my message and send it again" — `arkagent_runtime_rewind` to run
/// `run_id`, then a new run of `input` in its place, blocking like `arkagent_runtime_run`.
/// `*out_outcome_json` (if not NULL) gets the new run's `RunOutcome`. Errors:
/// `_REENTRANT` from a library callback (checked first: nothing changed), the rewind's
/// (then no run starts), then a run's; when the run failed before the model answered, the
/// session is put back as it was before the call, like `arkagent_runtime_regenerate`.
///
/// # Safety
/// `run_id` and `input` NUL-terminated strings; `out_outcome_json` NULL or valid for one
/// write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_edit_and_resend(
    runtime: *mut ArkAgentRuntime,
    run_id: *const c_char,
    input: *const c_char,
    out_outcome_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let run_id = unsafe { str_arg(run_id, "run_id") }?;
        // SAFETY: forwarded contract.
        let input = unsafe { str_arg(input, "input") }?;
        refuse_inside_callback("arkagent_runtime_edit_and_resend")?;
        let future = handle.runtime.start_edit_and_resend_holding_slot(run_id, input)?;
        // SAFETY: forwarded contract.
        unsafe { rerun("arkagent_runtime_edit_and_resend", future, out_outcome_json) }
    })
}

/// A regenerate's or an edit's run, blocking; its outcome written to `out` (if not NULL).
///
/// # Safety
/// `out` NULL or valid for one write.
unsafe fn rerun(
    what: &str,
    future: impl std::future::Future<Output = (Result<arkagent::RunOutcome, arkagent::ArkAgentError>, arkagent::runtime::RunSlot)>,
    out: *mut *mut c_char,
) -> crate::codes::FfiResult<()> {
    let (outcome, _slot) = block_on(what, future)?;
    let outcome = outcome?;
    if out.is_null() {
        return Ok(());
    }
    // SAFETY: forwarded contract.
    unsafe { write_out_json(out, &outcome) }
}

/// CHAT-2: a new session `new_session_id` starting from this one through run
/// `through_run_id` (its answer included; NULL: the whole session, a turn waiting for
/// approval included): the messages, the episodes (copied), the run marks and the token
/// calibration; its usages start empty (what was spent stays this session's). With a store
/// attached the fork is written into it as a new session, in one transaction, on the
/// calling thread; a runtime attached to the store with `new_session_id` resumes it.
/// `*out_state_json` (if not NULL) gets the fork's state (what
/// `arkagent_runtime_import_state` takes; without a store, the only copy); free it with
/// `arkagent_string_free`. This session does not change. Errors: `_UNKNOWN_RUN`,
/// `_RUN_COMPRESSED`, `_SESSION_EXISTS` (the store has that session, or it is this
/// session's id), `_SESSION_LOCKED` (another runtime has that session open),
/// `_INVALID_CONFIG` (an empty id), `_RUN_IN_PROGRESS`, the store's codes.
///
/// # Safety
/// `new_session_id` a NUL-terminated string; `through_run_id` NULL or one;
/// `out_state_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_fork(
    runtime: *mut ArkAgentRuntime,
    new_session_id: *const c_char,
    through_run_id: *const c_char,
    out_state_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let new_session_id = unsafe { str_arg(new_session_id, "new_session_id") }?;
        // SAFETY: forwarded contract.
        let through = unsafe { opt_str_arg(through_run_id, "through_run_id") }?;
        let json = handle.runtime.fork(new_session_id, through)?;
        if out_state_json.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out_state_json, json) }
    })
}
