//! SUB-3: the budgets one delegation tree shares, and the checks against them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use super::context::SubAgentContext;
use super::policy::SubAgentPolicy;
use super::registry::SubAgentRegistry;
use super::session_id::allocate_isolated_session_id;
use crate::ids::IdGenerator;

/// The budgets one delegation tree shares (SUB-3): a root runtime and every descendant
/// it delegates to, at any depth. Running children are counted in the registry (the one
/// source of truth) per depth of the tree; the per-run count lives here.
pub(crate) struct DelegationBudget {
    tree: u64,
    /// The root's run the count belongs to, and its delegations so far.
    this_run: Mutex<(String, u32)>,
}

/// Tree ids are only compared, never shown: a process-wide counter suffices.
static NEXT_TREE: AtomicU64 = AtomicU64::new(1);

impl DelegationBudget {
    /// A new tree's budget (a root's).
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Self { tree: NEXT_TREE.fetch_add(1, Ordering::Relaxed), this_run: Mutex::new((String::new(), 0)) })
    }

    fn this_run(&self) -> std::sync::MutexGuard<'_, (String, u32)> {
        self.this_run.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Run `run_id` of the root starts or goes on: the per-run budget starts again for a
    /// new run; a resumed one (the same id: a turn paused for approval) keeps its count.
    pub(crate) fn start_run(&self, run_id: &str) {
        let mut this_run = self.this_run();
        if this_run.0 != run_id {
            *this_run = (run_id.to_owned(), 0);
        }
    }

    /// SUB-3 in the seed's order, for a delegation from `depth`, without reserving
    /// anything: lets a delegation fail before its worker is built.
    pub(crate) fn check(&self, policy: &SubAgentPolicy, registry: &SubAgentRegistry, depth: u32) -> Result<(), &'static str> {
        if depth >= policy.max_depth {
            return Err("subagent_depth_exceeded");
        }
        if self.this_run().1 >= policy.max_delegations_per_run {
            return Err("subagent_run_budget_exceeded");
        }
        if registry.active_in_tree(self.tree, depth + 1) >= policy.max_concurrent_children as usize {
            return Err("subagent_concurrent_budget_exceeded");
        }
        Ok(())
    }

    /// SUB-3 again, authoritatively: counts one delegation of the run and registers the
    /// child (with a fresh isolated session id, SUB-9) in `registry`. Called only once
    /// the worker's config exists, so a delegation that fails earlier (unknown assignee,
    /// failing factory) consumes nothing. Host code (id generator) runs outside the
    /// registry's lock.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn reserve(
        &self,
        policy: &SubAgentPolicy,
        registry: &SubAgentRegistry,
        depth: u32,
        parent_session_id: &str,
        ids: &dyn IdGenerator,
        cancel: CancellationToken,
        make: impl Fn(String) -> SubAgentContext,
    ) -> Result<String, &'static str> {
        let mut this_run = self.this_run();
        if depth >= policy.max_depth {
            return Err("subagent_depth_exceeded");
        }
        if this_run.1 >= policy.max_delegations_per_run {
            return Err("subagent_run_budget_exceeded");
        }
        // A sibling of another tree may take the id between allocation and registration:
        // allocate again (bounded like SUB-9's own retries).
        for _ in 0..=16 {
            let id = allocate_isolated_session_id(parent_session_id, "", &registry.active_ids(), &mut || ids.next_id());
            match registry.try_register(self.tree, depth + 1, policy.max_concurrent_children as usize, make(id.clone()), cancel.clone()) {
                Ok(()) => {
                    this_run.1 += 1;
                    return Ok(id);
                }
                Err(true) => return Err("subagent_concurrent_budget_exceeded"),
                Err(false) => continue,
            }
        }
        Err("subagent_session_id_exhausted")
    }
}
