//! The session store's errors (STORE-1..5), on the ground so that [`super::ArkAgentError`]
//! wraps them without importing the store; `store/` re-exports [`StoreError`].

use super::ErrorCode;

/// Errors of a session store. Every variant has a stable code ([`StoreError::code`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The session is open in another runtime (this process or another): `session_locked`.
    #[error("session {0:?} is already open in another runtime")]
    SessionLocked(String),
    /// The file is not a readable SQLite database (corrupt, truncated or not SQLite at
    /// all), or a stored record does not parse: `store_corrupt`.
    #[error("the session store is corrupt: {0}")]
    Corrupt(String),
    /// The file is a SQLite database of some other application: `store_foreign`.
    #[error("the file is not an arkagent session store: {0}")]
    Foreign(String),
    /// The file was written by a newer library (schema `found` > `supported`):
    /// `store_newer_schema`. It is left untouched.
    #[error("the session store has schema version {found}, newer than this library's {supported}")]
    NewerSchema {
        /// The file's schema version.
        found: i64,
        /// The newest version this library knows.
        supported: i64,
    },
    /// The disk (or the store's size limit) is full; the commit was rolled back:
    /// `store_full`.
    #[error("the session store is full: {0}")]
    Full(String),
    /// The file or its directory cannot be written: `store_read_only`.
    #[error("the session store is read-only: {0}")]
    ReadOnly(String),
    /// Any other I/O or SQLite failure: `store_io`.
    #[error("session store I/O failed: {0}")]
    Io(String),
}

impl StoreError {
    /// The stable code of this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::SessionLocked(_) => ErrorCode::SessionLocked,
            Self::Corrupt(_) => ErrorCode::StoreCorrupt,
            Self::Foreign(_) => ErrorCode::StoreForeign,
            Self::NewerSchema { .. } => ErrorCode::StoreNewerSchema,
            Self::Full(_) => ErrorCode::StoreFull,
            Self::ReadOnly(_) => ErrorCode::StoreReadOnly,
            Self::Io(_) => ErrorCode::StoreIo,
        }
    }

    /// Every code a store produces (the C and N-API code tables are tested against it).
    pub const CODES: [ErrorCode; 7] = [
        ErrorCode::SessionLocked,
        ErrorCode::StoreCorrupt,
        ErrorCode::StoreForeign,
        ErrorCode::StoreNewerSchema,
        ErrorCode::StoreFull,
        ErrorCode::StoreReadOnly,
        ErrorCode::StoreIo,
    ];
}
