//! The oracles of the call-sequence check: the codes each call's header documents, pairing
//! (CORE-2), totals that equal the sum of the usages (SUB-6), and a stored session that
//! resumes as it was left.

use std::ffi::{c_char, CStr, CString};
use std::ptr::null_mut;

use crate::*;

use ArkAgentResult as R;

/// What a blocking run may return (`arkagent_runtime_run`, `_run_parts`, `_resume_run`,
/// `_regenerate`, `_edit_and_resend`, `_run_decomposed`, `_compress_now`): a run's codes,
/// the approval, rewind, image and store codes their docs name. Never `PANIC`/`INTERNAL`.
pub(super) fn run_code(code: R) -> bool {
    matches!(
        code,
        R::Ok | R::RunInProgress
            | R::InvalidHandle
            | R::Cancelled
            | R::LlmServer
            | R::LlmMalformedResponse
            | R::LlmTransport
            | R::LlmTimeout
            | R::LlmBadRequest
            | R::LlmContextOverflow
            | R::LlmRateLimited
            | R::ApprovalPending
            | R::ApprovalNotPending
            | R::UnknownRun
            | R::RunCompressed
            | R::DelegationNotConfigured
            | R::ImageInvalid
            | R::ImageUnsupportedType
    ) || store_code(code)
}

/// The store's codes (`arkagent_store_open`'s list, and `SESSION_LOCKED`).
pub(super) fn store_code(code: R) -> bool {
    matches!(code, R::SessionLocked | R::StoreCorrupt | R::StoreForeign | R::StoreNewerSchema | R::StoreFull | R::StoreReadOnly | R::StoreIo)
}

pub(super) fn never_broken(code: R, what: &str) {
    assert!(!matches!(code, R::Panic | R::Internal), "{what}: {code:?}");
}

/// Reads and frees a string the library wrote.
pub(super) fn take_string(out: *mut c_char) -> String {
    assert!(!out.is_null(), "an Ok call wrote its string");
    // SAFETY: the library's NUL-terminated string, freed once right after the copy.
    let s = unsafe { CStr::from_ptr(out) }.to_str().expect("the library writes UTF-8").to_owned();
    // SAFETY: as above.
    unsafe { arkagent_string_free(out) };
    s
}

/// Calls `f` with an out pointer; the JSON it wrote when it returned Ok.
pub(super) fn json_out(what: &str, f: impl FnOnce(*mut *mut c_char) -> R) -> Result<serde_json::Value, R> {
    let mut out: *mut c_char = null_mut();
    let code = f(&mut out);
    never_broken(code, what);
    if code != R::Ok {
        return Err(code);
    }
    Ok(serde_json::from_str(&take_string(out)).unwrap_or_else(|e| panic!("{what} writes JSON: {e}")))
}

pub(super) fn is_paired(messages_json: &CStr) -> bool {
    let mut paired = 0;
    // SAFETY: a NUL-terminated JSON array, an out pointer.
    assert_eq!(unsafe { arkagent_tool_calls_paired(messages_json.as_ptr(), &mut paired) }, R::Ok);
    paired == 1
}

pub(super) fn export(rt: usize) -> serde_json::Value {
    // SAFETY: a live handle, an out pointer.
    json_out("export", |out| unsafe { arkagent_runtime_export_state(rt as *mut ArkAgentRuntime, out) }).expect("a live runtime exports")
}

/// CORE-2: a runtime whose blocking calls all returned has a paired committed history
/// (its export's); its messages are that history, followed by the paused turn's model
/// answer while a turn waits for approval (TOOL-1: wherever it paused — in this process,
/// before an import or an attach).
pub(super) fn paired(rt: usize) {
    let state = export(rt);
    let history = &state["history"]["messages"];
    assert!(is_paired(&CString::new(history.to_string()).unwrap()), "a finished runtime's history is paired: {state}");
    // SAFETY: a live handle, an out pointer.
    let messages = json_out("messages", |out| unsafe { arkagent_runtime_messages(rt as *mut ArkAgentRuntime, out) }).expect("messages");
    let mut expected = history.as_array().unwrap().clone();
    if let Some(turn) = state.get("pending_turn").filter(|t| !t.is_null()) {
        expected.push(turn["assistant"].clone());
    }
    assert_eq!(messages, serde_json::Value::Array(expected), "messages are the committed history (and a paused answer): {state}");
}

const SUMMED: [&str; 7] = ["prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens", "reasoning_tokens", "call_count", "priced_call_count"];

/// SUB-6: `"parent"` is exactly the sum of the usages, `"total"` exactly parent + children.
pub(super) fn totals_are_sums(rt: usize) {
    // SAFETY: a live handle, out pointers.
    let totals = json_out("total_usage", |out| unsafe { arkagent_runtime_total_usage(rt as *mut ArkAgentRuntime, out) }).expect("totals");
    // SAFETY: as above.
    let usages = json_out("usages", |out| unsafe { arkagent_runtime_usages(rt as *mut ArkAgentRuntime, out) }).expect("usages");
    let usages = CString::new(usages.to_string()).unwrap();
    // SAFETY: a NUL-terminated JSON array, an out pointer.
    let summed = json_out("child_usage_summary", |out| unsafe { arkagent_child_usage_summary(usages.as_ptr(), out) }).expect("a summary of usages");
    assert_eq!(totals["parent"], summed, "the parent's totals are the sum of its usages");
    for key in SUMMED {
        let (p, c, t) = (&totals["parent"][key], &totals["children"][key], &totals["total"][key]);
        assert_eq!(p.as_u64().unwrap_or(0) + c.as_u64().unwrap_or(0), t.as_u64().unwrap_or(0), "total.{key} = parent + children: {totals}");
    }
}

/// This thread's last error message.
pub(super) fn last_error() -> String {
    let mut buf = vec![0u8; 1024];
    // SAFETY: `buf` is writable for its length.
    let n = unsafe { arkagent_last_error_message(buf.as_mut_ptr().cast(), buf.len()) };
    buf.truncate(n.min(1023));
    String::from_utf8_lossy(&buf).into_owned()
}

/// FFI-5: NULL where a handle is required gives `NULL_ARGUMENT`, and nothing else happens.
pub(super) fn null_handles_refused() {
    let mut out: *mut c_char = null_mut();
    assert_eq!(arkagent_runtime_cancel(null_mut()), R::NullArgument);
    // SAFETY: NULL handles, valid out pointers and strings: each call must refuse the handle.
    unsafe {
        assert_eq!(arkagent_runtime_export_state(null_mut(), &mut out), R::NullArgument);
        assert_eq!(arkagent_runtime_pending_approvals(std::ptr::null(), &mut out), R::NullArgument);
        assert_eq!(arkagent_store_list(null_mut(), &mut out), R::NullArgument);
        assert_eq!(arkagent_http_complete(null_mut(), 200, std::ptr::null(), std::ptr::null(), 0), R::NullArgument);
        assert_eq!(arkagent_tool_complete(null_mut(), c"x".as_ptr(), 0), R::NullArgument);
        assert_eq!(arkagent_compress_complete(null_mut(), c"{}".as_ptr()), R::NullArgument);
    }
    assert!(out.is_null(), "a refused call wrote its out pointer");
}
