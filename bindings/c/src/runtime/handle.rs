//! Runtime and tool-set handles: create, register tools, free.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::{Arc, Mutex};

use crate::boundary::{boundary, free_boundary};
use crate::callbacks::{register_host_tool, ArkAgentHttp, ArkAgentToolCallback, HostTransport, UserData};
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use crate::compress::{ArkAgentCompressCallback, HostCompressor};
use crate::handles::{self, Kind};
use crate::strings::{null, out_arg, str_arg, write_out_json};
use crate::workers::{workers_arg, ArkAgentWorkers};
use arkagent::compress::ForeignCompressor;
use arkagent::runtime::{AgentRuntime, AgentRuntimeConfig, Compression, Subscription};
use arkagent::runtime::DelegationConfig;
use arkagent::tools::ToolRegistry;

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
    pub(crate) subscriptions: Mutex<HashMap<u64, Subscription>>,
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
        unsafe { *out = handles::insert(Kind::Tools, Arc::new(Mutex::new(ToolSet::default()))) };
        Ok(())
    })
}

/// Registers a host tool. `definition_json`: `{"name","description","parameters":{JSON
/// Schema object},"timeout_ms"?}` — `"timeout_ms"` (TOOL-4): how long one call may run
/// before the model is answered `tool_timeout` and the call's abort signal fires
/// (`arkagent_tool_abort_reason`, `arkagent_tool_on_abort`); absent: the config's
/// `"tool_timeout_ms"`; 0: no deadline; not a whole number of ms (negative, fractional,
/// a string): `ARK_AGENT_RESULT_INVALID_JSON`. `ARK_AGENT_RESULT_INVALID_TOOL` for a
/// name that is not 1–64 characters of ASCII letters, digits, `_` and `-`, a name these
/// tools already have, or `"parameters"` that are not a JSON object. `callback` runs the tool (see
/// [`ArkAgentToolCallback`]); `userdata` must stay valid until every runtime created with
/// these tools is freed.
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
        let set: Arc<Mutex<ToolSet>> = handles::get(Kind::Tools, tools)?;
        // SAFETY: forwarded contract.
        let json = unsafe { str_arg(definition_json, "definition_json") }?;
        let mut set = set.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?;
        register_host_tool(&mut set.registry, json, callback, userdata)
    })
}

/// What an `ArkAgentTools` handle holds: the tools and the policy (TOOL-3) that runtimes
/// created with them get.
#[derive(Clone, Default)]
pub(crate) struct ToolSet {
    pub(crate) registry: ToolRegistry,
    pub(crate) policy: Option<Arc<dyn arkagent::tools::ToolPolicy>>,
    /// MCP-1: the host's authorization for the config's MCP servers.
    pub(crate) mcp_auth: Option<Arc<dyn arkagent::mcp::McpAuth>>,
    /// IMG-9: the host's image codec.
    pub(crate) image_codec: Option<Arc<dyn arkagent::runtime::ImageCodec>>,
}

/// Frees a tool set. NULL and already-freed handles are ignored.
#[no_mangle]
pub extern "C" fn arkagent_tools_free(tools: *mut ArkAgentTools) {
    free_boundary(|| handles::remove::<_, Mutex<ToolSet>>(Kind::Tools, tools).map(drop));
}

/// Creates a runtime in `*out`. `config_json`: `{"model":{"base_url","api_key","model",
/// "wire_format"?,"temperature"?,"max_tokens"?,"stream"?},"system_prompt"?,"max_iterations"?,
/// "max_parallel_tools"?,"tool_timeout_ms"?,"session_id"?,"compression"?:{"total_token_threshold"?,
/// "keep_recent_message_count"?,"summary_prompt"?,"min_messages_to_summarize"?,
/// "summarizer_max_input_tokens"?,"summarizer_model"?:{…as "model"…}},"delegation"?:{"policy"?:{"max_depth"?,
/// "max_delegations_per_run"?,"max_concurrent_children"?,"parent_context_message_count"?},
/// "allow_clone"?,"child_token_budget"?,"role_whitelists"?:{"role":["tool",…]|null}},
/// "mcp_servers"?:[{"name","url","headers"?:{"Name":"value"},"allow"?:[tool,…],"deny"?:[tool,…],
/// "approval"?:"never"|"always"|[tool,…],"timeout_ms"?,"connect_timeout_ms"?,"retry_after_ms"?}]}`.
/// MCP-3: each MCP server's tools are offered as `<name>__<tool>` from the first run on
/// (connected through `http` at that run's start, an `"mcp_server"` event each); a server
/// that cannot be reached fails only itself (its event's `"error_code"`, e.g.
/// `"mcp_unreachable"`). Header values are secrets: never in events, logs or exports; the
/// tool set's `arkagent_tools_set_mcp_auth` callback supplies more at connection time.
/// `"summarizer_model"` (the seed's `modelConfig` of the compressor, the JS
/// `ContextCompressor.summarizerModel`) is the model the default compressor's summary
/// requests go to, through the same `http` client; absent, the runtime's `"model"`.
/// `"tool_timeout_ms"` (TOOL-4; default 0, no deadline: a tool may wait for a person) is a
/// tool call's deadline when its definition sets no `"timeout_ms"`; not a whole number of
/// ms: `ARK_AGENT_RESULT_INVALID_JSON`.
/// Inside `"model"`: `"retry"?:{"max_attempts"?,"initial_backoff_ms"?,"max_backoff_ms"?}`
/// (defaults 3 attempts in total, 500 ms, 8000 ms; exponential backoff with full jitter,
/// only rate-limit, 5xx, timeout and transport failures are retried) and
/// `"request_timeout_ms"?` (default 60000 per attempt until the response arrives — a
/// streamed request's status and headers, otherwise the whole body; 0 = no limit) and
/// `"idle_timeout_ms"?` (default 120000: longest silence of a streamed body, which has no
/// total limit; 0 = none); a timed-out call ends the run with
/// `ARK_AGENT_RESULT_LLM_TIMEOUT`. The same settings as the JS `ModelConfig`'s `retry`,
/// `requestTimeoutMs` and `idleTimeoutMs`; also
/// `"extra_headers"?:[["name","value"],…]`, and (COST-2) `"price"?:{"currency",
/// "input_per_million","cached_input_per_million","output_per_million",
/// "cache_write_per_million"?}`: what the model costs per 1M tokens — uncached prompt
/// tokens, prompt tokens served from the provider's cache, completion tokens (reasoning
/// included) and, when set, prompt tokens written to the cache (Anthropic's
/// `cache_creation_input_tokens`; otherwise priced as uncached). No price, no cost: the
/// library has no price of its own. A currency that is empty, longer than 16 bytes or
/// holds spaces, or a rate that is negative, not finite or above 1e9 gives
/// `ARK_AGENT_RESULT_INVALID_CONFIG`. Unknown keys give
/// `ARK_AGENT_RESULT_INVALID_JSON`. `"wire_format"?:"openai"|"anthropic"` (the JS
/// `ModelConfig`'s `wireFormat`) picks the provider protocol: `"openai"` (default) posts
/// Chat Completions to `{base_url}/chat/completions` with `Authorization: Bearer`;
/// `"anthropic"` posts Anthropic Messages to `{base_url}/messages` (e.g. base_url
/// `https://api.anthropic.com/v1`) with the key in `x-api-key` and `anthropic-version:
/// 2023-06-01`, always sends `max_tokens` (4096 when `"max_tokens"` is absent) and
/// places the prompt-cache breakpoints itself; any other value gives
/// `ARK_AGENT_RESULT_INVALID_CONFIG`. Images (IMG-3, IMG-5): `"image_tokens"?` names the
/// model family's rule for an image's tokens — `"openai_tiles"` (the `openai` default),
/// `"openai_gpt5_tiles"`, `"openai_4o_mini_tiles"`, `"openai_o_tiles"`,
/// `"openai_mini_patches"`, `"openai_nano_patches"`, `"openai_o4_mini_patches"`,
/// `"anthropic"` (the `anthropic` default), `"anthropic_high_res"`, `"qwen_vl"`,
/// `"qwen_vl_high_res"`, `"qwen3_vl"`, `"qwen3_vl_high_res"`, `"gemini"`, `"gemini_3"`
/// (another name gives `ARK_AGENT_RESULT_INVALID_JSON`); it also decides whether HEIC/HEIF
/// photos are taken (the Gemini and Qwen-VL ones). `"max_image_bytes"?` (default
/// 20971520) and `"max_images_per_request"?` (default 100) bound what
/// `arkagent_runtime_run_parts` and tool results may carry. Thinking models (THINK-2,
/// THINK-4; README, "Thinking models"): `"provider"?` — `"deepseek"`, `"kimi"`, `"glm"`,
/// `"qwen"`, `"doubao"`, `"anthropic"`, `"openai"` or `"other"`; absent, recognised from
/// the base URL's host, else the model name — decides how `"thinking"?` is sent:
/// `"off"`, `"on"`, `{"effort":"minimal"|"low"|"medium"|"high"|"xhigh"|"max"}` or
/// `{"budget_tokens":n}` (absent: nothing is sent, the provider's default holds). A
/// setting the provider has no switch for gives `ARK_AGENT_RESULT_THINKING_UNSUPPORTED`;
/// an option the thinking model refuses gives `ARK_AGENT_RESULT_THINKING_CONFLICT` (a
/// forced tool choice or a `"temperature"` with Anthropic thinking or an OpenAI reasoning
/// model, Qwen thinking without `"stream"`), before any request. `"reasoning_replay"?`
/// (`"auto"` default, `"tool_calls"`, `"all"`, `"none"`) says which earlier reasoning
/// goes back: by default, on `"openai"`, each answer's `reasoning_content` on every
/// assistant message with tool calls, exactly as received (`""` included; never where the
/// provider sent none, except `""` to DeepSeek and Kimi while they think, which refuse a
/// tool-call message without it; not for Qwen nor OpenAI; every answer's for GLM with
/// `"clear_thinking":false` in `"extra_body"`), and on `"anthropic"` every answer's `thinking` and
/// `redacted_thinking` blocks byte-exact before its `tool_use` (or in their places among
/// its text and tool calls, as the message's `"block_order"` kept them). `"extra_body"?:{…}` is
/// merged into the top level of every request body; a field the library writes itself
/// (`"model"`, `"messages"`, `"tools"`, `"stream"`, `"temperature"`, `"max_tokens"`, the
/// thinking fields, …) gives `ARK_AGENT_RESULT_EXTRA_BODY_CONFLICT`. The summarizer model
/// is checked the same way, and its `"wire_format"` too.
/// `tools` and `workers` may be NULL (`tools` holding a tool named
/// `ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME` on a runtime that compresses, or
/// `ARKAGENT_DELEGATE_TASK_TOOL_NAME` on one that delegates, gives
/// `ARK_AGENT_RESULT_INVALID_TOOL`: those names are the library's); workers enable delegation with
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
    let set = match handles::check_optional::<_, Mutex<ToolSet>>(Kind::Tools, tools)? {
        None => ToolSet::default(),
        Some(shared) => shared.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?.clone(),
    };
    let mut config = AgentRuntimeConfig::from_json(json, set.registry)?;
    config.tool_policy = set.policy;
    config.image_codec = set.image_codec;
    if let Some(auth) = &set.mcp_auth {
        // MCP-1: the config's servers with the tool set's auth callback.
        let with_auth = |s: &arkagent::mcp::McpServer| arkagent::mcp::McpServer::new(arkagent::mcp::McpServerConfig { auth: Some(Arc::clone(auth)), ..s.config().clone() });
        config.mcp_servers = config.mcp_servers.iter().map(with_auth).collect::<Result<_, _>>()?;
    }
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
        config.compression = Some(Compression::Custom(Arc::new(ForeignCompressor::new(call, Some(threshold)))));
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
/// `threshold` is the runtime's trigger: before a model call and after a turn the
/// compressor is called only when the prompt size reaches it (and a model call was made
/// since the last compression, whether or not it reported a usage: else
/// `last_usage_is_compression`); below it the runtime skips (`below_threshold`) without calling.
/// Pass `ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD` (64000, the default compressor's) for
/// the default; 0 means what it means on every surface: nothing is below it, so the
/// compressor is called before every model call and after every turn (except while
/// automatic attempts back off after a failed one — skipped with
/// `backing_off_after_failure` until three more model calls were made — and right
/// after a compression). `arkagent_runtime_compress_now` and a context overflow always
/// call it. It is reported in the `compression` and `model_request` events
/// (`"threshold"`, `"compression_threshold"`).
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

/// Frees a runtime; an active run is cancelled and finishes on its own thread, and a
/// blocking call that another thread was starting on it as it was freed returns
/// `ARK_AGENT_RESULT_CANCELLED` without running. NULL and already-freed handles are
/// ignored.
#[no_mangle]
pub extern "C" fn arkagent_runtime_free(runtime: *mut ArkAgentRuntime) {
    free_boundary(|| {
        let handle = handles::remove::<_, RuntimeHandle>(Kind::Runtime, runtime)?;
        // A blocking call another thread is starting right now is refused, not run.
        handle.runtime.close();
        Ok(())
    });
}

pub(crate) fn runtime_handle(runtime: *const ArkAgentRuntime) -> FfiResult<Arc<RuntimeHandle>> {
    handles::get(Kind::Runtime, runtime)
}

/// The body of a getter that writes JSON: checks `out` (NULL_ARGUMENT), then the handle,
/// then writes the JSON of what `read` returns to `*out`.
///
/// # Safety
/// `out` NULL or valid for one pointer write.
pub(crate) unsafe fn write_runtime_json<T: serde::Serialize>(
    runtime: *const ArkAgentRuntime,
    out: *mut *mut c_char,
    read: impl FnOnce(&AgentRuntime) -> T,
) -> FfiResult<()> {
    let out = out_arg(out, "out")?;
    let value = read(&runtime_handle(runtime)?.runtime);
    // SAFETY: forwarded contract.
    unsafe { write_out_json(out, &value) }
}
