//! `ModelConfig` and `AgentRuntimeConfig`: JS classes holding the core configs.

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{Either, Undefined};

/// An optional property reads as `undefined` when unset (napi-ohos would give `null`,
/// which the `?: number` declaration does not allow).
type Optional<T> = Either<T, Undefined>;

fn optional<T>(value: Option<T>) -> Optional<T> {
    value.map_or(Either::B(()), Either::A)
}

/// Where and how to reach an OpenAI-compatible endpoint. The API key is write-only: no
/// getter exposes it (LLM-4).
#[napi]
pub struct ModelConfig {
    inner: arkagent::ModelConfig,
}

#[napi]
impl ModelConfig {
    #[napi(constructor)]
    pub fn new(base_url: String, api_key: String, model: String) -> Self {
        Self {
            inner: arkagent::ModelConfig::new(base_url, api_key, model),
        }
    }

    #[napi(getter)]
    pub fn base_url(&self) -> String {
        self.inner.base_url.clone()
    }

    #[napi(setter)]
    pub fn set_base_url(&mut self, value: String) {
        self.inner.base_url = value;
    }

    #[napi(getter)]
    pub fn model(&self) -> String {
        self.inner.model.clone()
    }

    #[napi(setter)]
    pub fn set_model(&mut self, value: String) {
        self.inner.model = value;
    }

    #[napi(getter)]
    pub fn temperature(&self) -> Optional<f64> {
        optional(self.inner.temperature.map(f64::from))
    }

    #[napi(setter)]
    pub fn set_temperature(&mut self, value: Option<f64>) {
        // JS numbers are f64; the core keeps the provider's f32.
        self.inner.temperature = value.map(|v| v as f32);
    }

    #[napi(getter)]
    pub fn max_tokens(&self) -> Optional<u32> {
        optional(self.inner.max_tokens)
    }

    #[napi(setter)]
    pub fn set_max_tokens(&mut self, value: Option<u32>) {
        self.inner.max_tokens = value;
    }

    #[napi(getter)]
    pub fn stream(&self) -> bool {
        self.inner.stream
    }

    #[napi(setter)]
    pub fn set_stream(&mut self, value: bool) {
        self.inner.stream = value;
    }
}

/// Runtime settings; wraps the core `AgentRuntimeConfig` (its tools come from the
/// `ToolRegistry` given to `AgentRuntime`).
#[napi]
pub struct AgentRuntimeConfig {
    inner: arkagent::AgentRuntimeConfig,
}

#[napi]
impl AgentRuntimeConfig {
    #[napi(constructor)]
    pub fn new(model: &ModelConfig) -> Self {
        Self {
            inner: arkagent::AgentRuntimeConfig::new(model.inner.clone()),
        }
    }

    #[napi(getter)]
    pub fn system_prompt(&self) -> String {
        self.inner.system_prompt.clone()
    }

    #[napi(setter)]
    pub fn set_system_prompt(&mut self, value: String) {
        self.inner.system_prompt = value;
    }

    #[napi(getter)]
    pub fn max_iterations(&self) -> u32 {
        self.inner.max_iterations
    }

    #[napi(setter)]
    pub fn set_max_iterations(&mut self, value: u32) {
        self.inner.max_iterations = value;
    }

    #[napi(getter)]
    pub fn max_parallel_tools(&self) -> u32 {
        u32::try_from(self.inner.max_parallel_tools).unwrap_or(u32::MAX)
    }

    #[napi(setter)]
    pub fn set_max_parallel_tools(&mut self, value: u32) {
        self.inner.max_parallel_tools = usize::try_from(value).unwrap_or(usize::MAX);
    }

    /// `""` stands for "generate one" (the core's `None`).
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id.clone().unwrap_or_default()
    }

    #[napi(setter)]
    pub fn set_session_id(&mut self, value: String) {
        self.inner.session_id = Some(value).filter(|id| !id.is_empty());
    }
}

impl AgentRuntimeConfig {
    /// A copy of the core config.
    pub fn core(&self) -> arkagent::AgentRuntimeConfig {
        self.inner.clone()
    }
}
