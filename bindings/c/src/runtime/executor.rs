//! The library's executor and the blocking calls' way onto it.

use std::sync::{Arc, Mutex};

use crate::boundary::boundary;
use crate::codes::{ArkAgentResult, FfiError, FfiResult};
use arkagent::llm::host_call::CancelScope;

/// The library's executor: two worker threads named "arkagent", started by the first
/// blocking call and stopped by [`arkagent_shutdown`]. Each blocking call holds an `Arc`,
/// so shutdown can tell whether a call is still using it.
static EXECUTOR: Mutex<Option<Arc<tokio::runtime::Runtime>>> = Mutex::new(None);

fn executor() -> FfiResult<Arc<tokio::runtime::Runtime>> {
    let internal = |m: &str| FfiError::new(ArkAgentResult::Internal, m.to_owned());
    let mut slot = EXECUTOR.lock().map_err(|_| internal("the executor lock was poisoned"))?;
    if let Some(executor) = slot.as_ref() {
        return Ok(Arc::clone(executor));
    }
    let executor = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("arkagent")
        .enable_time()
        .build()
        .map_err(|e| internal(&format!("could not start the executor: {e}")))?;
    let executor = Arc::new(executor);
    *slot = Some(Arc::clone(&executor));
    Ok(executor)
}

/// True inside a library callback on this thread (on the executor, or one the library
/// called elsewhere: `crate::callbacks::in_callback`).
fn inside_callback() -> bool {
    tokio::runtime::Handle::try_current().is_ok() || crate::callbacks::in_host_callback()
}

/// `ARK_AGENT_RESULT_REENTRANT` inside a library callback, where a blocking call would
/// deadlock: checked before a blocking call does anything (nothing changed).
pub(crate) fn refuse_inside_callback(what: &str) -> FfiResult<()> {
    if inside_callback() {
        return Err(FfiError::new(ArkAgentResult::Reentrant, format!("{what} called from a library callback")));
    }
    Ok(())
}

/// Runs `future` to completion on the calling thread (host callbacks run there too), then
/// waits for the HTTP cancel callbacks it caused (OHOS-7), so none runs after it returns.
/// Refuses to nest inside a library callback, where blocking would deadlock.
pub(crate) fn block_on<F: std::future::Future>(what: &str, future: F) -> FfiResult<F::Output> {
    refuse_inside_callback(what)?;
    let executor = executor()?;
    Ok(executor.block_on(CancelScope::run(future)))
}

/// Stops the library's executor threads (named "arkagent") and waits up to one second for
/// them to exit. Call it before unloading the library (`dlclose`), after every blocking
/// call (`arkagent_runtime_run`, `_compress_now`, `_run_decomposed`) has returned;
/// runtimes may stay alive. The next blocking call starts the threads again.
/// Returns `ARK_AGENT_RESULT_RUN_IN_PROGRESS` (and stops nothing) while a blocking call
/// is running on any thread, `ARK_AGENT_RESULT_REENTRANT` from inside a library callback,
/// `ARK_AGENT_RESULT_OK` otherwise (also when no thread was started). Any thread.
#[no_mangle]
pub extern "C" fn arkagent_shutdown() -> ArkAgentResult {
    boundary(|| {
        if inside_callback() {
            return Err(FfiError::new(ArkAgentResult::Reentrant, "arkagent_shutdown called from a library callback"));
        }
        let mut slot = EXECUTOR.lock().map_err(|_| FfiError::new(ArkAgentResult::Internal, "the executor lock was poisoned"))?;
        let Some(executor) = slot.take() else { return Ok(()) };
        match Arc::try_unwrap(executor) {
            Ok(executor) => {
                drop(slot);
                executor.shutdown_timeout(std::time::Duration::from_secs(1));
                Ok(())
            }
            Err(shared) => {
                *slot = Some(shared);
                Err(FfiError::new(ArkAgentResult::RunInProgress, "a blocking call is still running on the executor"))
            }
        }
    })
}
