//! Runtime and tool-registry handles.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use super::boundary::{boundary, FfiError, FfiResult};
use super::callbacks::{register_host_tool, CancelScope, ArkAgentEventCallback, ArkAgentHttp, ArkAgentToolCallback, HostObserver, HostTransport, UserData};
use super::codes::ArkAgentResult;
use super::compress::{ArkAgentCompressCallback, HostCompressor};
use super::handles::{self, Kind};
use super::strings::{str_arg, write_out_string};
use super::workers::{workers_arg, ArkAgentWorkers};
use crate::memory::ForeignCompressor;
use crate::runtime::{AgentRuntime, AgentRuntimeConfig, Compression, Subscription};
use crate::runtime::DelegationConfig;
use crate::tools::ToolRegistry;

/// Opaque: a set of host tools, built before the runtime. Owned by the caller; free with
/// [`arkagent_tools_free`] (a runtime keeps its own copy, so freeing after
/// [`arkagent_runtime_new`] is fine).
pub struct ArkAgentTools {
    _private: [u8; 0],
}

/// Opaque: one conversation. Owned by the caller; free with [`arkagent_runtime_free`].
/// Thread-safe: `arkagent_runtime_cancel` may be called from any thread during a run.
pub struct ArkAgentRuntime {
    _private: [u8; 0],
}

pub(crate) struct RuntimeHandle {
    pub(crate) runtime: AgentRuntime,
    subscriptions: Mutex<HashMap<u64, Subscription>>,
}

/// The library's executor: two worker threads named "arkagent", started by the first
/// blocking call and stopped by [`arkagent_shutdown`]. Each blocking call holds an `Arc`,
/// so shutdown can tell whether a call is still using it.
static EXECUTOR: Mutex<Option<Arc<tokio::runtime::Runtime>>> = Mutex::new(None);

fn executor() -> FfiResult<Arc<tokio::runtime::Runtime>> {
    let internal = |m: &str| FfiError::new(ArkAgentResult::Internal, m.to_owned());
    let mut slot = EXECUTOR.lock().map_err(|_| internal("the executor lock was poisoned"))?;
    if let Some(executor) = slot.as_ref() {
        return Ok(Arc::clone(executor));
    }
    let executor = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("arkagent")
        .enable_time()
        .build()
        .map_err(|e| internal(&format!("could not start the executor: {e}")))?;
    let executor = Arc::new(executor);
    *slot = Some(Arc::clone(&executor));
    Ok(executor)
}

/// Runs `future` to completion on the calling thread (host callbacks run there too), then
/// waits for the HTTP cancel callbacks it caused (OHOS-7), so none runs after it returns.
/// Refuses to nest inside a library callback, where blocking would deadlock.
fn block_on<F: std::future::Future>(what: &str, future: F) -> FfiResult<F::Output> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return Err(FfiError::new(ArkAgentResult::Reentrant, format!("{what} called from a library callback")));
    }
    let executor = executor()?;
    Ok(executor.block_on(CancelScope::run(future)))
}

/// Stops the library's executor threads (named "arkagent") and waits up to one second for
/// them to exit. Call it before unloading the library (`dlclose`), after every blocking
/// call (`arkagent_runtime_run`, `_compress_now`, `_run_decomposed`) has returned;
/// runtimes may stay alive. The next blocking call starts the threads again.
/// Returns `ARK_AGENT_RESULT_RUN_IN_PROGRESS` (and stops nothing) while a blocking call
/// is running on any thread, `ARK_AGENT_RESULT_REENTRANT` from inside a library callback,
/// `ARK_AGENT_RESULT_OK` otherwise (also when no thread was started). Any thread.
#[no_mangle]
pub extern "C" fn arkagent_shutdown() -> ArkAgentResult {
    boundary(|| {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(FfiError::new(ArkAgentResult::Reentrant, "arkagent_shutdown called from a library callback"));
        }
        let mut slot = EXECUTOR.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "the executor lock was poisoned"))?;
        let Some(executor) = slot.take() else { return Ok(()) };
        match Arc::try_unwrap(executor) {
            Ok(executor) => {
                drop(slot);
                executor.shutdown_timeout(std::time::Duration::from_secs(1));
                Ok(())
            }
            Err(shared) => {
                *slot = Some(shared);
                Err(FfiError::new(ArkAgentResult::RunInProgress, "a blocking call is still running on the executor"))
            }
        }
    })
}

/// Serializes `value` into `*out` (NULL `out` is an error).
///
/// # Safety
/// `out` NULL or valid for one pointer write.
pub(crate) unsafe fn write_out_json<T: serde::Serialize + ?Sized>(out: *mut *mut c_char, value: &T) -> FfiResult<()> {
    let json = serde_json::to_string(value).map_err(crate::ArkAgentError::from)?;
    // SAFETY: forwarded contract.
    unsafe { write_out_string(out, json) }
}

fn null(what: &str) -> FfiError {
    FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL"))
}

/// Checks an out-pointer before anything is created for it.
pub(crate) fn out_arg<T>(out: *mut T, what: &str) -> FfiResult<*mut T> {
    if out.is_null() {
        Err(null(what))
    } else {
        Ok(out)
    }
}

/// Creates an empty tool set in `*out`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tools_new(out: *mut *mut ArkAgentTools) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        // SAFETY: checked non-NULL; the caller passes a writable pointer.
        unsafe { *out = handles::insert(Kind::Tools, Arc::new(Mutex::new(ToolRegistry::new()))) };
        Ok(())
    })
}

/// Registers a host tool. `definition_json`: `{"name","description","parameters":{JSON
/// Schema object}}`. `callback` runs the tool (see [`ArkAgentToolCallback`]); `userdata`
/// must stay valid until every runtime created with these tools is freed.
///
/// # Safety
/// `definition_json` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tools_register(
    tools: *mut ArkAgentTools,
    definition_json: *const c_char,
    callback: ArkAgentToolCallback,
    userdata: *mut c_void,
) -> ArkAgentResult {
    boundary(|| {
        let registry: Arc<Mutex<ToolRegistry>> = handles::get(Kind::Tools, tools)?;
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(definition_json, "definition_json") }?;
        let mut registry = registry.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?;
        register_host_tool(&mut registry, json, callback, userdata)
    })
}

/// Frees a tool set. NULL and already-freed handles are ignored.
#[no_mangle]
pub extern "C" fn arkagent_tools_free(tools: *mut ArkAgentTools) {
    let _ = boundary(|| handles::remove::<_, Mutex<ToolRegistry>>(Kind::Tools, tools).map(drop));
}

/// Creates a runtime in `*out`. `config_json`: `{"model":{"base_url","api_key","model",
/// "temperature"?,"max_tokens"?,"stream"?},"system_prompt"?,"max_iterations"?,
/// "max_parallel_tools"?,"session_id"?,"compression"?:{"total_token_threshold"?,
/// "keep_recent_message_count"?,"summary_prompt"?,"min_messages_to_summarize"?,
/// "summarizer_max_input_tokens"?},"delegation"?:{"policy"?:{"max_depth"?,
/// "max_delegations_per_run"?,"max_concurrent_children"?,"parent_context_message_count"?},
/// "allow_clone"?,"child_token_budget"?,"role_whitelists"?:{"role":["tool",…]|null}}}`.
/// Inside `"model"`: `"retry"?:{"max_attempts"?,"initial_backoff_ms"?,"max_backoff_ms"?}`
/// (defaults 3 attempts in total, 500 ms, 8000 ms; exponential backoff with full jitter,
/// only rate-limit, 5xx, timeout and transport failures are retried) and
/// `"request_timeout_ms"?` (default 60000 per attempt until the response arrives — a
/// streamed request's status and headers, otherwise the whole body; 0 = no limit) and
/// `"idle_timeout_ms"?` (default 120000: longest silence of a streamed body, which has no
/// total limit; 0 = none); a timed-out call ends the run with
/// `ARK_AGENT_RESULT_LLM_TIMEOUT`. The same settings as the JS `ModelConfig`'s `retry`,
/// `requestTimeoutMs` and `idleTimeoutMs`; also
/// `"extra_headers"?:[["name","value"],…]`. Unknown keys give
/// `ARK_AGENT_RESULT_INVALID_JSON`.
/// `tools` and `workers` may be NULL; workers enable delegation with
/// the default policy when the config has no `"delegation"`. `http` (required, copied
/// during the call) is the host's HTTP client: `send` (required) sends requests,
/// `cancel` (may be NULL) aborts them, and `userdata` must stay valid until the runtime
/// is freed and no blocking call is running (see [`ArkAgentHttp`]).
///
/// # Safety
/// `config_json` a NUL-terminated string; `http` NULL or valid for one read; `out` valid
/// for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_new(
    config_json: *const c_char,
    tools: *const ArkAgentTools,
    workers: *const ArkAgentWorkers,
    http: *const ArkAgentHttp,
    out: *mut *mut ArkAgentRuntime,
) -> ArkAgentResult {
    // SAFETY: forwarded contract.
    boundary(|| unsafe { new_runtime(config_json, tools, workers, http, None, out) })
}

/// A C compressor as `arkagent_runtime_new_with_compressor` received it.
struct CompressorArg {
    callback: ArkAgentCompressCallback,
    userdata: *mut c_void,
    threshold: u64,
}

/// Builds a runtime; every argument is checked before anything is built or registered.
///
/// # Safety
/// As [`arkagent_runtime_new`].
unsafe fn new_runtime(
    config_json: *const c_char,
    tools: *const ArkAgentTools,
    workers: *const ArkAgentWorkers,
    http: *const ArkAgentHttp,
    compressor: Option<CompressorArg>,
    out: *mut *mut ArkAgentRuntime,
) -> FfiResult<()> {
    // SAFETY: forwarded contract.
    let json = unsafe { str_arg(config_json, "config_json") }?;
    // SAFETY: forwarded contract.
    let transport = unsafe { HostTransport::from_c(http) }?;
    let compressor = match compressor {
        None => None,
        Some(c) => Some((c.callback.ok_or_else(|| null("compress callback"))?, c.userdata, c.threshold)),
    };
    let out = out_arg(out, "out")?;
    let registry = match handles::check_optional::<_, Mutex<ToolRegistry>>(Kind::Tools, tools)? {
        None => ToolRegistry::new(),
        Some(shared) => shared.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?.clone(),
    };
    let mut config = AgentRuntimeConfig::from_json(json, registry)?;
    let workers = workers_arg(workers)?;
    if !workers.is_empty() {
        let delegation = config.delegation.get_or_insert_with(DelegationConfig::default);
        for worker in workers {
            delegation.register(worker)?;
        }
    }
    if let Some((callback, userdata, threshold)) = compressor {
        // The custom compressor wins over the config's "compression" (checked above all
        // the same, so a bad value is still refused).
        let call = HostCompressor { callback, userdata: UserData(userdata) };
        let threshold = (threshold != 0).then_some(threshold);
        config.compression = Some(Compression::Custom(Arc::new(ForeignCompressor::new(call, threshold))));
    }
    let transport = Arc::new(transport);
    let runtime = AgentRuntime::new(config, transport)?;
    let handle = RuntimeHandle { runtime, subscriptions: Mutex::default() };
    // SAFETY: checked non-NULL above; the caller passes a writable pointer.
    unsafe { *out = handles::insert(Kind::Runtime, Arc::new(handle)) };
    Ok(())
}

/// Creates a runtime like [`arkagent_runtime_new`] whose context compressor is written in
/// C (CMP-1). `compress` (required) is called as described at [`ArkAgentCompressCallback`]
/// and answered through `arkagent_compress_complete` / `arkagent_compress_fail`;
/// `compress_userdata` (may be NULL) is passed back to it and must stay valid until the
/// runtime is freed and no run is active. `http` as for `arkagent_runtime_new`.
/// `threshold` is the runtime's trigger (0: 64000, the default compressor's): before a
/// model call and after a turn the compressor is called only when the prompt size
/// reaches it (and the last usage is not a compression's own); below it the runtime
/// skips (`below_threshold`) without calling. `arkagent_runtime_compress_now` and a
/// context overflow always call it. It is reported in the `compression` and
/// `model_request` events (`"threshold"`, `"compression_threshold"`).
///
/// The custom compressor wins over the config's `"compression"`: that key is still
/// checked (`ARK_AGENT_RESULT_INVALID_CONFIG` / `_INVALID_JSON` as for
/// `arkagent_runtime_new`) but not used. `retrieve_memory` is offered to the model as
/// with the default compressor. Every argument is checked before anything is created; a
/// refused call writes nothing to `*out`.
///
/// # Safety
/// `config_json` a NUL-terminated string; `http` NULL or valid for one read; `out` valid
/// for one pointer write.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn arkagent_runtime_new_with_compressor(
    config_json: *const c_char,
    tools: *const ArkAgentTools,
    workers: *const ArkAgentWorkers,
    http: *const ArkAgentHttp,
    compress: ArkAgentCompressCallback,
    compress_userdata: *mut c_void,
    threshold: u64,
    out: *mut *mut ArkAgentRuntime,
) -> ArkAgentResult {
    let compressor = CompressorArg { callback: compress, userdata: compress_userdata, threshold };
    // SAFETY: forwarded contract.
    boundary(|| unsafe { new_runtime(config_json, tools, workers, http, Some(compressor), out) })
}

/// Frees a runtime; an active run is cancelled and finishes on its own thread. NULL and
/// already-freed handles are ignored.
#[no_mangle]
pub extern "C" fn arkagent_runtime_free(runtime: *mut ArkAgentRuntime) {
    let _ = boundary(|| {
        let handle = handles::remove::<_, RuntimeHandle>(Kind::Runtime, runtime)?;
        handle.runtime.cancel();
        Ok(())
    });
}

pub(crate) fn runtime_handle(runtime: *const ArkAgentRuntime) -> FfiResult<Arc<RuntimeHandle>> {
    handles::get(Kind::Runtime, runtime)
}

/// Runs one user turn to the end, blocking the calling thread; callbacks are invoked on
/// this thread. On success `*out_outcome_json` (if `out_outcome_json` is not NULL) gets
/// `{"run_id","status":"completed"|"cancelled"|"max_iterations","final_text","iterations"}`.
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
/// `{"outcome":"skipped"|"compressed"|"failed","reason","episode_id","usage",
/// "error_code","messages_archived"}`. On `failed` or `skipped` the state is unchanged.
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
        let out = out_arg(out, "out")?;
        let episodes = runtime_handle(runtime)?.runtime.episodic_memories();
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out, &episodes) }
    })
}

/// Writes the session's usage totals (SUB-6: its own calls plus every child's, each once)
/// as `{"parent":{…},"children":{…},"total":{"prompt_tokens","completion_tokens",
/// "total_tokens","call_count"}}` to `*out`; free with `arkagent_string_free`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_total_usage(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let totals = runtime_handle(runtime)?.runtime.total_usage();
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out, &totals) }
    })
}

/// Sums a JSON array of model usages (`[{"prompt_tokens","completion_tokens",
/// "total_tokens",…},…]`, e.g. what `arkagent_runtime_usages` writes or a child's usages)
/// into `{"prompt_tokens","completion_tokens","total_tokens","call_count"}` (SUB-6), the
/// same summary `arkagent_runtime_total_usage` and the delegate tool's metadata use.
/// `*out_json` gets it; free with `arkagent_string_free`. Anything but such an array
/// gives `ARK_AGENT_RESULT_INVALID_JSON` and writes nothing. Any thread; needs no
/// runtime.
///
/// # Safety
/// `usages_json` a NUL-terminated string; `out_json` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_child_usage_summary(usages_json: *const c_char, out_json: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(usages_json, "usages_json") }?;
        let out = out_arg(out_json, "out_json")?;
        let summary = crate::subagent::ChildUsageSummary::from_usages_json(json)?;
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out, summary.to_json()) }
    })
}

/// Writes the sub-agents of this runtime's registry as `{"active":[SubAgentContext…],
/// "history":[…≤100],"stats":{"active","history","completed_count","total_tokens"}}` to
/// `*out` (empty lists without delegation); free with `arkagent_string_free`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_sub_agents(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let registry = runtime_handle(runtime)?.runtime.sub_agent_registry();
        let json = match registry {
            Some(r) => serde_json::json!({"active": r.active(), "history": r.history(), "stats": r.stats()}),
            None => serde_json::json!({"active": [], "history": [], "stats": crate::subagent::SubAgentStats::default()}),
        };
        // SAFETY: forwarded contract.
        unsafe { write_out_string(out, json.to_string()) }
    })
}

/// Force-completes every running sub-agent of this runtime's session, and theirs
/// (`session-closed`) — call it when the conversation closes. It reaches every child the
/// registry lists, even one still being built. `*out_count` (if not NULL) gets how many
/// direct children.
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
/// NULL (`ARK_AGENT_RESULT_NULL_ARGUMENT`, checked before any task starts).
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
        let tasks: Vec<crate::subagent::DecomposedTask> = serde_json::from_str(json).map_err(crate::ArkAgentError::from)?;
        let out_results_json = out_arg(out_results_json, "out_results_json")?;
        let concurrency = if max_concurrency == 0 { crate::subagent::DEFAULT_DECOMPOSE_CONCURRENCY } else { max_concurrency };
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
        let entry: serde_json::Value = serde_json::from_str(json).map_err(crate::ArkAgentError::from)?;
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

impl From<ArkAgentMemoryTier> for crate::memory::MemoryTier {
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
/// kept, in memory and in the store.
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

/// Writes the messages as a JSON array to `*out`; free with `arkagent_string_free`.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_messages(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let messages = runtime_handle(runtime)?.runtime.messages();
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out, &messages) }
    })
}

/// Writes the recorded usages as a JSON array to `*out`; free with `arkagent_string_free`.
/// One per model call made: a call whose provider reported no usage is a zero usage with
/// `"raw":{"source":"unreported"}`, so `"call_count"` summed from them counts it.
///
/// # Safety
/// `out` valid for one pointer write.
#[no_mangle]
pub unsafe extern "C" fn arkagent_runtime_usages(runtime: *mut ArkAgentRuntime, out: *mut *mut c_char) -> ArkAgentResult {
    boundary(|| {
        let out = out_arg(out, "out")?;
        let usages = runtime_handle(runtime)?.runtime.usages();
        // SAFETY: forwarded contract.
        unsafe { write_out_json(out, &usages) }
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
/// subscription id. `userdata` must stay valid until unsubscribed or the runtime is freed.
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

/// Stops a subscription. Unknown ids give `ARK_AGENT_RESULT_INVALID_HANDLE`.
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::ffi::callbacks::{arkagent_http_fail, ArkAgentHttpCompletion, ArkAgentHttpRequest};
    use crate::ffi::workers::arkagent_workers_new;

    const CONFIG: &std::ffi::CStr =
        c"{\"model\":{\"base_url\":\"http://x/v1\",\"api_key\":\"k\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},\"delegation\":{\"allow_clone\":true}}";

    /// These tests create runtimes; the handle count in the first one must not see the others'.
    static SERIAL: Mutex<()> = Mutex::new(());

    /// Counts requests in `*userdata` (an `AtomicUsize`) and fails each at once.
    unsafe extern "C" fn failing_http(userdata: *mut c_void, _request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
        // SAFETY: the tests pass a live AtomicUsize.
        unsafe { (*userdata.cast::<AtomicUsize>()).fetch_add(1, Ordering::SeqCst) };
        // SAFETY: a static string.
        unsafe { arkagent_http_fail(completion, 0, c"offline".as_ptr()) };
    }

    /// The `ArkAgentHttp` of the tests: `failing_http` counting into `userdata`.
    fn failing(userdata: *mut c_void) -> ArkAgentHttp {
        ArkAgentHttp { send: Some(failing_http), cancel: None, userdata }
    }

    #[test]
    fn ffi_5_refused_constructors_register_nothing() {
        let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let calls = AtomicUsize::new(0);
        let ud = std::ptr::from_ref(&calls).cast_mut().cast::<c_void>();
        let before = [Kind::Runtime, Kind::Tools, Kind::Workers].map(handles::live_count);
        for _ in 0..50 {
            // SAFETY: valid strings; NULL out pointers are the point.
            unsafe {
                assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), std::ptr::null_mut()), ArkAgentResult::NullArgument);
                assert_eq!(arkagent_tools_new(std::ptr::null_mut()), ArkAgentResult::NullArgument);
                let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
                assert_eq!(
                    arkagent_runtime_new_with_compressor(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), None, ud, 0, &mut rt),
                    ArkAgentResult::NullArgument
                );
                assert!(rt.is_null());
                assert_eq!(arkagent_workers_new(std::ptr::null_mut()), ArkAgentResult::NullArgument);
            }
        }
        assert_eq!([Kind::Runtime, Kind::Tools, Kind::Workers].map(handles::live_count), before, "a refused call left a handle behind");
    }

    #[test]
    fn ffi_5_run_decomposed_refuses_a_null_out_before_sending_anything() {
        let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let calls = AtomicUsize::new(0);
        let ud = std::ptr::from_ref(&calls).cast_mut().cast::<c_void>();
        let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
        let tasks = c"[{\"assignee\":\"clone\",\"task_description\":\"look it up\"}]";
        // SAFETY: valid strings and out pointers.
        unsafe {
            assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), &mut rt), ArkAgentResult::Ok);
            assert_eq!(arkagent_runtime_run_decomposed(rt, tasks.as_ptr(), 0, std::ptr::null_mut()), ArkAgentResult::NullArgument);
            assert_eq!(calls.load(Ordering::SeqCst), 0, "no request may be sent by a refused call");
            let mut subs: *mut c_char = std::ptr::null_mut();
            assert_eq!(arkagent_runtime_sub_agents(rt, &mut subs), ArkAgentResult::Ok);
            let json = std::ffi::CStr::from_ptr(subs).to_str().unwrap().to_owned();
            crate::ffi::arkagent_string_free(subs);
            assert!(json.contains("\"history\":[]") && json.contains("\"active\":[]"), "no child recorded: {json}");
            // The same call with an out pointer does run the task (so the check above is real).
            let mut out: *mut c_char = std::ptr::null_mut();
            assert_eq!(arkagent_runtime_run_decomposed(rt, tasks.as_ptr(), 0, &mut out), ArkAgentResult::Ok);
            assert!(calls.load(Ordering::SeqCst) > 0);
            crate::ffi::arkagent_string_free(out);
            arkagent_runtime_free(rt);
        }
    }

    #[test]
    fn ffi_5_enum_arguments_out_of_range_are_refused() {
        let _serial = SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let calls = AtomicUsize::new(0);
        let ud = std::ptr::from_ref(&calls).cast_mut().cast::<c_void>();
        let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
        // SAFETY: valid strings and out pointers.
        unsafe {
            assert_eq!(arkagent_runtime_new(CONFIG.as_ptr(), std::ptr::null(), std::ptr::null(), &failing(ud), &mut rt), ArkAgentResult::Ok);
            for tier in [2, 7, 9, -1, i32::MAX, i32::MIN] {
                assert_eq!(arkagent_runtime_memory_store(rt, tier, c"k".as_ptr(), c"1".as_ptr()), ArkAgentResult::InvalidArgument, "tier {tier}");
                let mut out: *mut c_char = std::ptr::null_mut();
                assert_eq!(arkagent_runtime_memory_recall(rt, tier, c"k".as_ptr(), &mut out), ArkAgentResult::InvalidArgument);
                assert!(out.is_null());
            }
            // Tier 1 stored nothing under another tier's name.
            assert_eq!(arkagent_runtime_memory_store(rt, 1, c"k".as_ptr(), c"\"short\"".as_ptr()), ArkAgentResult::Ok);
            for (tier, want) in [(0, "null"), (1, "\"short\"")] {
                let mut out: *mut c_char = std::ptr::null_mut();
                assert_eq!(arkagent_runtime_memory_recall(rt, tier, c"k".as_ptr(), &mut out), ArkAgentResult::Ok);
                assert_eq!(std::ffi::CStr::from_ptr(out).to_str().unwrap(), want);
                crate::ffi::arkagent_string_free(out);
            }
            arkagent_runtime_free(rt);
        }
    }
}
