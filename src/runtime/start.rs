//! The ways to start the three operations that take the run slot — a run, a compression
//! attempt, a decomposed job (and an import, in `import_export.rs`) — and the slot itself.
//! Each operation has one starter that claims the slot *now* and whose future hands the
//! slot over ([`RunSlot`]); the other forms are that starter with the slot dropped at the
//! end of the future, or awaited.

use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::agent::{AgentRuntime, Inner};
use super::events::EventKind;
use super::outcome::{CompressionTrigger, RunOutcome, RunStatus};
use crate::error::{ArkAgentError, ErrorCode};
use crate::compress::CompressResult;
use crate::history::Content;
use crate::subagent::{run_decomposed_tasks, DecomposedTask};
use crate::tools::{ToolContext, ToolResult};

/// A runtime's run slot, held past the end of a run or compression attempt (see
/// [`AgentRuntime::start_compress_now_holding_slot`]); dropping it frees the slot.
#[must_use = "dropping a RunSlot frees the run slot"]
pub struct RunSlot {
    _active: ActiveRun,
}

impl RunSlot {
    pub(super) fn new(active: ActiveRun) -> Self {
        Self { _active: active }
    }
}

impl std::fmt::Debug for RunSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunSlot")
    }
}

/// Holds the run slot; clears it however the run ends (including a dropped future).
pub(super) struct ActiveRun {
    pub(super) inner: Arc<Inner>,
    pub(super) cancel: CancellationToken,
}

impl Drop for ActiveRun {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.inner.active_run.lock() {
            *slot = None;
        }
    }
}

/// A slot-holding future with the slot freed as soon as the operation ends.
async fn release<T>(holding: impl Future<Output = (T, RunSlot)>) -> T {
    holding.await.0
}

impl AgentRuntime {
    /// Runs the loop for one user input until a final answer, `max_iterations` or
    /// cancellation. Errors: `run_in_progress`, `approval_pending` (a turn waits for approval: answer it and [`resume_run`](Self::resume_run) first), `invalid_config` (the id generator gives only run ids this session already has), or the model call's [`LlmError`](crate::LlmError).
    /// The history then stays paired: when the very first model call of the run failed
    /// (the model produced nothing), the input is taken out again so the history is as
    /// before the run (a compression committed meanwhile stays) — a retry does not send
    /// the input twice, and an input too large for the model cannot wedge the session;
    /// after a later call failed, it ends with the last tool results. (A sub-agent keeps
    /// its task in its record.)
    ///
    /// The input is text (`"hi"`) or ordered parts ([`Content::Parts`](crate::history::Content)):
    /// photos with the text (IMG-1). An image the model's bounds refuse
    /// (`image_unsupported_type`, `image_too_large`, `too_many_images`) fails the run
    /// before it starts, nothing written.
    pub async fn run(&self, input: impl Into<Content>) -> Result<RunOutcome, ArkAgentError> {
        self.start_run(input)?.await
    }

    /// Claims the run slot *now* and returns the run as a `'static` future. A
    /// [`cancel`](Self::cancel) right after this call is never lost, and a second start
    /// fails with `run_in_progress` at once — what bindings that spawn the future need.
    /// Dropping the future unclaimed releases the slot.
    pub fn start_run(&self, input: impl Into<Content>) -> Result<impl Future<Output = Result<RunOutcome, ArkAgentError>> + Send + 'static, ArkAgentError> {
        Ok(release(self.start_run_holding_slot(input)?))
    }

    /// [`start_run`](Self::start_run) whose future also hands over the run slot, like
    /// [`start_compress_now_holding_slot`](Self::start_compress_now_holding_slot).
    pub fn start_run_holding_slot(
        &self,
        input: impl Into<Content>,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        self.begin_run(input.into(), None)
    }

    /// [`start_run`](Self::start_run) whose cancellation also follows `parent`: cancelling
    /// `parent` cancels the run at once, even mid-poll (a sub-agent's budget or forced
    /// completion).
    pub(crate) fn start_run_linked(
        &self,
        input: impl Into<Content>,
        parent: Option<&CancellationToken>,
    ) -> Result<impl Future<Output = Result<RunOutcome, ArkAgentError>> + Send + 'static, ArkAgentError> {
        Ok(release(self.begin_run(input.into(), parent)?))
    }

    /// The one starter of a run (not generic: one run future in the library, PERF-9).
    fn begin_run(
        &self,
        input: Content,
        parent: Option<&CancellationToken>,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim_linked(parent)?;
        // TOOL-1: a turn waiting for approval is answered and resumed first.
        active.inner.refuse_while_pending()?;
        let run_id = active.inner.new_run_id()?;
        let span = tracing::info_span!("arkagent.run", run_id = %run_id);
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            let outcome = inner.run_loop(input, &run_id, &active.cancel).await;
            (outcome, RunSlot::new(active))
        }
        .instrument(span))
    }

    /// Runs one compression attempt now with the compressor's usual checks (no-op
    /// `skipped` result when none is configured). Errors: `run_in_progress`.
    pub async fn compress_now(&self) -> Result<CompressResult, ArkAgentError> {
        Ok(self.start_compress_now()?.await)
    }

    /// [`compress_now`](Self::compress_now) claiming the run slot *now* (like
    /// [`start_run`](Self::start_run)), for bindings that spawn the future.
    pub fn start_compress_now(&self) -> Result<impl Future<Output = CompressResult> + Send + 'static, ArkAgentError> {
        Ok(release(self.start_compress_now_holding_slot()?))
    }

    /// [`start_compress_now`](Self::start_compress_now) whose future also hands over the
    /// run slot: it stays taken until the returned [`RunSlot`] is dropped. A binding drops
    /// it only when it settles its Promise, so a `run()` issued before the Promise settles
    /// is refused with `run_in_progress` on every path (skipped attempts included).
    pub fn start_compress_now_holding_slot(
        &self,
    ) -> Result<impl Future<Output = (CompressResult, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim()?;
        // TOOL-1: the history must not change under a paused turn.
        active.inner.refuse_while_pending()?;
        let run_id = self.inner.config.id_generator.next_id();
        Ok(async move {
            let inner = Arc::clone(&active.inner);
            let result = inner.maybe_compress_context(&run_id, &active.cancel, CompressionTrigger::Manual, None).await;
            (result, RunSlot::new(active))
        })
    }

    /// ISO-7: runs decomposed tasks through the delegation mechanism in parallel batches
    /// of `max_concurrency` (default 3, capped by the policy's concurrency), one batch at a
    /// time; a failing task never cancels its siblings; results keep the input order. It
    /// counts as a run: per-run budgets apply and [`cancel`](Self::cancel) stops it.
    /// Errors: `run_in_progress`, `delegation_not_configured`.
    ///
    /// Observers see it as a run (CORE-5): `run_started` first, its `input` the task
    /// descriptions one per line; the children's `sub_agent` events; `run_finished` last,
    /// with status `completed` (a task's failure is in its result) or `cancelled` after
    /// [`cancel`](Self::cancel), `iterations` 0 (it makes no model call of its own) and
    /// its `usage`: its children's. Every event carries the job's run id, which the
    /// children's events name as their `parent_run_id`.
    pub async fn run_decomposed(&self, tasks: &[DecomposedTask], max_concurrency: usize) -> Result<Vec<ToolResult>, ArkAgentError> {
        self.start_run_decomposed(tasks.to_vec(), max_concurrency)?.await
    }

    /// [`run_decomposed`](Self::run_decomposed) claiming the run slot *now*, for bindings
    /// that spawn the future.
    pub fn start_run_decomposed(
        &self,
        tasks: Vec<DecomposedTask>,
        max_concurrency: usize,
    ) -> Result<impl Future<Output = Result<Vec<ToolResult>, ArkAgentError>> + Send + 'static, ArkAgentError> {
        Ok(release(self.start_run_decomposed_holding_slot(tasks, max_concurrency)?))
    }

    /// [`start_run_decomposed`](Self::start_run_decomposed) whose future also hands over
    /// the run slot, like [`start_compress_now_holding_slot`](Self::start_compress_now_holding_slot).
    pub fn start_run_decomposed_holding_slot(
        &self,
        tasks: Vec<DecomposedTask>,
        max_concurrency: usize,
    ) -> Result<impl Future<Output = (Result<Vec<ToolResult>, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let (Some(tool), Some(service)) = (self.inner.delegate.clone(), self.inner.sub_agents.clone()) else {
            return Err(ArkAgentError::config(ErrorCode::DelegationNotConfigured, "no workers and no clone: nothing to delegate to"));
        };
        let active = self.claim()?;
        let run_id = self.inner.new_run_id()?;
        service.start_run(&run_id);
        let ctx = ToolContext {
            session_id: self.session_id(),
            run_id,
            cancel: active.cancel.clone(),
            abort: Default::default(),
            memory: self.inner.memory.clone(),
            episodes: Some(self.memory()),
        };
        let batch = service.batch_size(max_concurrency);
        let input = tasks.iter().map(|t| t.task_description.as_str()).collect::<Vec<_>>().join("\n");
        Ok(async move {
            let inner = &active.inner;
            inner.run_usage.start(&inner.session.snapshot());
            inner.emit(&ctx.run_id, EventKind::RunStarted { input });
            let results = run_decomposed_tasks(tool.as_ref(), &tasks, batch, &ctx).await;
            // STORE-2: the sub-agent records are a commit point. A failed commit is
            // retried at the next one (the records stay in the state).
            if let Err(e) = inner.commit_point(&ctx.run_id) {
                tracing::warn!(code = e.code().as_str(), "could not commit sub-agent records; retried at the next commit point");
            }
            let status = if ctx.cancel.is_cancelled() { RunStatus::Cancelled } else { RunStatus::Completed };
            inner.finish(&ctx.run_id, status, 0, None);
            (Ok(results), RunSlot::new(active))
        })
    }

    /// Cancels the active run, if any: in-flight HTTP and tools stop being awaited, each
    /// unanswered tool call gets a `cancelled` tool result, and `run` returns
    /// [`RunStatus::Cancelled`](super::outcome::RunStatus::Cancelled). Returns true when a run was
    /// active (or starting).
    pub fn cancel(&self) -> bool {
        match self.inner.active_run.lock() {
            Ok(slot) => slot.as_ref().map(|t| t.cancel()).is_some(),
            Err(_) => false,
        }
    }

    /// Cancels the active run, if any, and refuses every later one with
    /// [`LlmError::Cancelled`](crate::LlmError::Cancelled): what a binding does when its host
    /// frees the runtime while another thread may be starting a run on it (a run that
    /// claimed the slot just after a plain [`cancel`](Self::cancel) would go on, with
    /// nobody left to answer or cancel it: issue 42).
    pub fn close(&self) {
        if let Ok(slot) = self.inner.active_run.lock() {
            self.inner.closed.store(true, std::sync::atomic::Ordering::SeqCst);
            if let Some(token) = slot.as_ref() {
                token.cancel();
            }
        }
    }

    /// True while a run is active.
    pub fn is_running(&self) -> bool {
        self.inner.active_run.lock().map(|a| a.is_some()).unwrap_or(false)
    }

    pub(super) fn claim(&self) -> Result<ActiveRun, ArkAgentError> {
        self.claim_linked(None)
    }

    fn claim_linked(&self, parent: Option<&CancellationToken>) -> Result<ActiveRun, ArkAgentError> {
        // An answer being made finishes first; the next one sees the slot taken.
        let _answers = self.inner.hold_answers();
        let mut slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
        if slot.is_some() {
            return Err(ArkAgentError::RunInProgress);
        }
        if self.inner.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(crate::LlmError::Cancelled.into());
        }
        let cancel = parent.map_or_else(CancellationToken::new, CancellationToken::child_token);
        *slot = Some(cancel.clone());
        Ok(ActiveRun { inner: Arc::clone(&self.inner), cancel })
    }
}
