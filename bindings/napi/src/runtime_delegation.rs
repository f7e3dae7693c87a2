//! `AgentRuntime`'s delegation methods (SUB-6, ISO-1, ISO-4, ISO-7): totals, the running
//! and ended sub-agents, force-completion, cleanup and decomposed runs. A second
//! `#[napi] impl` block of the class declared in `runtime` (napi registers both blocks'
//! members on the one JS class); each method delegates to the core runtime.

use arkagent::subagent::DEFAULT_DECOMPOSE_CONCURRENCY;
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::PromiseRaw;
use napi_ohos::Env;

use crate::args::Arg;
use crate::codes::ModuleCode;
use crate::error::Thrown;
use crate::numbers::argument;
use crate::runtime::{settle_holding_slot, AgentRuntime};
use crate::sub_agents::{DecomposedResult, JsDecomposedTask, SubAgentRegistryView};
use crate::usage::UsageTotals;

#[napi]
impl AgentRuntime {
    /// The one documented total of what this session cost (SUB-6): its own calls
    /// (compression included) plus every delegated child's.
    #[napi]
    pub fn total_usage(&self) -> UsageTotals {
        self.core().total_usage().into()
    }

    /// Session ids of the sub-agents running now.
    #[napi]
    pub fn active_children(&self) -> Vec<String> {
        self.core().active_children()
    }

    /// This runtime's sub-agents: running, ended (the last 100) and totals (ISO-4). Empty
    /// when no worker is registered and clone is off.
    #[napi]
    pub fn sub_agents(&self) -> SubAgentRegistryView {
        SubAgentRegistryView::of(self.core().sub_agent_registry().as_deref())
    }

    /// Force-completes every running sub-agent of this session ("session-closed") and
    /// cancels it; returns how many. Call when the session closes.
    #[napi]
    pub fn close_sub_agents(&self) -> u32 {
        let Some(registry) = self.core().sub_agent_registry() else {
            return 0;
        };
        let now_ms = self.core().config().clock.now_ms();
        let closed = registry.force_complete_all(&self.core().session_id(), now_ms);
        u32::try_from(closed).unwrap_or(u32::MAX)
    }

    /// ISO-1/ISO-4, the seed's per-child `forceComplete(reason)`: ends the running
    /// sub-agent `id` with `reason` and cancels it; false when it is not running. Throws
    /// `invalid_argument` for a blank reason.
    #[napi]
    pub fn force_complete_sub_agent(&self, id: Arg<String>, reason: Arg<String>) -> Result<bool, Thrown> {
        if reason.0.trim().is_empty() {
            return Err(napi_ohos::Error::new(ModuleCode::InvalidArgument.to_owned_code(), "reason is blank".to_owned()));
        }
        let now_ms = self.core().config().clock.now_ms();
        Ok(self
            .core()
            .sub_agent_registry()
            .is_some_and(|r| r.force_complete(&id.0, &reason.0, now_ms)))
    }

    /// ISO-4, the seed's `cleanup(maxAgeMs)`: drops sub-agents that ended more than
    /// `maxAgeMs` ago and force-completes ("stale") running ones started more than
    /// `maxAgeMs` ago; returns how many.
    #[napi]
    pub fn cleanup_sub_agents(&self, max_age_ms: Arg<f64>) -> Result<f64, Thrown> {
        let max_age_ms: u64 = argument(max_age_ms.0, "maxAgeMs")?;
        let now_ms = self.core().config().clock.now_ms();
        Ok(self
            .core()
            .sub_agent_registry()
            .map_or(0, |r| r.cleanup(max_age_ms, now_ms)) as f64)
    }

    /// ISO-7: runs the tasks through delegation in parallel batches of `maxConcurrency`
    /// (default 3, capped by the policy), one batch at a time; a failing task never
    /// cancels its siblings; results keep the input order. It counts as a run: it claims
    /// the run slot here (a `run()` meanwhile is refused with `run_in_progress`), per-run
    /// budgets apply and `cancel()` stops it. Rejects with `run_in_progress` or
    /// `delegation_not_configured`. Listeners see it as a run (the core emits the
    /// events): `run_started`, the children's `sub_agent` events, `run_finished`.
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
        let started = self.core().start_run_decomposed_holding_slot(tasks, concurrency);
        settle_holding_slot(env, started, |outcome: Result<Vec<arkagent::ToolResult>, _>| {
            outcome.map(|results| results.into_iter().map(DecomposedResult::from).collect())
        })
    }
}
