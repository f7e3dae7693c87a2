//! `AgentRuntime`: one conversation, delegating every call to the core runtime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::memory::MemoryService;
use arkagent::subagent::DEFAULT_DECOMPOSE_CONCURRENCY;
use arkagent::runtime::RunSlot;
use arkagent::{ModelUsage, RunOutcome, Subscription};
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::{ClassInstance, PromiseRaw, This};
use napi_ohos::Env;

use crate::args::{constructing, Arg};
use crate::callback::JsFunction;
use crate::compression::CompressResult;
use crate::config::{optional, AgentRuntimeConfig, Optional};
use crate::error::{internal, rejection, thrown, CodedError, Thrown};
use crate::events::{JsAgentEvent, JsObserver};
use crate::memory::EpisodicMemory;
use crate::numbers::argument;
use crate::parity::memory_tier;
use crate::store::SessionStore;
use crate::sub_agents::{DecomposedResult, JsDecomposedTask, SubAgentRegistryView, UsageTotals};
use crate::tools::ToolRegistry;
use crate::transport::{JsTransport, TransportArgs};

/// The outcome of one run.
#[napi(object, js_name = "RunResult")]
pub struct JsRunResult {
    pub run_id: String,
    pub status: String,
    pub final_text: Option<String>,
    pub iterations: u32,
}

/// The core's serde name of a unit enum value ("completed", "max_iterations", …), given
/// `serde_json::to_value(value)`, so JS sees the same strings as exported state and
/// event payloads.
pub fn serde_name(value: serde_json::Result<serde_json::Value>) -> String {
    match value {
        Ok(serde_json::Value::String(s)) => s,
        _ => String::new(),
    }
}

impl From<RunOutcome> for JsRunResult {
    fn from(outcome: RunOutcome) -> Self {
        Self {
            run_id: outcome.run_id,
            status: serde_name(serde_json::to_value(outcome.status)),
            final_text: outcome.final_text,
            iterations: outcome.iterations,
        }
    }
}

/// Token usage of one model call.
#[napi(object, js_name = "ModelUsage")]
pub struct JsModelUsage {
    pub prompt_tokens: f64,
    pub completion_tokens: f64,
    pub total_tokens: f64,
    pub cached_tokens: Option<f64>,
    pub reasoning_tokens: Option<f64>,
    pub source: Option<String>,
    /// `raw.calls`: the model calls this usage stands for when more than one (a summary
    /// written in N chunks), so `ChildUsageSummary.fromUsages` counts them as Rust and C do.
    pub calls: Option<f64>,
}

impl JsModelUsage {
    /// The core usage; counts must be non-negative integers (`invalid_argument`).
    pub fn core(&self) -> Result<ModelUsage, Thrown> {
        let tokens = |v: f64, name: &str| crate::numbers::argument::<u64>(v, name);
        let mut usage = ModelUsage {
            prompt_tokens: tokens(self.prompt_tokens, "promptTokens")?,
            completion_tokens: tokens(self.completion_tokens, "completionTokens")?,
            total_tokens: tokens(self.total_tokens, "totalTokens")?,
            cached_tokens: self.cached_tokens.map(|v| tokens(v, "cachedTokens")).transpose()?,
            reasoning_tokens: self.reasoning_tokens.map(|v| tokens(v, "reasoningTokens")).transpose()?,
            ..ModelUsage::default()
        };
        if let Some(source) = &self.source {
            usage.raw.insert("source".into(), serde_json::Value::String(source.clone()));
        }
        if let Some(calls) = self.calls {
            usage.raw.insert("calls".into(), serde_json::Value::from(tokens(calls, "calls")?));
        }
        Ok(usage)
    }
}

// JS numbers: token counts are exact below 2^53.
impl From<&ModelUsage> for JsModelUsage {
    fn from(usage: &ModelUsage) -> Self {
        Self {
            prompt_tokens: usage.prompt_tokens as f64,
            completion_tokens: usage.completion_tokens as f64,
            total_tokens: usage.total_tokens as f64,
            cached_tokens: usage.cached_tokens.map(|t| t as f64),
            reasoning_tokens: usage.reasoning_tokens.map(|t| t as f64),
            source: usage.source().map(str::to_owned),
            calls: usage.raw.get("calls").and_then(serde_json::Value::as_u64).map(|c| c as f64),
        }
    }
}

/// One conversation with a model and tools.
#[napi]
pub struct AgentRuntime {
    core: arkagent::AgentRuntime,
    /// Read-only episodic memory over the live state (MEM-1).
    memory: Arc<dyn MemoryService>,
    /// Live JS listeners by subscription id; dropping one unsubscribes it.
    subscriptions: Mutex<HashMap<u32, Subscription>>,
}

#[napi]
impl AgentRuntime {
    /// Copies `config` and `tools`; later changes to them do not affect this runtime.
    /// Arguments of the wrong class are refused before they are unwrapped. With `store`
    /// (STORE-6) the runtime opens the session `config.sessionId` (generated when unset)
    /// in it, resuming what it committed, and commits at every commit point; throws
    /// `session_locked` while another runtime has that session, and the store codes.
    #[napi(
        constructor,
        ts_args_type = "config: AgentRuntimeConfig, transport: HttpTransport, tools: ToolRegistry, store?: SessionStore"
    )]
    pub fn new(
        env: &Env,
        this: This<'_>,
        config: Arg<ClassInstance<'_, AgentRuntimeConfig>>,
        transport: Arg<JsFunction<'_, TransportArgs>>,
        tools: Arg<ClassInstance<'_, ToolRegistry>>,
        store: Arg<Option<ClassInstance<'_, SessionStore>>>,
    ) -> Result<Self, Thrown> {
        constructing::<Self>(env, &this, "AgentRuntime")?;
        let (config, transport, tools) = (config.0, transport.0, tools.0);
        let mut config = config.core();
        config.tools = tools.core();
        config.store = store.0.map(|store| store.shared());
        let transport = JsTransport::new(transport).map_err(internal)?;
        let core = arkagent::AgentRuntime::new(config, Arc::new(transport)).map_err(thrown)?;
        Ok(Self {
            memory: core.memory(),
            core,
            subscriptions: Mutex::new(HashMap::new()),
        })
    }

    #[napi(getter)]
    pub fn session_id(&self) -> String {
        self.core.session_id()
    }

    /// Resolves with the run's result; rejects with the core error's `code`.
    #[napi(ts_return_type = "Promise<RunResult>")]
    pub fn run<'env>(
        &self,
        env: &'env Env,
        input: Arg<String>,
    ) -> Result<PromiseRaw<'env, JsRunResult>, Thrown> {
        let input = input.0;
        // The core claims the run slot here, on the JS thread, before the Promise is
        // returned: a `cancel()` right after `run()` reaches this run, and a second `run()`
        // is refused with `run_in_progress` (as a rejection, like every run error).
        // The slot is handed back with the outcome and freed only here, as the Promise
        // settles: a `run()` issued before that is refused, never squeezed in between.
        let started = self.core.start_run_holding_slot(input).map_err(CodedError::from);
        env.spawn_future_with_callback(
            async move {
                Ok(match started {
                    Ok(run) => {
                        let (outcome, slot) = run.await;
                        (outcome.map_err(CodedError::from), Some(slot))
                    }
                    Err(e) => (Err(e), None),
                })
            },
            move |env: &'env Env, (outcome, _slot): (Result<RunOutcome, CodedError>, Option<RunSlot>)| {
                outcome
                    .map(JsRunResult::from)
                    .map_err(|e| rejection(env, e))
            },
        )
        .map_err(internal)
    }

    /// One compression attempt now, with the compressor's usual checks (CMP-6); resolves
    /// `skipped` when no compressor is configured. Like `run()`, it claims the run slot
    /// here, on the JS thread: it rejects with `run_in_progress` while a run is active, and
    /// a `run()` issued before it settles (even in the same tick) is refused.
    #[napi(ts_return_type = "Promise<CompressResult>")]
    pub fn compress_now<'env>(
        &self,
        env: &'env Env,
    ) -> Result<PromiseRaw<'env, CompressResult>, Thrown> {
        let started = self.core.start_compress_now_holding_slot().map_err(CodedError::from);
        env.spawn_future_with_callback(
            async move {
                Ok(match started {
                    Ok(attempt) => {
                        let (result, slot) = attempt.await;
                        (Ok(result), Some(slot))
                    }
                    Err(e) => (Err(e), None),
                })
            },
            move |env: &'env Env, (result, _slot): (Result<arkagent::compress::CompressResult, CodedError>, Option<RunSlot>)| {
                result
                    .map(CompressResult::from)
                    .map_err(|e| rejection(env, e))
            },
        )
        .map_err(internal)
    }

    /// Releases this runtime's session in its store (STORE-6) so another runtime can open
    /// it now rather than when this one is garbage-collected; what was committed stays,
    /// nothing more is committed. False when no store is attached. Throws
    /// `run_in_progress` during a run.
    #[napi]
    pub fn detach_store(&self) -> Result<bool, Thrown> {
        self.core.detach_store().map_err(thrown)
    }

    #[napi]
    pub fn cancel(&self) {
        self.core.cancel();
    }

    #[napi]
    pub fn export_state(&self) -> Result<String, Thrown> {
        self.core.export_state().map_err(thrown)
    }

    /// Validates and claims the run slot here, on the JS thread (throwing `invalid_json`,
    /// `invalid_state`, `run_in_progress`); without a store the state is replaced before
    /// this returns. With one, the store write runs off the JS thread and the state is
    /// replaced only when it succeeded (else the Promise rejects with the store's code and
    /// the old state stays); the slot is freed as the Promise settles.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn import_state<'env>(
        &self,
        env: &'env Env,
        state_json: Arg<String>,
    ) -> Result<PromiseRaw<'env, ()>, Thrown> {
        let import = self.core.start_import_state_holding_slot(&state_json.0).map_err(thrown)?;
        env.spawn_future_with_callback(
            async move { Ok(import.await) },
            move |env: &'env Env, (result, _slot): (Result<(), arkagent::ArkAgentError>, Option<RunSlot>)| {
                result.map_err(|e| rejection(env, CodedError::from(e)))
            },
        )
        .map_err(internal)
    }

    #[napi]
    pub fn history_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.core.messages()).map_err(|e| thrown(e.into()))
    }

    /// The episodes compressed out of the live history, oldest first.
    #[napi]
    pub fn episodic_memories(&self) -> Vec<EpisodicMemory> {
        self.core
            .episodic_memories()
            .into_iter()
            .map(EpisodicMemory::from)
            .collect()
    }

    /// Every episode, oldest first, read through the memory service (MEM-1).
    #[napi]
    pub fn list_episodes(&self) -> Vec<EpisodicMemory> {
        self.memory
            .list_episodes()
            .into_iter()
            .map(EpisodicMemory::from)
            .collect()
    }

    /// The episode with this snapshot id, or `undefined` (MEM-1).
    #[napi]
    pub fn find_episode(&self, snapshot_id: Arg<String>) -> Optional<EpisodicMemory> {
        optional(
            self.memory
                .find_episode(&snapshot_id.0)
                .map(EpisodicMemory::from),
        )
    }

    #[napi]
    pub fn usages(&self) -> Vec<JsModelUsage> {
        self.core.usages().iter().map(JsModelUsage::from).collect()
    }

    #[napi(ts_args_type = "listener: AgentEventListener")]
    pub fn subscribe(&self, listener: Arg<JsFunction<'_, JsAgentEvent>>) -> Result<u32, Thrown> {
        let observer = JsObserver::new(listener.0).map_err(internal)?;
        let subscription = self.core.subscribe(Arc::new(observer));
        let id = u32::try_from(subscription.id()).map_err(|_| {
            napi_ohos::Error::new("invalid_state".to_owned(), "too many subscriptions")
        })?;
        self.lock_subscriptions().insert(id, subscription);
        Ok(id)
    }

    /// Throws `invalid_argument` for an id that is not a non-negative integer; an unknown
    /// id returns false.
    #[napi]
    pub fn unsubscribe(&self, subscription_id: Arg<f64>) -> Result<bool, Thrown> {
        let id: u32 = argument(subscription_id.0, "subscriptionId")?;
        Ok(self.lock_subscriptions().remove(&id).is_some())
    }

    /// The one documented total of what this session cost (SUB-6): its own calls
    /// (compression included) plus every delegated child's.
    #[napi]
    pub fn total_usage(&self) -> UsageTotals {
        self.core.total_usage().into()
    }

    /// Session ids of the sub-agents running now.
    #[napi]
    pub fn active_children(&self) -> Vec<String> {
        self.core.active_children()
    }

    /// This runtime's sub-agents: running, ended (the last 100) and totals (ISO-4). Empty
    /// when no worker is registered and clone is off.
    #[napi]
    pub fn sub_agents(&self) -> SubAgentRegistryView {
        SubAgentRegistryView::of(self.core.sub_agent_registry().as_deref())
    }

    /// Force-completes every running sub-agent of this session ("session-closed") and
    /// cancels it; returns how many. Call when the session closes.
    #[napi]
    pub fn close_sub_agents(&self) -> u32 {
        let Some(registry) = self.core.sub_agent_registry() else {
            return 0;
        };
        let now_ms = self.core.config().clock.now_ms();
        let closed = registry.force_complete_all(&self.core.session_id(), now_ms);
        u32::try_from(closed).unwrap_or(u32::MAX)
    }

    /// ISO-1/ISO-4, the seed's per-child `forceComplete(reason)`: ends the running
    /// sub-agent `id` with `reason` and cancels it; false when it is not running. Throws
    /// `invalid_argument` for a blank reason.
    #[napi]
    pub fn force_complete_sub_agent(&self, id: Arg<String>, reason: Arg<String>) -> Result<bool, Thrown> {
        if reason.0.trim().is_empty() {
            return Err(napi_ohos::Error::new("invalid_argument".to_owned(), "reason is blank".to_owned()));
        }
        let now_ms = self.core.config().clock.now_ms();
        Ok(self
            .core
            .sub_agent_registry()
            .is_some_and(|r| r.force_complete(&id.0, &reason.0, now_ms)))
    }

    /// ISO-4, the seed's `cleanup(maxAgeMs)`: drops sub-agents that ended more than
    /// `maxAgeMs` ago and force-completes ("stale") running ones started more than
    /// `maxAgeMs` ago; returns how many.
    #[napi]
    pub fn cleanup_sub_agents(&self, max_age_ms: Arg<f64>) -> Result<f64, Thrown> {
        let max_age_ms: u64 = argument(max_age_ms.0, "maxAgeMs")?;
        let now_ms = self.core.config().clock.now_ms();
        Ok(self
            .core
            .sub_agent_registry()
            .map_or(0, |r| r.cleanup(max_age_ms, now_ms)) as f64)
    }

    /// This runtime's memory namespace (MEM-4), a live handle.
    #[napi]
    pub fn memory(&self) -> crate::parity::MemoryNamespace {
        self.core.working_memory().into()
    }

    /// ISO-7: runs the tasks through delegation in parallel batches of `maxConcurrency`
    /// (default 3, capped by the policy), one batch at a time; a failing task never
    /// cancels its siblings; results keep the input order. It counts as a run: it claims
    /// the run slot here (a `run()` meanwhile is refused with `run_in_progress`), per-run
    /// budgets apply and `cancel()` stops it. Rejects with `run_in_progress` or
    /// `delegation_not_configured`.
    #[napi(
        ts_args_type = "tasks: DecomposedTask[], maxConcurrency?: number",
        ts_return_type = "Promise<DecomposedResult[]>"
    )]
    pub fn run_decomposed<'env>(
        &self,
        env: &'env Env,
        tasks: Arg<Vec<JsDecomposedTask>>,
        max_concurrency: Arg<Option<f64>>,
    ) -> Result<PromiseRaw<'env, Vec<DecomposedResult>>, Thrown> {
        let tasks = tasks.0;
        let concurrency = match max_concurrency.0 {
            Some(v) => argument(v, "maxConcurrency")?,
            None => DEFAULT_DECOMPOSE_CONCURRENCY,
        };
        let tasks = tasks.into_iter().map(Into::into).collect();
        let started = self
            .core
            .start_run_decomposed_holding_slot(tasks, concurrency)
            .map_err(CodedError::from);
        env.spawn_future_with_callback(
            async move {
                Ok(match started {
                    Ok(run) => {
                        let (outcome, slot) = run.await;
                        (outcome.map_err(CodedError::from), Some(slot))
                    }
                    Err(e) => (Err(e), None),
                })
            },
            move |env: &'env Env, (outcome, _slot): (Result<Vec<arkagent::ToolResult>, CodedError>, Option<RunSlot>)| {
                outcome
                    .map(|results| results.into_iter().map(DecomposedResult::from).collect())
                    .map_err(|e| rejection(env, e))
            },
        )
        .map_err(internal)
    }

    /// Stores `entryJson` under `id` in this runtime's own memory namespace (MEM-4).
    /// `tier`: "working" | "short_term". Throws `invalid_argument` for another tier,
    /// `invalid_json` for an unparsable entry.
    #[napi]
    pub fn memory_store(
        &self,
        tier: Arg<String>,
        id: Arg<String>,
        entry_json: Arg<String>,
    ) -> Result<(), Thrown> {
        let tier = memory_tier(&tier.0)?;
        let entry: serde_json::Value =
            serde_json::from_str(&entry_json.0).map_err(|e| thrown(e.into()))?;
        self.core.working_memory().store(tier, &id.0, entry);
        Ok(())
    }

    /// The entry stored under `id` in this runtime's namespace, as JSON, or undefined.
    #[napi]
    pub fn memory_recall(
        &self,
        tier: Arg<String>,
        id: Arg<String>,
    ) -> Result<Optional<String>, Thrown> {
        let tier = memory_tier(&tier.0)?;
        Ok(optional(
            self.core
                .working_memory()
                .recall(tier, &id.0)
                .map(|entry| entry.to_string()),
        ))
    }
}

impl AgentRuntime {
    fn lock_subscriptions(&self) -> MutexGuard<'_, HashMap<u32, Subscription>> {
        // The map holds no invariant a panic could break.
        self.subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
