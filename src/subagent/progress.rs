//! ISO-4 (issue 28 item 2): what a running sub-agent has spent so far. The registry's
//! entry of a running delegation holds the child's live [`ChildProgress`]; a forced
//! completion (by id, session closed, stale) archives what it reads there, so the record
//! and the registry's totals hold what the child really spent up to that moment — and
//! the delegation settles the record with its final figures once the child's run has
//! wound down (`SubAgentRegistry::conclude` / `abandon`).

use crate::history::{ChildUsageSummary, Message};

/// What a sub-agent spent: its subtree's figures (what its record and its parent show),
/// its own part (its children's calls excluded, for the registry's totals), the tools it
/// used and its messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ChildSpending {
    /// [`SubAgentResult::token_count`](super::SubAgentResult::token_count): its subtree's
    /// tokens, reported where available, estimated otherwise.
    pub(crate) token_count: u64,
    /// Its subtree's usage (SUB-6: its own calls plus its ended children's).
    pub(crate) usage: ChildUsageSummary,
    /// The tokens of its own calls alone.
    pub(crate) own_tokens: u64,
    /// The usage of its own calls alone.
    pub(crate) own_usage: ChildUsageSummary,
    /// Distinct tools it started, in first-use order.
    pub(crate) tools_used: Vec<String>,
    /// Its messages so far.
    pub(crate) messages: Vec<Message>,
}

/// A running child's live record. The registry reads it under its own lock, so an
/// implementation takes only leaf locks (the child's state cell, its meter) and never
/// calls back into the registry.
pub(crate) trait ChildProgress: Send + Sync {
    /// What the child has spent so far (one copy of its messages, taken when it ends).
    fn spending(&self) -> ChildSpending;
}
