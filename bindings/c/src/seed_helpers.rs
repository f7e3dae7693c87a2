//! PAR-1 for C: what the seeds give an app, reachable from C — the helpers a custom
//! compressor needs (CMP-4, CORE-2, MEM-3, SUB-9), the MemoryService and memory
//! namespace for tools (MEM-1, MEM-4), namespace access, and per-child force-completion
//! and registry cleanup (ISO-1, ISO-4). Conversions only: each function calls the core.

use std::ffi::{c_char, c_void, CStr};

use crate::boundary::boundary;
use crate::callbacks::{ArkAgentToolCompletion, ToolCompletionState};
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use crate::handles::{self, Kind};
use crate::runtime::{runtime_handle, ArkAgentMemoryTier, ArkAgentRuntime};
use crate::strings::{out_arg, str_arg, write_out_json, write_out_string};
use arkagent::history::{HistoryInvariants, Message};
use arkagent::compress::compute_safe_split_index;
use arkagent::memory::{validate_episodic_memory_ids, EpisodicMemory, MemoryService};
use arkagent::subagent::{allocate_isolated_session_id, summarize_result};
use arkagent::tools::ToolContext;

fn json_arg<T: serde::de::DeserializeOwned>(json: &str) -> FfiResult<T> {
    serde_json::from_str(json).map_err(|e| arkagent::ArkAgentError::from(e).into())
}

/// Writes `flag` as 0/1 into `out` when it is not NULL.
///
/// # Safety
/// `out` NULL or valid for one write.
unsafe fn write_flag(out: *mut i32, flag: bool) {
    if !out.is_null() {
        // SAFETY: forwarded contract.
        unsafe { *out = i32::from(flag) };
    }
}

// ---------------------------------------------------------------- helpers (item 10)

/// CMP-4, the seed's `computeSafeSplitIndex`: the largest index `s` (1 ≤ s ≤ n −
/// `keep_recent`) at which both `messages[..s]` and `messages[s..]` keep every tool call
/// paired with its result — what a custom compressor answers as `split_index` — or -1
/// when there is none (n ≤ `keep_recent`, or every cut splits a pair). O(n).
/// `messages_json` is a JSON array of messages as `arkagent_runtime_messages` writes
/// them (the `history.messages` of the compressor's `state_json`); anything else gives
/// `ARK_AGENT_RESULT_INVALID_JSON`. Any thread; needs no runtime.
///
/// # Safety
/// `messages_json` a NUL-terminated string; `out_index` valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_compute_safe_split_index(messages_json: *const c_char, keep_recent: usize, out_index: *mut i64) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(messages_json, "messages_json") }?;
        let out_index = out_arg(out_index, "out_index")?;
        let messages: Vec<Message> = json_arg(json)?;
        let index = compute_safe_split_index(&messages, keep_recent).map_or(-1, |s| i64::try_from(s).unwrap_or(i64::MAX));
        // SAFETY: checked non-NULL; the caller passes a writable pointer.
        unsafe { *out_index = index };
        Ok(())
    })
}

/// CORE-2, the seed's `HistoryInvariants.toolCallsPaired`: `*out_paired` gets 1 when,
/// within `messages_json` (as for [`arkagent_compute_safe_split_index`]), every tool call
/// has exactly one result after it, every result answers an earlier call and no id
/// repeats; else 0. Any thread; needs no runtime.
///
/// # Safety
/// `messages_json` a NUL-terminated string; `out_paired` valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_calls_paired(messages_json: *const c_char, out_paired: *mut i32) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(messages_json, "messages_json") }?;
        let out_paired = out_arg(out_paired, "out_paired")?;
        let messages: Vec<Message> = json_arg(json)?;
        // SAFETY: checked non-NULL.
        unsafe { write_flag(out_paired, HistoryInvariants::tool_calls_paired(&messages)) };
        Ok(())
    })
}

/// MEM-3, the seed's `validateEpisodicMemoryIds`: `ARK_AGENT_RESULT_OK` when every
/// episode of `episodes_json` (a JSON array as `arkagent_runtime_episodes` writes it;
/// `archived_messages` may be left out) has a non-blank id and no id repeats, else
/// `ARK_AGENT_RESULT_INVALID_STATE` (the message names the offending id) — the check
/// `arkagent_runtime_import_state` makes. Any thread; needs no runtime.
///
/// # Safety
/// `episodes_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_validate_episodic_memory_ids(episodes_json: *const c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(episodes_json, "episodes_json") }?;
        let episodes: Vec<EpisodicMemory> = json_arg(json)?;
        validate_episodic_memory_ids(&episodes)?;
        Ok(())
    })
}

/// Draws a fresh id for [`arkagent_allocate_isolated_session_id`]: returns a
/// NUL-terminated UTF-8 string that stays valid until the next call or until
/// `arkagent_allocate_isolated_session_id` returns (the library copies it at once).
/// NULL fails the allocation (`ARK_AGENT_RESULT_INVALID_ARGUMENT`). Called on the
/// calling thread, at most 17 times.
pub type ArkAgentNextIdCallback = Option<unsafe extern "C" fn(userdata: *mut c_void) -> *const c_char>;

/// SUB-9, the seed's `allocateIsolatedSessionId`: the trimmed `requested` when it is
/// non-empty, not the trimmed `parent_session_id` and not in `active_ids_json` (a JSON
/// array of strings); otherwise `{parent}_w_{next_id()}`, drawn again while it is the
/// parent's id or active, at most 16 more times. `*out` gets it; free with
/// `arkagent_string_free`. `userdata` (may be NULL) is passed to `next_id`. Any thread;
/// needs no runtime.
///
/// # Safety
/// `parent_session_id`, `requested` and `active_ids_json` NUL-terminated strings;
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_allocate_isolated_session_id(
    parent_session_id: *const c_char,
    requested: *const c_char,
    active_ids_json: *const c_char,
    next_id: ArkAgentNextIdCallback,
    userdata: *mut c_void,
    out: *mut *mut c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let parent = unsafe { str_arg(parent_session_id, "parent_session_id") }?;
        // SAFETY: forwarded contract.
        let requested = unsafe { str_arg(requested, "requested") }?;
        // SAFETY: forwarded contract.
        let active_json = unsafe { str_arg(active_ids_json, "active_ids_json") }?;
        let next_id = next_id.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "next_id is NULL"))?;
        let out = out_arg(out, "out")?;
        let active: Vec<String> = json_arg(active_json)?;
        let mut failure: Option<FfiError> = None;
        let mut draw = || {
            if failure.is_some() {
                return String::new();
            }
            // SAFETY: the host's callback with its own userdata, on this thread.
            let id = unsafe { next_id(userdata) };
            if id.is_null() {
                failure = Some(FfiError::new(ArkAgentResult::InvalidArgument, "next_id returned NULL"));
                return String::new();
            }
            // SAFETY: the callback returns a NUL-terminated string valid until its next call.
            match unsafe { CStr::from_ptr(id) }.to_str() {
                Ok(s) => s.to_owned(),
                Err(_) => {
                    failure = Some(FfiError::new(ArkAgentResult::InvalidUtf8, "next_id returned invalid UTF-8"));
                    String::new()
                }
            }
        };
        let id = allocate_isolated_session_id(parent, requested, &active, &mut draw);
        if let Some(failure) = failure {
            return Err(failure);
        }
        // SAFETY: checked non-NULL.
        unsafe { write_out_string(out, id) }
    })
}

/// ISO-3, the seed's `SubAgentContext.summarize(content)`: the three-level summary a
/// parent receives of a child's answer — `content` as it is when it has at most 500
/// characters (Unicode scalar values, never cut inside one); otherwise its `## Summary`
/// section (or else its `## Result` section: the heading line to the next `## `
/// heading) when that has at most 1000; otherwise the first 500 characters followed by
/// `[truncated, N chars]`, N the full length. `*out` gets it; free with
/// `arkagent_string_free`. Any thread; needs no runtime.
///
/// # Safety
/// `content` a NUL-terminated string; `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_summarize_result(content: *const c_char, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let content = unsafe { str_arg(content, "content") }?;
        let out = out_arg(out, "out")?;
        // SAFETY: checked non-NULL.
        unsafe { write_out_string(out, summarize_result(content)) }
    })
}

// ---------------------------------------------------------------- memory (item 11, 13)

/// MEM-1: writes the episode with this snapshot id (`{"id","summary","created_at_ms",
/// "message_count","archived_messages":[…]}`), or `null` when there is none, to `*out`
/// (the find next to `arkagent_runtime_episodes`' list); free with `arkagent_string_free`.
///
/// # Safety
/// `snapshot_id` a NUL-terminated string; `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_find_episode(runtime: *mut ArkAgentRuntime, snapshot_id: *const c_char, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(snapshot_id, "snapshot_id") }?;
        let out = out_arg(out, "out")?;
        let episode = handle.runtime.memory().find_episode(id);
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out, &episode) }
    })
}

/// The open tool call's context (the handle must not be finished yet).
fn tool_context(completion: *mut ArkAgentToolCompletion) -> FfiResult<ToolContext> {
    let state: std::sync::Arc<ToolCompletionState> = handles::get(Kind::ToolCompletion, completion)?;
    state.context.clone().ok_or_else(|| FfiError::new(ArkAgentResult::InvalidHandle, "this tool call has no runtime context"))
}

fn episodes_of(ctx: &ToolContext) -> FfiResult<std::sync::Arc<dyn MemoryService>> {
    ctx.episodes.clone().ok_or_else(|| FfiError::new(ArkAgentResult::Internal, "the runtime gave the tool no memory service"))
}

/// MEM-1 for a C tool (seed 000 §3: every tool gets the read-only MemoryService): writes
/// the calling runtime's episodes, oldest first, over its live state, as
/// `arkagent_runtime_episodes` does, to `*out`; free with `arkagent_string_free`.
/// `completion` is the tool call's own, while it is not finished (then
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`). Any thread.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_episodes(completion: *mut ArkAgentToolCompletion, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        let out = out_arg(out, "out")?;
        let episodes = episodes_of(&ctx)?.list_episodes();
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out, &episodes) }
    })
}

/// MEM-1 for a C tool: the calling runtime's episode with this snapshot id, or `null`,
/// as [`arkagent_runtime_find_episode`] writes it. `completion` as for
/// [`arkagent_tool_episodes`].
///
/// # Safety
/// `snapshot_id` a NUL-terminated string; `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_find_episode(completion: *mut ArkAgentToolCompletion, snapshot_id: *const c_char, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(snapshot_id, "snapshot_id") }?;
        let out = out_arg(out, "out")?;
        let episode = episodes_of(&ctx)?.find_episode(id);
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out, &episode) }
    })
}

/// MEM-4 for a C tool: stores `entry_json` under `id` in the calling runtime's memory
/// namespace (a sub-agent's tool writes to the sub-agent's own). `tier` as for
/// `arkagent_runtime_memory_store`. `completion` as for [`arkagent_tool_episodes`].
///
/// # Safety
/// `id` and `entry_json` NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_memory_store(completion: *mut ArkAgentToolCompletion, tier: i32, id: *const c_char, entry_json: *const c_char) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(id, "id") }?;
        // SAFETY: forwarded contract.
        let entry: serde_json::Value = json_arg(unsafe { str_arg(entry_json, "entry_json") }?)?;
        ctx.memory.store(tier.into(), id, entry);
        Ok(())
    })
}

/// MEM-4 for a C tool: reads `id` from the calling runtime's memory namespace into
/// `*out_json` (`null` when absent). As [`arkagent_tool_memory_store`].
///
/// # Safety
/// `id` a NUL-terminated string; `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_memory_recall(completion: *mut ArkAgentToolCompletion, tier: i32, id: *const c_char, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(id, "id") }?;
        let out_json = out_arg(out_json, "out_json")?;
        let entry = ctx.memory.recall(tier.into(), id).unwrap_or(serde_json::Value::Null);
        // SAFETY: checked non-NULL.
        unsafe { write_out_string(out_json, entry.to_string()) }
    })
}

/// MEM-4 for a C tool: removes `id` from the calling runtime's memory namespace, as
/// `arkagent_runtime_memory_forget` does. `completion` as for [`arkagent_tool_episodes`].
///
/// # Safety
/// `id` a NUL-terminated string; `out_removed` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_memory_forget(completion: *mut ArkAgentToolCompletion, tier: i32, id: *const c_char, out_removed: *mut i32) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(id, "id") }?;
        let removed = ctx.memory.forget(tier.into(), id);
        // SAFETY: forwarded contract.
        unsafe { write_flag(out_removed, removed) };
        Ok(())
    })
}

/// MEM-4 for a C tool: the ids in the calling runtime's memory namespace and `tier`, as
/// `arkagent_runtime_memory_ids` writes them. `completion` as for
/// [`arkagent_tool_episodes`].
///
/// # Safety
/// `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_memory_ids(completion: *mut ArkAgentToolCompletion, tier: i32, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        let out_json = out_arg(out_json, "out_json")?;
        let ids = ctx.memory.ids(tier.into());
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out_json, &ids) }
    })
}

/// MEM-4 for a C tool: the calling runtime's memory namespace and its entry counts, as
/// `arkagent_runtime_memory_stats` writes them (a sub-agent's tool sees the sub-agent's
/// namespace). `completion` as for [`arkagent_tool_episodes`].
///
/// # Safety
/// `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_memory_stats(completion: *mut ArkAgentToolCompletion, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let ctx = tool_context(completion)?;
        let out_json = out_arg(out_json, "out_json")?;
        let stats = ctx.memory.stats();
        let json = serde_json::json!({"namespace": ctx.memory.namespace(), "working": stats.working, "short_term": stats.short_term});
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out_json, &json) }
    })
}

/// MEM-4: removes `id` from this runtime's memory namespace; `*out_removed` (may be
/// NULL) gets 1 when it was there, else 0. `tier` as for `arkagent_runtime_memory_store`.
///
/// # Safety
/// `id` a NUL-terminated string; `out_removed` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_memory_forget(runtime: *mut ArkAgentRuntime, tier: i32, id: *const c_char, out_removed: *mut i32) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(id, "id") }?;
        let removed = handle.runtime.working_memory().forget(tier.into(), id);
        // SAFETY: forwarded contract.
        unsafe { write_flag(out_removed, removed) };
        Ok(())
    })
}

/// MEM-4: writes the ids in this runtime's memory namespace and `tier`, sorted, as a JSON
/// array to `*out_json`; free with `arkagent_string_free`.
///
/// # Safety
/// `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_memory_ids(runtime: *mut ArkAgentRuntime, tier: i32, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let tier = ArkAgentMemoryTier::from_c(tier)?;
        let out_json = out_arg(out_json, "out_json")?;
        let ids = handle.runtime.working_memory().ids(tier.into());
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out_json, &ids) }
    })
}

/// MEM-4: writes this runtime's memory namespace and its entry counts,
/// `{"namespace","working","short_term"}` (`"global"` for a root runtime), to
/// `*out_json`; free with `arkagent_string_free`.
///
/// # Safety
/// `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_memory_stats(runtime: *mut ArkAgentRuntime, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let out_json = out_arg(out_json, "out_json")?;
        let memory = handle.runtime.working_memory();
        let stats = memory.stats();
        let json = serde_json::json!({"namespace": memory.namespace(), "working": stats.working, "short_term": stats.short_term});
        // SAFETY: checked non-NULL.
        unsafe { write_out_json(out_json, &json) }
    })
}

// ---------------------------------------------------------------- sub-agents (item 13)

/// ISO-1 / ISO-4, the seed's per-child `forceComplete(reason)`: ends the running sub-agent
/// `id` (a child session id from `arkagent_runtime_sub_agents`' `"active"`) of this
/// runtime's delegation tree with the non-blank `reason` (its record's `forced_reason`)
/// and cancels its run; the parent's `delegate_task` call is answered as forced.
/// `*out_found` (may be NULL) gets 1 when it was running, 0 otherwise (unknown, already
/// ended, or no delegation configured). A blank `reason` gives
/// `ARK_AGENT_RESULT_INVALID_ARGUMENT`. Any thread, including from a callback. Its record
/// keeps what it spent up to then (see `arkagent_runtime_sub_agents`).
///
/// # Safety
/// `id` and `reason` NUL-terminated strings; `out_found` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_force_complete_sub_agent(
    runtime: *mut ArkAgentRuntime,
    id: *const c_char,
    reason: *const c_char,
    out_found: *mut i32,
) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        // SAFETY: forwarded contract.
        let id = unsafe { str_arg(id, "id") }?;
        // SAFETY: forwarded contract.
        let reason = unsafe { str_arg(reason, "reason") }?;
        if reason.trim().is_empty() {
            return Err(FfiError::new(ArkAgentResult::InvalidArgument, "reason is blank"));
        }
        let now_ms = handle.runtime.config().clock.now_ms();
        let found = handle.runtime.sub_agent_registry().is_some_and(|r| r.force_complete(id, reason, now_ms));
        // SAFETY: forwarded contract.
        unsafe { write_flag(out_found, found) };
        Ok(())
    })
}

/// ISO-4, the seed's `cleanup(maxAgeMs)`: drops ended sub-agents that ended more than
/// `max_age_ms` ago from this runtime's registry history, and force-completes running
/// ones started more than `max_age_ms` ago (reason `stale`; their records keep what they
/// spent). `*out_count` (may be NULL)
/// gets how many were dropped or ended (0 without delegation). Any thread.
///
/// # Safety
/// `out_count` NULL or valid for one write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_cleanup_sub_agents(runtime: *mut ArkAgentRuntime, max_age_ms: u64, out_count: *mut usize) -> ArkAgentResult {
    boundary(|| {
        let handle = runtime_handle(runtime)?;
        let now_ms = handle.runtime.config().clock.now_ms();
        let count = handle.runtime.sub_agent_registry().map_or(0, |r| r.cleanup(max_age_ms, now_ms));
        if !out_count.is_null() {
            // SAFETY: forwarded contract.
            unsafe { *out_count = count };
        }
        Ok(())
    })
}
