use serde::{Deserialize, Serialize};

use crate::error::{ArkAgentError, ErrorCode};

/// Delegation budgets (SUB-3, ADR-0013), with the seed's defaults.
///
/// `max_depth` greater than 1 works (it is not refused): a child at depth `d <
/// max_depth` gets its own `delegate_task`, backed by a delegation service of its own
/// that shares the root's budgets — `max_delegations_per_run` counts every delegation
/// in the tree during one run of the root, and `max_concurrent_children` caps the
/// children running at once at each depth of the tree (so at most `max_depth ×
/// max_concurrent_children` run in all, and the defaults can reach any `max_depth`: a
/// chain of one child per level is never refused for concurrency). Chosen over refusing
/// because nested delegation is what the setting promises, and the shared budgets keep a
/// tree bounded. A child at `max_depth` is a worker: the three-layer
/// ban applies to it (no `delegate_task` in its registry, a hard-stripped config, and
/// the runtime answering a `delegate_task` call with `subagent_worker_cannot_delegate`).
/// Nested children inherit the parent's delegation settings (workers, clone, roles,
/// token budget, registry), never a factory's. Like any tool, `delegate_task` is subject
/// to the child's tool whitelist: a role that does not list it cannot delegate.
/// `max_depth` 0 turns delegation off (`subagent_depth_exceeded`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SubAgentPolicy {
    /// Maximum delegation depth; 1 means the root may delegate and workers may not, 2
    /// lets a root's child delegate once more, and so on (see the type's docs).
    pub max_depth: u32,
    /// Delegations one run of the parent may start.
    pub max_delegations_per_run: u32,
    /// Children running at once at each depth of the delegation tree (the root's
    /// children; their children together; …); calls beyond are rejected, not queued.
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
            return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "max_concurrent_children must be at least 1"));
        }
        Ok(())
    }
}
