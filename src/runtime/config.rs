use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde::Deserialize;

use crate::ids::{Clock, DefaultIdGenerator, IdGenerator, SystemClock};
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::ModelPrice;
use crate::llm::{ModelConfig, ToolChoice};
use crate::compress::{ContextCompressor, ContextCompressorConfig};
use crate::memory::{NamespacedMemoryStore, GLOBAL_NAMESPACE};
use crate::subagent::{default_role_whitelists, SubAgentPolicy, SubAgentRegistry, ToolWhitelist, CLONE_ASSIGNEE};
use crate::tools::ToolRegistry;

/// Default model calls per run.
pub const DEFAULT_MAX_ITERATIONS: u32 = 16;
/// Default tool calls of one turn running at once.
pub const DEFAULT_MAX_PARALLEL_TOOLS: usize = 4;

/// How the runtime compresses its context.
#[derive(Clone)]
#[allow(clippy::large_enum_variant)] // built once per runtime; a box would only complicate building it
pub enum Compression {
    /// The [`DefaultContextCompressor`](crate::compress::DefaultContextCompressor),
    /// summarizing with the runtime's own model and transport (or `summarizer` if set).
    Default {
        /// Thresholds and prompt.
        config: ContextCompressorConfig,
        /// A different model for summaries (same transport).
        summarizer: Option<ModelConfig>,
    },
    /// A custom compressor.
    Custom(Arc<dyn ContextCompressor>),
}

impl Compression {
    /// The default compressor with the seed's defaults.
    pub fn default_compressor() -> Self {
        Self::Default { config: ContextCompressorConfig::default(), summarizer: None }
    }
}

/// Everything an [`AgentRuntime`](super::AgentRuntime) needs besides the transport.
#[derive(Clone)]
pub struct AgentRuntimeConfig {
    /// The model.
    pub model: ModelConfig,
    /// System prompt sent first in every request (empty: none).
    pub system_prompt: String,
    /// Model calls per run at most (≥ 1).
    pub max_iterations: u32,
    /// Tool calls of one turn running at once at most (≥ 1).
    pub max_parallel_tools: usize,
    /// TOOL-4: how long a tool call may run, in ms, when its definition sets no
    /// [`timeout_ms`](crate::tools::ToolDefinition::timeout_ms); 0 (the default): no
    /// deadline — a tool that waits for a person (a dialog) must not be cut off. Past the
    /// deadline the model gets a `tool_timeout` error result, the call's abort signal
    /// fires and the run goes on. `delegate_task` and `retrieve_memory` have none.
    pub tool_timeout_ms: u64,
    /// Host tools.
    pub tools: ToolRegistry,
    /// Tool choice sent with requests that offer tools.
    pub tool_choice: Option<ToolChoice>,
    /// TOOL-3: the app's check before every tool call (allow, deny with a reason, ask a
    /// person), after the role's whitelist (ISO-2). Sub-agents inherit it. `None`: every
    /// call the role allows runs, unless its tool asks for approval.
    pub tool_policy: Option<Arc<dyn crate::tools::ToolPolicy>>,
    /// Fixed session id; `None` generates one.
    pub session_id: Option<String>,
    /// Context compression; `None` disables it (and `retrieve_memory`).
    pub compression: Option<Compression>,
    /// Delegation to sub-agents; `delegate_task` is offered when it has a worker or
    /// allows `clone`. Workers never get it (SUB-4).
    pub delegation: Option<DelegationConfig>,
    /// Tools the model may see and call; `None` = all (ISO-2). Calls outside the list
    /// are answered with `tool_not_allowed` and never executed.
    pub allowed_tools: Option<Vec<String>>,
    /// Working / short-term memory store, shared with sub-agents (MEM-4).
    pub memory_store: Arc<NamespacedMemoryStore>,
    /// This runtime's namespace in the store (`"global"`; a sub-agent gets its session id).
    pub memory_namespace: String,
    /// Id source.
    pub id_generator: Arc<dyn IdGenerator>,
    /// Time source.
    pub clock: Arc<dyn Clock>,
    /// Durable session store (STORE-2, STORE-4): the runtime opens the session
    /// `session_id` in it (resuming what was committed; `session_locked` while another
    /// runtime has it) and commits at every commit point. `None`: nothing is persisted.
    /// Sub-agents never write to it (their records are part of the parent's commits).
    pub store: Option<crate::store::SharedStore>,
    /// MCP-3: servers whose tools the runtime offers, connected at the first run that
    /// needs them (see [`crate::mcp`]). A sub-agent built from this config shares them
    /// (one connection each); a role's whitelist names their tools as the model sees them
    /// (`<server>__<tool>`, or `<server>__*` for all of a server's).
    pub mcp_servers: Vec<crate::mcp::McpServer>,
    /// IMG-9: the host's image codec. With one, each photo of a run's input that the
    /// model's provider would shrink, cannot take in its type or would receive turned is
    /// prepared by it first (see [`ImageCodec`](super::ImageCodec)). `None`: photos go
    /// as they came.
    pub image_codec: Option<Arc<dyn super::ImageCodec>>,
    /// IMG-9: keep each photo the codec replaced, readable by its id through
    /// [`AgentRuntime::image`](super::AgentRuntime::image) for the runtime's life (in memory
    /// only: the history, its store and exports hold the prepared photo). Default false:
    /// the original is dropped once prepared.
    pub keep_original_images: bool,
}

impl std::fmt::Debug for AgentRuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentRuntimeConfig")
            .field("model", &self.model)
            .field("max_iterations", &self.max_iterations)
            .field("max_parallel_tools", &self.max_parallel_tools)
            .field("tool_timeout_ms", &self.tool_timeout_ms)
            .field("tool_policy", &self.tool_policy.as_ref().map(|_| "ToolPolicy"))
            .field("tools", &self.tools)
            .field("session_id", &self.session_id)
            .field("mcp_servers", &self.mcp_servers)
            .field("image_codec", &self.image_codec.as_ref().map(|_| "ImageCodec"))
            .field("keep_original_images", &self.keep_original_images)
            .finish_non_exhaustive()
    }
}

impl AgentRuntimeConfig {
    /// Defaults: no system prompt, 16 iterations, 4 parallel tools, no tools.
    pub fn new(model: ModelConfig) -> Self {
        Self {
            model,
            system_prompt: String::new(),
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_parallel_tools: DEFAULT_MAX_PARALLEL_TOOLS,
            tool_timeout_ms: 0,
            tools: ToolRegistry::new(),
            tool_choice: None,
            tool_policy: None,
            session_id: None,
            compression: None,
            delegation: None,
            allowed_tools: None,
            memory_store: NamespacedMemoryStore::new(),
            memory_namespace: GLOBAL_NAMESPACE.to_owned(),
            id_generator: Arc::new(DefaultIdGenerator::default()),
            clock: Arc::new(SystemClock),
            store: None,
            mcp_servers: Vec::new(),
            image_codec: None,
            keep_original_images: false,
        }
    }

    /// Checks ranges; errors carry code `invalid_config`, and for the model's and the
    /// summarizer's thinking settings `thinking_unsupported`, `thinking_conflict` and
    /// `extra_body_conflict` ([`check_thinking`](crate::llm::check_thinking)).
    pub fn validate(&self) -> Result<(), ArkAgentError> {
        let bad = |m: &str| Err(ArkAgentError::config(ErrorCode::InvalidConfig, m));
        if self.model.base_url.trim().is_empty() {
            return bad("model base_url is empty");
        }
        if self.model.model.trim().is_empty() {
            return bad("model name is empty");
        }
        crate::llm::check_wire_format(&self.model)?;
        crate::llm::check_thinking(&self.model, self.tool_choice.as_ref())?;
        if self.max_iterations == 0 {
            return bad("max_iterations must be at least 1");
        }
        if self.max_parallel_tools == 0 {
            return bad("max_parallel_tools must be at least 1");
        }
        if matches!(&self.session_id, Some(id) if id.trim().is_empty()) {
            return bad("session_id is empty");
        }
        if let Some(d) = &self.delegation {
            d.policy.validate()?;
        }
        let names: std::collections::HashSet<&str> = self.mcp_servers.iter().map(|s| s.config().name.as_str()).collect();
        if names.len() != self.mcp_servers.len() {
            return bad("two MCP servers have the same name");
        }
        if let Some(Compression::Default { config, summarizer }) = &self.compression {
            config.validate().map_err(|m| ArkAgentError::config(ErrorCode::InvalidConfig, &m))?;
            check_price(summarizer.as_ref())?;
            if let Some(summarizer) = summarizer {
                crate::llm::check_wire_format(summarizer)?;
                // THINK-4: the summarizer offers no tools.
                crate::llm::check_thinking(summarizer, None)?;
            }
        }
        check_price(Some(&self.model))
    }
}

/// COST-2: a model config's price, if set, must be valid (`invalid_config`).
fn check_price(model: Option<&ModelConfig>) -> Result<(), ArkAgentError> {
    match model.and_then(|m| m.price.as_ref()) {
        Some(price) => price.validate().map_err(|m| ArkAgentError::config(ErrorCode::InvalidConfig, &m)),
        None => Ok(()),
    }
}

/// Builds a worker's configuration (SUB-2). The runtime then hard-strips delegation from
/// whatever it returns (SUB-4), so a factory cannot grant a worker `delegate_task`.
/// Async so a host can build the worker on its own thread (a JS factory runs on the JS
/// thread); a plain closure `Fn(&AgentRuntimeConfig) -> Result<AgentRuntimeConfig, _>`
/// is a factory too.
#[async_trait]
pub trait SubAgentFactory: Send + Sync {
    /// `parent` is a copy of the parent's config (API key included: the worker usually
    /// talks to the same provider) without its custom compressor
    /// ([`named_worker_start`](super::named_worker_start)): the worker compresses with a
    /// custom compressor only when the returned config sets one (`compression`); a
    /// `clone` child inherits the parent's. Return the worker's config.
    async fn create(&self, parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError>;
}

#[async_trait]
impl<F> SubAgentFactory for F
where
    F: Fn(&AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError> + Send + Sync,
{
    async fn create(&self, parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError> {
        self(parent)
    }
}

/// A named worker.
#[derive(Clone)]
pub struct SubAgentDefinition {
    /// Trimmed, non-empty, not `clone`.
    pub name: String,
    /// What it is good at (shown to the parent model in the delegate_task description).
    pub description: String,
    /// Builds its config.
    pub factory: Arc<dyn SubAgentFactory>,
}

impl std::fmt::Debug for SubAgentDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgentDefinition").field("name", &self.name).field("description", &self.description).finish_non_exhaustive()
    }
}

impl SubAgentDefinition {
    /// Errors: `subagent_name_empty`, `subagent_name_reserved` (`clone` in any case).
    pub fn create(name: &str, description: impl Into<String>, factory: Arc<dyn SubAgentFactory>) -> Result<Self, ArkAgentError> {
        let trimmed = name.trim();
        if trimmed.is_empty() {
            return Err(ArkAgentError::config(ErrorCode::SubagentNameEmpty, "sub-agent name is empty"));
        }
        if trimmed.to_lowercase() == CLONE_ASSIGNEE {
            return Err(ArkAgentError::config(ErrorCode::SubagentNameReserved, "Sub-agent name \"clone\" is reserved"));
        }
        Ok(Self { name: trimmed.to_owned(), description: description.into(), factory })
    }
}

/// Who may be delegated to, and the budgets.
#[derive(Clone, Debug)]
pub struct DelegationConfig {
    /// Budgets.
    pub policy: SubAgentPolicy,
    /// Named workers.
    pub workers: Vec<SubAgentDefinition>,
    /// Whether `clone` (a copy of the parent's config) may be used.
    pub allow_clone: bool,
    /// Tools per role (ISO-2); defaults to the seed's table. `None` = every tool the
    /// parent may use: a child's tools are always the parent's allowed tools ∩ its
    /// factory's ∩ its role's, so no role widens what the parent may use.
    pub role_whitelists: BTreeMap<String, ToolWhitelist>,
    /// Tokens one child may use before it is force-completed (ISO-5), its own
    /// sub-agents' included (`max_depth` > 1); `None` = no cap.
    pub child_token_budget: Option<u64>,
    /// Where sub-agents are tracked (ISO-4); share one across runtimes to see them all.
    pub registry: Arc<SubAgentRegistry>,
}

impl Default for DelegationConfig {
    fn default() -> Self {
        Self {
            policy: SubAgentPolicy::default(),
            workers: Vec::new(),
            allow_clone: false,
            role_whitelists: default_role_whitelists(),
            child_token_budget: None,
            registry: Arc::new(SubAgentRegistry::new()),
        }
    }
}

impl DelegationConfig {
    /// Adds a worker. Errors: `subagent_name_duplicate`.
    pub fn register(&mut self, definition: SubAgentDefinition) -> Result<(), ArkAgentError> {
        if self.workers.iter().any(|w| w.name == definition.name) {
            return Err(ArkAgentError::config(ErrorCode::SubagentNameDuplicate, format!("sub-agent {:?} is already registered", definition.name)));
        }
        self.workers.push(definition);
        Ok(())
    }

    /// True when `delegate_task` is offered (some worker, or clone).
    pub fn is_enabled(&self) -> bool {
        self.allow_clone || !self.workers.is_empty()
    }
}

/// The JSON form of a config, for hosts that configure through text (C, tools).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigJson {
    model: ModelConfig,
    #[serde(default)]
    system_prompt: String,
    max_iterations: Option<u32>,
    max_parallel_tools: Option<usize>,
    tool_timeout_ms: Option<u64>,
    session_id: Option<String>,
    compression: Option<CompressionJson>,
    delegation: Option<DelegationJson>,
    #[serde(default)]
    mcp_servers: Vec<serde_json::Value>,
    #[serde(default)]
    keep_original_images: bool,
}

/// `"delegation": {"policy"?: {…SubAgentPolicy…}, "allow_clone"?: bool}` — workers are
/// added by the host (they need a factory).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DelegationJson {
    #[serde(default)]
    policy: SubAgentPolicy,
    #[serde(default)]
    allow_clone: bool,
    child_token_budget: Option<u64>,
    /// Extra or replaced roles: `{"role": ["tool", …] | null}` (null = every tool).
    #[serde(default)]
    role_whitelists: std::collections::BTreeMap<String, Option<Vec<String>>>,
}

/// Overrides a host applies to a worker's config (`apply_overrides_json`).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OverridesJson {
    system_prompt: Option<String>,
    max_iterations: Option<u32>,
    max_parallel_tools: Option<usize>,
    tool_timeout_ms: Option<u64>,
    model: Option<ModelOverride>,
    temperature: Option<f32>,
    max_tokens: Option<u32>,
    /// COST-2: absent keeps the price unless `model` names another model; `null` clears.
    #[serde(default, deserialize_with = "present")]
    price: Option<Option<ModelPrice>>,
    /// THINK-4: absent keeps the parent's setting; `null` leaves the provider's default.
    #[serde(default, deserialize_with = "present")]
    thinking: Option<Option<crate::llm::Thinking>>,
}

/// A worker's `"model"` override: another model's name at the same provider, or a whole
/// model config (its own base URL, key, wire format, image bounds and price).
#[derive(Deserialize)]
#[serde(untagged)]
enum ModelOverride {
    Name(String),
    Config(Box<ModelConfig>),
}

/// `Some(value)` for a key that is present (`Some(None)` for `null`), so that an absent
/// key (`None`, the default) can be told from an explicit `null`.
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(d).map(Some)
}

/// `"compression": {…}` — the default compressor's settings; absent fields keep the
/// seed's defaults.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompressionJson {
    total_token_threshold: Option<u64>,
    keep_recent_message_count: Option<usize>,
    summary_prompt: Option<String>,
    min_messages_to_summarize: Option<usize>,
    summarizer_max_input_tokens: Option<u64>,
    /// The seed's `modelConfig` of the compressor: the summarizer's own model (same
    /// transport); absent: the runtime's model.
    summarizer_model: Option<ModelConfig>,
}

impl AgentRuntimeConfig {
    /// Parses `{"model": {…ModelConfig…}, "system_prompt"?, "max_iterations"?,
    /// "max_parallel_tools"?, "tool_timeout_ms"?, "session_id"?, "compression"?: {"total_token_threshold"?,
    /// "keep_recent_message_count"?, "summary_prompt"?, "min_messages_to_summarize"?,
    /// "summarizer_max_input_tokens"?, "summarizer_model"?: {…ModelConfig…}},
    /// "delegation"?: {"policy"?: {"max_depth"?,
    /// "max_delegations_per_run"?, "max_concurrent_children"?,
    /// "parent_context_message_count"?}, "allow_clone"?, "child_token_budget"?,
    /// "role_whitelists"?: {"role": ["tool", …] | null}}, "mcp_servers"?: [{"name", "url",
    /// "headers"?: {"Name": "value"} | [[name, value], …], "allow"?: [tool, …], "deny"?: [tool,
    /// …], "approval"?: "never" | "always" | [tool, …], "timeout_ms"?, "connect_timeout_ms"?,
    /// "retry_after_ms"?}], "keep_original_images"?: bool}` (see
    /// [`McpServerConfig`](crate::mcp::McpServerConfig)) and validates it. Errors: `invalid_json`, `invalid_config`.
    ///
    /// ```
    /// let c = arkagent::AgentRuntimeConfig::from_json(
    ///     r#"{"model":{"base_url":"http://127.0.0.1:8080/v1","api_key":"k","model":"m"},"max_iterations":4}"#,
    ///     arkagent::ToolRegistry::new(),
    /// ).unwrap();
    /// assert_eq!(c.max_iterations, 4);
    /// ```
    pub fn from_json(json: &str, tools: ToolRegistry) -> Result<Self, ArkAgentError> {
        let parsed: ConfigJson = serde_json::from_str(json)?;
        let mut config = Self::new(parsed.model);
        config.system_prompt = parsed.system_prompt;
        config.max_iterations = parsed.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
        config.max_parallel_tools = parsed.max_parallel_tools.unwrap_or(DEFAULT_MAX_PARALLEL_TOOLS);
        config.tool_timeout_ms = parsed.tool_timeout_ms.unwrap_or(0);
        config.session_id = parsed.session_id;
        config.keep_original_images = parsed.keep_original_images;
        config.tools = tools;
        for server in parsed.mcp_servers {
            config.mcp_servers.push(crate::mcp::McpServer::from_json(server, None)?);
        }
        if let Some(d) = parsed.delegation {
            let mut delegation =
                DelegationConfig { policy: d.policy, allow_clone: d.allow_clone, child_token_budget: d.child_token_budget, ..DelegationConfig::default() };
            delegation.role_whitelists.extend(d.role_whitelists);
            config.delegation = Some(delegation);
        }
        if let Some(c) = parsed.compression {
            let d = ContextCompressorConfig::default();
            let threshold = c.total_token_threshold.unwrap_or(d.total_token_threshold);
            config.compression = Some(Compression::Default {
                config: ContextCompressorConfig {
                    total_token_threshold: threshold,
                    keep_recent_message_count: c.keep_recent_message_count.unwrap_or(d.keep_recent_message_count),
                    summary_prompt: c.summary_prompt.unwrap_or(d.summary_prompt),
                    min_messages_to_summarize: c.min_messages_to_summarize.unwrap_or(d.min_messages_to_summarize),
                    summarizer_max_input_tokens: c.summarizer_max_input_tokens,
                },
                summarizer: c.summarizer_model,
            });
        }
        config.validate()?;
        Ok(config)
    }
}

impl AgentRuntimeConfig {
    /// Applies `{"system_prompt"?, "max_iterations"?, "max_parallel_tools"?, "tool_timeout_ms"?, "model"?: name | {…ModelConfig…},
    /// "temperature"?, "max_tokens"?, "price"?: {…ModelPrice…} | null, "thinking"?: "off" |
    /// "on" | {"effort"} | {"budget_tokens"} | null}` (e.g. a worker's
    /// differences from its parent), then validates. A `"model"` naming another model
    /// without a `"price"` drops the inherited price (COST-2: no call is priced at another
    /// model's price); `"price": null` drops it too. A `"model"` object is a whole model
    /// config, as the runtime config's `"model"`: the worker's own base URL, key, wire
    /// format, image bounds and price (none when it gives none). Errors: `invalid_json`,
    /// `invalid_config`.
    pub fn apply_overrides_json(&mut self, json: &str) -> Result<(), ArkAgentError> {
        let o: OverridesJson = serde_json::from_str(json)?;
        if let Some(v) = o.system_prompt {
            self.system_prompt = v;
        }
        if let Some(v) = o.max_iterations {
            self.max_iterations = v;
        }
        if let Some(v) = o.max_parallel_tools {
            self.max_parallel_tools = v;
        }
        if let Some(v) = o.tool_timeout_ms {
            self.tool_timeout_ms = v;
        }
        match o.model {
            // A whole model config: the worker's own model, its price what it carries.
            Some(ModelOverride::Config(config)) => self.model = *config,
            Some(ModelOverride::Name(v)) => {
                // COST-2: a price is never carried over to another model.
                if v != self.model.model && o.price.is_none() {
                    self.model.price = None;
                }
                self.model.model = v;
            }
            None => {}
        }
        if let Some(price) = o.price {
            self.model.price = price;
        }
        if o.temperature.is_some() {
            self.model.temperature = o.temperature;
        }
        if o.max_tokens.is_some() {
            self.model.max_tokens = o.max_tokens;
        }
        if let Some(thinking) = o.thinking {
            self.model.thinking = thinking;
        }
        self.validate()
    }
}
