//! The calls that run the model (a turn, a compression, decomposed tasks), cancel it, and
//! read what runs produced (episodes, usage, sub-agents, memory).

use std::ffi::c_char;

use crate::boundary::boundary;
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use crate::strings::{out_arg, str_arg, write_out_json, write_out_string};
use super::executor::block_on;
use super::handle::{runtime_handle, write_runtime_json, ArkAgentRuntime};

/// Runs one user turn to the end, blocking the calling thread; callbacks are invoked on
/// this thread. On success `*out_outcome_json` (if `out_outcome_json` is not NULL) gets
/// a `RunOutcome` (`include/JSON-SHAPES.md`), its `"usage"` what the run used — its own
/// model calls (compression included) and the children it delegated to (COST-1, COST-2).
/// Must not be called from inside a library callback (`ARK_AGENT_RESULT_REENTRANT`).
/// When it fails with a model error and the model had produced nothing in this run (its
/// first call failed), the input is taken out again: the history is as before the run (a
/// compression committed meanwhile stays), so a retry never sends the input twice and an
/// input too large for the model cannot wedge the session. After a later call failed, the
/// history ends with the last tool results, paired. The API key never enters the history
/// or an event, whoever echoes it (input, model, tool): it becomes `<redacted>`.
///
/// # Safety
/// `input` a NUL-terminated string; `out_outcome_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_run(
    runtime: *mut ArkAgentRuntime,
    input: *const c_char,
    out_outcome_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let input = unsafe { str_arg(input, "input") }?;
        let outcome = block_on("arkagent_runtime_run", handle.runtime.run(input))??;
        if out_outcome_json.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out_outcome_json, &outcome) }
    })
}

/// Runs one compression attempt now (the compressor's usual checks apply), blocking the
/// calling thread like [`arkagent_runtime_run`]. `*out_result_json` (if not NULL) gets
/// a `CompressResult` (`include/JSON-SHAPES.md`). On `failed` or `skipped` the state is
/// unchanged.
/// Without `"compression"` in the config the outcome is `skipped`.
///
/// # Safety
/// `out_result_json` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_compress_now(runtime: *mut ArkAgentRuntime, out_result_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let result = block_on("arkagent_runtime_compress_now", handle.runtime.compress_now())??;
        if out_result_json.is_null() {
            return Ok(());
        }
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out_result_json, &result) }
    })
}

/// Writes the episodic memories (`[{"id","summary","created_at_ms","message_count",
/// "archived_messages":[…]}]`) to `*out`; free with `arkagent_string_free`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_episodes(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { write_runtime_json(runtime, out, |rt| rt.episodic_memories()) }
    })
}

/// Writes the session's usage totals (SUB-6: its own calls plus every child's, each once)
/// as a `UsageTotals` (`include/JSON-SHAPES.md`) to `*out`; `"total"` is exactly `"parent"` + `"children"` and
/// `"parent"` exactly the sum of `arkagent_runtime_usages` (costs included: integers,
/// never rounded in the sum). Free with `arkagent_string_free`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_total_usage(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { write_runtime_json(runtime, out, |rt| rt.total_usage()) }
    })
}

/// Sums a JSON array of `ModelUsage` (e.g. what `arkagent_runtime_usages` writes or a
/// child's usages) into a `ChildUsageSummary` (SUB-6, COST-1, COST-2; both in
/// `include/JSON-SHAPES.md`), the same summary `arkagent_runtime_total_usage`, a run's
/// outcome and the delegate tool's metadata use: `"costs"` holds one exact sum per
/// currency (sorted by code) and is absent when no usage has a cost (never 0 for
/// "unknown"); different currencies are never added together.
/// `*out_json` gets it; free with `arkagent_string_free`. A count an object leaves out
/// reads 0 (each object is one call); anything but an array of objects, or a count that
/// is not a whole number, gives `ARK_AGENT_RESULT_INVALID_JSON` and writes nothing. Any
/// thread; needs no runtime.
///
/// # Safety
/// `usages_json` a NUL-terminated string; `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_child_usage_summary(usages_json: *const c_char, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(usages_json, "usages_json") }?;
        let out = out_arg(out_json, "out_json")?;
        let summary = arkagent::subagent::ChildUsageSummary::from_usages_json(json)?;
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out, summary.to_json()) }
    })
}

/// Writes the sub-agents of this runtime's registry as a `RegistrySnapshot`
/// (`include/JSON-SHAPES.md`: `"active"`, `"history"` (≤ 100), `"stats"`) to `*out` (empty
/// lists without delegation); free with `arkagent_string_free`. The stats' `"usage"`
/// (COST-1, COST-2) sums every ended sub-agent's reported usage, each call once; each
/// ended context's `"result"` has its own `"usage"`. However a sub-agent ended — its
/// answer, a failure, force-completed, its session closed, stale, its parent's run
/// cancelled — its record holds what it spent up to its end (`"token_count"`, `"usage"`,
/// `"tools_used"`, `"messages"`), and once the run that delegated it has returned,
/// `"usage"` equals the `"children"` of `arkagent_runtime_total_usage`, and so does
/// `"total_tokens"` unless a model call was in flight when a sub-agent ended (it also counts
/// that call's prompt estimate, as the budget did; no usage reports it). The registry is
/// this runtime's: after a resume or `arkagent_runtime_import_state` the earlier children
/// are in the totals only.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_sub_agents(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let registry = runtime_handle(runtime)?.runtime.sub_agent_registry();
        let snapshot = arkagent::subagent::RegistrySnapshot::of(registry.as_deref());
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out, serde_json::json!(snapshot).to_string()) }
    })
}

/// Force-completes every running sub-agent of this runtime's session, and theirs
/// (`session-closed`) — call it when the conversation closes. It reaches every child the
/// registry lists, even one still being built. A delegation whose worker factory has not
/// returned has no child yet: it is not listed and not reached (the child starts once the
/// factory returns). `*out_count` (if not NULL) gets how many
/// direct children. Each record keeps what that child spent up to then (see
/// `arkagent_runtime_sub_agents`).
///
/// # Safety
/// `out_count` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_close_sub_agents(runtime: *mut ArkAgentRuntime, out_count: *mut usize) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let n = match handle.runtime.sub_agent_registry() {
            Some(r) => r.force_complete_all(&handle.runtime.session_id(), handle.runtime.config().clock.now_ms()),
            None => 0,
        };
        if !out_count.is_null() {
            // SAFETY: checked non-NULL.
            unsafe { *out_count = n };
        }
        Ok(())
    })
}

/// ISO-7: runs `tasks_json` (`[{"assignee","task_description","role"?,"context"?}]`)
/// through delegation in parallel batches of `max_concurrency` (0 = 3), blocking like
/// `arkagent_runtime_run`. `*out_results_json` gets one `{"content","is_error",
/// "error_code"?,"metadata"?}` per task, in input order. `out_results_json` must not be
/// NULL (`ARK_AGENT_RESULT_NULL_ARGUMENT`, checked before any task starts). Subscribers
/// see it as a run: `"run_started"` first (`"input"`: the task descriptions, one per
/// line), the children's `"sub_agent"` events, `"run_finished"` last (`"status"`
/// `"completed"`, or `"cancelled"` after `arkagent_runtime_cancel`; `"iterations"` 0;
/// `"usage"`: its children's), all with the job's `"run_id"`.
///
/// # Safety
/// `tasks_json` a NUL-terminated string; `out_results_json` valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_run_decomposed(
    runtime: *mut ArkAgentRuntime,
    tasks_json: *const c_char,
    max_concurrency: usize,
    out_results_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(tasks_json, "tasks_json") }?;
        let tasks: Vec<arkagent::subagent::DecomposedTask> = serde_json::from_str(json).map_err(arkagent::ArkAgentError::from)?;
        let out_results_json = out_arg(out_results_json, "out_results_json")?;
        let concurrency = if max_concurrency == 0 { arkagent::subagent::DEFAULT_DECOMPOSE_CONCURRENCY } else { max_concurrency };
        let results = block_on("arkagent_runtime_run_decomposed", handle.runtime.run_decomposed(&tasks, concurrency))??;
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out_results_json, &results) }
    })
}

/// Stores `entry_json` under `id` in this runtime's memory namespace (MEM-4). `tier` is
/// an `ArkAgentMemoryTier` value as a plain integer (0 working, 1 short-term; anything
/// else gives `ARK_AGENT_RESULT_INVALID_ARGUMENT`).
///
/// # Safety
/// `id` and `entry_json` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_memory_store(
    runtime: *mut ArkAgentRuntime,
    tier: i32,
    id: *const c_char,
    entry_json: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        // SAFETY: forwarded contract.
        let (id, json) = unsafe { (str_arg(id, "id")?, str_arg(entry_json, "entry_json")?) };
        let entry: serde_json::Value = serde_json::from_str(json).map_err(arkagent::ArkAgentError::from)?;
        handle.runtime.working_memory().store(tier.into(), id, entry);
        Ok(())
    })
}

/// Reads `id` from this runtime's memory namespace into `*out_json` (`null` when absent).
/// `tier` as for [`arkagent_runtime_memory_store`].
///
/// # Safety
/// `id` a NUL-terminated string; `out_json` valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_memory_recall(
    runtime: *mut ArkAgentRuntime,
    tier: i32,
    id: *const c_char,
    out_json: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(id, "id") }?;
        let out_json = out_arg(out_json, "out_json")?;
        let entry = handle.runtime.working_memory().recall(tier.into(), id).unwrap_or(serde_json::Value::Null);
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out_json, entry.to_string()) }
    })
}

/// Which namespaced memory (MEM-4). Functions take the value as a plain `int32_t`; any
/// other number gives `ARK_AGENT_RESULT_INVALID_ARGUMENT`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentMemoryTier {
    /// Scratch state for the current task.
    Working = 0,
    /// Facts worth keeping for the session.
    ShortTerm = 1,
}

impl ArkAgentMemoryTier {
    pub(crate) fn from_c(value: i32) -> FfiResult<Self> {
        match value {
            0 => Ok(Self::Working),
            1 => Ok(Self::ShortTerm),
            other => Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("tier {other} is not an ArkAgentMemoryTier (0 or 1)"))),
        }
    }
}

impl From<ArkAgentMemoryTier> for arkagent::memory::MemoryTier {
    fn from(t: ArkAgentMemoryTier) -> Self {
        match t {
            ArkAgentMemoryTier::Working => Self::Working,
            ArkAgentMemoryTier::ShortTerm => Self::ShortTerm,
        }
    }
}

/// Cancels the active run, if any. Any thread, including from inside a callback.
#[no_mangle]
pub extern "C" fn arkagent_runtime_cancel(runtime: *mut ArkAgentRuntime) -> ArkAgentResult {
    boundary(|| {
        runtime_handle(runtime)?.runtime.cancel();
        Ok(())
    })
}

