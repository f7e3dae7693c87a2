//! Host callbacks (HTTP, tools, events) and the completion handles the host finishes
//! requests with (FFI-3).

use std::ffi::{c_char, c_void, CString};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::boundary::{boundary, FfiError, FfiResult};
use super::codes::{ArkAgentResult, ArkAgentTransportError};
use super::handles::{self, Kind};
use super::strings::{opt_str_arg, str_arg};
use crate::llm::{parse_host_headers, BodySender, BodyStream, HttpBody, HttpRequest, HttpResponse, HttpTransport, TransportError};
use crate::runtime::{AgentEvent, AgentObserver};
use crate::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};

/// Opaque: one HTTP request the host must finish with exactly one of
/// [`arkagent_http_complete`], [`arkagent_http_fail`], or [`arkagent_http_stream_begin`]
/// followed by chunks and [`arkagent_http_stream_end`] (or `arkagent_http_fail`). After
/// that final call every completion function gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`
/// for it; finishing it after the run was cancelled or the runtime freed is allowed and
/// ignored (`ARK_AGENT_RESULT_OK`).
pub struct ArkAgentHttpCompletion {
    _private: [u8; 0],
}

/// Opaque: one tool call the host must finish with [`arkagent_tool_complete`] or
/// [`arkagent_tool_fail`], exactly once; later calls give
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`. Finishing it after the
/// run was cancelled or the runtime freed is allowed and ignored.
pub struct ArkAgentToolCompletion {
    _private: [u8; 0],
}

/// Sends an HTTP request. Called on the thread running `arkagent_runtime_run` (or a
/// library worker thread). `request_json` (`{"method","url","headers":[{"name","value"}],
/// "body","stream"}`, containing the Authorization header) is valid only during the
/// call; copy what you need. The host may finish `completion` inside the callback or
/// later from any thread.
pub type ArkAgentHttpCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, request_json: *const c_char, completion: *mut ArkAgentHttpCompletion)>;

/// Runs a tool. Called on the thread running `arkagent_runtime_run`; several calls of
/// one turn may be outstanding at once. `call_json` (`{"call_id","name","arguments":{…},
/// "session_id","run_id"}`) is valid only during the call. Finish `completion` inside the
/// callback or later from any thread.
pub type ArkAgentToolCallback =
    Option<unsafe extern "C" fn(userdata: *mut c_void, call_json: *const c_char, completion: *mut ArkAgentToolCompletion)>;

/// Receives one event (`{"session_id","run_id","seq","at_ms","type",…}`), in order, on
/// the thread running `arkagent_runtime_run`. `event_json` is valid only during the call.
/// Do not call blocking arkagent functions from it. A runtime with a session store
/// (`arkagent_runtime_attach_store`) also emits `"session_committed"` (`commit_seq`,
/// `message_count`) after each commit: what it covers survives the process being killed.
pub type ArkAgentEventCallback = Option<unsafe extern "C" fn(userdata: *mut c_void, event_json: *const c_char)>;

/// Host userdata: the host promises it may be used from any thread until the owning
/// handle is freed and no run is active.
#[derive(Clone, Copy)]
pub(crate) struct UserData(pub *mut c_void);
// SAFETY: the header documents that userdata is used from library threads; the host
// guarantees thread-safety of what it points to.
unsafe impl Send for UserData {}
unsafe impl Sync for UserData {}

// ---------------------------------------------------------------- HTTP

type Reply = oneshot::Sender<Result<HttpResponse, TransportError>>;

/// Where one HTTP request stands. Every completion call makes its transition under the
/// one lock, so of any two calls racing on a handle exactly one wins (FFI-3).
enum HttpPhase {
    /// Waiting for the host's answer.
    Waiting(Reply),
    /// `arkagent_http_stream_begin` answered; chunks flow until `_end` or `_fail`.
    Streaming(BodySender),
    /// Finished; the handle is (being) removed.
    Done,
}

pub(crate) struct HttpCompletionState {
    phase: Mutex<HttpPhase>,
}

impl HttpCompletionState {
    pub(crate) fn new(reply: Reply) -> Self {
        Self { phase: Mutex::new(HttpPhase::Waiting(reply)) }
    }
}

pub(crate) struct HostTransport {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut ArkAgentHttpCompletion),
    pub userdata: UserData,
}

#[async_trait]
impl HttpTransport for HostTransport {
    async fn send(&self, request: HttpRequest, _cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let (tx, rx) = oneshot::channel();
        let json = CString::new(request.to_host_json()).map_err(|_| TransportError::network("request contains NUL"))?;
        let completion = handles::insert::<ArkAgentHttpCompletion, _>(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr(), completion) };
        drop(json);
        rx.await.unwrap_or_else(|_| Err(TransportError::network("the host dropped the HTTP completion")))
    }
}

fn headers_arg(headers_json: *const c_char) -> FfiResult<Vec<(String, String)>> {
    // SAFETY: caller contract of the exported functions below.
    match unsafe { opt_str_arg(headers_json, "headers_json") }? {
        Some(json) => Ok(parse_host_headers(json)?),
        None => Ok(Vec::new()),
    }
}

fn bytes_arg(data: *const u8, len: usize, what: &str) -> FfiResult<Vec<u8>> {
    if len == 0 {
        return Ok(Vec::new());
    }
    if data.is_null() {
        return Err(FfiError::new(ArkAgentResult::NullArgument, format!("{what} is NULL with a non-zero length")));
    }
    // SAFETY: the host passes `len` readable bytes at `data`.
    Ok(unsafe { std::slice::from_raw_parts(data, len) }.to_vec())
}

fn status_arg(status: u16) -> FfiResult<u16> {
    if (100..=599).contains(&status) {
        Ok(status)
    } else {
        Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("HTTP status {status} is outside 100..=599")))
    }
}

fn already_completed() -> FfiError {
    FfiError::new(ArkAgentResult::AlreadyCompleted, "this HTTP request was already answered")
}

fn not_streaming() -> FfiError {
    FfiError::new(ArkAgentResult::StreamNotStarted, "arkagent_http_stream_begin was not called")
}

pub(crate) fn poisoned() -> FfiError {
    FfiError::new(ArkAgentResult::Internal, "a completion lock was poisoned")
}

/// Applies `step` to the request's phase under its lock; when the new phase is `Done`,
/// unregisters the handle. All arguments are validated before this is called.
fn transition(
    completion: *mut ArkAgentHttpCompletion,
    step: impl FnOnce(HttpPhase) -> (HttpPhase, FfiResult<()>),
) -> FfiResult<()> {
    let state: Arc<HttpCompletionState> = handles::get(Kind::HttpCompletion, completion)?;
    let mut phase = state.phase.lock().map_err(|_| poisoned())?;
    let current = std::mem::replace(&mut *phase, HttpPhase::Done);
    let (next, result) = step(current);
    let done = matches!(next, HttpPhase::Done);
    *phase = next;
    if done {
        // Under the phase lock, so a loser that already holds the state sees `Done`, and
        // one that looks the handle up afterwards gets ALREADY_COMPLETED from the registry.
        let _ = handles::remove::<_, HttpCompletionState>(Kind::HttpCompletion, completion);
    }
    result
}

/// Finishes `completion` with a whole response. `status` must be 100..=599
/// (`ARK_AGENT_RESULT_INVALID_ARGUMENT` otherwise). `headers_json`
/// (`[{"name","value"}]`) may be NULL; `body` may be NULL when `body_len` is 0. Consumes
/// `completion`. Any thread. A completion already finished (by any completion function,
/// on any thread) gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`; of two racing calls exactly
/// one returns `ARK_AGENT_RESULT_OK`.
///
/// # Safety
/// `headers_json` NULL or a NUL-terminated string; `body` valid for `body_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_complete(
    completion: *mut ArkAgentHttpCompletion,
    status: u16,
    headers_json: *const c_char,
    body: *const u8,
    body_len: usize,
) -> ArkAgentResult {
    boundary(|| {
        let status = status_arg(status)?;
        let headers = headers_arg(headers_json)?;
        let body = bytes_arg(body, body_len, "body")?;
        transition(completion, |phase| match phase {
            HttpPhase::Waiting(reply) => {
                // A closed receiver means the run stopped waiting (cancelled): ignore.
                let _ = reply.send(Ok(HttpResponse { status, headers, body: HttpBody::Full(body) }));
                (HttpPhase::Done, Ok(()))
            }
            other => (other, Err(already_completed())),
        })
    })
}

/// Finishes `completion` with a transport failure. `kind` is an
/// `ArkAgentTransportError` value as a plain integer (0 network, 1 timeout; anything else
/// gives `ARK_AGENT_RESULT_INVALID_ARGUMENT` and leaves the request open). `message` may
/// be NULL. Consumes `completion`; also ends a started stream with that error. Any
/// thread; races as [`arkagent_http_complete`].
///
/// # Safety
/// `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_fail(
    completion: *mut ArkAgentHttpCompletion,
    kind: i32,
    message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let kind = ArkAgentTransportError::from_c(kind)?;
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("transport failure").to_owned();
        let error = match kind {
            ArkAgentTransportError::Timeout => TransportError::timeout(message),
            ArkAgentTransportError::Network => TransportError::network(message),
        };
        transition(completion, |phase| match phase {
            HttpPhase::Waiting(reply) => {
                let _ = reply.send(Err(error));
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Streaming(sender) => {
                sender.fail(error);
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Done => (HttpPhase::Done, Err(already_completed())),
        })
    })
}

/// Starts a streamed response: status (100..=599) and headers now, body chunks later
/// through [`arkagent_http_stream_chunk`], then [`arkagent_http_stream_end`] (or
/// [`arkagent_http_fail`]). Any thread. Of racing calls that answer the request
/// (`arkagent_http_complete`, `arkagent_http_fail`, this) exactly one wins and the others
/// get `ARK_AGENT_RESULT_ALREADY_COMPLETED`; the one exception is a stream this call
/// started, which a later `arkagent_http_fail` (or `_stream_end`) still ends.
///
/// # Safety
/// `headers_json` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_begin(
    completion: *mut ArkAgentHttpCompletion,
    status: u16,
    headers_json: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        let status = status_arg(status)?;
        let headers = headers_arg(headers_json)?;
        transition(completion, |phase| match phase {
            HttpPhase::Waiting(reply) => {
                let (sender, stream) = BodyStream::channel();
                let _ = reply.send(Ok(HttpResponse { status, headers, body: HttpBody::Stream(stream) }));
                (HttpPhase::Streaming(sender), Ok(()))
            }
            other => (other, Err(already_completed())),
        })
    })
}

/// Pushes one body chunk (boundaries may fall anywhere, even inside a UTF-8 character).
/// Returns `ARK_AGENT_RESULT_CANCELLED` when the library no longer reads (stop sending),
/// `ARK_AGENT_RESULT_STREAM_NOT_STARTED` before `arkagent_http_stream_begin`, and
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED` after the stream ended. Never blocks. Any thread.
///
/// # Safety
/// `data` valid for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_chunk(
    completion: *mut ArkAgentHttpCompletion,
    data: *const u8,
    len: usize,
) -> ArkAgentResult {
    boundary(|| {
        let chunk = bytes_arg(data, len, "data")?;
        let state: Arc<HttpCompletionState> = handles::get(Kind::HttpCompletion, completion)?;
        let phase = state.phase.lock().map_err(|_| poisoned())?;
        match &*phase {
            HttpPhase::Streaming(sender) if sender.send(chunk) => Ok(()),
            HttpPhase::Streaming(_) => Err(FfiError::new(ArkAgentResult::Cancelled, "the request was cancelled")),
            HttpPhase::Waiting(_) => Err(not_streaming()),
            HttpPhase::Done => Err(already_completed()),
        }
    })
}

/// Ends a streamed body. `error_message` NULL for a clean end, else the body ends with a
/// network error. Consumes `completion`. Any thread. Before
/// `arkagent_http_stream_begin` it gives `ARK_AGENT_RESULT_STREAM_NOT_STARTED` (the
/// request stays open); after the end, `ARK_AGENT_RESULT_ALREADY_COMPLETED`.
///
/// # Safety
/// `error_message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_http_stream_end(
    completion: *mut ArkAgentHttpCompletion,
    error_message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let error = unsafe { opt_str_arg(error_message, "error_message") }?;
        transition(completion, |phase| match phase {
            HttpPhase::Streaming(sender) => {
                if let Some(message) = error {
                    sender.fail(TransportError::network(message));
                }
                (HttpPhase::Done, Ok(()))
            }
            HttpPhase::Waiting(reply) => (HttpPhase::Waiting(reply), Err(not_streaming())),
            HttpPhase::Done => (HttpPhase::Done, Err(already_completed())),
        })
    })
}

// ---------------------------------------------------------------- tools

pub(crate) struct ToolCompletionState {
    reply: Mutex<Option<oneshot::Sender<ToolResult>>>,
}

pub(crate) struct HostTool {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char, *mut ArkAgentToolCompletion),
    pub userdata: UserData,
}

#[async_trait]
impl ToolExecutor for HostTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        let (tx, rx) = oneshot::channel();
        let payload = json!({
            "call_id": call.call_id, "name": call.name, "arguments": call.arguments,
            "session_id": ctx.session_id, "run_id": ctx.run_id,
        });
        let Ok(json) = CString::new(payload.to_string()) else {
            return ToolResult::error("tool_failed", "the call could not be encoded");
        };
        let completion = handles::insert::<ArkAgentToolCompletion, _>(
            Kind::ToolCompletion,
            Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)) }),
        );
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr(), completion) };
        drop(json);
        rx.await.unwrap_or_else(|_| ToolResult::error("tool_failed", "the host dropped the tool completion"))
    }
}

/// Finishes a tool call with `content` (what the model sees). `is_error` is a plain
/// integer flag: 0 success, 1 failure (anything else gives
/// `ARK_AGENT_RESULT_INVALID_ARGUMENT` and leaves the call open). Consumes `completion`.
/// Any thread. A call already finished (by this function or [`arkagent_tool_fail`])
/// gives `ARK_AGENT_RESULT_ALREADY_COMPLETED`; of two racing calls exactly one returns
/// `ARK_AGENT_RESULT_OK`.
///
/// # Safety
/// `content` a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_complete(
    completion: *mut ArkAgentToolCompletion,
    content: *const c_char,
    is_error: i32,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let content = unsafe { str_arg(content, "content") }?;
        let is_error = match is_error {
            0 => false,
            1 => true,
            other => return Err(FfiError::new(ArkAgentResult::InvalidArgument, format!("is_error {other} is not 0 or 1"))),
        };
        finish_tool(completion, if is_error { ToolResult::failure(content) } else { ToolResult::ok(content) })
    })
}

/// Finishes a tool call as failed with a stable error code of the tool's own (CORE-2):
/// the model sees `{"error":{"code":"<code>","message":"<message>"}}` and the
/// `tool_call_finished` event carries `"is_error":true,"error_code":"<code>"`. `code`
/// must be non-blank (`ARK_AGENT_RESULT_INVALID_ARGUMENT` otherwise, the call stays
/// open); `message` may be NULL (then empty). Both are copied before the call returns.
/// Consumes `completion`. Any thread. Races with [`arkagent_tool_complete`] and itself
/// exactly as `arkagent_tool_complete` does: one winner, the others get
/// `ARK_AGENT_RESULT_ALREADY_COMPLETED`; after the run was cancelled or the runtime freed
/// it is allowed and ignored.
///
/// # Safety
/// `code` a NUL-terminated string; `message` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn arkagent_tool_fail(
    completion: *mut ArkAgentToolCompletion,
    code: *const c_char,
    message: *const c_char,
) -> ArkAgentResult {
    boundary(|| {
        // SAFETY: forwarded contract.
        let code = unsafe { str_arg(code, "code") }?;
        // SAFETY: forwarded contract.
        let message = unsafe { opt_str_arg(message, "message") }?.unwrap_or("");
        if code.trim().is_empty() {
            return Err(FfiError::new(ArkAgentResult::InvalidArgument, "code is blank"));
        }
        finish_tool(completion, ToolResult::failure_with_code(code, message))
    })
}

/// Hands `result` to the waiting call; exactly one caller per completion gets `Ok`.
fn finish_tool(completion: *mut ArkAgentToolCompletion, result: ToolResult) -> FfiResult<()> {
    let state: Arc<ToolCompletionState> = handles::get(Kind::ToolCompletion, completion)?;
    let mut slot = state.reply.lock().map_err(|_| poisoned())?;
    let reply = slot
        .take()
        .ok_or_else(|| FfiError::new(ArkAgentResult::AlreadyCompleted, "this tool call was already answered"))?;
    // Under the lock, as for HTTP completions.
    let _ = handles::remove::<_, ToolCompletionState>(Kind::ToolCompletion, completion);
    drop(slot);
    let _ = reply.send(result);
    Ok(())
}

/// Registers a host tool from its JSON definition (shared by tool sets and workers).
/// Checks every argument before registering anything.
pub(crate) fn register_host_tool(
    registry: &mut ToolRegistry,
    definition_json: &str,
    callback: ArkAgentToolCallback,
    userdata: *mut c_void,
) -> FfiResult<()> {
    let callback = callback.ok_or_else(|| FfiError::new(ArkAgentResult::NullArgument, "callback is NULL"))?;
    let definition: ToolDefinition = serde_json::from_str(definition_json).map_err(crate::ArkAgentError::from)?;
    registry.register(definition, Arc::new(HostTool { callback, userdata: UserData(userdata) }))?;
    Ok(())
}

// ---------------------------------------------------------------- events

pub(crate) struct HostObserver {
    pub callback: unsafe extern "C" fn(*mut c_void, *const c_char),
    pub userdata: UserData,
}

impl AgentObserver for HostObserver {
    fn on_event(&self, event: &AgentEvent) {
        let Ok(json) = serde_json::to_string(event) else { return };
        let Ok(json) = CString::new(json) else { return };
        // SAFETY: the host registered this callback and promised userdata stays valid.
        unsafe { (self.callback)(self.userdata.0, json.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::{mpsc, Barrier};

    use super::*;

    const THREADS: usize = 8;
    const ITERATIONS: usize = 300;

    /// A completion call as a racing thread makes it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Op {
        Complete,
        Fail,
        StreamBegin,
        StreamEnd,
        ToolComplete,
        ToolFail,
    }

    fn call(op: Op, handle: usize) -> ArkAgentResult {
        let http = handle as *mut ArkAgentHttpCompletion;
        // SAFETY: static strings and bodies; the handle is only a number to the library.
        unsafe {
            match op {
                Op::Complete => arkagent_http_complete(http, 200, std::ptr::null(), b"{}".as_ptr(), 2),
                Op::Fail => arkagent_http_fail(http, 0, c"boom".as_ptr()),
                Op::StreamBegin => arkagent_http_stream_begin(http, 200, std::ptr::null()),
                Op::StreamEnd => arkagent_http_stream_end(http, std::ptr::null()),
                Op::ToolComplete => arkagent_tool_complete(handle as *mut ArkAgentToolCompletion, c"done".as_ptr(), 0),
                Op::ToolFail => arkagent_tool_fail(handle as *mut ArkAgentToolCompletion, c"db_locked".as_ptr(), c"locked".as_ptr()),
            }
        }
    }

    /// Eight threads that, per round, each make one call on the same handle at once.
    struct Racers {
        start: Arc<Barrier>,
        jobs: Vec<mpsc::Sender<Option<(Op, usize)>>>,
        results: mpsc::Receiver<(Op, ArkAgentResult)>,
        threads: Vec<std::thread::JoinHandle<()>>,
    }

    impl Racers {
        fn new() -> Self {
            let start = Arc::new(Barrier::new(THREADS));
            let (result_tx, results) = mpsc::channel();
            let mut jobs = Vec::new();
            let mut threads = Vec::new();
            for _ in 0..THREADS {
                let (tx, rx) = mpsc::channel::<Option<(Op, usize)>>();
                let start = Arc::clone(&start);
                let result_tx = result_tx.clone();
                threads.push(std::thread::spawn(move || {
                    while let Ok(Some((op, handle))) = rx.recv() {
                        start.wait();
                        result_tx.send((op, call(op, handle))).unwrap();
                    }
                }));
                jobs.push(tx);
            }
            Self { start, jobs, results, threads }
        }

        /// Threads alternate between `a` and `b`; returns every thread's (op, result).
        fn race(&self, a: Op, b: Op, handle: usize) -> Vec<(Op, ArkAgentResult)> {
            let _ = &self.start;
            for (i, job) in self.jobs.iter().enumerate() {
                job.send(Some((if i % 2 == 0 { a } else { b }, handle))).unwrap();
            }
            (0..THREADS).map(|_| self.results.recv().unwrap()).collect()
        }
    }

    impl Drop for Racers {
        fn drop(&mut self) {
            for job in &self.jobs {
                let _ = job.send(None);
            }
            for t in self.threads.drain(..) {
                let _ = t.join();
            }
        }
    }

    fn winner(results: &[(Op, ArkAgentResult)]) -> Op {
        let winners: Vec<_> = results.iter().filter(|(_, r)| *r == ArkAgentResult::Ok).collect();
        assert_eq!(winners.len(), 1, "exactly one winner: {results:?}");
        for (_, r) in results {
            assert!(matches!(r, ArkAgentResult::Ok | ArkAgentResult::AlreadyCompleted), "loser got {r:?}: {results:?}");
        }
        winners[0].0
    }

    #[test]
    fn ffi_2_racing_http_completions_have_exactly_one_winner_whose_answer_arrives() {
        let racers = Racers::new();
        let first = [Op::Complete, Op::Fail, Op::StreamBegin];
        for (i, &a) in first.iter().enumerate() {
            for &b in &first[i..] {
                for _ in 0..ITERATIONS {
                    let (tx, mut rx) = oneshot::channel();
                    let handle: *mut ArkAgentHttpCompletion =
                        handles::insert(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
                    let results = racers.race(a, b, handle as usize);
                    let answer = rx.try_recv().expect("an answer reached the run");
                    let oks: Vec<Op> = results.iter().filter(|(_, r)| *r == ArkAgentResult::Ok).map(|(op, _)| *op).collect();
                    if oks.len() == 2 {
                        // The one legal sequence of two: a stream is begun, then failed (which
                        // ends it). Every other call lost.
                        assert!(oks.contains(&Op::StreamBegin) && oks.contains(&Op::Fail), "two winners: {results:?}");
                        let Ok(HttpResponse { body: HttpBody::Stream(mut stream), .. }) = answer else {
                            panic!("stream_begin won, so the run got a stream")
                        };
                        let end = tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(stream.next_chunk());
                        assert!(matches!(end, Some(Err(_))), "the failed stream ends with the error");
                        assert!(results.iter().all(|(_, r)| matches!(r, ArkAgentResult::Ok | ArkAgentResult::AlreadyCompleted)));
                    } else {
                        let won = winner(&results);
                        match (won, answer) {
                            (Op::Complete, Ok(HttpResponse { body: HttpBody::Full(_), .. }))
                            | (Op::Fail, Err(_))
                            | (Op::StreamBegin, Ok(HttpResponse { body: HttpBody::Stream(_), .. })) => {}
                            (won, other) => panic!("{won:?} won but the run got {:?}", other.map(|r| r.status)),
                        }
                        if won == Op::StreamBegin {
                            assert_eq!(call(Op::StreamEnd, handle as usize), ArkAgentResult::Ok);
                        }
                    }
                    // Every later call, of any kind, is refused the same way.
                    for op in [Op::Complete, Op::Fail, Op::StreamBegin, Op::StreamEnd] {
                        assert_eq!(call(op, handle as usize), ArkAgentResult::AlreadyCompleted, "{op:?} after the end");
                    }
                }
            }
        }
    }

    #[test]
    fn ffi_2_racing_stream_ends_have_exactly_one_winner() {
        let racers = Racers::new();
        let ends = [Op::StreamEnd, Op::Fail];
        for (i, &a) in ends.iter().enumerate() {
            for &b in &ends[i..] {
                for _ in 0..ITERATIONS {
                    let (tx, mut rx) = oneshot::channel();
                    let handle: *mut ArkAgentHttpCompletion =
                        handles::insert(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
                    assert_eq!(call(Op::StreamBegin, handle as usize), ArkAgentResult::Ok);
                    let Ok(HttpResponse { body: HttpBody::Stream(_stream), .. }) = rx.try_recv().unwrap() else {
                        panic!("stream_begin answers with a stream")
                    };
                    winner(&racers.race(a, b, handle as usize));
                    assert_eq!(call(Op::StreamEnd, handle as usize), ArkAgentResult::AlreadyCompleted);
                }
            }
        }
    }

    #[test]
    fn ffi_2_racing_tool_completions_have_exactly_one_winner() {
        let racers = Racers::new();
        for _ in 0..ITERATIONS {
            let (tx, mut rx) = oneshot::channel();
            let handle: *mut ArkAgentToolCompletion =
                handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)) }));
            winner(&racers.race(Op::ToolComplete, Op::ToolComplete, handle as usize));
            assert!(rx.try_recv().is_ok(), "the winner's result reached the run");
            assert_eq!(call(Op::ToolComplete, handle as usize), ArkAgentResult::AlreadyCompleted);
        }
    }

    #[test]
    fn ffi_2_racing_tool_complete_and_tool_fail_have_exactly_one_winner_whose_result_arrives() {
        let racers = Racers::new();
        for _ in 0..ITERATIONS {
            let (tx, mut rx) = oneshot::channel();
            let handle: *mut ArkAgentToolCompletion =
                handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)) }));
            let won = winner(&racers.race(Op::ToolComplete, Op::ToolFail, handle as usize));
            let result = rx.try_recv().expect("the winner's result reached the run");
            match won {
                Op::ToolComplete => assert_eq!(result, ToolResult::ok("done")),
                _ => assert_eq!(result.into_model_content(), r#"{"error":{"code":"db_locked","message":"locked"}}"#),
            }
            for op in [Op::ToolComplete, Op::ToolFail] {
                assert_eq!(call(op, handle as usize), ArkAgentResult::AlreadyCompleted, "{op:?} after the end");
            }
        }
    }

    #[test]
    fn ffi_2_tool_fail_refuses_a_blank_code_and_leaves_the_call_open() {
        let (tx, mut rx) = oneshot::channel();
        let handle: *mut ArkAgentToolCompletion =
            handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)) }));
        // SAFETY: static strings; the handle is a number.
        unsafe {
            assert_eq!(arkagent_tool_fail(handle, c" ".as_ptr(), c"m".as_ptr()), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_tool_fail(handle, std::ptr::null(), c"m".as_ptr()), ArkAgentResult::NullArgument);
            assert!(rx.try_recv().is_err(), "nothing was answered yet");
            assert_eq!(arkagent_tool_fail(handle, c"quota".as_ptr(), std::ptr::null()), ArkAgentResult::Ok);
        }
        let result = rx.try_recv().unwrap();
        assert_eq!((result.is_error, result.error_code.as_deref()), (true, Some("quota")));
    }

    #[test]
    fn ffi_2_refused_arguments_leave_the_request_open() {
        let (tx, mut rx) = oneshot::channel();
        let handle: *mut ArkAgentHttpCompletion = handles::insert(Kind::HttpCompletion, Arc::new(HttpCompletionState::new(tx)));
        // SAFETY: valid strings; the handle is a number.
        unsafe {
            assert_eq!(arkagent_http_fail(handle, 2, std::ptr::null()), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_fail(handle, -1, std::ptr::null()), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_complete(handle, 0, std::ptr::null(), std::ptr::null(), 0), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_complete(handle, 600, std::ptr::null(), std::ptr::null(), 0), ArkAgentResult::InvalidArgument);
            assert_eq!(arkagent_http_complete(handle, 200, c"[oops".as_ptr(), std::ptr::null(), 0), ArkAgentResult::InvalidJson);
            assert_eq!(arkagent_http_complete(handle, 200, std::ptr::null(), std::ptr::null(), 3), ArkAgentResult::NullArgument);
            assert_eq!(arkagent_http_stream_chunk(handle, b"x".as_ptr(), 1), ArkAgentResult::StreamNotStarted);
            assert_eq!(arkagent_http_stream_end(handle, std::ptr::null()), ArkAgentResult::StreamNotStarted);
            assert!(rx.try_recv().is_err(), "nothing was answered yet");
            assert_eq!(arkagent_http_fail(handle, 1, c"slow".as_ptr()), ArkAgentResult::Ok);
        }
        assert!(matches!(rx.try_recv(), Ok(Err(e)) if e.kind == crate::llm::TransportErrorKind::Timeout));
    }
}
