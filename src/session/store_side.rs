//! The session's store side (STORE-2, STORE-3, STORE-4, STORE-6): attaching a store (a
//! resumed session replaces the state), detaching it, the commit points, and an import —
//! written to the store before anyone can see it.

use super::cursor::{Committed, Persist};
use super::Session;
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::AgentState;
use crate::store::SharedStore;

impl Session {
    pub(super) fn lock_persist(&self) -> std::sync::MutexGuard<'_, Option<Persist>> {
        self.persist.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The next commit writes the stored live messages again from absolute position
    /// `position` on (THINK-2: a compression cleared blocks of answers already stored).
    pub(super) fn rewrite_stored_from(&self, position: u64) {
        if let Some(persist) = self.lock_persist().as_mut() {
            persist.rewrite_from(position);
        }
    }

    /// True when a session store is attached.
    pub fn has_store(&self) -> bool {
        self.lock_persist().is_some()
    }

    /// Attaches `store` (STORE-4): opens `session_id` (default: this session's) in it. A
    /// session with commits replaces the state (it is resumed, redacted: LLM-4); a new one
    /// starts from the current state, written in full at once (a session with nothing in
    /// it yet is written at its first commit). The caller holds
    /// the run slot. Returns that first write's commit, if one was made. Errors:
    /// `session_locked`, the store's codes, `invalid_config` when a store is already
    /// attached or the id is empty.
    pub fn attach(&self, store: SharedStore, session_id: Option<&str>) -> Result<Option<Committed>, ArkAgentError> {
        let mut persist = self.lock_persist();
        if persist.is_some() {
            return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "a store is already attached"));
        }
        let session_id = match session_id {
            Some(id) if id.trim().is_empty() => return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "session_id is empty")),
            Some(id) => id.to_owned(),
            None => self.snapshot().session_id.clone(),
        };
        let (mut opened, mut state) = Persist::open(&store, session_id, &self.snapshot())?;
        // A new session starts from the current state, written now rather than at the
        // next commit point: a kill or a free before the next run would lose it (issue 42).
        let committed = if opened.is_new() { opened.commit(&state, &*self.clock)? } else { None };
        *persist = Some(opened);
        drop(persist);
        self.redactor.state(&mut state);
        self.reset_to(state);
        Ok(committed)
    }

    /// CHAT-2: writes `state` (a fork of this session) as a new session of the attached
    /// store, in one commit, and releases it. False without a store. Errors:
    /// `session_exists` when the store has that session already, `session_locked`, the
    /// store's codes; then nothing was written.
    pub fn write_fork(&self, state: &AgentState) -> Result<bool, ArkAgentError> {
        let store = match self.lock_persist().as_ref() {
            None => return Ok(false),
            Some(p) => p.store(),
        };
        let (mut fork, _) = Persist::open(&store, state.session_id.clone(), state)?;
        if !fork.is_new() {
            return Err(ArkAgentError::gesture(ErrorCode::SessionExists, format!("the store has a session {:?} already", state.session_id)));
        }
        fork.commit(state, &*self.clock)?;
        Ok(true)
    }

    /// Detaches the store (STORE-6), releasing the session's lock; true when one was
    /// attached. The caller holds the run slot.
    pub fn detach(&self) -> bool {
        self.lock_persist().take().is_some()
    }

    /// STORE-2: commits what is new since the last commit point — paired messages only
    /// (an open turn is cut, as in `export_state`), new episodes with their originals, new
    /// usages and sub-agent records — in one store transaction. No store, or nothing new:
    /// `Ok(None)`. On error nothing of this commit is stored and the cursor stays (lowered
    /// to the new end when the history shrank), so the next commit point retries it.
    pub fn commit(&self) -> Result<Option<Committed>, ArkAgentError> {
        let mut guard = self.lock_persist();
        let Some(p) = guard.as_mut() else { return Ok(None) };
        p.commit(&self.snapshot(), &*self.clock)
    }

    /// Replaces the state with an imported one (validated by the caller; redacted here,
    /// LLM-4), then runs the reset ritual. With a store the import is first written under
    /// the attached session's id (STORE-4), replacing the stored session in one commit,
    /// and only once that write committed does anyone see it (issue 28 item 1): until then
    /// every reader sees the old state, and when the write fails nothing changed — state,
    /// store cursor, backoff. The caller holds the run slot.
    pub fn import(&self, mut state: AgentState) -> Result<Option<Committed>, ArkAgentError> {
        // IMG-5 (issue 40 item 2): the photos of an imported history pass this model's
        // bounds, as photos entering by any other door do; else nothing changes.
        let mut images = 0;
        for message in &state.history.messages {
            if let Some(content) = message.content() {
                images += self.image_bounds.check_each(content)?;
            }
        }
        self.image_bounds.check_count(0, images)?;
        self.redactor.state(&mut state);
        let mut persist = self.lock_persist();
        let committed = match persist.as_mut() {
            None => None,
            Some(p) => {
                state.session_id = self.snapshot().session_id.clone();
                p.commit_replacing(&state, &*self.clock)?
            }
        };
        // Under the store lock: no commit point can run between the write and the swap.
        self.reset_to(state);
        drop(persist);
        Ok(committed)
    }
}
