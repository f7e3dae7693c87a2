//! A delegation's child (SUB-1..SUB-9, ISO-1..ISO-7): the `delegate_task` tool builds the
//! worker runtime, runs it on its own history under the tree's budgets, bridges and
//! meters its events, and answers with its summarized result.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use tracing::Instrument;

use super::agent::AgentRuntime;
use super::delegation::{string_arg, DelegateTaskTool, SubAgentService};
use super::events::{AgentEvent, AgentObserver, Emitter, EventKind, SubAgentChildEvent};
use super::outcome::RunStatus;
use super::worker_config::{bind_child_session, force_worker_config};
use crate::history::{ChildUsageRecord, ChildUsageSummary};
use crate::subagent::{
    cancelled, condense_parent_context, intersect_tools, parent_context_slice, summarize_result, Meter, SubAgentContext, SubAgentResult,
    SubAgentStatus, DELEGATE_TASK_TOOL_NAME, GENERAL_ROLE, SUB_AGENT_SERVICE_ID, TOKEN_BUDGET_EXCEEDED,
};
use crate::tools::{ToolContext, ToolExecutor, ToolInvocation, ToolResult};

/// One registered delegation, ended exactly once: by [`finish`](Self::finish), or — when
/// the delegation future is dropped (the parent's run was cancelled) or it returns
/// early — on drop, as force-completed with `cancelled`. Either way the child leaves the
/// registry's active set, its usage is recorded and its memory namespace is freed.
struct Registered<'a> {
    service: &'a SubAgentService,
    session_id: String,
    call_id: String,
    assignee: String,
    child: Option<AgentRuntime>,
    meter: Option<Arc<MeterObserver>>,
    ended: bool,
}

impl Registered<'_> {
    /// The child's usage (SUB-6): its own calls — `call_count` is every model call it
    /// made that the model answered (usage reported or not) or that was cut off
    /// mid-answer, plus the summarizer calls of its committed compressions — plus its own
    /// children's (`max_depth` > 1), so the root's total covers the whole tree, each call
    /// once.
    fn usage(&self) -> ChildUsageSummary {
        let Some(child) = &self.child else { return ChildUsageSummary::default() };
        ChildUsageSummary::from_usages(&child.usages()).plus(child.total_usage().children)
    }

    fn end(&mut self, usage: ChildUsageSummary) {
        self.ended = true;
        if let Some(child) = &self.child {
            self.service.record_usage(ChildUsageRecord {
                call_id: self.call_id.clone(),
                child_session_id: self.session_id.clone(),
                assignee: self.assignee.clone(),
                usage,
            });
            // MEM-4: the child's working and short-term memory ends with it.
            child.working_memory().clear();
        }
    }

    fn finish(mut self, usage: ChildUsageSummary, result: SubAgentResult) {
        self.end(usage);
        let messages = self.child.as_ref().map(AgentRuntime::messages).unwrap_or_default();
        self.service.config.registry.complete(&self.session_id, result, messages, self.service.parent_config.clock.now_ms());
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let usage = self.usage();
        self.end(usage.clone());
        let messages = self.child.as_ref().map(AgentRuntime::messages);
        let now_ms = self.service.parent_config.clock.now_ms();
        self.service.config.registry.force_complete_with(&self.session_id, "cancelled", messages, Some(usage), now_ms);
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

/// Feeds a child's events to its [`Meter`] (ISO-5). A descendant's event arrives wrapped
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
            EventKind::ToolCallStarted { name, .. } if own => self.0.tool_started(name),
            _ => {}
        }
    }
}

#[async_trait]
impl ToolExecutor for DelegateTaskTool {
    async fn execute(&self, call: ToolInvocation, ctx: ToolContext) -> ToolResult {
        let service = &self.service;
        let args = &call.arguments;
        let (Some(assignee), Some(task)) = (string_arg(args, "assignee"), string_arg(args, "task_description")) else {
            return ToolResult::error("invalid_tool_arguments", "assignee and task_description are required non-empty strings");
        };
        let role = string_arg(args, "role").unwrap_or(GENERAL_ROLE);
        let Some(whitelist) = service.config.role_whitelists.get(role).cloned() else {
            return ToolResult::error("subagent_unknown_role", &format!("unknown role {role:?}"));
        };
        // After cancel() no new worker is built (a decomposed batch, a queued call).
        if ctx.cancel.is_cancelled() {
            return cancelled();
        }
        if let Err(code) = service.check() {
            return ToolResult::error(code, "delegation rejected by the sub-agent policy");
        }
        // Unknown assignees and failing factories fail here, before anything is reserved:
        // they consume none of the run's delegations (SUB-3).
        let worker = match service.worker_config(assignee).await {
            Ok(c) => c,
            Err(code) => return ToolResult::error(code, "the sub-agent could not be created"),
        };
        if ctx.cancel.is_cancelled() {
            return cancelled();
        }
        // ISO-2: what the parent may use ∩ the factory's set ∩ the role's whitelist. The
        // `general` role restricts nothing of its own, so it never widens the parent's.
        let allowed = intersect_tools([&whitelist, &worker.allowed_tools, &service.parent_config.allowed_tools]);
        let max_iterations = worker.max_iterations;
        let depth = service.depth + 1;
        // The child's final config, checked before anything is reserved (a worker that
        // cannot be built consumes nothing); its session id comes with the reservation.
        let mut config = force_worker_config(worker, "child".to_owned()); // bound below
        config.allowed_tools = allowed.clone();
        // SUB-3 / ADR-0013: below max_depth the child may delegate once more, with the
        // parent's delegation settings and the tree's shared budgets; at max_depth it
        // stays hard-stripped (SUB-4). A whitelist without delegate_task keeps it a worker.
        let may_delegate = config.allowed_tools.as_ref().is_none_or(|a| a.iter().any(|t| t == DELEGATE_TASK_TOOL_NAME));
        if depth < service.config.policy.max_depth && may_delegate {
            config.delegation = Some(service.config.clone());
        }
        if let Err(e) = AgentRuntime::check_buildable(&config) {
            return ToolResult::error(e.code().as_str(), "the sub-agent could not be created");
        }
        let clock = &service.parent_config.clock;
        let started_at_ms = clock.now_ms();
        // Cancelling the parent's run, a forced completion in the registry (session
        // closed), or the token budget cancels this token, and with it the child's run.
        let force = ctx.cancel.child_token();
        let registered = service.reserve(force.clone(), |id| SubAgentContext {
            id,
            parent_id: Some(ctx.session_id.clone()),
            role: role.to_owned(),
            assignee: assignee.to_owned(),
            task: task.to_owned(),
            messages: Vec::new(),
            allowed_tools: allowed.clone(),
            max_iterations,
            status: SubAgentStatus::Active,
            result: None,
            started_at_ms,
            ended_at_ms: None,
        });
        let session_id = match registered {
            Ok(id) => id,
            Err(code) => return ToolResult::error(code, "delegation rejected by the sub-agent policy"),
        };
        let mut registered = Registered {
            service,
            session_id: session_id.clone(),
            call_id: call.call_id.clone(),
            assignee: assignee.to_owned(),
            child: None,
            meter: None,
            ended: false,
        };

        bind_child_session(&mut config, session_id.clone());
        let child = match AgentRuntime::new_child(config, Arc::clone(&service.transport), depth, Arc::clone(&service.budget)) {
            Ok(child) => child,
            Err(e) => {
                let code = e.code().as_str().to_owned();
                registered.finish(ChildUsageSummary::default(), SubAgentResult { error_code: Some(code.clone()), ..Default::default() });
                return ToolResult::error(&code, "the sub-agent could not be created");
            }
        };
        registered.child = Some(child.clone());
        // SUB-5 slice as the child's starting history; ISO-6 context in its task.
        let parent = service.state.snapshot();
        child.seed_history(parent_context_slice(&parent.history.messages, service.config.policy.parent_context_message_count));
        let inherited = string_arg(args, "context").map(str::to_owned).unwrap_or_else(|| condense_parent_context(&parent.history.messages));
        drop(parent);
        let input = if inherited.is_empty() { task.to_owned() } else { format!("{task}\n\n## Inherited context\n{inherited}") };

        let meter = Arc::new(MeterObserver(Meter::new(service.config.child_token_budget, force.clone())));
        registered.meter = Some(Arc::clone(&meter));
        let _meter = child.subscribe(meter.clone());
        let _bridge = child.subscribe(Arc::new(Bridge {
            emitter: service.emitter.clone(),
            parent_session_id: ctx.session_id.clone(),
            parent_run_id: ctx.run_id.clone(),
            assignee: assignee.to_owned(),
            task_description: task.to_owned(),
            depth,
        }));

        // The child runs to its end even when cancelled, so its history stays paired and
        // nothing outlives the delegation. A child force-completed before this point (its
        // session closed) starts cancelled and makes no model call.
        let span = tracing::info_span!("arkagent.delegate", assignee, role, child_session = %session_id, depth);
        let outcome = match child.start_run_linked(input, Some(&force)) {
            Ok(run) => run.instrument(span).await,
            Err(e) => Err(e),
        };
        let usage = registered.usage();
        let (tokens, tools_used, budget_tripped) = {
            let m = meter.0.lock();
            // A call cut off mid-stream reports no usage: its estimate so far counts.
            (m.spent().saturating_add(m.in_flight()).max(usage.total_tokens), m.tools_used.clone(), m.tripped)
        };

        // Why it ended, as a code (SUB-8: codes only, never the child's raw error text).
        let (status, final_text, code) = match &outcome {
            Ok(o) if o.status == RunStatus::Completed => ("completed", o.final_text.clone().unwrap_or_default(), None),
            _ if budget_tripped => ("forced", String::new(), Some(TOKEN_BUDGET_EXCEEDED.to_owned())),
            Ok(o) if o.status == RunStatus::MaxIterations => ("forced", String::new(), Some("max-iterations".to_owned())),
            Ok(_) if force.is_cancelled() && !ctx.cancel.is_cancelled() => ("forced", String::new(), Some("force-completed".to_owned())),
            Ok(_) => ("forced", String::new(), Some("cancelled".to_owned())),
            Err(e) => ("failed", String::new(), Some(e.code().as_str().to_owned())),
        };
        let summary = summarize_result(&final_text);
        let mut record = SubAgentResult {
            summary: summary.clone(),
            artifacts: if summary == final_text { Vec::new() } else { vec![final_text] },
            token_count: tokens,
            tools_used,
            forced_reason: None,
            error_code: None,
            usage: usage.clone(),
        };
        match status {
            "forced" => record.forced_reason = code.clone(),
            "failed" => record.error_code = code.clone(),
            _ => {}
        }
        registered.finish(usage.clone(), record);

        let metadata = json!({
            "service": SUB_AGENT_SERVICE_ID,
            "assignee": assignee,
            "role": role,
            "child_session_id": session_id,
            "child_run_id": outcome.as_ref().map(|o| o.run_id.clone()).ok(),
            "status": status,
            "reason": code,
            "child_usage": usage,
        });
        let mut result = match code {
            None => ToolResult::ok(summary),
            Some(code) if code == "cancelled" => cancelled(),
            Some(code) if status == "forced" => ToolResult::error(&code, &format!("the sub-agent was stopped: {code}")),
            Some(code) => ToolResult::error(&code, "the sub-agent failed"),
        };
        result.metadata = Some(metadata);
        result
    }
}
