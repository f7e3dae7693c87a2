//! TOOL-1, TOOL-2: the session's doors for a turn paused for approval — the results kept
//! for its calls, the pending turn itself, and closing it into the history.

use super::{Room, Session};
use crate::history::{Message, PendingTurn};
use crate::tools::ToolResult;

impl Session {
    /// TOOL-1: the `tool` message a paused turn keeps for a call answered before the turn
    /// resumes (as [`push_tool_results`] would push it).
    pub fn pending_result_message(&self, call_id: &str, result: ToolResult) -> Message {
        self.result_message(call_id, result, &mut None)
    }

    /// TOOL-1: sets or clears the turn paused for approval. The request body does not
    /// change (the turn's messages reach the history when it resumes).
    pub fn set_pending_turn(&self, pending: Option<PendingTurn>) {
        self.append(Room { messages: 0, usages: 0 }, |state| state.pending_turn = pending);
    }

    /// TOOL-1: changes the paused turn through `f`; false (nothing changed) without one.
    pub fn update_pending_turn(&self, f: impl FnOnce(&mut PendingTurn)) -> bool {
        self.append(Room { messages: 0, usages: 0 }, |state| state.pending_turn.as_mut().map(f).is_some())
    }

    /// TOOL-1: ends the paused turn: its assistant message (unless the history still ends
    /// with it: the turn paused in this process) and the calls' results, in order, join
    /// the history together (CORE-2: paired), and the turn is no longer pending.
    pub fn close_pending_turn(&self, assistant: Message, results: Vec<Message>) {
        let answered: Vec<&str> = assistant.tool_calls().iter().map(|c| c.id.as_str()).collect();
        let ends_with_it = self
            .snapshot()
            .history
            .messages
            .last()
            .is_some_and(|m| m.tool_calls().iter().map(|c| c.id.as_str()).eq(answered.iter().copied()));
        let assistant = (!ends_with_it).then_some(assistant);
        let room = Room { messages: results.len() + usize::from(assistant.is_some()), usages: 0 };
        self.append(room, |state| {
            state.history.messages.extend(assistant);
            state.history.messages.extend(results);
            state.pending_turn = None;
        });
    }
}
