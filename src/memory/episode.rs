use serde::{Deserialize, Serialize};

use crate::history::Message;

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
    /// The original messages, kept so `retrieve_memory` can page through them.
    #[serde(default)]
    pub archived_messages: Vec<Message>,
}
