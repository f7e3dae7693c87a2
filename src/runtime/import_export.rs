//! The session's ways in and out: a session store attached or detached (STORE-4,
//! STORE-6), the state exported (CORE-6) or imported.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use super::agent::{AgentRuntime, Inner};
use super::config::AgentRuntimeConfig;
use super::start::RunSlot;
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{AgentState, HistoryInvariants, Message};
use crate::llm::HttpTransport;
use crate::session::{last_consistent_len, Committed};
use super::events::EventKind;
use crate::store::SharedStore;

impl AgentRuntime {
    /// Attaches a session store (STORE-4) — what a config's `store` does at construction,
    /// for hosts that attach one later (the C ABI): opens `session_id` (default: this
    /// runtime's) in `store`. A session with commits replaces this runtime's state (the
    /// runtime resumes it); a new session starts from the current state, written in full
    /// at once (a kill right after loses nothing; a `session_committed` event tells).
    /// Errors: `session_locked`, the store's codes, `run_in_progress`,
    /// `invalid_config` when a store is already attached or a sub-agent asks.
    pub fn attach_store(&self, store: SharedStore, session_id: Option<&str>) -> Result<(), ArkAgentError> {
        if self.inner.depth > 0 {
            return Err(ArkAgentError::config(ErrorCode::InvalidConfig, "a sub-agent does not write to a store"));
        }
        let committed = {
            let _answers = self.inner.hold_answers();
            let slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
            if slot.is_some() {
                return Err(ArkAgentError::RunInProgress);
            }
            self.inner.session.attach(store, session_id)?
        };
        // STORE-4: a non-empty runtime's first write is a commit like any other (told
        // once the locks are let go: an observer may call back in).
        if let Some(Committed { commit_seq, message_count }) = committed {
            self.inner.emit("", EventKind::SessionCommitted { commit_seq, message_count });
        }
        Ok(())
    }

    /// Detaches the session store (STORE-6): releases the session's lock so another
    /// runtime (in this process or another) can open it, without waiting for this runtime
    /// to be dropped (hosts with a garbage collector). Everything committed stays stored;
    /// the runtime keeps its state but commits nothing more — except a turn paused for
    /// approval (TOOL-2), which goes with the stored session: no call waits here any more
    /// (answering or resuming gives `approval_not_pending`), so a call is never answered, nor
    /// run, both here and by the runtime that opens the session next. False when no store
    /// was attached. Errors: `run_in_progress` during a run.
    pub fn detach_store(&self) -> Result<bool, ArkAgentError> {
        // An answer being made is committed (or taken back) first, into the store it
        // answers in; the turn then goes with the session.
        let _answers = self.inner.hold_answers();
        let slot = self.inner.active_run.lock().map_err(|_| ArkAgentError::RunInProgress)?;
        if slot.is_some() {
            return Err(ArkAgentError::RunInProgress);
        }
        let detached = self.inner.session.detach();
        if detached {
            self.inner.session.drop_pending_turn();
        }
        drop(slot);
        Ok(detached)
    }

    /// True when a session store is attached.
    pub fn has_store(&self) -> bool {
        self.inner.session.has_store()
    }

    /// A runtime resumed from exported state (CORE-6). Errors: `invalid_json`,
    /// `invalid_state`, `invalid_config`.
    pub fn resume(config: AgentRuntimeConfig, transport: Arc<dyn HttpTransport>, state_json: &str) -> Result<Self, ArkAgentError> {
        let runtime = Self::new(config, transport)?;
        runtime.import_state(state_json)?;
        Ok(runtime)
    }

    /// The whole state as JSON: history, episodic memories, usages, session id. Holds no
    /// secrets (the config is not part of it).
    ///
    /// Callable at any moment — from a tool, from an observer at any event, while a run is
    /// in flight — and always importable (CORE-6): while a turn's tool calls are still
    /// running, the export holds the last consistent history, without that open turn's
    /// assistant message and the results that came in so far (a turn is committed only
    /// when paired). Usages keep every call already made: it was paid for.
    pub fn export_state(&self) -> Result<String, ArkAgentError> {
        let snapshot = self.inner.session.snapshot();
        if HistoryInvariants::tool_calls_paired(&snapshot.history.messages) {
            return snapshot.to_json();
        }
        let mut consistent = (*snapshot).clone();
        consistent.history.messages.truncate(last_consistent_len(&snapshot.history.messages));
        consistent.to_json()
    }

    /// Replaces the state with an exported one after validating it. With a session store
    /// the imported state also replaces the stored session, in one commit, and keeps the
    /// attached session's id (the exported one is not taken over). Errors:
    /// `invalid_json`, `invalid_state`, `run_in_progress`, the store's codes: then the
    /// store write failed and the runtime keeps its old state (in memory and stored); an
    /// image code (`image_unsupported_type`, `image_too_large`, `too_many_images`) when a
    /// photo of the imported history is out of this model's bounds (IMG-5): nothing changed.
    pub fn import_state(&self, state_json: &str) -> Result<(), ArkAgentError> {
        let state = self.parse_import(state_json)?;
        let active = self.claim()?;
        active.inner.import_claimed(state)
    }

    /// [`import_state`](Self::import_state) for bindings that must not write the store on
    /// their caller's thread: validates and claims the run slot *now* (errors:
    /// `invalid_json`, `invalid_state`, `run_in_progress`). Without a store the state is
    /// replaced and the slot freed before this returns. With one, the returned future
    /// writes the store and swaps the state only when the write succeeded; the slot stays
    /// taken until the [`RunSlot`] it hands over is dropped.
    #[allow(clippy::type_complexity)]
    pub fn start_import_state_holding_slot(
        &self,
        state_json: &str,
    ) -> Result<impl Future<Output = (Result<(), ArkAgentError>, Option<RunSlot>)> + Send + 'static, ArkAgentError> {
        let state = self.parse_import(state_json)?;
        let active = self.claim()?;
        // With a store: the import waits for the future (Ok). Without: done now (Err).
        let pending = if self.inner.session.has_store() { Ok((state, active)) } else { Err(active.inner.import_claimed(state)) };
        Ok(async move {
            match pending {
                Ok((state, active)) => (active.inner.import_claimed(state), Some(RunSlot::new(active))),
                Err(done) => (done, None),
            }
        })
    }

    fn parse_import(&self, state_json: &str) -> Result<AgentState, ArkAgentError> {
        // LLM-4: a state that carries the key (saved by an older version, or edited) does
        // not bring it in. The replacement has no JSON metacharacters, so the text stays
        // the same JSON.
        let Cow::Owned(redacted) = self.inner.config.model.redact_cow(state_json) else {
            return AgentState::from_json(state_json);
        };
        let mut state = AgentState::from_json(&redacted)?;
        // THINK-2: a signed reasoning block is never rewritten: the answers keep their
        // blocks as given, and the session's door drops the blocks of an answer when one
        // holds the secret.
        let given = AgentState::from_json(state_json)?;
        let redact = |piece: &str| self.inner.config.model.redact_cow(piece).into_owned();
        restore_blocks(&mut state.history.messages, &given.history.messages, &redact);
        if let (Some(turn), Some(was)) = (&mut state.pending_turn, &given.pending_turn) {
            restore_blocks(std::slice::from_mut(&mut turn.assistant), std::slice::from_ref(&was.assistant), &redact);
        }
        for (episode, was) in state.history.episodic_memories.iter_mut().zip(&given.history.episodic_memories) {
            restore_blocks(Arc::make_mut(&mut episode.archived_messages).as_mut_slice(), &was.archived_messages, &redact);
        }
        Ok(state)
    }
}

/// Puts each answer's reasoning blocks back as they were given. An interleaved answer's
/// text is the given one redacted as text (`redact`; the JSON's redaction misses a key
/// written with escapes), its block order recounted over the redacted text blocks.
fn restore_blocks(messages: &mut [Message], given: &[Message], redact: &dyn Fn(&str) -> String) {
    for (message, was) in messages.iter_mut().zip(given) {
        if let (Message::Assistant { thinking, content, .. }, Message::Assistant { thinking: given, content: before, .. }) = (message, was) {
            thinking.clone_from(given);
            if thinking.order().is_some() {
                *content = before.as_deref().map(redact);
            }
            thinking.recount_text(before.as_deref().unwrap_or_default(), content.as_deref().unwrap_or_default(), redact);
        }
    }
}

impl Inner {
    /// Imports a state (the caller holds the run slot) through [`Session::import`](crate::session::Session::import): with
    /// a store it is written first, replacing the stored session under the attached
    /// session's id (STORE-4), and nobody sees it before that write committed; when the
    /// write fails nothing changed.
    pub(super) fn import_claimed(&self, state: AgentState) -> Result<(), ArkAgentError> {
        if let Some(Committed { commit_seq, message_count }) = self.session.import(state)? {
            self.emit("", EventKind::SessionCommitted { commit_seq, message_count });
        }
        Ok(())
    }
}
