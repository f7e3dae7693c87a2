use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::common::MAX_ERROR_BODY_BYTES;
use super::config::ModelConfig;
use super::delta::StreamDelta;
use super::format::{protocol, WireProtocol};
use super::request::{ChatRequest, ChatResponse};
use super::retry::Jitter;
use super::sse::MAX_EVENT_BYTES;
use super::stream::StreamParser;
use super::transport::{ErrorAnswer, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError, TransportErrorKind};
use crate::error::LlmError;
use crate::history::{Message, ModelUsage, ThinkingBlock};

/// Talks to one model through the host transport: builds requests in the config's wire
/// format (WIRE-1), sends them with the configured timeout and retries (LLM-3), and
/// parses whole or streamed answers (LLM-2).
#[derive(Clone)]
pub struct ChatClient {
    transport: Arc<dyn HttpTransport>,
    config: ModelConfig,
    /// The config's protocol; `None` for an unknown `wire_format` (every call then fails).
    protocol: Option<&'static dyn WireProtocol>,
    jitter_seed: Option<u64>,
}

impl ChatClient {
    /// A client for `config` over `transport`. A config whose `wire_format` names no
    /// protocol (one that skipped validation, which refuses it) builds requests like
    /// `"openai"` but fails every call with `llm_bad_request` (`unknown_wire_format`)
    /// before anything is sent.
    pub fn new(transport: Arc<dyn HttpTransport>, config: ModelConfig) -> Self {
        let protocol = protocol(&config.wire_format);
        Self { transport, config, protocol, jitter_seed: None }
    }

    /// The protocol requests are built and answers parsed with.
    fn wire(&self) -> &'static dyn WireProtocol {
        super::format::protocol_of(&self.config)
    }

    /// Fixes the seed of the backoff jitter (tests). By default each request seeds its own
    /// generator from its URL and body.
    pub fn with_jitter_seed(mut self, seed: u64) -> Self {
        self.jitter_seed = Some(seed);
        self
    }

    /// The model config.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// Builds the HTTP request for `request`, encoded from scratch in the config's wire
    /// format (a summarizer call; tests and benchmarks).
    pub fn build_http_request(&self, request: &ChatRequest<'_>) -> HttpRequest {
        self.http_request_with_body(self.wire().encode_request(&self.config, request))
    }

    /// [`build_http_request`](Self::build_http_request) for a one-off request no later
    /// request extends (a summarizer's chunk of transcript): the provider is asked to cache
    /// none of its messages ([`WireProtocol::encode_one_off`]).
    pub fn build_one_off_http_request(&self, request: &ChatRequest<'_>) -> HttpRequest {
        self.http_request_with_body(self.wire().encode_one_off(&self.config, request))
    }

    /// The HTTP request carrying an already encoded `body` (the runtime assembles bodies
    /// from cached encodings: its protocol's `RequestEncoder`).
    pub fn http_request_with_body(&self, body: String) -> HttpRequest {
        self.http_request_with_shared_body(Arc::new(body))
    }

    /// The HTTP request carrying `body`, shared: the runtime lends its encoding cache as
    /// the body and takes it back once the request is dropped (PERF-2).
    pub fn http_request_with_shared_body(&self, body: Arc<String>) -> HttpRequest {
        let wire = self.wire();
        let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        wire.push_headers(&self.config, &mut headers);
        if self.config.stream {
            headers.push(("Accept".to_owned(), "text/event-stream".to_owned()));
        }
        headers.extend(self.config.extra_headers.iter().cloned());
        HttpRequest {
            method: "POST".to_owned(),
            url: wire.url(&self.config),
            headers,
            body,
            stream: self.config.stream,
        }
    }

    /// Sends an already built request and parses the answer, whole JSON or SSE stream.
    /// Retries and times out per [`ModelConfig::retry`],
    /// [`ModelConfig::request_timeout_ms`] and [`ModelConfig::idle_timeout_ms`]. Cancellation wins: once `cancel` fires the
    /// call returns [`LlmError::Cancelled`] without waiting for the host or a backoff.
    pub async fn send(&self, http: HttpRequest, cancel: &CancellationToken) -> Result<ChatResponse, LlmError> {
        self.send_with_retries(http, cancel, None, None).await
    }

    /// Like [`send`](Self::send), and hands every piece of the answer to `on_delta` as it
    /// is parsed: text, reasoning, tool-call starts and argument fragments. A
    /// non-streaming (JSON) answer is delivered as one delta per part. The returned
    /// response equals what the non-streaming parser gives for the same completion.
    ///
    /// Once a delta has been delivered a failure is returned as is, never retried (the
    /// caller has shown part of an answer). `on_delta` runs on the task awaiting this
    /// call; keep it short.
    pub async fn send_streaming(
        &self,
        http: HttpRequest,
        cancel: &CancellationToken,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
    ) -> Result<ChatResponse, LlmError> {
        self.send_with_retries(http, cancel, Some(on_delta), None).await
    }

    /// [`send_streaming`](Self::send_streaming) that also keeps, in `cut_off`, the usage a
    /// stream reported before it ended (priced like an answer's, COST-2): when the call then
    /// fails mid-stream, that is what the provider billed at least (Anthropic's
    /// `message_start` carries the input tokens). Set at the first usage seen.
    pub async fn send_streaming_metered(
        &self,
        http: HttpRequest,
        cancel: &CancellationToken,
        on_delta: &(dyn Fn(StreamDelta) + Send + Sync),
        cut_off: &CutOffUsage,
    ) -> Result<ChatResponse, LlmError> {
        self.send_with_retries(http, cancel, Some(on_delta), Some(cut_off)).await
    }

    async fn send_with_retries(
        &self,
        http: HttpRequest,
        cancel: &CancellationToken,
        on_delta: Option<&(dyn Fn(StreamDelta) + Send + Sync)>,
        cut_off: Option<&CutOffUsage>,
    ) -> Result<ChatResponse, LlmError> {
        if self.protocol.is_none() {
            return Err(LlmError::BadRequest { status: 0, provider_code: Some("unknown_wire_format".into()) });
        }
        let policy = self.config.retry;
        let attempts = policy.max_attempts.max(1);
        let mut jitter: Option<Jitter> = None;
        let mut http = Some(http);
        for attempt in 1..=attempts {
            // The last attempt gets the request itself; earlier ones a copy.
            let request = if attempt == attempts { http.take() } else { http.clone() };
            let Some(request) = request else { break };
            // Never the headers (Authorization) or the body (user data); the URL may carry
            // a key for some gateways, so it is redacted too.
            tracing::trace!(attempt, wire = self.wire().name(), url = %self.config.redact(&request.url), body_bytes = request.body.len(), stream = request.stream, "model request");
            let delivered = AtomicBool::new(false);
            let result = self.attempt(request, cancel, on_delta, &delivered, cut_off).await;
            let error = match result {
                Ok(mut response) => {
                    // COST-2: priced once, here, by the config that made the call.
                    if let (Some(price), Some(usage)) = (&self.config.price, response.usage.as_mut()) {
                        usage.cost = Some(Box::new(price.cost_of(usage)));
                    }
                    return Ok(response);
                }
                Err(e) => e.redacted(|t| self.config.redact(t)),
            };
            let retry = attempt < attempts && error.is_retryable() && !delivered.load(Ordering::Relaxed);
            if !retry || cancel.is_cancelled() {
                tracing::debug!(code = error.code().as_str(), attempt, "model call failed");
                return Err(error);
            }
            let jitter = jitter.get_or_insert_with(|| match (self.jitter_seed, &http) {
                (Some(seed), _) => Jitter::seeded(seed),
                (None, Some(h)) => Jitter::for_request(&h.url, &h.body),
                (None, None) => Jitter::seeded(0),
            });
            let delay_ms = policy.delay_ms(&error, attempt - 1, jitter);
            tracing::debug!(code = error.code().as_str(), attempt, delay_ms, "retrying model call");
            tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                _ = tokio::time::sleep(Duration::from_millis(delay_ms)) => {}
            }
        }
        Err(LlmError::Cancelled) // unreachable: the last attempt returns
    }

    /// One attempt, abandoned when `cancel` fires. Its time limits (OHOS-6): a request
    /// that does not stream is bounded as a whole by `request_timeout_ms`; a streamed
    /// one until its response arrives by `request_timeout_ms`, then chunk to chunk by
    /// `idle_timeout_ms` (no total limit: a stream that keeps sending is never cut).
    async fn attempt(
        &self,
        http: HttpRequest,
        cancel: &CancellationToken,
        on_delta: Option<&(dyn Fn(StreamDelta) + Send + Sync)>,
        delivered: &AtomicBool,
        cut_off: Option<&CutOffUsage>,
    ) -> Result<ChatResponse, LlmError> {
        // The host's token for this attempt: cancelled when the attempt ends early
        // (timeout, idle timeout, cancellation, or the body is no longer needed after
        // `[DONE]`).
        let token = cancel.child_token();
        let _stop_host = token.clone().drop_guard();
        let total_ms = if http.stream { 0 } else { self.config.request_timeout_ms };
        let exchange = self.exchange(http, token, on_delta, delivered, cut_off);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => Err(LlmError::Cancelled),
            result = within(total_ms, exchange) => result,
        }
    }

    async fn exchange(
        &self,
        http: HttpRequest,
        token: CancellationToken,
        on_delta: Option<&(dyn Fn(StreamDelta) + Send + Sync)>,
        delivered: &AtomicBool,
        cut_off: Option<&CutOffUsage>,
    ) -> Result<ChatResponse, LlmError> {
        // A request that does not stream is bounded as a whole by `attempt`.
        let (head_ms, idle_ms) =
            if http.stream { (self.config.request_timeout_ms, self.config.idle_timeout_ms) } else { (0, 0) };
        let wire = self.wire();
        let response = within(head_ms, async { self.transport.send(http, token).await.map_err(|e| transport_error(wire, e)) }).await?;
        let status = response.status;
        if !(200..300).contains(&status) {
            let retry_after = wire.retry_after_ms(&response);
            let body = read_error_body(response.body, idle_ms).await;
            return Err(wire.classify_error(status, &body, retry_after));
        }
        let mut emit = |delta: StreamDelta| {
            if let Some(f) = on_delta {
                delivered.store(true, Ordering::Relaxed);
                f(delta);
            }
        };
        let mut body = BodyReader { wire, state: Body::default() };
        match response.body {
            HttpBody::Full(bytes) => body.push(&bytes, on_delta.is_some(), &mut emit)?,
            HttpBody::Stream(mut stream) => {
                // Set once the first usage is kept: no lock per chunk after it.
                let mut kept = false;
                while let Some(chunk) = within(idle_ms, async { Ok(stream.next_chunk().await) }).await? {
                    body.push(&chunk.map_err(|e| transport_error(wire, e))?, on_delta.is_some(), &mut emit)?;
                    if let Some(cell) = cut_off.filter(|_| !kept) {
                        kept = cell.keep(|| body.usage_so_far(), self.config.price.as_ref());
                    }
                    if body.is_done() {
                        break; // ignore anything after [DONE]; the guard tells the host
                    }
                }
            }
        }
        body.finish(on_delta.is_some(), &mut emit)
    }
}

/// SUB-6, COST-2: where [`ChatClient::send_streaming_metered`] keeps the usage a stream
/// reported before its end (priced), for a call cut off mid-stream.
#[derive(Debug, Default)]
pub struct CutOffUsage(std::sync::Mutex<Option<ModelUsage>>);

impl CutOffUsage {
    /// The usage kept, if a stream reported one.
    pub fn take(&self) -> Option<ModelUsage> {
        self.0.lock().ok().and_then(|mut u| u.take())
    }

    /// Keeps the first usage `read` gives, priced by `price`; true once one is kept.
    fn keep(&self, read: impl FnOnce() -> Option<ModelUsage>, price: Option<&crate::history::ModelPrice>) -> bool {
        let Ok(mut kept) = self.0.lock() else { return true };
        if kept.is_none() {
            *kept = read().map(|mut usage| {
                if let Some(price) = price {
                    usage.cost = Some(Box::new(price.cost_of(&usage)));
                }
                usage
            });
        }
        kept.is_some()
    }
}

/// `future` limited to `ms` milliseconds (`0`: no limit); running out is
/// [`LlmError::Timeout`].
async fn within<T>(ms: u64, future: impl std::future::Future<Output = Result<T, LlmError>>) -> Result<T, LlmError> {
    if ms == 0 {
        future.await
    } else {
        tokio::time::timeout(Duration::from_millis(ms), future).await.unwrap_or(Err(LlmError::Timeout))
    }
}

fn transport_error(wire: &dyn WireProtocol, e: TransportError) -> LlmError {
    match e.kind {
        TransportErrorKind::Timeout => LlmError::Timeout,
        TransportErrorKind::Cancelled => LlmError::Cancelled,
        // Redacted by the caller (the host's text may echo the request).
        TransportErrorKind::Network => LlmError::Transport(e.message),
        // Classified as if the host had resolved with this answer (OHOS-9).
        TransportErrorKind::Status(answer) => {
            let ErrorAnswer { status, headers, body } = *answer;
            let response = HttpResponse { status, headers, body: HttpBody::Full(Vec::new()) };
            wire.classify_error(status, &body, wire.retry_after_ms(&response))
        }
    }
}

/// Reads at most [`MAX_ERROR_BODY_BYTES`] of an error body; failures and a silence
/// longer than `idle_ms` (`0`: no limit) leave it short (the status alone still
/// classifies the error).
async fn read_error_body(body: HttpBody, idle_ms: u64) -> Vec<u8> {
    match body {
        HttpBody::Full(mut bytes) => {
            bytes.truncate(MAX_ERROR_BODY_BYTES);
            bytes
        }
        HttpBody::Stream(mut stream) => {
            let mut out = Vec::new();
            while let Ok(Some(Ok(chunk))) = within(idle_ms, async { Ok(stream.next_chunk().await) }).await {
                out.extend_from_slice(&chunk);
                if out.len() >= MAX_ERROR_BODY_BYTES {
                    break;
                }
            }
            out
        }
    }
}

/// A successful body whose kind is decided by its first significant byte: `{` is a JSON
/// completion, an SSE field or comment (`data:`, `:`, `event:`, `id:`, `retry:`) an SSE
/// stream, anything else (an HTML captive-portal page) `llm_malformed_response`. Hosts do not always
/// pass `Content-Type`, and some servers ignore `stream: true`. Either kind is read by
/// the config's protocol (WIRE-1); the sniffing is shared.
struct BodyReader {
    wire: &'static dyn WireProtocol,
    state: Body,
}

#[derive(Default)]
enum Body {
    /// Nothing but whitespace (or a BOM) so far; those bytes are kept.
    #[default]
    Undecided,
    Prefix(Vec<u8>),
    Json(Vec<u8>),
    Sse(Box<StreamParser>),
}

impl BodyReader {
    fn push(&mut self, chunk: &[u8], wants_deltas: bool, emit: &mut dyn FnMut(StreamDelta)) -> Result<(), LlmError> {
        match &mut self.state {
            Body::Json(buf) => {
                buf.extend_from_slice(chunk);
                Ok(())
            }
            Body::Sse(parser) => parser.push(chunk, wants_deltas.then_some(emit)),
            Body::Undecided | Body::Prefix(_) => {
                let insignificant = |b: &u8| b.is_ascii_whitespace() || matches!(b, 0xEF | 0xBB | 0xBF);
                let lead = chunk.iter().take_while(|b| insignificant(b)).count();
                let significant = chunk.get(lead).copied();
                let mut bytes = match std::mem::take(&mut self.state) {
                    Body::Prefix(prefix) => prefix,
                    _ => Vec::new(),
                };
                // The same limit on the leading whitespace however the body is chunked.
                if bytes.len() + lead > MAX_EVENT_BYTES {
                    return Err(LlmError::MalformedResponse("body is only whitespace".into()));
                }
                bytes.extend_from_slice(chunk);
                self.state = match significant {
                    None => Body::Prefix(bytes),
                    Some(b'{') => Body::Json(bytes),
                    // An SSE stream starts with a field (`data:`, `event:`, `id:`,
                    // `retry:`) or a comment (`:`); anything else is neither JSON nor SSE.
                    Some(b'<') => {
                        return Err(LlmError::MalformedResponse(
                            "the response body is HTML, not JSON or an event stream (a captive portal or proxy page?)".into(),
                        ))
                    }
                    Some(b) if !matches!(b, b'd' | b'e' | b'i' | b'r' | b':') => {
                        return Err(LlmError::MalformedResponse("the response body is neither JSON nor an event stream".into()))
                    }
                    Some(_) => {
                        let mut parser = Box::new(StreamParser::with_events(self.wire.stream_events()));
                        parser.push(&bytes, wants_deltas.then_some(emit))?;
                        Body::Sse(parser)
                    }
                };
                Ok(())
            }
        }
    }

    fn is_done(&self) -> bool {
        matches!(&self.state, Body::Sse(parser) if parser.is_done())
    }

    /// The usage a stream reported so far (none for a JSON body, which comes whole).
    fn usage_so_far(&self) -> Option<ModelUsage> {
        match &self.state {
            Body::Sse(parser) => parser.usage_so_far(),
            _ => None,
        }
    }

    fn finish(self, wants_deltas: bool, emit: &mut dyn FnMut(StreamDelta)) -> Result<ChatResponse, LlmError> {
        match self.state {
            Body::Undecided | Body::Prefix(_) => Err(LlmError::MalformedResponse("empty body".into())),
            Body::Sse(parser) => parser.finish(wants_deltas.then_some(emit)),
            Body::Json(bytes) => {
                // Start at the `{`: a BOM (or whitespace before it) is not JSON.
                let start = bytes.iter().position(|&b| b == b'{').unwrap_or(0);
                let response = self.wire.parse_response(&bytes[start..])?;
                if wants_deltas {
                    emit_whole(&response, emit);
                }
                Ok(response)
            }
        }
    }
}

/// A non-streamed answer as deltas: reasoning, text, then each tool call.
fn emit_whole(response: &ChatResponse, emit: &mut dyn FnMut(StreamDelta)) {
    let Message::Assistant { content, tool_calls, .. } = &response.message else { return };
    reasoning_deltas(&response.message).into_iter().for_each(&mut *emit);
    if let Some(c) = content.as_ref().filter(|c| !c.is_empty()) {
        emit(StreamDelta::Text(c.clone()));
    }
    for (index, call) in tool_calls.iter().enumerate() {
        let index = u32::try_from(index).unwrap_or(u32::MAX);
        emit(StreamDelta::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
        if !call.arguments.is_empty() {
            emit(StreamDelta::ToolCallArguments { index, fragment: call.arguments.clone() });
        }
    }
}

/// THINK-5: an answer's reasoning as the deltas a stream of it would have given: its
/// reasoning text, each `thinking` block's text, each redacted block marked.
pub fn reasoning_deltas(message: &Message) -> Vec<StreamDelta> {
    let Message::Assistant { reasoning, thinking, .. } = message else { return Vec::new() };
    let text = reasoning.iter().filter(|r| !r.is_empty()).map(|r| StreamDelta::Reasoning(r.to_string()));
    let blocks = thinking.iter().filter_map(|block| match block {
        ThinkingBlock::Thinking { thinking, .. } if !thinking.is_empty() => Some(StreamDelta::Reasoning(thinking.clone())),
        ThinkingBlock::Thinking { .. } => None,
        ThinkingBlock::RedactedThinking { .. } => Some(StreamDelta::RedactedReasoning),
    });
    text.chain(blocks).collect()
}
