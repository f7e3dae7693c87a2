//! The `delegate_task` tool and the service behind it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{
    allocate_isolated_session_id, condense_parent_context, default_role_whitelists, summarize_result, ChildUsageRecord,
    ChildUsageSummary, SubAgentContext, SubAgentDefinition, SubAgentPolicy, SubAgentRegistry, SubAgentResult, SubAgentStatus,
    ToolWhitelist, CLONE_ASSIGNEE, DELEGATE_TASK_TOOL_NAME, GENERAL_ROLE, SUB_AGENT_SERVICE_ID,
};
use crate::memory::estimate_tokens;
use crate::error::ArkAgentError;
use crate::history::{HistoryInvariants, Message};
use crate::llm::HttpTransport;
use crate::runtime::{AgentEvent, AgentObserver, AgentRuntime, AgentRuntimeConfig, Emitter, EventKind, RunStatus, StateCell};
use crate::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};

/// The reason (and tool error code) when a child hits its token budget (ISO-5).
pub const TOKEN_BUDGET_EXCEEDED: &str = "token-budget-exceeded";

/// Who may be delegated to, and the budgets.
#[derive(Clone, Debug)]
pub struct DelegationConfig {
    /// Budgets.
    pub policy: SubAgentPolicy,
    /// Named workers.
    pub workers: Vec<SubAgentDefinition>,
    /// Whether `clone` (a copy of the parent's config) may be used.
    pub allow_clone: bool,
    /// Tools per role (ISO-2); defaults to the seed's table. `None` = every tool.
    pub role_whitelists: BTreeMap<String, ToolWhitelist>,
    /// Tokens one child may use before it is force-completed (ISO-5); `None` = no cap.
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

/// One task of a decomposed job (ISO-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecomposedTask {
    /// Worker name or `clone`.
    pub assignee: String,
    /// The task.
    pub task_description: String,
    /// Role (whitelist), default `general`.
    #[serde(default)]
    pub role: Option<String>,
    /// Explicit inherited context.
    #[serde(default)]
    pub context: Option<String>,
}

impl DelegationConfig {
    /// Adds a worker. Errors: `subagent_name_duplicate`.
    pub fn register(&mut self, definition: SubAgentDefinition) -> Result<(), ArkAgentError> {
        if self.workers.iter().any(|w| w.name == definition.name) {
            return Err(ArkAgentError::config("subagent_name_duplicate", format!("sub-agent {:?} is already registered", definition.name)));
        }
        self.workers.push(definition);
        Ok(())
    }

    /// True when `delegate_task` is offered (some worker, or clone).
    pub fn is_enabled(&self) -> bool {
        self.allow_clone || !self.workers.is_empty()
    }
}

/// The `delegate_task` definition (SUB-1), listing the assignees.
pub fn delegate_task_definition(config: &DelegationConfig) -> ToolDefinition {
    let mut assignees: Vec<String> = config.workers.iter().map(|w| format!("\"{}\": {}", w.name, w.description)).collect();
    if config.allow_clone {
        assignees.push(format!("\"{CLONE_ASSIGNEE}\": a copy of yourself with a fresh context"));
    }
    let roles: Vec<&str> = config.role_whitelists.keys().map(String::as_str).collect();
    ToolDefinition::new(
        DELEGATE_TASK_TOOL_NAME,
        format!("Delegate a sub-task to a worker sub-agent with isolated context. Assignees: {}.", assignees.join("; ")),
        json!({
            "type": "object",
            "properties": {
                "assignee": {"type": "string", "description": "Worker name or \"clone\". \"clone\" reuses the parent config."},
                "task_description": {"type": "string", "description": "Natural-language task description."},
                "role": {"type": "string", "enum": roles, "description": "Limits the sub-agent's tools (default \"general\": all)."},
                "context": {"type": "string", "description": "What the sub-agent needs to know; by default it inherits a condensed view of this conversation."}
            },
            "required": ["assignee", "task_description"]
        }),
    )
}

/// SUB-4 layer 1: a worker's registry never contains `delegate_task` — excluded when
/// copied, then unregistered again defensively.
pub fn build_worker_tool_registry(source: &ToolRegistry) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    source.copy_into_excluding(&mut tools, &[DELEGATE_TASK_TOOL_NAME]);
    tools.unregister(DELEGATE_TASK_TOOL_NAME);
    tools
}

/// SUB-4 layer 2: the final worker config is hard-stripped, whatever the factory did:
/// no `delegate_task`, no delegation settings, and the isolated session id.
pub fn force_worker_config(mut config: AgentRuntimeConfig, session_id: String) -> AgentRuntimeConfig {
    let mut tools = build_worker_tool_registry(&config.tools);
    if tools.has(DELEGATE_TASK_TOOL_NAME) {
        tools.unregister(DELEGATE_TASK_TOOL_NAME);
    }
    config.tools = tools;
    config.delegation = None;
    config.memory_namespace = session_id.clone();
    config.session_id = Some(session_id);
    config
}

/// SUB-5: at most the last `count` messages of `messages`, as the largest window that is
/// paired on its own; the trailing assistant message whose calls are still running (the
/// delegation itself) is never included.
pub fn parent_context_slice(messages: &[Message], count: usize) -> Vec<Message> {
    if count == 0 {
        return Vec::new();
    }
    let len = messages.len();
    for end in (len.saturating_sub(count + 4)..=len).rev() {
        for start in end.saturating_sub(count)..end {
            if HistoryInvariants::tool_calls_paired(&messages[start..end]) {
                return messages[start..end].to_vec();
            }
        }
    }
    Vec::new()
}

/// A child event as the parent's observers see it (SUB-7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubAgentChildEvent {
    /// The parent's session.
    pub parent_session_id: String,
    /// The parent's run.
    pub parent_run_id: String,
    /// The child's session.
    pub child_session_id: String,
    /// The child's run.
    pub child_run_id: String,
    /// Worker name or `clone`.
    pub assignee: String,
    /// The delegated task.
    pub task_description: String,
    /// The child's depth (1 for a child of the root).
    pub depth: u32,
    /// The child's event, unchanged.
    pub event: Box<AgentEvent>,
}

#[derive(Default)]
struct Counters {
    this_run: u32,
    active: Vec<String>,
}

/// Everything `delegate_task` needs from its parent runtime.
pub(crate) struct SubAgentService {
    config: DelegationConfig,
    parent_config: AgentRuntimeConfig,
    transport: Arc<dyn HttpTransport>,
    state: StateCell,
    emitter: Emitter,
    depth: u32,
    counters: Mutex<Counters>,
}

impl SubAgentService {
    pub(crate) fn new(
        parent_config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        state: StateCell,
        emitter: Emitter,
        depth: u32,
    ) -> Option<Arc<Self>> {
        let config = parent_config.delegation.clone().filter(DelegationConfig::is_enabled)?;
        Some(Arc::new(Self { config, parent_config, transport, state, emitter, depth, counters: Mutex::default() }))
    }

    /// A new run of the parent: the per-run budget starts again.
    pub(crate) fn start_run(&self) {
        if let Ok(mut c) = self.counters.lock() {
            c.this_run = 0;
        }
    }

    /// Session ids of the children running now.
    pub(crate) fn active_children(&self) -> Vec<String> {
        self.counters.lock().map(|c| c.active.clone()).unwrap_or_default()
    }

    /// The registry children are tracked in.
    pub(crate) fn registry(&self) -> &Arc<SubAgentRegistry> {
        &self.config.registry
    }

    /// Batch size for decomposed tasks: the request, within the concurrency cap.
    pub(crate) fn batch_size(&self, requested: usize) -> usize {
        requested.clamp(1, self.config.policy.max_concurrent_children.max(1) as usize)
    }

    /// SUB-3, in the seed's order; on success reserves a slot and the child's session id.
    fn reserve(&self, parent_session_id: &str) -> Result<Slot<'_>, &'static str> {
        let policy = &self.config.policy;
        let mut c = self.counters.lock().map_err(|_| "subagent_internal")?;
        if self.depth >= policy.max_depth {
            return Err("subagent_depth_exceeded");
        }
        if c.this_run >= policy.max_delegations_per_run {
            return Err("subagent_run_budget_exceeded");
        }
        if c.active.len() >= policy.max_concurrent_children as usize {
            return Err("subagent_concurrent_budget_exceeded");
        }
        c.this_run += 1;
        let ids = &self.parent_config.id_generator;
        let session_id = allocate_isolated_session_id(parent_session_id, "", &c.active, &mut || ids.next_id());
        c.active.push(session_id.clone());
        Ok(Slot { service: self, session_id })
    }

    async fn worker_config(&self, assignee: &str) -> Result<AgentRuntimeConfig, &'static str> {
        if assignee.eq_ignore_ascii_case(CLONE_ASSIGNEE) {
            return if self.config.allow_clone { Ok(self.parent_config.clone()) } else { Err("subagent_unknown_assignee") };
        }
        let worker = self.config.workers.iter().find(|w| w.name == assignee).ok_or("subagent_unknown_assignee")?;
        worker.factory.create(&self.parent_config).await.map_err(|_| "subagent_factory_failed")
    }

    fn record_usage(&self, record: ChildUsageRecord) {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        Arc::make_mut(&mut guard).child_usages.push(record);
    }
}

/// A reserved concurrency slot; released however the delegation ends.
struct Slot<'a> {
    service: &'a SubAgentService,
    session_id: String,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        if let Ok(mut c) = self.service.counters.lock() {
            c.active.retain(|id| *id != self.session_id);
        }
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

/// Tracks a child's tokens and tools; trips the budget (ISO-5).
struct Meter {
    budget: Option<u64>,
    tokens: Mutex<MeterState>,
    force: CancellationToken,
}

#[derive(Default)]
struct MeterState {
    spent: u64,
    pending_estimate: u64,
    tools_used: Vec<String>,
    tripped: bool,
}

impl Meter {
    fn charge(&self, state: &mut MeterState, extra: u64) {
        if let Some(budget) = self.budget {
            if state.spent.saturating_add(extra) >= budget && !state.tripped {
                state.tripped = true;
                self.force.cancel();
            }
        }
    }
}

impl AgentObserver for Meter {
    fn on_event(&self, event: &AgentEvent) {
        let Ok(mut state) = self.tokens.lock() else { return };
        match &event.kind {
            // Before the call: stop it if the prompt alone would cross the budget.
            EventKind::ModelRequest { estimated_prompt_tokens, .. } => {
                state.pending_estimate = *estimated_prompt_tokens;
                let extra = state.pending_estimate;
                self.charge(&mut state, extra);
            }
            // Real usage where reported, the estimate otherwise.
            EventKind::ModelResponse { usage, .. } => {
                let used = usage.as_ref().map_or(state.pending_estimate, |u| u.total_tokens);
                state.spent = state.spent.saturating_add(used);
                state.pending_estimate = 0;
                self.charge(&mut state, 0);
            }
            EventKind::TextDelta { delta, .. } if state.pending_estimate > 0 => {
                state.pending_estimate = state.pending_estimate.saturating_add(estimate_tokens(delta));
            }
            EventKind::ToolCallStarted { name, .. } if !state.tools_used.contains(name) => state.tools_used.push(name.clone()),
            _ => {}
        }
    }
}

/// Executes `delegate_task`.
pub(crate) struct DelegateTaskTool {
    pub(crate) service: Arc<SubAgentService>,
}

fn string_arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
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
        let slot = match service.reserve(&ctx.session_id) {
            Ok(slot) => slot,
            Err(code) => return ToolResult::error(code, "delegation rejected by the sub-agent policy"),
        };
        let mut config = match service.worker_config(assignee).await {
            Ok(c) => force_worker_config(c, slot.session_id.clone()),
            Err(code) => return ToolResult::error(code, "the sub-agent could not be created"),
        };
        config.allowed_tools = whitelist.clone();
        let max_iterations = config.max_iterations;
        let child = match AgentRuntime::new_child(config, Arc::clone(&service.transport), service.depth + 1) {
            Ok(child) => child,
            Err(e) => return ToolResult::error(e.code(), "the sub-agent could not be created"),
        };
        // SUB-5 slice as the child's starting history; ISO-6 context in its task.
        let parent = Arc::clone(&service.state.lock().unwrap_or_else(|p| p.into_inner()));
        child.seed_history(parent_context_slice(&parent.history.messages, service.config.policy.parent_context_message_count));
        let inherited = string_arg(args, "context").map(str::to_owned).unwrap_or_else(|| condense_parent_context(&parent.history.messages));
        drop(parent);
        let input = if inherited.is_empty() { task.to_owned() } else { format!("{task}\n\n## Inherited context\n{inherited}") };

        let clock = &service.parent_config.clock;
        // Cancelling the parent's run, a forced completion in the registry, or the token
        // budget cancels this token, and with it the child's run at once.
        let force = ctx.cancel.child_token();
        service.config.registry.register(
            SubAgentContext {
                id: slot.session_id.clone(),
                parent_id: Some(ctx.session_id.clone()),
                role: role.to_owned(),
                assignee: assignee.to_owned(),
                task: task.to_owned(),
                messages: Vec::new(),
                allowed_tools: whitelist,
                max_iterations,
                status: SubAgentStatus::Active,
                result: None,
                started_at_ms: clock.now_ms(),
                ended_at_ms: None,
            },
            force.clone(),
        );
        let meter = Arc::new(Meter { budget: service.config.child_token_budget, tokens: Mutex::default(), force: force.clone() });
        let _meter = child.subscribe(meter.clone());
        let _bridge = child.subscribe(Arc::new(Bridge {
            emitter: service.emitter.clone(),
            parent_session_id: ctx.session_id.clone(),
            parent_run_id: ctx.run_id.clone(),
            assignee: assignee.to_owned(),
            task_description: task.to_owned(),
            depth: service.depth + 1,
        }));

        // The child runs to its end even when cancelled, so its history stays paired and
        // nothing outlives the delegation.
        let span = tracing::info_span!("arkagent.delegate", assignee, role, child_session = %slot.session_id, depth = service.depth + 1);
        let outcome = match child.start_run_linked(input, Some(&force)) {
            Ok(run) => run.instrument(span).await,
            Err(e) => Err(e),
        };
        let usage = ChildUsageSummary::from_usages(&child.usages());
        service.record_usage(ChildUsageRecord {
            call_id: call.call_id.clone(),
            child_session_id: slot.session_id.clone(),
            assignee: assignee.to_owned(),
            usage,
        });
        let (tokens, tools_used, budget_tripped) = meter
            .tokens
            .lock()
            .map(|m| (m.spent.max(usage.total_tokens), m.tools_used.clone(), m.tripped))
            .unwrap_or_default();

        // Why it ended, as a code (SUB-8: codes only, never the child's raw error text).
        let (status, final_text, code) = match &outcome {
            Ok(o) if o.status == RunStatus::Completed => ("completed", o.final_text.clone().unwrap_or_default(), None),
            _ if budget_tripped => ("forced", String::new(), Some(TOKEN_BUDGET_EXCEEDED.to_owned())),
            Ok(o) if o.status == RunStatus::MaxIterations => ("forced", String::new(), Some("max-iterations".to_owned())),
            Ok(_) if force.is_cancelled() && !ctx.cancel.is_cancelled() => ("forced", String::new(), Some("force-completed".to_owned())),
            Ok(_) => ("forced", String::new(), Some("cancelled".to_owned())),
            Err(e) => ("failed", String::new(), Some(e.code().to_owned())),
        };
        let summary = summarize_result(&final_text);
        let mut record = SubAgentResult {
            summary: summary.clone(),
            artifacts: if summary == final_text { Vec::new() } else { vec![final_text] },
            token_count: tokens,
            tools_used,
            forced_reason: None,
            error_code: None,
        };
        match status {
            "forced" => record.forced_reason = code.clone(),
            "failed" => record.error_code = code.clone(),
            _ => {}
        }
        let messages = child.messages();
        service.config.registry.complete(&slot.session_id, record, messages, clock.now_ms());

        let metadata = json!({
            "service": SUB_AGENT_SERVICE_ID,
            "assignee": assignee,
            "role": role,
            "child_session_id": slot.session_id,
            "child_run_id": outcome.as_ref().map(|o| o.run_id.clone()).ok(),
            "status": status,
            "reason": code,
            "child_usage": usage,
        });
        let mut result = match code {
            None => ToolResult::ok(summary),
            Some(code) if code == "cancelled" => ToolResult::error("cancelled", "the sub-agent was cancelled"),
            Some(code) if status == "forced" => ToolResult::error(&code, &format!("the sub-agent was stopped: {code}")),
            Some(code) => ToolResult::error(&code, "the sub-agent failed"),
        };
        result.metadata = Some(metadata);
        result
    }
}

/// ISO-7: runs `tasks` through `delegate_task` in batches of `batch` (one mechanism for
/// both), one batch at a time; a failure never cancels its siblings; results keep the
/// input order.
pub(crate) async fn run_decomposed_tasks(tool: &DelegateTaskTool, tasks: &[DecomposedTask], batch: usize, ctx: &ToolContext) -> Vec<ToolResult> {
    let mut results = Vec::with_capacity(tasks.len());
    for (b, chunk) in tasks.chunks(batch.max(1)).enumerate() {
        let calls = chunk.iter().enumerate().map(|(i, t)| {
            let mut args = json!({"assignee": t.assignee, "task_description": t.task_description});
            if let Some(role) = &t.role {
                args["role"] = json!(role);
            }
            if let Some(context) = &t.context {
                args["context"] = json!(context);
            }
            let call = ToolInvocation { call_id: format!("decomposed-{}", b * batch + i), name: DELEGATE_TASK_TOOL_NAME.into(), arguments: args };
            tool.execute(call, ctx.clone())
        });
        results.extend(futures::future::join_all(calls).await);
    }
    results
}
