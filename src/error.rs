//! The crate's error type. Every variant has a stable string code ([`ArkAgentError::code`]);
//! the C ABI maps codes to numbers in `ffi/codes.rs`, the N-API layer puts them on
//! `error.code`. Codes are never renamed.

mod llm;
pub use llm::LlmError;
use crate::store::StoreError;

/// A stable error code string, e.g. `"invalid_json"`.
pub type ErrorCode = &'static str;

/// Errors of the public API.
#[derive(Debug, thiserror::Error)]
pub enum ArkAgentError {
    /// A configuration value is out of range or missing. `code` is the specific code.
    #[error("{message}")]
    Config {
        /// Stable code, e.g. `"invalid_config"` or `"tool_name_duplicate"`.
        code: ErrorCode,
        /// Human-readable detail (never contains secrets).
        message: String,
    },
    /// A JSON input did not parse or did not have the expected shape.
    #[error("invalid JSON: {0}")]
    InvalidJson(String),
    /// An imported state violates an invariant (unpaired tool calls, duplicate episode ids…).
    #[error("invalid state: {0}")]
    InvalidState(String),
    /// `run` was called while another run of the same runtime is active.
    #[error("a run is already in progress on this runtime")]
    RunInProgress,
    /// The model call failed; see [`LlmError`] for the class.
    #[error(transparent)]
    Llm(#[from] LlmError),
    /// The session store failed (STORE-1..5); see [`StoreError`] for the codes
    /// (`session_locked`, `store_corrupt`, `store_full`, …).
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ArkAgentError {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Config { code, .. } => code,
            Self::InvalidJson(_) => "invalid_json",
            Self::InvalidState(_) => "invalid_state",
            Self::RunInProgress => "run_in_progress",
            Self::Llm(e) => e.code(),
            Self::Store(e) => e.code(),
        }
    }

    /// Shorthand for a [`ArkAgentError::Config`] error.
    pub fn config(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Config { code, message: message.into() }
    }
}

impl From<serde_json::Error> for ArkAgentError {
    fn from(e: serde_json::Error) -> Self {
        Self::InvalidJson(e.to_string())
    }
}
