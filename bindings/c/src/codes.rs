//! Result codes: the one place core error codes become C numbers. Numbers are stable and
//! grouped in blocks; never renumber, only append.

use std::ffi::{c_char, CStr};

use arkagent::error::{ArkAgentError, ErrorCode};

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

/// A lock that a panicking thread held (never expected: no callback runs under one).
pub(crate) fn poisoned() -> FfiError {
    FfiError::new(ArkAgentResult::Internal, "a completion lock was poisoned")
}

/// Result of every C call. 0 is success.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentResult {
    /// Success.
    Ok = 0,
    // 1xx: caller errors.
    /// A required pointer argument (a handle, string, callback or out pointer) was NULL.
    NullArgument = 100,
    /// A string was not valid UTF-8.
    InvalidUtf8 = 101,
    /// A JSON argument did not parse or had the wrong shape.
    InvalidJson = 102,
    /// The handle is freed, forged or of the wrong kind (a NULL handle gives
    /// `ARK_AGENT_RESULT_NULL_ARGUMENT`); also an unknown subscription id.
    InvalidHandle = 103,
    /// A configuration value is invalid.
    InvalidConfig = 104,
    /// An imported state violates an invariant.
    InvalidState = 105,
    /// A run is already active on this runtime.
    RunInProgress = 106,
    /// A blocking call was made from inside a library callback.
    Reentrant = 107,
    /// A completion handle was already finished (by any completion function, on any
    /// thread).
    AlreadyCompleted = 108,
    /// Tool registration rejected (name invalid or duplicate, parameters not an object).
    InvalidTool = 109,
    /// An integer argument (an enum value or a flag) is out of its documented range.
    InvalidArgument = 110,
    /// A stream call (`arkagent_http_stream_chunk` / `_end`) on a completion whose
    /// stream was not started with `arkagent_http_stream_begin`.
    StreamNotStarted = 111,
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
    /// Delegation was asked for but the runtime has no workers and no clone.
    DelegationNotConfigured = 303,
    /// The host's worker factory did not return `ARK_AGENT_RESULT_OK`.
    SubagentFactoryFailed = 304,
    // 4xx: session store (STORE-1..5).
    /// The session is open in another runtime (this process or another).
    SessionLocked = 400,
    /// The store file is corrupt, truncated or not SQLite at all.
    StoreCorrupt = 401,
    /// The file is another application's SQLite database.
    StoreForeign = 402,
    /// The file was written by a newer library; it is left untouched.
    StoreNewerSchema = 403,
    /// The disk (or the store's size limit) is full; the commit was rolled back.
    StoreFull = 404,
    /// The file or its directory cannot be written.
    StoreReadOnly = 405,
    /// Another I/O or SQLite failure.
    StoreIo = 406,
    // 5xx: images (IMG-5); nothing was written.
    /// Not a JPEG, PNG, WebP or GIF — or a HEIC/HEIF photo for a model family that does
    /// not take them (pack it as JPEG first).
    ImageUnsupportedType = 500,
    /// The image header does not parse, the bytes are not the declared type, the base64
    /// does not decode, or the URL is neither `https:` nor a `data:` URL.
    ImageInvalid = 501,
    /// The image is over the model's `max_image_bytes` (default 20 MiB).
    ImageTooLarge = 502,
    /// The request would carry more images than the model's `max_images_per_request`.
    TooManyImages = 503,
    /// No image with that id in the session.
    ImageNotFound = 504,
    /// The image's pixel size is outside what the model's provider takes: over 8,000 px a
    /// side for Claude, over 178,956,970 pixels for every family, a side under 11 px or an
    /// aspect ratio over 200:1 for Qwen-VL.
    ImageDimensionsUnsupported = 505,
    /// An animated GIF, PNG or WebP for a model family that takes still images only.
    ImageAnimated = 506,
    /// The host's image codec failed or gave back bytes that are not the image asked for.
    ImageCodecFailed = 507,
    // 6xx: thinking models (THINK-4), refused when the config is validated.
    /// The model's `thinking` setting has no switch at its provider on its wire format.
    ThinkingUnsupported = 600,
    /// A request option the thinking model refuses (forced `tool_choice` or `temperature`
    /// with Anthropic thinking or an OpenAI reasoning model, Qwen thinking without
    /// streaming).
    ThinkingConflict = 601,
    /// `extra_body` sets a field the library writes itself.
    ExtraBodyConflict = 602,
    // 7xx: tool approval (TOOL-1, TOOL-2); a refused call changes nothing.
    /// A turn waits for approval: answer its calls and resume first (a run or compression
    /// refused), or calls still wait (a resume refused).
    ApprovalPending = 700,
    /// No turn waits for approval (an answer or resume refused).
    ApprovalNotPending = 701,
    /// The paused turn has no call with that id.
    ApprovalUnknownCall = 702,
    /// That call was answered already.
    ApprovalAlreadyAnswered = 703,
    /// Edited arguments are not a JSON object with every property the tool's schema
    /// requires.
    ToolArgumentsInvalid = 704,
    // 8xx: chat gestures (CHAT-1, CHAT-2); a refused rewind or fork changes nothing.
    /// The session has no run with that id (never run here, or dropped by a rewind).
    UnknownRun = 800,
    /// That point is inside what a compression archived.
    RunCompressed = 801,
    /// A fork's new session id is taken.
    SessionExists = 802,
    // 9xx: library faults.
    /// A panic was caught at the boundary (a library bug; the handle stays usable).
    Panic = 900,
    /// Internal failure (e.g. the executor could not start).
    Internal = 901,
}

/// Transport failure kinds a host reports through `arkagent_http_fail`. The function
/// takes the value as a plain `int32_t`; any other number gives
/// `ARK_AGENT_RESULT_INVALID_ARGUMENT`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentTransportError {
    /// Connection, DNS, TLS…
    Network = 0,
    /// The request timed out.
    Timeout = 1,
}

/// TOOL-4: why a tool call's abort signal fired ([`arkagent_tool_abort_reason`],
/// [`ArkAgentToolAbortCallback`]).
///
/// [`arkagent_tool_abort_reason`]: crate::arkagent_tool_abort_reason
/// [`ArkAgentToolAbortCallback`]: crate::ArkAgentToolAbortCallback
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArkAgentToolAbort {
    /// Not aborted: the library still waits for the result.
    None = 0,
    /// The call ran past its deadline; the model was answered `tool_timeout`.
    ToolTimeout = 1,
    /// The run was cancelled (`arkagent_runtime_cancel`, or the runtime freed mid-run).
    Cancelled = 2,
    /// The runtime stopped waiting otherwise, or the call is finished or unknown: nobody
    /// reads a result any more.
    Closed = 3,
}

impl From<arkagent::tools::AbortReason> for ArkAgentToolAbort {
    fn from(reason: arkagent::tools::AbortReason) -> Self {
        match reason {
            arkagent::tools::AbortReason::ToolTimeout => Self::ToolTimeout,
            arkagent::tools::AbortReason::Cancelled => Self::Cancelled,
            arkagent::tools::AbortReason::Closed => Self::Closed,
        }
    }
}

impl ArkAgentTransportError {
    /// The kind for a number from C, or `INVALID_ARGUMENT`.
    pub(crate) fn from_c(value: i32) -> Result<Self, FfiError> {
        match value {
            0 => Ok(Self::Network),
            1 => Ok(Self::Timeout),
            other => Err(FfiError::new(
                ArkAgentResult::InvalidArgument,
                format!("kind {other} is not an ArkAgentTransportError (0 or 1)"),
            )),
        }
    }
}

impl ArkAgentResult {
    /// The C code for a core error code. Exhaustive: a new core code does not compile
    /// until it has its C code here (the three tool-registration codes share
    /// `INVALID_TOOL`).
    pub(crate) fn for_core_code(code: ErrorCode) -> Self {
        match code {
            ErrorCode::InvalidJson => Self::InvalidJson,
            ErrorCode::InvalidState => Self::InvalidState,
            ErrorCode::InvalidConfig => Self::InvalidConfig,
            ErrorCode::RunInProgress => Self::RunInProgress,
            ErrorCode::ToolNameInvalid | ErrorCode::ToolNameDuplicate | ErrorCode::ToolParametersInvalid => Self::InvalidTool,
            ErrorCode::LlmAuth => Self::LlmAuth,
            ErrorCode::LlmRateLimited => Self::LlmRateLimited,
            ErrorCode::LlmServer => Self::LlmServer,
            ErrorCode::LlmTimeout => Self::LlmTimeout,
            ErrorCode::LlmContextOverflow => Self::LlmContextOverflow,
            ErrorCode::LlmBadRequest => Self::LlmBadRequest,
            ErrorCode::LlmMalformedResponse => Self::LlmMalformedResponse,
            ErrorCode::LlmTransport => Self::LlmTransport,
            ErrorCode::Cancelled => Self::Cancelled,
            ErrorCode::SubagentNameEmpty => Self::SubagentNameEmpty,
            ErrorCode::SubagentNameReserved => Self::SubagentNameReserved,
            ErrorCode::SubagentNameDuplicate => Self::SubagentNameDuplicate,
            ErrorCode::DelegationNotConfigured => Self::DelegationNotConfigured,
            ErrorCode::SubagentFactoryFailed => Self::SubagentFactoryFailed,
            ErrorCode::SessionLocked => Self::SessionLocked,
            ErrorCode::StoreCorrupt => Self::StoreCorrupt,
            ErrorCode::StoreForeign => Self::StoreForeign,
            ErrorCode::StoreNewerSchema => Self::StoreNewerSchema,
            ErrorCode::StoreFull => Self::StoreFull,
            ErrorCode::StoreReadOnly => Self::StoreReadOnly,
            ErrorCode::StoreIo => Self::StoreIo,
            ErrorCode::ImageUnsupportedType => Self::ImageUnsupportedType,
            ErrorCode::ImageInvalid => Self::ImageInvalid,
            ErrorCode::ImageTooLarge => Self::ImageTooLarge,
            ErrorCode::TooManyImages => Self::TooManyImages,
            ErrorCode::ImageNotFound => Self::ImageNotFound,
            ErrorCode::ImageDimensionsUnsupported => Self::ImageDimensionsUnsupported,
            ErrorCode::ImageAnimated => Self::ImageAnimated,
            ErrorCode::ImageCodecFailed => Self::ImageCodecFailed,
            ErrorCode::ThinkingUnsupported => Self::ThinkingUnsupported,
            ErrorCode::ThinkingConflict => Self::ThinkingConflict,
            ErrorCode::ExtraBodyConflict => Self::ExtraBodyConflict,
            ErrorCode::ApprovalPending => Self::ApprovalPending,
            ErrorCode::ApprovalNotPending => Self::ApprovalNotPending,
            ErrorCode::ApprovalUnknownCall => Self::ApprovalUnknownCall,
            ErrorCode::ApprovalAlreadyAnswered => Self::ApprovalAlreadyAnswered,
            ErrorCode::ToolArgumentsInvalid => Self::ToolArgumentsInvalid,
            ErrorCode::UnknownRun => Self::UnknownRun,
            ErrorCode::RunCompressed => Self::RunCompressed,
            ErrorCode::SessionExists => Self::SessionExists,
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
            Self::InvalidArgument => c"invalid_argument",
            Self::StreamNotStarted => c"stream_not_started",
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
            Self::DelegationNotConfigured => c"delegation_not_configured",
            Self::SubagentFactoryFailed => c"subagent_factory_failed",
            Self::SessionLocked => c"session_locked",
            Self::StoreCorrupt => c"store_corrupt",
            Self::StoreForeign => c"store_foreign",
            Self::StoreNewerSchema => c"store_newer_schema",
            Self::StoreFull => c"store_full",
            Self::StoreReadOnly => c"store_read_only",
            Self::StoreIo => c"store_io",
            Self::ImageUnsupportedType => c"image_unsupported_type",
            Self::ImageInvalid => c"image_invalid",
            Self::ImageTooLarge => c"image_too_large",
            Self::TooManyImages => c"too_many_images",
            Self::ImageNotFound => c"image_not_found",
            Self::ImageDimensionsUnsupported => c"image_dimensions_unsupported",
            Self::ImageAnimated => c"image_animated",
            Self::ImageCodecFailed => c"image_codec_failed",
            Self::ThinkingUnsupported => c"thinking_unsupported",
            Self::ThinkingConflict => c"thinking_conflict",
            Self::ExtraBodyConflict => c"extra_body_conflict",
            Self::ApprovalPending => c"approval_pending",
            Self::ApprovalNotPending => c"approval_not_pending",
            Self::ApprovalUnknownCall => c"approval_unknown_call",
            Self::ApprovalAlreadyAnswered => c"approval_already_answered",
            Self::ToolArgumentsInvalid => c"tool_arguments_invalid",
            Self::UnknownRun => c"unknown_run",
            Self::RunCompressed => c"run_compressed",
            Self::SessionExists => c"session_exists",
            Self::Panic => c"panic",
            Self::Internal => c"internal",
        }
    }
}

impl From<&ArkAgentError> for ArkAgentResult {
    /// Every core error has its own C code (`ArkAgentResult::for_core_code`); `INTERNAL`
    /// is left for library faults.
    fn from(e: &ArkAgentError) -> Self {
        Self::for_core_code(e.code())
    }
}

/// The stable string code of a result, e.g. `"invalid_json"`. Static storage: never free
/// it. Unknown numbers give `"unknown"`.
#[no_mangle]
pub extern "C" fn arkagent_result_name(result: i32) -> *const c_char {
    ALL.iter().find(|r| **r as i32 == result).map_or(c"unknown", |r| r.name()).as_ptr()
}

const ALL: [ArkAgentResult; 55] = [
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
    ArkAgentResult::InvalidArgument,
    ArkAgentResult::StreamNotStarted,
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
    ArkAgentResult::DelegationNotConfigured,
    ArkAgentResult::SubagentFactoryFailed,
    ArkAgentResult::SessionLocked,
    ArkAgentResult::StoreCorrupt,
    ArkAgentResult::StoreForeign,
    ArkAgentResult::StoreNewerSchema,
    ArkAgentResult::StoreFull,
    ArkAgentResult::StoreReadOnly,
    ArkAgentResult::StoreIo,
    ArkAgentResult::ImageUnsupportedType,
    ArkAgentResult::ImageInvalid,
    ArkAgentResult::ImageTooLarge,
    ArkAgentResult::TooManyImages,
    ArkAgentResult::ImageNotFound,
    ArkAgentResult::ImageDimensionsUnsupported,
    ArkAgentResult::ImageAnimated,
    ArkAgentResult::ImageCodecFailed,
    ArkAgentResult::ThinkingUnsupported,
    ArkAgentResult::ThinkingConflict,
    ArkAgentResult::ExtraBodyConflict,
    ArkAgentResult::ApprovalPending,
    ArkAgentResult::ApprovalNotPending,
    ArkAgentResult::ApprovalUnknownCall,
    ArkAgentResult::ApprovalAlreadyAnswered,
    ArkAgentResult::ToolArgumentsInvalid,
    ArkAgentResult::UnknownRun,
    ArkAgentResult::RunCompressed,
    ArkAgentResult::SessionExists,
    ArkAgentResult::Panic,
    ArkAgentResult::Internal,
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use arkagent::llm::LlmError;
    use arkagent::store::StoreError;

    /// One error of every variant the core can return. The matches have no wildcard, so a
    /// new variant does not compile until it is listed here.
    fn one_of_each_variant() -> Vec<ArkAgentError> {
        let all = vec![
            ArkAgentError::config(ErrorCode::InvalidConfig, "x"),
            ArkAgentError::InvalidJson("x".into()),
            ArkAgentError::InvalidState("x".into()),
            ArkAgentError::RunInProgress,
            LlmError::Auth { status: 401 }.into(),
            LlmError::RateLimited { retry_after_ms: None }.into(),
            LlmError::Server { status: 500, retry_after_ms: None }.into(),
            LlmError::Timeout.into(),
            LlmError::ContextOverflow.into(),
            LlmError::BadRequest { status: 400, provider_code: None }.into(),
            LlmError::MalformedResponse("x".into()).into(),
            LlmError::Cancelled.into(),
            LlmError::Transport("x".into()).into(),
            StoreError::SessionLocked("x".into()).into(),
            StoreError::Corrupt("x".into()).into(),
            StoreError::Foreign("x".into()).into(),
            StoreError::NewerSchema { found: 3, supported: 2 }.into(),
            StoreError::Full("x".into()).into(),
            StoreError::ReadOnly("x".into()).into(),
            StoreError::Io("x".into()).into(),
            ArkAgentError::Image { code: ErrorCode::ImageInvalid, message: "x".into() },
            ArkAgentError::approval(ErrorCode::ApprovalPending, "x"),
            ArkAgentError::gesture(ErrorCode::UnknownRun, "x"),
        ];
        for e in &all {
            match e {
                ArkAgentError::Config { .. }
                | ArkAgentError::Image { .. }
                | ArkAgentError::Approval { .. }
                | ArkAgentError::Gesture { .. }
                | ArkAgentError::InvalidJson(_)
                | ArkAgentError::InvalidState(_)
                | ArkAgentError::RunInProgress => {}
                ArkAgentError::Llm(l) => match l {
                    LlmError::Auth { .. }
                    | LlmError::RateLimited { .. }
                    | LlmError::Server { .. }
                    | LlmError::Timeout
                    | LlmError::ContextOverflow
                    | LlmError::BadRequest { .. }
                    | LlmError::MalformedResponse(_)
                    | LlmError::Cancelled
                    | LlmError::Transport(_) => {}
                },
                ArkAgentError::Store(s) => match s {
                    StoreError::SessionLocked(_)
                    | StoreError::Corrupt(_)
                    | StoreError::Foreign(_)
                    | StoreError::NewerSchema { .. }
                    | StoreError::Full(_)
                    | StoreError::ReadOnly(_)
                    | StoreError::Io(_) => {}
                },
            }
        }
        all
    }

    /// Today's C number of every core code: numbers are never renumbered.
    const NUMBERS: [(&str, i32); 47] = [
        ("invalid_config", 104),
        ("tool_name_invalid", 109),
        ("tool_name_duplicate", 109),
        ("tool_parameters_invalid", 109),
        ("subagent_name_empty", 300),
        ("subagent_name_reserved", 301),
        ("subagent_name_duplicate", 302),
        ("delegation_not_configured", 303),
        ("subagent_factory_failed", 304),
        ("invalid_json", 102),
        ("invalid_state", 105),
        ("run_in_progress", 106),
        ("llm_auth", 200),
        ("llm_rate_limited", 201),
        ("llm_server", 202),
        ("llm_timeout", 203),
        ("llm_context_overflow", 204),
        ("llm_bad_request", 205),
        ("llm_malformed_response", 206),
        ("cancelled", 208),
        ("llm_transport", 207),
        ("session_locked", 400),
        ("store_corrupt", 401),
        ("store_foreign", 402),
        ("store_newer_schema", 403),
        ("store_full", 404),
        ("store_read_only", 405),
        ("store_io", 406),
        ("image_unsupported_type", 500),
        ("image_invalid", 501),
        ("image_too_large", 502),
        ("too_many_images", 503),
        ("image_not_found", 504),
        ("image_dimensions_unsupported", 505),
        ("image_animated", 506),
        ("image_codec_failed", 507),
        ("thinking_unsupported", 600),
        ("thinking_conflict", 601),
        ("extra_body_conflict", 602),
        ("approval_pending", 700),
        ("approval_not_pending", 701),
        ("approval_unknown_call", 702),
        ("approval_already_answered", 703),
        ("tool_arguments_invalid", 704),
        ("unknown_run", 800),
        ("run_compressed", 801),
        ("session_exists", 802),
    ];

    #[test]
    fn ffi_5_every_core_error_code_has_its_own_c_code() {
        let mut codes: Vec<ErrorCode> = one_of_each_variant().iter().map(ArkAgentError::code).collect();
        codes.extend(ErrorCode::ALL);
        for code in &codes {
            let mapped = ArkAgentResult::for_core_code(*code);
            assert!(
                !matches!(mapped, ArkAgentResult::Internal | ArkAgentResult::Panic | ArkAgentResult::Ok),
                "core code {code:?} maps to {mapped:?}; INTERNAL/PANIC are for library faults only"
            );
        }
        // Distinct numbers, except the three tool-registration codes sharing INVALID_TOOL.
        let mut numbers = std::collections::HashMap::new();
        for code in ErrorCode::ALL {
            let n = ArkAgentResult::for_core_code(code) as i32;
            if let Some(other) = numbers.insert(n, code) {
                assert_eq!(n, ArkAgentResult::InvalidTool as i32, "{code:?} and {other:?} share C code {n}");
            }
        }
        assert_eq!(numbers.len(), ErrorCode::ALL.len() - 2);
        // Today's numbers.
        for code in ErrorCode::ALL {
            let (_, n) = NUMBERS.iter().find(|(s, _)| *s == code.as_str()).expect("listed in NUMBERS");
            assert_eq!(ArkAgentResult::for_core_code(code) as i32, *n, "{code:?} was renumbered");
        }
        let e = ArkAgentError::config(ErrorCode::DelegationNotConfigured, "x");
        assert_eq!(ArkAgentResult::from(&e), ArkAgentResult::DelegationNotConfigured);
        assert_eq!(ArkAgentResult::DelegationNotConfigured as i32, 303);
    }

    /// `INTERNAL` is for library faults: no core error reaches it (before the typed
    /// `ErrorCode`, an unknown code string did; now the exhaustive match rules it out).
    #[test]
    fn ffi_5_no_core_error_is_reported_as_internal() {
        for e in one_of_each_variant().iter().chain(&ErrorCode::ALL.map(|c| ArkAgentError::config(c, "x"))) {
            assert_ne!(ArkAgentResult::from(e), ArkAgentResult::Internal, "{e:?}");
        }
        assert_eq!(ArkAgentResult::Internal.name().to_str().unwrap(), "internal");
    }

    #[test]
    fn ffi_5_result_names_are_unique_and_listed() {
        let mut names: Vec<_> = ALL.iter().map(|r| r.name().to_str().unwrap()).collect();
        let before = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), before, "two results share a name");
        // Core codes keep their own spelling as the C name.
        for r in ALL {
            if let Some(code) = ErrorCode::ALL.into_iter().find(|c| c.as_str() == r.name().to_str().unwrap()) {
                assert_eq!(ArkAgentResult::for_core_code(code), r);
            }
        }
        for code in ErrorCode::ALL {
            let r = ArkAgentResult::for_core_code(code);
            assert!(ALL.contains(&r), "{r:?} missing from ALL");
            if r != ArkAgentResult::InvalidTool {
                assert_eq!(r.name().to_str().unwrap(), code.as_str());
            }
        }
    }
}
