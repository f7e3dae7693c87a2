//! The host's HTTP client as the core's transport: a request goes out through the
//! host's `send`; the cancel protocol (OHOS-7) is the core's `HostCall`.

use std::ffi::{c_void, CString};
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::boundary::boundary;
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use crate::handles::{self, Kind};
use super::types::{ArkAgentHttp, ArkAgentHttpCancelCallback, ArkAgentHttpCompletion, ArkAgentHttpHeader, ArkAgentHttpRequest, UserData};
use arkagent::llm::host_call::{HostCall, HostCallPhase, HostCallView};
use arkagent::llm::{BodySender, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};

// ---------------------------------------------------------------- HTTP

pub(super) type Reply = oneshot::Sender<Result<HttpResponse, TransportError>>;

/// What an open HTTP request keeps for its answer; the protocol around it (who wins a
/// race, cancel at most once, late calls ignored: FFI-3, OHOS-7) is the core's
/// [`HostCall`].
pub(super) enum Pending {
    /// Waiting for the host's answer.
    Waiting(Reply),
    /// `arkagent_http_stream_begin` answered; chunks flow until `_end` or `_fail`.
    Streaming(BodySender),
}

pub(super) type HttpPhase = HostCallPhase<Pending>;

/// One request's state behind its completion handle.
pub(crate) struct HttpCompletionState {
    pub(super) call: Arc<HostCall<Pending>>,
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

pub(super) type CancelFn = unsafe extern "C" fn(*mut c_void, *mut ArkAgentHttpCompletion);

pub(super) fn call_cancel(callback: CancelFn, completion: usize, userdata: UserData) {
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
