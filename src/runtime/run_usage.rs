//! What one run used (COST-2): the usage a run's outcome and its `run_finished` event
//! report, summed once when the run ends from what the run recorded — never per turn
//! over the history (PERF-1).

use std::sync::Mutex;

use crate::history::{AgentState, ChildUsageSummary};

/// Where the current run's records start in the state: its usage is every usage and
/// every child's usage record appended after. A runtime runs one run at a time (the run
/// slot), and a run only appends to both lists, so two positions are enough.
#[derive(Debug, Default)]
pub(super) struct RunUsageMark(Mutex<(usize, usize)>);

impl RunUsageMark {
    /// Marks the start of a run at `state`.
    pub(super) fn start(&self, state: &AgentState) {
        let mut mark = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *mark = (state.usages.len(), state.child_usages.len());
    }

    /// What the run that started at the mark used so far in `state`: its own model calls
    /// (compression included) plus the children it delegated to, each once.
    pub(super) fn usage(&self, state: &AgentState) -> ChildUsageSummary {
        let (usages, children) = *self.0.lock().unwrap_or_else(|p| p.into_inner());
        let own = ChildUsageSummary::from_usages(state.usages.get(usages..).unwrap_or_default());
        let records = state.child_usages.get(children..).unwrap_or_default();
        records.iter().fold(own, |sum, r| sum.plus(r.usage.clone()))
    }
}
