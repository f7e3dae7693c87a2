//! A worker's config (SUB-1, SUB-4, ISO-3): the `delegate_task` definition offered to the
//! parent, and the hard strip of whatever a factory returned.

use serde_json::json;

use super::config::{AgentRuntimeConfig, Compression, DelegationConfig};
use crate::subagent::{build_worker_tool_registry, CLONE_ASSIGNEE, DELEGATE_TASK_TOOL_NAME};
use crate::tools::ToolDefinition;

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
    // TOOL-4: no deadline — a child is bounded by its own budgets (SUB-3, ISO-5), not by
    // the runtime's tool timeout.
    .with_timeout_ms(0)
}

/// SUB-1, CMP-1: what a named worker's factory starts from — a copy of the parent's config
/// without its custom compressor. The one rule of every surface: a named worker has a
/// custom compressor only when its definition (the factory) gives it one; a `clone`
/// child, being a copy of the parent, inherits the parent's. The parent's default
/// compressor settings are kept (a factory may change or drop them as well).
pub fn named_worker_start(parent: &AgentRuntimeConfig) -> AgentRuntimeConfig {
    let mut start = parent.clone();
    if matches!(start.compression, Some(Compression::Custom(_))) {
        start.compression = None;
    }
    start
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

