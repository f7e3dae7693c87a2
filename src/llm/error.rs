use crate::error::ErrorCode;

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
    /// 5xx.
    #[error("provider server error (HTTP {status})")]
    Server {
        /// HTTP status.
        status: u16,
    },
    /// The request timed out.
    #[error("request timed out")]
    Timeout,
    /// The prompt exceeds the model's context window.
    #[error("context window exceeded")]
    ContextOverflow,
    /// Another 4xx status.
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
            Self::Auth { .. } => "llm_auth",
            Self::RateLimited { .. } => "llm_rate_limited",
            Self::Server { .. } => "llm_server",
            Self::Timeout => "llm_timeout",
            Self::ContextOverflow => "llm_context_overflow",
            Self::BadRequest { .. } => "llm_bad_request",
            Self::MalformedResponse(_) => "llm_malformed_response",
            Self::Cancelled => "cancelled",
            Self::Transport(_) => "llm_transport",
        }
    }

    /// True for classes worth retrying (rate limit, server, timeout, transport).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Self::RateLimited { .. } | Self::Server { .. } | Self::Timeout | Self::Transport(_))
    }
}
