//! COST-3: what a compressor may ask of the conversation it compresses about its
//! requests. Below both the compressor interface and the default compressor, so neither
//! imports the other for it.

use std::sync::Arc;

use crate::history::{AgentState, Message};
use crate::llm::ModelConfig;

/// The conversation a compressor summarizes, as far as its requests go (COST-3): the
/// session implements it, so the compressor (layer 6) reuses the session's (layer 7)
/// encoding without seeing it. Every method answers for the state the compressor was
/// given and for nothing else: a state that is no longer the conversation's gives `None`.
pub trait ConversationPrefix: Send + Sync {
    /// The model the conversation's requests are for.
    fn model(&self) -> &ModelConfig;

    /// `state`'s next request body with `instruction` appended as its last message: the
    /// conversation's bytes up to the end of its history unchanged, lent from the encoding
    /// cache (no message encoded again, no copy). Once the body is dropped the cache is
    /// exactly what it was (the instruction is not history). `None` when `state` is not
    /// the conversation's current state.
    fn body_with(&self, state: &AgentState, instruction: &Message) -> Option<Arc<String>>;
}
