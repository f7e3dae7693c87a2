//! The simulated OpenAI-compatible model server (DX-2): `POST /v1/chat/completions` on
//! loopback, checking `Authorization: Bearer <key>`, answering deterministically in the
//! real Chat Completions wire format, streamed (SSE) or not. It runs in-process on its own
//! threads; dropping the [`SimulatedServer`] stops it.

pub mod cache;
pub mod reply;
pub mod research;
pub mod summary;
pub mod wire;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tiny_http::{Header, Method, Request, Response, Server};

use self::reply::decide;
use self::wire::{Envelope, Usage};

/// Label for everything the simulated model says, so nobody mistakes it for a real one.
pub const SIMULATED_LABEL: &str = "[simulated model]";
/// The model name the demo sends to the simulated server.
pub const SIMULATED_MODEL: &str = "arkagent-sim-1";
/// Largest request body accepted.
const MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// How the simulated server behaves.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// The API key it accepts.
    pub api_key: String,
    /// Pause between streamed chunks, so streaming is visible.
    pub chunk_delay: Duration,
}

impl ServerOptions {
    /// Accepts `api_key`, 20 ms between streamed chunks.
    pub fn new(api_key: impl Into<String>) -> Self {
        Self {
            api_key: api_key.into(),
            chunk_delay: Duration::from_millis(20),
        }
    }
}

/// A running simulated server; stops when dropped.
pub struct SimulatedServer {
    server: Arc<Server>,
    port: u16,
    accept_thread: Option<JoinHandle<()>>,
    requests: Arc<AtomicU64>,
}

impl std::fmt::Debug for SimulatedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimulatedServer")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl SimulatedServer {
    /// Binds `127.0.0.1:0` and starts serving. Errors: the bind or thread spawn failed.
    pub fn start(options: ServerOptions) -> std::io::Result<Self> {
        let server =
            Server::http("127.0.0.1:0").map_err(|e| std::io::Error::other(e.to_string()))?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| std::io::Error::other("the simulated server has no IP address"))?;
        let server = Arc::new(server);
        let requests = Arc::new(AtomicU64::new(0));
        let cache = Arc::new(cache::PromptCache::default());
        let accept_thread = {
            let server = Arc::clone(&server);
            let requests = Arc::clone(&requests);
            let options = Arc::new(options);
            thread::Builder::new()
                .name("sim-model-accept".into())
                .spawn(move || {
                    for request in server.incoming_requests() {
                        let n = requests.fetch_add(1, Ordering::Relaxed) + 1;
                        let options = Arc::clone(&options);
                        let cache = Arc::clone(&cache);
                        // One thread per request: a slow stream must not hold up the others.
                        let spawned = thread::Builder::new()
                            .name("sim-model-request".into())
                            .spawn(move || handle(request, n, &options, &cache));
                        if let Err(e) = spawned {
                            tracing::warn!(
                                "{SIMULATED_LABEL} could not start a request thread: {e}"
                            );
                        }
                    }
                })?
        };
        tracing::info!(port, "{SIMULATED_LABEL} listening on 127.0.0.1");
        Ok(Self {
            server,
            port,
            accept_thread: Some(accept_thread),
            requests,
        })
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The base URL to put in a `ModelConfig`: `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Requests received so far.
    pub fn request_count(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }
}

impl Drop for SimulatedServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
}

fn handle(mut request: Request, n: u64, options: &ServerOptions, cache: &cache::PromptCache) {
    let span = tracing::info_span!("sim_model.request", n, method = %request.method(), path = %request.url());
    let _entered = span.enter();
    let path = request
        .url()
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    if path != "/v1/chat/completions" {
        return respond_error(
            request,
            404,
            "not_found",
            "unknown path; use POST /v1/chat/completions",
        );
    }
    if *request.method() != Method::Post {
        return respond_error(request, 405, "method_not_allowed", "use POST");
    }
    let expected = format!("Bearer {}", options.api_key);
    let authorised = request
        .headers()
        .iter()
        .any(|h| h.field.equiv("Authorization") && h.value.as_str() == expected);
    if !authorised {
        // Never echo the key that was sent.
        tracing::info!("{SIMULATED_LABEL} rejected a request: wrong or missing API key");
        return respond_error(
            request,
            401,
            "invalid_api_key",
            "Incorrect API key provided.",
        );
    }
    let mut body = String::new();
    if request
        .as_reader()
        .take(MAX_BODY_BYTES)
        .read_to_string(&mut body)
        .is_err()
    {
        return respond_error(
            request,
            400,
            "invalid_body",
            "the request body is not UTF-8 text",
        );
    }
    let parsed: Value = match serde_json::from_str(&body) {
        Ok(v @ Value::Object(_)) => v,
        _ => {
            return respond_error(
                request,
                400,
                "invalid_json",
                "the request body is not a JSON object",
            )
        }
    };
    if parsed
        .get("messages")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        return respond_error(
            request,
            400,
            "invalid_request",
            "'messages' must be a non-empty array",
        );
    }

    let reply = decide(&parsed);
    let mut usage = Usage::estimate(body.chars().count(), &reply);
    usage.cached_tokens = cache.hit(&body, usage.prompt_tokens);
    let envelope = Envelope {
        id: format!("chatcmpl-sim-{n}"),
        created: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        model: parsed
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(SIMULATED_MODEL)
            .to_owned(),
    };
    let stream = parsed
        .get("stream")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    tracing::info!(
        stream,
        finish_reason = reply.finish_reason(),
        prompt_tokens = usage.prompt_tokens,
        "{SIMULATED_LABEL} answering"
    );
    if stream {
        let include_usage = parsed
            .pointer("/stream_options/include_usage")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let events = wire::stream_events(&envelope, &reply, usage, include_usage);
        // Summaries are background work: no need to make them visibly slow.
        let delay = if summary::is_summary_request(&parsed) {
            Duration::ZERO
        } else {
            options.chunk_delay
        };
        if let Err(e) = write_sse(request, &events, delay) {
            tracing::info!("{SIMULATED_LABEL} client went away mid-stream: {e}");
        }
    } else {
        let body = wire::completion(&envelope, &reply, usage).to_string();
        respond_json(request, 200, body);
    }
}

/// Writes an SSE body with chunked transfer encoding, flushing every event so the client
/// sees each one as it is produced (tiny_http's own chunk encoder buffers 8 KiB).
fn write_sse(request: Request, events: &[String], delay: Duration) -> std::io::Result<()> {
    let mut out = request.into_writer();
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\
          Transfer-Encoding: chunked\r\n\r\n",
    )?;
    out.flush()?;
    for (i, event) in events.iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            thread::sleep(delay);
        }
        let frame = format!("data: {event}\n\n");
        write!(out, "{:x}\r\n{frame}\r\n", frame.len())?;
        out.flush()?;
    }
    out.write_all(b"0\r\n\r\n")?;
    out.flush()
}

fn respond_json(request: Request, status: u16, body: String) {
    let mut response = Response::from_string(body).with_status_code(status);
    if let Ok(header) = Header::from_bytes(&b"Content-Type"[..], &b"application/json"[..]) {
        response = response.with_header(header);
    }
    if let Err(e) = request.respond(response) {
        tracing::info!("{SIMULATED_LABEL} could not send a response: {e}");
    }
}

fn respond_error(request: Request, status: u16, code: &str, message: &str) {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": code}});
    respond_json(request, status, body.to_string());
}
