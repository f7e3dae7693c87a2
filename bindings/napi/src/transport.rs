//! The host's HTTP transport as a JS function
//! `(request: HttpRequest, sink: HttpBodySink) => Promise<HttpResponse>`.
//!
//! A whole body comes back in the response. A streamed body (LLM-2): the function resolves
//! with `streamed: true` as soon as the headers are in, then pushes the body through the
//! sink chunk by chunk, so text deltas reach listeners while the provider is still writing.
//!
//! Cancellation (OHOS-7): `JsTransport::send` watches the attempt's cancel token; when the
//! library stops wanting a response the host has not finished, the sink's `onCancel`
//! callbacks run on the JS thread so the host can abort its request at once.
//!
//! The request object and its body (PERF-9): `request.rs`.

use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::llm::host_call::{HostCall, HostCallPhase, HostCallView};
use arkagent::llm::{BodySender, ErrorAnswer, TransportErrorKind};
use arkagent::{BodyStream, CancellationToken, HttpBody, HttpTransport, TransportError};
use async_trait::async_trait;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::JsValue;
use napi_ohos::bindgen_prelude::{
    ArrayBuffer, FnArgs, FromNapiValue, TypeName, Uint8ArraySlice, ValidateNapiValue,
};
use napi_ohos::{sys, Env, ValueType};

use crate::args::Arg;
use crate::callback::{JsAsyncFn, JsFailure, JsFunction, JsListener};
use crate::error::{internal, private_constructor, Thrown};
use crate::request::{BodyLease, JsHttpHeader, JsHttpRequest};

/// What the host received. Either the whole body as text in `body`, or `streamed: true`
/// (resolved as soon as the headers arrived; `body` is then ignored) with the body written
/// to the request's HttpBodySink as it arrives. A missing `body` is an empty body.
#[napi(object, js_name = "HttpResponse")]
pub struct JsHttpResponse {
    pub status: u32,
    pub headers: Option<Vec<JsHttpHeader>>,
    pub body: Option<String>,
    /// true: the body follows through the HttpBodySink.
    pub streamed: Option<bool>,
}

/// The arguments the transport function is called with.
pub type TransportArgs = FnArgs<(JsHttpRequest, HttpBodySink)>;

impl JsHttpResponse {
    fn core_status(&self) -> Result<u16, TransportError> {
        u16::try_from(self.status).map_err(|_| {
            TransportError::network(format!("HTTP status {} out of range", self.status))
        })
    }

    fn core_headers(headers: Option<Vec<JsHttpHeader>>) -> Vec<(String, String)> {
        headers
            .unwrap_or_default()
            .into_iter()
            .map(|h| (h.name, h.value))
            .collect()
    }

    /// The core response: the body is `stream` when the host streamed it, else the text
    /// it resolved with (absent: empty; the core classifies the result).
    fn into_core(self, stream: BodyStream) -> Result<arkagent::HttpResponse, TransportError> {
        let status = self.core_status()?;
        let body = if self.streamed.unwrap_or(false) {
            HttpBody::Stream(stream)
        } else {
            HttpBody::Full(self.body.unwrap_or_default().into_bytes())
        };
        Ok(arkagent::HttpResponse {
            status,
            headers: Self::core_headers(self.headers),
            body,
        })
    }

    /// The answer a stream turned out to be (`failWithResponse`), as a transport error the
    /// core classifies like that answer.
    fn into_error(self) -> TransportError {
        match self.core_status() {
            Ok(status) => TransportError::status(ErrorAnswer {
                status,
                headers: Self::core_headers(self.headers),
                body: self.body.unwrap_or_default().into_bytes(),
            }),
            Err(error) => error,
        }
    }
}

/// A JS error `code` to a transport error kind: `"timeout"`, `"cancelled"`, anything else
/// is a network failure.
fn transport_error(code: Option<&str>, message: String) -> TransportError {
    let kind = match code {
        Some("timeout") => TransportErrorKind::Timeout,
        Some("cancelled") => TransportErrorKind::Cancelled,
        _ => TransportErrorKind::Network,
    };
    TransportError { kind, message }
}

/// A rejection maps to a transport error by its `code` (see [`transport_error`]).
impl From<JsFailure> for TransportError {
    fn from(failure: JsFailure) -> Self {
        transport_error(failure.code.as_deref(), failure.message)
    }
}

/// Where the transport writes a streamed response body (LLM-2): after resolving with
/// `streamed: true`, call `write`/`writeBytes` for each piece as it arrives, then `end()`,
/// or `fail()` when the body broke off. Chunk boundaries may fall anywhere, also inside a
/// UTF-8 character (writeBytes). Writes never block; they return false once the library
/// stopped reading (answer complete, timeout, cancel) or after end()/fail(): stop
/// receiving then. Each request gets its own sink.
#[napi]
pub struct HttpBodySink {
    sender: SenderSlot,
    cancel: Arc<CancelState>,
}

/// PERF-9: the sink's end of the body channel, shared with the transport call, which
/// empties it as soon as the answer came whole (or was rejected): the channel (a block
/// of slots, ~1.6 KB) is then freed right away on the runtime's thread, not whenever V8
/// collects the sink object. Left to the collector, a 10,000-turn chat held up to 0.8 MB
/// of them at its peak, freed later from the JS thread between the runtime's long-lived
/// allocations (the executor threads' malloc arenas fragmented by ~2 MB).
#[derive(Clone)]
struct SenderSlot(Arc<Mutex<Option<BodySender>>>);

impl SenderSlot {
    fn new(sender: BodySender) -> Self {
        Self(Arc::new(Mutex::new(Some(sender))))
    }

    fn lock(&self) -> MutexGuard<'_, Option<BodySender>> {
        // A poisoned lock only means a panic between statements on an Option.
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes the sender out: later writes return false.
    fn take(&self) -> Option<BodySender> {
        self.lock().take()
    }
}

impl HttpBodySink {
    fn new(sender: SenderSlot, cancel: Arc<CancelState>) -> Self {
        Self { sender, cancel }
    }

    // PERF-8: one copy per chunk. `write` moves on the String it got (copied once out of
    // the JS string); `writeBytes` copies the borrowed JS bytes once (`to_vec`).
    fn send(&self, chunk: Vec<u8>) -> bool {
        self.sender
            .lock()
            .as_ref()
            .is_some_and(|sender| sender.send(chunk))
    }
}

#[napi]
impl HttpBodySink {
    /// Instances come from the runtime with each transport call.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("HttpBodySink"))
    }

    /// Appends text (sent as UTF-8).
    #[napi]
    pub fn write(&self, text: Arg<String>) -> bool {
        self.send(text.0.into_bytes())
    }

    /// Appends bytes: an ArrayBuffer, or a Uint8Array (a Node Buffer included) — exactly
    /// the view's bytes, also when it is a window into a larger buffer.
    #[napi(ts_args_type = "data: ArrayBuffer | Uint8Array")]
    pub fn write_bytes(&self, data: Arg<Bytes<'_>>) -> bool {
        self.send(data.0.as_slice().to_vec())
    }

    /// The body is complete.
    #[napi]
    pub fn end(&mut self) {
        drop(self.sender.take());
        self.cancel.finish();
    }

    /// The body broke off: the model call fails like a transport rejection with this code
    /// ("timeout" is a timeout, "cancelled" cancelled, anything else "llm_transport").
    #[napi]
    pub fn fail(&mut self, message: Arg<String>, code: Arg<Option<String>>) {
        if let Some(sender) = self.sender.take() {
            sender.fail(transport_error(code.0.as_deref(), message.0));
        }
        self.cancel.finish();
    }

    /// The streamed answer was an HTTP error after all, for a host that learns the status
    /// only after the body (NetworkKit at API 12): the model call fails as if the transport
    /// had resolved with `response` — classified by its status, headers (`Retry-After` is
    /// honoured) and body (pass at least its first 64 KiB), like any error answer: a 429 or
    /// 503 is retried after the wait the server asked for.
    #[napi(ts_args_type = "response: HttpResponse")]
    pub fn fail_with_response(&mut self, response: Arg<JsHttpResponse>) {
        if let Some(sender) = self.sender.take() {
            sender.fail(response.0.into_error());
        }
        self.cancel.finish();
    }

    /// Registers a callback run once, on the JS thread, when the library stops wanting this
    /// response before the host finished the request (OHOS-7): the run was cancelled or
    /// timed out (requestTimeoutMs, idleTimeoutMs), or the rest of the body is not needed (the answer's `[DONE]` arrived before end()). Abort the
    /// request there (NetworkKit: `destroy()`); this covers non-streamed requests and
    /// streams that have not received a byte yet. Registered after the cancellation, the
    /// callback runs soon (asynchronously). Never called when the host finished first:
    /// the transport resolved with a whole body or rejected, or end()/fail()/failWithResponse()
    /// was called. A callback that throws is ignored.
    #[napi(ts_args_type = "callback: () => void")]
    pub fn on_cancel(&self, env: &Env, callback: Arg<JsFunction<'_, ()>>) -> Result<(), Thrown> {
        let user = callback.0.create_ref().map_err(internal)?;
        let state = Arc::clone(&self.cancel);
        // The host's function, called through a wrapper that decides on the JS thread
        // (the wrapper owns the reference and is finalized on the JS thread).
        let wrapper = env
            .create_function_from_closure::<(), (), _>("onCancel", move |ctx| {
                if state.confirm() {
                    // A throwing callback leaves its exception pending; the listener
                    // clears and ignores it.
                    let _ = user.borrow_back(ctx.env).and_then(|f| f.call(()));
                }
                Ok(())
            })
            .map_err(internal)?;
        // SAFETY: `wrapper` is a live function value of this env, on the JS thread.
        let wrapper = unsafe { JsFunction::<'_, ()>::from_napi_value(env.raw(), wrapper.raw()) }
            .map_err(internal)?;
        self.cancel
            .register(JsListener::new(wrapper).map_err(internal)?);
        Ok(())
    }

    /// True once the library stopped wanting this response before the host finished it.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.cancel.confirm()
    }
}

/// The cancellation state of one transport call (OHOS-7), shared by its sink (JS thread)
/// and the watch on its cancel token (a runtime thread): the core's [`HostCall`] with the
/// sink's `onCancel` callbacks as its open value. The host *finishes* a request by
/// resolving with a whole body, rejecting, or calling `end()`/`fail()`; the library
/// *requests* cancellation when the token fires while the request is unfinished. The
/// request counts as cancelled when, seen from the JS thread, the request came before the
/// host finished (the two-step cancel, confirmed on the JS thread); then every callback
/// runs once. Otherwise none ever runs.
pub struct CancelState {
    call: HostCall<Vec<JsListener<()>>>,
}

impl Default for CancelState {
    fn default() -> Self {
        Self {
            call: HostCall::new(Vec::new()),
        }
    }
}

impl CancelState {
    /// The host finished the request: unless a cancellation was already confirmed, no
    /// callback will run.
    fn finish(&self) {
        self.call.finish(
            |phase| match phase {
                HostCallPhase::Cancelled => (HostCallPhase::Cancelled, ()),
                _ => (HostCallPhase::Done, ()),
            },
            || {},
        );
    }

    /// The token fired (any thread): unless the host finished, the callbacks are queued
    /// to the JS thread, once.
    fn request(&self) {
        for callback in self.call.request_cancel().unwrap_or_default() {
            callback.notify(());
        }
    }

    /// On the JS thread: whether the request is cancelled (a request not overtaken by the
    /// host finishing); confirms it for good.
    fn confirm(&self) -> bool {
        self.call.confirm_cancel()
    }

    /// Keeps `callback` for [`request`](Self::request); queues it at once when the
    /// cancellation was already requested, drops it when the host already finished.
    fn register(&self, callback: JsListener<()>) {
        let now = self.call.inspect(|phase| match phase {
            HostCallView::Open(callbacks) => {
                callbacks.push(callback);
                None
            }
            HostCallView::Requested | HostCallView::Cancelled => Some(callback),
            HostCallView::Done => None,
        });
        if let Some(callback) = now {
            callback.notify(());
        }
    }
}

/// Requests the cancellation of `state` when `token` fires — or when the watch itself is dropped, which
/// happens only when the runtime shuts down with the request still open. The core
/// cancels every attempt's token when the attempt ends (its drop guard), so the watch
/// never outlives its request.
fn watch_cancel(token: CancellationToken, state: Arc<CancelState>) {
    struct CancelOnDrop(Arc<CancelState>);
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            self.0.request();
        }
    }
    let guard = CancelOnDrop(state);
    // `send` runs on napi's Tokio runtime (the core's futures are spawned there).
    let _watch = napi_ohos::bindgen_prelude::spawn(async move {
        token.cancelled().await;
        drop(guard);
    });
}

/// The bytes given to `writeBytes`: an `ArrayBuffer`, or a `Uint8Array` (so also a Node
/// `Buffer`) — exactly the view's bytes, whatever its offset into a larger buffer.
pub enum Bytes<'env> {
    Buffer(ArrayBuffer<'env>),
    View(Uint8ArraySlice<'env>),
}

impl Bytes<'_> {
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Self::Buffer(buffer) => buffer,
            Self::View(view) => view,
        }
    }
}

impl TypeName for Bytes<'_> {
    fn type_name() -> &'static str {
        "ArrayBuffer | Uint8Array"
    }

    fn value_type() -> ValueType {
        ValueType::Object
    }
}

// Checked in `from_napi_value`: an ArrayBuffer, else a Uint8Array (napi-ohos refuses any
// other value, including other typed arrays).
impl ValidateNapiValue for Bytes<'_> {
    unsafe fn validate(
        _env: sys::napi_env,
        _value: sys::napi_value,
    ) -> napi_ohos::Result<sys::napi_value> {
        Ok(std::ptr::null_mut())
    }
}

impl FromNapiValue for Bytes<'_> {
    unsafe fn from_napi_value(
        env: sys::napi_env,
        value: sys::napi_value,
    ) -> napi_ohos::Result<Self> {
        let mut is_array_buffer = false;
        // SAFETY: `env` and `value` come from the napi callback converting this argument.
        let status = unsafe { sys::napi_is_arraybuffer(env, value, &mut is_array_buffer) };
        if status == sys::Status::napi_ok && is_array_buffer {
            // SAFETY: as above; `value` is an ArrayBuffer.
            unsafe { ArrayBuffer::from_napi_value(env, value) }.map(Self::Buffer)
        } else {
            // SAFETY: as above; napi-ohos checks that `value` is a Uint8Array.
            unsafe { Uint8ArraySlice::from_napi_value(env, value) }.map(Self::View)
        }
    }
}

/// [`HttpTransport`] over a JS function.
pub struct JsTransport {
    send: JsAsyncFn<TransportArgs, JsHttpResponse>,
}

impl JsTransport {
    /// Wraps the JS transport function (on the JS thread).
    pub fn new(function: JsFunction<'_, TransportArgs>) -> napi_ohos::Result<Self> {
        Ok(Self {
            send: JsAsyncFn::new(function)?,
        })
    }
}

#[async_trait]
impl HttpTransport for JsTransport {
    // When `cancel` fires before the host finished the request, the sink's `onCancel`
    // callbacks run (OHOS-7); the core stops waiting, drops the body stream (so the sink's
    // writes return false) and a late response is dropped.
    async fn send(
        &self,
        request: arkagent::HttpRequest,
        cancel: CancellationToken,
    ) -> Result<arkagent::HttpResponse, TransportError> {
        // The sender goes to JS (the sink) and stays here in `slot`: a streamed body ends
        // when the sink ends (or is collected); a whole one ends the channel right here.
        let (sender, stream) = BodyStream::channel();
        let slot = SenderSlot::new(sender);
        let state = Arc::new(CancelState::default());
        watch_cancel(cancel, Arc::clone(&state));
        // PERF-9: the body's ArrayBuffer is released once the host settled the call.
        let lease = Arc::new(BodyLease::default());
        let request = JsHttpRequest::new(request, Arc::clone(&lease));
        let args = FnArgs::from((request, HttpBodySink::new(slot.clone(), Arc::clone(&state))));
        let response = self
            .send
            .call_then(args, move |env| lease.release(env))
            .await;
        // A rejection or a whole body finishes the request; a stream finishes with the
        // sink's end()/fail().
        if response
            .as_ref()
            .map_or(true, |r| !r.streamed.unwrap_or(false))
        {
            state.finish();
            // PERF-9: the sink is done with; free the channel now (see SenderSlot).
            drop(slot.take());
        }
        response?.into_core(stream)
    }
}

// index.d.ts: the declarations of `transport` (HttpHeader … HttpTransport).
/* ts
// declare: HttpHeader

/**
 * A request the host must send. The body (UTF-8 JSON) comes two ways (PERF-9):
 * `bodyBytes`, an ArrayBuffer over the library's own bytes, handed over without a copy —
 * send this one (NetworkKit: `extraData: request.bodyBytes`, leaving it out when
 * `byteLength` is 0); and `body`, the same bytes as a string, made only when a host reads
 * it (one copy of the body, kept on the object after the first read). Both are valid until
 * the transport's Promise settles: then `bodyBytes` is detached (byteLength 0) and the
 * library takes its bytes back, and `body`, if not read before, reads "". Never write into
 * `bodyBytes`: the library reuses those bytes.
 */
export interface HttpRequest {
  method: string;
  url: string;
  headers: HttpHeader[];
  readonly bodyBytes: ArrayBuffer;
  readonly body: string;
  /** true when the library asked the provider for an SSE stream. */
  stream: boolean;
}

// declare: HttpResponse

// declare: HttpBodySink

/**
 * The host's HTTP transport: sends the request and resolves with the response (any
 * status; the library classifies error statuses), either with the whole body or, for
 * `request.stream`, preferably streamed through `sink` so text deltas reach listeners
 * while the model is still writing. Reject when no response arrived: an Error whose
 * `code` is "timeout" counts as a timeout, "cancelled" as cancelled, anything else as a
 * network failure (error code "llm_transport").
 */
export type HttpTransport = (request: HttpRequest, sink: HttpBodySink) => Promise<HttpResponse>;
*/
