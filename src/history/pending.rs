//! TOOL-1, TOOL-2: a turn paused for approval — the model's answer whose calls wait, and
//! where each call stands. Part of the [`AgentState`](super::AgentState): committed to the
//! session store and carried by exports, so an app killed while a dialog is open finds the
//! same pending calls after a restart, with the decisions already made.

use serde::{Deserialize, Serialize};

use super::{HistoryInvariants, Message};
use crate::error::ArkAgentError;

/// The largest model-call number a paused turn may carry (far above any `max_iterations`).
pub const MAX_PENDING_ITERATION: u32 = 1_000_000;

/// A turn whose tool calls wait for a person's answers.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingTurn {
    /// The run that paused (a resumed run keeps it).
    pub run_id: String,
    /// The model call that made the calls (the resumed run counts on from it).
    pub iteration: u32,
    /// The model's answer with its tool calls, as the history holds it. Not in the
    /// history's committed (paired) part while the turn waits: the history gets it back,
    /// with every call's result, when the run resumes.
    #[cfg_attr(feature = "schema", schemars(with = "serde_json::Value"))]
    pub assistant: Message,
    /// One per tool call of the answer, in the answer's order.
    pub calls: Vec<PendingCall>,
}

/// One tool call of a paused turn.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The call id (unique in the session).
    pub call_id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the model made them (JSON text).
    pub arguments: String,
    /// Where it stands.
    pub state: PendingCallState,
}

/// Where a call of a paused turn stands, as JSON `"awaiting_approval"`, `"running"`, or
/// `{"approved": {"edited_arguments"?}}`, `{"rejected": {"reason"}}`, `{"done": {"result"}}`
/// (externally tagged: PERF-9, the smallest parser). A call runs at most once (TOOL-2): it is
/// `running` in the store before its tool is called, so a call a kill interrupted is
/// answered `tool_interrupted` on resume, never run again.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PendingCallState {
    /// Waits for the person's answer.
    AwaitingApproval,
    /// Approved; runs when the run resumes.
    Approved {
        /// The person's arguments (JSON object text) when they changed them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        edited_arguments: Option<String>,
    },
    /// Rejected; the model reads a `tool_rejected` error result with the reason.
    Rejected {
        /// Why, for the model.
        reason: String,
    },
    /// Its tool was called and has not answered: after a kill, `tool_interrupted`.
    Running,
    /// Answered: the tool result message the model will read.
    Done {
        /// The `tool` message answering the call.
        #[cfg_attr(feature = "schema", schemars(with = "serde_json::Value"))]
        result: Message,
    },
}

impl PendingCallState {
    /// The state's name: `awaiting_approval`, `approved`, `rejected`, `running`, `done`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::AwaitingApproval => "awaiting_approval",
            Self::Approved { .. } => "approved",
            Self::Rejected { .. } => "rejected",
            Self::Running => "running",
            Self::Done { .. } => "done",
        }
    }
}

impl PendingTurn {
    /// The calls still waiting for an answer.
    pub fn awaiting(&self) -> impl Iterator<Item = &PendingCall> {
        self.calls.iter().filter(|c| c.state == PendingCallState::AwaitingApproval)
    }

    /// The call with this id.
    pub fn call_mut(&mut self, call_id: &str) -> Option<&mut PendingCall> {
        self.calls.iter_mut().find(|c| c.call_id == call_id)
    }

    /// Checks what an import must hold: the assistant message carries exactly these calls,
    /// in order, and every `done` call's result answers it.
    pub fn validate(&self) -> Result<(), ArkAgentError> {
        let calls = self.assistant.tool_calls();
        let same = calls.len() == self.calls.len()
            && calls.iter().zip(&self.calls).all(|(c, p)| c.id == p.call_id && c.name == p.name);
        if calls.is_empty() || !same {
            return Err(ArkAgentError::InvalidState("pending_turn's calls are not its assistant message's".into()));
        }
        if self.iteration == 0 || self.iteration > MAX_PENDING_ITERATION {
            return Err(ArkAgentError::InvalidState(format!("pending_turn's iteration {} is out of range", self.iteration)));
        }
        for call in &self.calls {
            if let PendingCallState::Approved { edited_arguments: Some(arguments) } = &call.state {
                if !serde_json::from_str::<serde_json::Value>(arguments).is_ok_and(|v| v.is_object()) {
                    return Err(ArkAgentError::InvalidState(format!("pending_turn: the edited arguments of {:?} are not a JSON object", call.call_id)));
                }
            }
            if let PendingCallState::Done { result } = &call.state {
                let answers = matches!(result, Message::Tool { tool_call_id, .. } if *tool_call_id == call.call_id);
                if !answers {
                    return Err(ArkAgentError::InvalidState(format!("pending_turn: the result of {:?} does not answer it", call.call_id)));
                }
            }
        }
        let mut paired = vec![self.assistant.clone()];
        paired.extend(self.calls.iter().map(|c| Message::tool_result(&c.call_id, "", false)));
        if !HistoryInvariants::tool_calls_paired(&paired) {
            return Err(ArkAgentError::InvalidState("pending_turn's call ids repeat".into()));
        }
        Ok(())
    }
}
