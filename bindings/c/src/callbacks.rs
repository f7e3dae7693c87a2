//! Host callbacks (HTTP, tools, events) and the completion handles the host finishes
//! requests with (FFI-3).

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::boundary::boundary;
use crate::codes::{ArkAgentResult, ArkAgentTransportError, FfiError, FfiResult, poisoned};
use crate::handles::{self, Kind};
use crate::strings::{opt_str_arg, str_arg};
use arkagent::llm::host_call::{HostCall, HostCallPhase, HostCallView};
use arkagent::llm::{parse_host_headers, BodySender, BodyStream, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
use arkagent::runtime::{AgentEvent, AgentObserver};
use arkagent::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};

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
/// callback or later from any thread. Until it is finished, `completion` also reaches the
/// calling runtime's read-only episodic memory and its memory namespace (seed 000 §3:
/// every tool gets the MemoryService): `arkagent_tool_episodes`,
/// `arkagent_tool_find_episode`, `arkagent_tool_memory_store`, `arkagent_tool_memory_recall`,
/// `arkagent_tool_memory_forget`, `arkagent_tool_memory_ids`, `arkagent_tool_memory_stats`.
pub type ArkAgentToolCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, call_json: *const c_char, completion: *mut ArkAgentToolCompletion)>;

/// Receives one event (`{"session_id","run_id","seq","at_ms","type",…}`), in order, on
/// the thread running `arkagent_runtime_run`. `event_json` is valid only during the call.
/// A `"model_request"` event's `"prompt_size_source"` names the figure that decided its
/// `"estimated_prompt_tokens"`: `"estimate"`, `"calibrated"` (corrected from the model's
/// earlier `prompt_tokens`; exported with the state as `"token_calibration"`) or
/// `"provider"`.
/// Do not call blocking arkagent functions from it. A runtime with a session store
/// (`arkagent_runtime_attach_store`) also emits `"session_committed"` (`commit_seq`,
/// `message_count`) after each commit: what it covers survives the process being killed.
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

// ---------------------------------------------------------------- HTTP

type Reply = oneshot::Sender<Result<HttpResponse, TransportError>>;

/// What an open HTTP request keeps for its answer; the protocol around it (who wins a
/// race, cancel at most once, late calls ignored: FFI-3, OHOS-7) is the core's
/// [`HostCall`].
enum Pending {
    /// Waiting for the host's answer.
    Waiting(Reply),
    /// `arkagent_http_stream_begin` answered; chunks flow until `_end` or `_fail`.
    Streaming(BodySender),
}

type HttpPhase = HostCallPhase<Pending>;

/// One request's state behind its completion handle.
pub(crate) struct HttpCompletionState {
    call: Arc<HostCall<Pending>>,
}

impl HttpCompletionState {
    pub(crate) fn new(reply: Reply) -> Self {
        Self { call: Arc::new(HostCall::new(Pending::Waiting(reply))) }
    }
}

pub(crate) struct HostTransport {
    pub send: unsafe extern "C" fn(*mut c_void, *const ArkAgentHttpRequest, *mut ArkAgentHttpCompletion),
    pub cancel: ArkAgentHttpCancelCallback,
    pub userdata: UserData,
}

impl HostTransport {
    /// Checks the host's `ArkAgentHttp` (NULL struct or NULL `send`: `NULL_ARGUMENT`).
    ///
    /// # Safety
    /// `http` NULL or valid for one read.
    pub(crate) unsafe fn from_c(http: *const ArkAgentHttp) -> FfiResult<Self> {
        // SAFETY: forwarded contract.
        let http = unsafe { http.as_ref() }.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "http is NULL"))?;
        let send = http.send.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "http.send is NULL"))?;
        Ok(Self { send, cancel: http.cancel, userdata: UserData(http.userdata) })
    }
}

/// The NUL-terminated copies of a request's method, URL and headers (a few hundred
/// bytes); the body is lent as it is.
struct CStrings {
    method: CString,
    url: CString,
    headers: Vec<(CString, CString)>,
}

impl CStrings {
    fn new(request: &HttpRequest) -> Result<Self, TransportError> {
        let c = |s: &str| CString::new(s).map_err(|_| TransportError::network("the request contains NUL"));
        let headers = request.headers.iter().map(|(n, v)| Ok((c(n)?, c(v)?))).collect::<Result<_, TransportError>>()?;
        Ok(Self { method: c(&request.method)?, url: c(&request.url)?, headers })
    }
}

#[async_trait]
impl HttpTransport for HostTransport {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let (tx, rx) = oneshot::channel();
        let strings = CStrings::new(&request)?;
        let state = Arc::new(HttpCompletionState::new(tx));
        let completion = handles::insert::<ArkAgentHttpCompletion, _>(Kind::HttpCompletion, Arc::clone(&state));
        watch_for_cancel(&state, completion, cancel.clone(), self.cancel, self.userdata);
        {
            let headers: Vec<ArkAgentHttpHeader> =
                strings.headers.iter().map(|(name, value)| ArkAgentHttpHeader { name: name.as_ptr(), value: value.as_ptr() }).collect();
            // Borrows `strings`, `headers` and the body (`request` owns its Arc) for the call.
            let c_request = ArkAgentHttpRequest {
                method: strings.method.as_ptr(),
                url: strings.url.as_ptr(),
                headers: headers.as_ptr(),
                header_count: headers.len(),
                body: request.body.as_ptr(),
                body_len: request.body.len(),
                stream: request.stream,
            };
            // SAFETY: the host registered this callback and promised userdata stays valid;
            // every pointer in `c_request` outlives the call.
            unsafe { (self.send)(self.userdata.0, &c_request, completion) };
        }
        drop((strings, request));
        match rx.await {
            Ok(answer) => answer,
            // Cancelled while the host's `send` was still running (the cancel released the
            // reply): the attempt was cancelled, not failed by the host.
            Err(_) if cancel.is_cancelled() => {
                Err(TransportError { kind: TransportErrorKind::Cancelled, message: "the request was cancelled".into() })
            }
            Err(_) => Err(TransportError::network("the host dropped the HTTP completion")),
        }
    }
}

// ------------------------------------------------ cancellation reaching the host (OHOS-7)

/// Tells the host (its cancel callback, on a library thread) when the library stops
/// wanting this request's response before the host finished it ([`HostCall::watch`]).
fn watch_for_cancel(
    state: &HttpCompletionState,
    completion: *mut ArkAgentHttpCompletion,
    cancel: CancellationToken,
    callback: ArkAgentHttpCancelCallback,
    userdata: UserData,
) {
    let completion = completion as usize;
    state.call.watch(cancel, callback.map(|callback| move || call_cancel(callback, completion, userdata)));
}

type CancelFn = unsafe extern "C" fn(*mut c_void, *mut ArkAgentHttpCompletion);

fn call_cancel(callback: CancelFn, completion: usize, userdata: UserData) {
    // SAFETY: the host registered this callback and promised userdata stays valid until
    // no blocking call runs; the blocking call that started the watch waits for it (CancelScope).
    unsafe { callback(userdata.get(), completion as *mut ArkAgentHttpCompletion) };
}

/// Whether the library no longer wants `completion`'s response (OHOS-7), for hosts that
/// poll instead of (or besides) setting a cancel callback: `true` once the run was
/// cancelled, the request timed out, the runtime was freed or the body is no longer
/// needed (whether or not a cancel callback was set), and for a NULL, finished or
/// unknown handle (stop in every case); `false` while the response is still wanted.
/// Never blocks. Any thread.
#[no_mangle]
pub extern "C" fn arkagent_http_is_cancelled(completion: *const ArkAgentHttpCompletion) -> bool {
    let mut wanted = false;
    let _ = boundary(|| {
        let state: Arc<HttpCompletionState> = handles::get(Kind::HttpCompletion, completion)?;
        wanted = state.call.inspect(|phase| match phase {
            HostCallView::Open(Pending::Waiting(reply)) => !reply.is_closed(),
            HostCallView::Open(Pending::Streaming(_)) => true,
            HostCallView::Requested | HostCallView::Cancelled | HostCallView::Done => false,
        });
        Ok(())
    });
    !wanted
}

fn headers_arg(headers_json: *const c_char) -> FfiResult<Vec<(String, String)>> {
    // SAFETY: caller contract of the exported functions below.
    match unsafe { opt_str_arg(headers_json, "headers_json") }? {
        Some(json) => Ok(parse_host_headers(json)?),
        None => Ok(Vec::new()),
    }
}

fn bytes_arg(data: *const u8, len: usize, what: &str) -> FfiResult<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if data.is_null() {
        return Err(FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL with a non-zero length")));
    }
    // SAFETY: the host passes `len` readable bytes at `data`.
    Ok(unsafe { std::slice::from_raw_parts(data, len) }.to_vec())
}

fn status_arg(status: u16) -> FfiResult<u16> {
    if (100..=599).contains(&status) {
        Ok(status)
    } else {
        Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("HTTP status {status} is outside 100..=599")))
    }
}

fn already_completed() -> FfiError {
    FfiError::new(ArkAgentResult::AlreadyCompleted, "this HTTP request was already answered")
}

fn not_streaming() -> FfiError {
    FfiError::new(ArkAgentResult::StreamNotStarted, "arkagent_http_stream_begin was not called")
}

/// Applies `step` to the request's phase ([`HostCall::finish`]: a cancel callback running
/// on another thread is waited out first, and after a cancel `step` sees `Cancelled`);
/// when the new phase is `Done`, unregisters the handle. All arguments are validated
/// before this is called.
fn transition(
    completion: *mut ArkAgentHttpCompletion,
    step: impl FnOnce(HttpPhase) -> (HttpPhase, FfiResult<()>),
) -> FfiResult<()> {
    let state: Arc<HttpCompletionState> = handles::get(Kind::HttpCompletion, completion)?;
    // Under the phase lock, so a loser that already holds the state sees `Done`, and one
    // that looks the handle up afterwards gets ALREADY_COMPLETED from the registry.
    state.call.finish(step, || {
        let _ = handles::remove::<_, HttpCompletionState>(Kind::HttpCompletion, completion);
    })
}

/// The step every finishing call takes on a cancelled request: ignored, and the handle is
/// released.
fn ignored_after_cancel() -> (HttpPhase, FfiResult<()>) {
    (HttpPhase::Done, Ok(()))
}

/// Finishes `completion` with a whole response. `status` must be 100..=599
/// (`ARK_AGENT_RESULT_INVALID_ARGUMENT` otherwise). `headers_json`
/// (`[{"name","value"}]`) may be NULL; `body` may be NULL when `body_len` is 0. Consumes
/// `completion`. Any thread. A completion already finished (by any completion function,
/// on any thread) gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`; of two racing calls exactly
/// one returns `ARK_AGENT_RESULT_OK`.
///
/// # Safety
/// `headers_json` NULL or a NUL-terminated string; `body` valid for `body_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_complete(
    completion: *mut ArkAgentHttpCompletion,
    status: u16,
    headers_json: *const c_char,
    body: *const u8,
    body_len: usize,
) -> ArkAgentResult {
    boundary(|| {
        let status = status_arg(status)?;
        let headers = headers_arg(headers_json)?;
        let body = bytes_arg(body, body_len, "body")?;
        transition(completion, |phase| match phase {
            HttpPhase::Open(Pending::Waiting(reply)) => {
                // A closed receiver means the run stopped waiting (cancelled): ignore.
                let _ = reply.send(Ok(HttpResponse { status, headers, body: HttpBody::Full(body) }));
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Cancelled => ignored_after_cancel(),
            other => (other, Err(already_completed())),
        })
    })
}

/// Finishes `completion` with a transport failure. `kind` is an
/// `ArkAgentTransportError` value as a plain integer (0 network, 1 timeout; anything else
/// gives `ARK_AGENT_RESULT_INVALID_ARGUMENT` and leaves the request open). `message` may
/// be NULL. Consumes `completion`; also ends a started stream with that error. Any
/// thread; races as [`arkagent_http_complete`].
///
/// # Safety
/// `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_fail(
    completion: *mut ArkAgentHttpCompletion,
    kind: i32,
    message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let kind = ArkAgentTransportError::from_c(kind)?;
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("transport failure").to_owned();
        let error = match kind {
            ArkAgentTransportError::Timeout => TransportError::timeout(message),
            ArkAgentTransportError::Network => TransportError::network(message),
        };
        transition(completion, |phase| match phase {
            HttpPhase::Open(Pending::Waiting(reply)) => {
                let _ = reply.send(Err(error));
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Open(Pending::Streaming(sender)) => {
                sender.fail(error);
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Cancelled => ignored_after_cancel(),
            other => (other, Err(already_completed())),
        })
    })
}

/// Starts a streamed response: status (100..=599) and headers now, body chunks later
/// through [`arkagent_http_stream_chunk`], then [`arkagent_http_stream_end`] (or
/// [`arkagent_http_fail`]). Any thread. Of racing calls that answer the request
/// (`arkagent_http_complete`, `arkagent_http_fail`, this) exactly one wins and the others
/// get `ARK_AGENT_RESULT_ALREADY_COMPLETED`; the one exception is a stream this call
/// started, which a later `arkagent_http_fail` (or `_stream_end`) still ends.
///
/// # Safety
/// `headers_json` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_begin(
    completion: *mut ArkAgentHttpCompletion,
    status: u16,
    headers_json: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let status = status_arg(status)?;
        let headers = headers_arg(headers_json)?;
        transition(completion, |phase| match phase {
            HttpPhase::Open(Pending::Waiting(reply)) => {
                let (sender, stream) = BodyStream::channel();
                let _ = reply.send(Ok(HttpResponse { status, headers, body: HttpBody::Stream(stream) }));
                (HttpPhase::Open(Pending::Streaming(sender)), Ok(()))
            }
            // After a cancel the host may still begin; its chunks then get CANCELLED.
            HttpPhase::Cancelled => (HttpPhase::Cancelled, Ok(())),
            other => (other, Err(already_completed())),
        })
    })
}

/// Pushes one body chunk (boundaries may fall anywhere, even inside a UTF-8 character).
/// Returns `ARK_AGENT_RESULT_CANCELLED` when the library no longer reads (stop sending),
/// `ARK_AGENT_RESULT_STREAM_NOT_STARTED` before `arkagent_http_stream_begin`, and
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED` after the stream ended. Never blocks. Any thread.
///
/// # Safety
/// `data` valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_chunk(
    completion: *mut ArkAgentHttpCompletion,
    data: *const u8,
    len: usize,
) -> ArkAgentResult {
    boundary(|| {
        let chunk = bytes_arg(data, len, "data")?;
        let state: Arc<HttpCompletionState> = handles::get(Kind::HttpCompletion, completion)?;
        state.call.inspect(|phase| match phase {
            HostCallView::Open(Pending::Streaming(sender)) if sender.send(chunk) => Ok(()),
            HostCallView::Open(Pending::Streaming(_)) | HostCallView::Requested | HostCallView::Cancelled => {
                Err(FfiError::new(ArkAgentResult::Cancelled, "the request was cancelled"))
            }
            HostCallView::Open(Pending::Waiting(_)) => Err(not_streaming()),
            HostCallView::Done => Err(already_completed()),
        })
    })
}

/// Ends a streamed body. `error_message` NULL for a clean end, else the body ends with a
/// network error. Consumes `completion`. Any thread. Before
/// `arkagent_http_stream_begin` it gives `ARK_AGENT_RESULT_STREAM_NOT_STARTED` (the
/// request stays open); after the end, `ARK_AGENT_RESULT_ALREADY_COMPLETED`.
///
/// # Safety
/// `error_message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_end(
    completion: *mut ArkAgentHttpCompletion,
    error_message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let error = unsafe { opt_str_arg(error_message, "error_message") }?;
        transition(completion, |phase| match phase {
            HttpPhase::Open(Pending::Streaming(sender)) => {
                if let Some(message) = error {
                    sender.fail(TransportError::network(message));
                }
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Open(Pending::Waiting(reply)) => (HttpPhase::Open(Pending::Waiting(reply)), Err(not_streaming())),
            HttpPhase::Cancelled => ignored_after_cancel(),
            other => (other, Err(already_completed())),
        })
    })
}

// ---------------------------------------------------------------- tools

pub(crate) struct ToolCompletionState {
    reply: Mutex<Option<oneshot::Sender<ToolResult>>>,
    /// The calling runtime's services (MEM-1, MEM-4) for `arkagent_tool_*` while open.
    pub(crate) context: Option<ToolContext>,
}

pub(crate) struct HostTool {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut ArkAgentToolCompletion),
    pub userdata: UserData,
}

#[async_trait]
impl ToolExecutor for HostTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        let (tx, rx) = oneshot::channel();
        let payload = json!({
            "call_id": call.call_id, "name": call.name, "arguments": call.arguments,
            "session_id": ctx.session_id, "run_id": ctx.run_id,
        });
        let context = Some(ctx);
        let Ok(json) = CString::new(payload.to_string()) else {
            return ToolResult::error("tool_failed", "the call could not be encoded");
        };
        let completion = handles::insert::<ArkAgentToolCompletion, _>(
            Kind::ToolCompletion,
            Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context }),
        );
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr(), completion) };
        drop(json);
        rx.await.unwrap_or_else(|_| ToolResult::error("tool_failed", "the host dropped the tool completion"))
    }
}

/// Finishes a tool call with `content` (what the model sees). `is_error` is a plain
/// integer flag: 0 success, 1 failure (anything else gives
/// `ARK_AGENT_RESULT_INVALID_ARGUMENT` and leaves the call open). Consumes `completion`.
/// Any thread. A call already finished (by this function or [`arkagent_tool_fail`])
/// gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`; of two racing calls exactly one returns
/// `ARK_AGENT_RESULT_OK`.
///
/// # Safety
/// `content` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_complete(
    completion: *mut ArkAgentToolCompletion,
    content: *const c_char,
    is_error: i32,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let content = unsafe { str_arg(content, "content") }?;
        let is_error = match is_error {
            0 => false,
            1 => true,
            other => return Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("is_error {other} is not 0 or 1"))),
        };
        finish_tool(completion, if is_error { ToolResult::failure(content) } else { ToolResult::ok(content) })
    })
}

/// Finishes a tool call as failed with a stable error code of the tool's own (CORE-2):
/// the model sees `{"error":{"code":"<code>","message":"<message>"}}` and the
/// `tool_call_finished` event carries `"is_error":true,"error_code":"<code>"`. `code`
/// must be non-blank (`ARK_AGENT_RESULT_INVALID_ARGUMENT` otherwise, the call stays
/// open); `message` may be NULL (then empty). Both are copied before the call returns.
/// Consumes `completion`. Any thread. Races with [`arkagent_tool_complete`] and itself
/// exactly as `arkagent_tool_complete` does: one winner, the others get
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`; after the run was cancelled or the runtime freed
/// it is allowed and ignored.
///
/// # Safety
/// `code` a NUL-terminated string; `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_fail(
    completion: *mut ArkAgentToolCompletion,
    code: *const c_char,
    message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let code = unsafe { str_arg(code, "code") }?;
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("");
        if code.trim().is_empty() {
            return Err(FfiError::new(ArkAgentResult::InvalidArgument, "code is blank"));
        }
        finish_tool(completion, ToolResult::failure_with_code(code, message))
    })
}

/// Hands `result` to the waiting call; exactly one caller per completion gets `Ok`.
fn finish_tool(completion: *mut ArkAgentToolCompletion, result: ToolResult) -> FfiResult<()> {
    let state: Arc<ToolCompletionState> = handles::get(Kind::ToolCompletion, completion)?;
    let mut slot = state.reply.lock().map_err(|_| poisoned())?;
    let reply = slot
        .take()
        .ok_or_else(|| FfiError::new(ArkAgentResult::AlreadyCompleted, "this tool call was already answered"))?;
    // Under the lock, as for HTTP completions.
    let _ = handles::remove::<_, ToolCompletionState>(Kind::ToolCompletion, completion);
    drop(slot);
    let _ = reply.send(result);
    Ok(())
}

/// Registers a host tool from its JSON definition (shared by tool sets and workers).
/// Checks every argument before registering anything.
pub(crate) fn register_host_tool(
    registry: &mut ToolRegistry,
    definition_json: &str,
    callback: ArkAgentToolCallback,
    userdata: *mut c_void,
) -> FfiResult<()> {
    let callback = callback.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "callback is NULL"))?;
    let definition: ToolDefinition = serde_json::from_str(definition_json).map_err(arkagent::ArkAgentError::from)?;
    registry.register(definition, Arc::new(HostTool { callback, userdata: UserData(userdata) }))?;
    Ok(())
}

// ---------------------------------------------------------------- events

pub(crate) struct HostObserver {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char),
    pub userdata: UserData,
}

impl AgentObserver for HostObserver {
    fn on_event(&self, event: &AgentEvent) {
        let Ok(json) = serde_json::to_string(event) else { return };
        let Ok(json) = CString::new(json) else { return };
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::atomic::Ordering;
    use std::sync::{mpsc, Barrier};

    use super::*;

    /// What the cancel watcher does when the token fires: cancels the request unless the
    /// host finished it first, calling the host's cancel callback.
    fn cancel_request(state: &HttpCompletionState, completion: usize, callback: ArkAgentHttpCancelCallback, userdata: UserData) {
        state.call.cancel(callback.map(|callback| move || call_cancel(callback, completion, userdata)));
    }

    const THREADS: usize = 8;
    const ITERATIONS: usize = 300;

    /// A completion call as a racing thread makes it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Op {
        Complete,
        Fail,
        StreamBegin,
        StreamEnd,
        ToolComplete,
        ToolFail,
    }

    fn call(op: Op, handle: usize) -> ArkAgentResult {
        let http = handle as *mut ArkAgentHttpCompletion;
        // SAFETY: static strings and bodies; the handle is only a number to the library.
        unsafe {
            match op {
                Op::Complete => arkagent_http_complete(http, 200, std::ptr::null(), b"{}".as_ptr(), 2),
                Op::Fail => arkagent_http_fail(http, 0, c"boom".as_ptr()),
                Op::StreamBegin => arkagent_http_stream_begin(http, 200, std::ptr::null()),
                Op::StreamEnd => arkagent_http_stream_end(http, std::ptr::null()),
                Op::ToolComplete => arkagent_tool_complete(handle as *mut ArkAgentToolCompletion, c"done".as_ptr(), 0),
                Op::ToolFail => arkagent_tool_fail(handle as *mut ArkAgentToolCompletion, c"db_locked".as_ptr(), c"locked".as_ptr()),
            }
        }
    }

    /// Eight threads that, per round, each make one call on the same handle at once.
    struct Racers {
        start: Arc<Barrier>,
        jobs: Vec<mpsc::Sender<Option<(Op, usize)>>>,
        results: mpsc::Receiver<(Op, ArkAgentResult)>,
        threads: Vec<std::thread::JoinHandle<()>>,
    }

    impl Racers {
        fn new() -> Self {
            let start = Arc::new(Barrier::new(THREADS));
            let (result_tx, results) = mpsc::channel();
            let mut jobs = Vec::new();
            let mut threads = Vec::new();
            for _ in 0..THREADS {
                let (tx, rx) = mpsc::channel::<Option<(Op, usize)>>();
                let start = Arc::clone(&start);
                let result_tx = result_tx.clone();
                threads.push(std::thread::spawn(move || {
                    while let Ok(Some((op, handle))) = rx.recv() {
                        start.wait();
                        result_tx.send((op, call(op, handle))).unwrap();
                    }
                }));
                jobs.push(tx);
            }
            Self { start, jobs, results, threads }
        }

        /// Threads alternate between `a` and `b`; returns every thread's (op, result).
        fn race(&self, a: Op, b: Op, handle: usize) -> Vec<(Op, ArkAgentResult)> {
            let _ = &self.start;
            for (i, job) in self.jobs.iter().enumerate() {
                job.send(Some((if i % 2 == 0 { a } else { b }, handle))).unwrap();
            }
            (0..THREADS).map(|_| self.results.recv().unwrap()).collect()
        }
    }

    impl Drop for Racers {
        fn drop(&mut self) {
            for job in &self.jobs {
                let _ = job.send(None);
            }
            for t in self.threads.drain(..) {
                let _ = t.join();
            }
        }
    }

    fn winner(results: &[(Op, ArkAgentResult)]) -> Op {
        let winners: Vec<_> = results.iter().filter(|(_, r)| *r == ArkAgentResult::Ok).collect();
        assert_eq!(winners.len(), 1, "exactly one winner: {results:?}");
        for (_, r) in results {
            assert!(matches!(r, ArkAgentResult::Ok | ArkAgentResult::AlreadyCompleted), "loser got {r:?}: {results:?}");
        }
        winners[0].0
    }

    #[test]
    fn ffi_2_racing_http_completions_have_exactly_one_winner_whose_answer_arrives() {
        let racers = Racers::new();
        let first = [Op::Complete, Op::Fail, Op::StreamBegin];
        for (i, &a) in first.iter().enumerate() {
            for &b in &first[i..] {
                for _ in 0..ITERATIONS {
                    let (tx, mut rx) = oneshot::channel();
                    let handle: *mut ArkAgentHttpCompletion =
                        handles::insert(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
                    let results = racers.race(a, b, handle as usize);
                    let answer = rx.try_recv().expect("an answer reached the run");
                    let oks: Vec<Op> = results.iter().filter(|(_, r)| *r == ArkAgentResult::Ok).map(|(op, _)| *op).collect();
                    if oks.len() == 2 {
                        // The one legal sequence of two: a stream is begun, then failed (which
                        // ends it). Every other call lost.
                        assert!(oks.contains(&Op::StreamBegin) && oks.contains(&Op::Fail), "two winners: {results:?}");
                        let Ok(HttpResponse { body: HttpBody::Stream(mut stream), .. }) = answer else {
                            panic!("stream_begin won, so the run got a stream")
                        };
                        let end = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(stream.next_chunk());
                        assert!(matches!(end, Some(Err(_))), "the failed stream ends with the error");
                        assert!(results.iter().all(|(_, r)| matches!(r, ArkAgentResult::Ok | ArkAgentResult::AlreadyCompleted)));
                    } else {
                        let won = winner(&results);
                        match (won, answer) {
                            (Op::Complete, Ok(HttpResponse { body: HttpBody::Full(_), .. }))
                            | (Op::Fail, Err(_))
                            | (Op::StreamBegin, Ok(HttpResponse { body: HttpBody::Stream(_), .. })) => {}
                            (won, other) => panic!("{won:?} won but the run got {:?}", other.map(|r| r.status)),
                        }
                        if won == Op::StreamBegin {
                            assert_eq!(call(Op::StreamEnd, handle as usize), ArkAgentResult::Ok);
                        }
                    }
                    // Every later call, of any kind, is refused the same way.
                    for op in [Op::Complete, Op::Fail, Op::StreamBegin, Op::StreamEnd] {
                        assert_eq!(call(op, handle as usize), ArkAgentResult::AlreadyCompleted, "{op:?} after the end");
                    }
                }
            }
        }
    }

    /// Counts a slow cancel callback's starts and ends.
    #[derive(Default)]
    struct CancelProbe {
        started: std::sync::atomic::AtomicUsize,
        finished: std::sync::atomic::AtomicUsize,
    }

    unsafe extern "C" fn slow_cancel(userdata: *mut c_void, _completion: *mut ArkAgentHttpCompletion) {
        // SAFETY: the test passes a live CancelProbe.
        let probe = unsafe { &*userdata.cast::<CancelProbe>() };
        probe.started.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_micros(300));
        probe.finished.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn ohos_7_a_finishing_call_racing_the_cancel_callback_returns_only_after_it_and_never_before_it() {
        for round in 0..ITERATIONS {
            let probe = CancelProbe::default();
            let userdata = UserData(std::ptr::from_ref(&probe).cast_mut().cast::<c_void>());
            let (tx, _rx) = oneshot::channel();
            let state = Arc::new(HttpCompletionState::new(tx));
            let handle = handles::insert::<ArkAgentHttpCompletion, _>(Kind::HttpCompletion, Arc::clone(&state)) as usize;
            let start = Barrier::new(2);
            let seen_at_return = std::thread::scope(|s| {
                s.spawn(|| {
                    start.wait();
                    cancel_request(&state, handle, Some(slow_cancel), userdata);
                });
                let finisher = s.spawn(|| {
                    start.wait();
                    if round % 2 == 1 {
                        std::thread::sleep(std::time::Duration::from_micros(100));
                    }
                    let op = [Op::Complete, Op::Fail, Op::StreamBegin][round % 3];
                    let result = call(op, handle);
                    // Won, or came after the cancel and was ignored: OK either way.
                    assert_eq!(result, ArkAgentResult::Ok, "{op:?}");
                    if op == Op::StreamBegin {
                        assert_eq!(call(Op::StreamEnd, handle), ArkAgentResult::Ok);
                    }
                    (probe.started.load(Ordering::SeqCst), probe.finished.load(Ordering::SeqCst))
                });
                finisher.join().unwrap()
            });
            let (started, finished) = seen_at_return;
            assert_eq!(started, finished, "a finishing call returned while the cancel callback was running");
            assert_eq!(probe.started.load(Ordering::SeqCst), started, "cancel was called after the host had finished the request");
            assert!(started <= 1);
            assert_eq!(call(Op::Complete, handle), ArkAgentResult::AlreadyCompleted);
        }
    }

    #[test]
    fn ffi_2_racing_stream_ends_have_exactly_one_winner() {
        let racers = Racers::new();
        let ends = [Op::StreamEnd, Op::Fail];
        for (i, &a) in ends.iter().enumerate() {
            for &b in &ends[i..] {
                for _ in 0..ITERATIONS {
                    let (tx, mut rx) = oneshot::channel();
                    let handle: *mut ArkAgentHttpCompletion =
                        handles::insert(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
                    assert_eq!(call(Op::StreamBegin, handle as usize), ArkAgentResult::Ok);
                    let Ok(HttpResponse { body: HttpBody::Stream(_stream), .. }) = rx.try_recv().unwrap() else {
                        panic!("stream_begin answers with a stream")
                    };
                    winner(&racers.race(a, b, handle as usize));
                    assert_eq!(call(Op::StreamEnd, handle as usize), ArkAgentResult::AlreadyCompleted);
                }
            }
        }
    }

    #[test]
    fn ffi_2_racing_tool_completions_have_exactly_one_winner() {
        let racers = Racers::new();
        for _ in 0..ITERATIONS {
            let (tx, mut rx) = oneshot::channel();
            let handle: *mut ArkAgentToolCompletion =
                handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context: None }));
            winner(&racers.race(Op::ToolComplete, Op::ToolComplete, handle as usize));
            assert!(rx.try_recv().is_ok(), "the winner's result reached the run");
            assert_eq!(call(Op::ToolComplete, handle as usize), ArkAgentResult::AlreadyCompleted);
        }
    }

    #[test]
    fn ffi_2_racing_tool_complete_and_tool_fail_have_exactly_one_winner_whose_result_arrives() {
        let racers = Racers::new();
        for _ in 0..ITERATIONS {
            let (tx, mut rx) = oneshot::channel();
            let handle: *mut ArkAgentToolCompletion =
                handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context: None }));
            let won = winner(&racers.race(Op::ToolComplete, Op::ToolFail, handle as usize));
            let result = rx.try_recv().expect("the winner's result reached the run");
            match won {
                Op::ToolComplete => assert_eq!(result, ToolResult::ok("done")),
                _ => assert_eq!(result.into_model_content(), r#"{"error":{"code":"db_locked","message":"locked"}}"#),
            }
            for op in [Op::ToolComplete, Op::ToolFail] {
                assert_eq!(call(op, handle as usize), ArkAgentResult::AlreadyCompleted, "{op:?} after the end");
            }
        }
    }

    #[test]
    fn ffi_2_tool_fail_refuses_a_blank_code_and_leaves_the_call_open() {
        let (tx, mut rx) = oneshot::channel();
        let handle: *mut ArkAgentToolCompletion =
            handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context: None }));
        // SAFETY: static strings; the handle is a number.
        unsafe {
            assert_eq!(arkagent_tool_fail(handle, c" ".as_ptr(), c"m".as_ptr()), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_tool_fail(handle, std::ptr::null(), c"m".as_ptr()), ArkAgentResult::NullArgument);
            assert!(rx.try_recv().is_err(), "nothing was answered yet");
            assert_eq!(arkagent_tool_fail(handle, c"quota".as_ptr(), std::ptr::null()), ArkAgentResult::Ok);
        }
        let result = rx.try_recv().unwrap();
        assert_eq!((result.is_error, result.error_code.as_deref()), (true, Some("quota")));
    }

    #[test]
    fn ffi_2_refused_arguments_leave_the_request_open() {
        let (tx, mut rx) = oneshot::channel();
        let handle: *mut ArkAgentHttpCompletion = handles::insert(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
        // SAFETY: valid strings; the handle is a number.
        unsafe {
            assert_eq!(arkagent_http_fail(handle, 2, std::ptr::null()), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_fail(handle, -1, std::ptr::null()), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_complete(handle, 0, std::ptr::null(), std::ptr::null(), 0), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_complete(handle, 600, std::ptr::null(), std::ptr::null(), 0), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_complete(handle, 200, c"[oops".as_ptr(), std::ptr::null(), 0), ArkAgentResult::InvalidJson);
            assert_eq!(arkagent_http_complete(handle, 200, std::ptr::null(), std::ptr::null(), 3), ArkAgentResult::NullArgument);
            assert_eq!(arkagent_http_stream_chunk(handle, b"x".as_ptr(), 1), ArkAgentResult::StreamNotStarted);
            assert_eq!(arkagent_http_stream_end(handle, std::ptr::null()), ArkAgentResult::StreamNotStarted);
            assert!(rx.try_recv().is_err(), "nothing was answered yet");
            assert_eq!(arkagent_http_fail(handle, 1, c"slow".as_ptr()), ArkAgentResult::Ok);
        }
        assert!(matches!(rx.try_recv(), Ok(Err(e)) if e.kind == arkagent::llm::TransportErrorKind::Timeout));
    }
}
