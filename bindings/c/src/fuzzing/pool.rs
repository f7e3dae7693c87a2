//! Threads for the sequence's blocking calls and answers given elsewhere, reused from
//! sequence to sequence (as a host's worker pool reuses its threads): a thread made per
//! call cost the fuzzer a quarter of its time (stacks mapped and faulted in under ASan).
//! Handing a job over allocates nothing beyond the job itself, and a sequence ends only
//! once every job's thread is idle again (what a job held is freed by then).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send>;

/// A thread of the pool and the slot its next job arrives in.
#[derive(Default)]
struct Worker {
    job: Mutex<Option<Job>>,
    arrived: Condvar,
}

/// Idle threads.
static IDLE: Mutex<Vec<Arc<Worker>>> = Mutex::new(Vec::new());
/// Jobs handed over whose thread is not back among the idle ones.
static BUSY: AtomicUsize = AtomicUsize::new(0);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job` on an idle thread of the pool, or on a new one when none is idle.
pub(super) fn run(job: Job) {
    BUSY.fetch_add(1, Ordering::SeqCst);
    if let Some(worker) = lock(&IDLE).pop() {
        *lock(&worker.job) = Some(job);
        worker.arrived.notify_one();
        return;
    }
    let worker = Arc::new(Worker { job: Mutex::new(Some(job)), arrived: Condvar::new() });
    std::thread::Builder::new()
        .name("fuzz-host".into())
        .spawn(move || loop {
            let job = {
                let mut slot = lock(&worker.job);
                loop {
                    match slot.take() {
                        Some(job) => break job,
                        None => slot = worker.arrived.wait(slot).unwrap_or_else(|e| e.into_inner()),
                    }
                }
            };
            job();
            lock(&IDLE).push(Arc::clone(&worker));
            BUSY.fetch_sub(1, Ordering::SeqCst);
        })
        .expect("a thread for the sequence");
}

/// Runs `job` on another thread and waits for it.
pub(super) fn run_and_wait(job: impl FnOnce() + Send + 'static) {
    let done = Arc::new((Mutex::new(false), Condvar::new()));
    let signal = Arc::clone(&done);
    run(Box::new(move || {
        job();
        *lock(&signal.0) = true;
        signal.1.notify_all();
    }));
    let mut finished = lock(&done.0);
    while !*finished {
        finished = done.1.wait(finished).unwrap_or_else(|e| e.into_inner());
    }
}

/// Waits until every job handed over has finished, the memory it held freed (a sequence
/// ends with as many frees as mallocs: what a job still held is not taken for a leak).
pub(super) fn wait_idle() {
    while BUSY.load(Ordering::SeqCst) > 0 {
        std::thread::yield_now();
    }
}
