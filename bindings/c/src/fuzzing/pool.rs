//! Threads for the sequence's blocking calls and answers given elsewhere, reused from
//! sequence to sequence (as a host's worker pool reuses its threads): a thread made per
//! call cost the fuzzer a quarter of its time (stacks mapped and faulted in under ASan).
//! Handing a job over allocates nothing beyond the job itself, and a sequence ends only
//! once every job has let go of its host (what a job held is freed by then).

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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `job` on an idle thread of the pool, or on a new one when none is idle.
pub(super) fn run(job: Job) {
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
    drop(finished);
    wait_released(&done);
}

/// Waits until every job has let go of `shared` (the jobs are over, what they held freed).
pub(super) fn wait_released<T>(shared: &Arc<T>) {
    while Arc::strong_count(shared) > 1 {
        std::thread::yield_now();
    }
}

