//! LLM-4: what a config must keep out of every text, log and event. Which headers carry
//! credentials is each protocol's own declaration ([`WireProtocol::secret_headers`]: a
//! header secret to any registered protocol is a secret in every config, so an
//! `extra_headers` credential for a gateway is caught whatever the config speaks), beside
//! the HTTP's own (`Proxy-Authorization`). The redaction of a config's secrets — its API
//! key and those headers' values — and its redacted `Debug` are here, above the
//! protocols, so the config itself never names one.

use std::fmt;

use super::{WireProtocol, REGISTRY};
use crate::llm::config::ModelConfig;

/// Credential headers of HTTP itself, whatever the protocol.
const HTTP_SECRET_HEADERS: &[&str] = &["proxy-authorization"];

/// True for a header that carries credentials (case-insensitive): one of HTTP's or one a
/// registered protocol declares.
pub fn is_secret_header(name: &str) -> bool {
    let declared = REGISTRY.iter().flat_map(|p: &&dyn WireProtocol| p.secret_headers().iter());
    HTTP_SECRET_HEADERS.iter().chain(declared).any(|h| name.eq_ignore_ascii_case(h))
}

impl ModelConfig {
    /// Replaces every occurrence of the API key (and of credential values in
    /// `extra_headers`, e.g. an `api-key` header) in `text` (LLM-4). Secrets shorter than
    /// 4 characters are left alone: replacing them would mangle ordinary text.
    pub fn redact(&self, text: &str) -> String {
        self.redact_cow(text).into_owned()
    }

    /// [`redact`](Self::redact) without a copy when no secret is present.
    pub fn redact_cow<'a>(&self, text: &'a str) -> std::borrow::Cow<'a, str> {
        let mut out = std::borrow::Cow::Borrowed(text);
        for secret in self.secrets().filter(|s| s.len() >= 4) {
            if out.contains(secret) {
                out = std::borrow::Cow::Owned(out.replace(secret, "<redacted>"));
            }
        }
        out
    }

    /// [`redact`](Self::redact) in place; allocates only when a secret is present (the
    /// runtime runs this on every text that enters the state or an event).
    pub fn redact_in_place(&self, text: &mut String) {
        if let std::borrow::Cow::Owned(redacted) = self.redact_cow(text) {
            *text = redacted;
        }
    }

    /// LLM-4: how long the longest end of `text` is that begins a secret (0: none), so a
    /// stream holds it back until the next piece tells whether the secret follows.
    pub(crate) fn secret_start_len(&self, text: &str) -> usize {
        let start = |s: &str| (1..s.len()).rev().find(|&k| s.is_char_boundary(k) && text.ends_with(&s[..k])).unwrap_or(0);
        self.secrets().filter(|s| s.len() >= 4).map(start).max().unwrap_or(0)
    }

    /// The API key and the values of credential headers among `extra_headers`.
    fn secrets(&self) -> impl Iterator<Item = &str> {
        let extra = self.extra_headers.iter().filter(|(k, _)| is_secret_header(k)).map(|(_, v)| {
            let v = v.trim();
            v.strip_prefix("Bearer ").unwrap_or(v)
        });
        std::iter::once(self.api_key.as_str()).chain(extra)
    }
}

impl fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("wire_format", &self.wire_format)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("stream", &self.stream)
            .field("extra_headers", &ExtraHeaders(&self.extra_headers))
            .field("retry", &self.retry)
            .field("request_timeout_ms", &self.request_timeout_ms)
            .field("idle_timeout_ms", &self.idle_timeout_ms)
            .field("price", &self.price)
            .field("image_tokens", &self.image_tokens)
            .field("max_image_bytes", &self.max_image_bytes)
            .field("max_images_per_request", &self.max_images_per_request)
            .field("provider", &self.provider)
            .field("thinking", &self.thinking)
            .field("reasoning_replay", &self.reasoning_replay)
            .field("extra_body", &self.extra_body.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Extra headers with credential values hidden (an `api-key` header is a secret too).
struct ExtraHeaders<'a>(&'a [(String, String)]);

impl fmt::Debug for ExtraHeaders<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(k, v)| {
                (k.as_str(), if is_secret_header(k) { "<redacted>" } else { v.as_str() })
            }))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BND-3: the credential headers are each registered protocol's own declaration (a
    /// header secret to one protocol is secret in every config) and HTTP's; nothing else.
    #[test]
    fn bnd_3_llm_4_every_protocol_declares_its_secret_headers_and_all_of_them_are_redacted() {
        for protocol in REGISTRY {
            assert!(!protocol.secret_headers().is_empty(), "{} declares no credential header", protocol.name());
            for h in protocol.secret_headers() {
                assert_eq!(*h, h.to_ascii_lowercase(), "declared lowercase");
                assert!(is_secret_header(h) && is_secret_header(&h.to_ascii_uppercase()));
            }
        }
        assert!(is_secret_header("Proxy-Authorization"));
        assert!(!is_secret_header("OpenAI-Organization") && !is_secret_header("anthropic-version"));
        // An Anthropic credential header in an OpenAI config's extra headers is a secret too.
        let mut c = ModelConfig::new("http://h/v1", "sk-key-1234", "m");
        c.extra_headers = vec![("x-api-key".into(), "gateway-SECRET-5678".into()), ("OpenAI-Organization".into(), "org-1".into())];
        assert_eq!(c.redact("a gateway-SECRET-5678 b org-1 sk-key-1234"), "a <redacted> b org-1 <redacted>");
        let debug = format!("{c:?}");
        assert!(!debug.contains("gateway-SECRET-5678") && debug.contains("org-1"), "{debug}");
    }
}
