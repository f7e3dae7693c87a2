//! Host callbacks (HTTP, tools, events) and the completion handles the host finishes
//! requests with (FFI-3).

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::boundary::{boundary, FfiError, FfiResult};
use super::codes::{ArkAgentResult, ArkAgentTransportError};
use super::handles;
use super::strings::{opt_str_arg, str_arg};
use crate::llm::{parse_host_headers, BodySender, BodyStream, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError};
use crate::runtime::{AgentEvent, AgentObserver};
use crate::tools::{ToolContext, ToolExecutor, ToolInvocation, ToolResult};

/// Opaque: one HTTP request the host must finish with exactly one of
/// [`arkagent_http_complete`], [`arkagent_http_fail`], or [`arkagent_http_stream_begin`]
/// followed by chunks and [`arkagent_http_stream_end`]. Valid until that final call;
/// finishing it after the run was cancelled is allowed and ignored.
pub struct ArkAgentHttpCompletion {
    _private: [u8; 0],
}

/// Opaque: one tool call the host must finish with [`arkagent_tool_complete`], exactly
/// once. Finishing it after the run was cancelled is allowed and ignored.
pub struct ArkAgentToolCompletion {
    _private: [u8; 0],
}

/// Sends an HTTP request. Called on the thread running `arkagent_runtime_run` (or a
/// library worker thread). `request_json` (`{"method","url","headers":[{"name","value"}],
/// "body","stream"}`, containing the Authorization header) is valid only during the
/// call; copy what you need. The host may finish `completion` inside the callback or
/// later from any thread.
pub type ArkAgentHttpCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, request_json: *const c_char, completion: *mut ArkAgentHttpCompletion)>;

/// Runs a tool. Called on the thread running `arkagent_runtime_run`; several calls of
/// one turn may be outstanding at once. `call_json` (`{"call_id","name","arguments":{…},
/// "session_id","run_id"}`) is valid only during the call. Finish `completion` inside the
/// callback or later from any thread.
pub type ArkAgentToolCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, call_json: *const c_char, completion: *mut ArkAgentToolCompletion)>;

/// Receives one event (`{"session_id","run_id","seq","at_ms","type",…}`), in order, on
/// the thread running `arkagent_runtime_run`. `event_json` is valid only during the call.
/// Do not call blocking arkagent functions from it.
pub type ArkAgentEventCallback = Option<unsafe extern "C" fn(userdata: *mut c_void, event_json: *const c_char)>;

/// Host userdata: the host promises it may be used from any thread until the owning
/// handle is freed and no run is active.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
// SAFETY: the header documents that userdata is used from library threads; the host
// guarantees thread-safety of what it points to.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

// ---------------------------------------------------------------- HTTP

struct HttpCompletionState {
    reply: Mutex<Option<oneshot::Sender<Result<HttpResponse, TransportError>>>>,
    stream: Mutex<Option<BodySender>>,
}

pub(crate) struct HostTransport {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut ArkAgentHttpCompletion),
    pub userdata: UserData,
}

#[async_trait]
impl HttpTransport for HostTransport {
    async fn send(&self, request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let (tx, rx) = oneshot::channel();
        let state = Arc::new(HttpCompletionState { reply: Mutex::new(Some(tx)), stream: Mutex::new(None) });
        let json = CString::new(request.to_host_json()).map_err(|_| TransportError::network("request contains NUL"))?;
        let completion = handles::insert::<ArkAgentHttpCompletion, _>(state);
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr(), completion) };
        drop(json);
        rx.await.unwrap_or_else(|_| Err(TransportError::network("the host dropped the HTTP completion")))
    }
}

fn headers_arg(headers_json: *const c_char) -> FfiResult<Vec<(String, String)>> {
    // SAFETY: caller contract of the exported functions below.
    match unsafe { opt_str_arg(headers_json, "headers_json") }? {
        Some(json) => Ok(parse_host_headers(json)?),
        None => Ok(Vec::new()),
    }
}

fn bytes_arg(data: *const u8, len: usize) -> FfiResult<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if data.is_null() {
        return Err(FfiError::new(ArkAgentResult::NullArgument, "data is NULL"));
    }
    // SAFETY: the host passes `len` readable bytes at `data`.
    Ok(unsafe { std::slice::from_raw_parts(data, len) }.to_vec())
}

fn take_reply(state: &HttpCompletionState) -> FfiResult<oneshot::Sender<Result<HttpResponse, TransportError>>> {
    state
        .reply
        .lock()
        .ok()
        .and_then(|mut r| r.take())
        .ok_or_else(|| FfiError::new(ArkAgentResult::AlreadyCompleted, "this HTTP request was already answered"))
}

/// Finishes `completion` with a whole response. `headers_json` (`[{"name","value"}]`) may
/// be NULL; `body` may be NULL when `body_len` is 0. Consumes `completion`. Any thread.
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
        let state: Arc<HttpCompletionState> = handles::get(completion)?;
        let headers = headers_arg(headers_json)?;
        let body = bytes_arg(body, body_len)?;
        let reply = take_reply(&state)?;
        handles::remove::<_, HttpCompletionState>(completion)?;
        // A closed receiver means the run stopped waiting (cancelled): ignore.
        let _ = reply.send(Ok(HttpResponse { status, headers, body: HttpBody::Full(body) }));
        Ok(())
    })
}

/// Finishes `completion` with a transport failure (`message` may be NULL). Consumes
/// `completion`; also ends a started stream. Any thread.
///
/// # Safety
/// `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_fail(
    completion: *mut ArkAgentHttpCompletion,
    kind: ArkAgentTransportError,
    message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let state: Arc<HttpCompletionState> = handles::get(completion)?;
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("transport failure").to_owned();
        let error = match kind {
            ArkAgentTransportError::Timeout => TransportError::timeout(message),
            ArkAgentTransportError::Network => TransportError::network(message),
        };
        handles::remove::<_, HttpCompletionState>(completion)?;
        let stream = state.stream.lock().ok().and_then(|mut s| s.take());
        match (take_reply(&state), stream) {
            (Ok(reply), _) => {
                let _ = reply.send(Err(error));
            }
            (Err(_), Some(sender)) => {
                sender.fail(error);
            }
            (Err(e), None) => return Err(e),
        }
        Ok(())
    })
}

/// Starts a streamed response: status and headers now, body chunks later through
/// [`arkagent_http_stream_chunk`], then [`arkagent_http_stream_end`]. Any thread.
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
        let state: Arc<HttpCompletionState> = handles::get(completion)?;
        let headers = headers_arg(headers_json)?;
        let reply = take_reply(&state)?;
        let (sender, stream) = BodyStream::channel();
        if let Ok(mut slot) = state.stream.lock() {
            *slot = Some(sender);
        }
        let _ = reply.send(Ok(HttpResponse { status, headers, body: HttpBody::Stream(stream) }));
        Ok(())
    })
}

/// Pushes one body chunk (boundaries may fall anywhere, even inside a UTF-8 character).
/// Returns `ARKAGENT_RESULT_CANCELLED` when the library no longer reads (stop sending).
/// Never blocks. Any thread.
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
        let state: Arc<HttpCompletionState> = handles::get(completion)?;
        let chunk = bytes_arg(data, len)?;
        let guard = state.stream.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "poisoned"))?;
        let sender = guard
            .as_ref()
            .ok_or_else(|| FfiError::new(ArkAgentResult::InvalidHandle, "arkagent_http_stream_begin was not called"))?;
        if sender.send(chunk) {
            Ok(())
        } else {
            Err(FfiError::new(ArkAgentResult::Cancelled, "the request was cancelled"))
        }
    })
}

/// Ends a streamed body. `error_message` NULL for a clean end, else the body ends with a
/// network error. Consumes `completion`. Any thread.
///
/// # Safety
/// `error_message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_end(
    completion: *mut ArkAgentHttpCompletion,
    error_message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let state: Arc<HttpCompletionState> = handles::get(completion)?;
        // SAFETY: forwarded contract.
        let error = unsafe { opt_str_arg(error_message, "error_message") }?;
        let sender = state
            .stream
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .ok_or_else(|| FfiError::new(ArkAgentResult::InvalidHandle, "arkagent_http_stream_begin was not called"))?;
        handles::remove::<_, HttpCompletionState>(completion)?;
        if let Some(message) = error {
            sender.fail(TransportError::network(message));
        }
        Ok(())
    })
}

// ---------------------------------------------------------------- tools

struct ToolCompletionState {
    reply: Mutex<Option<oneshot::Sender<ToolResult>>>,
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
        let Ok(json) = CString::new(payload.to_string()) else {
            return ToolResult::error("tool_failed", "the call could not be encoded");
        };
        let completion =
            handles::insert::<ArkAgentToolCompletion, _>(Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)) }));
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr(), completion) };
        drop(json);
        rx.await.unwrap_or_else(|_| ToolResult::error("tool_failed", "the host dropped the tool completion"))
    }
}

/// Finishes a tool call with `content` (what the model sees) and whether it failed.
/// Consumes `completion`. Any thread.
///
/// # Safety
/// `content` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_complete(
    completion: *mut ArkAgentToolCompletion,
    content: *const c_char,
    is_error: bool,
) -> ArkAgentResult {
    boundary(|| {
        let state: Arc<ToolCompletionState> = handles::get(completion)?;
        // SAFETY: forwarded contract.
        let content = unsafe { str_arg(content, "content") }?;
        let reply = state
            .reply
            .lock()
            .ok()
            .and_then(|mut r| r.take())
            .ok_or_else(|| FfiError::new(ArkAgentResult::AlreadyCompleted, "this tool call was already answered"))?;
        handles::remove::<_, ToolCompletionState>(completion)?;
        let result = if is_error { ToolResult::failure(content) } else { ToolResult::ok(content) };
        let _ = reply.send(result);
        Ok(())
    })
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
