use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A request the host must send (LLM-1). `body` is UTF-8 JSON built by the library.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// HTTP method, always `POST` for chat completions.
    pub method: String,
    /// Absolute URL.
    pub url: String,
    /// Headers, in order. Includes `Authorization` — never log a request's headers.
    pub headers: Vec<(String, String)>,
    /// Request body (JSON text). Shared, so a retry re-sends it without copying it.
    pub body: Arc<String>,
    /// True when the library asked for an SSE stream; the host should then deliver the
    /// body chunk by chunk as it arrives ([`HttpBody::Stream`]).
    pub stream: bool,
}

impl fmt::Debug for HttpRequest {
    // LLM-4: header values never reach logs, whatever the protocol calls its credential
    // headers, except those of the few headers every request carries that hold none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(k, v)| if is_plain_header(k) { (k.as_str(), v.as_str()) } else { (k.as_str(), "<redacted>") })
            .collect();
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_len", &self.body.len())
            .field("stream", &self.stream)
            .finish()
    }
}

/// Parses headers a host passes as JSON: `[{"name": …, "value": …}, …]` or
/// `[[name, value], …]`. Errors: `invalid_json`.
pub fn parse_host_headers(json: &str) -> Result<Vec<(String, String)>, crate::error::ArkAgentError> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Header {
        Named { name: String, value: String },
        Pair(String, String),
    }
    let headers: Vec<Header> = serde_json::from_str(json)?;
    Ok(headers
        .into_iter()
        .map(|h| match h {
            Header::Named { name, value } | Header::Pair(name, value) => (name, value),
        })
        .collect())
}

/// Headers whose values a request's `Debug` shows: the content negotiation the client
/// writes and a protocol's version header, none a credential.
fn is_plain_header(name: &str) -> bool {
    ["content-type", "accept", "anthropic-version", "user-agent"].iter().any(|h| name.eq_ignore_ascii_case(h))
}

/// The response the host received.
#[derive(Debug)]
pub struct HttpResponse {
    /// HTTP status code.
    pub status: u16,
    /// Response headers (names compared case-insensitively).
    pub headers: Vec<(String, String)>,
    /// The body, whole or as a stream of chunks.
    pub body: HttpBody,
}

impl HttpResponse {
    /// A response with a complete body.
    pub fn full(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self { status, headers: Vec::new(), body: HttpBody::Full(body.into()) }
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// A response body.
#[derive(Debug)]
pub enum HttpBody {
    /// The complete body.
    Full(Vec<u8>),
    /// Chunks as they arrive; chunk boundaries may fall anywhere.
    Stream(BodyStream),
}

impl HttpBody {
    /// Reads the whole body, waiting for every chunk of a stream.
    pub async fn collect(self) -> Result<Vec<u8>, TransportError> {
        match self {
            Self::Full(bytes) => Ok(bytes),
            Self::Stream(mut stream) => {
                let mut out = Vec::new();
                while let Some(chunk) = stream.next_chunk().await {
                    out.extend_from_slice(&chunk?);
                }
                Ok(out)
            }
        }
    }
}

/// Receiving end of a chunked body. Create with [`BodyStream::channel`].
#[derive(Debug)]
pub struct BodyStream {
    rx: mpsc::UnboundedReceiver<Result<Vec<u8>, TransportError>>,
}

/// Sending end of a chunked body: the host pushes chunks from any thread (never blocks),
/// then drops every sender to end the body.
#[derive(Debug, Clone)]
pub struct BodySender {
    tx: mpsc::UnboundedSender<Result<Vec<u8>, TransportError>>,
}

impl BodyStream {
    /// A chunk channel. Unbounded on purpose: senders may be host threads or callbacks
    /// running inside the library's own executor, where blocking would deadlock; a chat
    /// response is small.
    pub fn channel() -> (BodySender, BodyStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (BodySender { tx }, BodyStream { rx })
    }

    /// The next chunk; `None` at the end of the body.
    pub async fn next_chunk(&mut self) -> Option<Result<Vec<u8>, TransportError>> {
        self.rx.recv().await
    }
}

impl BodySender {
    /// Pushes a chunk. `false` once the reader is gone (the call was cancelled).
    pub fn send(&self, chunk: Vec<u8>) -> bool {
        self.tx.send(Ok(chunk)).is_ok()
    }

    /// Ends the body with an error (e.g. the connection dropped mid-stream).
    pub fn fail(&self, error: TransportError) -> bool {
        self.tx.send(Err(error)).is_ok()
    }
}

/// What went wrong moving bytes, as the host reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportErrorKind {
    /// The request timed out.
    Timeout,
    /// Connection, DNS, TLS or other network failure.
    Network,
    /// The host cancelled the request.
    Cancelled,
    /// The answer was an HTTP error after all: a host that learns the status only after the
    /// body (NetworkKit's `requestInStream` at API 12 reports it after the last byte) ends a
    /// stream it had resolved as a success with the answer it really got. Classified like
    /// any error answer: by status, `Retry-After` and body (LLM-3).
    Status(Box<ErrorAnswer>),
}

/// An HTTP error answer reported through [`TransportErrorKind::Status`]. `Debug` shows
/// the status, the header names and the body's length only: a provider's error text may
/// echo the request or the key.
#[derive(Clone, PartialEq, Eq)]
pub struct ErrorAnswer {
    /// The HTTP status.
    pub status: u16,
    /// The answer's headers (`Retry-After`, `retry-after-ms`).
    pub headers: Vec<(String, String)>,
    /// The answer's body, or its start (at most 64 KiB of it is read).
    pub body: Vec<u8>,
}

impl fmt::Debug for ErrorAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("ErrorAnswer")
            .field("status", &self.status)
            .field("headers", &names)
            .field("body_len", &self.body.len())
            .finish()
    }
}

/// A transport failure reported by the host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind:?}: {message}")]
pub struct TransportError {
    /// The class.
    pub kind: TransportErrorKind,
    /// Host-supplied detail. The library scrubs the API key out of it before surfacing it.
    pub message: String,
}

impl TransportError {
    /// A network failure.
    pub fn network(message: impl Into<String>) -> Self {
        Self { kind: TransportErrorKind::Network, message: message.into() }
    }
    /// A timeout.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self { kind: TransportErrorKind::Timeout, message: message.into() }
    }
    /// The answer turned out to be `answer`, an HTTP error ([`TransportErrorKind::Status`]).
    pub fn status(answer: ErrorAnswer) -> Self {
        let message = format!("HTTP status {}", answer.status);
        Self { kind: TransportErrorKind::Status(Box::new(answer)), message }
    }
}

/// The host's HTTP client (LLM-1). Implementations send the request and return the
/// status, headers and body; they should stop work when `cancel` fires (the library
/// stops waiting either way).
///
/// Streaming: when `request.stream` is true, return [`HttpBody::Stream`] and push chunks
/// as they arrive, so text deltas reach the UI before the turn ends.
#[async_trait]
pub trait HttpTransport: Send + Sync {
    /// Sends one request.
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError>;
}
