//! The model call's errors (LLM-3), on the ground so that [`super::ArkAgentError`] wraps
//! them without importing `llm/`; `llm/` re-exports [`LlmError`].

use super::ErrorCode;

/// A classified model-call failure (LLM-3). Messages never contain the API key, the
/// Authorization value or a provider's raw error body (LLM-4): only status codes and the
/// provider's short error code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// 401/403: the key is missing, wrong or not allowed.
    #[error("authentication failed (HTTP {status})")]
    Auth {
        /// HTTP status.
        status: u16,
    },
    /// 429: rate limited.
    #[error("rate limited (HTTP 429)")]
    RateLimited {
        /// Server-requested wait from `Retry-After`, in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// 5xx (or a provider's server-side error code).
    #[error("provider server error (HTTP {status})")]
    Server {
        /// HTTP status.
        status: u16,
        /// Server-requested wait from `Retry-After` (sent with 503), in milliseconds.
        retry_after_ms: Option<u64>,
    },
    /// The request timed out.
    #[error("request timed out")]
    Timeout,
    /// The prompt exceeds the model's context window (OpenAI `context_length_exceeded`,
    /// DeepSeek/vLLM "maximum context length", DashScope "Range of input length", Moonshot
    /// "exceeded model token limit", Zhipu code 1261, llama.cpp `exceed_context_size_error`).
    #[error("context window exceeded")]
    ContextOverflow,
    /// Another 4xx status, or a non-retryable provider error such as an exhausted quota or
    /// balance (`insufficient_quota`, DeepSeek 402, DashScope `Arrearage`, Zhipu 1113).
    #[error("request rejected (HTTP {status}{})", provider_code.as_deref().map(|c| format!(", {c}")).unwrap_or_default())]
    BadRequest {
        /// HTTP status.
        status: u16,
        /// The provider's short error code, when it is a plain identifier.
        provider_code: Option<String>,
    },
    /// The response did not have the documented shape.
    #[error("malformed response: {0}")]
    MalformedResponse(String),
    /// The run was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The host transport failed (network, TLS, DNS…).
    #[error("transport error: {0}")]
    Transport(String),
}

impl LlmError {
    /// The stable code.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Auth { .. } => ErrorCode::LlmAuth,
            Self::RateLimited { .. } => ErrorCode::LlmRateLimited,
            Self::Server { .. } => ErrorCode::LlmServer,
            Self::Timeout => ErrorCode::LlmTimeout,
            Self::ContextOverflow => ErrorCode::LlmContextOverflow,
            Self::BadRequest { .. } => ErrorCode::LlmBadRequest,
            Self::MalformedResponse(_) => ErrorCode::LlmMalformedResponse,
            Self::Cancelled => ErrorCode::Cancelled,
            Self::Transport(_) => ErrorCode::LlmTransport,
        }
    }

    /// True for classes worth retrying (rate limit, server, timeout, transport).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::RateLimited { .. } | Self::Server { .. } | Self::Timeout | Self::Transport(_))
    }

    /// The server's requested wait (`Retry-After`), when it sent one.
    pub fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after_ms } | Self::Server { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }

    /// The same error with every occurrence of `secret` in its text replaced (LLM-4). Texts
    /// are already built without provider messages; this also covers a provider code or
    /// a host transport message that echoes the key.
    pub(crate) fn redacted(self, redact: impl Fn(&str) -> String) -> Self {
        match self {
            Self::BadRequest { status, provider_code } => {
                // A "code" that carries the key is no code: drop it.
                Self::BadRequest { status, provider_code: provider_code.filter(|c| redact(c) == *c) }
            }
            Self::MalformedResponse(m) => Self::MalformedResponse(redact(&m)),
            Self::Transport(m) => Self::Transport(redact(&m)),
            other => other,
        }
    }
}
