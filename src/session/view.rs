//! The state cell and who gets what of it: [`SessionState`] (a new cell, before its
//! [`Session`](super::Session) exists), [`StateView`] (read-only: snapshots, the session
//! id, the memory service) and [`ChildUsageSink`] (SUB-6's one append).

use std::sync::{Arc, Mutex, MutexGuard};

use super::redact::Redactor;
use crate::history::{AgentState, ChildUsageRecord, MemoryService};
use crate::llm::ModelConfig;
use crate::memory::{RuntimeMemoryService, StateSource};

/// The state cell. The state sits behind an `Arc` so a compression can read a snapshot
/// without holding the lock or copying the history; appends go through `Arc::make_mut`,
/// which copies nothing while no snapshot is alive (CMP-6).
pub(super) type StateCell = Arc<Mutex<Arc<AgentState>>>;

pub(super) fn lock_cell(cell: &StateCell) -> MutexGuard<'_, Arc<AgentState>> {
    // A poisoned lock only means a panic elsewhere between statements on plain data;
    // every update here is a single push or swap, so the state is still valid.
    cell.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A new session's state, before the [`Session`](super::Session) that will own it is
/// built: what hands out the [`StateView`] and the [`ChildUsageSink`] that the parts a
/// session's request shape depends on (the delegation service, events, the memory tool)
/// need first. [`Session::new`](super::Session::new) consumes it.
pub struct SessionState {
    pub(super) cell: StateCell,
    pub(super) redactor: Redactor,
}

impl SessionState {
    /// A cell holding `state` (whose texts are taken as they are: a new state is empty),
    /// redacting with `model`'s secrets (LLM-4) from now on.
    pub fn new(state: AgentState, model: &ModelConfig) -> Self {
        Self { cell: Arc::new(Mutex::new(Arc::new(state))), redactor: Redactor::new(model) }
    }

    /// A read-only view of the cell.
    pub fn view(&self) -> StateView {
        StateView::over(&self.cell)
    }

    /// The sink a delegation records its children's usage into.
    pub fn child_usage_sink(&self) -> ChildUsageSink {
        ChildUsageSink { cell: Arc::clone(&self.cell), redactor: self.redactor.clone() }
    }
}

/// A read-only view of a session's live state: its id, O(1) snapshots and the memory
/// service over them. What event stamping, delegation and tools get instead of the
/// session itself; it cannot write.
#[derive(Clone)]
pub struct StateView {
    cell: StateCell,
}

impl StateView {
    pub(super) fn over(cell: &StateCell) -> Self {
        Self { cell: Arc::clone(cell) }
    }

    /// The current state, shared (O(1)).
    pub fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&lock_cell(&self.cell))
    }

    /// The session id.
    pub fn session_id(&self) -> String {
        lock_cell(&self.cell).session_id.clone()
    }

    /// MEM-1: read-only access to episodic memory over the live state, which sees the
    /// episodes a compression adds or an import brings. The one place the service is built.
    pub fn memory_service(&self) -> Arc<dyn MemoryService> {
        Arc::new(RuntimeMemoryService::new(Arc::new(self.clone())))
    }
}

impl StateSource for StateView {
    fn snapshot(&self) -> Arc<AgentState> {
        StateView::snapshot(self)
    }
}

/// Where a delegation records each child's usage (SUB-6): the one write a session allows
/// besides its doors. It only appends to `child_usages`, which neither the encodings nor
/// the prompt size read, so the session's caches stay valid; the record is redacted.
#[derive(Clone)]
pub struct ChildUsageSink {
    cell: StateCell,
    redactor: Redactor,
}

impl ChildUsageSink {
    /// Appends `record` to the state's child usages.
    pub fn record(&self, mut record: ChildUsageRecord) {
        self.redactor.child_usage(&mut record);
        Arc::make_mut(&mut lock_cell(&self.cell)).child_usages.push(record);
    }
}
