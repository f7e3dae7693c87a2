//! Exporting, importing and reading a runtime's state; event subscriptions.

use std::ffi::{c_char, c_void};
use std::sync::Arc;

use crate::boundary::boundary;
use crate::callbacks::{ArkAgentEventCallback, HostObserver, UserData};
use crate::codes::{ArkAgentResult, FfiError};
use crate::strings::{null, out_arg, str_arg, write_out_string};
use super::handle::{runtime_handle, write_runtime_json, ArkAgentRuntime};

/// Writes the whole state (history, episodic memories, usages, session id) as JSON to
/// `*out`; free it with `arkagent_string_free`. Holds no API key. Callable at any moment
/// (from an event or tool callback while a run is in flight) and
/// always accepted by `arkagent_runtime_import_state`: while a turn's tools are running it
/// holds the last consistent history, without that open turn.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_export_state(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let json = runtime_handle(runtime)?.runtime.export_state()?;
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out, json) }
    })
}

/// Replaces the state with an exported one (validated: `ARK_AGENT_RESULT_INVALID_JSON`,
/// `ARK_AGENT_RESULT_INVALID_STATE`; `ARK_AGENT_RESULT_RUN_IN_PROGRESS` during a run; the
/// old state is kept on error). With a store attached the import is written to it first,
/// replacing the stored session, on the calling thread; when that write fails
/// (`ARK_AGENT_RESULT_STORE_FULL`, `_STORE_READ_ONLY`, `_STORE_IO`, …) the old state is
/// kept, in memory and in the store. A photo of the imported history out of this model's
/// bounds gives its image code (`ARK_AGENT_RESULT_IMAGE_TOO_LARGE`, `_TOO_MANY_IMAGES`, …)
/// and changes nothing.
///
/// # Safety
/// `state_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_import_state(runtime: *mut ArkAgentRuntime, state_json: *const c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(state_json, "state_json") }?;
        Ok(handle.runtime.import_state(json)?)
    })
}

/// Writes the messages as a JSON array to `*out`; free with `arkagent_string_free`. They
/// are the live history: while a turn's tools run or the turn waits for approval it ends
/// with that turn's model answer (mid-turn, with the results so far), which
/// `arkagent_runtime_export_state` — the committed history, always paired — leaves out
/// until the turn is paired.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_messages(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { write_runtime_json(runtime, out, |rt| rt.messages()) }
    })
}

/// Writes the recorded usages as a JSON array to `*out`; free with `arkagent_string_free`.
/// COST-2: a usage made with a priced model has `"cost":{"currency","nanos"}` (billionths
/// of the currency unit, rounded once per call), priced by the model that made the call
/// (a summarizer on its own model by its own price); without a price there is no
/// `"cost"`.
/// Each usage is a `ModelUsage` (its keys in `include/JSON-SHAPES.md`, generated from the
/// Rust type). One per model call made: a call whose provider reported no
/// usage is a zero usage with `"source":"unreported"`, so `"call_count"` summed from them
/// counts it. Usages written by earlier versions (a `"raw"` map) are read into these fields
/// by `arkagent_runtime_import_state` and `arkagent_child_usage_summary`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_usages(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { write_runtime_json(runtime, out, |rt| rt.usages()) }
    })
}

/// Writes the session id to `*out`; free with `arkagent_string_free`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_session_id(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let id = runtime_handle(runtime)?.runtime.session_id();
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out, id) }
    })
}

/// Subscribes `callback` to events (see [`ArkAgentEventCallback`]); `*out_id` gets the
/// subscription id. `userdata` must stay valid until unsubscribed or the runtime is freed
/// and, either way, every blocking call of this runtime running then has returned (as for
/// [`ArkAgentHttp`]): an event already on its way on another thread may still arrive — a run
/// cancelled by [`arkagent_runtime_free`] still reports its `run_finished`. Events of
/// blocking calls started after the unsubscribe never reach it.
///
/// # Safety
/// `out_id` valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_subscribe(
    runtime: *mut ArkAgentRuntime,
    callback: ArkAgentEventCallback,
    userdata: *mut c_void,
    out_id: *mut u64,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let callback = callback.ok_or_else(|| null("callback"))?;
        if out_id.is_null() {
            return Err(null("out_id"));
        }
        let subscription = handle.runtime.subscribe(Arc::new(HostObserver { callback, userdata: UserData(userdata) }));
        let id = subscription.id();
        handle
            .subscriptions
            .lock()
            .map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?
            .insert(id, subscription);
        // SAFETY: checked non-NULL.
        unsafe { *out_id = id };
        Ok(())
    })
}

/// Stops a subscription (see [`arkagent_runtime_subscribe`] for events already on their way).
/// Unknown ids give `ARK_AGENT_RESULT_INVALID_HANDLE`.
#[no_mangle]
pub extern "C" fn arkagent_runtime_unsubscribe(runtime: *mut ArkAgentRuntime, subscription_id: u64) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let removed = handle.subscriptions.lock().ok().and_then(|mut s| s.remove(&subscription_id));
        match removed {
            Some(subscription) => {
                subscription.unsubscribe();
                Ok(())
            }
            None => Err(FfiError::new(ArkAgentResult::InvalidHandle, "unknown subscription id")),
        }
    })
}

