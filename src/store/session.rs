//! The store interface: what a runtime commits ([`Commit`]), the [`SessionStore`] that
//! keeps sessions, the [`SessionLease`] that holds one open, and what a listing shows.

use std::sync::Arc;

use crate::error::StoreError;
use crate::history::{AgentState, EpisodicMemory, Message, ModelUsage, PendingTurn, TokenCalibrations};
use crate::history::{ChildUsageRecord, RunMark};

/// What a runtime hands its store at one commit point: everything new since the previous
/// commit, with absolute positions (a message's position counts every message the session
/// ever had, archived ones included), applied in one transaction.
#[derive(Debug, Clone, Default)]
pub struct Commit {
    /// Drop everything stored for the session first (after `import_state`).
    pub replace_all: bool,
    /// Index of `episodes[0]` among the session's episodes.
    pub episodes_from: usize,
    /// New episodes, oldest first, each with its archived originals.
    pub episodes: Vec<EpisodicMemory>,
    /// Absolute position of the first live message: stored live messages before it were
    /// archived by `episodes` and are removed from the live history.
    pub archived_through: u64,
    /// Absolute position of `messages[0]`; stored live messages at or after it are
    /// replaced (normally there are none: a commit appends).
    pub messages_from: u64,
    /// New live messages (a paired history: an open turn is never committed).
    pub messages: Vec<Message>,
    /// Index of `usages[0]` in the session's usages.
    pub usages_from: usize,
    /// New usages.
    pub usages: Vec<ModelUsage>,
    /// Index of `child_usages[0]` in the session's sub-agent records.
    pub child_usages_from: usize,
    /// New sub-agent records.
    pub child_usages: Vec<ChildUsageRecord>,
    /// The session's token calibration (CMP-12) when it may have changed; `None` keeps
    /// the stored one.
    pub token_calibration: Option<TokenCalibrations>,
    /// TOOL-2: the session's paused turn when it changed: `Some(Some(turn))` stores it,
    /// `Some(None)` clears it, `None` keeps the stored one.
    pub pending_turn: Option<Option<PendingTurn>>,
    /// CHAT-1: the session's run marks when they changed: `Some((from, marks))` replaces
    /// the stored marks from index `from` on with `marks` (a rewind shortens them),
    /// `None` keeps them.
    pub runs: Option<(usize, Vec<RunMark>)>,
    /// CHAT-1: how many of `usages` and of `child_usages` are written again (a rewind
    /// marks them discarded), not new: the session's total already counts them.
    pub rewritten: (usize, usize),
    /// The runtime clock's time.
    pub now_ms: u64,
}

impl Commit {
    /// The absolute position after the last live message once this commit is applied.
    pub fn end(&self) -> u64 {
        self.messages_from + self.messages.len() as u64
    }

    /// Tokens this commit adds to the session's total (own usages and sub-agent records).
    pub fn tokens(&self) -> u64 {
        let own = self.usages.iter().skip(self.rewritten.0).fold(0u64, |a, u| a.saturating_add(u.total_tokens));
        self.child_usages.iter().skip(self.rewritten.1).fold(own, |a, r| a.saturating_add(r.usage.total_tokens))
    }

    /// The first user text, shortened to a title (a message with no text, a photo alone,
    /// is passed over): the episodes' archived
    /// messages come first (a fork or an import whose first user text was compressed out
    /// is titled like its source).
    pub(crate) fn title_candidate(&self) -> Option<String> {
        let archived = self.episodes.iter().flat_map(|e| e.archived_messages.iter());
        archived.chain(&self.messages).find_map(|m| match m {
            Message::User { content } => Some(title_of(&content.text())).filter(|t| !t.is_empty()),
            _ => None,
        })
    }

    /// STORE-4: whether this commit writes the session from its first message on (its
    /// first commit, a rewind or an edit of its first run): the stored title is then
    /// replaced by [`title_candidate`](Self::title_candidate), not kept.
    pub(crate) fn retitles(&self) -> bool {
        self.messages_from == 0
    }
}

/// A title from a first user text: its first line, at most 80 characters.
pub(crate) fn title_of(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default();
    line.chars().take(80).collect()
}

/// One session of a store, as [`SessionStore::list_sessions`] lists it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionSummary {
    /// Session id (the runtime config's `session_id`).
    pub id: String,
    /// The first user text's first line, at most 80 characters (a photo without text is
    /// passed over); empty before the first run. It follows an edit of the first run's
    /// text, and a rewind to before the first run empties it.
    pub title: String,
    /// Time of the last commit (the runtime's clock), milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// Messages the session ever had: live plus archived by compressions.
    pub message_count: u64,
    /// Total tokens: the session's own model calls plus its sub-agents'.
    pub total_tokens: u64,
    /// Sequence number of the last commit (1 for the first).
    pub commit_seq: u64,
}

/// A session opened for writing. Dropping it releases the session.
pub trait SessionLease: Send + Sync {
    /// Applies one commit in one transaction; returns the session's new commit sequence
    /// number. On error nothing of the commit is stored.
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError>;
}

/// A session opened with [`SessionStore::open_session`].
pub struct OpenedSession {
    /// Holds the session; commits go through it.
    pub lease: Box<dyn SessionLease>,
    /// The last committed state, `None` for a session never committed.
    pub state: Option<AgentState>,
}

impl std::fmt::Debug for OpenedSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenedSession").field("state", &self.state.as_ref().map(|s| &s.session_id)).finish_non_exhaustive()
    }
}

/// Where sessions are kept (STORE-1). Implementations are shared (`Arc<dyn SessionStore>`)
/// and called from any thread; calls block (bindings call them off the UI thread).
pub trait SessionStore: Send + Sync {
    /// Opens `session_id` for writing and loads its last committed state. Errors:
    /// `session_locked` while another lease on it is alive, `store_corrupt` for a stored
    /// record that does not parse or a state that breaks an invariant, I/O codes.
    fn open_session(&self, session_id: &str) -> Result<OpenedSession, StoreError>;
    /// Every session, most recently updated first (by `updated_ms`; sessions of the same
    /// millisecond by id).
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError>;
    /// Deletes a session with its episodes, originals and usages; false when it did not
    /// exist. Errors: `session_locked` while it is open.
    fn delete_session(&self, session_id: &str) -> Result<bool, StoreError>;
}

/// A shared store handle, as the runtime config holds it.
pub type SharedStore = Arc<dyn SessionStore>;

/// Builds the state a store loaded and checks it like an import (`store_corrupt` when it
/// breaks an invariant).
pub(crate) fn checked_state(state: AgentState) -> Result<AgentState, StoreError> {
    state.validate().map_err(|e| StoreError::Corrupt(format!("stored session is inconsistent: {e}")))?;
    Ok(state)
}
