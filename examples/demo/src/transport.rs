//! A real HTTP client for the runtime (LLM-1): [`UreqTransport`] implements
//! [`HttpTransport`] with `ureq` (blocking, run on tokio's blocking pool) and rustls, so
//! real `https` endpoints work. Streamed bodies are pumped chunk by chunk from a reader
//! thread as they arrive. Header values never appear in errors or logs.

use std::io::{ErrorKind, Read};
use std::time::Duration;

use arkagent::llm::{BodySender, TransportErrorKind};
use arkagent::{
    BodyStream, CancellationToken, HttpBody, HttpRequest, HttpResponse, HttpTransport,
    TransportError,
};
use async_trait::async_trait;
use tracing::Instrument;

/// Connection set-up budget.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// Time to the response headers (a model may think for a while before answering).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(180);
/// Time to read a whole body, streamed or not.
const BODY_TIMEOUT: Duration = Duration::from_secs(600);
/// Largest non-streamed body accepted.
const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;
/// Read size of the stream pump.
const READ_CHUNK: usize = 8 * 1024;

/// An [`HttpTransport`] over `ureq`.
#[derive(Debug, Clone)]
pub struct UreqTransport {
    agent: ureq::Agent,
}

impl UreqTransport {
    /// A transport for real endpoints: honours `HTTPS_PROXY`/`NO_PROXY`, verifies TLS
    /// against the bundled web PKI roots.
    pub fn new() -> Self {
        Self::build(true)
    }

    /// A transport for the loopback simulated server: never goes through a proxy.
    pub fn loopback() -> Self {
        Self::build(false)
    }

    fn build(use_env_proxy: bool) -> Self {
        let mut config = ureq::Agent::config_builder()
            // 4xx/5xx are answers the library classifies, not transport errors.
            .http_status_as_error(false)
            .timeout_connect(Some(CONNECT_TIMEOUT))
            .timeout_recv_response(Some(RESPONSE_TIMEOUT))
            .timeout_recv_body(Some(BODY_TIMEOUT))
            .user_agent(concat!("arkagent-demo/", env!("CARGO_PKG_VERSION")));
        if !use_env_proxy {
            config = config.proxy(None);
        }
        Self {
            agent: ureq::Agent::new_with_config(config.build()),
        }
    }
}

impl Default for UreqTransport {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl HttpTransport for UreqTransport {
    async fn send(
        &self,
        request: HttpRequest,
        cancel: CancellationToken,
    ) -> Result<HttpResponse, TransportError> {
        // Only method, URL and body size: headers carry the API key (LLM-4).
        let span = tracing::info_span!(
            "demo.http",
            method = %request.method,
            url = %request.url,
            body_len = request.body.len(),
            stream = request.stream
        );
        let agent = self.agent.clone();
        let worker_cancel = cancel.clone();
        let blocking_span = span.clone();
        let task = tokio::task::spawn_blocking(move || {
            let _entered = blocking_span.enter();
            send_blocking(&agent, request, worker_cancel)
        });
        async move {
            tokio::select! {
                biased;
                // The blocking call cannot be interrupted; it finishes on its own and its
                // result is dropped. A stream pump stops at its next chunk.
                _ = cancel.cancelled() => Err(cancelled()),
                joined = task => match joined {
                    Ok(result) => result,
                    Err(_) => Err(TransportError::network("the HTTP worker task failed")),
                },
            }
        }
        .instrument(span)
        .await
    }
}

fn cancelled() -> TransportError {
    TransportError {
        kind: TransportErrorKind::Cancelled,
        message: "request cancelled".to_owned(),
    }
}

fn send_blocking(
    agent: &ureq::Agent,
    request: HttpRequest,
    cancel: CancellationToken,
) -> Result<HttpResponse, TransportError> {
    let HttpRequest {
        method,
        url,
        headers,
        body,
        stream,
    } = request;
    let mut builder = ureq::http::Request::builder()
        .method(method.as_str())
        .uri(url.as_str());
    for (name, value) in &headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    // The builder's error could quote a header; report only which part was wrong.
    let http_request = builder.body(body.as_bytes()).map_err(|_| {
        TransportError::network("invalid request: bad method, URL or header (values not shown)")
    })?;
    let response = agent.run(http_request).map_err(from_ureq)?;
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .filter_map(|(name, value)| {
            value
                .to_str()
                .ok()
                .map(|v| (name.as_str().to_owned(), v.to_owned()))
        })
        .collect();
    let mut body = response.into_body();
    tracing::debug!(status, stream, "response headers received");
    let body = if stream {
        let (sender, receiver) = BodyStream::channel();
        let reader = body.into_reader();
        std::thread::Builder::new()
            .name("arkagent-demo-body".into())
            .spawn(move || pump(reader, &sender, &cancel))
            .map_err(|_| TransportError::network("could not start the body reader thread"))?;
        HttpBody::Stream(receiver)
    } else {
        HttpBody::Full(
            body.with_config()
                .limit(MAX_BODY_BYTES)
                .read_to_vec()
                .map_err(from_ureq)?,
        )
    };
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

/// Pushes body chunks as they arrive until the end, an error, cancellation, or the
/// reader on the other side going away.
fn pump(mut reader: impl Read, sender: &BodySender, cancel: &CancellationToken) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut chunks = 0u64;
    loop {
        if cancel.is_cancelled() {
            break;
        }
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                chunks += 1;
                if !sender.send(buf[..n].to_vec()) {
                    break;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                sender.fail(from_io(e));
                break;
            }
        }
    }
    tracing::debug!(chunks, "body stream ended");
}

fn from_ureq(error: ureq::Error) -> TransportError {
    match error {
        ureq::Error::Timeout(which) => TransportError::timeout(format!("timed out ({which})")),
        ureq::Error::Io(e) => from_io(e),
        other => TransportError::network(other.to_string()),
    }
}

fn from_io(error: std::io::Error) -> TransportError {
    // ureq wraps its own errors (e.g. a body timeout) in io::Error while reading.
    if let Some(inner) = error
        .get_ref()
        .and_then(|e| e.downcast_ref::<ureq::Error>())
    {
        if let ureq::Error::Timeout(which) = inner {
            return TransportError::timeout(format!("timed out ({which})"));
        }
        return TransportError::network(inner.to_string());
    }
    match error.kind() {
        ErrorKind::TimedOut | ErrorKind::WouldBlock => TransportError::timeout(error.to_string()),
        _ => TransportError::network(error.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llm_4_transport_errors_never_quote_header_values() {
        let request = HttpRequest {
            method: "POST".into(),
            url: "http://127.0.0.1:1/v1/chat/completions".into(),
            headers: vec![("Authorization".into(), "Bearer sk-top-secret\n".into())],
            body: std::sync::Arc::new("{}".to_owned()),
            stream: false,
        };
        let Err(err) = send_blocking(
            &UreqTransport::loopback().agent,
            request,
            CancellationToken::new(),
        ) else {
            panic!("an invalid header must fail");
        };
        assert!(!err.message.contains("sk-top-secret"), "{}", err.message);
    }
}
