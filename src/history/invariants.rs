use std::collections::HashSet;

use super::Message;

/// Invariants a history must satisfy before it is sent to a provider (CORE-2).
pub struct HistoryInvariants;

impl HistoryInvariants {
    /// True when, within `messages`: every assistant tool call id has exactly one tool
    /// result after it, every tool result answers a call made earlier in the slice, and no
    /// call id (nor result id) repeats.
    ///
    /// ```
    /// use arkagent::{HistoryInvariants, Message, ToolCall};
    /// let call = ToolCall { id: "c1".into(), name: "t".into(), arguments: "{}".into() };
    /// let mut h = vec![Message::user("go"), Message::assistant_tool_calls(vec![call])];
    /// assert!(!HistoryInvariants::tool_calls_paired(&h));
    /// h.push(Message::tool_result("c1", "ok", false));
    /// assert!(HistoryInvariants::tool_calls_paired(&h));
    /// ```
    pub fn tool_calls_paired(messages: &[Message]) -> bool {
        let mut calls: HashSet<&str> = HashSet::new();
        let mut answered: HashSet<&str> = HashSet::new();
        for message in messages {
            match message {
                Message::Assistant { tool_calls, .. } => {
                    if !tool_calls.iter().all(|call| calls.insert(call.id.as_str())) {
                        return false;
                    }
                }
                Message::Tool { tool_call_id, .. } => {
                    let id = tool_call_id.as_str();
                    if !calls.contains(id) || !answered.insert(id) {
                        return false;
                    }
                }
                Message::System { .. } | Message::User { .. } => {}
            }
        }
        answered.len() == calls.len()
    }
}
