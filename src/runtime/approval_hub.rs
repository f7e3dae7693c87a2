//! TOOL-1, issue 37 item 5: a sub-agent's tool call that needs a person. A child cannot
//! pause its parent's run, so its call waits in flight — the child makes no model call
//! meanwhile — in the hub its delegation tree shares, under a tree-unique id
//! (`<child session id>/<call id>`); the root lists it in `pending_approvals` and routes an
//! answer naming it here. A cancel of the child (its parent's cancel, a force-completion,
//! its budget) answers the call `cancelled` and takes it out. Not durable: a delegation,
//! and so its waiting call, does not outlive the process.

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

/// The waiting calls of one delegation tree's sub-agents.
#[derive(Default)]
pub(crate) struct ApprovalHub {
    waiting: Mutex<Vec<Waiter>>,
}

/// Takes a call out of the hub when its wait ends, however it ends.
pub(crate) struct Waiting {
    hub: Arc<ApprovalHub>,
    id: String,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.hub.lock().retain(|w| w.approval.call_id != self.id);
    }
}

impl ApprovalHub {
    fn lock(&self) -> MutexGuard<'_, Vec<Waiter>> {
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
        self.lock().push(Waiter { approval, required, reply });
        (answer, Waiting { hub: Arc::clone(self), id })
    }

    /// Delivers `decision` to the waiting call `call_id`; `None` when no sub-agent's call
    /// of that id waits here. Edited arguments are checked first
    /// (`tool_arguments_invalid`: nothing delivered).
    pub(crate) fn answer(&self, call_id: &str, decision: ApprovalDecision) -> Option<Result<(), ArkAgentError>> {
        let mut waiting = self.lock();
        let index = waiting.iter().position(|w| w.approval.call_id == call_id)?;
        if let ApprovalDecision::ApproveWithArguments { arguments } = &decision {
            if let Err(message) = check_edited(arguments, &waiting[index].required) {
                return Some(Err(ArkAgentError::approval(ErrorCode::ToolArgumentsInvalid, message)));
            }
        }
        let waiter = waiting.remove(index);
        // The child stopped waiting a moment ago (cancelled): the answer has nobody to go to.
        let _ = waiter.reply.send(decision);
        Some(Ok(()))
    }

    /// The waiting calls, oldest first.
    pub(crate) fn waiting(&self) -> Vec<PendingApproval> {
        self.lock().iter().map(|w| w.approval.clone()).collect()
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
