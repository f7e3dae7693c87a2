//! Result codes: the one place core error codes become C numbers. Numbers are stable and
//! grouped in blocks; never renumber, only append.

use std::ffi::{c_char, CStr};

use crate::error::ArkAgentError;

/// Result of every C call. 0 is success.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentResult {
    /// Success.
    Ok = 0,
    // 1xx: caller errors.
    /// A required pointer argument was NULL.
    NullArgument = 100,
    /// A string was not valid UTF-8.
    InvalidUtf8 = 101,
    /// A JSON argument did not parse or had the wrong shape.
    InvalidJson = 102,
    /// The handle is NULL-like, freed, forged or of the wrong kind.
    InvalidHandle = 103,
    /// A configuration value is invalid.
    InvalidConfig = 104,
    /// An imported state violates an invariant.
    InvalidState = 105,
    /// A run is already active on this runtime.
    RunInProgress = 106,
    /// A blocking call was made from inside a library callback.
    Reentrant = 107,
    /// A completion handle was already completed.
    AlreadyCompleted = 108,
    /// Tool registration rejected (name invalid or duplicate, parameters not an object).
    InvalidTool = 109,
    // 2xx: model call errors.
    /// 401/403.
    LlmAuth = 200,
    /// 429.
    LlmRateLimited = 201,
    /// 5xx.
    LlmServer = 202,
    /// Timed out.
    LlmTimeout = 203,
    /// Context window exceeded.
    LlmContextOverflow = 204,
    /// Other 4xx.
    LlmBadRequest = 205,
    /// The response did not parse.
    LlmMalformedResponse = 206,
    /// The host transport failed.
    LlmTransport = 207,
    /// Cancelled.
    Cancelled = 208,
    // 3xx: delegation.
    /// A worker name is empty.
    SubagentNameEmpty = 300,
    /// A worker name is "clone" (reserved).
    SubagentNameReserved = 301,
    /// A worker name is already registered.
    SubagentNameDuplicate = 302,
    // 9xx: library faults.
    /// A panic was caught at the boundary (a library bug; the handle stays usable).
    Panic = 900,
    /// Internal failure (e.g. the executor could not start).
    Internal = 901,
}

/// Transport failure kinds a host reports through `arkagent_http_fail`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentTransportError {
    /// Connection, DNS, TLS…
    Network = 0,
    /// The request timed out.
    Timeout = 1,
}

impl ArkAgentResult {
    /// The C code for a core error code.
    pub(crate) fn from_code(code: &str) -> Self {
        match code {
            "invalid_json" => Self::InvalidJson,
            "invalid_state" => Self::InvalidState,
            "invalid_config" => Self::InvalidConfig,
            "run_in_progress" => Self::RunInProgress,
            "tool_name_invalid" | "tool_name_duplicate" | "tool_parameters_invalid" => Self::InvalidTool,
            "llm_auth" => Self::LlmAuth,
            "llm_rate_limited" => Self::LlmRateLimited,
            "llm_server" => Self::LlmServer,
            "llm_timeout" => Self::LlmTimeout,
            "llm_context_overflow" => Self::LlmContextOverflow,
            "llm_bad_request" => Self::LlmBadRequest,
            "llm_malformed_response" => Self::LlmMalformedResponse,
            "llm_transport" => Self::LlmTransport,
            "cancelled" => Self::Cancelled,
            "subagent_name_empty" => Self::SubagentNameEmpty,
            "subagent_name_reserved" => Self::SubagentNameReserved,
            "subagent_name_duplicate" => Self::SubagentNameDuplicate,
            _ => Self::Internal,
        }
    }

    /// The stable string code (the core's code where one exists), NUL-terminated.
    pub(crate) fn name(self) -> &'static CStr {
        match self {
            Self::Ok => c"ok",
            Self::NullArgument => c"null_argument",
            Self::InvalidUtf8 => c"invalid_utf8",
            Self::InvalidJson => c"invalid_json",
            Self::InvalidHandle => c"invalid_handle",
            Self::InvalidConfig => c"invalid_config",
            Self::InvalidState => c"invalid_state",
            Self::RunInProgress => c"run_in_progress",
            Self::Reentrant => c"reentrant_call",
            Self::AlreadyCompleted => c"already_completed",
            Self::InvalidTool => c"invalid_tool",
            Self::LlmAuth => c"llm_auth",
            Self::LlmRateLimited => c"llm_rate_limited",
            Self::LlmServer => c"llm_server",
            Self::LlmTimeout => c"llm_timeout",
            Self::LlmContextOverflow => c"llm_context_overflow",
            Self::LlmBadRequest => c"llm_bad_request",
            Self::LlmMalformedResponse => c"llm_malformed_response",
            Self::LlmTransport => c"llm_transport",
            Self::Cancelled => c"cancelled",
            Self::SubagentNameEmpty => c"subagent_name_empty",
            Self::SubagentNameReserved => c"subagent_name_reserved",
            Self::SubagentNameDuplicate => c"subagent_name_duplicate",
            Self::Panic => c"panic",
            Self::Internal => c"internal",
        }
    }
}

impl From<&ArkAgentError> for ArkAgentResult {
    fn from(e: &ArkAgentError) -> Self {
        Self::from_code(e.code())
    }
}

/// The stable string code of a result, e.g. `"invalid_json"`. Static storage: never free
/// it. Unknown numbers give `"unknown"`.
#[no_mangle]
pub extern "C" fn arkagent_result_name(result: i32) -> *const c_char {
    ALL.iter().find(|r| **r as i32 == result).map_or(c"unknown", |r| r.name()).as_ptr()
}

const ALL: [ArkAgentResult; 25] = [
    ArkAgentResult::Ok,
    ArkAgentResult::NullArgument,
    ArkAgentResult::InvalidUtf8,
    ArkAgentResult::InvalidJson,
    ArkAgentResult::InvalidHandle,
    ArkAgentResult::InvalidConfig,
    ArkAgentResult::InvalidState,
    ArkAgentResult::RunInProgress,
    ArkAgentResult::Reentrant,
    ArkAgentResult::AlreadyCompleted,
    ArkAgentResult::InvalidTool,
    ArkAgentResult::LlmAuth,
    ArkAgentResult::LlmRateLimited,
    ArkAgentResult::LlmServer,
    ArkAgentResult::LlmTimeout,
    ArkAgentResult::LlmContextOverflow,
    ArkAgentResult::LlmBadRequest,
    ArkAgentResult::LlmMalformedResponse,
    ArkAgentResult::LlmTransport,
    ArkAgentResult::Cancelled,
    ArkAgentResult::SubagentNameEmpty,
    ArkAgentResult::SubagentNameReserved,
    ArkAgentResult::SubagentNameDuplicate,
    ArkAgentResult::Panic,
    ArkAgentResult::Internal,
];
