//! Delegation's configuration (SUB-1..SUB-4): who may be delegated to and the budgets,
//! the named workers and their factories, the `delegate_task` definition, and the hard
//! strip of a worker's config.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;

use super::config::AgentRuntimeConfig;
use crate::error::ArkAgentError;
use crate::subagent::{
    build_worker_tool_registry, default_role_whitelists, SubAgentPolicy, SubAgentRegistry, ToolWhitelist, CLONE_ASSIGNEE,
    DELEGATE_TASK_TOOL_NAME,
};
use crate::tools::ToolDefinition;

/// Builds a worker's configuration (SUB-2). The runtime then hard-strips delegation from
/// whatever it returns (SUB-4), so a factory cannot grant a worker `delegate_task`.
/// Async so a host can build the worker on its own thread (a JS factory runs on the JS
/// thread); a plain closure `Fn(&AgentRuntimeConfig) -> Result<AgentRuntimeConfig, _>`
/// is a factory too.
#[async_trait]
pub trait SubAgentFactory: Send + Sync {
    /// `parent` is a copy of the parent's config (API key included: the worker usually
    /// talks to the same provider). Return the worker's config.
    async fn create(&self, parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError>;
}

#[async_trait]
impl<F> SubAgentFactory for F
where
    F: Fn(&AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError> + Send + Sync,
{
    async fn create(&self, parent: &AgentRuntimeConfig) -> Result<AgentRuntimeConfig, ArkAgentError> {
        self(parent)
    }
}

/// A named worker.
#[derive(Clone)]
pub struct SubAgentDefinition {
    /// Trimmed, non-empty, not `clone`.
    pub name: String,
    /// What it is good at (shown to the parent model in the delegate_task description).
    pub description: String,
    /// Builds its config.
    pub factory: Arc<dyn SubAgentFactory>,
}

impl std::fmt::Debug for SubAgentDefinition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SubAgentDefinition").field("name", &self.name).field("description", &self.description).finish_non_exhaustive()
    }
}

impl SubAgentDefinition {
    /// Errors: `subagent_name_empty`, `subagent_name_reserved` (`clone` in any case).
    pub fn create(name: &str, description: impl Into<String>, factory: Arc<dyn SubAgentFactory>) -> Result<Self, ArkAgentError> {
        let trimmed = name.trim();
        if trimmed.is_empty() {
            return Err(ArkAgentError::config("subagent_name_empty", "sub-agent name is empty"));
        }
        if trimmed.to_lowercase() == CLONE_ASSIGNEE {
            return Err(ArkAgentError::config("subagent_name_reserved", "Sub-agent name \"clone\" is reserved"));
        }
        Ok(Self { name: trimmed.to_owned(), description: description.into(), factory })
    }
}

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
pub(super) fn bind_child_session(config: &mut AgentRuntimeConfig, session_id: String) {
    config.memory_namespace = session_id.clone();
    config.session_id = Some(session_id);
}

