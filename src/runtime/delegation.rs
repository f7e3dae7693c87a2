//! The service behind `delegate_task`: the parent's delegation settings, the tree's
//! budgets (SUB-3), the registry (ISO-4) and what a delegation reads of its parent (a
//! [`StateView`]: session id and context; and a [`ChildUsageSink`] for its children's
//! usage records). Building and running
//! the child is in `child_run.rs`, above the loop; the pure parts (budgets, registry,
//! meter, context slice) are in [`crate::subagent`].

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::{AgentRuntimeConfig, DelegationConfig};
use super::events::Emitter;
use super::worker_config::named_worker_start;
use crate::history::ChildUsageRecord;
use crate::llm::HttpTransport;
use crate::session::{ChildUsageSink, StateView};
use crate::subagent::{DelegationBudget, SubAgentContext, SubAgentRegistry, CLONE_ASSIGNEE};

/// Everything `delegate_task` needs from its parent runtime.
pub(crate) struct SubAgentService {
    pub(super) config: DelegationConfig,
    pub(super) parent_config: AgentRuntimeConfig,
    pub(super) transport: Arc<dyn HttpTransport>,
    pub(super) state: StateView,
    usage: ChildUsageSink,
    pub(super) emitter: Emitter,
    pub(super) depth: u32,
    pub(super) budget: Arc<DelegationBudget>,
    /// Issue 37 item 5: the owner's place in the tree (its children's are one below).
    pub(super) place: super::approval_hub::TreePlace,
}

impl SubAgentService {
    /// The service of a runtime at `depth`: a root (depth 0) starts a delegation tree; a
    /// child below `max_depth` joins its parent's tree through `budget`. `None` when
    /// delegation is off, and always for a child at `max_depth` or without its tree's
    /// budget (SUB-4: such a child is a worker and never delegates).
    #[allow(clippy::too_many_arguments)] // the parts a runtime hands its service, each once
    pub(crate) fn new(
        parent_config: AgentRuntimeConfig,
        transport: Arc<dyn HttpTransport>,
        state: StateView,
        usage: ChildUsageSink,
        emitter: Emitter,
        depth: u32,
        budget: Option<Arc<DelegationBudget>>,
        place: super::approval_hub::TreePlace,
    ) -> Option<Arc<Self>> {
        let config = parent_config.delegation.clone().filter(DelegationConfig::is_enabled)?;
        let budget = match budget {
            None if depth == 0 => DelegationBudget::new(),
            Some(budget) if depth > 0 && depth < config.policy.max_depth => budget,
            _ => return None,
        };
        Some(Arc::new(Self { config, parent_config, transport, state, usage, emitter, depth, budget, place }))
    }

    /// Run `run_id` of the root starts or resumes: a new run's budget starts again. A
    /// nested child's runs never reset it (the budget is per run of the root).
    pub(crate) fn start_run(&self, run_id: &str) {
        if self.depth == 0 {
            self.budget.start_run(run_id);
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
    pub(super) fn check(&self) -> Result<(), &'static str> {
        self.budget.check(&self.config.policy, &self.config.registry, self.depth)
    }

    /// SUB-3 again, authoritatively: counts one delegation of the run and registers the
    /// child (with a fresh isolated session id, SUB-9) in the registry (see
    /// [`DelegationBudget::reserve`]).
    pub(super) fn reserve(&self, cancel: CancellationToken, make: impl Fn(String) -> SubAgentContext) -> Result<String, &'static str> {
        let parent_session_id = self.session_id();
        let ids = &*self.parent_config.id_generator;
        self.budget.reserve(&self.config.policy, &self.config.registry, self.depth, &parent_session_id, ids, cancel, make)
    }

    pub(super) async fn worker_config(&self, assignee: &str) -> Result<AgentRuntimeConfig, &'static str> {
        if assignee.eq_ignore_ascii_case(CLONE_ASSIGNEE) {
            return if self.config.allow_clone { Ok(self.parent_config.clone()) } else { Err("subagent_unknown_assignee") };
        }
        let worker = self.config.workers.iter().find(|w| w.name == assignee).ok_or("subagent_unknown_assignee")?;
        worker.factory.create(&named_worker_start(&self.parent_config)).await.map_err(|_| "subagent_factory_failed")
    }

    pub(super) fn record_usage(&self, record: ChildUsageRecord) {
        self.usage.record(record);
    }
}

/// Executes `delegate_task`.
pub(crate) struct DelegateTaskTool {
    pub(crate) service: Arc<SubAgentService>,
}

pub(super) fn string_arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty())
}
