//! The host-request cancel protocol (OHOS-7), written once for every binding: one
//! request the host is answering (an HTTP call made through a host transport), the
//! host's finishing calls on it, and the library telling the host when it stopped
//! wanting the answer. The C ABI and the N-API layer only convert their types to and
//! from this machine; it knows nothing of C or JS.
//!
//! The rules it enforces:
//! - Of any two calls racing on one request exactly one wins: every transition is made
//!   under one lock ([`HostCall::finish`]).
//! - The host's cancel runs at most once, and only while the request is in flight
//!   (neither finished nor cancelled): [`HostCall::cancel`], or the two-step
//!   [`HostCall::request_cancel`] + [`HostCall::confirm_cancel`] for a host that decides
//!   on its own thread (the JS thread) whether its finishing call came first.
//! - After a cancel, the host's late or duplicate finishing calls are ignored; what they
//!   do then is the binding's `step` (e.g. release the handle).
//! - A finishing call racing a cancel callback that runs on another thread waits until
//!   the callback has returned (so once a finishing call returned, the cancel callback
//!   has returned or never runs), except when made from inside a cancel callback (two
//!   callbacks finishing each other's requests would wait for each other).
//! - A blocking call run through [`CancelScope::run`] returns only after the cancel
//!   callbacks its requests caused have returned, and waits for no other call's; work
//!   handed to it with [`CancelScope::defer`] is done on its thread before it returns.

use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::ThreadId;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// Where one host request stands, as a finishing call's `step` sees it and sets it.
#[derive(Debug)]
pub enum HostCallPhase<V> {
    /// In flight: the host has not finished it and the library still wants the answer.
    /// `V` is what the binding keeps for the answer (a reply channel, a body sender, the
    /// host's cancel listeners).
    Open(V),
    /// The library asked to cancel; the host's own thread has not confirmed it yet
    /// ([`HostCall::confirm_cancel`]). A finishing call now still wins.
    Requested,
    /// The library stopped wanting the answer: the host's finishing calls are ignored.
    Cancelled,
    /// Finished; no call changes it any more.
    Done,
}

/// A look at a request's phase without a transition ([`HostCall::inspect`]); a cancel
/// callback still running shows as `Cancelled`.
#[derive(Debug)]
pub enum HostCallView<'a, V> {
    /// In flight, with the binding's value.
    Open(&'a mut V),
    /// Cancel requested, not yet confirmed.
    Requested,
    /// Cancelled (the cancel callback may still be running).
    Cancelled,
    /// Finished.
    Done,
}

/// The phase with the one state no binding sees: a cancel callback running on a thread.
enum Phase<V> {
    Open(V),
    Requested,
    Cancelling(ThreadId),
    Cancelled,
    Done,
}

/// One request the host is answering (OHOS-7). Shared (`Arc`) by the binding's handle
/// or sink and the task watching the request's cancel token ([`HostCall::watch`]).
pub struct HostCall<V> {
    phase: Mutex<Phase<V>>,
    /// Signalled when a cancel callback has returned (finishing calls wait for it).
    settled: Condvar,
    /// Wakes the cancel watcher when the host finished the request.
    finished: Notify,
}

thread_local! {
    /// True on a thread running a host cancel callback: a finishing call made there never
    /// waits for another cancel callback.
    static IN_CANCEL: Cell<bool> = const { Cell::new(false) };
}

impl<V> HostCall<V> {
    /// A request in flight, keeping `value` for the answer.
    pub fn new(value: V) -> Self {
        Self { phase: Mutex::new(Phase::Open(value)), settled: Condvar::new(), finished: Notify::new() }
    }

    // Nothing panics under this lock (host callbacks run outside it), so a poisoned lock
    // still holds a consistent phase.
    fn lock(&self) -> MutexGuard<'_, Phase<V>> {
        self.phase.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A finishing call from the host: applies `step` to the current phase under the lock
    /// and returns its result. A cancel callback running on another thread is waited out
    /// first (unless this thread is inside a cancel callback); after a cancel `step` sees
    /// `Cancelled`. When `step` makes the request `Done`, `on_done` runs under the same
    /// lock (e.g. to unregister the binding's handle, so a racing loser sees either `Done`
    /// or no handle) and the cancel watcher stops.
    pub fn finish<R>(&self, step: impl FnOnce(HostCallPhase<V>) -> (HostCallPhase<V>, R), on_done: impl FnOnce()) -> R {
        let mut phase = self.lock();
        let me = std::thread::current().id();
        while matches!(*phase, Phase::Cancelling(t) if t != me) && !IN_CANCEL.with(Cell::get) {
            phase = self.settled.wait(phase).unwrap_or_else(PoisonError::into_inner);
        }
        let (current, cancelling) = match std::mem::replace(&mut *phase, Phase::Done) {
            Phase::Open(value) => (HostCallPhase::Open(value), None),
            Phase::Requested => (HostCallPhase::Requested, None),
            Phase::Cancelling(t) => (HostCallPhase::Cancelled, Some(t)),
            Phase::Cancelled => (HostCallPhase::Cancelled, None),
            Phase::Done => (HostCallPhase::Done, None),
        };
        let was_active = matches!(current, HostCallPhase::Open(_) | HostCallPhase::Requested);
        let was_done = matches!(current, HostCallPhase::Done);
        let (next, result) = step(current);
        let done = matches!(next, HostCallPhase::Done) && !was_done;
        *phase = match next {
            HostCallPhase::Open(value) => Phase::Open(value),
            HostCallPhase::Requested => Phase::Requested,
            // Still inside the cancel callback (on its thread): others keep waiting for it.
            HostCallPhase::Cancelled => cancelling.map_or(Phase::Cancelled, Phase::Cancelling),
            HostCallPhase::Done => Phase::Done,
        };
        if done {
            on_done();
            if was_active {
                self.finished.notify_one();
            }
        }
        result
    }

    /// Looks at the phase under the lock without a transition (never waits for a cancel
    /// callback).
    pub fn inspect<R>(&self, look: impl FnOnce(HostCallView<'_, V>) -> R) -> R {
        let mut phase = self.lock();
        look(match &mut *phase {
            Phase::Open(value) => HostCallView::Open(value),
            Phase::Requested => HostCallView::Requested,
            Phase::Cancelling(_) | Phase::Cancelled => HostCallView::Cancelled,
            Phase::Done => HostCallView::Done,
        })
    }

    /// The library stops wanting the answer, deciding now: unless the host finished (or a
    /// cancel came) first, the request is cancelled, its value dropped, and `host_cancel`
    /// runs once on this thread, outside the lock (so it may finish the request itself);
    /// finishing calls on other threads wait until it has returned. Without a
    /// `host_cancel` the request is simply cancelled.
    pub fn cancel(&self, host_cancel: Option<impl FnOnce()>) {
        let mut phase = self.lock();
        if !matches!(*phase, Phase::Open(_)) {
            return;
        }
        let Some(host_cancel) = host_cancel else {
            *phase = Phase::Cancelled;
            return;
        };
        *phase = Phase::Cancelling(std::thread::current().id());
        drop(phase);
        IN_CANCEL.with(|c| c.set(true));
        host_cancel();
        IN_CANCEL.with(|c| c.set(false));
        let mut phase = self.lock();
        if matches!(*phase, Phase::Cancelling(_)) {
            *phase = Phase::Cancelled;
        }
        drop(phase);
        self.settled.notify_all();
    }

    /// The library stops wanting the answer, for a host that decides on its own thread:
    /// unless the host finished (or a cancel was requested) first, the request becomes
    /// `Requested` and its value is handed back (once) to tell the host. A finishing call
    /// before [`confirm_cancel`](Self::confirm_cancel) still wins.
    pub fn request_cancel(&self) -> Option<V> {
        let mut phase = self.lock();
        if !matches!(*phase, Phase::Open(_)) {
            return None;
        }
        match std::mem::replace(&mut *phase, Phase::Requested) {
            Phase::Open(value) => Some(value),
            _ => None,
        }
    }

    /// On the host's thread: whether the request is cancelled, confirming a requested
    /// cancel for good (no finishing call overtook it).
    pub fn confirm_cancel(&self) -> bool {
        let mut phase = self.lock();
        if matches!(*phase, Phase::Requested) {
            *phase = Phase::Cancelled;
        }
        matches!(*phase, Phase::Cancelling(_) | Phase::Cancelled)
    }
}

impl<V: Send + 'static> HostCall<V> {
    /// Spawns (on the current Tokio runtime) the task that cancels this request through
    /// [`cancel`](Self::cancel) with `host_cancel` when `token` fires before the host
    /// finished it; the [`CancelScope`] being run waits for that task when the token
    /// fired. Without a Tokio runtime nothing is watched.
    pub fn watch<F: FnOnce() + Send + 'static>(self: &Arc<Self>, token: CancellationToken, host_cancel: Option<F>) {
        let Ok(executor) = tokio::runtime::Handle::try_current() else { return };
        // Outside a blocking call's scope nobody waits for the watcher.
        let scope = SCOPE.try_with(Arc::clone).unwrap_or_default();
        let id = NEXT_WATCHER.fetch_add(1, Ordering::Relaxed);
        scope.live.lock().unwrap_or_else(PoisonError::into_inner).insert(id, token.clone());
        let call = Arc::clone(self);
        executor.spawn(async move {
            tokio::select! {
                biased;
                () = call.finished.notified() => {}
                () = token.cancelled() => call.cancel(host_cancel),
            }
            scope.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            scope.exited.notify_waiters();
        });
    }
}

/// Where a watcher started later, from any thread, runs and who waits for it: the Tokio
/// runtime and the [`CancelScope`] of the blocking call being polled now (TOOL-4: taken
/// when a tool call starts, used when the host asks to hear of its abort).
#[derive(Clone)]
pub struct WatchSite {
    executor: tokio::runtime::Handle,
    scope: Arc<CancelScope>,
}

impl WatchSite {
    /// The current runtime and scope; `None` outside a Tokio runtime.
    pub fn current() -> Option<Self> {
        let executor = tokio::runtime::Handle::try_current().ok()?;
        Some(Self { executor, scope: SCOPE.try_with(Arc::clone).unwrap_or_default() })
    }
}

/// TOOL-4: runs `on_fire` on `site`'s runtime when `token` fires before `done` does — a
/// tool call's abort signal reaching a host callback — under the rule of
/// [`HostCall::watch`]: `site`'s [`CancelScope`] waits for it when the token fired, so the
/// host is never called after the blocking call that made the call returned.
pub fn watch_token<F: FnOnce() + Send + 'static>(site: &WatchSite, token: CancellationToken, done: CancellationToken, on_fire: F) {
    let executor = site.executor.clone();
    let scope = Arc::clone(&site.scope);
    let id = NEXT_WATCHER.fetch_add(1, Ordering::Relaxed);
    scope.live.lock().unwrap_or_else(PoisonError::into_inner).insert(id, token.clone());
    executor.spawn(async move {
        tokio::select! {
            biased;
            () = done.cancelled() => {}
            () = token.cancelled() => on_fire(),
        }
        scope.live.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        scope.exited.notify_waiters();
    });
}

/// The cancel watchers one blocking call started, by id, with their request's token: the
/// call waits before it returns until none whose token fired is still running, and never
/// for another call's (OHOS-7).
#[derive(Default)]
pub struct CancelScope {
    live: Mutex<HashMap<u64, CancellationToken>>,
    exited: Notify,
    deferred: Mutex<Vec<Deferred>>,
}

/// Work a blocking call finishes before it returns ([`CancelScope::defer`]).
pub type Deferred = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

tokio::task_local! {
    /// The scope of the blocking call whose future is being polled.
    static SCOPE: Arc<CancelScope>;
}

static NEXT_WATCHER: AtomicU64 = AtomicU64::new(0);

impl CancelScope {
    /// Runs `future` in a fresh scope, then waits until every cancel watcher it started
    /// ([`HostCall::watch`]) whose request was cancelled has called the host and returned.
    pub async fn run<F: Future>(future: F) -> F::Output {
        let scope = Arc::new(Self::default());
        let output = SCOPE.scope(Arc::clone(&scope), future).await;
        loop {
            let deferred = std::mem::take(&mut *scope.deferred.lock().unwrap_or_else(PoisonError::into_inner));
            if deferred.is_empty() {
                break;
            }
            SCOPE.scope(Arc::clone(&scope), futures::future::join_all(deferred)).await;
        }
        scope.settle().await;
        output
    }

    /// Hands `work` to the blocking call whose future is being polled now: it is done in
    /// that call's scope, on its thread (a host's `send` is called there, as for every
    /// request of the call), before the call returns — so work begun as the call ends (an
    /// MCP call's `notifications/cancelled`) never reaches the host afterwards. Bound it:
    /// the call waits for it. Outside a blocking call's scope `work` is handed back.
    pub fn defer(work: Deferred) -> Result<(), Deferred> {
        match SCOPE.try_with(Arc::clone) {
            Ok(scope) => {
                scope.deferred.lock().unwrap_or_else(PoisonError::into_inner).push(work);
                Ok(())
            }
            Err(_) => Err(work),
        }
    }

    async fn settle(&self) {
        loop {
            // Created before the check, so an exit between the check and the wait wakes it.
            let exited = self.exited.notified();
            let pending = self.live.lock().unwrap_or_else(PoisonError::into_inner).values().any(CancellationToken::is_cancelled);
            if !pending {
                return;
            }
            exited.await;
        }
    }
}

#[cfg(test)]
#[path = "host_call_tests.rs"]
mod tests;
