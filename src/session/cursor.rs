//! STORE-2, STORE-3: the attached session store and the cursor of what is committed.

use std::sync::MutexGuard;

use super::Session;
use crate::error::ArkAgentError;
use crate::history::{AgentState, HistoryInvariants, Message};
use crate::store::{Commit, SessionLease, SharedStore};

/// An open session in a store and the cursor of what is committed (absolute positions).
pub(super) struct Persist {
    lease: Box<dyn SessionLease>,
    cursor: Cursor,
}

/// What is committed (absolute positions), and whether the next commit rewrites all.
#[derive(Clone, Copy)]
pub(super) struct Cursor {
    /// Absolute position after the last committed live message.
    end: u64,
    episodes: usize,
    usages: usize,
    child_usages: usize,
    /// The next commit rewrites the session (after an import or attaching a new session
    /// to a session that already has a history).
    replace_all: bool,
}

/// A commit that reached the store (STORE-6's `session_committed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    /// The session's commit sequence number.
    pub commit_seq: u64,
    /// Messages the session has committed (live plus archived originals).
    pub message_count: u64,
}

impl Session {
    fn lock_persist(&self) -> MutexGuard<'_, Option<Persist>> {
        self.persist.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True when a session store is attached.
    pub fn has_store(&self) -> bool {
        self.lock_persist().is_some()
    }

    /// Attaches `store` (STORE-4): opens `session_id` (default: this session's) in it. A
    /// session with commits replaces the state (it is resumed); a new one starts from the
    /// current state, written in full at the next commit. The caller holds the run slot.
    /// Errors: `session_locked`, the store's codes, `invalid_config` when a store is
    /// already attached or the id is empty.
    pub fn attach(&self, store: SharedStore, session_id: Option<&str>) -> Result<(), ArkAgentError> {
        let mut persist = self.lock_persist();
        if persist.is_some() {
            return Err(ArkAgentError::config("invalid_config", "a store is already attached"));
        }
        let session_id = match session_id {
            Some(id) if id.trim().is_empty() => return Err(ArkAgentError::config("invalid_config", "session_id is empty")),
            Some(id) => id.to_owned(),
            None => self.snapshot().session_id.clone(),
        };
        let opened = store.open_session(&session_id)?;
        let stored = opened.state.is_some();
        let state = match opened.state {
            Some(state) => state,
            None => {
                let mut state = (*self.snapshot()).clone();
                state.session_id = session_id;
                state
            }
        };
        let has_history = !state.history.messages.is_empty() || !state.usages.is_empty() || !state.history.episodic_memories.is_empty();
        let cursor = Cursor {
            end: if stored { live_end(&state, state.history.messages.len()) } else { 0 },
            episodes: if stored { state.history.episodic_memories.len() } else { 0 },
            usages: if stored { state.usages.len() } else { 0 },
            child_usages: if stored { state.child_usages.len() } else { 0 },
            replace_all: !stored && has_history,
        };
        *persist = Some(Persist { lease: opened.lease, cursor });
        drop(persist);
        self.replace(state, false);
        Ok(())
    }

    /// Detaches the store (STORE-6), releasing the session's lock; true when one was
    /// attached. The caller holds the run slot.
    pub fn detach(&self) -> bool {
        self.lock_persist().take().is_some()
    }

    /// The store cursor, when a store is attached.
    pub(super) fn cursor(&self) -> Option<Cursor> {
        self.lock_persist().as_ref().map(|p| p.cursor)
    }

    /// Marks the stored session for a rewrite at the next commit; returns the cursor before.
    pub(super) fn mark_rewrite(&self) -> Option<Cursor> {
        let mut persist = self.lock_persist();
        let p = persist.as_mut()?;
        let before = p.cursor;
        p.cursor.replace_all = true;
        Some(before)
    }

    pub(super) fn set_cursor(&self, cursor: Cursor) {
        if let Some(p) = self.lock_persist().as_mut() {
            p.cursor = cursor;
        }
    }

    /// STORE-2: commits what is new since the last commit point — paired messages only
    /// (an open turn is cut, as in `export_state`), new episodes with their originals, new
    /// usages and sub-agent records — in one store transaction. No store, or nothing new:
    /// `Ok(None)`. On error nothing of this commit is stored and the cursor stays (lowered
    /// to the new end when the history shrank), so the next commit point retries it.
    pub fn commit(&self) -> Result<Option<Committed>, ArkAgentError> {
        let mut guard = self.lock_persist();
        let Some(p) = guard.as_mut() else { return Ok(None) };
        let state = self.snapshot();
        let messages = &state.history.messages;
        let consistent = last_consistent_len(messages);
        let base = live_end(&state, 0);
        let end = base + consistent as u64;
        let c = p.cursor;
        let (end_before, episodes_from, usages_from, child_from) =
            if c.replace_all { (0, 0, 0, 0) } else { (c.end, c.episodes, c.usages, c.child_usages) };
        let from = end_before.max(base).min(end);
        let episodes = state.history.episodic_memories.get(episodes_from..).unwrap_or_default().to_vec();
        let usages = state.usages.get(usages_from..).unwrap_or_default().to_vec();
        let child_usages = state.child_usages.get(child_from..).unwrap_or_default().to_vec();
        let new_messages = messages[usize::try_from(from - base).unwrap_or(consistent).min(consistent)..consistent].to_vec();
        if !c.replace_all && episodes.is_empty() && usages.is_empty() && child_usages.is_empty() && new_messages.is_empty() && end == end_before {
            return Ok(None);
        }
        let usages_is_empty = usages.is_empty();
        let commit = Commit {
            replace_all: c.replace_all,
            episodes_from,
            episodes,
            archived_through: base,
            messages_from: from,
            messages: new_messages,
            usages_from,
            usages,
            child_usages_from: child_from,
            child_usages,
            // CMP-12: the calibration changes only with a new usage.
            token_calibration: (c.replace_all || !usages_is_empty).then(|| state.token_calibration.clone()),
            now_ms: self.clock.now_ms(),
        };
        let commit_seq = match p.lease.commit(&commit) {
            Ok(seq) => seq,
            Err(e) => {
                // A history that shrank (a failed run's input taken out): what is stored
                // past `end` is stale, so the next commit rewrites from `end` (a retry
                // from the old cursor would find "nothing new" and keep the old input).
                p.cursor.end = p.cursor.end.min(end);
                return Err(e.into());
            }
        };
        p.cursor = Cursor {
            end,
            episodes: state.history.episodic_memories.len(),
            usages: state.usages.len(),
            child_usages: state.child_usages.len(),
            replace_all: false,
        };
        Ok(Some(Committed { commit_seq, message_count: end }))
    }
}

/// The absolute position (archived originals counted) after the first `live` messages.
fn live_end(state: &AgentState, live: usize) -> u64 {
    state.history.episodic_memories.iter().fold(live as u64, |a, e| a + e.archived_messages.len() as u64)
}

/// The length of the longest paired prefix of `messages`: everything before the open
/// turn (an assistant message whose tool calls are not all answered yet).
pub fn last_consistent_len(messages: &[Message]) -> usize {
    let mut end = messages.len();
    while end > 0 {
        if HistoryInvariants::tool_calls_paired(&messages[..end]) {
            return end;
        }
        // Cut before the last assistant message with tool calls in what is left.
        end = messages[..end].iter().rposition(|m| !m.tool_calls().is_empty()).unwrap_or(0);
    }
    0
}
