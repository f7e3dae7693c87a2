//! TOOL-1..TOOL-3 through the C ABI: a tool that asks for approval per call, the tool
//! set's policy callback, and the paused turn's answers and resume.

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::executor::{block_on, refuse_inside_callback};
use super::handle::{runtime_handle, write_runtime_json, ArkAgentRuntime, ArkAgentTools, ToolSet};
use crate::boundary::boundary;
use crate::callbacks::{register_host_tool_with, ArkAgentToolCallback, UserData};
use crate::codes::{ArkAgentResult, FfiResult, poisoned};
use crate::handles::{self, Kind};
use crate::strings::{opt_str_arg, str_arg, write_out_json};
use arkagent::tools::{ApprovalDecision, ApprovalPredicate, PolicyDecision, ToolPolicy};
use arkagent::ToolInvocation;

/// TOOL-3: what a policy callback decides for one tool call.
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentPolicy {
    /// No objection: the call runs, unless its tool asks for approval itself.
    Allow = 0,
    /// Refused: the model reads a `tool_denied` error result with the reason the callback
    /// wrote; nothing runs.
    Deny = 1,
    /// The call waits for a person, as if its tool required approval.
    Ask = 2,
}

/// TOOL-1: decides whether one call of the tool it was registered with waits for a
/// person's approval: return true to ask. `call_json` (`{"call_id","name","arguments":{…}}`)
/// is valid only during the call. Called on the thread running `arkagent_runtime_run` or
/// `arkagent_runtime_resume_run`, before the call would run; must return promptly.
pub type ArkAgentApprovalCallback = Option<unsafe extern "C" fn(userdata: *mut c_void, call_json: *const c_char) -> bool>;

/// TOOL-3: the app's check before every tool call (after the role's whitelist: a call its
/// role may not make never reaches it; never for a tool that does not exist). Returns an
/// `ArkAgentPolicy` value; any other value counts as `ARK_AGENT_POLICY_DENY`. On deny it
/// may write the reason the model reads into `reason`, NUL-terminated, at most
/// `reason_cap` bytes with the NUL (`reason` is valid only during the call; it starts
/// empty). `call_json` (`{"call_id","name","arguments":{…}}`) is valid only during the
/// call. Called on the thread running `arkagent_runtime_run` or
/// `arkagent_runtime_resume_run`; must return promptly (a person's answer belongs in
/// `ARK_AGENT_POLICY_ASK`).
pub type ArkAgentToolPolicyCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, call_json: *const c_char, reason: *mut c_char, reason_cap: usize) -> i32>;

/// The JSON a predicate or policy callback gets for `call`.
fn call_json(call: &ToolInvocation) -> CString {
    let json = serde_json::json!({"call_id": call.call_id, "name": call.name, "arguments": call.arguments}).to_string();
    CString::new(json).unwrap_or_default()
}

struct HostPredicate {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char) -> bool,
    userdata: UserData,
}

#[async_trait]
impl ApprovalPredicate for HostPredicate {
    async fn needs_approval(&self, call: &ToolInvocation) -> bool {
        let json = call_json(call);
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.get(), json.as_ptr()) }
    }
}

/// The longest reason a policy callback may write, NUL included.
const REASON_CAP: usize = 1024;

struct HostPolicy {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_char, usize) -> i32,
    userdata: UserData,
}

#[async_trait]
impl ToolPolicy for HostPolicy {
    async fn decide(&self, call: &ToolInvocation) -> PolicyDecision {
        let json = call_json(call);
        let mut reason = vec![0u8; REASON_CAP];
        // SAFETY: the host registered this callback and promised userdata stays valid;
        // `reason` is writable for REASON_CAP bytes.
        let decision = unsafe { (self.callback)(self.userdata.get(), json.as_ptr(), reason.as_mut_ptr().cast(), REASON_CAP) };
        // Whatever the host wrote, the text ends at the first NUL or the buffer's end.
        let end = reason.iter().position(|b| *b == 0).unwrap_or(REASON_CAP);
        let reason = String::from_utf8_lossy(&reason[..end]).into_owned();
        match decision {
            0 => PolicyDecision::Allow,
            2 => PolicyDecision::Ask,
            1 => PolicyDecision::Deny { reason: if reason.is_empty() { "the app's policy denied this call".into() } else { reason } },
            _ => PolicyDecision::Deny { reason: "the app's policy gave no valid decision".into() },
        }
    }
}

/// TOOL-1: [`arkagent_tools_register`] with a per-call approval callback: a call waits for a
/// person when the definition's `"requires_approval"` is true or `approval` returns true
/// (`approval` NULL: the definition alone decides). `userdata` is passed to both callbacks
/// and must stay valid until every runtime created with these tools is freed. Errors as
/// `arkagent_tools_register`.
///
/// # Safety
/// `definition_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tools_register_with_approval(
    tools: *mut ArkAgentTools,
    definition_json: *const c_char,
    callback: ArkAgentToolCallback,
    approval: ArkAgentApprovalCallback,
    userdata: *mut c_void,
) -> ArkAgentResult {
    boundary(|| {
        let set: Arc<Mutex<ToolSet>> = handles::get(Kind::Tools, tools)?;
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(definition_json, "definition_json") }?;
        let predicate = approval.map(|callback| Arc::new(HostPredicate { callback, userdata: UserData(userdata) }) as Arc<dyn ApprovalPredicate>);
        let mut set = set.lock().map_err(|_| poisoned())?;
        register_host_tool_with(&mut set.registry, json, callback, userdata, predicate)
    })
}

/// TOOL-3: sets the policy callback of runtimes created with these tools from now on
/// (`callback` NULL removes it). A runtime keeps the policy it was created with; its
/// sub-agents inherit it. `userdata` is passed to `callback` and must stay valid until
/// every runtime created with it is freed. Errors: `ARK_AGENT_RESULT_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn arkagent_tools_set_policy(tools: *mut ArkAgentTools, callback: ArkAgentToolPolicyCallback, userdata: *mut c_void) -> ArkAgentResult {
    boundary(|| {
        let set: Arc<Mutex<ToolSet>> = handles::get(Kind::Tools, tools)?;
        let policy = callback.map(|callback| Arc::new(HostPolicy { callback, userdata: UserData(userdata) }) as Arc<dyn ToolPolicy>);
        set.lock().map_err(|_| poisoned())?.policy = policy;
        Ok(())
    })
}

/// TOOL-1: writes the calls waiting for an answer to `*out_json`:
/// `[{"call_id","name","arguments","path"}]` (`arguments` the JSON text the model made) —
/// the paused turn's (`path` `[]`; also after a restart, to show the same dialogs again) and,
/// while a run is going, its sub-agents' calls waiting in flight (`path` the session ids
/// from the runtime's child down to the sub-agent that made the call; `call_id`
/// `<that session id>/<its call id>`; such a call is not stored: it ends with its
/// delegation). `[]` when nothing waits. Any thread, also while a run is going (e.g. from
/// the event callback of a `sub_agent` event carrying `approval_requested`). Free with
/// `arkagent_string_free`.
///
/// # Safety
/// `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_pending_approvals(runtime: *const ArkAgentRuntime, out_json: *mut *mut c_char) -> ArkAgentResult {
    // SAFETY: forwarded contract.
    boundary(|| unsafe { write_runtime_json(runtime, out_json, arkagent::AgentRuntime::pending_approvals) })
}

fn answer(runtime: *mut ArkAgentRuntime, call_id: &str, decision: ApprovalDecision) -> FfiResult<()> {
    let handle = runtime_handle(runtime)?;
    handle.runtime.answer_approval(call_id, decision)?;
    Ok(())
}

/// TOOL-1: approves one waiting call. A sub-agent's call (a `call_id` of
/// `arkagent_runtime_pending_approvals` with a `path`) is answered at once, while the run
/// is going — from any thread, the event callback included — and its sub-agent goes on;
/// answered again, or after its sub-agent ended, it gives `_APPROVAL_ALREADY_ANSWERED` or
/// `_APPROVAL_NOT_PENDING` (never `_RUN_IN_PROGRESS`: the call will not wait again).
/// A call of the paused turn runs when the run resumes
/// (`arkagent_runtime_resume_run`) — with `edited_arguments_json` instead of the model's
/// arguments when not NULL (a JSON object with every property the tool's schema requires;
/// the model then reads, before the tool's answer, a line saying the person changed the
/// arguments and what ran); that answer is committed to the session store before this
/// returns: a kill after it loses nothing. Nothing expires by itself. Errors (nothing
/// changed):
/// `ARK_AGENT_RESULT_APPROVAL_NOT_PENDING`, `_APPROVAL_UNKNOWN_CALL`,
/// `_APPROVAL_ALREADY_ANSWERED`, `_TOOL_ARGUMENTS_INVALID`, `_RUN_IN_PROGRESS`,
/// `_NULL_ARGUMENT`, `_INVALID_UTF8`, the store's codes.
///
/// # Safety
/// `call_id` a NUL-terminated string; `edited_arguments_json` NULL or one.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_approve(
    runtime: *mut ArkAgentRuntime,
    call_id: *const c_char,
    edited_arguments_json: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let call_id = unsafe { str_arg(call_id, "call_id") }?;
        // SAFETY: forwarded contract.
        let edited = unsafe { opt_str_arg(edited_arguments_json, "edited_arguments_json") }?;
        let decision = match edited {
            None => ApprovalDecision::Approve,
            Some(arguments) => ApprovalDecision::ApproveWithArguments { arguments: arguments.to_owned() },
        };
        answer(runtime, call_id, decision)
    })
}

/// TOOL-1: rejects one waiting call of the paused turn: it never runs; the model reads a
/// `tool_rejected` error result with `reason` (NULL or empty: "the user rejected this
/// call"). Committed like [`arkagent_runtime_approve`]; the same errors except
/// `_TOOL_ARGUMENTS_INVALID`.
///
/// # Safety
/// `call_id` a NUL-terminated string; `reason` NULL or one.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_reject(runtime: *mut ArkAgentRuntime, call_id: *const c_char, reason: *const c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let call_id = unsafe { str_arg(call_id, "call_id") }?;
        // SAFETY: forwarded contract.
        let reason = unsafe { opt_str_arg(reason, "reason") }?.unwrap_or_default().to_owned();
        answer(runtime, call_id, ApprovalDecision::Reject { reason })
    })
}

/// TOOL-1: resumes the paused run once every waiting call is answered, blocking the
/// calling thread like [`arkagent_runtime_run`](crate::arkagent_runtime_run): the approved
/// calls run (each at most once: a call a kill interrupted is answered
/// `tool_interrupted`, never run again), the model gets every result in the calls' order,
/// and the run goes on (it may pause again). `*out_outcome_json` (if not NULL) gets the
/// `RunOutcome`. Errors: `ARK_AGENT_RESULT_REENTRANT` from a library callback (checked
/// first: nothing changed), `_APPROVAL_NOT_PENDING`, `_APPROVAL_PENDING` (a call still
/// waits), `_RUN_IN_PROGRESS`, then a run's.
///
/// # Safety
/// `out_outcome_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_resume_run(runtime: *mut ArkAgentRuntime, out_outcome_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        refuse_inside_callback("arkagent_runtime_resume_run")?;
        let future = handle.runtime.start_resume_run()?;
        let outcome = block_on("arkagent_runtime_resume_run", future)??;
        if out_outcome_json.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out_outcome_json, &outcome) }
    })
}

/// TOOL-1: closes the paused turn without resuming it — the person stopped: every call that
/// did not run is answered as on a cancel (`cancelled`; `tool_rejected` and
/// `tool_interrupted` as decided), the calls that ran keep their results, the turn joins
/// the history paired and is committed; no model call. `*out_closed` (if not NULL) is true
/// when a turn was closed, false when none waited. Answering afterwards gives
/// `ARK_AGENT_RESULT_APPROVAL_NOT_PENDING`. Errors: `_RUN_IN_PROGRESS`, the store's codes
/// (then the turn is closed in memory and the next commit writes it).
///
/// # Safety
/// `out_closed` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_cancel_approvals(runtime: *mut ArkAgentRuntime, out_closed: *mut bool) -> ArkAgentResult {
    boundary(|| {
        let closed = runtime_handle(runtime)?.runtime.cancel_approvals()?;
        if !out_closed.is_null() {
            // SAFETY: forwarded contract.
            unsafe { *out_closed = closed };
        }
        Ok(())
    })
}
