use serde::{Deserialize, Serialize};

use super::{EpisodicMemory, HistoryInvariants, Message, ModelUsage, TokenCalibrations};
use crate::error::ArkAgentError;
use super::{ChildUsageRecord, ChildUsageSummary, UsageTotals};

/// Version written into exported state; import accepts this version only.
pub const STATE_FORMAT_VERSION: u32 = 1;

/// The conversation: live messages plus the episodes compressed out of it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    /// Messages sent to the model (no system prompt; the runtime adds it per request).
    pub messages: Vec<Message>,
    /// Compressed episodes, oldest first.
    #[serde(default)]
    pub episodic_memories: Vec<EpisodicMemory>,
}

/// Everything a session needs to resume (CORE-3, CORE-6).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    /// Format version, [`STATE_FORMAT_VERSION`].
    pub version: u32,
    /// Session id.
    pub session_id: String,
    /// History.
    pub history: History,
    /// Usage of this session's own model calls, in order (children's are never here).
    pub usages: Vec<ModelUsage>,
    /// One summary per finished delegation (SUB-6).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub child_usages: Vec<ChildUsageRecord>,
    /// CMP-12: the learned correction of the prompt-size estimate, per model name. Absent
    /// in exports without calibration (and in those of earlier versions): the static
    /// estimate stands until the next provider count.
    #[serde(default, skip_serializing_if = "TokenCalibrations::is_empty")]
    pub token_calibration: TokenCalibrations,
    /// TOOL-1, TOOL-2: the turn paused for approval, if any. Its assistant message is not
    /// in `history` (which stays paired); it goes back in, with the calls' results, when
    /// the run resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_turn: Option<super::PendingTurn>,
    /// CHAT-1, CHAT-2: where each run began, oldest first (the points a rewind or a fork
    /// names by run id). Absent in exports of earlier versions: their runs cannot be
    /// named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<super::RunMark>,
}

impl AgentState {
    /// An empty state for `session_id`.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self { version: STATE_FORMAT_VERSION, session_id: session_id.into(), ..Self::default() }
    }

    /// The one documented total of what this session cost (SUB-6): its own calls plus
    /// every child's, each counted once.
    pub fn total_usage(&self) -> UsageTotals {
        let parent = ChildUsageSummary::from_usages(&self.usages);
        let children = self.child_usages.iter().fold(ChildUsageSummary::default(), |acc, r| acc.plus(r.usage.clone()));
        let total = parent.clone().plus(children.clone());
        // CHAT-1: what turns dropped by rewinds spent stays in the total, and apart here.
        let own = self.usages.iter().filter(|u| u.discarded);
        let discarded = ChildUsageSummary::from_usages_iter(own);
        let discarded = self.child_usages.iter().filter(|r| r.discarded).fold(discarded, |acc, r| acc.plus(r.usage.clone()));
        UsageTotals { parent, children, total, discarded }
    }

    /// IMG-4: the image whose content id ([`ImageData::id`](super::ImageData::id)) is
    /// `id`, in the live history or any episode's archived originals.
    pub fn find_image(&self, id: &str) -> Option<super::ImageData> {
        let archived = self.history.episodic_memories.iter().flat_map(|e| e.archived_messages.iter());
        self.history
            .messages
            .iter()
            .chain(archived)
            .flat_map(Message::images)
            .filter_map(super::ImagePart::image)
            .find(|image| image.id() == id)
            .cloned()
    }

    /// The absolute position after the last live message: messages the session ever had,
    /// those archived by compressions included.
    pub fn absolute_end(&self) -> u64 {
        self.archived_count() + self.history.messages.len() as u64
    }

    /// Messages archived by compressions (the absolute position of the first live one).
    pub fn archived_count(&self) -> u64 {
        self.history.episodic_memories.iter().map(|e| e.archived_messages.len() as u64).sum()
    }

    /// Serializes to JSON. Never fails for this type; an error would mean a serde bug.
    pub fn to_json(&self) -> Result<String, ArkAgentError> {
        Ok(serde_json::to_string(self)?)
    }

    /// Parses and validates exported state: version, non-empty session id, paired tool
    /// calls, non-empty unique episode ids (MEM-3).
    pub fn from_json(json: &str) -> Result<Self, ArkAgentError> {
        let state: AgentState = serde_json::from_str(json)?;
        state.validate()?;
        Ok(state)
    }

    /// Checks the invariants an imported state must hold.
    pub fn validate(&self) -> Result<(), ArkAgentError> {
        if self.version != STATE_FORMAT_VERSION {
            return Err(ArkAgentError::InvalidState(format!(
                "unsupported state version {} (expected {STATE_FORMAT_VERSION})",
                self.version
            )));
        }
        if self.session_id.trim().is_empty() {
            return Err(ArkAgentError::InvalidState("session_id is empty".into()));
        }
        if !HistoryInvariants::tool_calls_paired(&self.history.messages) {
            return Err(ArkAgentError::InvalidState("history has unpaired tool calls".into()));
        }
        super::validate_episodic_memory_ids(&self.history.episodic_memories)?;
        super::runs::validate_runs(&self.runs, self.absolute_end(), self.usages.len(), self.child_usages.len())?;
        if let Some(pending) = &self.pending_turn {
            pending.validate()?;
            let ids: std::collections::HashSet<&str> = pending.calls.iter().map(|c| c.call_id.as_str()).collect();
            let reused = self.history.messages.iter().flat_map(Message::tool_calls).any(|c| ids.contains(c.id.as_str()));
            if reused {
                return Err(ArkAgentError::InvalidState("pending_turn's call ids are already in the history".into()));
            }
        }
        Ok(())
    }
}
