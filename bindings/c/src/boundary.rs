//! The panic boundary and the thread-local last error.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::codes::{ArkAgentResult, FfiError, FfiResult};

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

pub(crate) fn last_error() -> String {
    LAST_ERROR.with(|e| e.borrow().clone())
}

fn set_last_error(message: String) {
    LAST_ERROR.with(|e| *e.borrow_mut() = message);
}

/// Runs `f`, catching panics; records the error message for the calling thread.
pub(crate) fn boundary(f: impl FnOnce() -> FfiResult<()>) -> ArkAgentResult {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {
            set_last_error(String::new());
            ArkAgentResult::Ok
        }
        Ok(Err(FfiError(code, message))) => {
            set_last_error(message);
            code
        }
        Err(_) => {
            set_last_error("internal panic caught at the C boundary".to_owned());
            ArkAgentResult::Panic
        }
    }
}

/// The boundary of a `_free` function: a NULL, freed or forged handle is ignored — no
/// effect, the last error kept —; freeing a live one is a successful call (the message
/// is then empty). Panics are caught as [`boundary`] catches them.
pub(crate) fn free_boundary(f: impl FnOnce() -> FfiResult<()>) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => set_last_error(String::new()),
        Ok(Err(_)) => {}
        Err(_) => set_last_error("internal panic caught at the C boundary".to_owned()),
    }
}
