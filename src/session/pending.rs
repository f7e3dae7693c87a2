//! TOOL-1, TOOL-2: the session's doors for a turn paused for approval — the results kept
//! for its calls, the pending turn itself, and closing it into the history.

use std::sync::Arc;

use super::{Room, Session};
use crate::history::{Content, Message, PendingTurn};
use crate::tools::ToolResult;

impl Session {
    /// The live history as [`AgentRuntime::messages`](crate::AgentRuntime::messages) shows
    /// it: a paused turn's model answer ends it — also a turn paused before a restart or
    /// an import, which the history holds only in its pending turn.
    pub fn live_messages(&self) -> Vec<Message> {
        let state = self.snapshot();
        let mut messages = state.history.messages.clone();
        if let Some(turn) = state.pending_turn.as_ref().filter(|t| !ends_with_turn(&messages, &t.assistant)) {
            messages.push(turn.assistant.clone());
        }
        messages
    }

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
    /// IMG-5 over the whole turn: its results were checked one by one (they were made at
    /// different times); the request they join must stay within the model's image count.
    pub fn close_pending_turn(&self, assistant: Message, mut results: Vec<Message>) {
        self.bound_turn(&mut results);
        let ends_with_it = ends_with_turn(&self.snapshot().history.messages, &assistant);
        let assistant = (!ends_with_it).then_some(assistant);
        let room = Room { messages: results.len() + usize::from(assistant.is_some()), usages: 0 };
        self.append(room, |state| {
            state.history.messages.extend(assistant);
            state.history.messages.extend(results);
            state.pending_turn = None;
        });
    }

    /// TOOL-2, STORE-6: the paused turn leaves this runtime with its stored session (the
    /// store was detached; whoever opens the session next finds it): no turn waits here
    /// any more, and the history no longer ends with the turn's assistant message (the turn
    /// paused in this process), so it stays paired. True when a turn was dropped.
    pub fn drop_pending_turn(&self) -> bool {
        let mut guard = self.lock();
        let Some(turn) = &guard.pending_turn else { return false };
        let ends_with_it = ends_with_turn(&guard.history.messages, &turn.assistant);
        let state = Arc::make_mut(&mut guard);
        if ends_with_it {
            state.history.messages.pop();
        }
        state.pending_turn = None;
        true
    }

    /// LLM-4: `text` from the host (edited arguments, a reason) without the secret.
    pub fn redact_text(&self, text: &mut String) {
        self.redactor.text(text);
    }

    /// A result whose images would take the request past the model's count becomes the
    /// refusal's tool error, as in [`push_tool_results`](Self::push_tool_results).
    fn bound_turn(&self, results: &mut [Message]) {
        let mut in_request: Option<usize> = None;
        for message in results.iter_mut() {
            let Message::Tool { tool_call_id, content, .. } = message else { continue };
            let adding = content.images().count();
            if adding == 0 {
                continue;
            }
            let count = in_request.get_or_insert_with(|| self.images_in_request());
            match self.image_bounds.check_count(*count, adding) {
                Ok(()) => *count += adding,
                Err(e) => {
                    let text = ToolResult::error(e.code().as_str(), &e.to_string()).content;
                    *message = Message::tool_result(tool_call_id.clone(), Content::Text(text), true);
                }
            }
        }
    }
}

/// Whether `messages` ends with the paused turn's `assistant` message (the turn paused in
/// this process; one resumed elsewhere has it only in its pending turn): the last message
/// makes the same tool calls, by id, in the same order.
fn ends_with_turn(messages: &[Message], assistant: &Message) -> bool {
    fn ids(m: &Message) -> impl Iterator<Item = &str> {
        m.tool_calls().iter().map(|c| c.id.as_str())
    }
    messages.last().is_some_and(|last| ids(last).eq(ids(assistant)))
}
