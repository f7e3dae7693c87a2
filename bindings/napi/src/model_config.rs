//! `ModelConfig`: where and how to reach the model, a JS class holding the core config.

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{Either, Object, This};
use napi_ohos::Env;

use crate::args::{constructing, Setting};
use crate::convert::{optional, Optional};
use crate::error::Thrown;
use crate::numbers::{finite_setting_f32, setting};

/// What a model costs, per 1M tokens, in one currency (COST-2). The library has no price of
/// its own: set the provider's published rates. A call is priced once, when its usage
/// arrives: prompt tokens served from the cache (`cachedTokens`) at cachedInputPerMillion,
/// prompt tokens written to the cache (Anthropic's cache creation) at cacheWritePerMillion
/// when set, the rest of the prompt at inputPerMillion, completion tokens (reasoning
/// included) at outputPerMillion; rounded to the nearest billionth of the currency unit.
#[napi(object, js_name = "ModelPrice")]
pub struct JsModelPrice {
    /// Currency code, 1 to 16 bytes without spaces (ISO 4217 such as "USD", "CNY" recommended).
    pub currency: String,
    pub input_per_million: f64,
    pub cached_input_per_million: f64,
    pub output_per_million: f64,
    pub cache_write_per_million: Option<f64>,
}

impl From<&arkagent::ModelPrice> for JsModelPrice {
    fn from(p: &arkagent::ModelPrice) -> Self {
        Self {
            currency: p.currency.clone(),
            input_per_million: p.input_per_million,
            cached_input_per_million: p.cached_input_per_million,
            output_per_million: p.output_per_million,
            cache_write_per_million: p.cache_write_per_million,
        }
    }
}

impl JsModelPrice {
    /// The core price, checked (`invalid_config`).
    fn core(&self) -> Result<arkagent::ModelPrice, Thrown> {
        let price = arkagent::ModelPrice {
            currency: self.currency.clone(),
            input_per_million: self.input_per_million,
            cached_input_per_million: self.cached_input_per_million,
            output_per_million: self.output_per_million,
            cache_write_per_million: self.cache_write_per_million,
        };
        price.validate().map_err(|m| napi_ohos::Error::new("invalid_config".to_owned(), m))?;
        Ok(price)
    }
}

/// THINK-4: the object forms of a thinking setting: exactly one of the two.
#[napi(object, js_name = "ThinkingLevel")]
pub struct JsThinkingLevel {
    #[napi(ts_type = "ThinkingEffort")]
    pub effort: Option<String>,
    pub budget_tokens: Option<f64>,
}

fn invalid(message: String) -> Thrown {
    napi_ohos::Error::new("invalid_config".to_owned(), message)
}

/// The core setting of a JS thinking value (`'off'`, `'on'`, `{ effort }`, `{ budgetTokens }`).
fn core_thinking(value: Either<String, JsThinkingLevel>) -> Result<arkagent::llm::Thinking, Thrown> {
    use arkagent::llm::{Effort, Thinking};
    let what = "thinking must be 'off', 'on', { effort: ThinkingEffort } or { budgetTokens: number }";
    match value {
        Either::A(word) => match word.as_str() {
            "off" => Ok(Thinking::Off),
            "on" => Ok(Thinking::On),
            _ => Err(invalid(format!("{what}, got {word:?}"))),
        },
        Either::B(JsThinkingLevel { effort: Some(name), budget_tokens: None }) => Effort::from_name(&name).map(Thinking::Effort).ok_or_else(|| {
            let known: Vec<&str> = Effort::ALL.iter().map(|e| e.as_str()).collect();
            invalid(format!("thinking effort must be one of {}, got {name:?}", known.join(", ")))
        }),
        Either::B(JsThinkingLevel { effort: None, budget_tokens: Some(n) }) => Ok(Thinking::Budget(setting(n, "thinking.budgetTokens")?)),
        Either::B(_) => Err(invalid(format!("{what}: exactly one of effort and budgetTokens"))),
    }
}

/// A core thinking setting as JS sees it.
fn js_thinking(thinking: arkagent::llm::Thinking) -> Either<String, JsThinkingLevel> {
    use arkagent::llm::Thinking;
    match thinking {
        Thinking::Off => Either::A("off".to_owned()),
        Thinking::On => Either::A("on".to_owned()),
        Thinking::Effort(e) => Either::B(JsThinkingLevel { effort: Some(e.as_str().to_owned()), budget_tokens: None }),
        Thinking::Budget(n) => Either::B(JsThinkingLevel { effort: None, budget_tokens: Some(f64::from(n)) }),
    }
}

/// Where and how to reach the model: an OpenAI-compatible Chat Completions endpoint
/// (wireFormat 'openai', the default) or an Anthropic Messages one ('anthropic').
#[napi]
pub struct ModelConfig {
    inner: arkagent::ModelConfig,
    /// The temperature as JS set it: the core keeps an f32, which reads back as this while
    /// it is the same f32 (0.7, not 0.699999988; no float formatting code: PERF-9).
    temperature_set: Option<f64>,
}

impl From<arkagent::ModelConfig> for ModelConfig {
    fn from(inner: arkagent::ModelConfig) -> Self {
        Self { inner, temperature_set: None }
    }
}

impl ModelConfig {
    /// A copy of the core config.
    pub fn core(&self) -> arkagent::ModelConfig {
        self.inner.clone()
    }
}

#[napi]
impl ModelConfig {
    /// baseUrl including the version path, e.g. "https://api.deepseek.com/v1": the request goes
    /// to `${baseUrl}/chat/completions` ('openai') or `${baseUrl}/messages` ('anthropic', e.g.
    /// "https://api.anthropic.com/v1").
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        this: This<'_>,
        base_url: Setting<String>,
        api_key: Setting<String>,
        model: Setting<String>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "ModelConfig")?;
        Ok(Self { inner: arkagent::ModelConfig::new(base_url.0, api_key.0, model.0), temperature_set: None })
    }

    #[napi(getter)]
    pub fn base_url(&self) -> String {
        self.inner.base_url.clone()
    }

    #[napi(setter)]
    pub fn set_base_url(&mut self, value: Setting<String>) {
        self.inner.base_url = value.0;
    }

    #[napi(getter)]
    pub fn model(&self) -> String {
        self.inner.model.clone()
    }

    #[napi(setter)]
    pub fn set_model(&mut self, value: Setting<String>) {
        self.inner.model = value.0;
    }

    /// The provider protocol (default 'openai'). 'anthropic' speaks Anthropic Messages: the key
    /// goes in `x-api-key`, `max_tokens` is always sent (4096 when maxTokens is unset), and
    /// prompt-cache breakpoints are placed automatically. Any other value throws "invalid_config".
    #[napi(getter, ts_return_type = "WireFormat")]
    pub fn wire_format(&self) -> String {
        self.inner.wire_format.as_str().to_owned()
    }

    /// Sets the provider protocol; a name the core does not know throws `invalid_config`.
    #[napi(setter, ts_args_type = "value: WireFormat")]
    pub fn set_wire_format(&mut self, value: Setting<String>) -> Result<(), Thrown> {
        let Some(format) = arkagent::llm::wire_format(&value.0) else {
            let known: Vec<&str> = arkagent::llm::wire_format_names().collect();
            return Err(napi_ohos::Error::new(
                "invalid_config".to_owned(),
                format!("wireFormat must be one of {}, got {:?}", known.join(", "), value.0),
            ));
        };
        self.inner.wire_format = format;
        Ok(())
    }

    #[napi(getter)]
    pub fn temperature(&self) -> Optional<f64> {
        let set = self.temperature_set.filter(|v| self.inner.temperature == Some(*v as f32));
        optional(set.or(self.inner.temperature.map(f64::from)))
    }

    #[napi(setter)]
    pub fn set_temperature(&mut self, value: Setting<Option<f64>>) -> Result<(), Thrown> {
        // JS numbers are f64; the core keeps the provider's f32.
        self.inner.temperature = value
            .0
            .map(|v| finite_setting_f32(v, "temperature"))
            .transpose()?;
        self.temperature_set = value.0;
        Ok(())
    }

    /// `max_tokens`; unset means none for 'openai' and 4096 for 'anthropic'.
    #[napi(getter)]
    pub fn max_tokens(&self) -> Optional<u32> {
        optional(self.inner.max_tokens)
    }

    #[napi(setter)]
    pub fn set_max_tokens(&mut self, value: Setting<Option<f64>>) -> Result<(), Thrown> {
        self.inner.max_tokens = value.0.map(|v| setting(v, "maxTokens")).transpose()?;
        Ok(())
    }

    /// Ask for an SSE stream.
    #[napi(getter)]
    pub fn stream(&self) -> bool {
        self.inner.stream
    }

    #[napi(setter)]
    pub fn set_stream(&mut self, value: Setting<bool>) {
        self.inner.stream = value.0;
    }

    /// Attempts per model call, the first included (default 3; 0 and 1 mean no retry).
    /// Retried: rate limits, server errors, timeouts, transport failures — never after a
    /// streamed answer started arriving, never past cancel().
    #[napi(getter)]
    pub fn max_attempts(&self) -> u32 {
        self.inner.retry.max_attempts
    }

    #[napi(setter)]
    pub fn set_max_attempts(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.retry.max_attempts = setting(value.0, "maxAttempts")?;
        Ok(())
    }

    /// Backoff ceiling before the first retry in ms (default 500); doubles per retry, with full jitter.
    #[napi(getter)]
    pub fn initial_backoff_ms(&self) -> f64 {
        self.inner.retry.initial_backoff_ms as f64
    }

    #[napi(setter)]
    pub fn set_initial_backoff_ms(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.retry.initial_backoff_ms = setting(value.0, "initialBackoffMs")?;
        Ok(())
    }

    /// Upper bound of one wait in ms, a server's Retry-After included (default 8000).
    #[napi(getter)]
    pub fn max_backoff_ms(&self) -> f64 {
        self.inner.retry.max_backoff_ms as f64
    }

    #[napi(setter)]
    pub fn set_max_backoff_ms(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.retry.max_backoff_ms = setting(value.0, "maxBackoffMs")?;
        Ok(())
    }

    /// Time limit of one attempt in ms until the response arrives — for a streamed request
    /// until the transport resolved, otherwise until the whole body is in (default 60000;
    /// 0: none). A streamed body has no total limit: idleTimeoutMs guards it. The HAR's
    /// NetworkKitTransport cuts a whole request at its readTimeoutMs (65 s): raise both.
    #[napi(getter)]
    pub fn request_timeout_ms(&self) -> f64 {
        self.inner.request_timeout_ms as f64
    }

    #[napi(setter)]
    pub fn set_request_timeout_ms(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.request_timeout_ms = setting(value.0, "requestTimeoutMs")?;
        Ok(())
    }

    /// Longest silence of a streamed body in ms (default 120000; 0: none): when no chunk
    /// arrives for this long the attempt fails with "llm_timeout" (retried like a timeout
    /// unless part of the answer was shown) and the sink's onCancel callbacks run. A stream
    /// that keeps sending is never cut by the library; the HAR's NetworkKitTransport cuts any
    /// stream after its streamReadTimeoutMs (1 hour) and fails silence after its
    /// streamIdleTimeoutMs (5 minutes) too.
    #[napi(getter)]
    pub fn idle_timeout_ms(&self) -> f64 {
        self.inner.idle_timeout_ms as f64
    }

    #[napi(setter)]
    pub fn set_idle_timeout_ms(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.idle_timeout_ms = setting(value.0, "idleTimeoutMs")?;
        Ok(())
    }

    /// How an image's tokens are estimated (IMG-3): the model family's published rule, read
    /// from the image's pixel size. Unset: 'openai_tiles' for wireFormat 'openai', 'anthropic'
    /// for 'anthropic'. Set 'qwen_vl' for Qwen-VL on DashScope, 'gemini' for Gemini, the
    /// '…_patches' ones for OpenAI's mini and nano models. It also decides whether HEIC/HEIF
    /// photos are taken ('gemini' and the Qwen-VL ones). Another name throws "invalid_config".
    #[napi(getter, ts_return_type = "ImageTokenRule | undefined")]
    pub fn image_tokens(&self) -> Optional<String> {
        optional(self.inner.image_tokens.map(|r| r.as_str().to_owned()))
    }

    /// A name the core does not know throws `invalid_config`.
    #[napi(setter, ts_args_type = "value?: ImageTokenRule")]
    pub fn set_image_tokens(&mut self, value: Setting<Option<String>>) -> Result<(), Thrown> {
        self.inner.image_tokens = value
            .0
            .map(|name| {
                arkagent::history::ImageTokenRule::from_name(&name).ok_or_else(|| {
                    let known: Vec<&str> = arkagent::history::ImageTokenRule::ALL.iter().map(|r| r.as_str()).collect();
                    napi_ohos::Error::new("invalid_config".to_owned(), format!("imageTokens must be one of {}, got {name:?}", known.join(", ")))
                })
            })
            .transpose()?;
        Ok(())
    }

    /// The largest image accepted, in bytes (default 20971520, 20 MiB): a larger one is refused with "image_too_large".
    #[napi(getter)]
    pub fn max_image_bytes(&self) -> f64 {
        self.inner.max_image_bytes as f64
    }

    #[napi(setter)]
    pub fn set_max_image_bytes(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.max_image_bytes = setting(value.0, "maxImageBytes")?;
        Ok(())
    }

    /// The most images one request may carry (default 100): an input past it is refused with "too_many_images".
    #[napi(getter)]
    pub fn max_images_per_request(&self) -> u32 {
        self.inner.max_images_per_request
    }

    #[napi(setter)]
    pub fn set_max_images_per_request(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.max_images_per_request = setting(value.0, "maxImagesPerRequest")?;
        Ok(())
    }

    /// What this model costs (COST-2); absent (the default): calls carry no cost. Setting a
    /// price with an empty or spaced currency, or a rate that is negative, not finite or
    /// above 1e9, throws "invalid_config". A worker or summarizer on another model is
    /// priced by its own ModelConfig's price.
    #[napi(getter)]
    pub fn price(&self) -> Optional<JsModelPrice> {
        optional(self.inner.price.as_ref().map(JsModelPrice::from))
    }

    #[napi(setter)]
    pub fn set_price(&mut self, value: Setting<Option<JsModelPrice>>) -> Result<(), Thrown> {
        self.inner.price = value.0.as_ref().map(JsModelPrice::core).transpose()?;
        Ok(())
    }

    /// THINK-4: the provider, which decides how `thinking` is sent and what a thinking model
    /// refuses. Unset: recognised from baseUrl's host, else from the model name (README,
    /// "Thinking models"). Another name throws "invalid_config".
    #[napi(getter, ts_return_type = "Provider | undefined")]
    pub fn provider(&self) -> Optional<String> {
        optional(self.inner.provider.map(|p| p.as_str().to_owned()))
    }

    /// A name the core does not know throws `invalid_config`.
    #[napi(setter, ts_args_type = "value?: Provider")]
    pub fn set_provider(&mut self, value: Setting<Option<String>>) -> Result<(), Thrown> {
        use arkagent::llm::Provider;
        self.inner.provider = value
            .0
            .map(|name| {
                Provider::from_name(&name).ok_or_else(|| {
                    let known: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
                    invalid(format!("provider must be one of {}, got {name:?}", known.join(", ")))
                })
            })
            .transpose()?;
        Ok(())
    }

    /// THINK-4: how much the model thinks — 'off', 'on', { effort } or { budgetTokens }.
    /// Unset (the default) sends nothing: the provider's default holds (DeepSeek V4, Kimi,
    /// GLM, Qwen3.5 and recent Claude models think by default). A malformed value throws
    /// "invalid_config"; a setting the provider has no switch for is refused when the runtime
    /// is created ("thinking_unsupported"), and so is an option the thinking model refuses
    /// ("thinking_conflict": a forced toolChoice or a temperature with Anthropic thinking or
    /// an OpenAI reasoning model, Qwen thinking without stream).
    #[napi(getter, ts_return_type = "Thinking | undefined")]
    pub fn thinking(&self) -> Optional<Either<String, JsThinkingLevel>> {
        optional(self.inner.thinking.map(js_thinking))
    }

    #[napi(setter, ts_args_type = "value?: Thinking")]
    pub fn set_thinking(&mut self, value: Setting<Option<Either<String, JsThinkingLevel>>>) -> Result<(), Thrown> {
        self.inner.thinking = value.0.map(core_thinking).transpose()?;
        Ok(())
    }

    /// THINK-2: which earlier reasoning goes back in later requests (default 'auto', the
    /// provider's rule: on 'openai', `reasoning_content` of every answer that called a tool,
    /// exactly as received — "" included, never where the provider sent none (but "" to
    /// DeepSeek and Kimi while they think: they refuse a tool-call message without it); none
    /// for Qwen and OpenAI; every answer's for GLM with `clear_thinking: false` in extraBody;
    /// on 'anthropic', every answer's thinking blocks, byte-exact, before its tool_use, or
    /// in their places among its text and tool calls as the message's `block_order` says).
    #[napi(getter, ts_return_type = "ReasoningReplay")]
    pub fn reasoning_replay(&self) -> String {
        self.inner.reasoning_replay.as_str().to_owned()
    }

    #[napi(setter, ts_args_type = "value: ReasoningReplay")]
    pub fn set_reasoning_replay(&mut self, value: Setting<String>) -> Result<(), Thrown> {
        use arkagent::llm::ReasoningReplay;
        self.inner.reasoning_replay = ReasoningReplay::ALL.into_iter().find(|r| r.as_str() == value.0).ok_or_else(|| {
            let known: Vec<&str> = ReasoningReplay::ALL.iter().map(|r| r.as_str()).collect();
            invalid(format!("reasoningReplay must be one of {}, got {:?}", known.join(", "), value.0))
        })?;
        Ok(())
    }

    /// THINK-4: fields merged into the top level of every request body (a provider option the
    /// library has no setting for), e.g. { enable_search: true }. A field the library writes
    /// itself (model, messages, tools, stream, temperature, max_tokens, the thinking fields…)
    /// is refused when the runtime is created ("extra_body_conflict"). Default {}; setting a
    /// value that is not a plain JSON object throws "invalid_config".
    #[napi(getter, ts_return_type = "Record<string, Object>")]
    pub fn extra_body(&self) -> serde_json::Map<String, serde_json::Value> {
        self.inner.extra_body.clone()
    }

    #[napi(setter, ts_args_type = "value: Record<string, Object>")]
    pub fn set_extra_body(&mut self, env: &Env, value: Setting<Object<'_>>) -> Result<(), Thrown> {
        let body = crate::convert::json_object(env, &value.0)
            .map_err(|e| invalid(format!("extraBody must be a plain JSON object: {}", e.reason)))?;
        self.inner.extra_body = body;
        Ok(())
    }

    /// Headers sent with every request besides the library's own, as { name: value } (C/Rust
    /// `extra_headers`): e.g. Anthropic's "anthropic-beta", a gateway's organisation id or
    /// its "api-key" (a credential header's value is kept out of histories, events and
    /// exports like the API key). Default {}; a value that is not a string throws
    /// "invalid_config".
    #[napi(getter, ts_return_type = "Record<string, string>")]
    pub fn extra_headers(&self) -> serde_json::Map<String, serde_json::Value> {
        self.inner.extra_headers.iter().map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone()))).collect()
    }

    #[napi(setter, ts_args_type = "value: Record<string, string>")]
    pub fn set_extra_headers(&mut self, env: &Env, value: Setting<Object<'_>>) -> Result<(), Thrown> {
        let map = crate::convert::json_object(env, &value.0)
            .map_err(|e| invalid(format!("extraHeaders must be a plain object of strings: {}", e.reason)))?;
        let mut headers = Vec::with_capacity(map.len());
        for (name, value) in map {
            let serde_json::Value::String(value) = value else {
                return Err(invalid(format!("extraHeaders[{name:?}] must be a string")));
            };
            headers.push((name, value));
        }
        self.inner.extra_headers = headers;
        Ok(())
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: ModelPrice

// declare: ModelConfig

// declare: ThinkingLevel

/** THINK-4: how much a model thinks (ModelConfig.thinking). */
export type Thinking = 'off' | 'on' | ThinkingLevel;
*/
