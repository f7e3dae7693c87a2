//! The in-memory [`SessionStore`]: the same semantics as SQLite (locks, commits,
//! list, delete) for tests and for hosts that persist nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use super::session::{checked_state, Commit, OpenedSession, SessionLease, SessionStore, SessionSummary};
use crate::error::StoreError;
use crate::history::{AgentState, EpisodicMemory, Message, ModelUsage, PendingTurn, TokenCalibrations};
use crate::history::{ChildUsageRecord, RunMark};

#[derive(Default)]
struct Stored {
    messages: BTreeMap<u64, Message>,
    episodes: Vec<EpisodicMemory>,
    usages: Vec<ModelUsage>,
    child_usages: Vec<ChildUsageRecord>,
    token_calibration: TokenCalibrations,
    pending_turn: Option<PendingTurn>,
    runs: Vec<RunMark>,
    seq: u64,
    updated_ms: u64,
    title: Option<String>,
    tokens: u64,
    end: u64,
}

#[derive(Default)]
struct Sessions {
    sessions: HashMap<String, Stored>,
    locked: HashSet<String>,
}

/// Sessions kept in memory for the life of the store (cloneable; clones share them).
#[derive(Clone, Default)]
pub struct InMemorySessionStore {
    inner: Arc<Mutex<Sessions>>,
}

impl std::fmt::Debug for InMemorySessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InMemorySessionStore")
    }
}

impl InMemorySessionStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Sessions> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn put<T: Clone>(v: &mut Vec<T>, from: usize, items: &[T]) {
    v.truncate(from.min(v.len()));
    v.extend_from_slice(items);
}

impl SessionStore for InMemorySessionStore {
    fn open_session(&self, session_id: &str) -> Result<OpenedSession, StoreError> {
        let mut all = self.lock();
        if !all.locked.insert(session_id.to_owned()) {
            return Err(StoreError::SessionLocked(session_id.to_owned()));
        }
        let state = match all.sessions.get(session_id) {
            None => None,
            Some(s) => {
                let mut state = AgentState::new(session_id);
                state.history.messages = s.messages.values().cloned().collect();
                state.history.episodic_memories = s.episodes.clone();
                state.usages = s.usages.clone();
                state.child_usages = s.child_usages.clone();
                state.token_calibration = s.token_calibration.clone();
                state.pending_turn = s.pending_turn.clone();
                state.runs = s.runs.clone();
                match checked_state(state) {
                    Ok(state) => Some(state),
                    Err(e) => {
                        all.locked.remove(session_id);
                        return Err(e);
                    }
                }
            }
        };
        Ok(OpenedSession { lease: Box::new(MemoryLease { store: self.clone(), id: session_id.to_owned() }), state })
    }

    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        let all = self.lock();
        let mut list: Vec<SessionSummary> = all
            .sessions
            .iter()
            .map(|(id, s)| SessionSummary {
                id: id.clone(),
                title: s.title.clone().unwrap_or_default(),
                updated_ms: s.updated_ms,
                message_count: s.end,
                total_tokens: s.tokens,
                commit_seq: s.seq,
            })
            .collect();
        list.sort_by(|a, b| b.updated_ms.cmp(&a.updated_ms).then_with(|| a.id.cmp(&b.id)));
        Ok(list)
    }

    fn delete_session(&self, session_id: &str) -> Result<bool, StoreError> {
        let mut all = self.lock();
        if all.locked.contains(session_id) {
            return Err(StoreError::SessionLocked(session_id.to_owned()));
        }
        Ok(all.sessions.remove(session_id).is_some())
    }
}

struct MemoryLease {
    store: InMemorySessionStore,
    id: String,
}

impl Drop for MemoryLease {
    fn drop(&mut self) {
        self.store.lock().locked.remove(&self.id);
    }
}

impl SessionLease for MemoryLease {
    fn commit(&self, c: &Commit) -> Result<u64, StoreError> {
        let mut all = self.store.lock();
        let s = all.sessions.entry(self.id.clone()).or_default();
        if c.replace_all {
            *s = Stored { seq: s.seq, title: None, ..Stored::default() };
        }
        put(&mut s.episodes, c.episodes_from, &c.episodes);
        s.messages = s.messages.split_off(&c.archived_through);
        s.messages.split_off(&c.messages_from);
        for (i, m) in c.messages.iter().enumerate() {
            s.messages.insert(c.messages_from + i as u64, m.clone());
        }
        put(&mut s.usages, c.usages_from, &c.usages);
        put(&mut s.child_usages, c.child_usages_from, &c.child_usages);
        if let Some(calibration) = &c.token_calibration {
            s.token_calibration = calibration.clone();
        }
        if let Some(pending) = &c.pending_turn {
            s.pending_turn = pending.clone();
        }
        if let Some((from, runs)) = &c.runs {
            put(&mut s.runs, *from, runs);
        }
        if s.title.is_none() || c.retitles() {
            s.title = c.title_candidate();
        }
        s.tokens = s.tokens.saturating_add(c.tokens());
        s.end = c.end();
        s.updated_ms = c.now_ms;
        s.seq += 1;
        Ok(s.seq)
    }
}
