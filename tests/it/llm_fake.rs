//! A fake provider for the LLM tests: scripted HTTP answers, whole or chunked, through
//! the real host transport interface; plus a tracing capture. It speaks the running
//! test's wire format (WIRE-1): answers are scripted in the OpenAI-compatible shape and
//! translated to Anthropic Messages under `Wire::Anthropic` (`wire_fake`).

use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::llm::{BodySender, BodyStream, RetryPolicy, TransportErrorKind};
use arkagent::{CancellationToken, HttpBody, HttpRequest, HttpResponse, HttpTransport, ModelConfig, TransportError};
use async_trait::async_trait;

pub use crate::wire_fake::{as_received, each_wire, each_wire_sync, end_marker, wire, Wire};
use crate::wire_fake::{error_to_anthropic, speak, SseToAnthropic};

pub const KEY: &str = "sk-llm-test-KEY-9f8e7d6c5b4a";

/// One scripted answer.
pub enum Step {
    /// Status, headers and a whole body.
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// HTTP 200 whose body arrives in these chunks, `gap` apart, then ends (or fails).
    Chunks { chunks: Vec<Vec<u8>>, gap: Duration, then_fail: Option<TransportError> },
    /// HTTP 200 streamed from a body the test feeds itself.
    Stream(BodyStream),
    /// HTTP 200 whose body arrives in these chunks, already in the wire format.
    Cut(Vec<Vec<u8>>),
    /// The transport fails.
    Fail(TransportError),
    /// Never answers until cancelled.
    Hang,
}

impl Step {
    pub fn ok(body: impl Into<Vec<u8>>) -> Self {
        Self::Full(200, Vec::new(), body.into())
    }
    pub fn status(status: u16, body: impl Into<Vec<u8>>) -> Self {
        Self::Full(status, Vec::new(), body.into())
    }
    /// `body` (in the running wire format) cut into chunks of `size` bytes (UTF-8
    /// characters may be split).
    pub fn chunked(body: &[u8], size: usize) -> Self {
        Self::Cut(wire_body(body).chunks(size.max(1)).map(<[u8]>::to_vec).collect())
    }
}

/// A successful body scripted in the OpenAI-compatible shape, in the running wire format.
pub fn wire_body(body: &[u8]) -> Vec<u8> {
    match wire() {
        Wire::OpenAi => body.to_vec(),
        Wire::Anthropic => SseToAnthropic::default().convert(body),
    }
}

/// Parses a whole streamed body (in the running wire format) as the client would.
pub fn parse_stream_wire(body: &[u8]) -> Result<arkagent::ChatResponse, arkagent::LlmError> {
    let mut parser = arkagent::llm::stream_parser(&config());
    parser.push(body, None)?;
    parser.finish(None)
}

pub struct FakeProvider {
    steps: Mutex<VecDeque<Step>>,
    /// The wire format it speaks (the running test's when it was built).
    wire: Wire,
    pub requests: Mutex<Vec<HttpRequest>>,
    /// The cancel token each request got, to see that the host is told to stop.
    pub tokens: Mutex<Vec<CancellationToken>>,
}

impl FakeProvider {
    pub fn new(steps: Vec<Step>) -> Arc<Self> {
        Arc::new(Self { steps: Mutex::new(steps.into()), wire: wire(), requests: Mutex::default(), tokens: Mutex::default() })
    }

    /// The bytes of a successful body chunk in the provider's wire format.
    fn convert(&self, converter: &mut SseToAnthropic, chunk: Vec<u8>) -> Vec<u8> {
        match self.wire {
            Wire::OpenAi => chunk,
            Wire::Anthropic => converter.convert(&chunk),
        }
    }

    pub fn request_count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }
}

#[async_trait]
impl HttpTransport for FakeProvider {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        self.requests.lock().unwrap().push(request);
        self.tokens.lock().unwrap().push(cancel.clone());
        let step = self.steps.lock().unwrap().pop_front().expect("a scripted step for every request");
        let mut converter = SseToAnthropic::default();
        match step {
            Step::Full(status, headers, body) => {
                let body = match (self.wire, status) {
                    (Wire::OpenAi, _) => body,
                    (Wire::Anthropic, 200..=299) => converter.convert(&body),
                    (Wire::Anthropic, _) => error_to_anthropic(&body),
                };
                Ok(HttpResponse { status, headers, body: HttpBody::Full(body) })
            }
            Step::Cut(chunks) => {
                let (tx, rx) = BodyStream::channel();
                feed(&tx, chunks, None);
                Ok(HttpResponse { status: 200, headers: Vec::new(), body: HttpBody::Stream(rx) })
            }
            Step::Chunks { chunks, gap, then_fail } => {
                let chunks: Vec<Vec<u8>> = chunks.into_iter().map(|c| self.convert(&mut converter, c)).collect();
                let (tx, rx) = BodyStream::channel();
                if gap.is_zero() {
                    feed(&tx, chunks, then_fail);
                } else {
                    tokio::spawn(async move {
                        for chunk in chunks {
                            tokio::time::sleep(gap).await;
                            if !tx.send(chunk) {
                                return;
                            }
                        }
                        if let Some(e) = then_fail {
                            tx.fail(e);
                        }
                    });
                }
                Ok(HttpResponse { status: 200, headers: Vec::new(), body: HttpBody::Stream(rx) })
            }
            Step::Stream(rx) if self.wire == Wire::OpenAi => Ok(HttpResponse { status: 200, headers: Vec::new(), body: HttpBody::Stream(rx) }),
            Step::Stream(mut rx) => {
                // Each chunk the test sends is converted as it passes.
                let (tx, out) = BodyStream::channel();
                tokio::spawn(async move {
                    while let Some(chunk) = rx.next_chunk().await {
                        let sent = match chunk {
                            Ok(chunk) => tx.send(converter.convert(&chunk)),
                            Err(e) => tx.fail(e),
                        };
                        if !sent {
                            return;
                        }
                    }
                });
                Ok(HttpResponse { status: 200, headers: Vec::new(), body: HttpBody::Stream(out) })
            }
            Step::Fail(e) => Err(e),
            Step::Hang => {
                cancel.cancelled().await;
                Err(TransportError { kind: TransportErrorKind::Cancelled, message: "cancelled".into() })
            }
        }
    }
}

fn feed(tx: &BodySender, chunks: Vec<Vec<u8>>, then_fail: Option<TransportError>) {
    for chunk in chunks {
        tx.send(chunk);
    }
    if let Some(e) = then_fail {
        tx.fail(e);
    }
}

/// A streaming model config with fast retries.
/// An empty chat request (no prompt, messages or tools) built by `client`.
pub fn request(client: &arkagent::ChatClient) -> HttpRequest {
    client.build_http_request(&arkagent::ChatRequest {
        system_prompt: None,
        context_messages: &[],
        messages: &[],
        tools: &[],
        tool_choice: None,
    })
}

pub fn config() -> ModelConfig {
    let mut c = speak(ModelConfig::new("https://api.example.test/v1", KEY, "test-model"));
    c.stream = true;
    c.retry = RetryPolicy { max_attempts: 3, initial_backoff_ms: 1, max_backoff_ms: 5 };
    c
}

/// One SSE event line pair for a chunk with this choice delta.
pub fn delta_event(delta: &str) -> String {
    format!("data: {{\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n")
}

/// The finish chunk, a usage chunk and `[DONE]`.
pub fn finish_events(reason: &str) -> String {
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"{reason}\"}}]}}\n\n\
         data: {{\"choices\":[],\"usage\":{{\"prompt_tokens\":11,\"completion_tokens\":7,\"total_tokens\":18,\
         \"prompt_tokens_details\":{{\"cached_tokens\":3}}}}}}\n\ndata: [DONE]\n\n"
    )
}

/// Captures `tracing` output (all levels) of the current thread into a buffer.
#[derive(Clone, Default)]
pub struct TraceBuffer(Arc<Mutex<Vec<u8>>>);

impl TraceBuffer {
    /// Installs a TRACE-level subscriber for the current thread until the guard drops.
    pub fn install(&self) -> tracing::subscriber::DefaultGuard {
        let buffer = self.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || buffer.clone())
            .finish();
        tracing::subscriber::set_default(subscriber)
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl io::Write for TraceBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
