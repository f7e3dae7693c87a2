//! LLM-4 at the session's doors: whatever enters the state — the user's input, the
//! model's text, reasoning and tool arguments, tool results, a summary, a seeded or
//! imported or resumed history, a child's usage record — leaves the API key behind.

use std::sync::Arc;

use crate::history::{PendingCallState, AgentState, ChildUsageRecord, Message, ThinkingBlock, ThinkingBlocks};
use crate::llm::ModelConfig;

/// The secrets of one model config (its API key and credential headers), removed from
/// text where it enters the state. Cheap to clone; allocates only when a secret is found.
#[derive(Clone)]
pub(super) struct Redactor(Arc<ModelConfig>);

impl Redactor {
    pub(super) fn new(model: &ModelConfig) -> Self {
        Self(Arc::new(model.clone()))
    }

    pub(super) fn text(&self, text: &mut String) {
        self.0.redact_in_place(text);
    }

    fn has_secret(&self, text: &str) -> bool {
        matches!(self.0.redact_cow(text), std::borrow::Cow::Owned(_))
    }

    /// Every text of `message`: content, reasoning, tool call arguments. A signed
    /// reasoning block is never altered (THINK-2: the provider refuses a changed one):
    /// when a secret appears in any of an answer's blocks, all of them are dropped (one
    /// left out invalidates the next), so the secret is not kept; the provider then
    /// refuses the rest of that tool cycle (`llm_bad_request`).
    pub(super) fn message(&self, message: &mut Message) {
        match message {
            Message::System { content } => self.text(content),
            // IMG-5: texts and URLs only, never image bytes.
            Message::User { content } | Message::Tool { content, .. } => content.texts_mut().for_each(|t| self.text(t)),
            Message::Assistant { content, tool_calls, reasoning, thinking } => {
                // An interleaved answer's block order counts its text blocks' bytes.
                let recount = thinking.order().is_some() && content.as_deref().is_some_and(|c| self.has_secret(c));
                let before = recount.then(|| content.clone().unwrap_or_default());
                content.iter_mut().for_each(|t| self.text(t));
                if let Some(before) = before {
                    thinking.recount_text(&before, content.as_deref().unwrap_or_default(), |piece| self.0.redact_cow(piece).into_owned());
                }
                if let Some(r) = reasoning {
                    if let std::borrow::Cow::Owned(redacted) = self.0.redact_cow(r) {
                        *r = redacted.into_boxed_str();
                    }
                }
                tool_calls.iter_mut().for_each(|call| self.text(&mut call.arguments));
                if self.blocks_have_secret(thinking) {
                    thinking.clear();
                }
            }
        }
    }

    fn blocks_have_secret(&self, blocks: &ThinkingBlocks) -> bool {
        blocks.iter().any(|b| match b {
            ThinkingBlock::Thinking { thinking, signature } => self.has_secret(thinking) || self.has_secret(signature),
            ThinkingBlock::RedactedThinking { data } => self.has_secret(data),
        })
    }

    fn message_has_secret(&self, message: &Message) -> bool {
        match message {
            Message::System { content } => self.has_secret(content),
            Message::User { content } | Message::Tool { content, .. } => content.texts().any(|t| self.has_secret(t)),
            Message::Assistant { content, tool_calls, reasoning, thinking } => {
                content.iter().any(|t| self.has_secret(t))
                    || reasoning.iter().any(|r| self.has_secret(r))
                    || tool_calls.iter().any(|c| self.has_secret(&c.arguments))
                    || self.blocks_have_secret(thinking)
            }
        }
    }

    /// A whole state: the history's messages, and each episode's summary and archived
    /// originals (copied only when one of them holds a secret: they are shared).
    pub(super) fn state(&self, state: &mut AgentState) {
        state.history.messages.iter_mut().for_each(|m| self.message(m));
        // TOOL-1: a paused turn's answer, its calls' results and the person's texts.
        if let Some(turn) = &mut state.pending_turn {
            self.message(&mut turn.assistant);
            for call in &mut turn.calls {
                match &mut call.state {
                    PendingCallState::Done { result } => self.message(result),
                    PendingCallState::Rejected { reason } => self.text(reason),
                    PendingCallState::Approved { edited_arguments: Some(arguments) } => self.text(arguments),
                    _ => {}
                }
            }
        }
        for episode in &mut state.history.episodic_memories {
            self.text(&mut episode.summary);
            if episode.archived_messages.iter().any(|m| self.message_has_secret(m)) {
                Arc::make_mut(&mut episode.archived_messages).iter_mut().for_each(|m| self.message(m));
            }
        }
    }

    /// A child's usage record: its ids and the worker's name.
    pub(super) fn child_usage(&self, record: &mut ChildUsageRecord) {
        self.text(&mut record.call_id);
        self.text(&mut record.child_session_id);
        self.text(&mut record.assignee);
    }
}
