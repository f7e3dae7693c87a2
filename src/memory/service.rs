//! MEM-1: read-only access to episodic memory over live state (ADR-0013: tools never get
//! a mutable agent state).

use std::sync::{Arc, Mutex};

use crate::history::{AgentState, EpisodicMemory, MemoryService};

/// The runtime's [`MemoryService`]: reads the live state on every call, so it sees
/// episodes added by compression or brought in by an import.
#[derive(Clone)]
pub struct RuntimeMemoryService {
    state: Arc<Mutex<Arc<AgentState>>>,
}

impl RuntimeMemoryService {
    pub(crate) fn new(state: Arc<Mutex<Arc<AgentState>>>) -> Self {
        Self { state }
    }

    fn snapshot(&self) -> Arc<AgentState> {
        Arc::clone(&self.state.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl MemoryService for RuntimeMemoryService {
    fn list_episodes(&self) -> Vec<EpisodicMemory> {
        self.snapshot().history.episodic_memories.clone()
    }

    fn find_episode(&self, snapshot_id: &str) -> Option<EpisodicMemory> {
        self.snapshot().history.episodic_memories.iter().find(|e| e.id == snapshot_id).cloned()
    }
}
