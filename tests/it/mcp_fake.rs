//! A strict MCP server (Streamable HTTP, revisions 2025-03-26 … 2025-11-25) behind the
//! host transport, beside the scripted model: it refuses what a real server refuses
//! (a missing Accept type, a request before `initialize`, a wrong `MCP-Protocol-Version`,
//! an unknown `Mcp-Session-Id` with 404, a missing token with 401) and records every
//! message and header it got. Answers are JSON or an event stream cut into small chunks.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arkagent::llm::{BodyStream, TransportErrorKind};
use arkagent::{CancellationToken, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::ScriptedModel;

/// How a tool call is answered.
pub enum CallReply {
    /// This `result`.
    Result(Value),
    /// Notifications first (event stream only), then this result.
    Notes(Vec<Value>, Value),
    /// A JSON-RPC error.
    Error(i64, String),
    /// Never answers (until the call is cancelled).
    Hang,
}

type CallFn = Box<dyn Fn(&str, &Value) -> CallReply + Send + Sync>;

pub struct FakeMcp {
    pub url: String,
    pub tools: Mutex<Vec<Value>>,
    /// Answer with an event stream (else JSON).
    pub sse: AtomicBool,
    /// The revision it answers `initialize` with.
    pub version: Mutex<String>,
    /// Every JSON-RPC message it received.
    pub received: Mutex<Vec<Value>>,
    /// The thread each of them was sent from, in the same order.
    pub sent_on: Mutex<Vec<std::thread::ThreadId>>,
    /// Every request's headers.
    pub headers: Mutex<Vec<Vec<(String, String)>>>,
    sessions: Mutex<HashSet<String>>,
    session_count: AtomicUsize,
    /// The next request carrying a session id forgets it and answers 404.
    pub expire_next: AtomicBool,
    /// Requests need `Authorization: Bearer <token>` (401 otherwise).
    pub token: Mutex<Option<String>>,
    /// Every request fails in the transport.
    pub down: AtomicBool,
    /// Every request is recorded and answered 404 (the endpoint was removed).
    pub gone: AtomicBool,
    /// The transport never answers `notifications/initialized` (until cancelled).
    pub stall_initialized: AtomicBool,
    /// tools/list page size.
    pub page_size: usize,
    pub call: CallFn,
}

impl FakeMcp {
    pub fn new(url: &str, tools: Vec<Value>, call: impl Fn(&str, &Value) -> CallReply + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            url: url.to_owned(),
            tools: Mutex::new(tools),
            sse: AtomicBool::new(false),
            version: Mutex::new("2025-11-25".to_owned()),
            received: Mutex::default(),
            sent_on: Mutex::default(),
            headers: Mutex::default(),
            sessions: Mutex::default(),
            session_count: AtomicUsize::new(0),
            expire_next: AtomicBool::new(false),
            token: Mutex::new(None),
            down: AtomicBool::new(false),
            gone: AtomicBool::new(false),
            stall_initialized: AtomicBool::new(false),
            page_size: 2,
            call: Box::new(call),
        })
    }

    /// The methods received, in order.
    pub fn methods(&self) -> Vec<String> {
        self.received.lock().unwrap().iter().map(|m| m["method"].as_str().unwrap_or("(response)").to_owned()).collect()
    }

    fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
        request.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn handle(&self, request: &HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(TransportError::network("connection refused"));
        }
        self.headers.lock().unwrap().push(request.headers.clone());
        assert_eq!(request.method, "POST");
        assert_eq!(Self::header(request, "content-type"), Some("application/json"));
        let accept = Self::header(request, "accept").unwrap_or("");
        assert!(accept.contains("application/json") && accept.contains("text/event-stream"), "Accept {accept:?}");
        if let Some(token) = self.token.lock().unwrap().as_ref() {
            if Self::header(request, "authorization") != Some(format!("Bearer {token}").as_str()) {
                return Ok(HttpResponse::full(401, r#"{"error":"invalid_token"}"#));
            }
        }
        let message: Value = serde_json::from_str(&request.body).expect("a JSON-RPC message");
        assert_eq!(message["jsonrpc"], "2.0");
        self.received.lock().unwrap().push(message.clone());
        self.sent_on.lock().unwrap().push(std::thread::current().id());
        if self.gone.load(Ordering::SeqCst) {
            return Ok(HttpResponse::full(404, "Not Found"));
        }
        let method = message["method"].as_str().expect("a method");
        if method == "initialize" {
            assert!(Self::header(request, "mcp-session-id").is_none(), "initialize carries no session");
            return Ok(self.initialize(&message));
        }
        let version = self.version.lock().unwrap().clone();
        assert_eq!(Self::header(request, "mcp-protocol-version"), Some(version.as_str()), "{method}: the negotiated version header");
        let session = Self::header(request, "mcp-session-id").expect("a session id after initialize").to_owned();
        if self.expire_next.swap(false, Ordering::SeqCst) {
            self.sessions.lock().unwrap().remove(&session);
        }
        if !self.sessions.lock().unwrap().contains(&session) {
            return Ok(HttpResponse::full(404, r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#));
        }
        let Some(id) = message.get("id").cloned() else {
            return Ok(HttpResponse::full(202, Vec::new()));
        };
        assert!(id.is_u64() || id.is_string(), "request id {id}");
        match method {
            "tools/list" => Ok(self.answer(&id, Vec::new(), Ok(self.page(&message["params"]["cursor"])), cancel)),
            "tools/call" => {
                let name = message["params"]["name"].as_str().expect("a tool name");
                let arguments = &message["params"]["arguments"];
                assert!(arguments.is_object(), "arguments {arguments}");
                match (self.call)(name, arguments) {
                    CallReply::Result(r) => Ok(self.answer(&id, Vec::new(), Ok(r), cancel)),
                    CallReply::Notes(notes, r) => Ok(self.answer(&id, notes, Ok(r), cancel)),
                    CallReply::Error(code, text) => Ok(self.answer(&id, Vec::new(), Err((code, text)), cancel)),
                    CallReply::Hang => Ok(self.hang(cancel)),
                }
            }
            other => Ok(self.answer(&id, Vec::new(), Err((-32601, format!("Method not found: {other}"))), cancel)),
        }
    }

    fn initialize(&self, message: &Value) -> HttpResponse {
        let asked = message["params"]["protocolVersion"].as_str().expect("protocolVersion");
        assert!(message["params"]["clientInfo"]["name"].is_string() && message["params"]["capabilities"].is_object());
        assert_eq!(asked, "2025-11-25", "the client offers its newest revision");
        let session = format!("session-{}", self.session_count.fetch_add(1, Ordering::SeqCst));
        self.sessions.lock().unwrap().insert(session.clone());
        let version = self.version.lock().unwrap().clone();
        let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
            "protocolVersion": version, "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "fake", "version": "1.0.0"}}});
        let mut response = HttpResponse::full(200, body.to_string());
        response.headers = vec![("Content-Type".into(), "application/json".into()), ("Mcp-Session-Id".into(), session)];
        response
    }

    fn page(&self, cursor: &Value) -> Value {
        let tools = self.tools.lock().unwrap().clone();
        let start: usize = cursor.as_str().map_or(0, |c| c.parse().expect("our cursor"));
        let end = (start + self.page_size).min(tools.len());
        let mut result = json!({"tools": tools[start..end]});
        if end < tools.len() {
            result["nextCursor"] = json!(end.to_string());
        }
        result
    }

    fn answer(&self, id: &Value, notes: Vec<Value>, outcome: Result<Value, (i64, String)>, _cancel: CancellationToken) -> HttpResponse {
        let response = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        };
        if !self.sse.load(Ordering::SeqCst) {
            let mut r = HttpResponse::full(200, response.to_string());
            r.headers = vec![("content-type".into(), "application/json; charset=utf-8".into())];
            return r;
        }
        let mut text = String::new();
        for note in notes {
            text.push_str(&format!("event: message\ndata: {note}\n\n"));
        }
        text.push_str(&format!("id: 1\nevent: message\ndata: {response}\n\n"));
        stream_response(text.into_bytes(), 7)
    }

    fn hang(&self, cancel: CancellationToken) -> HttpResponse {
        let (tx, rx) = BodyStream::channel();
        tx.send(b": keep-alive\n\n".to_vec());
        tokio::spawn(async move {
            cancel.cancelled().await;
            tx.fail(TransportError { kind: TransportErrorKind::Cancelled, message: "cancelled".into() });
        });
        HttpResponse { status: 200, headers: vec![("Content-Type".into(), "text/event-stream".into())], body: HttpBody::Stream(rx) }
    }
}

/// An event-stream answer delivered in chunks of `size` bytes.
pub fn stream_response(bytes: Vec<u8>, size: usize) -> HttpResponse {
    let (tx, rx) = BodyStream::channel();
    for chunk in bytes.chunks(size) {
        tx.send(chunk.to_vec());
    }
    HttpResponse { status: 200, headers: vec![("Content-Type".into(), "text/event-stream".into())], body: HttpBody::Stream(rx) }
}

/// The host transport: MCP servers by URL, the scripted model for everything else.
pub struct Router {
    pub model: Arc<ScriptedModel>,
    pub servers: Vec<Arc<FakeMcp>>,
}

#[async_trait]
impl HttpTransport for Router {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        match self.servers.iter().find(|s| s.url == request.url) {
            Some(server) => {
                // A network round trip: parallel calls interleave here.
                tokio::task::yield_now().await;
                if server.stall_initialized.load(Ordering::SeqCst) && request.body.contains("\"notifications/initialized\"") {
                    server.received.lock().unwrap().push(serde_json::from_str(&request.body).unwrap());
                    server.sent_on.lock().unwrap().push(std::thread::current().id());
                    cancel.cancelled().await;
                    return Err(TransportError { kind: TransportErrorKind::Cancelled, message: "cancelled".into() });
                }
                server.handle(&request, cancel)
            }
            None => self.model.send(request, cancel).await,
        }
    }
}

/// A tool definition as a server lists it.
pub fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}})
}

/// A text result.
pub fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}
