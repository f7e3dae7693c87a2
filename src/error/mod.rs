//! The crate's error type, on the ground: every variant has a stable code
//! ([`ArkAgentError::code`], a typed [`ErrorCode`]); the C ABI maps codes to numbers in
//! `bindings/c/src/codes.rs` (an exhaustive `match`), the N-API layer puts
//! [`ErrorCode::as_str`] on `error.code`. Codes are never renamed. The model call's and
//! the store's errors live here too ([`LlmError`], [`StoreError`]; `llm/` and `store/`
//! re-export them), so no layer above is imported.

mod code;
mod llm;
mod store;

pub use code::ErrorCode;
pub use llm::LlmError;
pub use store::StoreError;

/// Errors of the public API.
#[derive(Debug, thiserror::Error)]
pub enum ArkAgentError {
    /// A configuration value is out of range or missing. `code` is the specific code.
    #[error("{message}")]
    Config {
        /// Stable code, e.g. [`ErrorCode::InvalidConfig`] or [`ErrorCode::ToolNameDuplicate`].
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
    /// An image was refused (IMG-5): `image_unsupported_type`, `image_invalid`,
    /// `image_too_large`, `too_many_images`; nothing was written.
    #[error("{message}")]
    Image {
        /// The stable code.
        code: ErrorCode,
        /// Human-readable detail.
        message: String,
    },
    /// The session store failed (STORE-1..5); see [`StoreError`] for the codes
    /// (`session_locked`, `store_corrupt`, `store_full`, …).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// TOOL-1, TOOL-2: an approval answer or a resume refused (`approval_pending`,
    /// `approval_not_pending`, `approval_unknown_call`, `approval_already_answered`,
    /// `tool_arguments_invalid`); nothing changed.
    #[error("{message}")]
    Approval {
        /// The stable code.
        code: ErrorCode,
        /// Human-readable detail.
        message: String,
    },
    /// CHAT-1, CHAT-2: a rewind or fork refused (`unknown_run`, `run_compressed`,
    /// `session_exists`); nothing changed.
    #[error("{message}")]
    Gesture {
        /// The stable code.
        code: ErrorCode,
        /// Human-readable detail.
        message: String,
    },
}

impl ArkAgentError {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Config { code, .. } | Self::Image { code, .. } | Self::Approval { code, .. } | Self::Gesture { code, .. } => *code,
            Self::InvalidJson(_) => ErrorCode::InvalidJson,
            Self::InvalidState(_) => ErrorCode::InvalidState,
            Self::RunInProgress => ErrorCode::RunInProgress,
            Self::Llm(e) => e.code(),
            Self::Store(e) => e.code(),
        }
    }

    /// Shorthand for a [`ArkAgentError::Config`] error.
    pub fn config(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Config { code, message: message.into() }
    }

    /// A refused rewind or fork (CHAT-1, CHAT-2) with its code.
    pub fn gesture(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Gesture { code, message: message.into() }
    }

    /// An approval error (TOOL-1) with its code.
    pub fn approval(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Approval { code, message: message.into() }
    }
}

impl From<serde_json::Error> for ArkAgentError {
    fn from(e: serde_json::Error) -> Self {
        Self::InvalidJson(e.to_string())
    }
}
