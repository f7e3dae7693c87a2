use serde::{Deserialize, Serialize};

use crate::error::ArkAgentError;

/// Delegation budgets (SUB-3, ADR-0013), with the seed's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SubAgentPolicy {
    /// Maximum delegation depth; 1 means the root may delegate and workers may not.
    pub max_depth: u32,
    /// Delegations one run of the parent may start.
    pub max_delegations_per_run: u32,
    /// Children running at once; calls beyond are rejected, not queued.
    pub max_concurrent_children: u32,
    /// Parent messages a child sees as context (a pairing-safe slice).
    pub parent_context_message_count: usize,
}

impl Default for SubAgentPolicy {
    fn default() -> Self {
        Self { max_depth: 1, max_delegations_per_run: 4, max_concurrent_children: 2, parent_context_message_count: 10 }
    }
}

impl SubAgentPolicy {
    /// `max_concurrent_children` of 0 could never run a child: rejected as `invalid_config`.
    pub fn validate(&self) -> Result<(), ArkAgentError> {
        if self.max_concurrent_children == 0 {
            return Err(ArkAgentError::config("invalid_config", "max_concurrent_children must be at least 1"));
        }
        Ok(())
    }
}
