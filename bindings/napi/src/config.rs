//! `AgentRuntimeConfig`: the JS class holding the core runtime config (its model is a
//! `ModelConfig`, see `model_config`).

use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{ClassInstance, This};
use napi_ohos::Env;

use std::sync::Arc;

use arkagent::runtime::DelegationConfig;
use arkagent::subagent::SubAgentRegistry;
use arkagent::Compression;

use crate::args::{constructing, Arg, Setting};
use crate::callback::JsFunction;
use crate::codes::ModuleCode;
use crate::compression::{custom_compressor, CompressArgs, ContextCompressor};
use crate::convert::{optional, Optional};
use crate::delegation::{SubAgentDefinition, SubAgentPolicy};
use crate::error::{thrown, Thrown};
use crate::model_config::ModelConfig;
use crate::numbers::setting;

/// Runtime settings.
#[napi]
pub struct AgentRuntimeConfig {
    inner: arkagent::AgentRuntimeConfig,
    /// Kept as the JS class (not as core `Compression`) so the getter gives back exactly
    /// what was set, unset optional fields included.
    compressor: Option<ContextCompressor>,
    /// A compressor written in JS (`setCustomCompressor`); wins over `compressor`.
    custom_compressor: Option<Arc<dyn arkagent::compress::ContextCompressor>>,
    /// Workers, clone, budgets and role whitelists; its registry is replaced by a fresh
    /// one for each runtime (see [`AgentRuntimeConfig::core`]).
    delegation: DelegationConfig,
}

#[napi]
impl AgentRuntimeConfig {
    /// A runtime's settings, starting from `model` (copied: later changes to it have no
    /// effect) with the seed's defaults for the rest. An argument that is not a ModelConfig
    /// instance throws "invalid_config".
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        this: This<'_>,
        model: Setting<ClassInstance<'_, ModelConfig>>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "AgentRuntimeConfig")?;
        Ok(Self {
            inner: arkagent::AgentRuntimeConfig::new(model.0.core()),
            compressor: None,
            custom_compressor: None,
            delegation: DelegationConfig::default(),
        })
    }

    /// Delegation budgets. Assigning stores a copy; reading gives a copy.
    #[napi(getter)]
    pub fn sub_agent_policy(&self) -> SubAgentPolicy {
        SubAgentPolicy::from(self.delegation.policy)
    }

    /// Stores a copy. Anything but a `SubAgentPolicy` instance is refused before it is
    /// unwrapped.
    #[napi(setter)]
    pub fn set_sub_agent_policy(&mut self, value: Setting<ClassInstance<'_, SubAgentPolicy>>) {
        self.delegation.policy = value.0.core();
    }

    /// Adds a worker; the model is offered `delegate_task` once a worker is registered or
    /// `allowClone` is set. Throws "subagent_name_duplicate".
    #[napi]
    pub fn register_sub_agent(
        &mut self,
        definition: Arg<ClassInstance<'_, SubAgentDefinition>>,
    ) -> Result<(), Thrown> {
        self.delegation
            .register(definition.0.core())
            .map_err(thrown)
    }

    /// The registered workers' names, in registration order.
    #[napi]
    pub fn sub_agent_names(&self) -> Vec<String> {
        self.delegation
            .workers
            .iter()
            .map(|w| w.name.clone())
            .collect()
    }

    /// Whether the model may delegate to "clone", a copy of this runtime's settings (default false).
    #[napi(getter)]
    pub fn allow_clone(&self) -> bool {
        self.delegation.allow_clone
    }

    #[napi(setter)]
    pub fn set_allow_clone(&mut self, value: Setting<bool>) {
        self.delegation.allow_clone = value.0;
    }

    /// Tokens one child may use before it is force-completed ("token-budget-exceeded"); unset:
    /// no cap. The budget covers the child's whole subtree: with maxDepth above 1 its own
    /// sub-agents' calls count against it too. Streamed deltas count as they arrive: the call
    /// in flight is cancelled mid-stream.
    #[napi(getter)]
    pub fn child_token_budget(&self) -> Optional<f64> {
        optional(self.delegation.child_token_budget.map(|t| t as f64))
    }

    #[napi(setter)]
    pub fn set_child_token_budget(&mut self, value: Setting<Option<f64>>) -> Result<(), Thrown> {
        self.delegation.child_token_budget = value
            .0
            .map(|v| setting(v, "childTokenBudget"))
            .transpose()?;
        Ok(())
    }

    /// Adds or replaces a role's tool whitelist (ISO-2); null or absent: every tool the
    /// parent may use (a role never widens the parent's tools). A child delegated with that role is
    /// neither shown nor allowed any other tool. Built in: "code-review",
    /// "code-generation", "data-analysis", "document", "testing", "general" (every tool).
    #[napi(ts_args_type = "role: string, tools?: string[] | null")]
    pub fn set_role_whitelist(&mut self, role: Arg<String>, tools: Arg<Option<Vec<String>>>) {
        self.delegation.role_whitelists.insert(role.0, tools.0);
    }

    /// The role names, sorted.
    #[napi]
    pub fn roles(&self) -> Vec<String> {
        self.delegation.role_whitelists.keys().cloned().collect()
    }

    /// A role's whitelist; null: every tool. Throws "subagent_unknown_role".
    #[napi(ts_return_type = "string[] | null")]
    pub fn role_whitelist(&self, role: Arg<String>) -> Result<Option<Vec<String>>, Thrown> {
        let role = role.0;
        self.delegation
            .role_whitelists
            .get(&role)
            .cloned()
            .ok_or_else(|| {
                napi_ohos::Error::new(
                    ModuleCode::SubagentUnknownRole.to_owned_code(),
                    format!("unknown role {role:?}"),
                )
            })
    }

    /// Context compression; unset (the default) turns it off. Assigning stores a copy of
    /// the compressor's settings and reading gives a copy: to change a setting, assign again.
    #[napi(getter)]
    pub fn context_compressor(&self) -> Optional<ContextCompressor> {
        optional(self.compressor.clone())
    }

    /// Stores a copy; `undefined` turns compression off. Anything but a
    /// `ContextCompressor` instance is refused before it is unwrapped.
    #[napi(setter)]
    pub fn set_context_compressor(
        &mut self,
        value: Setting<Option<ClassInstance<'_, ContextCompressor>>>,
    ) {
        self.compressor = value.0.map(|c| (*c).clone());
    }

    /// Compresses with `compress` instead of the default compressor (contextCompressor is
    /// then ignored); undefined removes it. `threshold` is the runtime's trigger: before a
    /// model call and after a turn, `compress` is called only when the prompt size (as in the
    /// "model_request" event) reaches it and a model call was made since the last
    /// compression (whether or not that compression reported a usage); otherwise the runtime skips ("below_threshold", "last_usage_is_compression") without
    /// calling it. Absent: 64000, the default compressor's; 0 (the same on every surface):
    /// nothing is below it, so `compress` is called before every model call and after every
    /// turn (except right after a compression, and while automatic attempts back off after a
    /// failed one: skipped with "backing_off_after_failure" until three more model calls
    /// were made). compressNow() and a context overflow always
    /// call it. The threshold is reported in events. A `clone` child inherits the compressor;
    /// a named worker has one only when its factory gives it one
    /// (WorkerConfig.setCustomCompressor). Throws "invalid_argument" for a threshold that is
    /// not a non-negative integer.
    #[napi(ts_args_type = "compress: CustomCompressor | undefined, threshold?: number")]
    pub fn set_custom_compressor(
        &mut self,
        compress: Arg<Option<JsFunction<'_, CompressArgs>>>,
        threshold: Arg<Option<f64>>,
    ) -> Result<(), Thrown> {
        self.custom_compressor = custom_compressor(compress.0, threshold.0)?;
        Ok(())
    }

    /// TOOL-3: checks every tool call before it runs — after the role's whitelist, never for
    /// a tool that does not exist — and allows it, denies it with a reason the model reads
    /// ("tool_denied") or asks a person (the run pauses as for a tool that requires
    /// approval). Sub-agents inherit it. undefined removes it.
    #[napi(ts_args_type = "policy?: ToolPolicy")]
    pub fn set_tool_policy(&mut self, policy: Arg<Option<JsFunction<'_, crate::tools::JsToolCall>>>) -> Result<(), Thrown> {
        self.inner.tool_policy = match policy.0 {
            None => None,
            Some(f) => Some(Arc::new(crate::tools::JsToolPolicy::new(f)?)),
        };
        Ok(())
    }

    /// IMG-9: the image codec of runtimes created with this config: each photo of a run's
    /// input that the model's provider would shrink, cannot take in its type (HEIC/HEIF for
    /// OpenAI's or Claude's families) or would receive turned is handed to it first, at
    /// exactly the size the provider's own resize gives (the token count does not change),
    /// and what it resolves with is sent instead. undefined removes it (the default codec,
    /// setDefaultImageCodec, then applies).
    #[napi(ts_args_type = "codec?: ImageCodec")]
    pub fn set_image_codec(&mut self, codec: Arg<Option<JsFunction<'_, crate::image_codec::JsImageCodecRequest>>>) -> Result<(), Thrown> {
        self.inner.image_codec = match codec.0 {
            None => None,
            Some(f) => Some(Arc::new(crate::image_codec::JsImageCodec::new(f)?)),
        };
        Ok(())
    }

    /// IMG-9: keep each photo the codec replaced, readable by its own id with
    /// AgentRuntime.image() for the runtime's life (memory only: the history, the store
    /// and exports hold the prepared photo). Default false.
    #[napi(getter)]
    pub fn keep_original_images(&self) -> bool {
        self.inner.keep_original_images
    }

    #[napi(setter)]
    pub fn set_keep_original_images(&mut self, value: Setting<bool>) {
        self.inner.keep_original_images = value.0;
    }

    /// MCP-3: adds an MCP server whose tools the runtime offers as `<name>__<tool>`,
    /// connected through the runtime's HttpTransport at the start of the first run that
    /// needs it (an "mcp_server" event); `authorize` supplies headers at connection time
    /// and after a 401/403. Sub-agents share the server. Throws "invalid_argument" for
    /// options that are not an McpServerOptions (a missing or unknown member, a value of
    /// the wrong type, a negative or fractional number, or a millisecond count of 2 ** 32
    /// or more) or an authorize that is not a function, "invalid_config" for a value it
    /// refuses (a name outside 1 to 32 of A-Z,
    /// a-z, 0-9 and "-", or one already added; a URL that is not http(s); an approval
    /// other than "never", "always" or names; a connectTimeoutMs of 0).
    #[napi(ts_args_type = "options: McpServerOptions, authorize?: McpAuthorize")]
    pub fn add_mcp_server(
        &mut self,
        env: &Env,
        options: Arg<napi_ohos::bindgen_prelude::Object<'_>>,
        authorize: Arg<Option<JsFunction<'_, crate::mcp::JsMcpAuthRequest>>>,
    ) -> Result<(), Thrown> {
        let options = crate::convert::json_object(env, &options.0)
            .map_err(|e| napi_ohos::Error::new(ModuleCode::InvalidArgument.to_owned_code(), format!("McpServerOptions must be a plain object: {}", e.reason)))?;
        let server = crate::mcp::server_config(serde_json::Value::Object(options), authorize.0)?;
        if self.inner.mcp_servers.iter().any(|s| s.config().name == server.config().name) {
            let e = arkagent::ArkAgentError::config(arkagent::ErrorCode::InvalidConfig, format!("an MCP server named {:?} was added already", server.config().name));
            return Err(thrown(e));
        }
        self.inner.mcp_servers.push(server);
        Ok(())
    }

    /// The added MCP servers' names, in order.
    #[napi]
    pub fn mcp_server_names(&self) -> Vec<String> {
        self.inner.mcp_servers.iter().map(|s| s.config().name.clone()).collect()
    }

    /// Whether a custom compressor is set.
    #[napi(getter)]
    pub fn has_custom_compressor(&self) -> bool {
        self.custom_compressor.is_some()
    }

    #[napi(getter)]
    pub fn system_prompt(&self) -> String {
        self.inner.system_prompt.clone()
    }

    #[napi(setter)]
    pub fn set_system_prompt(&mut self, value: Setting<String>) {
        self.inner.system_prompt = value.0;
    }

    /// Model calls per run at most (default 16).
    #[napi(getter)]
    pub fn max_iterations(&self) -> u32 {
        self.inner.max_iterations
    }

    #[napi(setter)]
    pub fn set_max_iterations(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.max_iterations = setting(value.0, "maxIterations")?;
        Ok(())
    }

    /// Tool calls of one turn that run at once at most (default 4).
    #[napi(getter)]
    pub fn max_parallel_tools(&self) -> u32 {
        u32::try_from(self.inner.max_parallel_tools).unwrap_or(u32::MAX)
    }

    #[napi(setter)]
    pub fn set_max_parallel_tools(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        // The getter reads it back as a u32, so that is the range.
        let n: u32 = setting(value.0, "maxParallelTools")?;
        self.inner.max_parallel_tools = n as usize;
        Ok(())
    }

    /// TOOL-4: how long a tool call may run, in ms, when its ToolDefinition sets no
    /// `timeoutMs` (default 0: no deadline — a tool that waits for a person must not be cut
    /// off). Past it the model is answered with a "tool_timeout" error result, the call's
    /// `context.signal` fires and the run goes on. delegate_task and retrieve_memory have
    /// none. A named worker starts with its parent's (WorkerConfig.toolTimeoutMs).
    #[napi(getter)]
    pub fn tool_timeout_ms(&self) -> u32 {
        u32::try_from(self.inner.tool_timeout_ms).unwrap_or(u32::MAX)
    }

    /// Throws "invalid_config" for anything but an integer from 0 to 4294967295.
    #[napi(setter)]
    pub fn set_tool_timeout_ms(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        let ms: u32 = setting(value.0, "toolTimeoutMs")?;
        self.inner.tool_timeout_ms = u64::from(ms);
        Ok(())
    }

    /// Fixed session id; empty means generated.
    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.inner.session_id.clone().unwrap_or_default()
    }

    #[napi(setter)]
    pub fn set_session_id(&mut self, value: Setting<String>) {
        self.inner.session_id = Some(value.0).filter(|id| !id.is_empty());
    }
}

impl AgentRuntimeConfig {
    /// A copy of the core config.
    pub fn core(&self) -> arkagent::AgentRuntimeConfig {
        let mut config = self.inner.clone();
        if config.image_codec.is_none() {
            config.image_codec = crate::image_codec::default_codec();
        }
        config.compression = match &self.custom_compressor {
            Some(custom) => Some(Compression::Custom(Arc::clone(custom))),
            None => self.compressor.as_ref().map(ContextCompressor::core),
        };
        // The core offers delegate_task only when a worker or clone is available. Each
        // runtime gets its own registry, so `subAgents()` shows that runtime's children.
        let mut delegation = self.delegation.clone();
        delegation.registry = Arc::new(SubAgentRegistry::new());
        config.delegation = Some(delegation);
        config
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: AgentRuntimeConfig
*/
