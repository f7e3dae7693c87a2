//! The `delegate_task` tool and the service behind it.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{
    allocate_isolated_session_id, ChildUsageRecord, ChildUsageSummary, SubAgentDefinition, SubAgentPolicy, CLONE_ASSIGNEE,
    DELEGATE_TASK_TOOL_NAME, SUB_AGENT_SERVICE_ID,
};
use crate::error::ArkAgentError;
use crate::history::{HistoryInvariants, Message};
use crate::llm::HttpTransport;
use crate::runtime::{AgentEvent, AgentObserver, AgentRuntime, AgentRuntimeConfig, Emitter, EventKind, RunStatus, StateCell};
use crate::tools::{ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};

/// Who may be delegated to, and the budgets.
#[derive(Clone, Debug, Default)]
pub struct DelegationConfig {
    /// Budgets.
    pub policy: SubAgentPolicy,
    /// Named workers.
    pub workers: Vec<SubAgentDefinition>,
    /// Whether `clone` (a copy of the parent's config) may be used.
    pub allow_clone: bool,
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
    ToolDefinition::new(
        DELEGATE_TASK_TOOL_NAME,
        format!("Delegate a sub-task to a worker sub-agent with isolated context. Assignees: {}.", assignees.join("; ")),
        json!({
            "type": "object",
            "properties": {
                "assignee": {"type": "string", "description": "Worker name or \"clone\". \"clone\" reuses the parent config."},
                "task_description": {"type": "string", "description": "Natural-language task description."}
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

    fn worker_config(&self, assignee: &str) -> Result<AgentRuntimeConfig, &'static str> {
        if assignee.eq_ignore_ascii_case(CLONE_ASSIGNEE) {
            return if self.config.allow_clone { Ok(self.parent_config.clone()) } else { Err("subagent_unknown_assignee") };
        }
        let worker = self.config.workers.iter().find(|w| w.name == assignee).ok_or("subagent_unknown_assignee")?;
        worker.factory.create(&self.parent_config).map_err(|_| "subagent_factory_failed")
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
        let (Some(assignee), Some(task)) = (string_arg(&call.arguments, "assignee"), string_arg(&call.arguments, "task_description")) else {
            return ToolResult::error("invalid_tool_arguments", "assignee and task_description are required non-empty strings");
        };
        let slot = match service.reserve(&ctx.session_id) {
            Ok(slot) => slot,
            Err(code) => return ToolResult::error(code, "delegation rejected by the sub-agent policy"),
        };
        let config = match service.worker_config(assignee) {
            Ok(c) => force_worker_config(c, slot.session_id.clone()),
            Err(code) => return ToolResult::error(code, "the sub-agent could not be created"),
        };
        let child = match AgentRuntime::new_child(config, Arc::clone(&service.transport), service.depth + 1) {
            Ok(child) => child,
            Err(e) => return ToolResult::error(e.code(), "the sub-agent could not be created"),
        };
        let parent_messages = Arc::clone(&service.state.lock().unwrap_or_else(|p| p.into_inner()));
        child.seed_history(parent_context_slice(&parent_messages.history.messages, service.config.policy.parent_context_message_count));
        drop(parent_messages);
        let _bridge = child.subscribe(Arc::new(Bridge {
            emitter: service.emitter.clone(),
            parent_session_id: ctx.session_id.clone(),
            parent_run_id: ctx.run_id.clone(),
            assignee: assignee.to_owned(),
            task_description: task.to_owned(),
            depth: service.depth + 1,
        }));

        let outcome = match child.start_run(task) {
            Ok(run) => {
                let mut run = std::pin::pin!(run);
                tokio::select! {
                    biased;
                    result = &mut run => result,
                    _ = ctx.cancel.cancelled() => {
                        // Cancelling the parent cancels the child; wait for it to settle
                        // so its history stays paired and nothing outlives the parent.
                        child.cancel();
                        run.await
                    }
                }
            }
            Err(e) => Err(e),
        };
        let usage = ChildUsageSummary::from_usages(&child.usages());
        service.record_usage(ChildUsageRecord {
            call_id: call.call_id.clone(),
            child_session_id: slot.session_id.clone(),
            assignee: assignee.to_owned(),
            usage,
        });
        let status = match &outcome {
            Ok(o) => serde_json::to_value(o.status).unwrap_or(Value::Null),
            Err(_) => json!("failed"),
        };
        let metadata = json!({
            "service": SUB_AGENT_SERVICE_ID,
            "assignee": assignee,
            "child_session_id": slot.session_id,
            "child_run_id": outcome.as_ref().map(|o| o.run_id.clone()).ok(),
            "status": status,
            "child_usage": usage,
        });
        // SUB-8: a failed child reports only a code, never its raw error text.
        let mut result = match outcome {
            Ok(o) if o.status == RunStatus::Completed => ToolResult::ok(o.final_text.unwrap_or_default()),
            Ok(o) if o.status == RunStatus::Cancelled => ToolResult::error("cancelled", "the sub-agent was cancelled"),
            Ok(_) => ToolResult::error("subagent_max_iterations", "the sub-agent stopped at its iteration limit without an answer"),
            Err(e) => ToolResult::error(e.code(), "the sub-agent failed"),
        };
        result.metadata = Some(metadata);
        result
    }
}
