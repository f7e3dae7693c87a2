//! MCP-1: an answer, JSON or an event stream — read until the response to the request
//! (within a byte limit, whichever it is), an event stream's notifications handed on, and
//! a stream that ends or breaks before the response resumed (2025-03-26 … 2025-11-25, SEP-1699): after the server's `retry` wait, a `GET`
//! with `Last-Event-ID` picks the stream up where it stopped, at most
//! [`MAX_RESUMES`] times.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::rpc::{answer_in, holds_answer, Connection, Failure};
use super::McpErrorCode::{McpProtocol, McpUnreachable};
use super::McpError;
use crate::llm::{HttpBody, HttpRequest, HttpTransport, SseDecoder, SseError};

/// How often one answer's stream is resumed at most.
pub const MAX_RESUMES: u32 = 3;
/// The wait before resuming when the server set none, in ms.
const DEFAULT_RETRY_MS: u64 = 1_000;
/// The longest wait a server may ask for before a resume, in ms.
const MAX_RETRY_MS: u64 = 10_000;

/// One answer's reading state, across resumed streams.
struct Reading<'a> {
    decoder: SseDecoder,
    id: u64,
    found: Option<Value>,
    read: usize,
    limit: usize,
    on_note: &'a mut (dyn FnMut(&Value) + Send),
    /// A JSON answer's bytes (`None`: an event stream).
    json: Option<Vec<u8>>,
}

impl Reading<'_> {
    fn feed(&mut self, conn: &Connection, bytes: &[u8], last: bool) -> Result<(), McpError> {
        self.read += bytes.len();
        if self.read > self.limit {
            return Err(conn.too_large(self.limit));
        }
        if let Some(buf) = &mut self.json {
            buf.extend_from_slice(bytes);
            if last {
                let value: Value = serde_json::from_slice(buf).map_err(|e| conn.error(McpProtocol, format!("the answer is not JSON ({e})")))?;
                self.found = answer_in(value, self.id);
            }
            return Ok(());
        }
        let (id, found, on_note) = (self.id, &mut self.found, &mut *self.on_note);
        let mut on_event = |data: &str| {
            // What follows the response is not this request's: the reader stops at the
            // response, so whether later events are seen must not depend on how the bytes
            // were cut (fuzz/regressions/mcp_answer/note_after_the_response).
            if found.is_some() {
                return Ok::<_, SseError>(());
            }
            let Ok(message) = serde_json::from_str::<Value>(data) else { return Ok::<_, SseError>(()) };
            if holds_answer(&message, id) {
                // Moved, not copied (PERF-2: a large answer is held once).
                *found = answer_in(message, id);
                return Ok(());
            }
            if message.get("id").is_none() && message["method"].is_string() {
                if message["method"] == "notifications/tools/list_changed" {
                    conn.lock().list_changed = true;
                }
                on_note(&message);
            }
            Ok(())
        };
        let fed = self.decoder.feed(bytes, |e| on_event(e.data));
        let fed = if last { fed.and_then(|()| self.decoder.finish(|e| on_event(e.data))) } else { fed };
        // Bytes after the response (bad UTF-8, a broken event) are not read when they come
        // in a later chunk: not in the same one either (fuzz/regressions/mcp_answer/
        // garbage_after_the_response).
        if self.found.is_some() {
            return Ok(());
        }
        fed.map_err(|e| conn.error(McpProtocol, e.to_string()))
    }
}

impl Connection {
    /// The response with `id` in a JSON answer, or in an event stream (resumed streams
    /// included), within `limit` bytes: an event stream's notifications go to `on_note`
    /// (`notifications/tools/list_changed` is noted here too).
    pub(super) async fn read_answer(
        &self,
        transport: &dyn HttpTransport,
        body: HttpBody,
        (id, limit, json): (u64, usize, bool),
        cancel: &CancellationToken,
        on_note: &mut (dyn FnMut(&Value) + Send),
    ) -> Result<Value, McpError> {
        let json = json.then(Vec::new);
        let mut reading = Reading { decoder: SseDecoder::new(), id, found: None, read: 0, limit, on_note, json };
        let mut body = body;
        for resumes in 0..=MAX_RESUMES {
            let broke = self.pump(&mut reading, body, cancel).await?;
            if let Some(found) = reading.found.take() {
                return Ok(found);
            }
            // 2026-07-28 has no resumption (its GET answers 405).
            let stateless = self.lock().protocol.as_deref() == Some(super::STATELESS_PROTOCOL_VERSION);
            let resumable = reading.json.is_none() && !stateless && resumes < MAX_RESUMES;
            let Some(last_id) = reading.decoder.last_event_id().map(str::to_owned).filter(|_| resumable) else {
                return Err(match broke {
                    Some(why) => self.error(McpUnreachable, format!("the answer broke off: {why}")),
                    None => self.error(McpProtocol, format!("the answer ended without the response to request {id}")),
                });
            };
            let wait = reading.decoder.retry_ms().unwrap_or(DEFAULT_RETRY_MS).min(MAX_RETRY_MS);
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(self.error(McpUnreachable, "cancelled")),
                () = tokio::time::sleep(std::time::Duration::from_millis(wait)) => {}
            }
            // The resumed stream starts with a whole event: what was cut off is sent again.
            reading.decoder.discard_event();
            body = self.resume(transport, &last_id, cancel).await?;
        }
        Err(self.error(McpProtocol, format!("the answer ended without the response to request {id}")))
    }

    /// Reads one stream's body until the response, its end (`None`) or its break
    /// (`Some(why)`).
    async fn pump(&self, reading: &mut Reading<'_>, body: HttpBody, cancel: &CancellationToken) -> Result<Option<String>, McpError> {
        let mut stream = match body {
            HttpBody::Full(bytes) => return reading.feed(self, &bytes, true).map(|()| None),
            HttpBody::Stream(stream) => stream,
        };
        while reading.found.is_none() {
            let chunk = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(self.error(McpUnreachable, "cancelled")),
                c = stream.next_chunk() => c,
            };
            match chunk {
                None => return reading.feed(self, &[], true).map(|()| None),
                Some(Err(e)) => return Ok(Some(e.message)),
                Some(Ok(bytes)) => reading.feed(self, &bytes, false)?,
            }
        }
        Ok(None)
    }

    /// `GET` the endpoint with `Last-Event-ID`: the rest of the stream.
    async fn resume(&self, transport: &dyn HttpTransport, last_id: &str, cancel: &CancellationToken) -> Result<HttpBody, McpError> {
        let mut headers = vec![("Accept".to_owned(), "text/event-stream".to_owned()), ("Last-Event-ID".to_owned(), last_id.to_owned())];
        self.push_connection_headers(&mut headers).await?;
        let request = HttpRequest { method: "GET".to_owned(), url: self.config.url.clone(), headers, body: Arc::new(String::new()), stream: true };
        let response = self.exchange(transport, request, cancel).await.map_err(|f| match f {
            Failure::Fatal(e) => e,
            _ => self.error(McpProtocol, "the server refused to resume the event stream"),
        })?;
        let kind = response.header("content-type").unwrap_or("").to_ascii_lowercase();
        if !kind.starts_with("text/event-stream") {
            return Err(self.error(McpProtocol, format!("the resumed stream's content type {kind:?} is not an event stream")));
        }
        Ok(response.body)
    }
}

/// A transport that answers nothing: the fuzz hook below never resumes (its connection is
/// on the stateless revision), so this is only the signature's.
#[cfg(feature = "fuzzing")]
struct NoTransport;

#[cfg(feature = "fuzzing")]
#[async_trait::async_trait]
impl HttpTransport for NoTransport {
    async fn send(&self, _request: HttpRequest, _cancel: CancellationToken) -> Result<crate::llm::HttpResponse, crate::llm::TransportError> {
        Err(crate::llm::TransportError::network("no transport in the fuzz hook"))
    }
}

/// MCP-1 (issue 42): the response to request 1 read from one answer `body` (a JSON answer when `json`,
/// else an event stream), whole or in `chunks` (`None`: whole), with the notifications it
/// carried — or the error's code. For `arkagent::fuzzing::check_mcp_answer`.
#[cfg(feature = "fuzzing")]
pub fn read_answer_for_fuzzing(body: &[u8], chunks: Option<&[&[u8]]>, json: bool) -> (Result<Value, super::McpErrorCode>, Vec<Value>) {
    let Ok(server) = super::McpServer::from_json(serde_json::json!({"name": "fuzz", "url": "http://127.0.0.1:9/mcp"}), None) else {
        return (Err(super::McpErrorCode::McpProtocol), Vec::new());
    };
    // The stateless revision: a stream that ends without the response is not resumed.
    server.inner.lock().protocol = Some(super::STATELESS_PROTOCOL_VERSION.to_owned());
    let body = match chunks {
        None => HttpBody::Full(body.to_vec()),
        Some(chunks) => {
            let (tx, stream) = crate::llm::BodyStream::channel();
            for chunk in chunks {
                tx.send(chunk.to_vec());
            }
            HttpBody::Stream(stream)
        }
    };
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_time().build() else {
        return (Err(super::McpErrorCode::McpProtocol), Vec::new());
    };
    let mut notes = Vec::new();
    let answer = rt.block_on(server.inner.read_answer(&NoTransport, body, (1, 1 << 20, json), &CancellationToken::new(), &mut |n: &Value| notes.push(n.clone())));
    (answer.map_err(|e| e.code), notes)
}
