#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::c_void;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Barrier, Mutex};

use tokio::sync::oneshot;

use crate::codes::ArkAgentResult;
use crate::handles::{self, Kind};
use super::*;
use super::transport::{call_cancel, HttpCompletionState};
use arkagent::llm::{HttpBody, HttpResponse};
use arkagent::tools::ToolResult;

/// What the cancel watcher does when the token fires: cancels the request unless the
/// host finished it first, calling the host's cancel callback.
fn cancel_request(state: &HttpCompletionState, completion: usize, callback: ArkAgentHttpCancelCallback, userdata: UserData) {
    state.call.cancel(callback.map(|callback| move || call_cancel(callback, completion, userdata)));
}

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

/// Counts a slow cancel callback's starts and ends.
#[derive(Default)]
struct CancelProbe {
    started: std::sync::atomic::AtomicUsize,
    finished: std::sync::atomic::AtomicUsize,
}

unsafe extern "C" fn slow_cancel(userdata: *mut c_void, _completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: the test passes a live CancelProbe.
    let probe = unsafe { &*userdata.cast::<CancelProbe>() };
    probe.started.fetch_add(1, Ordering::SeqCst);
    std::thread::sleep(std::time::Duration::from_micros(300));
    probe.finished.fetch_add(1, Ordering::SeqCst);
}

#[test]
fn ohos_7_a_finishing_call_racing_the_cancel_callback_returns_only_after_it_and_never_before_it() {
    for round in 0..ITERATIONS {
        let probe = CancelProbe::default();
        let userdata = UserData(std::ptr::from_ref(&probe).cast_mut().cast::<c_void>());
        let (tx, _rx) = oneshot::channel();
        let state = Arc::new(HttpCompletionState::new(tx));
        let handle = handles::insert::<ArkAgentHttpCompletion, _>(Kind::HttpCompletion, Arc::clone(&state)) as usize;
        let start = Barrier::new(2);
        let seen_at_return = std::thread::scope(|s| {
            s.spawn(|| {
                start.wait();
                cancel_request(&state, handle, Some(slow_cancel), userdata);
            });
            let finisher = s.spawn(|| {
                start.wait();
                if round % 2 == 1 {
                    std::thread::sleep(std::time::Duration::from_micros(100));
                }
                let op = [Op::Complete, Op::Fail, Op::StreamBegin][round % 3];
                let result = call(op, handle);
                // Won, or came after the cancel and was ignored: OK either way.
                assert_eq!(result, ArkAgentResult::Ok, "{op:?}");
                if op == Op::StreamBegin {
                    assert_eq!(call(Op::StreamEnd, handle), ArkAgentResult::Ok);
                }
                (probe.started.load(Ordering::SeqCst), probe.finished.load(Ordering::SeqCst))
            });
            finisher.join().unwrap()
        });
        let (started, finished) = seen_at_return;
        assert_eq!(started, finished, "a finishing call returned while the cancel callback was running");
        assert_eq!(probe.started.load(Ordering::SeqCst), started, "cancel was called after the host had finished the request");
        assert!(started <= 1);
        assert_eq!(call(Op::Complete, handle), ArkAgentResult::AlreadyCompleted);
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
            handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context: None, done: Default::default(), site: None, watched: Mutex::new(false) }));
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
            handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context: None, done: Default::default(), site: None, watched: Mutex::new(false) }));
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
        handles::insert(Kind::ToolCompletion, Arc::new(ToolCompletionState { reply: Mutex::new(Some(tx)), context: None, done: Default::default(), site: None, watched: Mutex::new(false) }));
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
    assert!(matches!(rx.try_recv(), Ok(Err(e)) if e.kind == arkagent::llm::TransportErrorKind::Timeout));
}
