//! The host's HTTP transport as a JS function `(request: HttpRequest) => Promise<HttpResponse>`.

use arkagent::llm::TransportErrorKind;
use arkagent::{CancellationToken, HttpTransport, TransportError};
use async_trait::async_trait;
use napi_derive_ohos::napi;

use crate::callback::{JsAsyncFn, JsFailure, JsFunction};

/// One HTTP header.
#[napi(object, js_name = "HttpHeader")]
pub struct JsHttpHeader {
    pub name: String,
    pub value: String,
}

/// A request the host must send.
#[napi(object, js_name = "HttpRequest")]
pub struct JsHttpRequest {
    pub method: String,
    pub url: String,
    pub headers: Vec<JsHttpHeader>,
    pub body: String,
    pub stream: bool,
}

/// What the host received.
#[napi(object, js_name = "HttpResponse")]
pub struct JsHttpResponse {
    pub status: u32,
    pub headers: Option<Vec<JsHttpHeader>>,
    pub body: String,
}

impl From<arkagent::HttpRequest> for JsHttpRequest {
    fn from(request: arkagent::HttpRequest) -> Self {
        Self {
            method: request.method,
            url: request.url,
            headers: request
                .headers
                .into_iter()
                .map(|(name, value)| JsHttpHeader { name, value })
                .collect(),
            body: request.body,
            stream: request.stream,
        }
    }
}

impl TryFrom<JsHttpResponse> for arkagent::HttpResponse {
    type Error = TransportError;

    fn try_from(response: JsHttpResponse) -> Result<Self, TransportError> {
        let status = u16::try_from(response.status).map_err(|_| {
            TransportError::network(format!("HTTP status {} out of range", response.status))
        })?;
        let mut converted = arkagent::HttpResponse::full(status, response.body.into_bytes());
        converted.headers = response
            .headers
            .unwrap_or_default()
            .into_iter()
            .map(|h| (h.name, h.value))
            .collect();
        Ok(converted)
    }
}

/// A rejection maps to a transport error; its `code` selects the kind: `"timeout"`,
/// `"cancelled"`, anything else is a network failure.
impl From<JsFailure> for TransportError {
    fn from(failure: JsFailure) -> Self {
        let kind = match failure.code.as_deref() {
            Some("timeout") => TransportErrorKind::Timeout,
            Some("cancelled") => TransportErrorKind::Cancelled,
            _ => TransportErrorKind::Network,
        };
        TransportError {
            kind,
            message: failure.message,
        }
    }
}

/// [`HttpTransport`] over a JS function.
pub struct JsTransport {
    send: JsAsyncFn<JsHttpRequest, JsHttpResponse>,
}

impl JsTransport {
    /// Wraps the JS transport function (on the JS thread).
    pub fn new(function: JsFunction<'_, JsHttpRequest>) -> napi_ohos::Result<Self> {
        Ok(Self {
            send: JsAsyncFn::new(function)?,
        })
    }
}

#[async_trait]
impl HttpTransport for JsTransport {
    // The JS function gets no cancel signal; the core stops waiting when `_cancel` fires
    // and a late response is dropped.
    async fn send(
        &self,
        request: arkagent::HttpRequest,
        _cancel: CancellationToken,
    ) -> Result<arkagent::HttpResponse, TransportError> {
        let response = self.send.call(request.into()).await?;
        response.try_into()
    }
}
