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

use std::sync::Arc;

use arkagent::llm::host_call::{HostCall, HostCallPhase, HostCallView};
use arkagent::llm::{BodySender, TransportErrorKind};
use arkagent::{BodyStream, CancellationToken, HttpBody, HttpTransport, TransportError};
use async_trait::async_trait;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{
    ArrayBuffer, FnArgs, FromNapiValue, ToNapiValue, TypeName, Uint8ArraySlice,
    ValidateNapiValue,
};
use napi_ohos::bindgen_prelude::JsValue;
use napi_ohos::{sys, Env, ValueType};

use crate::args::Arg;
use crate::callback::{JsAsyncFn, JsFailure, JsFunction, JsListener};
use crate::error::{internal, private_constructor, Thrown};

/// One HTTP header.
#[napi(object, js_name = "HttpHeader")]
pub struct JsHttpHeader {
    pub name: String,
    pub value: String,
}

/// A request the host must send, handed to JS as a plain object
/// `{ method, url, headers, body, stream }` (the `HttpRequest` interface of the d.ts).
///
/// PERF-8: converted by hand rather than through a `#[napi(object)]` struct, so the body
/// (shared, `Arc<String>`) is never copied into a Rust `String` first: its bytes go
/// straight into the one JS string the engine creates from them.
pub struct JsHttpRequest(arkagent::HttpRequest);

/// What the host received: the whole body, or `streamed: true` with the body to follow
/// through the request's [`HttpBodySink`].
#[napi(object, js_name = "HttpResponse")]
pub struct JsHttpResponse {
    pub status: u32,
    pub headers: Option<Vec<JsHttpHeader>>,
    pub body: Option<String>,
    pub streamed: Option<bool>,
}

/// The arguments the transport function is called with.
pub type TransportArgs = FnArgs<(JsHttpRequest, HttpBodySink)>;

impl From<arkagent::HttpRequest> for JsHttpRequest {
    fn from(request: arkagent::HttpRequest) -> Self {
        Self(request)
    }
}

/// Sets `object[key] = value` (on the JS thread).
///
/// # Safety
/// `env` and `object` must be live values of the current napi scope; `key` ends in NUL.
unsafe fn set_property<V: ToNapiValue>(
    env: sys::napi_env,
    object: sys::napi_value,
    key: &'static [u8],
    value: V,
) -> napi_ohos::Result<()> {
    debug_assert_eq!(key.last(), Some(&0));
    // SAFETY: `env` is live (caller); the conversion creates a value in the current scope.
    let value = unsafe { V::to_napi_value(env, value) }?;
    // SAFETY: `object` and `value` are live; `key` is a NUL-terminated C string.
    let status = unsafe { sys::napi_set_named_property(env, object, key.as_ptr().cast(), value) };
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi_ohos::Error::new(
            napi_ohos::Status::from(status),
            "cannot set a property of the HttpRequest object",
        ))
    }
}

impl ToNapiValue for JsHttpRequest {
    unsafe fn to_napi_value(
        env: sys::napi_env,
        value: Self,
    ) -> napi_ohos::Result<sys::napi_value> {
        let request = value.0;
        let mut object = std::ptr::null_mut();
        // SAFETY: `env` is the env of the threadsafe-function call converting this argument.
        let status = unsafe { sys::napi_create_object(env, &mut object) };
        if status != sys::Status::napi_ok {
            return Err(napi_ohos::Error::new(
                napi_ohos::Status::from(status),
                "cannot create the HttpRequest object",
            ));
        }
        let headers: Vec<JsHttpHeader> = request
            .headers
            .into_iter()
            .map(|(name, value)| JsHttpHeader { name, value })
            .collect();
        // SAFETY: `env` and `object` are live in this scope; every key ends in NUL.
        unsafe {
            set_property(env, object, b"method\0", request.method)?;
            set_property(env, object, b"url\0", request.url)?;
            set_property(env, object, b"headers\0", headers)?;
            // The one copy of the body: `napi_create_string_utf8` over the shared bytes.
            set_property(env, object, b"body\0", request.body.as_str())?;
            set_property(env, object, b"stream\0", request.stream)?;
        }
        Ok(object)
    }
}

impl JsHttpResponse {
    /// The core response: the body is `stream` when the host streamed it, else the text
    /// it resolved with (absent: empty; the core classifies the result).
    fn into_core(self, stream: BodyStream) -> Result<arkagent::HttpResponse, TransportError> {
        let status = u16::try_from(self.status).map_err(|_| {
            TransportError::network(format!("HTTP status {} out of range", self.status))
        })?;
        let body = if self.streamed.unwrap_or(false) {
            HttpBody::Stream(stream)
        } else {
            HttpBody::Full(self.body.unwrap_or_default().into_bytes())
        };
        Ok(arkagent::HttpResponse {
            status,
            headers: self
                .headers
                .unwrap_or_default()
                .into_iter()
                .map(|h| (h.name, h.value))
                .collect(),
            body,
        })
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

/// Where the host writes a streamed response body (wraps the core `BodySender`). Every
/// request gets its own sink; it is used only after the transport resolved with
/// `streamed: true`. Writes never block; they return false once the library stopped
/// reading (the answer is complete, the call timed out or was cancelled) or after
/// `end()`/`fail()` — the host should then stop receiving.
///
/// Cancellation (OHOS-7): `onCancel` callbacks run once, on the JS thread, when the
/// library stops wanting the response before the host finished the request (see
/// [`CancelState`]); `cancelled` tells whether that happened.
#[napi]
pub struct HttpBodySink {
    sender: Option<BodySender>,
    cancel: Arc<CancelState>,
}

impl HttpBodySink {
    fn new(sender: BodySender, cancel: Arc<CancelState>) -> Self {
        Self {
            sender: Some(sender),
            cancel,
        }
    }

    // PERF-8: one copy per chunk. `write` moves on the String it got (copied once out of
    // the JS string); `writeBytes` copies the borrowed JS bytes once (`to_vec`).
    fn send(&self, chunk: Vec<u8>) -> bool {
        self.sender
            .as_ref()
            .is_some_and(|sender| sender.send(chunk))
    }
}

#[napi]
impl HttpBodySink {
    /// Instances come from each transport call; `new` throws `private_constructor`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("HttpBodySink"))
    }

    /// Appends text (UTF-8) to the body.
    #[napi]
    pub fn write(&self, text: Arg<String>) -> bool {
        self.send(text.0.into_bytes())
    }

    /// Appends bytes to the body; a multi-byte character may be split across writes.
    #[napi(ts_args_type = "data: ArrayBuffer | Uint8Array")]
    pub fn write_bytes(&self, data: Arg<Bytes<'_>>) -> bool {
        self.send(data.0.as_slice().to_vec())
    }

    /// The body is complete. Later writes return false; the request is finished (no
    /// `onCancel` callback runs after this unless the library had already cancelled).
    #[napi]
    pub fn end(&mut self) {
        self.sender = None;
        self.cancel.finish();
    }

    /// The body broke off (e.g. the connection dropped): the call fails like a transport
    /// rejection with this `code` ("timeout", "cancelled", else a network failure).
    #[napi]
    pub fn fail(&mut self, message: Arg<String>, code: Arg<Option<String>>) {
        if let Some(sender) = self.sender.take() {
            sender.fail(transport_error(code.0.as_deref(), message.0));
        }
        self.cancel.finish();
    }

    /// Registers `callback`, run once on the JS thread when the library stops wanting
    /// this response before the host finished the request: the run was cancelled or
    /// timed out (request or idle timeout), the runtime shut down, or the body is no
    /// longer needed (after `[DONE]` while the host has not called `end()`). When the
    /// library already cancelled, `callback` runs soon (asynchronously, never inside this
    /// call). Never after the host finished first: the transport resolved with a whole
    /// body or rejected, or the sink got `end()`/`fail()` — checked on the JS thread just
    /// before the call, so an `end()` in the same tick as the last write always wins. A
    /// callback that throws is ignored.
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
        // The sender goes to JS only: the body ends when the sink ends (or is collected).
        let (sender, stream) = BodyStream::channel();
        let state = Arc::new(CancelState::default());
        watch_cancel(cancel, Arc::clone(&state));
        let args = FnArgs::from((request.into(), HttpBodySink::new(sender, Arc::clone(&state))));
        let response = self.send.call(args).await;
        // A rejection or a whole body finishes the request; a stream finishes with the
        // sink's end()/fail().
        if response.as_ref().map_or(true, |r| !r.streamed.unwrap_or(false)) {
            state.finish();
        }
        response?.into_core(stream)
    }
}
