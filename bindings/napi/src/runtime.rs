//! `AgentRuntime`: one conversation, delegating every call to the core runtime.

use std::collections::HashMap;
use std::future::{poll_fn, Future};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;

use arkagent::{ModelUsage, RunOutcome, Subscription};
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::PromiseRaw;
use napi_ohos::Env;

use crate::callback::JsFunction;
use crate::config::AgentRuntimeConfig;
use crate::error::{passthrough, rejection, thrown, CodedError, Thrown};
use crate::events::{JsAgentEvent, JsObserver};
use crate::memory::EpisodicMemory;
use crate::tools::ToolRegistry;
use crate::transport::{JsHttpRequest, JsTransport};

/// The outcome of one run.
#[napi(object, js_name = "RunResult")]
pub struct JsRunResult {
    pub run_id: String,
    pub status: String,
    pub final_text: Option<String>,
    pub iterations: u32,
}

impl From<RunOutcome> for JsRunResult {
    fn from(outcome: RunOutcome) -> Self {
        // The status string is the core's serde name ("completed", "max_iterations", …).
        let status = match serde_json::to_value(outcome.status) {
            Ok(serde_json::Value::String(s)) => s,
            _ => String::new(),
        };
        Self {
            run_id: outcome.run_id,
            status,
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
        }
    }
}

/// One conversation with a model and tools.
#[napi]
pub struct AgentRuntime {
    core: arkagent::AgentRuntime,
    /// Live JS listeners by subscription id; dropping one unsubscribes it.
    subscriptions: Mutex<HashMap<u32, Subscription>>,
    starting: Arc<StartingRun>,
}

/// Bridges the moment between `run()` returning its Promise and the core run starting on
/// a worker thread. The core registers a run (which `cancel()` reaches) only when its
/// future is first polled, so a `cancel()` issued right after `run()` would be lost; it is
/// remembered here and replayed on the core right after that first poll.
#[derive(Default)]
struct StartingRun {
    /// One flag per `run()` whose core run is not registered yet.
    pending: Mutex<Vec<Arc<AtomicBool>>>,
}

impl StartingRun {
    fn lock(&self) -> MutexGuard<'_, Vec<Arc<AtomicBool>>> {
        // Plain data: a poisoned lock holds a usable value.
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A run was requested: later `cancel()` calls are remembered for it.
    fn begin(&self) -> Arc<AtomicBool> {
        let flag = Arc::new(AtomicBool::new(false));
        self.lock().push(Arc::clone(&flag));
        flag
    }

    /// `cancel()` was called: remember it for runs that may not have started yet.
    fn cancel(&self) {
        for flag in self.lock().iter() {
            flag.store(true, Ordering::SeqCst);
        }
    }

    /// The core run is registered (or already finished): `cancel()` reaches it directly.
    fn started(&self, flag: &Arc<AtomicBool>) {
        self.lock().retain(|pending| !Arc::ptr_eq(pending, flag));
    }
}

#[napi]
impl AgentRuntime {
    /// Copies `config` and `tools`; later changes to them do not affect this runtime.
    #[napi(
        constructor,
        ts_args_type = "config: AgentRuntimeConfig, transport: HttpTransport, tools: ToolRegistry"
    )]
    pub fn new(
        config: &AgentRuntimeConfig,
        transport: JsFunction<'_, JsHttpRequest>,
        tools: &ToolRegistry,
    ) -> Result<Self, Thrown> {
        let mut config = config.core();
        config.tools = tools.core().clone();
        let transport = JsTransport::new(transport).map_err(passthrough)?;
        let core = arkagent::AgentRuntime::new(config, Arc::new(transport)).map_err(thrown)?;
        Ok(Self {
            core,
            subscriptions: Mutex::new(HashMap::new()),
            starting: Arc::default(),
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
        input: String,
    ) -> Result<PromiseRaw<'env, JsRunResult>, Thrown> {
        let core = self.core.clone();
        let starting = Arc::clone(&self.starting);
        let cancel_requested = starting.begin();
        env.spawn_future_with_callback(
            async move {
                let mut run = std::pin::pin!(core.run(&input));
                let first = poll_fn(|cx| Poll::Ready(run.as_mut().poll(cx))).await;
                starting.started(&cancel_requested);
                let outcome = match first {
                    Poll::Ready(outcome) => outcome,
                    Poll::Pending => {
                        if cancel_requested.load(Ordering::SeqCst) {
                            core.cancel();
                        }
                        run.await
                    }
                };
                Ok(outcome.map_err(CodedError::from))
            },
            move |env: &'env Env, outcome: Result<RunOutcome, CodedError>| {
                outcome
                    .map(JsRunResult::from)
                    .map_err(|e| rejection(env, e))
            },
        )
        .map_err(passthrough)
    }

    #[napi]
    pub fn cancel(&self) {
        self.starting.cancel();
        self.core.cancel();
    }

    #[napi]
    pub fn export_state(&self) -> Result<String, Thrown> {
        self.core.export_state().map_err(thrown)
    }

    #[napi]
    pub fn import_state(&self, state_json: String) -> Result<(), Thrown> {
        self.core.import_state(&state_json).map_err(thrown)
    }

    #[napi]
    pub fn history_json(&self) -> Result<String, Thrown> {
        serde_json::to_string(&self.core.messages()).map_err(|e| thrown(e.into()))
    }

    /// The episodes compressed out of the live history, oldest first.
    #[napi]
    pub fn episodic_memories(&self) -> Vec<EpisodicMemory> {
        self.core
            .state()
            .history
            .episodic_memories
            .into_iter()
            .map(EpisodicMemory::from)
            .collect()
    }

    #[napi]
    pub fn usages(&self) -> Vec<JsModelUsage> {
        self.core.usages().iter().map(JsModelUsage::from).collect()
    }

    #[napi(ts_args_type = "listener: AgentEventListener")]
    pub fn subscribe(&self, listener: JsFunction<'_, JsAgentEvent>) -> Result<u32, Thrown> {
        let observer = JsObserver::new(listener).map_err(passthrough)?;
        let subscription = self.core.subscribe(Arc::new(observer));
        let id = u32::try_from(subscription.id()).map_err(|_| {
            napi_ohos::Error::new("invalid_state".to_owned(), "too many subscriptions")
        })?;
        self.lock_subscriptions().insert(id, subscription);
        Ok(id)
    }

    #[napi]
    pub fn unsubscribe(&self, subscription_id: u32) -> bool {
        self.lock_subscriptions().remove(&subscription_id).is_some()
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
