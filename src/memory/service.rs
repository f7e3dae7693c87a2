//! MEM-1: read-only access to episodic memory over live state (ADR-0013: tools never get
//! a mutable agent state).

use std::sync::Arc;

use crate::history::{AgentState, EpisodicMemory, MemoryService};

/// Where a [`RuntimeMemoryService`] reads the live state: a session's read-only view
/// (`session::StateView`), which is also the one place that builds the service.
pub trait StateSource: Send + Sync {
    /// The current state, shared (O(1)).
    fn snapshot(&self) -> Arc<AgentState>;
}

/// The runtime's [`MemoryService`]: reads the live state on every call, so it sees
/// episodes added by compression or brought in by an import.
#[derive(Clone)]
pub struct RuntimeMemoryService {
    source: Arc<dyn StateSource>,
}

impl RuntimeMemoryService {
    /// The service over `source` (built by `session::StateView::memory_service`).
    pub(crate) fn new(source: Arc<dyn StateSource>) -> Self {
        Self { source }
    }
}

impl MemoryService for RuntimeMemoryService {
    fn list_episodes(&self) -> Vec<EpisodicMemory> {
        self.source.snapshot().history.episodic_memories.clone()
    }

    fn find_episode(&self, snapshot_id: &str) -> Option<EpisodicMemory> {
        self.source.snapshot().history.episodic_memories.iter().find(|e| e.id == snapshot_id).cloned()
    }
}
