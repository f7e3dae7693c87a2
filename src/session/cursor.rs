//! STORE-2, STORE-3: the attached session store and the cursor of what is committed.

use crate::error::ArkAgentError;
use crate::history::{AgentState, HistoryInvariants, Message, PendingTurn};
use crate::ids::Clock;
use crate::store::{Commit, SessionLease, SharedStore};

/// An open session in a store and the cursor of what is committed (absolute positions).
pub(super) struct Persist {
    store: SharedStore,
    lease: Box<dyn SessionLease>,
    cursor: Cursor,
    /// The session had no commits when opened.
    new: bool,
}

/// What is committed (absolute positions), and whether the next commit rewrites all.
#[derive(Clone)]
struct Cursor {
    /// Absolute position after the last committed live message.
    end: u64,
    episodes: usize,
    usages: usize,
    child_usages: usize,
    /// The next commit rewrites the session (after an import or attaching a new session
    /// to a session that already has a history).
    replace_all: bool,
    /// TOOL-2: the paused turn as last committed (`None`: none).
    pending: Option<PendingTurn>,
    /// CHAT-1: run marks committed.
    runs: usize,
}

/// A commit that reached the store (STORE-6's `session_committed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Committed {
    /// The session's commit sequence number.
    pub commit_seq: u64,
    /// Messages the session has committed (live plus archived originals).
    pub message_count: u64,
}

impl Persist {
    /// Opens `session_id` in `store` (STORE-4). Returns the open session and the state to
    /// continue from: the stored one (resumed), or `current` under the new id, written in
    /// full at the next commit. Errors: `session_locked`, the store's codes.
    pub(super) fn open(store: &SharedStore, session_id: String, current: &AgentState) -> Result<(Self, AgentState), ArkAgentError> {
        let opened = store.open_session(&session_id)?;
        let stored = opened.state.is_some();
        let state = match opened.state {
            Some(state) => state,
            None => {
                let mut state = current.clone();
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
            replace_all: !stored && (has_history || state.pending_turn.is_some()),
            pending: if stored { state.pending_turn.clone() } else { None },
            runs: if stored { state.runs.len() } else { 0 },
        };
        Ok((Self { store: store.clone(), lease: opened.lease, cursor, new: !stored }, state))
    }

    /// The store this session is open in.
    pub(super) fn store(&self) -> SharedStore {
        self.store.clone()
    }

    /// True when the session had no commits when it was opened.
    pub(super) fn is_new(&self) -> bool {
        self.new
    }

    /// STORE-2: commits what `state` has new since the cursor — paired messages only (an
    /// open turn is cut, as in `export_state`), new episodes with their originals, new
    /// usages and sub-agent records — in one store transaction. Nothing new: `Ok(None)`.
    /// On error nothing of this commit is stored and the cursor stays (lowered to the new
    /// end when the history shrank), so the next commit point retries it.
    pub(super) fn commit(&mut self, state: &AgentState, clock: &dyn Clock) -> Result<Option<Committed>, ArkAgentError> {
        match self.write(self.cursor.clone(), state, clock) {
            Ok(done) => Ok(done.map(|(committed, cursor)| {
                self.cursor = cursor;
                committed
            })),
            Err((e, end)) => {
                self.cursor.runs = self.cursor.runs.min(state.runs.len());
                // A history that shrank (a failed run's input taken out): what is stored
                // past `end` is stale, so the next commit rewrites from `end` (a retry
                // from the old cursor would find "nothing new" and keep the old input).
                self.cursor.end = self.cursor.end.min(end);
                Err(e)
            }
        }
    }

    /// The next commit writes the stored live messages again from absolute position
    /// `position` on (THINK-2: a compression cleared the reasoning blocks of answers
    /// already stored).
    pub(super) fn rewrite_from(&mut self, position: u64) {
        self.cursor.end = self.cursor.end.min(position);
    }

    /// CHAT-1: commits `state`, a rewind of the current one, before anyone sees it — the
    /// usages from `usages` and the sub-agent records from `child_usages` on written
    /// again (they are marked discarded; or no longer, when a rewind is put back). On
    /// error nothing is stored and the cursor is untouched (the caller keeps the old
    /// state, which the cursor still describes).
    pub(super) fn commit_rewind(
        &mut self,
        state: &AgentState,
        (usages, child_usages): (usize, usize),
        clock: &dyn Clock,
    ) -> Result<Option<Committed>, ArkAgentError> {
        let c = Cursor { usages: self.cursor.usages.min(usages), child_usages: self.cursor.child_usages.min(child_usages), ..self.cursor.clone() };
        let written = self.write(c, state, clock).map_err(|(e, _)| e)?;
        Ok(written.map(|(committed, cursor)| {
            self.cursor = cursor;
            committed
        }))
    }

    /// Writes `state` in place of the stored session, in one commit (an import). On error
    /// nothing is stored and the cursor is untouched: the session is as before.
    pub(super) fn commit_replacing(&mut self, state: &AgentState, clock: &dyn Clock) -> Result<Option<Committed>, ArkAgentError> {
        let written = self.write(Cursor { replace_all: true, ..self.cursor.clone() }, state, clock).map_err(|(e, _)| e)?;
        Ok(written.map(|(committed, cursor)| {
            self.cursor = cursor;
            committed
        }))
    }

    /// Commits what `state` has new since `c`; the commit and the cursor after it, or the
    /// error and the end (absolute) of `state`'s paired history.
    fn write(&self, c: Cursor, state: &AgentState, clock: &dyn Clock) -> Result<Option<(Committed, Cursor)>, (ArkAgentError, u64)> {
        let messages = &state.history.messages;
        let consistent = last_consistent_len(messages);
        let base = live_end(state, 0);
        let end = base + consistent as u64;
        let (end_before, episodes_from, usages_from, child_from) =
            if c.replace_all { (0, 0, 0, 0) } else { (c.end, c.episodes, c.usages, c.child_usages) };
        let from = end_before.max(base).min(end);
        let episodes = state.history.episodic_memories.get(episodes_from..).unwrap_or_default().to_vec();
        let usages = state.usages.get(usages_from..).unwrap_or_default().to_vec();
        let child_usages = state.child_usages.get(child_from..).unwrap_or_default().to_vec();
        let new_messages = messages[usize::try_from(from - base).unwrap_or(consistent).min(consistent)..consistent].to_vec();
        // TOOL-2: the paused turn, when it changed (`Some(None)`: it ended).
        let pending_changed = c.replace_all || c.pending != state.pending_turn;
        let runs_from = if c.replace_all { 0 } else { c.runs.min(state.runs.len()) };
        let runs = (runs_from != state.runs.len() || c.runs != state.runs.len()).then(|| (runs_from, state.runs[runs_from..].to_vec()));
        if !pending_changed && runs.is_none() && episodes.is_empty() && usages.is_empty() && child_usages.is_empty() && new_messages.is_empty() && end == end_before {
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
            pending_turn: pending_changed.then(|| state.pending_turn.clone()),
            runs,
            rewritten: if c.replace_all {
                (0, 0)
            } else {
                (self.cursor.usages.saturating_sub(usages_from), self.cursor.child_usages.saturating_sub(child_from))
            },
            now_ms: clock.now_ms(),
        };
        let commit_seq = self.lease.commit(&commit).map_err(|e| (ArkAgentError::from(e), end))?;
        let cursor = Cursor {
            end,
            episodes: state.history.episodic_memories.len(),
            usages: state.usages.len(),
            child_usages: state.child_usages.len(),
            replace_all: false,
            pending: state.pending_turn.clone(),
            runs: state.runs.len(),
        };
        Ok(Some((Committed { commit_seq, message_count: end }, cursor)))
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
