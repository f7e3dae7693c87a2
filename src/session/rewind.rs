//! CHAT-1, CHAT-2: the session cut at a run — a rewind (the run and everything after it
//! dropped, written to the store before anyone sees it) and a fork's starting state.

use serde::Serialize;

use super::Session;
use crate::error::{ArkAgentError, ErrorCode};
use crate::history::{AgentState, ChildUsageSummary, Content, History, Message, UsageSource};
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

/// The state cut before run `index`'s input (live message `live`), and what was dropped.
struct Cut {
    state: AgentState,
    result: RewindResult,
    /// Usages and sub-agent records from these indices on were marked discarded.
    rewritten_from: (usize, usize),
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

/// CHAT-1: `state` as it was just before run `run_id` began; the turns after it have their
/// usages (compressions excepted: their episodes stay) and sub-agent records marked
/// discarded, never removed.
fn cut(state: &AgentState, run_id: &str) -> Result<Cut, ArkAgentError> {
    let (index, live) = locate(state, run_id)?;
    let mark = &state.runs[index];
    let input = match state.history.messages.get(live) {
        Some(Message::User { content }) => content.clone(),
        _ => return Err(ArkAgentError::InvalidState(format!("run {run_id:?} does not begin with its input"))),
    };
    let from = (usize::try_from(mark.usages).unwrap_or(usize::MAX), usize::try_from(mark.child_usages).unwrap_or(usize::MAX));
    let mut discarded = ChildUsageSummary::default();
    let mut usages = state.usages.clone();
    for usage in usages.iter_mut().skip(from.0).filter(|u| !u.discarded && u.source != Some(UsageSource::ContextCompression)) {
        usage.discarded = true;
        discarded.add_usage(usage);
    }
    let mut child_usages = state.child_usages.clone();
    for record in child_usages.iter_mut().skip(from.1).filter(|r| !r.discarded) {
        record.discarded = true;
        discarded = discarded.plus(record.usage.clone());
    }
    let next = AgentState {
        version: state.version,
        session_id: state.session_id.clone(),
        history: History { messages: state.history.messages[..live].to_vec(), episodic_memories: state.history.episodic_memories.clone() },
        usages,
        child_usages,
        token_calibration: state.token_calibration.clone(),
        // The paused turn belongs to the last run, which is always dropped.
        pending_turn: None,
        runs: state.runs[..index].to_vec(),
    };
    let result = RewindResult {
        run_id: run_id.to_owned(),
        dropped_run_ids: state.runs[index..].iter().map(|m| m.run_id.clone()).collect(),
        input_text: input.text().into_owned(),
        messages_removed: (state.history.messages.len() - live) as u64,
        message_count: live as u64,
        discarded,
        input,
    };
    Ok(Cut { state: next, result, rewritten_from: from })
}

/// CHAT-2: a new session `session_id` holding `state` through run `through` (`None`: all
/// of it, a paused turn included): the messages, episodes, run marks and calibration; no
/// usages (what was spent stays the source session's).
fn fork_of(state: &AgentState, through: Option<&str>, session_id: &str) -> Result<AgentState, ArkAgentError> {
    let (runs, live, pending) = match through {
        None => (state.runs.len(), state.history.messages.len(), state.pending_turn.clone()),
        Some(run_id) => {
            let (index, _) = locate(state, run_id)?;
            match state.runs.get(index + 1) {
                None => (index + 1, state.history.messages.len(), state.pending_turn.clone()),
                Some(next) => (index + 1, live_index(state, next.message, run_id)?, None),
            }
        }
    };
    Ok(AgentState {
        version: state.version,
        session_id: session_id.to_owned(),
        history: History { messages: state.history.messages[..live].to_vec(), episodic_memories: state.history.episodic_memories.clone() },
        usages: Vec::new(),
        child_usages: Vec::new(),
        token_calibration: state.token_calibration.clone(),
        pending_turn: pending,
        runs: state.runs[..runs].iter().map(|m| crate::history::RunMark { usages: 0, child_usages: 0, ..m.clone() }).collect(),
    })
}

impl Session {
    /// CHAT-1: drops run `run_id` and every later run — their messages, a turn paused for
    /// approval, their run marks — as one change: with a store it is written first (the
    /// messages' rows deleted, the usages' rows marked discarded, in one transaction) and
    /// only then does anyone see it; when the write fails nothing changed. The reset
    /// ritual follows (the provider's count and the prompt size are forgotten; the
    /// calibration stays). The caller holds the run slot. Errors: `unknown_run`,
    /// `run_compressed`, the store's codes.
    pub fn rewind(&self, run_id: &str) -> Result<(RewindResult, Option<Committed>), ArkAgentError> {
        let mut persist = self.lock_persist();
        let cut = cut(&self.snapshot(), run_id)?;
        let committed = match persist.as_mut() {
            None => None,
            Some(p) => p.commit_rewind(&cut.state, cut.rewritten_from, &*self.clock)?,
        };
        // Under the store lock: no commit point can run between the write and the swap.
        self.reset_to(cut.state);
        drop(persist);
        Ok((cut.result, committed))
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
