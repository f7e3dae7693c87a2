//! The C types of the host callbacks (HTTP, tools, events) and of the completion
//! handles the host finishes requests with (FFI-3).

use std::ffi::{c_char, c_void};



/// Opaque: one HTTP request the host must finish with exactly one of
/// [`arkagent_http_complete`], [`arkagent_http_fail`], or [`arkagent_http_stream_begin`]
/// followed by chunks and [`arkagent_http_stream_end`] (or `arkagent_http_fail`). After
/// that final call every completion function gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`
/// for it; finishing it after the library stopped wanting the response (the run was
/// cancelled, the request timed out, the runtime was freed: see
/// [`ArkAgentHttpCancelCallback`]) is allowed and ignored (`ARK_AGENT_RESULT_OK`), and
/// still releases the handle. A handle is a number the library checks, never memory: a
/// late or racing call on it cannot touch freed memory, and numbers are never reused.
pub struct ArkAgentHttpCompletion {
    _private: [u8; 0],
}

/// Opaque: one tool call the host must finish with [`arkagent_tool_complete`] or
/// [`arkagent_tool_fail`], exactly once; later calls give
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`. Finishing it after the
/// run was cancelled or the runtime freed is allowed and ignored.
pub struct ArkAgentToolCompletion {
    _private: [u8; 0],
}

/// One request header: `name` and `value` are NUL-terminated UTF-8, borrowed from the
/// library and valid only during the [`ArkAgentHttpSendCallback`] call that received them.
#[repr(C)]
pub struct ArkAgentHttpHeader {
    /// Header name, e.g. `Authorization`.
    pub name: *const c_char,
    /// Header value.
    pub value: *const c_char,
}

/// One HTTP request the library wants sent (PERF-8), as [`ArkAgentHttpSendCallback`]
/// receives it. Every pointer in it is borrowed from the library and valid only during
/// that call (the struct too): copy what you need before returning.
#[repr(C)]
pub struct ArkAgentHttpRequest {
    /// The method, NUL-terminated (`"POST"` for chat completions).
    pub method: *const c_char,
    /// The absolute URL, NUL-terminated.
    pub url: *const c_char,
    /// `header_count` headers, in order; the `Authorization` header (the API key) is one
    /// of them and is nowhere else in the request: never log headers.
    pub headers: *const ArkAgentHttpHeader,
    /// How many entries `headers` has.
    pub header_count: usize,
    /// The body: `body_len` bytes of UTF-8 JSON, to send as they are. Use `body_len`
    /// (the bytes are not NUL-terminated); not escaped, not copied: it points into the
    /// library's own request, and a retry of the request lends the same bytes again.
    pub body: *const u8,
    /// Length of `body` in bytes.
    pub body_len: usize,
    /// True when the library asked for an SSE stream: deliver the body chunk by chunk
    /// (`arkagent_http_stream_begin` / `_chunk` / `_end`) as it arrives.
    pub stream: bool,
}

/// Sends one HTTP request (FFI-3, PERF-8). Called on the thread running a blocking call
/// (`arkagent_runtime_run`, `_compress_now`, `_run_decomposed`). `request` and every
/// pointer in it are valid only during the call; copy what you need. Finish `completion`
/// inside the callback or later from any thread (see [`ArkAgentHttpCompletion`]).
pub type ArkAgentHttpSendCallback = Option<
    unsafe extern "C" fn(userdata: *mut c_void, request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion),
>;

/// Aborts one request (OHOS-7): the library no longer wants its response because the run
/// was cancelled, the request timed out (`request_timeout_ms`), the runtime was freed, or
/// a stream's body is no longer needed (after `[DONE]`). Abort the socket at once; there
/// is no need to answer first.
///
/// - Called at most once per request, promptly (not when the next chunk arrives), on a
///   library thread (named "arkagent"), for requests not answered yet and for streams
///   whether or not they have begun — also while `send` for that request is still
///   running on the blocking call's thread (a run cancelled then ends `"cancelled"`).
///   A timeout is the exception: it is noticed on that thread, so a `send` that blocks
///   until its response arrives is not cut off by `request_timeout_ms` (what it finished
///   is used) — return from `send` at once to have the timeout hold.
/// - Never called for a request the host had finished (`arkagent_http_complete`,
///   `arkagent_http_fail` or `arkagent_http_stream_end` returned) before the library
///   stopped wanting it: a finishing call that races a running cancel callback waits
///   until the callback has returned (so once any finishing call has returned, `cancel`
///   for that request has returned or will never be called). The one exception: a
///   finishing call made from inside a cancel callback never waits (two callbacks
///   finishing each other's requests would wait for each other).
/// - Every blocking call (`arkagent_runtime_run`, `_compress_now`, `_run_decomposed`)
///   returns only after the cancel callbacks it caused have returned, and waits for no
///   other call's.
/// - Because of both waits, the callback must not block, nor wait for a lock held (or a
///   thread blocked) while calling a finishing function or the blocking call that caused
///   the cancel: either would deadlock.
/// - `completion` is the handle `send` was given for that request. The cancel does not
///   finish it: it stays valid until the host finishes it (next point).
/// - After cancel, finish the request as usual (e.g. `arkagent_http_fail` from the abort
///   path, even inside the cancel callback): that call returns `ARK_AGENT_RESULT_OK` and
///   is ignored, and releases the handle; `arkagent_http_stream_begin` returns
///   `ARK_AGENT_RESULT_OK`, `arkagent_http_stream_chunk` returns
///   `ARK_AGENT_RESULT_CANCELLED`.
pub type ArkAgentHttpCancelCallback = Option<unsafe extern "C" fn(userdata: *mut c_void, completion: *mut ArkAgentHttpCompletion)>;

/// The host's HTTP client, given to `arkagent_runtime_new` /
/// `arkagent_runtime_new_with_compressor` (copied; the struct itself need not outlive
/// that call).
#[repr(C)]
pub struct ArkAgentHttp {
    /// Sends a request; required (NULL gives `ARK_AGENT_RESULT_NULL_ARGUMENT`).
    pub send: ArkAgentHttpSendCallback,
    /// Aborts a request the library stopped waiting for; may be NULL (then the host can
    /// poll [`arkagent_http_is_cancelled`], or learn it from
    /// `arkagent_http_stream_chunk`'s `ARK_AGENT_RESULT_CANCELLED`).
    pub cancel: ArkAgentHttpCancelCallback,
    /// Passed back to both callbacks; used from library threads until the runtime is
    /// freed and no blocking call is running.
    pub userdata: *mut c_void,
}

/// Runs a tool. Called on the thread running `arkagent_runtime_run`; several calls of
/// one turn may be outstanding at once. `call_json` (`{"call_id","name","arguments":{…},
/// "session_id","run_id"}`) is valid only during the call. Finish `completion` inside the
/// callback or later from any thread; while the callback blocks, the call's deadline and a
/// cancel wait for it to return (see [`arkagent_tool_abort_reason`]). Until it is finished, `completion` also reaches the
/// calling runtime's read-only episodic memory and its memory namespace (seed 000 §3:
/// every tool gets the MemoryService): `arkagent_tool_episodes`,
/// `arkagent_tool_find_episode`, `arkagent_tool_memory_store`, `arkagent_tool_memory_recall`,
/// `arkagent_tool_memory_forget`, `arkagent_tool_memory_ids`, `arkagent_tool_memory_stats`.
pub type ArkAgentToolCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, call_json: *const c_char, completion: *mut ArkAgentToolCompletion)>;

/// TOOL-4: told once, on a library thread, that a tool call's abort signal fired, with
/// the reason (an `ArkAgentToolAbort` value); registered with `arkagent_tool_on_abort`.
/// The completion stays valid to finish (the result is ignored). Never called after the
/// blocking call that started the tool call returned.
pub type ArkAgentToolAbortCallback = Option<unsafe extern "C" fn(userdata: *mut c_void, reason: i32)>;

/// Receives one event (an `AgentEvent`: its correlation keys and one event type's keys,
/// every type listed in `include/JSON-SHAPES.md`, generated from the Rust types), in order, on
/// the thread running `arkagent_runtime_run`. `event_json` is valid only during the call.
/// A `"model_request"` event's `"prompt_size_source"` names the figure that decided its
/// `"estimated_prompt_tokens"`: `"estimate"`, `"calibrated"` (corrected from the model's
/// earlier `prompt_tokens`; exported with the state as `"token_calibration"`) or
/// `"provider"`.
/// Do not call blocking arkagent functions from it (they return
/// `ARK_AGENT_RESULT_REENTRANT`, whichever call emitted the event). A runtime with a session store
/// (`arkagent_runtime_attach_store`) also emits `"session_committed"` (`commit_seq`,
/// `message_count`) after each commit: what it covers survives the process being killed.
/// COST-2: a `"model_response"` event's `"usage"` carries `"cost":{"currency","nanos"}`
/// when the model config has a `"price"` (absent otherwise, never 0); `"run_finished"`
/// carries `"usage"`, what the run used (as `arkagent_runtime_run`'s outcome). Every run
/// — `arkagent_runtime_run` and `arkagent_runtime_run_decomposed` alike — begins with
/// `"run_started"` and ends with `"run_finished"`. THINK-5: `"reasoning_delta"`
/// (`"iteration"`, `"delta"`) carries the model's reasoning as it streams (a whole
/// answer's at once), and `"redacted":true` with an empty `"delta"` for a block the
/// provider encrypted (Anthropic `redacted_thinking`).
pub type ArkAgentEventCallback = Option<unsafe extern "C" fn(userdata: *mut c_void, event_json: *const c_char)>;

/// Host userdata: the host promises it may be used from any thread until the owning
/// handle is freed and no run is active.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
// SAFETY: the header documents that userdata is used from library threads; the host
// guarantees thread-safety of what it points to.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

impl UserData {
    /// The pointer (a method, so closures capture the whole `Send` wrapper).
    pub(crate) fn get(self) -> *mut c_void {
        self.0
    }
}
