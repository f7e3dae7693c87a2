//! TOOL-1, issue 37 item 5: a sub-agent's tool call that needs a person. A child cannot
//! pause its parent's run, so its call waits in flight — the child makes no model call
//! meanwhile — in the hub its delegation tree shares, under a tree-unique id
//! (`<child session id>/<call id>`); the root lists it in `pending_approvals` and routes an
//! answer naming it here. A cancel of the child (its parent's cancel, a force-completion,
//! its budget) answers the call `cancelled` and takes it out. Not durable: a delegation,
//! and so its waiting call, does not outlive the process.
//!
//! The hub remembers the last [`ENDED_KEPT`] calls that stopped waiting, so an answer that
//! comes late — the host's dialog answered twice, or after the sub-agent ended — gets
//! `approval_already_answered` or `approval_not_pending`, not the paused turn's answer
//! (which, while the root's run goes on, was `run_in_progress`: "try again later" for a
//! call that will never wait again; issue 42's call-sequence fuzzing found it).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::outcome::PendingApproval;
use crate::error::{ArkAgentError, ErrorCode};
use crate::tools::ApprovalDecision;

/// One waiting call of a sub-agent.
struct Waiter {
    approval: PendingApproval,
    /// The properties the tool's schema requires (edited arguments must have them).
    required: Vec<String>,
    reply: oneshot::Sender<ApprovalDecision>,
}

/// Where a runtime sits in its delegation tree: the tree's hub of waiting calls and the
/// session ids from the root's child down to this runtime (empty for the root).
#[derive(Clone, Default)]
pub(crate) struct TreePlace {
    pub(crate) approvals: Arc<ApprovalHub>,
    pub(crate) lineage: Vec<String>,
}

impl TreePlace {
    /// The place of a child with `session_id` below this runtime.
    pub(crate) fn child(&self, session_id: &str) -> Self {
        let mut lineage = self.lineage.clone();
        lineage.push(session_id.to_owned());
        Self { approvals: Arc::clone(&self.approvals), lineage }
    }
}

/// How many calls that stopped waiting a hub remembers.
pub(crate) const ENDED_KEPT: usize = 256;

/// The waiting calls of one delegation tree's sub-agents, and the last ones that ended.
#[derive(Default)]
pub(crate) struct ApprovalHub {
    waiting: Mutex<Calls>,
}

#[derive(Default)]
struct Calls {
    waiting: Vec<Waiter>,
    /// Calls that stopped waiting, newest last: the id and whether it was answered.
    ended: VecDeque<(String, bool)>,
}

impl Calls {
    fn ended(&mut self, id: String, answered: bool) {
        if self.ended.len() == ENDED_KEPT {
            self.ended.pop_front();
        }
        self.ended.push_back((id, answered));
    }
}

/// Takes a call out of the hub when its wait ends, however it ends.
pub(crate) struct Waiting {
    hub: Arc<ApprovalHub>,
    id: String,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut calls = self.hub.lock();
        let before = calls.waiting.len();
        calls.waiting.retain(|w| w.approval.call_id != self.id);
        if calls.waiting.len() < before {
            calls.ended(std::mem::take(&mut self.id), false);
        }
    }
}

impl ApprovalHub {
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Adds a waiting call (`approval.call_id` tree-unique); the answer comes through the
    /// receiver; the guard takes it out.
    pub(crate) fn wait(
        self: &Arc<Self>,
        approval: PendingApproval,
        required: Vec<String>,
    ) -> (oneshot::Receiver<ApprovalDecision>, Waiting) {
        let (reply, answer) = oneshot::channel();
        let id = approval.call_id.clone();
        self.lock().waiting.push(Waiter { approval, required, reply });
        (answer, Waiting { hub: Arc::clone(self), id })
    }

    /// Delivers `decision` to the waiting call `call_id`; `None` when no sub-agent's call
    /// of that id waits or waited here lately. Edited arguments are checked first
    /// (`tool_arguments_invalid`: nothing delivered). A call answered already gives
    /// `approval_already_answered`; one whose sub-agent stopped waiting (cancelled, forced
    /// to complete, its delegation over) `approval_not_pending`.
    pub(crate) fn answer(&self, call_id: &str, decision: ApprovalDecision) -> Option<Result<(), ArkAgentError>> {
        let mut calls = self.lock();
        let Some(index) = calls.waiting.iter().position(|w| w.approval.call_id == call_id) else {
            let &(_, answered) = calls.ended.iter().rev().find(|(id, _)| id == call_id)?;
            return Some(Err(if answered {
                ArkAgentError::approval(ErrorCode::ApprovalAlreadyAnswered, format!("the sub-agent's call {call_id:?} was answered already"))
            } else {
                ArkAgentError::approval(ErrorCode::ApprovalNotPending, format!("the sub-agent's call {call_id:?} no longer waits: its sub-agent ended"))
            }));
        };
        if let ApprovalDecision::ApproveWithArguments { arguments } = &decision {
            if let Err(message) = check_edited(arguments, &calls.waiting[index].required) {
                return Some(Err(ArkAgentError::approval(ErrorCode::ToolArgumentsInvalid, message)));
            }
        }
        let waiter = calls.waiting.remove(index);
        calls.ended(waiter.approval.call_id.clone(), true);
        // The child stopped waiting a moment ago (cancelled): the answer has nobody to go to.
        let _ = waiter.reply.send(decision);
        Some(Ok(()))
    }

    /// The waiting calls, oldest first.
    pub(crate) fn waiting(&self) -> Vec<PendingApproval> {
        self.lock().waiting.iter().map(|w| w.approval.clone()).collect()
    }
}

/// Edited arguments must be a JSON object with every `required` property.
pub(crate) fn check_edited(arguments: &str, required: &[String]) -> Result<serde_json::Value, String> {
    let value = match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        Ok(_) => return Err("edited arguments must be a JSON object".into()),
        Err(e) => return Err(format!("edited arguments are not valid JSON: {e}")),
    };
    match required.iter().find(|name| value.get(name.as_str()).is_none()) {
        Some(name) => Err(format!("edited arguments lack the required property {name:?}")),
        None => Ok(value),
    }
}

/// The properties a tool's JSON Schema lists as `required`.
pub(crate) fn required_properties(schema: &serde_json::Value) -> Vec<String> {
    schema.get("required").and_then(serde_json::Value::as_array).into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(id: &str) -> PendingApproval {
        PendingApproval { call_id: id.into(), name: "pay".into(), arguments: "{}".into(), path: vec!["child".into()] }
    }

    fn code(answer: Option<Result<(), ArkAgentError>>) -> Option<&'static str> {
        answer.map(|r| r.err().map_or("ok", |e| e.code().as_str()))
    }

    /// TOOL-1: a late answer to a sub-agent's call names what happened to it.
    #[test]
    fn tool_1_a_late_answer_to_a_sub_agents_call_says_why_it_no_longer_waits() {
        let hub = Arc::new(ApprovalHub::default());
        let (_answer, _waiting) = hub.wait(approval("child/a"), Vec::new());
        let (_gone, waiting) = hub.wait(approval("child/b"), Vec::new());
        drop(waiting);
        assert_eq!(code(hub.answer("child/a", ApprovalDecision::Approve)), Some("ok"));
        assert_eq!(code(hub.answer("child/a", ApprovalDecision::Approve)), Some("approval_already_answered"));
        assert_eq!(code(hub.answer("child/b", ApprovalDecision::Approve)), Some("approval_not_pending"));
        assert_eq!(code(hub.answer("turn-call", ApprovalDecision::Approve)), None, "not a sub-agent's: the paused turn's to answer");
        for i in 0..ENDED_KEPT {
            drop(hub.wait(approval(&format!("child/{i}")), Vec::new()));
        }
        assert_eq!(code(hub.answer("child/a", ApprovalDecision::Approve)), None, "only the last {ENDED_KEPT} are remembered");
    }
}
