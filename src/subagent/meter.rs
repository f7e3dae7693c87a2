//! ISO-5: a child's token meter. The budget covers the child's whole subtree: its own
//! children's calls (`max_depth` > 1) count too, and so do the summarizer calls of its
//! compressions (issue 28 item 4), committed or not: they were paid for.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use crate::compress::estimate_tokens;

/// Tracks a child's tokens, tools and model calls; trips the budget (ISO-5) by
/// cancelling `force`, and with it the child's run and its calls in flight.
pub(crate) struct Meter {
    budget: Option<u64>,
    tokens: Mutex<MeterState>,
    force: CancellationToken,
    /// The child's own session id: its own calls, apart from its descendants'.
    own: String,
}

/// A call in flight: its prompt estimate plus what it has streamed so far.
#[derive(Debug, Default, Clone, Copy)]
struct Pending {
    tokens: u64,
    streamed: bool,
}

/// What a [`Meter`] counted.
#[derive(Default)]
struct MeterState {
    /// Tokens of the calls whose usage the subtree records (the run loop's, a committed
    /// compression's summarizer calls).
    spent: u64,
    /// The part of `spent` that is the child's own calls.
    own_spent: u64,
    /// Tokens of summarizer calls whose usage is never recorded (a failed compression's,
    /// CMP-6): they count against the budget, not in the child's usage.
    unrecorded: u64,
    /// Per runtime of the subtree (by session id) with a call in flight.
    pending: HashMap<String, Pending>,
    /// Per runtime of the subtree compressing now: the estimates of the summarizer calls
    /// made so far, until the attempt's outcome brings their real usage (ISO-5).
    compressing: HashMap<String, u64>,
    tools_used: Vec<String>,
    tripped: bool,
}

impl MeterState {
    /// The estimates of the calls in flight (a call cut off mid-stream reports no usage).
    fn in_flight(&self) -> u64 {
        self.pending.values().fold(0, |a, b| a.saturating_add(b.tokens))
    }

    /// Everything the budget counts: recorded, unrecorded and in flight.
    fn charged(&self) -> u64 {
        let compressing = self.compressing.values().fold(0u64, |a, b| a.saturating_add(*b));
        self.spent.saturating_add(self.unrecorded).saturating_add(self.in_flight()).saturating_add(compressing)
    }
}

/// What a [`Meter`] counted so far, for the child's record (ISO-1, ISO-4).
#[derive(Debug, Default, Clone)]
pub(crate) struct Counted {
    /// The subtree's tokens: answered calls as reported (estimated when not) plus the
    /// estimate so far of calls cut off mid-answer.
    pub(crate) tokens: u64,
    /// The same for the child's own calls alone.
    pub(crate) own_tokens: u64,
    /// Distinct tools the child itself started, in first-use order.
    pub(crate) tools_used: Vec<String>,
    /// True once the budget tripped.
    pub(crate) tripped: bool,
}

impl Meter {
    /// A meter of the child whose session is `own`, tripping at `budget` tokens (never
    /// when `None`).
    pub(crate) fn new(budget: Option<u64>, force: CancellationToken, own: String) -> Self {
        Self { budget, tokens: Mutex::default(), force, own }
    }

    fn lock(&self) -> MutexGuard<'_, MeterState> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What it counted so far.
    pub(crate) fn counted(&self) -> Counted {
        let state = self.lock();
        let own_in_flight = state.pending.get(&self.own).map_or(0, |p| p.tokens);
        Counted {
            tokens: state.spent.saturating_add(state.in_flight()),
            own_tokens: state.own_spent.saturating_add(own_in_flight),
            tools_used: state.tools_used.clone(),
            tripped: state.tripped,
        }
    }

    /// Trips the budget when what was spent plus the calls in flight reaches it: cancels
    /// the child's run, and with it the calls in flight.
    fn charge(&self, state: &mut MeterState) {
        if let Some(budget) = self.budget {
            if state.charged() >= budget && !state.tripped {
                state.tripped = true;
                self.force.cancel();
            }
        }
    }

    /// Before a call of `session`: stop it if the prompt alone would cross the budget.
    pub(crate) fn requested(&self, session: &str, estimated_prompt_tokens: u64) {
        let mut state = self.lock();
        state.pending.insert(session.to_owned(), Pending { tokens: estimated_prompt_tokens, streamed: false });
        self.charge(&mut state);
    }

    /// A streamed delta of a call in flight: counted as it arrives (ISO-5); it may cross
    /// the budget mid-call.
    pub(crate) fn streamed(&self, session: &str, text: &str) {
        let mut state = self.lock();
        if let Some(pending) = state.pending.get_mut(session) {
            pending.tokens = pending.tokens.saturating_add(estimate_tokens(text));
            pending.streamed = true;
            self.charge(&mut state);
        }
    }

    /// A call of `session` answered: its real usage where reported, the estimate otherwise.
    pub(crate) fn answered(&self, session: &str, total_tokens: Option<u64>) {
        let mut state = self.lock();
        let estimate = state.pending.remove(session).unwrap_or_default().tokens;
        let used = total_tokens.unwrap_or(estimate);
        state.spent = state.spent.saturating_add(used);
        if session == self.own {
            state.own_spent = state.own_spent.saturating_add(used);
        }
        self.charge(&mut state);
    }

    /// The run of `session` failed: a call of it still in flight was answered with an
    /// error before any of an answer arrived, so it used nothing (its usage is never
    /// recorded either); a call cut off mid-answer keeps its estimate so far.
    pub(crate) fn failed(&self, session: &str) {
        let mut state = self.lock();
        if state.pending.get(session).is_some_and(|p| !p.streamed) {
            state.pending.remove(session);
        }
    }

    /// A compression attempt of `session` in the subtree ended having spent `total_tokens` on
    /// summarizer calls; `committed`: its usage is recorded with the compression (else it
    /// is reported only, CMP-6). Either way they count against the budget.
    pub(crate) fn compressed(&self, session: &str, total_tokens: u64, committed: bool) {
        let mut state = self.lock();
        // The real usage replaces the estimates counted call by call — where reported: a
        // committed compression's calls were all answered, so a total of 0 means no usage
        // came back and the estimates stand (ISO-5).
        let estimated = state.compressing.remove(session).unwrap_or(0);
        let total_tokens = if committed && total_tokens == 0 { estimated } else { total_tokens };
        if committed && session == self.own {
            state.own_spent = state.own_spent.saturating_add(total_tokens);
        }
        let sum = if committed { &mut state.spent } else { &mut state.unrecorded };
        *sum = sum.saturating_add(total_tokens);
        self.charge(&mut state);
    }

    /// A compression of `session` is about to make a summarizer call of
    /// `estimated_prompt_tokens` (ISO-5): counted before it is made, so a budget it would
    /// cross stops the attempt there, not after the whole compression.
    pub(crate) fn summarizing(&self, session: &str, estimated_prompt_tokens: u64) {
        let mut state = self.lock();
        let sum = state.compressing.entry(session.to_owned()).or_default();
        *sum = sum.saturating_add(estimated_prompt_tokens);
        self.charge(&mut state);
    }

    /// The child itself started a tool (first use recorded).
    pub(crate) fn tool_started(&self, name: &str) {
        let mut state = self.lock();
        if !state.tools_used.iter().any(|t| t == name) {
            state.tools_used.push(name.to_owned());
        }
    }
}
