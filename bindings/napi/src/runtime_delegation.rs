//! `AgentRuntime`'s delegation methods (SUB-6, ISO-1, ISO-4, ISO-7): totals, the running
//! and ended sub-agents, force-completion, cleanup and decomposed runs. A second
//! `#[napi] impl` block of the class declared in `runtime` (napi registers both blocks'
//! members on the one JS class); each method delegates to the core runtime.

use arkagent::subagent::{RegistrySnapshot, DEFAULT_DECOMPOSE_CONCURRENCY};
use napi_derive_ohos::napi;
use napi_ohos::bindgen_prelude::PromiseRaw;
use napi_ohos::Env;
use serde_json::Value;

use crate::args::Arg;
use crate::codes::ModuleCode;
use crate::error::Thrown;
use crate::numbers::argument;
use crate::runtime::{settle_holding_slot, AgentRuntime};
use crate::records;
use crate::sub_agents::{DecomposedResult, JsDecomposedTask};

#[napi]
impl AgentRuntime {
    /// The one total of what this session cost (SUB-6): its own calls plus every delegated child's.
    #[napi(ts_return_type = "UsageTotals")]
    pub fn total_usage(&self) -> Value {
        records::to_js(&self.core().total_usage())
    }

    /// Session ids of this runtime's sub-agents running now — a view of the registry, so each
    /// is in subAgents().active and closeSubAgents() reaches it. After cancel(), a child is
    /// gone from both by the time run() resolves.
    #[napi]
    pub fn active_children(&self) -> Vec<String> {
        self.core().active_children()
    }

    /// This runtime's sub-agents: running, ended, totals (ISO-4). Empty without delegation.
    #[napi(ts_return_type = "SubAgentRegistryView")]
    pub fn sub_agents(&self) -> Value {
        records::to_js(&RegistrySnapshot::of(self.core().sub_agent_registry().as_deref()))
    }

    /// Force-completes (and cancels) every running sub-agent of this session, and theirs, with
    /// "session-closed"; returns how many direct children. It reaches every child
    /// activeChildren() lists, even one still being built (that one never starts). A
    /// delegation whose SubAgentFactory has not settled has no child yet: it is not listed
    /// and not reached (the child starts once the factory settles); cancel() the run to
    /// stop it. Each
    /// record in subAgents().history keeps what that child spent up to then (tokenCount,
    /// usage, toolsUsed, its messages), as forceCompleteSubAgent() does.
    #[napi]
    pub fn close_sub_agents(&self) -> u32 {
        let Some(registry) = self.core().sub_agent_registry() else {
            return 0;
        };
        let now_ms = self.core().config().clock.now_ms();
        let closed = registry.force_complete_all(&self.core().session_id(), now_ms);
        u32::try_from(closed).unwrap_or(u32::MAX)
    }

    /// ISO-1, the seed's per-child forceComplete(reason): ends the running sub-agent `id` (a
    /// session id from activeChildren() or subAgents().active) with `reason` (its
    /// forcedReason) and cancels its run; the delegate_task call is answered as forced.
    /// false when it is not running (or delegation is off). Throws "invalid_argument" for a
    /// blank reason. Its record in subAgents().history keeps what it spent up to then —
    /// tokenCount, usage (cached tokens, costs, callCount), toolsUsed, its messages — and
    /// subAgents().stats count it: once the run that delegated it has settled, stats.usage
    /// equals totalUsage().children, and so does stats.totalTokens unless a model call was
    /// in flight when it ended (then it also counts that call's prompt estimate, as the
    /// budget did; no usage reports it). The registry is this runtime's: after a resume or
    /// importState() the earlier children are in totalUsage() only.
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

    /// ISO-4, the seed's registry cleanup(maxAgeMs): drops sub-agents that ended more than
    /// `maxAgeMs` ago from subAgents().history and force-completes ("stale") running ones
    /// started more than `maxAgeMs` ago (their records keep what they spent, as
    /// forceCompleteSubAgent()); returns how many.
    #[napi]
    pub fn cleanup_sub_agents(&self, max_age_ms: Arg<f64>) -> Result<f64, Thrown> {
        let max_age_ms: u64 = argument(max_age_ms.0, "maxAgeMs")?;
        let now_ms = self.core().config().clock.now_ms();
        Ok(self
            .core()
            .sub_agent_registry()
            .map_or(0, |r| r.cleanup(max_age_ms, now_ms)) as f64)
    }

    /// Runs the tasks through delegation in parallel batches of maxConcurrency (default 3,
    /// capped by the policy's maxConcurrentChildren), one batch at a time (ISO-7); a failing
    /// task never cancels its siblings; results keep the input order. It counts as a run: it
    /// takes the run slot like run(), per-run budgets apply and cancel() stops it: no worker
    /// is built after cancel(), and the tasks not yet started answer "cancelled". Rejects
    /// with "run_in_progress", or "delegation_not_configured" without workers or clone.
    /// Listeners see it as a run: "run_started" first (input: the task descriptions, one per
    /// line), the children's "sub_agent" events, "run_finished" last (status "completed", or
    /// "cancelled" after cancel(); iterations 0; usage: its children's), all with the job's
    /// runId.
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
