//! The gestures of a chat app (CHAT-1, CHAT-2): rewind to before a run, regenerate a run,
//! edit a run's input and send it again, fork the session from a run. Each takes the run
//! slot (`run_in_progress` during a run) and names its point by a run id — what the app
//! already has from `RunOutcome.run_id` and every event's `run_id`.

use std::future::Future;
use std::sync::Arc;

use tracing::Instrument;

use super::agent::{AgentRuntime, Inner};
use super::events::EventKind;
use super::outcome::RunOutcome;
use super::start::{ActiveRun, RunSlot};
use crate::error::ArkAgentError;
use crate::history::Content;
use crate::session::{Committed, RewindResult, RewindUndo};

impl AgentRuntime {
    /// CHAT-1: goes back to just before run `run_id` began: that run and every later one
    /// are dropped — their messages, a turn of theirs paused for approval, their run
    /// marks — as one change. With a session store it is written first, in one
    /// transaction (the messages' rows deleted, their usages' rows marked discarded), and
    /// only then does anyone see it: a kill leaves either the old session or the rewound
    /// one. What the dropped turns spent stays counted (`UsageTotals.discarded`: the
    /// provider billed it). The next request starts with the bytes the provider saw up to
    /// that point, so its prompt cache still serves them; the token calibration keeps what
    /// it learned. Emits `session_rewound` (then `session_committed` with a store).
    ///
    /// Only runs whose input is still in the live history can be named: errors
    /// `unknown_run` (no such run in this session, or an earlier rewind dropped it),
    /// `run_compressed` (a compression archived its input into an episode: rewinding
    /// into an episode is refused, never a guess), `invalid_state` (an imported history
    /// marks the run inside a tool cycle), `run_in_progress`, the store's codes (then
    /// nothing changed).
    pub fn rewind(&self, run_id: &str) -> Result<RewindResult, ArkAgentError> {
        let active = self.claim()?;
        active.inner.rewind_claimed(run_id).map(|(result, _)| result)
    }

    /// [`rewind`](Self::rewind) for bindings that must not write the store on their
    /// caller's thread: claims the run slot and checks `run_id` *now* (errors
    /// `run_in_progress`, `unknown_run`, `run_compressed`); the future writes and swaps,
    /// then hands the slot over like [`start_run_holding_slot`](Self::start_run_holding_slot)
    /// (a binding drops it once the caller has the result, so no run slips in between).
    pub fn start_rewind_holding_slot(
        &self,
        run_id: &str,
    ) -> Result<impl Future<Output = (Result<RewindResult, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim()?;
        active.inner.session.check_rewind(run_id)?;
        let run_id = run_id.to_owned();
        Ok(async move {
            let result = active.inner.rewind_claimed(&run_id).map(|(result, _)| result);
            (result, RunSlot::new(active))
        })
    }

    /// CHAT-1: "regenerate this answer" — [`rewind`](Self::rewind) to run `run_id`, then
    /// a new run (a new run id) of the same input, as one call. Errors: the rewind's, then
    /// the run's; a failed rewind starts no run. One transaction: when the run fails
    /// before the model answered (its input taken back, as [`run`](Self::run) does — the
    /// provider down, say), what the rewind dropped is put back, in the store too
    /// (`session_committed`), so the session is as before the call and the call can be
    /// made again. A run that failed after an answer keeps what it did, as any run.
    pub async fn regenerate(&self, run_id: &str) -> Result<RunOutcome, ArkAgentError> {
        let (outcome, _slot) = self.start_regenerate_holding_slot(run_id)?.await;
        outcome
    }

    /// CHAT-1: "edit my message and send it again" — [`rewind`](Self::rewind) to run
    /// `run_id`, then a new run of `input` in its place, as one call. Errors: the
    /// rewind's, the input's image checks (before anything changes), then the run's; a
    /// run that fails before the model answered puts the session back as
    /// [`regenerate`](Self::regenerate) says.
    pub async fn edit_and_resend(&self, run_id: &str, input: impl Into<Content>) -> Result<RunOutcome, ArkAgentError> {
        let (outcome, _slot) = self.start_edit_and_resend_holding_slot(run_id, input)?.await;
        outcome
    }

    /// [`regenerate`](Self::regenerate) with the run slot claimed and `run_id` checked
    /// *now*; the future hands the slot over like
    /// [`start_run_holding_slot`](Self::start_run_holding_slot).
    pub fn start_regenerate_holding_slot(
        &self,
        run_id: &str,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        self.begin_rerun(run_id, None)
    }

    /// [`edit_and_resend`](Self::edit_and_resend) with the run slot claimed, `run_id` and
    /// the input's images checked *now*; the future hands the slot over.
    pub fn start_edit_and_resend_holding_slot(
        &self,
        run_id: &str,
        input: impl Into<Content>,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        self.begin_rerun(run_id, Some(input.into()))
    }

    fn begin_rerun(
        &self,
        run_id: &str,
        input: Option<Content>,
    ) -> Result<impl Future<Output = (Result<RunOutcome, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim()?;
        active.inner.session.check_rewind(run_id)?;
        // IMG-9: photos a codec will prepare are checked once prepared, in the run.
        if let Some(input) = input.as_ref().filter(|i| self.inner.config.image_codec.is_none() || !i.has_images()) {
            active.inner.session.check_input(input)?;
        }
        let (rewound, new_run) = (run_id.to_owned(), self.inner.new_run_id()?);
        let span = tracing::info_span!("arkagent.run", run_id = %new_run, rewound = %rewound);
        Ok(async move {
            let outcome = rerun(&active, &rewound, input, &new_run).await;
            (outcome, RunSlot::new(active))
        }
        .instrument(span))
    }

    /// CHAT-2: a new session `new_session_id` starting from this one through run
    /// `through_run_id` (its answer included; `None`: the whole session, a turn paused for
    /// approval included). It has the messages, the episodes (copied: the fork owns its
    /// own), the run marks (so it can be rewound too) and the token calibration; its
    /// usages start empty — what was spent stays this session's, so the totals of both
    /// add up to what the provider billed. Working and short-term memory belong to a
    /// runtime, not a session: the fork's runtime starts with its own. With a session
    /// store the fork is written into it as a new session, in one transaction; a runtime
    /// configured with `new_session_id` and the store then resumes it. Returns the fork's
    /// state as JSON (what `import_state` and `resume` take; without a store, the only
    /// copy). Both sessions are independent afterwards; the fork's first request starts
    /// with the bytes this session sent up to the point, so the provider's prompt cache
    /// serves them. Errors: `unknown_run`, `run_compressed` (the point is inside what a
    /// compression archived), `session_exists` (the store has that session, or it is this
    /// session's id), `session_locked` (another runtime has that session open),
    /// `invalid_config` (an empty id), `run_in_progress`, the store's codes
    /// (then nothing was written).
    pub fn fork(&self, new_session_id: &str, through_run_id: Option<&str>) -> Result<String, ArkAgentError> {
        let active = self.claim()?;
        active.inner.fork_claimed(new_session_id, through_run_id)
    }

    /// [`fork`](Self::fork) with the run slot claimed and the point checked *now*; the
    /// future writes the store, then hands the slot over like
    /// [`start_rewind_holding_slot`](Self::start_rewind_holding_slot).
    pub fn start_fork_holding_slot(
        &self,
        new_session_id: &str,
        through_run_id: Option<&str>,
    ) -> Result<impl Future<Output = (Result<String, ArkAgentError>, RunSlot)> + Send + 'static, ArkAgentError> {
        let active = self.claim()?;
        let state = active.inner.fork_state(new_session_id, through_run_id)?;
        Ok(async move {
            let result = active.inner.write_fork(state);
            (result, RunSlot::new(active))
        })
    }
}

/// A rewind to `rewound`, then a run of `input` (the dropped input when `None`) — one
/// transaction: when the run fails before the model answered (its input taken back), what
/// the rewind dropped is put back.
async fn rerun(active: &ActiveRun, rewound: &str, input: Option<Content>, run_id: &str) -> Result<RunOutcome, ArkAgentError> {
    let inner = Arc::clone(&active.inner);
    let (result, undo) = inner.rewind_claimed(rewound)?;
    let input = input.unwrap_or(result.input);
    let outcome = Box::pin(inner.run_loop(input, run_id, &active.cancel)).await;
    if outcome.is_err() {
        inner.put_back(undo);
    }
    outcome
}

impl Inner {
    /// A rewind (the caller holds the run slot), with its events; the [`RewindUndo`] puts it
    /// back.
    pub(super) fn rewind_claimed(&self, run_id: &str) -> Result<(RewindResult, RewindUndo), ArkAgentError> {
        let (result, committed, undo) = self.session.rewind(run_id)?;
        self.emit(
            "",
            EventKind::SessionRewound {
                rewound_run_id: result.run_id.clone(),
                dropped_run_ids: result.dropped_run_ids.clone(),
                messages_removed: result.messages_removed,
                message_count: result.message_count,
                discarded: result.discarded.clone(),
            },
        );
        if let Some(Committed { commit_seq, message_count }) = committed {
            self.emit("", EventKind::SessionCommitted { commit_seq, message_count });
        }
        Ok((result, undo))
    }

    /// A new run's id: one this session has no run of (CHAT-1).
    pub(super) fn new_run_id(&self) -> Result<String, ArkAgentError> {
        self.session.fresh_run_id(|| self.config.id_generator.next_id())
    }

    /// Puts back what a regenerate's or an edit-and-resend's rewind dropped, when its run
    /// failed with the session still where the rewind left it: `session_committed` with a
    /// store (a failed write is logged; the next commit writes it).
    fn put_back(&self, undo: RewindUndo) {
        match self.session.put_back(undo) {
            None => {}
            Some(Ok(committed)) => {
                tracing::info!("the run failed before the model answered: the rewound runs are back");
                if let Some(Committed { commit_seq, message_count }) = committed {
                    self.emit("", EventKind::SessionCommitted { commit_seq, message_count });
                }
            }
            Some(Err(e)) => tracing::warn!(code = e.code().as_str(), "could not commit the rewound runs put back"),
        }
    }

    fn fork_state(&self, new_session_id: &str, through_run_id: Option<&str>) -> Result<crate::history::AgentState, ArkAgentError> {
        if new_session_id.trim().is_empty() {
            return Err(ArkAgentError::config(crate::error::ErrorCode::InvalidConfig, "the fork's session id is empty"));
        }
        self.session.fork_state(through_run_id, new_session_id)
    }

    fn fork_claimed(&self, new_session_id: &str, through_run_id: Option<&str>) -> Result<String, ArkAgentError> {
        let state = self.fork_state(new_session_id, through_run_id)?;
        self.write_fork(state)
    }

    fn write_fork(&self, state: crate::history::AgentState) -> Result<String, ArkAgentError> {
        self.session.write_fork(&state)?;
        state.to_json()
    }
}
