//! [`ErrorCode`]: every stable code an [`ArkAgentError`](super::ArkAgentError) can carry,
//! as one enum, so each boundary maps codes with an exhaustive `match` (the C ABI to
//! result numbers, the N-API layer to `error.code`). The strings ([`ErrorCode::as_str`])
//! are the seeds' codes verbatim and never change; a new code is a new variant.

use std::fmt;

use serde::{Serialize, Serializer};

/// A stable error code, e.g. [`ErrorCode::InvalidJson`] (`"invalid_json"`). Serializes as
/// its string; compares equal to it (`code == "invalid_json"`); `Debug` prints the
/// string, quoted, as it did when codes were `&'static str`.
///
/// ```
/// use arkagent::ErrorCode;
/// assert_eq!(ErrorCode::ToolNameDuplicate.as_str(), "tool_name_duplicate");
/// assert_eq!(ErrorCode::StoreFull.to_string(), "store_full");
/// assert_eq!(serde_json::to_string(&ErrorCode::LlmAuth).unwrap(), "\"llm_auth\"");
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    // Configuration (`ArkAgentError::Config`).
    /// `invalid_config`: a configuration value is out of range or missing.
    InvalidConfig,
    /// `tool_name_invalid`: a tool name does not match `^[a-zA-Z0-9_-]{1,64}$`.
    ToolNameInvalid,
    /// `tool_name_duplicate`: a tool of that name is already registered.
    ToolNameDuplicate,
    /// `tool_parameters_invalid`: a tool's parameters are not a JSON Schema object.
    ToolParametersInvalid,
    /// `subagent_name_empty`: a worker name is empty.
    SubagentNameEmpty,
    /// `subagent_name_reserved`: a worker name is `"clone"` (reserved).
    SubagentNameReserved,
    /// `subagent_name_duplicate`: a worker of that name is already registered.
    SubagentNameDuplicate,
    /// `delegation_not_configured`: delegation was asked for without workers or clone.
    DelegationNotConfigured,
    /// `subagent_factory_failed`: the host's worker factory failed.
    SubagentFactoryFailed,
    // Inputs and the runtime.
    /// `invalid_json`: a JSON input did not parse or had the wrong shape.
    InvalidJson,
    /// `invalid_state`: an imported state violates an invariant.
    InvalidState,
    /// `run_in_progress`: another run of the same runtime is active.
    RunInProgress,
    // The model call (`LlmError`, LLM-3).
    /// `llm_auth`: 401/403.
    LlmAuth,
    /// `llm_rate_limited`: 429.
    LlmRateLimited,
    /// `llm_server`: 5xx or a provider's server-side error.
    LlmServer,
    /// `llm_timeout`: the request timed out.
    LlmTimeout,
    /// `llm_context_overflow`: the prompt exceeds the model's context window.
    LlmContextOverflow,
    /// `llm_bad_request`: another 4xx, or a non-retryable provider error.
    LlmBadRequest,
    /// `llm_malformed_response`: the response did not have the documented shape.
    LlmMalformedResponse,
    /// `cancelled`: the run was cancelled.
    Cancelled,
    /// `llm_transport`: the host transport failed.
    LlmTransport,
    // The session store (`StoreError`, STORE-1..5).
    /// `session_locked`: the session is open in another runtime.
    SessionLocked,
    /// `store_corrupt`: the file is corrupt or a stored record does not parse.
    StoreCorrupt,
    /// `store_foreign`: the file is another application's SQLite database.
    StoreForeign,
    /// `store_newer_schema`: the file was written by a newer library.
    StoreNewerSchema,
    /// `store_full`: the disk (or the store's size limit) is full.
    StoreFull,
    /// `store_read_only`: the file or its directory cannot be written.
    StoreReadOnly,
    /// `store_io`: any other I/O or SQLite failure.
    StoreIo,
    // Images (IMG-5): nothing is written when one is refused.
    /// `image_unsupported_type`: not a JPEG, PNG, WebP or GIF (or HEIC/HEIF for a model
    /// family that does not take them: pack the photo as JPEG first).
    ImageUnsupportedType,
    /// `image_invalid`: the image's header does not parse, its bytes are not the declared
    /// type, or its URL is neither `https:` nor a well-formed `data:` URL.
    ImageInvalid,
    /// `image_too_large`: the image is over the model's byte cap (`max_image_bytes`).
    ImageTooLarge,
    /// `too_many_images`: the request would carry more images than the model's limit
    /// (`max_images_per_request`).
    TooManyImages,
    /// `image_not_found`: no image with that id in the session.
    ImageNotFound,
    /// `image_dimensions_unsupported`: the image's pixel size is outside what the model's
    /// provider takes (IMG-6): over 8,000 px a side for Claude, over 178,956,970 pixels
    /// (the decoders' bomb limit) for every family, a side under 11 px or an aspect ratio
    /// over 200:1 for Qwen-VL.
    ImageDimensionsUnsupported,
    /// `image_animated`: an animated GIF, PNG or WebP for a model family that takes still
    /// images only (OpenAI's).
    ImageAnimated,
    /// `image_codec_failed`: the host's image codec (IMG-9) failed, or gave back bytes that
    /// are not an image of the type and size it was asked for.
    ImageCodecFailed,
    // Thinking models (THINK-4), refused when the config is validated, before any request.
    /// `thinking_unsupported`: the model's `thinking` setting has no switch at its
    /// provider on its wire format (e.g. a token budget for DeepSeek): nothing is sent.
    ThinkingUnsupported,
    /// `thinking_conflict`: a request option the thinking model refuses (a forced
    /// `tool_choice` or a `temperature` with Anthropic thinking or an OpenAI reasoning
    /// model, Qwen thinking on a call that does not stream).
    ThinkingConflict,
    /// `extra_body_conflict`: `extra_body` sets a field the library writes itself.
    ExtraBodyConflict,
    // Approval (TOOL-1, TOOL-2): a refused answer or resume changes nothing.
    /// `approval_pending`: a turn waits for approval — answer its calls and resume first
    /// (a run or compression refused), or calls still wait (a resume refused).
    ApprovalPending,
    /// `approval_not_pending`: no turn waits for approval (an answer or resume refused).
    ApprovalNotPending,
    /// `approval_unknown_call`: the paused turn has no call with that id.
    ApprovalUnknownCall,
    /// `approval_already_answered`: that call was answered already.
    ApprovalAlreadyAnswered,
    /// `tool_arguments_invalid`: edited arguments are not a JSON object with every
    /// property the tool's schema requires.
    ToolArgumentsInvalid,
    // Chat gestures (CHAT-1, CHAT-2): a refused rewind or fork changes nothing.
    /// `unknown_run`: the session has no run with that id (never run here, or dropped by
    /// an earlier rewind).
    UnknownRun,
    /// `run_compressed`: that point is inside what a compression archived; the session
    /// can be rewound or forked only within its live history.
    RunCompressed,
    /// `session_exists`: a fork's new session id is taken (in the store, or it is this
    /// session's).
    SessionExists,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 47] = [
        Self::InvalidConfig,
        Self::ToolNameInvalid,
        Self::ToolNameDuplicate,
        Self::ToolParametersInvalid,
        Self::SubagentNameEmpty,
        Self::SubagentNameReserved,
        Self::SubagentNameDuplicate,
        Self::DelegationNotConfigured,
        Self::SubagentFactoryFailed,
        Self::InvalidJson,
        Self::InvalidState,
        Self::RunInProgress,
        Self::LlmAuth,
        Self::LlmRateLimited,
        Self::LlmServer,
        Self::LlmTimeout,
        Self::LlmContextOverflow,
        Self::LlmBadRequest,
        Self::LlmMalformedResponse,
        Self::Cancelled,
        Self::LlmTransport,
        Self::SessionLocked,
        Self::StoreCorrupt,
        Self::StoreForeign,
        Self::StoreNewerSchema,
        Self::StoreFull,
        Self::StoreReadOnly,
        Self::StoreIo,
        Self::ImageUnsupportedType,
        Self::ImageInvalid,
        Self::ImageTooLarge,
        Self::TooManyImages,
        Self::ImageNotFound,
        Self::ImageDimensionsUnsupported,
        Self::ImageAnimated,
        Self::ImageCodecFailed,
        Self::ThinkingUnsupported,
        Self::ThinkingConflict,
        Self::ExtraBodyConflict,
        Self::ApprovalPending,
        Self::ApprovalNotPending,
        Self::ApprovalUnknownCall,
        Self::ApprovalAlreadyAnswered,
        Self::ToolArgumentsInvalid,
        Self::UnknownRun,
        Self::RunCompressed,
        Self::SessionExists,
    ];

    /// The stable string, e.g. `"invalid_json"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::InvalidConfig => "invalid_config",
            Self::ToolNameInvalid => "tool_name_invalid",
            Self::ToolNameDuplicate => "tool_name_duplicate",
            Self::ToolParametersInvalid => "tool_parameters_invalid",
            Self::SubagentNameEmpty => "subagent_name_empty",
            Self::SubagentNameReserved => "subagent_name_reserved",
            Self::SubagentNameDuplicate => "subagent_name_duplicate",
            Self::DelegationNotConfigured => "delegation_not_configured",
            Self::SubagentFactoryFailed => "subagent_factory_failed",
            Self::InvalidJson => "invalid_json",
            Self::InvalidState => "invalid_state",
            Self::RunInProgress => "run_in_progress",
            Self::LlmAuth => "llm_auth",
            Self::LlmRateLimited => "llm_rate_limited",
            Self::LlmServer => "llm_server",
            Self::LlmTimeout => "llm_timeout",
            Self::LlmContextOverflow => "llm_context_overflow",
            Self::LlmBadRequest => "llm_bad_request",
            Self::LlmMalformedResponse => "llm_malformed_response",
            Self::Cancelled => "cancelled",
            Self::LlmTransport => "llm_transport",
            Self::SessionLocked => "session_locked",
            Self::StoreCorrupt => "store_corrupt",
            Self::StoreForeign => "store_foreign",
            Self::StoreNewerSchema => "store_newer_schema",
            Self::StoreFull => "store_full",
            Self::StoreReadOnly => "store_read_only",
            Self::StoreIo => "store_io",
            Self::ImageUnsupportedType => "image_unsupported_type",
            Self::ImageInvalid => "image_invalid",
            Self::ImageTooLarge => "image_too_large",
            Self::TooManyImages => "too_many_images",
            Self::ImageNotFound => "image_not_found",
            Self::ImageDimensionsUnsupported => "image_dimensions_unsupported",
            Self::ImageAnimated => "image_animated",
            Self::ImageCodecFailed => "image_codec_failed",
            Self::ThinkingUnsupported => "thinking_unsupported",
            Self::ThinkingConflict => "thinking_conflict",
            Self::ExtraBodyConflict => "extra_body_conflict",
            Self::ApprovalPending => "approval_pending",
            Self::ApprovalNotPending => "approval_not_pending",
            Self::ApprovalUnknownCall => "approval_unknown_call",
            Self::ApprovalAlreadyAnswered => "approval_already_answered",
            Self::ToolArgumentsInvalid => "tool_arguments_invalid",
            Self::UnknownRun => "unknown_run",
            Self::RunCompressed => "run_compressed",
            Self::SessionExists => "session_exists",
        }
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// BND-2: a code is one of [`ErrorCode::ALL`]'s strings.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for ErrorCode {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ErrorCode".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

/// Reads a code back from its string (an event or a record written by this library);
/// any other string is an error.
impl<'de> serde::Deserialize<'de> for ErrorCode {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = std::borrow::Cow::<str>::deserialize(deserializer)?;
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown error code {name:?}")))
    }
}

impl PartialEq<str> for ErrorCode {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    /// `ALL` lists every variant: the match has no wildcard, so a new variant does not
    /// compile until it is handled here (and then the count below catches `ALL`).
    #[test]
    fn all_lists_every_variant_once() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            match code {
                ErrorCode::InvalidConfig
                | ErrorCode::ToolNameInvalid
                | ErrorCode::ToolNameDuplicate
                | ErrorCode::ToolParametersInvalid
                | ErrorCode::SubagentNameEmpty
                | ErrorCode::SubagentNameReserved
                | ErrorCode::SubagentNameDuplicate
                | ErrorCode::DelegationNotConfigured
                | ErrorCode::SubagentFactoryFailed
                | ErrorCode::InvalidJson
                | ErrorCode::InvalidState
                | ErrorCode::RunInProgress
                | ErrorCode::LlmAuth
                | ErrorCode::LlmRateLimited
                | ErrorCode::LlmServer
                | ErrorCode::LlmTimeout
                | ErrorCode::LlmContextOverflow
                | ErrorCode::LlmBadRequest
                | ErrorCode::LlmMalformedResponse
                | ErrorCode::Cancelled
                | ErrorCode::LlmTransport
                | ErrorCode::SessionLocked
                | ErrorCode::StoreCorrupt
                | ErrorCode::StoreForeign
                | ErrorCode::StoreNewerSchema
                | ErrorCode::StoreFull
                | ErrorCode::StoreReadOnly
                | ErrorCode::StoreIo
                | ErrorCode::ImageUnsupportedType
                | ErrorCode::ImageInvalid
                | ErrorCode::ImageTooLarge
                | ErrorCode::TooManyImages
                | ErrorCode::ImageNotFound
                | ErrorCode::ImageDimensionsUnsupported
                | ErrorCode::ImageAnimated
                | ErrorCode::ImageCodecFailed
                | ErrorCode::ThinkingUnsupported
                | ErrorCode::ThinkingConflict
                | ErrorCode::ExtraBodyConflict
                | ErrorCode::ApprovalPending
                | ErrorCode::ApprovalNotPending
                | ErrorCode::ApprovalUnknownCall
                | ErrorCode::ApprovalAlreadyAnswered
                | ErrorCode::ToolArgumentsInvalid
                | ErrorCode::UnknownRun
                | ErrorCode::RunCompressed
                | ErrorCode::SessionExists => assert!(seen.insert(code), "{code:?} listed twice in ALL"),
            }
        }
        assert_eq!(seen.len(), 47);
    }

    #[test]
    fn every_code_round_trips_to_a_distinct_stable_string() {
        let mut strings = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            let s = code.as_str();
            assert!(strings.insert(s), "two codes share {s:?}");
            assert!(!s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{s:?} is not snake_case");
            assert_eq!(code.to_string(), s);
            assert_eq!(format!("{code:?}"), format!("{s:?}"));
            assert_eq!(serde_json::to_value(code).unwrap(), serde_json::Value::String(s.to_owned()));
            assert_eq!(code, s);
            assert_eq!(ErrorCode::ALL.iter().find(|c| c.as_str() == s), Some(&code), "{s:?} does not name {code:?} back");
        }
        // The seeds' spellings, which C and JS tests compare against.
        assert_eq!(ErrorCode::ToolParametersInvalid.as_str(), "tool_parameters_invalid");
        assert_eq!(ErrorCode::Cancelled.as_str(), "cancelled");
        assert_eq!(ErrorCode::StoreNewerSchema.as_str(), "store_newer_schema");
    }
}
