//! The panic boundary and the thread-local last error.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::codes::ArkAgentResult;
use arkagent::error::ArkAgentError;

thread_local! {
    static LAST_ERROR: RefCell<String> = const { RefCell::new(String::new()) };
}

/// An error on its way to C: the result code and a message for `arkagent_last_error_message`.
#[derive(Debug)]
pub(crate) struct FfiError(pub ArkAgentResult, pub String);

impl FfiError {
    pub(crate) fn new(code: ArkAgentResult, message: impl Into<String>) -> Self {
        Self(code, message.into())
    }
}

impl From<ArkAgentError> for FfiError {
    fn from(e: ArkAgentError) -> Self {
        Self(ArkAgentResult::from(&e), e.to_string())
    }
}

pub(crate) type FfiResult<T> = Result<T, FfiError>;

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
