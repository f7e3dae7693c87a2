//! COST-3: the session as the compressor's [`ConversationPrefix`]: the summarizer's
//! request is the conversation's own cached body plus the compression instruction.

use std::sync::Arc;

use super::Session;
use crate::compress::ConversationPrefix;
use crate::history::{AgentState, Message};
use crate::llm::ModelConfig;

/// COST-3: the conversation as the compressor's summarizer reuses it — for the state the
/// compressor was given only (the very allocation: any writer since would have copied
/// it, the compressor holding it), so a summarizer request never carries a history other
/// than the one being split.
impl ConversationPrefix for Session {
    fn model(&self) -> &ModelConfig {
        &self.model
    }

    fn body_with(&self, state: &AgentState, instruction: &Message) -> Option<Arc<String>> {
        let (current, generation) = self.current(state)?;
        let mut guard = self.lock_encodings();
        let super::encoding::Encodings { cache, fixed } = &mut *guard;
        Some(cache.request_body_with(fixed, &current, generation, instruction))
    }
}

impl Session {
    /// The current state and its generation, when the current state is `state`.
    fn current(&self, state: &AgentState) -> Option<(Arc<AgentState>, u64)> {
        let (current, generation) = self.snapshot_with_generation();
        std::ptr::eq(Arc::as_ptr(&current), state).then_some((current, generation))
    }
}
