//! Delegation settings (SUB-1..SUB-4, NAPI-2): `SubAgentPolicy`, `SubAgentDefinition`, and
//! `WorkerConfig`, through which a JS factory `(worker: WorkerConfig) => void |
//! Promise<void>` configures each worker.
//!
//! The factory bridge: the core awaits `SubAgentFactory::create` from its run loop (a
//! worker thread). [`JsSubAgentFactory`] posts the JS call to the JS thread and awaits it
//! (a Promise is awaited until it settles), so the JS factory always runs on the JS thread,
//! once per delegation, after the core's policy checks — exactly where the core calls a
//! Rust factory. The run loop is never blocked while JS runs. What the factory configured
//! is read back after it settled and applied to a copy of the parent's config; the core
//! then hard-strips `delegate_task` from the result (SUB-4), whatever the factory did.

use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::{AgentRuntimeConfig, ArkAgentError};
use async_trait::async_trait;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{ClassInstance, This};
use napi_ohos::Env;

use crate::args::{constructing, Arg, Setting};
use crate::callback::{JsAsyncFn, JsFunction};
use crate::compression::{custom_compressor, CompressArgs};
use crate::error::{internal, private_constructor, thrown, Thrown};
use crate::model_config::ModelConfig;
use crate::numbers::setting;
use crate::tools::ToolRegistry;

/// Delegation budgets (SUB-3). Violations are answered to the model as tool errors:
/// "subagent_depth_exceeded", "subagent_run_budget_exceeded",
/// "subagent_concurrent_budget_exceeded". Values must be non-negative integers up to
/// 4294967295 (parentContextMessageCount: safe integers) (else code "invalid_config"); maxConcurrentChildren 0 is refused when the runtime is created.
#[napi]
#[derive(Clone, Default)]
pub struct SubAgentPolicy {
    inner: arkagent::subagent::SubAgentPolicy,
}

impl SubAgentPolicy {
    /// The core policy.
    pub fn core(&self) -> arkagent::subagent::SubAgentPolicy {
        self.inner
    }
}

impl From<arkagent::subagent::SubAgentPolicy> for SubAgentPolicy {
    fn from(inner: arkagent::subagent::SubAgentPolicy) -> Self {
        Self { inner }
    }
}

#[napi]
impl SubAgentPolicy {
    /// Omitted arguments keep the seed's defaults (1, 4, 2, 10). Throws `invalid_config`
    /// for a negative or fractional value.
    #[napi(constructor)]
    pub fn new(
        env: &Env,
        this: This<'_>,
        max_depth: Setting<Option<f64>>,
        max_delegations_per_run: Setting<Option<f64>>,
        max_concurrent_children: Setting<Option<f64>>,
        parent_context_message_count: Setting<Option<f64>>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "SubAgentPolicy")?;
        let mut policy = arkagent::subagent::SubAgentPolicy::default();
        if let Some(v) = max_depth.0 {
            policy.max_depth = setting(v, "maxDepth")?;
        }
        if let Some(v) = max_delegations_per_run.0 {
            policy.max_delegations_per_run = setting(v, "maxDelegationsPerRun")?;
        }
        if let Some(v) = max_concurrent_children.0 {
            policy.max_concurrent_children = setting(v, "maxConcurrentChildren")?;
        }
        if let Some(v) = parent_context_message_count.0 {
            policy.parent_context_message_count = setting(v, "parentContextMessageCount")?;
        }
        Ok(Self { inner: policy })
    }

    /// Delegation depth (default 1: the runtime delegates, its workers never do). Above 1 a
    /// child at depth d < maxDepth may delegate too, under the root's budgets: the per-run
    /// cap counts the whole tree, the concurrency cap each depth of it (so the defaults
    /// reach any maxDepth). A child at maxDepth never delegates.
    #[napi(getter)]
    pub fn max_depth(&self) -> u32 {
        self.inner.max_depth
    }

    #[napi(setter)]
    pub fn set_max_depth(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.max_depth = setting(value.0, "maxDepth")?;
        Ok(())
    }

    ///  Delegations one run may start (default 4), children's included. An unknown
    /// assignee or a failing factory consumes none.
    #[napi(getter)]
    pub fn max_delegations_per_run(&self) -> u32 {
        self.inner.max_delegations_per_run
    }

    #[napi(setter)]
    pub fn set_max_delegations_per_run(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.max_delegations_per_run = setting(value.0, "maxDelegationsPerRun")?;
        Ok(())
    }

    ///  Children running at once at each depth of the delegation tree (default 2: the root's
    /// children; their children together; …), so at most maxDepth × maxConcurrentChildren in
    /// all; more are refused, not queued.
    #[napi(getter)]
    pub fn max_concurrent_children(&self) -> u32 {
        self.inner.max_concurrent_children
    }

    #[napi(setter)]
    pub fn set_max_concurrent_children(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.max_concurrent_children = setting(value.0, "maxConcurrentChildren")?;
        Ok(())
    }

    /// Parent messages a child sees as context (default 10; a pairing-safe slice).
    #[napi(getter)]
    pub fn parent_context_message_count(&self) -> f64 {
        self.inner.parent_context_message_count as f64
    }

    #[napi(setter)]
    pub fn set_parent_context_message_count(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.inner.parent_context_message_count = setting(value.0, "parentContextMessageCount")?;
        Ok(())
    }
}

/// What a factory may set on a worker; starts as the parent's settings (without a custom
/// compressor: the core's `named_worker_start`).
struct WorkerSettings {
    name: String,
    system_prompt: String,
    max_iterations: u32,
    max_parallel_tools: usize,
    tool_timeout_ms: u64,
    model: arkagent::ModelConfig,
    tools: ToolRegistry,
    /// `setCustomCompressor`: the worker's own compressor, if its factory gives it one.
    custom_compressor: Option<Arc<dyn arkagent::compress::ContextCompressor>>,
}

/// The worker a SubAgentFactory configures. It starts as a copy of the parent runtime's
/// settings (its tools included, not its custom compressor) and is read once the factory
/// returned or its Promise settled; later changes have no effect. The rule of every
/// surface: a named worker has a custom compressor only when its factory gives it one
/// (setCustomCompressor); a `clone` child inherits the parent's. Whatever it is given,
/// `delegate_task` is stripped: workers never delegate (below a maxDepth above 1, the
/// runtime gives a child the parent's own delegation settings instead). The tools it may
/// use are the parent's allowed tools ∩ the worker's ∩ the role's whitelist: never one its
/// parent is barred from.
#[napi]
pub struct WorkerConfig {
    settings: Arc<Mutex<WorkerSettings>>,
}

impl WorkerConfig {
    fn lock(&self) -> MutexGuard<'_, WorkerSettings> {
        // Plain field updates only: a poisoned lock still holds valid settings.
        self.settings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[napi]
impl WorkerConfig {
    /// Instances come from the runtime, handed to a SubAgentFactory.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("WorkerConfig"))
    }

    /// The worker's name (the delegate_task assignee).
    #[napi(getter)]
    pub fn name(&self) -> String {
        self.lock().name.clone()
    }

    #[napi(getter)]
    pub fn system_prompt(&self) -> String {
        self.lock().system_prompt.clone()
    }

    #[napi(setter)]
    pub fn set_system_prompt(&mut self, value: Setting<String>) {
        self.lock().system_prompt = value.0;
    }

    #[napi(getter)]
    pub fn max_iterations(&self) -> u32 {
        self.lock().max_iterations
    }

    #[napi(setter)]
    pub fn set_max_iterations(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        self.lock().max_iterations = setting(value.0, "maxIterations")?;
        Ok(())
    }

    #[napi(getter)]
    pub fn max_parallel_tools(&self) -> u32 {
        u32::try_from(self.lock().max_parallel_tools).unwrap_or(u32::MAX)
    }

    #[napi(setter)]
    pub fn set_max_parallel_tools(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        // The getter reads it back as a u32, so that is the range.
        let n: u32 = setting(value.0, "maxParallelTools")?;
        self.lock().max_parallel_tools = n as usize;
        Ok(())
    }

    /// TOOL-4: the worker's deadline for a tool call whose definition sets none
    /// (AgentRuntimeConfig.toolTimeoutMs; starts as the parent's).
    #[napi(getter)]
    pub fn tool_timeout_ms(&self) -> u32 {
        u32::try_from(self.lock().tool_timeout_ms).unwrap_or(u32::MAX)
    }

    /// Throws "invalid_config" for anything but an integer from 0 to 4294967295.
    #[napi(setter)]
    pub fn set_tool_timeout_ms(&mut self, value: Setting<f64>) -> Result<(), Thrown> {
        let ms: u32 = setting(value.0, "toolTimeoutMs")?;
        self.lock().tool_timeout_ms = u64::from(ms);
        Ok(())
    }

    /// A copy of the worker's model; assign to use another model.
    #[napi(getter)]
    pub fn model(&self) -> ModelConfig {
        ModelConfig::from(self.lock().model.clone())
    }

    /// Anything but a `ModelConfig` instance is refused before it is unwrapped.
    #[napi(setter)]
    pub fn set_model(&mut self, value: Setting<ClassInstance<'_, ModelConfig>>) {
        self.lock().model = value.0.core();
    }

    /// The worker's tools, live: register into or unregister from it.
    #[napi(getter)]
    pub fn tools(&self) -> ToolRegistry {
        self.lock().tools.share()
    }

    /// Gives the worker its own compressor written in ArkTS/JS, called with the worker's
    /// state, with the threshold rule of AgentRuntimeConfig.setCustomCompressor (absent:
    /// 64000; 0: every automatic attempt); undefined removes it. Throws "invalid_argument"
    /// for a threshold that is not a non-negative integer.
    #[napi(ts_args_type = "compress: CustomCompressor | undefined, threshold?: number")]
    pub fn set_custom_compressor(
        &mut self,
        compress: Arg<Option<JsFunction<'_, CompressArgs>>>,
        threshold: Arg<Option<f64>>,
    ) -> Result<(), Thrown> {
        let compressor = custom_compressor(compress.0, threshold.0)?;
        self.lock().custom_compressor = compressor;
        Ok(())
    }

    /// Whether the worker has a custom compressor (only one its factory gave it).
    #[napi(getter)]
    pub fn has_custom_compressor(&self) -> bool {
        self.lock().custom_compressor.is_some()
    }
}

/// [`arkagent::runtime::SubAgentFactory`] over a JS function (see the module docs).
struct JsSubAgentFactory {
    name: String,
    configure: JsAsyncFn<WorkerConfig, ()>,
}

#[async_trait]
impl arkagent::runtime::SubAgentFactory for JsSubAgentFactory {
    async fn create(
        &self,
        parent: &AgentRuntimeConfig,
    ) -> Result<AgentRuntimeConfig, ArkAgentError> {
        let settings = Arc::new(Mutex::new(WorkerSettings {
            name: self.name.clone(),
            system_prompt: parent.system_prompt.clone(),
            max_iterations: parent.max_iterations,
            max_parallel_tools: parent.max_parallel_tools,
            tool_timeout_ms: parent.tool_timeout_ms,
            model: parent.model.clone(),
            tools: ToolRegistry::from(parent.tools.clone()),
            custom_compressor: None,
        }));
        let worker = WorkerConfig {
            settings: Arc::clone(&settings),
        };
        // A throw or rejection fails this delegation (the core reports
        // `subagent_factory_failed`; the JS message is not passed on).
        self.configure
            .call(worker)
            .await
            .map_err(|failure| ArkAgentError::config(arkagent::ErrorCode::SubagentFactoryFailed, failure.message))?;
        let settings = settings
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut config = parent.clone();
        config.system_prompt = settings.system_prompt.clone();
        config.max_iterations = settings.max_iterations;
        config.max_parallel_tools = settings.max_parallel_tools;
        config.tool_timeout_ms = settings.tool_timeout_ms;
        config.model = settings.model.clone();
        config.tools = settings.tools.core();
        // The core handed over the parent's config without its custom compressor; the
        // worker has one only when its factory set it.
        if let Some(custom) = &settings.custom_compressor {
            config.compression = Some(arkagent::Compression::Custom(Arc::clone(custom)));
        }
        Ok(config)
    }
}

/// A named worker (SUB-2).
#[napi]
pub struct SubAgentDefinition {
    inner: arkagent::runtime::SubAgentDefinition,
}

#[napi]
impl SubAgentDefinition {
    /// Instances come from `SubAgentDefinition.create()`.
    #[napi(constructor)]
    pub fn private() -> Result<Self, Thrown> {
        Err(private_constructor("SubAgentDefinition"))
    }

    /// The name is trimmed. Throws "subagent_name_empty", "subagent_name_reserved" ("clone" in any case).
    #[napi(
        ts_args_type = "name: string, description: string, factory: SubAgentFactory",
        ts_return_type = "SubAgentDefinition"
    )]
    pub fn create(
        name: Arg<String>,
        description: Arg<String>,
        factory: Arg<JsFunction<'_, WorkerConfig>>,
    ) -> Result<Self, Thrown> {
        let (name, description, factory) = (name.0, description.0, factory.0);
        let factory = JsSubAgentFactory {
            name: name.trim().to_owned(),
            configure: JsAsyncFn::new(factory).map_err(internal)?,
        };
        let inner =
            arkagent::runtime::SubAgentDefinition::create(&name, description, Arc::new(factory))
                .map_err(thrown)?;
        Ok(Self { inner })
    }

    #[napi(getter)]
    pub fn name(&self) -> String {
        self.inner.name.clone()
    }

    /// What it is good at; shown to the model in the delegate_task description.
    #[napi(getter)]
    pub fn description(&self) -> String {
        self.inner.description.clone()
    }
}

impl SubAgentDefinition {
    /// The core definition (the factory is shared).
    pub fn core(&self) -> arkagent::runtime::SubAgentDefinition {
        self.inner.clone()
    }
}

// index.d.ts: this module's JS API, in order. `// declare: Name` is the generated
// declaration of the #[napi] item Name, its docs the Rust ones above (the promises the tests
// keep); the rest is hand TypeScript. scripts/regen.sh assembles the blocks into
// ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts.
/* ts
// declare: SubAgentPolicy

// declare: WorkerConfig

/**
 * Configures one worker each time the model delegates to it, on the JS thread. A throw or
 * rejection fails that delegation ("subagent_factory_failed").
 */
export type SubAgentFactory = (worker: WorkerConfig) => void | Promise<void>;

// declare: SubAgentDefinition
*/
