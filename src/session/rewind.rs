//! CHAT-1, CHAT-2: the session cut at a run — a rewind (the run and everything after it
//! dropped, written to the store before anyone sees it) and a fork's starting state.

use serde::Serialize;

use super::Session;
use crate::error::{ArkAgentError, ErrorCode};
use std::sync::Arc;

use crate::history::{AgentState, ChildUsageSummary, Content, History, Message, PendingTurn, RunMark, UsageSource};
use crate::session::Committed;

/// What a rewind dropped (CHAT-1): the run it went back to, every run after it, and what
/// their turns had spent — which stays in the session's totals.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewindResult {
    /// The run the session went back to: it is gone with every later run, and the
    /// session is as it was just before that run began.
    pub run_id: String,
    /// The ids of the runs dropped, oldest first (the run gone back to first).
    pub dropped_run_ids: Vec<String>,
    /// The text of the dropped run's input (an image stands as its line): what an "edit"
    /// button puts back into the text box.
    pub input_text: String,
    /// Live history messages removed.
    pub messages_removed: u64,
    /// Live history messages left.
    pub message_count: u64,
    /// What the dropped turns had spent (their model calls and delegations): still in
    /// every total, and in `UsageTotals.discarded`.
    pub discarded: ChildUsageSummary,
    /// The dropped run's input as stored (text or parts): what a regenerate sends again.
    #[serde(skip)]
    pub input: Content,
}

/// The run mark named `run_id` and its input's live index. Errors: `unknown_run`,
/// `run_compressed`.
fn locate(state: &AgentState, run_id: &str) -> Result<(usize, usize), ArkAgentError> {
    let Some(index) = state.runs.iter().position(|m| m.run_id == run_id) else {
        return Err(ArkAgentError::gesture(ErrorCode::UnknownRun, format!("this session has no run {run_id:?}")));
    };
    let live = live_index(state, state.runs[index].message, run_id)?;
    Ok((index, live))
}

/// The live index of absolute position `message`. Errors: `run_compressed` when a
/// compression archived it.
fn live_index(state: &AgentState, message: u64, run_id: &str) -> Result<usize, ArkAgentError> {
    let archived = state.archived_count();
    let Some(live) = message.checked_sub(archived).and_then(|l| usize::try_from(l).ok()) else {
        return Err(ArkAgentError::gesture(
            ErrorCode::RunCompressed,
            format!("run {run_id:?} is inside what a compression archived: only the live history can be rewound or forked"),
        ));
    };
    Ok(live.min(state.history.messages.len()))
}

/// What a rewind took out of the state, to put back when the store refuses it, or when
/// the run of a regenerate or an edit-and-resend fails before the model answered
/// ([`Session::put_back`]).
pub struct RewindUndo {
    messages: Vec<Message>,
    runs: Vec<RunMark>,
    pending: Option<PendingTurn>,
    usages: Vec<usize>,
    child_usages: Vec<usize>,
    /// The absolute position of the cut and the run marks kept: where the state must
    /// still be for the dropped part to go back.
    at: u64,
    runs_kept: usize,
    /// The first usage and sub-agent record the rewind marked discarded from.
    from: (usize, usize),
    /// Episodes when the rewind was made: more since means a compression committed.
    episodes: usize,
}

impl RewindUndo {
    /// Whether `state` is where the rewind left it, so that this can go back.
    fn fits(&self, state: &AgentState) -> bool {
        let at = state.archived_count() + state.history.messages.len() as u64;
        at == self.at
            && state.runs.len() == self.runs_kept
            && state.pending_turn.is_none()
            && self.usages.iter().all(|&i| i < state.usages.len())
            && self.child_usages.iter().all(|&i| i < state.child_usages.len())
    }

    fn restore(self, state: &mut AgentState) {
        state.history.messages.extend(self.messages);
        state.runs.extend(self.runs);
        state.pending_turn = self.pending;
        for i in self.usages {
            state.usages[i].discarded = false;
        }
        for i in self.child_usages {
            state.child_usages[i].discarded = false;
        }
    }
}

/// CHAT-1: cuts `state` in place just before run `index` (its input the live message
/// `live`): the later messages, run marks and a paused turn (which belongs to the last run,
/// always dropped) move out; the usages from `from.0` on (compressions excepted: their
/// episodes stay) and the sub-agent records from `from.1` on are marked discarded, never
/// removed. O(what is dropped): the kept history is not copied.
fn cut(state: &mut AgentState, index: usize, live: usize, from: (usize, usize)) -> (RewindResult, RewindUndo) {
    let at = state.archived_count() + live as u64;
    let mut undo = RewindUndo {
        messages: state.history.messages.split_off(live),
        runs: state.runs.split_off(index),
        pending: state.pending_turn.take(),
        usages: Vec::new(),
        child_usages: Vec::new(),
        at,
        runs_kept: index,
        from,
        episodes: state.history.episodic_memories.len(),
    };
    let mut discarded = ChildUsageSummary::default();
    for (i, usage) in state.usages.iter_mut().enumerate().skip(from.0) {
        if !usage.discarded && usage.source != Some(UsageSource::ContextCompression) {
            usage.discarded = true;
            discarded.add_usage(usage);
            undo.usages.push(i);
        }
    }
    for (i, record) in state.child_usages.iter_mut().enumerate().skip(from.1) {
        if !record.discarded {
            record.discarded = true;
            discarded = discarded.plus(record.usage.clone());
            undo.child_usages.push(i);
        }
    }
    let input = match undo.messages.first() {
        Some(Message::User { content }) => content.clone(),
        _ => Content::Text(String::new()),
    };
    let result = RewindResult {
        run_id: undo.runs.first().map(|m| m.run_id.clone()).unwrap_or_default(),
        dropped_run_ids: undo.runs.iter().map(|m| m.run_id.clone()).collect(),
        input_text: input.text().into_owned(),
        messages_removed: undo.messages.len() as u64,
        message_count: live as u64,
        discarded,
        input,
    };
    (result, undo)
}

/// CHAT-2: a new session `session_id` holding `state` through run `through` (`None`: all
/// of it, a paused turn included): the messages, episodes, run marks and calibration; no
/// usages (what was spent stays the source session's).
fn fork_of(state: &AgentState, through: Option<&str>, session_id: &str) -> Result<AgentState, ArkAgentError> {
    let (runs, live, pending) = match through {
        None => (state.runs.len(), state.history.messages.len(), state.pending_turn.clone()),
        Some(run_id) => {
            // The cut is after run `run_id`'s answer: its own input may be archived as long
            // as the next run's (the cut point) is live.
            let Some(index) = state.runs.iter().position(|m| m.run_id == run_id) else {
                return Err(ArkAgentError::gesture(ErrorCode::UnknownRun, format!("this session has no run {run_id:?}")));
            };
            match state.runs.get(index + 1) {
                None => (index + 1, state.history.messages.len(), state.pending_turn.clone()),
                Some(next) => (index + 1, live_index(state, next.message, run_id)?, None),
            }
        }
    };
    // A turn paused in this process still ends the live history with its model answer;
    // the fork carries it as its `pending_turn` only (as an export does: issue 42).
    let live = super::cursor::last_consistent_len(&state.history.messages[..live]);
    Ok(AgentState {
        version: state.version,
        session_id: session_id.to_owned(),
        history: History { messages: state.history.messages[..live].to_vec(), episodic_memories: state.history.episodic_memories.clone() },
        usages: Vec::new(),
        child_usages: Vec::new(),
        token_calibration: state.token_calibration.clone(),
        pending_turn: pending,
        runs: state.runs[..runs].iter().map(|m| RunMark { usages: 0, child_usages: 0, ..m.clone() }).collect(),
    })
}

impl Session {
    /// CHAT-1: drops run `run_id` and every later run — their messages, a turn paused for
    /// approval, their run marks — as one change: with a store it is written first (the
    /// messages' rows deleted, the usages' rows marked discarded, in one transaction) and
    /// only then does anyone see it; when the write fails nothing changed. The reset
    /// ritual follows (the provider's count and the prompt size are forgotten; the
    /// calibration stays). The caller holds the run slot. Errors: `unknown_run`,
    /// `run_compressed`, `invalid_state` (the run does not begin with its input, or begins
    /// inside a tool cycle: an imported history), the store's codes.
    /// The [`RewindUndo`] puts the dropped part back ([`put_back`](Self::put_back)).
    pub fn rewind(&self, run_id: &str) -> Result<(RewindResult, Option<Committed>, RewindUndo), ArkAgentError> {
        let mut persist = self.lock_persist();
        let mut guard = self.lock();
        let (index, live) = locate(&guard, run_id)?;
        if !matches!(guard.history.messages.get(live), Some(Message::User { .. })) {
            return Err(ArkAgentError::InvalidState(format!("run {run_id:?} does not begin with its input")));
        }
        // CORE-2: an imported history may mark a run inside a tool cycle; cutting there
        // would leave a call without its result.
        if !crate::history::HistoryInvariants::tool_calls_paired(&guard.history.messages[..live]) {
            return Err(ArkAgentError::InvalidState(format!("run {run_id:?} begins inside a tool cycle")));
        }
        let mark = &guard.runs[index];
        let from = (usize::try_from(mark.usages).unwrap_or(usize::MAX), usize::try_from(mark.child_usages).unwrap_or(usize::MAX));
        // In place (PERF-2: no copy of the kept history); the generation moves on.
        let state = Arc::make_mut(&mut guard);
        let (result, undo) = cut(state, index, live, from);
        let committed = match persist.as_mut().map(|p| p.commit_rewind(state, from, &*self.clock)) {
            None => None,
            Some(Ok(committed)) => committed,
            Some(Err(e)) => {
                undo.restore(state);
                return Err(e);
            }
        };
        drop(guard);
        drop(persist);
        self.reset_counts();
        Ok((result, committed, undo))
    }

    /// CHAT-1: puts back what a rewind dropped — when the session is still where the
    /// rewind left it (the same absolute end, as a compression since then keeps it; the
    /// same run marks; no paused turn): a regenerate or an edit-and-resend whose run failed
    /// before the model answered (its input taken back) leaves the session as it was
    /// before the gesture. With a store it is written first, as a rewind is (the rows
    /// again, the usages no longer discarded); when that write fails nothing changes (the
    /// session stays rewound). After a compression committed meanwhile, the answers put
    /// back lose their reasoning blocks but the open cycle's, as the kept ones did
    /// (THINK-2). `None` when the session moved on or `undo` is not this session's.
    pub fn put_back(&self, undo: RewindUndo) -> Option<Result<Option<Committed>, ArkAgentError>> {
        let mut persist = self.lock_persist();
        let mut guard = self.lock();
        if !undo.fits(&guard) {
            return None;
        }
        let compressed = guard.history.episodic_memories.len() != undo.episodes;
        let restore = |state: &mut AgentState| {
            let from = undo.from;
            undo.restore(state);
            if compressed {
                crate::compress::drop_unbound_thinking(&mut state.history.messages);
            }
            from
        };
        let committed = match persist.as_mut() {
            None => {
                restore(Arc::make_mut(&mut guard));
                None
            }
            Some(p) => {
                // Written from a copy: a refused write leaves the session as it is.
                let mut restored = AgentState::clone(&guard);
                let from = restore(&mut restored);
                match p.commit_rewind(&restored, from, &*self.clock) {
                    Ok(committed) => {
                        *guard = Arc::new(restored);
                        committed
                    }
                    Err(e) => return Some(Err(e)),
                }
            }
        };
        drop(guard);
        drop(persist);
        self.reset_counts();
        Some(Ok(committed))
    }

    /// CHAT-1: the first id from `next_id` that names no run of this session: two runs of
    /// one name could not be told apart, and a store would refuse the session when it is
    /// next opened. An id generator that restarts with the process (as
    /// [`SequentialIdGenerator`](crate::SequentialIdGenerator) does) repeats ids: those are
    /// skipped. `invalid_config` when the generator gives nothing new in as many tries as
    /// the session has runs, and 16 more.
    pub fn fresh_run_id(&self, next_id: impl Fn() -> String) -> Result<String, ArkAgentError> {
        let state = self.snapshot();
        let taken: std::collections::HashSet<&str> = state.runs.iter().map(|m| m.run_id.as_str()).collect();
        let id = crate::ids::fresh_id(taken.len() + 16, next_id, |id| taken.contains(id));
        id.ok_or_else(|| ArkAgentError::config(ErrorCode::InvalidConfig, "the id generator gives only run ids this session already has"))
    }

    /// CHAT-1: whether [`rewind`](Self::rewind) to `run_id` would be refused now
    /// (`unknown_run`, `run_compressed`); nothing changes.
    pub fn check_rewind(&self, run_id: &str) -> Result<(), ArkAgentError> {
        locate(&self.snapshot(), run_id).map(|_| ())
    }

    /// CHAT-2: the state of a fork named `session_id` from this session through run
    /// `through` (`None`: all of it). Errors: `unknown_run`, `run_compressed` (the cut
    /// would fall inside what a compression archived), `session_exists` (this session's
    /// own id).
    pub fn fork_state(&self, through: Option<&str>, session_id: &str) -> Result<AgentState, ArkAgentError> {
        let state = self.snapshot();
        if state.session_id == session_id {
            return Err(ArkAgentError::gesture(ErrorCode::SessionExists, "a fork needs a session id of its own"));
        }
        fork_of(&state, through, session_id)
    }
}
