//! The host finishing an HTTP request: whole answers, failures and streamed bodies
//! (FFI-3).

use std::ffi::c_char;
use std::sync::Arc;


use crate::boundary::boundary;
use crate::codes::{ArkAgentResult, ArkAgentTransportError, FfiError, FfiResult};
use crate::handles::{self, Kind};
use crate::strings::{bytes_arg, opt_str_arg};
use super::transport::{HttpCompletionState, HttpPhase, Pending};
use super::types::ArkAgentHttpCompletion;
use arkagent::llm::host_call::HostCallView;
use arkagent::llm::{parse_host_headers, BodyStream, HttpBody, HttpResponse, TransportError};

fn headers_arg(headers_json: *const c_char) -> FfiResult<Vec<(String, String)>> {
    // SAFETY: caller contract of the exported functions below.
    match unsafe { opt_str_arg(headers_json, "headers_json") }? {
        Some(json) => Ok(parse_host_headers(json)?),
        None => Ok(Vec::new()),
    }
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
