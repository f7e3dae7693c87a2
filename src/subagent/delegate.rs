//! The `delegate_task` tool and the service behind it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
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
use crate::runtime::{AgentEvent, AgentObserver, AgentRuntime, AgentRuntimeConfig, Emitter, EventKind, RunStatus};
use crate::session::StateView;
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
    /// Tools per role (ISO-2); defaults to the seed's table. `None` = every tool the
    /// parent may use: a child's tools are always the parent's allowed tools ∩ its
    /// factory's ∩ its role's, so no role widens what the parent may use.
    pub role_whitelists: BTreeMap<String, ToolWhitelist>,
    /// Tokens one child may use before it is force-completed (ISO-5), its own
    /// sub-agents' included (`max_depth` > 1); `None` = no cap.
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
/// no `delegate_task`, no delegation settings, and the isolated session id. (Below
/// `max_depth` the runtime then gives the child its parent's delegation settings — never
/// the factory's.)
pub fn force_worker_config(mut config: AgentRuntimeConfig, session_id: String) -> AgentRuntimeConfig {
    let mut tools = build_worker_tool_registry(&config.tools);
    if tools.has(DELEGATE_TASK_TOOL_NAME) {
        tools.unregister(DELEGATE_TASK_TOOL_NAME);
    }
    config.tools = tools;
    config.delegation = None;
    bind_child_session(&mut config, session_id);
    config
}

/// A child's session id, which is also its memory namespace (ISO-3).
fn bind_child_session(config: &mut AgentRuntimeConfig, session_id: String) {
    config.memory_namespace = session_id.clone();
    config.session_id = Some(session_id);
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

/// The budgets one delegation tree shares (SUB-3): a root runtime and every descendant
/// it delegates to, at any depth. Running children are counted in the registry (the one
/// source of truth) per depth of the tree; the per-run count lives here.
pub(crate) struct DelegationBudget {
    tree: u64,
    this_run: Mutex<u32>,
}

/// Tree ids are only compared, never shown: a process-wide counter suffices.
static NEXT_TREE: AtomicU64 = AtomicU64::new(1);

impl DelegationBudget {
    fn new() -> Arc<Self> {
        Arc::new(Self { tree: NEXT_TREE.fetch_add(1, Ordering::Relaxed), this_run: Mutex::new(0) })
    }

    fn this_run(&self) -> std::sync::MutexGuard<'_, u32> {
        self.this_run.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Everything `delegate_task` needs from its parent runtime.
pub(crate) struct SubAgentService {
    config: DelegationConfig,
    parent_config: AgentRuntimeConfig,
    transport: Arc<dyn HttpTransport>,
    state: StateView,
    emitter: Emitter,
    depth: u32,
    budget: Arc<DelegationBudget>,
}

impl SubAgentService {
    /// The service of a runtime at `depth`: a root (depth 0) starts a delegation tree; a
    /// child below `max_depth` joins its parent's tree through `budget`. `None` when
    /// delegation is off, and always for a child at `max_depth` or without its tree's
    /// budget (SUB-4: such a child is a worker and never delegates).
    pub(crate) fn new(
        parent_config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        state: StateView,
        emitter: Emitter,
        depth: u32,
        budget: Option<Arc<DelegationBudget>>,
    ) -> Option<Arc<Self>> {
        let config = parent_config.delegation.clone().filter(DelegationConfig::is_enabled)?;
        let budget = match budget {
            None if depth == 0 => DelegationBudget::new(),
            Some(budget) if depth > 0 && depth < config.policy.max_depth => budget,
            _ => return None,
        };
        Some(Arc::new(Self { config, parent_config, transport, state, emitter, depth, budget }))
    }

    /// A new run of the root: the tree's per-run budget starts again. A nested child's
    /// runs never reset it (the budget is per run of the root).
    pub(crate) fn start_run(&self) {
        if self.depth == 0 {
            *self.budget.this_run() = 0;
        }
    }

    fn session_id(&self) -> String {
        self.state.session_id()
    }

    /// Session ids of this runtime's children running now: a view of the registry, so it
    /// always agrees with what the registry lists and closes.
    pub(crate) fn active_children(&self) -> Vec<String> {
        self.config.registry.active_ids_of(&self.session_id())
    }

    /// The registry children are tracked in.
    pub(crate) fn registry(&self) -> &Arc<SubAgentRegistry> {
        &self.config.registry
    }

    /// Batch size for decomposed tasks: the request, within the concurrency cap.
    pub(crate) fn batch_size(&self, requested: usize) -> usize {
        requested.clamp(1, self.config.policy.max_concurrent_children.max(1) as usize)
    }

    /// SUB-3 in the seed's order, without reserving anything: lets a delegation fail
    /// before its worker is built.
    fn check(&self) -> Result<(), &'static str> {
        let policy = &self.config.policy;
        if self.depth >= policy.max_depth {
            return Err("subagent_depth_exceeded");
        }
        if *self.budget.this_run() >= policy.max_delegations_per_run {
            return Err("subagent_run_budget_exceeded");
        }
        if self.config.registry.active_in_tree(self.budget.tree, self.depth + 1) >= policy.max_concurrent_children as usize {
            return Err("subagent_concurrent_budget_exceeded");
        }
        Ok(())
    }

    /// SUB-3 again, authoritatively: counts one delegation of the run and registers the
    /// child (with a fresh isolated session id, SUB-9) in the registry. Called only once
    /// the worker's config exists, so a delegation that fails earlier (unknown assignee,
    /// failing factory) consumes nothing. Host code (id generator) runs outside the
    /// registry's lock.
    fn reserve(&self, cancel: CancellationToken, make: impl Fn(String) -> SubAgentContext) -> Result<String, &'static str> {
        let policy = &self.config.policy;
        let registry = &self.config.registry;
        let mut this_run = self.budget.this_run();
        if self.depth >= policy.max_depth {
            return Err("subagent_depth_exceeded");
        }
        if *this_run >= policy.max_delegations_per_run {
            return Err("subagent_run_budget_exceeded");
        }
        let parent_session_id = self.session_id();
        let ids = &self.parent_config.id_generator;
        // A sibling of another tree may take the id between allocation and registration:
        // allocate again (bounded like SUB-9's own retries).
        for _ in 0..=16 {
            let id = allocate_isolated_session_id(&parent_session_id, "", &registry.active_ids(), &mut || ids.next_id());
            match registry.try_register(self.budget.tree, self.depth + 1, policy.max_concurrent_children as usize, make(id.clone()), cancel.clone()) {
                Ok(()) => {
                    *this_run += 1;
                    return Ok(id);
                }
                Err(true) => return Err("subagent_concurrent_budget_exceeded"),
                Err(false) => continue,
            }
        }
        Err("subagent_session_id_exhausted")
    }

    async fn worker_config(&self, assignee: &str) -> Result<AgentRuntimeConfig, &'static str> {
        if assignee.eq_ignore_ascii_case(CLONE_ASSIGNEE) {
            return if self.config.allow_clone { Ok(self.parent_config.clone()) } else { Err("subagent_unknown_assignee") };
        }
        let worker = self.config.workers.iter().find(|w| w.name == assignee).ok_or("subagent_unknown_assignee")?;
        worker.factory.create(&self.parent_config).await.map_err(|_| "subagent_factory_failed")
    }

    fn record_usage(&self, record: ChildUsageRecord) {
        self.state.append_child_usage(record);
    }
}

/// ISO-2: `None` = no restriction; otherwise the tools every list allows, in the order of
/// the first list that restricts.
fn intersect_tools(lists: [&ToolWhitelist; 3]) -> ToolWhitelist {
    lists.into_iter().fold(None, |acc: ToolWhitelist, list| match (acc, list) {
        (None, list) => list.clone(),
        (Some(acc), Some(list)) => Some(acc.into_iter().filter(|t| list.contains(t)).collect()),
        (acc, None) => acc,
    })
}

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
    meter: Option<Arc<Meter>>,
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
        self.end(usage);
        let messages = self.child.as_ref().map(AgentRuntime::messages);
        let now_ms = self.service.parent_config.clock.now_ms();
        self.service.config.registry.force_complete_with(&self.session_id, "cancelled", messages, now_ms);
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

/// Tracks a child's tokens, tools and model calls; trips the budget (ISO-5). The budget
/// covers the child's whole subtree: its own children's calls (`max_depth` > 1) reach it
/// as `sub_agent` events and count too.
struct Meter {
    budget: Option<u64>,
    tokens: Mutex<MeterState>,
    force: CancellationToken,
}

#[derive(Default)]
struct MeterState {
    spent: u64,
    /// Per runtime of the subtree (by session id) with a call in flight: that call's
    /// prompt estimate plus what it has streamed so far.
    pending: std::collections::HashMap<String, u64>,
    tools_used: Vec<String>,
    tripped: bool,
}

impl MeterState {
    /// The estimates of the calls in flight (a call cut off mid-stream reports no usage).
    fn in_flight(&self) -> u64 {
        self.pending.values().fold(0, |a, b| a.saturating_add(*b))
    }
}

impl Meter {
    fn lock(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Trips the budget when what was spent plus the calls in flight reaches it: cancels
    /// the child's run, and with it the calls in flight.
    fn charge(&self, state: &mut MeterState) {
        if let Some(budget) = self.budget {
            if state.spent.saturating_add(state.in_flight()) >= budget && !state.tripped {
                state.tripped = true;
                self.force.cancel();
            }
        }
    }

    /// A streamed delta of a call in flight: counted as it arrives (ISO-5).
    fn streamed(&self, state: &mut MeterState, session: &str, text: &str) {
        if let Some(pending) = state.pending.get_mut(session) {
            *pending = pending.saturating_add(estimate_tokens(text));
            self.charge(state);
        }
    }
}

impl AgentObserver for Meter {
    fn on_event(&self, event: &AgentEvent) {
        // A descendant's event arrives wrapped once per level below the child.
        let mut inner = event;
        while let EventKind::SubAgent(child) = &inner.kind {
            inner = &child.event;
        }
        let own = std::ptr::eq(inner, event);
        let session = inner.session_id.as_str();
        let mut state = self.lock();
        match &inner.kind {
            // Before the call: stop it if the prompt alone would cross the budget.
            EventKind::ModelRequest { estimated_prompt_tokens, .. } => {
                state.pending.insert(session.to_owned(), *estimated_prompt_tokens);
                self.charge(&mut state);
            }
            // While the answer streams in: it may cross the budget mid-call.
            EventKind::TextDelta { delta, .. } | EventKind::ReasoningDelta { delta, .. } => {
                self.streamed(&mut state, session, delta);
            }
            EventKind::ToolCallDelta { name, arguments_delta, .. } => {
                let text = format!("{}{arguments_delta}", name.as_deref().unwrap_or_default());
                self.streamed(&mut state, session, &text);
            }
            // Real usage where reported, the estimate otherwise.
            EventKind::ModelResponse { usage, .. } => {
                let estimate = state.pending.remove(session).unwrap_or_default();
                let used = usage.as_ref().map_or(estimate, |u| u.total_tokens);
                state.spent = state.spent.saturating_add(used);
                self.charge(&mut state);
            }
            EventKind::ToolCallStarted { name, .. } if own && !state.tools_used.contains(name) => state.tools_used.push(name.clone()),
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

fn cancelled() -> ToolResult {
    ToolResult::error("cancelled", "the sub-agent was cancelled")
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
            return ToolResult::error(e.code(), "the sub-agent could not be created");
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
                let code = e.code().to_owned();
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

        let meter = Arc::new(Meter { budget: service.config.child_token_budget, tokens: Mutex::default(), force: force.clone() });
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
            let m = meter.lock();
            // A call cut off mid-stream reports no usage: its estimate so far counts.
            (m.spent.saturating_add(m.in_flight()).max(usage.total_tokens), m.tools_used.clone(), m.tripped)
        };

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
        registered.finish(usage, record);

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

/// ISO-7: runs `tasks` through `delegate_task` in batches of `batch` (one mechanism for
/// both), one batch at a time; a failure never cancels its siblings; results keep the
/// input order.
pub(crate) async fn run_decomposed_tasks(tool: &DelegateTaskTool, tasks: &[DecomposedTask], batch: usize, ctx: &ToolContext) -> Vec<ToolResult> {
    let mut results = Vec::with_capacity(tasks.len());
    for (b, chunk) in tasks.chunks(batch.max(1)).enumerate() {
        // After cancel() no further batch starts: its tasks are answered `cancelled`.
        if ctx.cancel.is_cancelled() {
            results.extend(chunk.iter().map(|_| cancelled()));
            continue;
        }
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
