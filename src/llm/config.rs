use serde::Deserialize;

use super::wire_format::WireFormat;
use super::thinking::{Provider, ReasoningReplay, Thinking};
use super::RetryPolicy;
use crate::history::{ImageTokenRule, ModelPrice};

/// Default limit of one attempt until the response arrives (a whole non-streamed answer).
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 60_000;

/// Default longest silence of a streamed body (OHOS-6).
pub const DEFAULT_IDLE_TIMEOUT_MS: u64 = 120_000;

/// Default byte cap of one image (IMG-5): 20 MiB.
pub const DEFAULT_MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Default limit of images in one request (IMG-5): 100, Anthropic's per-request limit
/// (OpenAI allows more).
pub const DEFAULT_MAX_IMAGES_PER_REQUEST: u32 = 100;

fn default_max_image_bytes() -> u64 {
    DEFAULT_MAX_IMAGE_BYTES
}

fn default_max_images_per_request() -> u32 {
    DEFAULT_MAX_IMAGES_PER_REQUEST
}

fn default_request_timeout_ms() -> u64 {
    DEFAULT_REQUEST_TIMEOUT_MS
}

fn default_idle_timeout_ms() -> u64 {
    DEFAULT_IDLE_TIMEOUT_MS
}

/// Where and how to reach a model: an OpenAI-compatible Chat Completions endpoint, or
/// an Anthropic Messages one (`wire_format`, WIRE-1).
///
/// Deserializes from `{"base_url", "api_key", "model", "wire_format"?: "openai" |
/// "anthropic", "temperature"?, "max_tokens"?, "stream"?, "extra_headers"?: [[name,
/// value], …], "retry"?: {…RetryPolicy…}, "request_timeout_ms"?, "idle_timeout_ms"?, "price"?: {…ModelPrice…},
/// "image_tokens"?: "openai_tiles" | "anthropic" | "qwen_vl" | … , "max_image_bytes"?,
/// "max_images_per_request"?, "provider"?: "deepseek" | "kimi" | …, "thinking"?: "off" |
/// "on" | {"effort"} | {"budget_tokens"}, "reasoning_replay"?: "auto" | "tool_calls" | "all" |
/// "none", "extra_body"?: {…}}`;
/// unknown fields are rejected, missing ones take the defaults. An unknown
/// `wire_format` is refused when the config is validated (`invalid_config`, see
/// [`check_wire_format`](crate::llm::check_wire_format)).
///
/// ```
/// let c: arkagent::ModelConfig = serde_json::from_str(
///     r#"{"base_url":"http://127.0.0.1:11434/v1","api_key":"k","model":"m","retry":{"max_attempts":5}}"#,
/// ).unwrap();
/// assert_eq!((c.retry.max_attempts, c.retry.initial_backoff_ms, c.request_timeout_ms, c.idle_timeout_ms), (5, 500, 60_000, 120_000));
/// ```
#[derive(Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// Base URL including the version path, e.g. `https://api.deepseek.com/v1`: requests
    /// go to `{base_url}/chat/completions` (`openai`) or `{base_url}/messages`
    /// (`anthropic`, e.g. `https://api.anthropic.com/v1`).
    pub base_url: String,
    /// API key, sent as `Authorization: Bearer …` (`openai`) or `x-api-key` (`anthropic`).
    /// Never logged, exported or put in errors.
    pub api_key: String,
    /// Model name.
    pub model: String,
    /// The provider protocol (WIRE-1): [`WireFormat::OPENAI`] (default) or
    /// [`WireFormat::ANTHROPIC`].
    #[serde(default)]
    pub wire_format: WireFormat,
    /// Sampling temperature, when set.
    #[serde(default)]
    pub temperature: Option<f32>,
    /// `max_tokens`, when set. Anthropic Messages requires one: when unset, it sends
    /// [`ANTHROPIC_DEFAULT_MAX_TOKENS`](crate::llm::ANTHROPIC_DEFAULT_MAX_TOKENS) (4096).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Ask for an SSE stream.
    #[serde(default)]
    pub stream: bool,
    /// Extra headers sent with every request (e.g. an organisation id).
    #[serde(default)]
    pub extra_headers: Vec<(String, String)>,
    /// How failed calls are retried (LLM-3).
    #[serde(default)]
    pub retry: RetryPolicy,
    /// Time limit of one attempt in milliseconds until the response arrives (the host's
    /// transport resolved: status and headers of a stream), and for a request that does
    /// not stream (`stream` false) until the end of its whole body; `0` means no limit.
    /// A streamed body has no total limit: [`idle_timeout_ms`](Self::idle_timeout_ms)
    /// guards it, so a long reasoning stream that keeps sending is never cut. A
    /// timed-out attempt is retried like any [`LlmError::Timeout`](crate::error::LlmError::Timeout)
    /// unless part of a streamed answer was already delivered.
    #[serde(default = "default_request_timeout_ms")]
    pub request_timeout_ms: u64,
    /// Longest silence of a streamed body in milliseconds (OHOS-6): when a streamed
    /// request's response has arrived and no chunk follows for this long (SSE comments
    /// and keep-alives count as chunks), the attempt fails with
    /// [`LlmError::Timeout`](crate::error::LlmError::Timeout) and the host's request is cancelled;
    /// `0` means no limit. Default 120000.
    #[serde(default = "default_idle_timeout_ms")]
    pub idle_timeout_ms: u64,
    /// What this model costs (COST-2), set by the host; `None` (the default): calls made
    /// with this config carry no cost. Every call is priced once, when its usage arrives,
    /// by the config that made it — a worker or summarizer on another model is priced by
    /// its own config (a worker config cloned from its parent keeps the parent's price:
    /// set the worker's own when its model differs). Checked by
    /// [`AgentRuntimeConfig::validate`](crate::AgentRuntimeConfig::validate)
    /// (`invalid_config`).
    #[serde(default)]
    pub price: Option<ModelPrice>,
    /// IMG-3: the model family's rule for an image's tokens (e.g.
    /// [`ImageTokenRule::QwenVl`] for Qwen-VL on DashScope); `None` (the default): the
    /// wire format's — [`ImageTokenRule::OpenAiTiles`] for `openai`,
    /// [`ImageTokenRule::Anthropic`] for `anthropic`. It also decides whether HEIC/HEIF
    /// photos are accepted ([`ImageTokenRule::accepts`]).
    #[serde(default)]
    pub image_tokens: Option<ImageTokenRule>,
    /// IMG-5: the largest image accepted, in bytes; default
    /// [`DEFAULT_MAX_IMAGE_BYTES`] (20 MiB). A larger one is refused with
    /// `image_too_large` and nothing is written.
    #[serde(default = "default_max_image_bytes")]
    pub max_image_bytes: u64,
    /// IMG-5: the most images one request may carry (the history's and the new input's);
    /// default [`DEFAULT_MAX_IMAGES_PER_REQUEST`] (100). An input that would pass it is
    /// refused with `too_many_images` and nothing is written (compressing the history
    /// moves earlier photos into memory and makes room).
    #[serde(default = "default_max_images_per_request")]
    pub max_images_per_request: u32,
    /// THINK-4: the provider, which decides how [`thinking`](Self::thinking) is sent and
    /// what a thinking model refuses; `None` (the default): recognised from the base URL's
    /// host, else the model name ([`Provider::recognise`]; README, "Thinking models").
    #[serde(default)]
    pub provider: Option<Provider>,
    /// THINK-4: how much the model thinks; `None` (the default) sends nothing, so the
    /// provider's default holds (DeepSeek V4, Kimi, GLM, Qwen3.5 and recent Claude models
    /// think by default). A setting the provider has no switch for is refused when the
    /// config is validated (`thinking_unsupported`).
    #[serde(default)]
    pub thinking: Option<Thinking>,
    /// THINK-2: which earlier reasoning goes back in later requests (default
    /// [`ReasoningReplay::Auto`], the provider's rule).
    #[serde(default)]
    pub reasoning_replay: ReasoningReplay,
    /// THINK-4: fields merged into the top level of every request body of this model
    /// (a provider option the library has no setting for). A field the library writes
    /// itself for this config (`model`, `messages`, `tools`, `stream`, the thinking
    /// fields, …) is refused when the config is validated (`extra_body_conflict`).
    #[serde(default)]
    pub extra_body: serde_json::Map<String, serde_json::Value>,
}

impl ModelConfig {
    /// An OpenAI-compatible config with no sampling overrides, not streaming, default
    /// retries and timeout.
    pub fn new(base_url: impl Into<String>, api_key: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            api_key: api_key.into(),
            model: model.into(),
            wire_format: WireFormat::OPENAI,
            temperature: None,
            max_tokens: None,
            stream: false,
            extra_headers: Vec::new(),
            retry: RetryPolicy::default(),
            request_timeout_ms: DEFAULT_REQUEST_TIMEOUT_MS,
            idle_timeout_ms: DEFAULT_IDLE_TIMEOUT_MS,
            price: None,
            image_tokens: None,
            max_image_bytes: DEFAULT_MAX_IMAGE_BYTES,
            max_images_per_request: DEFAULT_MAX_IMAGES_PER_REQUEST,
            provider: None,
            thinking: None,
            reasoning_replay: ReasoningReplay::Auto,
            extra_body: serde_json::Map::new(),
        }
    }

    /// THINK-4: the provider of this config: its own, else the one its base URL and
    /// model name are recognised as.
    pub fn provider(&self) -> Provider {
        self.provider.unwrap_or_else(|| Provider::recognise(&self.base_url, &self.model))
    }

    /// The chat completions URL (`{base_url}/chat/completions`), whatever the wire format.
    pub fn chat_completions_url(&self) -> String {
        format!("{}/chat/completions", self.base_url.trim_end_matches('/'))
    }
}
