use std::fmt;

use serde::Deserialize;

/// Where and how to reach an OpenAI-compatible Chat Completions endpoint.
///
/// Deserializes from `{"base_url", "api_key", "model", "temperature"?, "max_tokens"?,
/// "stream"?, "extra_headers"?: [[name, value], …]}`; unknown fields are rejected.
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Base URL, e.g. `https://api.deepseek.com/v1`; requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// API key, sent as `Authorization: Bearer …`. Never logged, exported or put in errors.
    pub api_key: String,
    /// Model name.
    pub model: String,
    /// Sampling temperature, when set.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// `max_tokens`, when set.
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Ask for an SSE stream.
    #[serde(default)]
    pub stream: bool,
    /// Extra headers sent with every request (e.g. an organisation id).
    #[serde(default)]
    pub extra_headers: Vec<(String, String)>,
}

impl ModelConfig {
    /// A config with no sampling overrides, not streaming.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: api_key.into(),
            model: model.into(),
            temperature: None,
            max_tokens: None,
            stream: false,
            extra_headers: Vec::new(),
        }
    }

    /// The chat completions URL.
    pub fn chat_completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }

    /// Replaces every occurrence of the API key in `text` (LLM-4).
    pub fn redact(&self, text: &str) -> String {
        if self.api_key.len() < 4 {
            return text.to_owned();
        }
        text.replace(&self.api_key, "<redacted>")
    }
}

impl fmt::Debug for ModelConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelConfig")
            .field("base_url", &self.base_url)
            .field("api_key", &"<redacted>")
            .field("model", &self.model)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("stream", &self.stream)
            .finish_non_exhaustive()
    }
}
