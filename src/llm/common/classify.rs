//! Error classification (LLM-3): HTTP status, `Retry-After` and the providers' error
//! bodies mapped to [`LlmError`]. Only the status and the provider's short error code
//! survive; provider message text may echo the request or the key and is dropped.
//!
//! Provider shapes handled: `{"error": {"message", "type", "code"}}` (OpenAI, DeepSeek,
//! Moonshot, DashScope compatible mode, Ollama `/v1`, vLLM), `{"error": "text"}` (Ollama
//! native), `{"code", "message"}` at the top level (DashScope native) and Zhipu's numeric
//! business codes (`{"error": {"code": "1261", "message": …}}`).

use serde_json::{json, Value};

use crate::llm::transport::HttpResponse;
use crate::error::LlmError;

/// The largest error body inspected; the rest is not read.
pub(crate) const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Classifies an error status and body; `retry_after` is the raw `Retry-After` value.
pub fn classify_http_error(status: u16, body: &[u8], retry_after: Option<&str>) -> LlmError {
    classify_status(status, body, retry_after.and_then(parse_retry_after))
}

/// Classifies an error status and body with the server's requested wait already parsed.
pub fn classify_status(status: u16, body: &[u8], retry_after_ms: Option<u64>) -> LlmError {
    let body = &body[..body.len().min(MAX_ERROR_BODY_BYTES)];
    let value: Option<Value> = serde_json::from_slice(body).ok();
    let err = value.as_ref().and_then(error_object);
    let overflow = match &err {
        Some(err) => is_context_overflow(err),
        // Plain-text bodies (proxies, gateways) still name the cause.
        None => is_overflow_message(&String::from_utf8_lossy(body).to_lowercase()),
    };
    if overflow {
        return LlmError::ContextOverflow;
    }
    let class = err.as_ref().and_then(code_class);
    match status {
        401 | 403 => LlmError::Auth { status },
        429 if class == Some(CodeClass::Quota) => LlmError::BadRequest { status, provider_code: err.as_ref().and_then(provider_code) },
        429 => LlmError::RateLimited { retry_after_ms },
        408 => LlmError::Timeout,
        413 => LlmError::ContextOverflow,
        500..=599 => LlmError::Server { status, retry_after_ms },
        _ => LlmError::BadRequest { status, provider_code: err.as_ref().and_then(provider_code) },
    }
}

/// Classifies an error object found in a successful (HTTP 200) body or in a stream.
pub fn classify_error_object(status: u16, err: &Value) -> LlmError {
    let owned;
    let err = match err {
        Value::String(message) => {
            owned = json!({ "message": message });
            &owned
        }
        other => other,
    };
    if is_context_overflow(err) {
        return LlmError::ContextOverflow;
    }
    // An embedded HTTP-like code (e.g. "500", 429) decides the class when present.
    let embedded = err.get("code").and_then(|c| c.as_u64().or_else(|| c.as_str().and_then(|s| s.parse().ok())));
    if let Some(code @ 400..=599) = embedded.and_then(|c| u16::try_from(c).ok()) {
        return classify_status(code, &[], None);
    }
    match code_class(err) {
        Some(CodeClass::Auth) => LlmError::Auth { status },
        Some(CodeClass::RateLimit) => LlmError::RateLimited { retry_after_ms: None },
        Some(CodeClass::Server) => LlmError::Server { status, retry_after_ms: None },
        Some(CodeClass::Quota) | None => LlmError::BadRequest { status, provider_code: provider_code(err) },
    }
}

/// The server's requested wait from a response's headers: `retry-after-ms` (OpenAI)
/// or `Retry-After` in seconds.
pub fn retry_after_ms(response: &HttpResponse) -> Option<u64> {
    if let Some(ms) = response.header("retry-after-ms").and_then(|v| scaled_decimal(v.trim(), 1)) {
        return Some(ms);
    }
    response.header("retry-after").and_then(parse_retry_after)
}

/// Parses `Retry-After` in seconds, whole or decimal (HTTP-dates are not used by the
/// providers we target).
pub fn parse_retry_after(value: &str) -> Option<u64> {
    scaled_decimal(value.trim(), 1000)
}

/// `text`, a non-negative decimal number (`12`, `1.5`, `.5`, `3.`; no sign, no exponent),
/// times `scale`, rounded down and saturating. By hand, not `f64::from_str`: the float
/// parser's tables cost the arm64 library 13 KB (PERF-9) for two headers.
fn scaled_decimal(text: &str, scale: u64) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !digits(whole) || !digits(fraction) {
        return None;
    }
    let whole = whole.bytes().fold(0u64, |n, b| n.saturating_mul(10).saturating_add(u64::from(b - b'0')));
    let (mut part, mut denominator) = (0u128, 1u128);
    for b in fraction.bytes().take(18) {
        part = part * 10 + u128::from(b - b'0');
        denominator *= 10;
    }
    let fraction = u64::try_from(part * u128::from(scale) / denominator).unwrap_or(u64::MAX);
    Some(whole.saturating_mul(scale).saturating_add(fraction))
}

/// The error object of a body: `{"error": {…}}`, `{"error": "text"}`, or a top-level
/// `{"code", "message"}` without `choices`.
fn error_object(value: &Value) -> Option<Value> {
    match value.get("error") {
        Some(err @ Value::Object(_)) => Some(err.clone()),
        Some(Value::String(message)) => Some(json!({ "message": message })),
        _ if value.get("choices").is_none() && (value.get("code").is_some() || value.get("message").is_some()) => {
            Some(value.clone())
        }
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CodeClass {
    Auth,
    RateLimit,
    /// Quota or balance exhausted: retrying does not help.
    Quota,
    Server,
}

fn code_class(err: &Value) -> Option<CodeClass> {
    let code = code_text(err);
    let kind = err.get("type").and_then(Value::as_str).unwrap_or_default();
    let class = |s: &str| -> Option<CodeClass> {
        Some(match s {
            "invalid_api_key" | "invalid_authentication" | "authentication_error" | "InvalidApiKey"
            | "unauthorized" | "1000" | "1001" | "1002" | "1003" | "1004" => CodeClass::Auth,
            "rate_limit_exceeded" | "rate_limit_error" | "rate_limit_reached_error" | "limit_requests"
            | "engine_overloaded_error" | "1302" | "1303" | "1305" => CodeClass::RateLimit,
            s if s.starts_with("Throttling") => CodeClass::RateLimit,
            "insufficient_quota" | "exceeded_current_quota_error" | "Arrearage" | "insufficient_balance"
            | "insufficient_user_quota" | "1113" | "1304" => CodeClass::Quota,
            "server_error" | "internal_error" | "InternalError" | "api_error" | "service_unavailable"
            | "overloaded_error" => CodeClass::Server,
            _ => return None,
        })
    };
    code.as_deref().and_then(class).or_else(|| class(kind))
}

/// `code` as text, whether the provider sent a string or a number.
fn code_text(err: &Value) -> Option<String> {
    match err.get("code") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    }
}

/// The provider's short error code (or type), when it is a plain identifier.
fn provider_code(err: &Value) -> Option<String> {
    let code = code_text(err).or_else(|| err.get("type").and_then(Value::as_str).map(str::to_owned))?;
    let plain = !code.is_empty()
        && code.len() <= 64
        && code.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    plain.then_some(code)
}

fn is_context_overflow(err: &Value) -> bool {
    let code = code_text(err).unwrap_or_default();
    let kind = err.get("type").and_then(Value::as_str).unwrap_or_default();
    if matches!(code.as_str(), "context_length_exceeded" | "string_above_max_length" | "1261")
        || matches!(kind, "context_length_exceeded" | "exceed_context_size_error")
    {
        return true;
    }
    let message = err.get("message").or_else(|| err.get("msg")).and_then(Value::as_str).unwrap_or_default();
    is_overflow_message(&message.to_lowercase())
}

/// Known context-overflow messages (lowercase input).
fn is_overflow_message(message: &str) -> bool {
    const PATTERNS: &[&str] = &[
        "maximum context length",       // OpenAI, DeepSeek, vLLM
        "context length",               // "exceeds the context length" (Ollama), generic
        "context window",
        "context size",                 // llama.cpp: "exceeds the available context size"
        "too many tokens",
        "range of input length",        // DashScope: "Range of input length should be [1, N]"
        "exceeded model token limit",   // Moonshot
        "prompt is too long",
        "prompt exceeds max length",    // Zhipu 1261
        "prompt 超长",                  // Zhipu 1261 (Chinese message)
        "上下文长度",
    ];
    PATTERNS.iter().any(|p| message.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Vec<u8> {
        v.to_string().into_bytes()
    }

    #[test]
    fn llm_3_context_overflow_in_each_providers_documented_shape() {
        let cases = [
            // OpenAI
            (400, json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})),
            // DeepSeek
            (400, json!({"error": {"message": "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (69000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.", "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}})),
            // Qwen / DashScope compatible mode
            (400, json!({"error": {"code": "invalid_parameter_error", "param": null, "message": "<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, 129024]", "type": "invalid_request_error"}})),
            // Moonshot
            (400, json!({"error": {"message": "Invalid request: Your request exceeded model token limit: 8192", "type": "invalid_request_error"}})),
            // Zhipu GLM
            (400, json!({"error": {"code": "1261", "message": "Prompt 超长"}})),
            // Ollama /v1
            (400, json!({"error": {"message": "the input length exceeds the context length", "type": "invalid_request_error", "param": null, "code": null}})),
            // llama.cpp server
            (400, json!({"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error"}})),
        ];
        for (status, b) in cases {
            assert_eq!(classify_status(status, &body(b.clone()), None), LlmError::ContextOverflow, "{b}");
        }
        assert_eq!(classify_status(400, b"This model's maximum context length is 4096 tokens", None), LlmError::ContextOverflow);
        assert_eq!(classify_status(413, b"", None), LlmError::ContextOverflow);
    }

    #[test]
    fn llm_3_status_classes_and_retry_after() {
        assert_eq!(classify_status(401, b"", None), LlmError::Auth { status: 401 });
        assert_eq!(classify_status(403, b"", None), LlmError::Auth { status: 403 });
        assert_eq!(classify_status(429, b"", Some(1500)), LlmError::RateLimited { retry_after_ms: Some(1500) });
        assert_eq!(classify_status(503, b"", Some(2000)), LlmError::Server { status: 503, retry_after_ms: Some(2000) });
        assert_eq!(classify_status(408, b"", None), LlmError::Timeout);
        assert_eq!(classify_http_error(429, b"", Some("2")), LlmError::RateLimited { retry_after_ms: Some(2000) });
        assert_eq!(parse_retry_after(" 0.5 "), Some(500));
        assert_eq!(parse_retry_after("2"), Some(2000));
        assert_eq!(parse_retry_after(".25"), Some(250));
        assert_eq!(parse_retry_after("1.0005"), Some(1000));
        assert_eq!(parse_retry_after("99999999999999999999"), Some(u64::MAX));
        for bad in ["", ".", "-1", "1e3", "inf", "NaN", "1.2.3", "+1"] {
            assert_eq!(parse_retry_after(bad), None, "{bad}");
        }
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        let mut r = HttpResponse::full(429, "");
        r.headers = vec![("Retry-After".into(), "3".into())];
        assert_eq!(retry_after_ms(&r), Some(3000));
        r.headers.push(("retry-after-ms".into(), "250".into()));
        assert_eq!(retry_after_ms(&r), Some(250));
    }

    #[test]
    fn llm_3_exhausted_quota_is_not_a_retryable_rate_limit() {
        let openai = json!({"error": {"message": "You exceeded your current quota", "type": "insufficient_quota", "code": "insufficient_quota"}});
        let e = classify_status(429, &body(openai), None);
        assert_eq!(e, LlmError::BadRequest { status: 429, provider_code: Some("insufficient_quota".into()) });
        assert!(!e.is_retryable());
        let zhipu = json!({"error": {"code": "1113", "message": "您的账户已欠费"}});
        assert!(!classify_status(429, &body(zhipu), None).is_retryable());
        let zhipu_busy = json!({"error": {"code": "1302", "message": "并发数过高"}});
        assert!(classify_status(429, &body(zhipu_busy), None).is_retryable());
        assert_eq!(classify_status(402, &body(json!({"error": {"message": "Insufficient Balance", "type": "unknown_error"}})), None).code(), "llm_bad_request");
    }

    #[test]
    fn llm_3_error_objects_in_successful_bodies() {
        assert_eq!(classify_error_object(200, &json!({"code": "invalid_api_key", "message": "x"})), LlmError::Auth { status: 200 });
        assert_eq!(classify_error_object(200, &json!({"code": "1302"})).code(), "llm_rate_limited");
        assert_eq!(classify_error_object(200, &json!({"code": 500, "message": "boom"})).code(), "llm_server");
        assert_eq!(classify_error_object(200, &json!({"type": "server_error"})).code(), "llm_server");
        assert_eq!(classify_error_object(200, &json!("model 'x' not found")), LlmError::BadRequest { status: 200, provider_code: None });
        // A code that is not a plain identifier is dropped, never echoed.
        let e = classify_error_object(200, &json!({"code": "bad key sk-abc: see https://x", "message": "sk-abc"}));
        assert_eq!(e, LlmError::BadRequest { status: 200, provider_code: None });
    }
}
