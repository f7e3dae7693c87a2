//! CHAT-1, CHAT-2: where each run began, so a rewind or a fork can be addressed by the run
//! id the app already has (`RunOutcome.run_id`, every event's `run_id`).

use serde::{Deserialize, Serialize};

use crate::error::ArkAgentError;

/// Where one run of the session began: the position of its input and how many usages and
/// sub-agent records the session had then. One per run that pushed an input, in order.
///
/// JSON (the state's `runs`): `{"run_id","message","usages","child_usages"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunMark {
    /// The run's id.
    pub run_id: String,
    /// Absolute position of the run's input message: messages the session ever had
    /// before it, those archived by compressions included.
    pub message: u64,
    /// Usages the session had recorded when the run began.
    pub usages: u64,
    /// Sub-agent records the session had when the run began.
    pub child_usages: u64,
}

/// Checks a state's run marks: non-empty unique ids, positions increasing, counts within
/// the state's (`end`: the absolute position after the last live message).
pub(super) fn validate_runs(runs: &[RunMark], end: u64, usages: usize, child_usages: usize) -> Result<(), ArkAgentError> {
    let mut ids = std::collections::HashSet::new();
    let mut last: Option<&RunMark> = None;
    for mark in runs {
        let bad = |why: &str| Err(ArkAgentError::InvalidState(format!("run mark {:?}: {why}", mark.run_id)));
        if mark.run_id.is_empty() || !ids.insert(mark.run_id.as_str()) {
            return bad("empty or repeated run id");
        }
        if mark.message >= end {
            return bad("its input is past the history's end");
        }
        if mark.usages > usages as u64 || mark.child_usages > child_usages as u64 {
            return bad("counts more usages than the state has");
        }
        if let Some(prev) = last {
            if mark.message <= prev.message || mark.usages < prev.usages || mark.child_usages < prev.child_usages {
                return bad("not after the run before it");
            }
        }
        last = Some(mark);
    }
    Ok(())
}
