//! Episode records (CMP-8, MEM-3): one compressed stretch of conversation, the id check an
//! import runs, and the read-only view tools get of them (MEM-1).

use std::collections::HashSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::ArkAgentError;
use super::Message;

/// One compressed stretch of conversation (CMP-8).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodicMemory {
    /// Snapshot id, unique within a session.
    pub id: String,
    /// The validated `<state_snapshot>` summary.
    pub summary: String,
    /// Creation time, milliseconds since the Unix epoch (from the injected clock).
    pub created_at_ms: u64,
    /// How many messages the episode covers.
    pub message_count: usize,
    /// The original messages, for `retrieve_memory`. Shared: cloning an episode is cheap.
    #[serde(default)]
    pub archived_messages: Arc<Vec<Message>>,
}

/// MEM-3: episode ids must be non-empty and unique (checked when state is imported).
pub fn validate_episodic_memory_ids(episodes: &[EpisodicMemory]) -> Result<(), ArkAgentError> {
    match first_invalid_episode_id(episodes) {
        Some(id) => Err(ArkAgentError::InvalidState(format!("episodic memory ids must be non-empty and unique (got {id:?})"))),
        None => Ok(()),
    }
}

/// MEM-3's verdict as the seed's `EpisodeIdValidation` gives it: the first id that is
/// blank or repeats an earlier one, `None` when all are valid.
pub fn first_invalid_episode_id(episodes: &[EpisodicMemory]) -> Option<&str> {
    let mut seen = HashSet::new();
    episodes.iter().map(|e| e.id.as_str()).find(|id| id.trim().is_empty() || !seen.insert(*id))
}

/// Session-scoped read access to episodic memories (MEM-1; ADR-0013: tools never get a
/// mutable agent state). The runtime's implementation is `memory::RuntimeMemoryService`.
pub trait MemoryService: Send + Sync {
    /// Every episode, oldest first.
    fn list_episodes(&self) -> Vec<EpisodicMemory>;
    /// The episode with this snapshot id.
    fn find_episode(&self, snapshot_id: &str) -> Option<EpisodicMemory>;
}
