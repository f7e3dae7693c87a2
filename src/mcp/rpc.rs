//! MCP-1: JSON-RPC over Streamable HTTP through the host transport — one server's
//! connection (protocol version, session id, the host's auth headers), its requests and
//! notifications, answers as JSON or as an event stream with notifications interleaved.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use super::{McpError, McpErrorCode, McpServerConfig, LATEST_PROTOCOL_VERSION, STATELESS_PROTOCOL_VERSION as STATELESS, SUPPORTED_PROTOCOL_VERSIONS};
use crate::llm::{HttpRequest, HttpResponse, HttpTransport, TransportErrorKind};

use McpErrorCode::*;

/// One MCP server: its config and its connection, shared by every runtime holding it
/// (a parent and its sub-agents reuse one session). Cheap to clone.
#[derive(Clone)]
pub struct McpServer {
    pub(super) inner: Arc<Connection>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("name", &self.inner.config.name).finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server, not yet connected (the first run that needs it connects). Errors:
    /// `invalid_config` (see [`McpServerConfig::validate`]).
    pub fn new(config: McpServerConfig) -> Result<Self, crate::error::ArkAgentError> {
        config.validate()?;
        Ok(Self { inner: Arc::new(Connection { config, state: Mutex::default(), next_id: AtomicU64::new(1) }) })
    }

    /// Its config.
    pub fn config(&self) -> &McpServerConfig {
        &self.inner.config
    }

    /// The revision the server agreed to, once connected.
    pub fn protocol_version(&self) -> Option<String> {
        self.inner.lock().protocol.clone()
    }
}

/// What a connection knows.
#[derive(Default)]
pub(super) struct ConnState {
    /// The negotiated revision; `None` until initialised.
    pub(super) protocol: Option<String>,
    /// The server's `Mcp-Session-Id`, when it gave one.
    pub(super) session: Option<String>,
    /// The host's auth headers, once asked for.
    auth: Option<Vec<(String, String)>>,
    /// Set by `notifications/tools/list_changed`: the next run lists again.
    pub(super) list_changed: bool,
    /// The tools last listed (shared by every runtime holding the server).
    pub(super) tools: Option<Arc<Vec<RemoteTool>>>,
    /// When connecting or listing last failed (the runtime's clock, ms).
    pub(super) failed_at: Option<u64>,
}

pub(super) struct Connection {
    pub(super) config: McpServerConfig,
    state: Mutex<ConnState>,
    next_id: AtomicU64,
}

/// How a request failed below the protocol: retried once by [`Connection::request`].
pub(super) enum Failure {
    /// 404 on a session id: initialise again.
    SessionExpired,
    /// 401/403: ask the host for fresh headers.
    Unauthorized(u16),
    Fatal(McpError),
}

impl From<McpError> for Failure {
    fn from(e: McpError) -> Self {
        Self::Fatal(e)
    }
}

impl Connection {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, ConnState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A fresh JSON-RPC request id.
    pub(super) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// `text` without any header value of this server (static or the host's).
    pub(super) fn redact(&self, text: &str) -> String {
        redact_with(&self.secrets(), text)
    }

    /// The header values a text must not carry: each whole value, then each part of it (the
    /// token after `Bearer `, `Basic `, …).
    fn secrets(&self) -> Vec<String> {
        let auth = self.lock().auth.clone().unwrap_or_default();
        let mut secrets = Vec::new();
        for (_, value) in self.config.headers.iter().chain(auth.iter()) {
            for secret in std::iter::once(value.as_str()).chain(value.split_whitespace().filter(|p| p.len() >= 8)) {
                if secret.len() >= 4 {
                    secrets.push(secret.to_owned());
                }
            }
        }
        secrets
    }

    /// `value` with every string, object key and number in it redacted as by
    /// [`redact`](Self::redact) (a number that held a secret becomes a redacted string).
    pub(super) fn redact_value(&self, value: &mut Value) {
        let secrets = self.secrets();
        if !secrets.is_empty() {
            redact_value_with(&secrets, value);
        }
    }

    pub(super) fn error(&self, code: McpErrorCode, message: impl AsRef<str>) -> McpError {
        McpError::new(code, self.redact(message.as_ref()))
    }

    /// Initialises (when not yet): `initialize`, the version checked, the session id kept,
    /// `notifications/initialized`.
    pub(super) async fn ensure_initialized(&self, transport: &dyn HttpTransport, cancel: &CancellationToken) -> Result<(), McpError> {
        if self.lock().protocol.is_some() {
            return Ok(());
        }
        Box::pin(self.initialize(transport, cancel)).await
    }

    /// The old session (if any) stays until the new one replaces it: a parallel call never
    /// sees none, and one that met the same 404 initialises again itself at worst.
    async fn initialize(&self, transport: &dyn HttpTransport, cancel: &CancellationToken) -> Result<(), McpError> {
        let params = json!({"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {}, "clientInfo": client_info()});
        let (result, session) = match self.call(transport, (self.next_id(), "initialize", Some(params)), cancel, 256 * 1024, &mut |_| {}).await {
            Ok(answer) => answer,
            // A 2026-07-28 server has no `initialize`: ask it the stateless way.
            Err(e) if matches!(e.code, McpHttp | McpRpcError) => return self.discover(transport, cancel).await.map_err(|_| e),
            Err(e) => return Err(e),
        };
        let version = result["protocolVersion"].as_str().unwrap_or_default();
        if !SUPPORTED_PROTOCOL_VERSIONS.contains(&version) {
            return Err(self.error(McpVersion, format!("the server speaks MCP {version:?}; this client speaks {SUPPORTED_PROTOCOL_VERSIONS:?}")));
        }
        {
            let mut state = self.lock();
            state.protocol = Some(version.to_owned());
            state.session = session;
        }
        // Initialised only once the server heard `notifications/initialized`: a failed or
        // dropped notification (a cancelled run, a deadline) leaves the next call to
        // initialise again, never to skip a handshake the server did not finish.
        let mut told = Handshake(self, false);
        self.notify(transport, "notifications/initialized", None, cancel).await?;
        told.1 = true;
        Ok(())
    }

    /// `server/discover` as [`STATELESS`] speaks it: the revision kept when the server lists
    /// it (then every request carries it), forgotten otherwise.
    async fn discover(&self, transport: &dyn HttpTransport, cancel: &CancellationToken) -> Result<(), McpError> {
        self.lock().protocol = Some(STATELESS.to_owned());
        // Forgotten unless the probe succeeds — also when it is dropped mid-way (a deadline,
        // a cancelled run): a 2025 server must never be left spoken to the 2026 way.
        let mut probe = Probe(self, false);
        let answer = self.call(transport, (self.next_id(), "server/discover", None), cancel, 64 * 1024, &mut |_| {}).await;
        probe.1 = matches!(answer, Ok((ref result, _)) if result["supportedVersions"].as_array().is_some_and(|v| v.iter().any(|v| v == STATELESS)));
        if probe.1 {
            // No sessions in that revision: an old session's id is never sent again.
            self.lock().session = None;
            Ok(())
        } else {
            Err(self.error(McpVersion, "the server speaks neither initialize nor 2026-07-28"))
        }
    }

    /// A request, answered: initialises first if needed (see [`call`](Self::call) for
    /// the retries).
    pub(super) async fn request(
        &self,
        transport: &dyn HttpTransport,
        (id, method, params): (u64, &str, Value),
        cancel: &CancellationToken,
        limit: usize,
        on_note: &mut (dyn FnMut(&Value) + Send),
    ) -> Result<Value, McpError> {
        self.ensure_initialized(transport, cancel).await?;
        self.call(transport, (id, method, Some(params)), cancel, limit, on_note).await.map(|(r, _)| r)
    }

    /// One request and its retries: initialised again once when the server forgot the
    /// session (404; not for the handshake's own `initialize` and `server/discover`, so a
    /// server answering 404 to everything ends the call after one handshake, and not when
    /// another call did it meanwhile; a failed handshake forgets the session), and sent
    /// again once with fresh headers from the host after a 401/403.
    async fn call(
        &self,
        transport: &dyn HttpTransport,
        (id, method, params): (u64, &str, Option<Value>),
        cancel: &CancellationToken,
        limit: usize,
        on_note: &mut (dyn FnMut(&Value) + Send),
    ) -> Result<(Value, Option<String>), McpError> {
        let (mut may_reinit, mut may_reauth) = (!HANDSHAKE.contains(&method), true);
        loop {
            let sent_session = self.lock().session.clone();
            match self.send(transport, (id, method, params.clone()), cancel, limit, on_note).await {
                Err(Failure::SessionExpired) if may_reinit => {
                    may_reinit = false;
                    self.initialize_again(transport, cancel, sent_session).await?;
                }
                Err(Failure::Unauthorized(status)) if may_reauth => {
                    may_reauth = false;
                    self.refresh_auth(status).await?;
                }
                other => return other.map_err(|f| self.fatal(f)),
            }
        }
    }

    /// After a 404 on `sent_session`: a new session, unless another call made one
    /// meanwhile; when the handshake fails the old session is forgotten.
    async fn initialize_again(&self, transport: &dyn HttpTransport, cancel: &CancellationToken, sent_session: Option<String>) -> Result<(), McpError> {
        if self.lock().session != sent_session {
            return Ok(());
        }
        let result = Box::pin(self.initialize(transport, cancel)).await;
        if result.is_err() {
            let mut state = self.lock();
            if state.session == sent_session {
                state.session = None;
            }
        }
        result
    }

    fn fatal(&self, failure: Failure) -> McpError {
        match failure {
            Failure::Fatal(e) => e,
            Failure::SessionExpired => self.error(McpHttp, "the server answered 404: its session is gone"),
            Failure::Unauthorized(status) => self.error(McpAuth, format!("the server refused the credentials (HTTP {status})")),
        }
    }

    /// After a 401/403: fresh headers from the host, or `mcp_auth` without a callback.
    async fn refresh_auth(&self, status: u16) -> Result<(), McpError> {
        let Some(auth) = &self.config.auth else {
            return Err(self.error(McpAuth, format!("the server refused the credentials (HTTP {status})")));
        };
        let headers = auth.headers(&self.config.name, true).await.map_err(|m| self.error(McpAuth, m))?;
        self.lock().auth = Some(headers);
        Ok(())
    }

    pub(super) async fn auth_headers(&self) -> Result<Vec<(String, String)>, McpError> {
        if let Some(h) = self.lock().auth.clone() {
            return Ok(h);
        }
        let Some(auth) = &self.config.auth else { return Ok(Vec::new()) };
        let headers = auth.headers(&self.config.name, false).await.map_err(|m| self.error(McpAuth, m))?;
        self.lock().auth = Some(headers.clone());
        Ok(headers)
    }

    /// A notification (no answer expected beyond 202).
    pub(super) async fn notify(&self, transport: &dyn HttpTransport, method: &str, params: Option<Value>, cancel: &CancellationToken) -> Result<(), McpError> {
        let mut body = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            body["params"] = p;
        }
        let request = self.http_request(body.to_string(), false).await?;
        let response = self.exchange(transport, request, cancel).await.map_err(|f| self.fatal(f))?;
        match response.status {
            200..=299 => Ok(()),
            status => Err(self.error(McpHttp, format!("the server answered {method} with HTTP {status}"))),
        }
    }

    /// What every request of this connection carries: the negotiated revision, the session
    /// id, the static headers, then the host's (which replace a static one of the same name).
    pub(super) async fn push_connection_headers(&self, headers: &mut Vec<(String, String)>) -> Result<(), McpError> {
        {
            let state = self.lock();
            if let Some(v) = &state.protocol {
                headers.push(("MCP-Protocol-Version".to_owned(), v.clone()));
            }
            if let Some(s) = &state.session {
                headers.push(("Mcp-Session-Id".to_owned(), s.clone()));
            }
        }
        let auth = self.auth_headers().await?;
        let replaced = |k: &str| auth.iter().any(|(a, _)| a.eq_ignore_ascii_case(k));
        headers.extend(self.config.headers.iter().filter(|(k, _)| !replaced(k)).cloned());
        headers.extend(auth);
        Ok(())
    }

    async fn http_request(&self, body: String, stream: bool) -> Result<HttpRequest, McpError> {
        let mut headers = vec![
            ("Content-Type".to_owned(), "application/json".to_owned()),
            ("Accept".to_owned(), "application/json, text/event-stream".to_owned()),
        ];
        self.push_connection_headers(&mut headers).await?;
        Ok(HttpRequest { method: "POST".to_owned(), url: self.config.url.clone(), headers, body: Arc::new(body), stream })
    }

    /// Sends through the host, mapping transport failures and statuses.
    pub(super) async fn exchange(&self, transport: &dyn HttpTransport, request: HttpRequest, cancel: &CancellationToken) -> Result<HttpResponse, Failure> {
        let had_session = request.headers.iter().any(|(k, _)| k == "Mcp-Session-Id");
        let token = cancel.child_token();
        let response = tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(self.error(McpUnreachable, "cancelled").into()),
            r = transport.send(request, token) => r,
        };
        let response = match response {
            Ok(r) => r,
            Err(e) => {
                let status = match &e.kind {
                    TransportErrorKind::Status(answer) => answer.status,
                    _ => return Err(self.error(McpUnreachable, format!("the host transport failed: {}", e.message)).into()),
                };
                HttpResponse::full(status, Vec::new())
            }
        };
        match response.status {
            404 if had_session => Err(Failure::SessionExpired),
            401 | 403 => Err(Failure::Unauthorized(response.status)),
            200..=299 => Ok(response),
            status => Err(self.error(McpHttp, format!("the server answered HTTP {status}")).into()),
        }
    }

    /// One request and its answer (JSON or an event stream), with the session id the
    /// answer carried.
    async fn send(
        &self,
        transport: &dyn HttpTransport,
        (id, method, params): (u64, &str, Option<Value>),
        cancel: &CancellationToken,
        limit: usize,
        on_note: &mut (dyn FnMut(&Value) + Send),
    ) -> Result<(Value, Option<String>), Failure> {
        let mut body = json!({"jsonrpc": "2.0", "id": id, "method": method});
        let stateless = self.lock().protocol.as_deref() == Some(STATELESS);
        let mut extra = Vec::new();
        if stateless {
            // 2026-07-28: the revision and the client on every request, the method and the
            // tool's name in headers too.
            let mut p = params.clone().unwrap_or_else(|| json!({}));
            let meta = &mut p["_meta"];
            meta["io.modelcontextprotocol/protocolVersion"] = Value::from(STATELESS);
            meta["io.modelcontextprotocol/clientCapabilities"] = json!({});
            meta["io.modelcontextprotocol/clientInfo"] = client_info();
            extra.push(("Mcp-Method".to_owned(), method.to_owned()));
            if let Some(name) = p["name"].as_str() {
                extra.push(("Mcp-Name".to_owned(), header_text(name)));
            }
            body["params"] = p;
        } else if let Some(p) = params {
            body["params"] = p;
        }
        // Streamed always: a server may answer any request with an event stream and keep it
        // open after the response; the reader stops at the response.
        let mut request = self.http_request(body.to_string(), true).await?;
        if HANDSHAKE.contains(&method) {
            // A new session, or none (2026-07-28): neither the old one's id nor its version
            // (`server/discover` carries the revision it asks about, in `_meta`).
            request.headers.retain(|(k, _)| k != "Mcp-Session-Id" && (method != "initialize" || k != "MCP-Protocol-Version"));
        }
        request.headers.extend(extra);
        let response = self.exchange(transport, request, cancel).await?;
        let session = response.header("mcp-session-id").map(str::to_owned);
        let kind = response.header("content-type").unwrap_or("").to_ascii_lowercase();
        let json = kind.starts_with("application/json");
        if !json && !kind.starts_with("text/event-stream") {
            return Err(self.error(McpProtocol, format!("{method}: the answer's content type {kind:?} is neither JSON nor an event stream")).into());
        }
        let message = self.read_answer(transport, response.body, (id, limit, json), cancel, on_note).await?;
        self.result_of(method, message).map(|r| (r, session)).map_err(Failure::from)
    }

    fn result_of(&self, method: &str, mut message: Value) -> Result<Value, McpError> {
        if let Some(error) = message.get("error") {
            let code = error["code"].as_i64().unwrap_or(0);
            let text = error["message"].as_str().unwrap_or("(no message)");
            return Err(self.error(McpRpcError, format!("{method}: the server answered error {code}: {text}")));
        }
        match message.get("result") {
            Some(result) if result["resultType"].as_str().is_some_and(|t| t != "complete") => {
                Err(self.error(McpProtocol, format!("{method}: the server asked for more input, which this client does not give")))
            }
            Some(result) if result.is_object() => Ok(message["result"].take()),
            _ => Err(self.error(McpProtocol, format!("{method}: the response has no result object"))),
        }
    }

    pub(super) fn too_large(&self, limit: usize) -> McpError {
        self.error(McpTooLarge, format!("the answer is over {limit} bytes"))
    }
}

/// `text` with every one of `secrets` replaced by `<redacted>`.
fn redact_with(secrets: &[String], text: &str) -> String {
    let mut out = text.to_owned();
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "<redacted>");
        }
    }
    out
}

/// Every string, object key and number of `value` through [`redact_with`].
fn redact_value_with(secrets: &[String], value: &mut Value) {
    match value {
        Value::String(text) => *text = redact_with(secrets, text),
        Value::Number(n) => {
            let text = n.to_string();
            let redacted = redact_with(secrets, &text);
            if redacted != text {
                *value = Value::String(redacted);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value_with(secrets, v)),
        Value::Object(map) => {
            for (key, mut v) in std::mem::take(map) {
                redact_value_with(secrets, &mut v);
                map.insert(redact_with(secrets, &key), v);
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
}

/// The handshake's requests: never a reason to initialise again, never with a session id.
const HANDSHAKE: [&str; 2] = ["initialize", "server/discover"];

/// A `server/discover` probe: unless it succeeded, the connection forgets the revision it
/// was tried with when the probe ends, however it ends.
struct Probe<'a>(&'a Connection, bool);

impl Drop for Probe<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.lock().protocol = None;
        }
    }
}

/// An `initialize` whose `notifications/initialized` has not been heard: unless it was,
/// the connection forgets the revision when the handshake ends, however it ends.
struct Handshake<'a>(&'a Connection, bool);

impl Drop for Handshake<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.lock().protocol = None;
        }
    }
}

/// Who this client is (`initialize`'s `clientInfo`, 2026-07-28's `_meta`).
fn client_info() -> Value {
    json!({"name": "arkagent", "version": env!("CARGO_PKG_VERSION")})
}

/// A header value for `text`: as it is when plain visible ASCII, else
/// `=?base64?…?=` of its UTF-8 (2026-07-28's `Mcp-Name`).
fn header_text(text: &str) -> String {
    use base64::Engine;
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_graphic()) && !text.starts_with("=?") {
        return text.to_owned();
    }
    format!("=?base64?{}?=", base64::engine::general_purpose::STANDARD.encode(text))
}

/// The response to request `id` in a JSON-RPC message (or a batch of them).
pub(super) fn answer_in(message: Value, id: u64) -> Option<Value> {
    match message {
        Value::Array(items) => items.into_iter().find_map(|m| answer_in(m, id)),
        Value::Object(_) if holds_answer(&message, id) => Some(message),
        _ => None,
    }
}

/// Whether [`answer_in`] finds the response to request `id` in `message` (without taking it).
pub(super) fn holds_answer(message: &Value, id: u64) -> bool {
    match message {
        Value::Array(items) => items.iter().any(|m| holds_answer(m, id)),
        Value::Object(m) => m.get("id").and_then(Value::as_u64) == Some(id) && (m.contains_key("result") || m.contains_key("error")),
        _ => false,
    }
}

/// One of a server's tools as it listed it.
#[derive(Debug, Clone)]
pub(super) struct RemoteTool {
    /// The server's own name.
    pub(super) name: String,
    pub(super) description: String,
    /// The arguments' JSON Schema (an object; `{"type":"object"}` when the server gave
    /// none usable).
    pub(super) input_schema: Value,
}
