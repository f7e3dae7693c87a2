//! PERF-2 (issue 21): where a runtime's bytes live. Counted from capacities (what the
//! allocator holds), not lengths; map and node overheads are estimated.

use std::fmt;
use std::mem::size_of;

use crate::history::{AgentState, Message, ModelUsage, ToolCall};

/// The heap bytes one runtime holds, per component, at the moment of the call
/// ([`AgentRuntime::memory_report`](crate::AgentRuntime::memory_report)). Approximate:
/// owned strings and vectors count their capacity; maps their entries plus an estimated
/// per-entry overhead. Transient buffers (a request body in flight, a response being
/// parsed) are not held between calls and are not here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// Live history messages (the array and every string they own).
    pub history: usize,
    /// Episodes: summaries and their archived originals.
    pub episodes: usize,
    /// Usage records (the session's own and its children's summaries).
    pub usages: usize,
    /// The encoding cache: the history's JSON, encoded once and reused by every request
    /// (PERF-7), the memory context's and the tool call ids seen.
    pub encoding_cache: usize,
    /// The parts encoded once per runtime: the system prompt and the body template.
    pub fixed_encodings: usize,
}

impl MemoryReport {
    /// The sum of every component.
    pub fn total(&self) -> usize {
        self.history + self.episodes + self.usages + self.encoding_cache + self.fixed_encodings
    }
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mb = |b: usize| b as f64 / 1_000_000.0;
        write!(
            f,
            "history {:.2} MB, episodes {:.2} MB, usages {:.2} MB, encoding cache {:.2} MB, fixed encodings {:.2} MB (total {:.2} MB)",
            mb(self.history),
            mb(self.episodes),
            mb(self.usages),
            mb(self.encoding_cache),
            mb(self.fixed_encodings),
            mb(self.total())
        )
    }
}

fn opt(s: &Option<String>) -> usize {
    s.as_ref().map_or(0, String::capacity)
}

fn call_bytes(c: &ToolCall) -> usize {
    c.id.capacity() + c.name.capacity() + c.arguments.capacity()
}

/// Heap bytes a message owns (not counting its own slot in a vector).
pub(crate) fn message_heap(m: &Message) -> usize {
    match m {
        Message::System { content } => content.capacity(),
        Message::User { content } => content.heap_bytes(),
        Message::Assistant { content, tool_calls, reasoning, thinking } => {
            opt(content)
                + reasoning.as_ref().map_or(0, |r| r.len())
                + thinking.heap_bytes()
                + tool_calls.capacity() * size_of::<ToolCall>()
                + tool_calls.iter().map(call_bytes).sum::<usize>()
        }
        Message::Tool { tool_call_id, content, .. } => tool_call_id.capacity() + content.heap_bytes(),
    }
}

pub(crate) fn messages_heap(messages: &Vec<Message>) -> usize {
    messages.capacity() * size_of::<Message>() + messages.iter().map(message_heap).sum::<usize>()
}

/// A usage's heap bytes: its cost, when it has one (every other field is in its slot).
fn usage_heap(u: &ModelUsage) -> usize {
    u.cost.as_ref().map_or(0, |c| size_of::<crate::history::Cost>() + c.currency.capacity())
}

/// The state's part of the report.
pub(crate) fn state_report(state: &AgentState) -> MemoryReport {
    let history = messages_heap(&state.history.messages);
    let episodes = state
        .history
        .episodic_memories
        .iter()
        .map(|e| e.id.capacity() + e.summary.capacity() + messages_heap(&e.archived_messages))
        .sum::<usize>()
        + state.history.episodic_memories.capacity() * size_of::<crate::EpisodicMemory>();
    let usages = state.usages.capacity() * size_of::<ModelUsage>()
        + state.usages.iter().map(usage_heap).sum::<usize>()
        + state.child_usages.capacity() * size_of::<crate::history::ChildUsageRecord>()
        + state
            .child_usages
            .iter()
            .map(|r| r.call_id.capacity() + r.child_session_id.capacity() + r.assignee.capacity())
            .sum::<usize>();
    MemoryReport { history, episodes, usages, ..MemoryReport::default() }
}
