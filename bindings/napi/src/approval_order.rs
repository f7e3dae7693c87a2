//! The order of the approval answers (TOOL-1): approve(), reject() and cancelApprovals()
//! are made off the JS thread, on whichever worker thread runs first, yet in the order JS
//! called them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use arkagent::tools::ApprovalDecision;
use napi_ohos::bindgen_prelude::Either;

use crate::error::CodedError;

/// What one approval call does off the JS thread (its store commit included).
pub enum Answer {
    /// One call's decision (resolves `undefined`), and whether a run held the slot when
    /// JS gave it (then refused with "run_in_progress" unless it answers a sub-agent's call).
    Decide(String, ApprovalDecision, bool),
    /// cancelApprovals() (resolves whether a turn was closed).
    CancelAll,
}

/// What one answer settles its Promise with.
pub type Outcome = Result<Either<(), bool>, CodedError>;

/// Where a queued answer's result waits for its Promise.
pub type Slot = Arc<Mutex<Option<Outcome>>>;

/// The approval answers JS gave and no worker thread has made yet, in the order JS gave
/// them (TOOL-1): each answer's future runs on any worker thread, whichever first, and makes
/// every answer queued before its own, in order. A dialog tapped twice is answered by the
/// first tap; the second is the one refused with "approval_already_answered".
#[derive(Default)]
pub struct AnswerQueue {
    queued: Mutex<VecDeque<(Answer, Slot)>>,
    /// Held while answers are made, so a later answer never overtakes an earlier one.
    answering: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl AnswerQueue {
    /// Queues `answer` behind those given before it (call it on the JS thread); its result
    /// will be in the returned slot once `answer_in_order` made it.
    pub fn queue(&self, answer: Answer) -> Slot {
        let slot = Slot::default();
        lock(&self.queued).push_back((answer, Arc::clone(&slot)));
        slot
    }

    /// Takes back the answer whose result goes to `slot` if no worker has made it yet (its
    /// Promise could not be created: the answer must not be made behind the caller's back).
    pub fn withdraw(&self, slot: &Slot) {
        lock(&self.queued).retain(|(_, queued)| !Arc::ptr_eq(queued, slot));
    }

    /// Makes every queued answer up to and including the one whose result goes to `slot`
    /// (and any queued after it), in order; returns that one's result.
    pub fn answer_in_order(&self, core: &arkagent::AgentRuntime, slot: &Mutex<Option<Outcome>>) -> Outcome {
        let _answering = lock(&self.answering);
        while let Some((answer, its_slot)) = lock(&self.queued).pop_front() {
            let outcome = match answer {
                Answer::Decide(call_id, decision, was_running) => core.answer_approval_given(&call_id, decision, was_running).map(Either::A),
                Answer::CancelAll => core.cancel_approvals().map(Either::B),
            };
            *lock(&its_slot) = Some(outcome.map_err(CodedError::from));
        }
        lock(slot).take().unwrap_or_else(|| Err(CodedError::internal("an approval answer was lost")))
    }
}
