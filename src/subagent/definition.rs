use std::sync::Arc;

use async_trait::async_trait;

use super::CLONE_ASSIGNEE;
use crate::error::{ArkAgentError, ErrorCode};
use crate::runtime::AgentRuntimeConfig;

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
            return Err(ArkAgentError::config(ErrorCode::SubagentNameEmpty, "sub-agent name is empty"));
        }
        if trimmed.to_lowercase() == CLONE_ASSIGNEE {
            return Err(ArkAgentError::config(ErrorCode::SubagentNameReserved, "Sub-agent name \"clone\" is reserved"));
        }
        Ok(Self { name: trimmed.to_owned(), description: description.into(), factory })
    }
}
