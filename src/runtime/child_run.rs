//! A delegation's child (SUB-1..SUB-9, ISO-1..ISO-7): the `delegate_task` tool builds the
//! worker runtime, runs it on its own history under the tree's budgets, bridges and
//! meters its events, and answers with its summarized result.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::agent::AgentRuntime;
use super::config::AgentRuntimeConfig;
use super::delegation::{string_arg, DelegateTaskTool, SubAgentService};
use super::events::{AgentEvent, AgentObserver, Emitter, EventKind, SubAgentChildEvent};
use super::outcome::{RunOutcome, RunStatus};
use super::worker_config::{bind_child_session, force_worker_config};
use crate::compress::CompressOutcome;
use crate::error::ArkAgentError;
use crate::history::{AgentState, ChildUsageRecord, ChildUsageSummary, Message};
use crate::session::StateView;
use crate::subagent::{
    cancelled, condense_parent_context, intersect_tools, parent_context_slice, summarize_result, ChildEnding, ChildProgress, ChildSpending, Meter,
    SubAgentContext, SubAgentResult, SubAgentStatus, DELEGATE_TASK_TOOL_NAME, GENERAL_ROLE, SUB_AGENT_SERVICE_ID,
};
use crate::tools::{ToolContext, ToolExecutor, ToolInvocation, ToolResult};

/// One registered delegation, ended exactly once: by [`finish`](Self::finish), or — when
/// the delegation future is dropped (a Rust caller dropped the parent's run future; a
/// cancel instead winds the child down to its end, see `tool_exec::run_one`) or it returns
/// early — on drop, as force-completed with `cancelled`. Either way the child leaves the
/// registry's active set (or settles the record a forced completion left there) with
/// what it spent, its usage is recorded and its memory namespace is freed.
struct Registered<'a> {
    service: &'a SubAgentService,
    session_id: String,
    call_id: String,
    assignee: String,
    child: Option<AgentRuntime>,
    /// The child's meter, once its run starts.
    meter: Option<Arc<MeterObserver>>,
    ended: bool,
}

impl Registered<'_> {
    /// What the child spent so far (see [`spending_of`]).
    fn spending(&self) -> ChildSpending {
        let Some(child) = &self.child else { return ChildSpending::default() };
        spending_of(&child.inner.session.snapshot(), self.meter.as_ref().map(|m| &m.0))
    }

    fn end(&mut self, usage: ChildUsageSummary) {
        self.ended = true;
        if let Some(child) = &self.child {
            self.service.record_usage(ChildUsageRecord {
                call_id: self.call_id.clone(),
                child_session_id: self.session_id.clone(),
                assignee: self.assignee.clone(),
                usage,
                discarded: false,
            });
            // MEM-4: the child's working and short-term memory ends with it.
            child.working_memory().clear();
        }
    }

    /// Ends the record with `result`; the registry's reason when it had force-completed
    /// the child meanwhile (its ending wins: SUB-8).
    fn finish(mut self, result: SubAgentResult, messages: Vec<Message>) -> Option<String> {
        self.finish_now(result, messages)
    }

    /// [`finish`](Self::finish) through a borrow (the drop then does nothing).
    fn finish_now(&mut self, result: SubAgentResult, messages: Vec<Message>) -> Option<String> {
        self.end(result.usage.clone());
        self.service.config.registry.conclude(&self.session_id, result, messages, self.service.parent_config.clock.now_ms())
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // CORE-4: the child's run was dropped mid-tool-cycle (nothing else writes its
        // session now); its open calls get results saying so, so its record stays paired.
        if let Some(child) = &self.child {
            let open = child.inner.session.snapshot().history.messages.last().map(|m| m.tool_calls().to_vec()).filter(|c| !c.is_empty());
            if let Some(calls) = open {
                child.inner.session.push_tool_results(&calls, calls.iter().map(|_| super::tool_exec::cancelled()).collect());
            }
        }
        let spending = self.spending();
        self.end(spending.usage.clone());
        let now_ms = self.service.parent_config.clock.now_ms();
        self.service.config.registry.abandon(&self.session_id, ChildEnding::Cancelled.as_str(), spending, now_ms);
    }
}

/// What a child spent (SUB-6, ISO-1, ISO-4), from its state and its meter: its usage —
/// its own calls (`call_count` is every model call it made that the model answered,
/// usage reported or not, or that was cut off mid-answer, plus the summarizer calls of
/// its committed compressions) plus its own children's (`max_depth` > 1), so the root's
/// total covers the whole tree, each call once —; its tokens, the larger of that usage
/// and what its meter counted (a call cut off mid-answer reports no usage: its estimate
/// so far counts); the tools it started; its messages.
fn spending_of(state: &AgentState, meter: Option<&Meter>) -> ChildSpending {
    let own_usage = ChildUsageSummary::from_usages(&state.usages);
    let usage = state.child_usages.iter().fold(own_usage.clone(), |sum, r| sum.plus(r.usage.clone()));
    let counted = meter.map(Meter::counted).unwrap_or_default();
    ChildSpending {
        token_count: counted.tokens.max(usage.total_tokens),
        own_tokens: counted.own_tokens.max(own_usage.total_tokens),
        usage,
        own_usage,
        tools_used: counted.tools_used,
        messages: state.history.messages.clone(),
    }
}

/// The registry's live view of a running child (ISO-4): its state cell and its meter,
/// read when a forced completion archives it. Both locks are leaves.
struct Progress {
    state: StateView,
    meter: Arc<MeterObserver>,
}

impl ChildProgress for Progress {
    fn spending(&self) -> ChildSpending {
        spending_of(&self.state.snapshot(), Some(&self.meter.0))
    }
}

/// Forwards a child's events to the parent's observers with correlation fields.
struct Bridge {
    emitter: Emitter,
    parent_session_id: String,
    parent_run_id: String,
    assignee: String,
    task_description: String,
    depth: u32,
}

impl AgentObserver for Bridge {
    fn on_event(&self, event: &AgentEvent) {
        self.emitter.emit(
            &self.parent_run_id,
            EventKind::SubAgent(SubAgentChildEvent {
                parent_session_id: self.parent_session_id.clone(),
                parent_run_id: self.parent_run_id.clone(),
                child_session_id: event.session_id.clone(),
                child_run_id: event.run_id.clone(),
                assignee: self.assignee.clone(),
                task_description: self.task_description.clone(),
                depth: self.depth,
                event: Box::new(event.clone()),
            }),
        );
    }
}

/// Feeds a child's events to its [`Meter`] (ISO-5): model requests, streamed deltas and
/// answers, and the summarizer calls of compressions. A descendant's event arrives wrapped
/// once per level below the child and counts too.
struct MeterObserver(Meter);

impl AgentObserver for MeterObserver {
    fn on_event(&self, event: &AgentEvent) {
        let mut inner = event;
        while let EventKind::SubAgent(child) = &inner.kind {
            inner = &child.event;
        }
        let own = std::ptr::eq(inner, event);
        let session = inner.session_id.as_str();
        match &inner.kind {
            EventKind::ModelRequest { estimated_prompt_tokens, .. } => self.0.requested(session, *estimated_prompt_tokens),
            EventKind::TextDelta { delta, .. } | EventKind::ReasoningDelta { delta, .. } => self.0.streamed(session, delta),
            EventKind::ToolCallDelta { name, arguments_delta, .. } => {
                let text = format!("{}{arguments_delta}", name.as_deref().unwrap_or_default());
                self.0.streamed(session, &text);
            }
            EventKind::ModelResponse { usage, .. } => self.0.answered(session, usage.as_ref().map(|u| u.total_tokens)),
            // Each summarizer call is counted by its estimate before it is made; the real
            // usage comes with the outcome and replaces the estimates.
            EventKind::SummarizerRequest { estimated_prompt_tokens } => self.0.summarizing(session, *estimated_prompt_tokens),
            EventKind::Compression { usage, outcome, .. } => {
                let tokens = usage.as_ref().map_or(0, |u| u.total_tokens);
                self.0.compressed(session, tokens, *outcome == CompressOutcome::Compressed)
            }
            EventKind::RunFinished { status: RunStatus::Failed, .. } => self.0.failed(session),
            EventKind::ToolCallStarted { name, .. } if own => self.0.tool_started(name),
            _ => {}
        }
    }
}

/// One delegation, checked and with its child's final config, before anything is reserved.
struct Delegation<'a> {
    service: &'a SubAgentService,
    ctx: &'a ToolContext,
    args: &'a Value,
    assignee: &'a str,
    task: &'a str,
    role: &'a str,
    config: AgentRuntimeConfig,
    depth: u32,
    /// Cancelling the parent's run, a forced completion in the registry (session closed),
    /// or the token budget cancels this token, and with it the child's run.
    force: CancellationToken,
}

/// What the child's run came to, and what it spent.
struct ChildRun {
    outcome: Result<RunOutcome, ArkAgentError>,
    spending: ChildSpending,
    budget_tripped: bool,
}

#[async_trait]
impl ToolExecutor for DelegateTaskTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        let delegation = match Delegation::prepare(&self.service, &call.arguments, &ctx).await {
            Ok(delegation) => delegation,
            Err(refused) => return refused,
        };
        let mut registered = match delegation.register(&call.call_id) {
            Ok(registered) => registered,
            Err(refused) => return refused,
        };
        let (child, input) = match delegation.build_child(&mut registered) {
            Ok(child) => child,
            Err(failed) => return failed,
        };
        let run = delegation.run(&child, input, &mut registered).await;
        delegation.conclude(registered, run)
    }
}

impl<'a> Delegation<'a> {
    /// Reads the call and builds the child's final config; refusals answer the call
    /// before anything is reserved (SUB-3: they consume none of the run's delegations).
    async fn prepare(service: &'a SubAgentService, args: &'a Value, ctx: &'a ToolContext) -> Result<Delegation<'a>, ToolResult> {
        let (Some(assignee), Some(task)) = (string_arg(args, "assignee"), string_arg(args, "task_description")) else {
            return Err(ToolResult::error("invalid_tool_arguments", "assignee and task_description are required non-empty strings"));
        };
        let role = string_arg(args, "role").unwrap_or(GENERAL_ROLE);
        let Some(whitelist) = service.config.role_whitelists.get(role).cloned() else {
            return Err(ToolResult::error("subagent_unknown_role", &format!("unknown role {role:?}")));
        };
        // After cancel() no new worker is built (a decomposed batch, a queued call).
        if ctx.cancel.is_cancelled() {
            return Err(cancelled());
        }
        service.check().map_err(|code| ToolResult::error(code, "delegation rejected by the sub-agent policy"))?;
        // Unknown assignees and failing factories fail here, before anything is reserved.
        // A cancel does not wait for a host's factory that has not answered yet.
        let worker = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return Err(cancelled()),
            worker = service.worker_config(assignee) => worker,
        };
        let worker = worker.map_err(|code| ToolResult::error(code, "the sub-agent could not be created"))?;
        if ctx.cancel.is_cancelled() {
            return Err(cancelled());
        }
        // ISO-2: what the parent may use ∩ the factory's set ∩ the role's whitelist. The
        // `general` role restricts nothing of its own, so it never widens the parent's.
        let allowed = intersect_tools([&whitelist, &worker.allowed_tools, &service.parent_config.allowed_tools]);
        let depth = service.depth + 1;
        // The child's final config, checked before anything is reserved (a worker that
        // cannot be built consumes nothing); its session id comes with the reservation.
        let mut config = force_worker_config(worker, "child".to_owned()); // bound below
        config.allowed_tools = allowed;
        // SUB-3 / ADR-0013: below max_depth the child may delegate once more, with the
        // parent's delegation settings and the tree's shared budgets; at max_depth it
        // stays hard-stripped (SUB-4). A whitelist without delegate_task keeps it a worker.
        let may_delegate = config.allowed_tools.as_ref().is_none_or(|a| a.iter().any(|t| t == DELEGATE_TASK_TOOL_NAME));
        if depth < service.config.policy.max_depth && may_delegate {
            config.delegation = Some(service.config.clone());
        }
        AgentRuntime::check_buildable(&config).map_err(|e| ToolResult::error(e.code().as_str(), "the sub-agent could not be created"))?;
        Ok(Self { service, ctx, args, assignee, task, role, config, depth, force: ctx.cancel.child_token() })
    }

    /// SUB-3: reserves the delegation and registers the child (ISO-4) with its fresh
    /// isolated session id (SUB-9).
    fn register(&self, call_id: &str) -> Result<Registered<'a>, ToolResult> {
        let service = self.service;
        let started_at_ms = service.parent_config.clock.now_ms();
        let session_id = service
            .reserve(self.force.clone(), |id| SubAgentContext {
                id,
                parent_id: Some(self.ctx.session_id.clone()),
                role: self.role.to_owned(),
                assignee: self.assignee.to_owned(),
                task: self.task.to_owned(),
                messages: Vec::new(),
                allowed_tools: self.config.allowed_tools.clone(),
                max_iterations: self.config.max_iterations,
                status: SubAgentStatus::Active,
                result: None,
                started_at_ms,
                ended_at_ms: None,
            })
            .map_err(|code| ToolResult::error(code, "delegation rejected by the sub-agent policy"))?;
        Ok(Registered {
            service,
            session_id,
            call_id: call_id.to_owned(),
            assignee: self.assignee.to_owned(),
            child: None,
            meter: None,
            ended: false,
        })
    }

    /// Builds the child runtime, seeds it with the parent's context slice (SUB-5) and
    /// returns it with its input (the task, with the inherited context, ISO-6).
    fn build_child(&self, registered: &mut Registered<'_>) -> Result<(AgentRuntime, String), ToolResult> {
        let service = self.service;
        let mut config = self.config.clone();
        bind_child_session(&mut config, registered.session_id.clone());
        let child = AgentRuntime::new_child(config, Arc::clone(&service.transport), self.depth, Arc::clone(&service.budget), service.place.child(&registered.session_id)).map_err(|e| {
            let code = e.code().as_str().to_owned();
            let failed = SubAgentResult { error_code: Some(code.clone()), ..Default::default() };
            registered.finish_now(failed, Vec::new());
            ToolResult::error(&code, "the sub-agent could not be created")
        })?;
        registered.child = Some(child.clone());
        let parent = service.state.snapshot();
        child.seed_history(parent_context_slice(&parent.history.messages, service.config.policy.parent_context_message_count));
        let inherited =
            string_arg(self.args, "context").map(str::to_owned).unwrap_or_else(|| condense_parent_context(&parent.history.messages));
        let task = self.task;
        Ok((child, if inherited.is_empty() { task.to_owned() } else { format!("{task}\n\n## Inherited context\n{inherited}") }))
    }

    /// Runs the child to its end, metered (ISO-5) and bridged (SUB-7). It runs to its end
    /// even when cancelled, so its history stays paired and nothing outlives the
    /// delegation; a child force-completed before this point (its session closed) starts
    /// cancelled and makes no model call.
    async fn run(&self, child: &AgentRuntime, input: String, registered: &mut Registered<'_>) -> ChildRun {
        let service = self.service;
        let meter = Meter::new(service.config.child_token_budget, self.force.clone(), registered.session_id.clone());
        let meter = Arc::new(MeterObserver(meter));
        let _meter = child.subscribe(meter.clone());
        registered.meter = Some(meter.clone());
        // ISO-4: a forced completion archives what the child spent up to then.
        service.config.registry.track(&registered.session_id, Arc::new(Progress { state: child.inner.session.view(), meter: meter.clone() }));
        let _bridge = child.subscribe(Arc::new(Bridge {
            emitter: service.emitter.clone(),
            parent_session_id: self.ctx.session_id.clone(),
            parent_run_id: self.ctx.run_id.clone(),
            assignee: self.assignee.to_owned(),
            task_description: self.task.to_owned(),
            depth: self.depth,
        }));
        let (assignee, role, depth) = (self.assignee, self.role, self.depth);
        let span = tracing::info_span!("arkagent.delegate", assignee, role, child_session = %registered.session_id, depth);
        let outcome = match child.start_run_linked(input, Some(&self.force)) {
            Ok(run) => run.instrument(span).await,
            Err(e) => Err(e),
        };
        ChildRun { outcome, spending: registered.spending(), budget_tripped: meter.0.counted().tripped }
    }

    /// Why the child ended (SUB-8: codes only, never the child's raw error text).
    fn ending(&self, run: &ChildRun) -> ChildEnding {
        match &run.outcome {
            Ok(o) if o.status == RunStatus::Completed => ChildEnding::Completed,
            _ if run.budget_tripped => ChildEnding::TokenBudgetExceeded,
            Ok(o) if o.status == RunStatus::MaxIterations => ChildEnding::MaxIterations,
            Ok(_) if self.force.is_cancelled() && !self.ctx.cancel.is_cancelled() => ChildEnding::ForceCompleted,
            Ok(_) => ChildEnding::Cancelled,
            Err(_) => ChildEnding::Failed,
        }
    }

    /// Records how the child ended in the registry and answers the call with its
    /// summarized result (ISO-3) and the metadata (SUB-6's `child_usage`).
    fn conclude(&self, registered: Registered<'_>, run: ChildRun) -> ToolResult {
        let ending = self.ending(&run);
        let code = ending_code(&run.outcome, ending);
        let final_text = match &run.outcome {
            Ok(o) if ending == ChildEnding::Completed => o.final_text.clone().unwrap_or_default(),
            _ => String::new(),
        };
        let summary = summarize_result(&final_text);
        let ChildRun { outcome, spending, .. } = run;
        let usage = spending.usage.clone();
        let record = SubAgentResult {
            summary: summary.clone(),
            artifacts: if summary == final_text { Vec::new() } else { vec![final_text] },
            token_count: spending.token_count,
            tools_used: spending.tools_used,
            forced_reason: code.clone().filter(|_| ending.is_forced()),
            error_code: code.clone().filter(|_| ending == ChildEnding::Failed),
            usage: usage.clone(),
        };
        let session_id = registered.session_id.clone();
        // SUB-8: a child the registry force-completed meanwhile is answered as its record
        // says — the registry's own endings keep their name, a host's reason is
        // `force-completed` — even when its run ended with a final answer.
        let (ending, code) = match registered.finish(record, spending.messages).map(|r| ChildEnding::parse(&r)) {
            None => (ending, code),
            Some(reason) => {
                let forced = reason.filter(|e| matches!(e, ChildEnding::SessionClosed | ChildEnding::Stale)).unwrap_or(ChildEnding::ForceCompleted);
                (forced, ending_code(&outcome, forced))
            }
        };
        let metadata = json!({
            "service": SUB_AGENT_SERVICE_ID,
            "assignee": self.assignee,
            "role": self.role,
            "child_session_id": session_id,
            "child_run_id": outcome.as_ref().map(|o| o.run_id.clone()).ok(),
            "status": ending.status(),
            "reason": code,
            "child_usage": usage,
        });
        let mut result = match code {
            None => ToolResult::ok(summary),
            Some(code) if code == ChildEnding::Cancelled.as_str() => cancelled(),
            Some(code) if ending == ChildEnding::Failed => ToolResult::error(&code, "the sub-agent failed"),
            Some(code) => ToolResult::error(&code, &format!("the sub-agent was stopped: {code}")),
        };
        result.metadata = Some(metadata);
        result
    }
}

/// The `delegate_task` answer's code for `ending` (SUB-8): none when completed, the
/// child's error code when it failed, the forced reason otherwise.
fn ending_code(outcome: &Result<RunOutcome, ArkAgentError>, ending: ChildEnding) -> Option<String> {
    match (outcome, ending) {
        (_, ChildEnding::Completed) => None,
        (Err(e), ChildEnding::Failed) => Some(e.code().as_str().to_owned()),
        (_, forced) => Some(forced.as_str().to_owned()),
    }
}
