//! The host's HTTP transport as a JS function
//! `(request: HttpRequest, sink: HttpBodySink) => Promise<HttpResponse>`.
//!
//! A whole body comes back in the response. A streamed body (LLM-2): the function resolves
//! with `streamed: true` as soon as the headers are in, then pushes the body through the
//! sink chunk by chunk, so text deltas reach listeners while the provider is still writing.

use arkagent::llm::{BodySender, TransportErrorKind};
use arkagent::{BodyStream, CancellationToken, HttpBody, HttpTransport, TransportError};
use async_trait::async_trait;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{
    ArrayBuffer, FnArgs, FromNapiValue, ToNapiValue, TypeName, Uint8ArraySlice,
    ValidateNapiValue,
};
use napi_ohos::{sys, ValueType};

use crate::args::Arg;
use crate::callback::{JsAsyncFn, JsFailure, JsFunction};
use crate::error::{private_constructor, Thrown};

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
#[napi]
pub struct HttpBodySink {
    sender: Option<BodySender>,
}

impl HttpBodySink {
    fn new(sender: BodySender) -> Self {
        Self {
            sender: Some(sender),
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

    /// The body is complete. Later writes return false.
    #[napi]
    pub fn end(&mut self) {
        self.sender = None;
    }

    /// The body broke off (e.g. the connection dropped): the call fails like a transport
    /// rejection with this `code` ("timeout", "cancelled", else a network failure).
    #[napi]
    pub fn fail(&mut self, message: Arg<String>, code: Arg<Option<String>>) {
        if let Some(sender) = self.sender.take() {
            sender.fail(transport_error(code.0.as_deref(), message.0));
        }
    }
}

/// The bytes given to `writeBytes`: an `ArrayBuffer`, or a `Uint8Array` (so also a Node
/// `Buffer`) — exactly the view's bytes, whatever its offset into a larger buffer.
pub enum Bytes<'env> {
    Buffer(ArrayBuffer<'env>),
    View(Uint8ArraySlice<'env>),
}

impl Bytes<'_> {
    fn as_slice(&self) -> &[u8] {
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
    // The JS function gets no cancel signal; the core stops waiting when `_cancel` fires,
    // drops the body stream (so the sink's writes return false) and a late response is
    // dropped.
    async fn send(
        &self,
        request: arkagent::HttpRequest,
        _cancel: CancellationToken,
    ) -> Result<arkagent::HttpResponse, TransportError> {
        // The sender goes to JS only: the body ends when the sink ends (or is collected).
        let (sender, stream) = BodyStream::channel();
        let args = FnArgs::from((request.into(), HttpBodySink::new(sender)));
        let response = self.send.call(args).await?;
        response.into_core(stream)
    }
}
