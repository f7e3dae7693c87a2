#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use super::*;

/// The step a C-style finishing call takes: answers an open request, is ignored after a
/// cancel, and is refused once finished.
fn answer(phase: HostCallPhase<u32>) -> (HostCallPhase<u32>, Result<Option<u32>, &'static str>) {
    match phase {
        HostCallPhase::Open(value) => (HostCallPhase::Done, Ok(Some(value))),
        HostCallPhase::Cancelled => (HostCallPhase::Done, Ok(None)),
        other => (other, Err("already completed")),
    }
}

fn no_cancel() -> Option<fn()> {
    None
}

#[test]
fn ohos_7_a_finished_request_is_never_cancelled_and_a_second_finish_is_refused() {
    let call = HostCall::new(7);
    let released = AtomicUsize::new(0);
    assert_eq!(call.finish(answer, || { released.fetch_add(1, Ordering::SeqCst); }), Ok(Some(7)));
    assert_eq!(call.finish(answer, || { released.fetch_add(1, Ordering::SeqCst); }), Err("already completed"));
    assert_eq!(released.load(Ordering::SeqCst), 1, "released once, when it became Done");
    let calls = AtomicUsize::new(0);
    call.cancel(Some(|| { calls.fetch_add(1, Ordering::SeqCst); }));
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no cancel for a request the host finished");
    assert!(!call.confirm_cancel());
}

#[test]
fn ohos_7_cancel_runs_once_and_a_late_finish_is_ignored() {
    let call = HostCall::new(1);
    let calls = AtomicUsize::new(0);
    call.cancel(Some(|| { calls.fetch_add(1, Ordering::SeqCst); }));
    call.cancel(Some(|| { calls.fetch_add(1, Ordering::SeqCst); }));
    assert_eq!(calls.load(Ordering::SeqCst), 1, "at most once");
    assert!(call.inspect(|v| matches!(v, HostCallView::Cancelled)));
    assert_eq!(call.finish(answer, || {}), Ok(None), "a late finish is ignored");
    assert_eq!(call.finish(answer, || {}), Err("already completed"));
}

#[test]
fn ohos_7_cancel_without_a_host_callback_still_cancels() {
    let call = HostCall::new(1);
    call.cancel(no_cancel());
    assert!(call.confirm_cancel());
    assert_eq!(call.finish(answer, || {}), Ok(None));
}

#[test]
fn ohos_7_a_finish_inside_the_cancel_callback_does_not_wait_for_itself() {
    let call = Arc::new(HostCall::new(1));
    let inner = Arc::clone(&call);
    let seen = std::sync::Mutex::new(None);
    call.cancel(Some(|| *seen.lock().unwrap() = Some(inner.finish(answer, || {}))));
    assert_eq!(*seen.lock().unwrap(), Some(Ok(None)));
    assert!(call.inspect(|v| matches!(v, HostCallView::Done)));
}

#[test]
fn ohos_7_a_finish_racing_the_cancel_callback_returns_only_after_it() {
    for round in 0..200 {
        let call = HostCall::new(1);
        let (started, ended) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let start = Barrier::new(2);
        let seen = std::thread::scope(|s| {
            s.spawn(|| {
                start.wait();
                call.cancel(Some(|| {
                    started.fetch_add(1, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_micros(300));
                    ended.fetch_add(1, Ordering::SeqCst);
                }));
            });
            s.spawn(|| {
                start.wait();
                if round % 2 == 1 {
                    std::thread::sleep(Duration::from_micros(100));
                }
                assert!(call.finish(answer, || {}).is_ok());
                (started.load(Ordering::SeqCst), ended.load(Ordering::SeqCst))
            })
            .join()
            .unwrap()
        });
        assert_eq!(seen.0, seen.1, "returned while the cancel callback was running");
        assert_eq!(started.load(Ordering::SeqCst), seen.0, "cancel was called after the host had finished");
    }
}

#[test]
fn ohos_7_a_requested_cancel_loses_to_a_finish_before_it_is_confirmed() {
    let call = HostCall::new(vec!["listener"]);
    assert_eq!(call.request_cancel(), Some(vec!["listener"]), "the listeners are handed back once");
    assert_eq!(call.request_cancel(), None);
    call.finish(|p| match p {
        HostCallPhase::Cancelled => (HostCallPhase::Cancelled, ()),
        _ => (HostCallPhase::Done, ()),
    }, || {});
    assert!(!call.confirm_cancel(), "the host finished first, seen from its thread");
}

#[test]
fn ohos_7_a_confirmed_cancel_stays_cancelled_after_the_host_finishes() {
    let call = HostCall::new(Vec::<u8>::new());
    call.inspect(|v| match v {
        HostCallView::Open(listeners) => listeners.push(1),
        _ => unreachable!(),
    });
    assert_eq!(call.request_cancel(), Some(vec![1]));
    assert!(call.inspect(|v| matches!(v, HostCallView::Requested)));
    assert!(call.confirm_cancel());
    call.finish(|p| match p {
        HostCallPhase::Cancelled => (HostCallPhase::Cancelled, ()),
        _ => (HostCallPhase::Done, ()),
    }, || {});
    assert!(call.confirm_cancel());
    assert_eq!(call.request_cancel(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ohos_7_the_scope_waits_for_the_cancel_callback_its_token_caused() {
    let call = Arc::new(HostCall::new(1));
    let ended = Arc::new(AtomicUsize::new(0));
    let token = CancellationToken::new();
    let (watched, probe) = (Arc::clone(&call), Arc::clone(&ended));
    let fired = token.clone();
    CancelScope::run(async move {
        watched.watch(fired.clone(), Some(move || {
            std::thread::sleep(Duration::from_millis(20));
            probe.fetch_add(1, Ordering::SeqCst);
        }));
        fired.cancel();
    })
    .await;
    assert_eq!(ended.load(Ordering::SeqCst), 1, "returned before the cancel callback had returned");
    assert!(call.confirm_cancel());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ohos_7_a_finished_request_stops_its_watcher_and_is_never_cancelled() {
    let call = Arc::new(HostCall::new(1));
    let calls = Arc::new(AtomicUsize::new(0));
    let token = CancellationToken::new();
    let probe = Arc::clone(&calls);
    CancelScope::run(async {
        call.watch(token.clone(), Some(move || {
            probe.fetch_add(1, Ordering::SeqCst);
        }));
        assert_eq!(call.finish(answer, || {}), Ok(Some(1)));
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
    })
    .await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}
