//! What a delegation is made of, without the runtime that runs it: decomposed tasks
//! (ISO-7), a worker's tools (SUB-4, ISO-2), the parent's context slice (SUB-5).

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::ending::ChildEnding;
use super::names::DELEGATE_TASK_TOOL_NAME;
use super::roles::ToolWhitelist;
use crate::history::{HistoryInvariants, Message};
use crate::tools::{ToolContext, ToolExecutor, ToolInvocation, ToolRegistry, ToolResult};

/// The reason (and tool error code) when a child hits its token budget (ISO-5).
pub const TOKEN_BUDGET_EXCEEDED: &str = ChildEnding::TokenBudgetExceeded.as_str();

/// One task of a decomposed job (ISO-7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecomposedTask {
    /// Worker name or `clone`.
    pub assignee: String,
    /// The task.
    pub task_description: String,
    /// Role (whitelist), default `general`.
    #[serde(default)]
    pub role: Option<String>,
    /// Explicit inherited context.
    #[serde(default)]
    pub context: Option<String>,
}

/// SUB-4 layer 1: a worker's registry never contains `delegate_task` — excluded when
/// copied, then unregistered again defensively.
pub fn build_worker_tool_registry(source: &ToolRegistry) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    source.copy_into_excluding(&mut tools, &[DELEGATE_TASK_TOOL_NAME]);
    tools.unregister(DELEGATE_TASK_TOOL_NAME);
    tools
}

/// SUB-5: at most the last `count` messages of `messages`, as the largest window that is
/// paired on its own; the trailing assistant message whose calls are still running (the
/// delegation itself) is never included. A photo in it becomes its line
/// (`[image image/jpeg, W×H px, N bytes, id …]`, IMG-4): the child learns that the user
/// sent one, not its pixels — its model may take no images, and they would spend its
/// budget (issue 40 item 2).
pub fn parent_context_slice(messages: &[Message], count: usize) -> Vec<Message> {
    if count == 0 {
        return Vec::new();
    }
    let len = messages.len();
    for end in (len.saturating_sub(count + 4)..=len).rev() {
        for start in end.saturating_sub(count)..end {
            if HistoryInvariants::tool_calls_paired(&messages[start..end]) {
                return messages[start..end].iter().map(|m| m.with_image_lines().into_owned()).collect();
            }
        }
    }
    Vec::new()
}

/// ISO-2: `None` = no restriction; otherwise the tools every list allows, in the order of
/// the first list that restricts.
pub(crate) fn intersect_tools(lists: [&ToolWhitelist; 3]) -> ToolWhitelist {
    lists.into_iter().fold(None, |acc: ToolWhitelist, list| match (acc, list) {
        (None, list) => list.clone(),
        (Some(acc), Some(list)) => Some(acc.into_iter().filter(|t| list.contains(t)).collect()),
        (acc, None) => acc,
    })
}

/// The tool result of a delegation that was cancelled.
pub(crate) fn cancelled() -> ToolResult {
    ToolResult::error("cancelled", "the sub-agent was cancelled")
}

/// ISO-7: runs `tasks` through `delegate_task` in batches of `batch` (one mechanism for
/// both), one batch at a time; a failure never cancels its siblings; results keep the
/// input order.
pub(crate) async fn run_decomposed_tasks(tool: &dyn ToolExecutor, tasks: &[DecomposedTask], batch: usize, ctx: &ToolContext) -> Vec<ToolResult> {
    let mut results = Vec::with_capacity(tasks.len());
    for (b, chunk) in tasks.chunks(batch.max(1)).enumerate() {
        // After cancel() no further batch starts: its tasks are answered `cancelled`.
        if ctx.cancel.is_cancelled() {
            results.extend(chunk.iter().map(|_| cancelled()));
            continue;
        }
        let calls = chunk.iter().enumerate().map(|(i, t)| {
            let mut args = json!({"assignee": t.assignee, "task_description": t.task_description});
            if let Some(role) = &t.role {
                args["role"] = json!(role);
            }
            if let Some(context) = &t.context {
                args["context"] = json!(context);
            }
            let call = ToolInvocation { call_id: format!("decomposed-{}", b * batch + i), name: DELEGATE_TASK_TOOL_NAME.into(), arguments: args };
            tool.execute(call, ctx.clone())
        });
        results.extend(futures::future::join_all(calls).await);
    }
    results
}
