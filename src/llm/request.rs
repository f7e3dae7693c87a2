//! The request and response of one model call, as the rest of the crate sees them: what
//! to send ([`ChatRequest`], [`ToolChoice`]) and the parsed answer ([`ChatResponse`]).
//! Plain values below the codec (`wire`, `openai`, `stream`) and the client, so each of
//! them can name these types without importing another.

use crate::history::{Message, ModelUsage};
use crate::tools::ToolDefinition;

/// How the model may use tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call.
    Required,
    /// This tool.
    Function(String),
}

/// One chat completion request, borrowing the history (no copy per turn).
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    /// System prompt, sent first when non-empty.
    pub system_prompt: Option<&'a str>,
    /// Extra context messages placed after the system prompt (e.g. memory context).
    pub context_messages: &'a [Message],
    /// The conversation.
    pub messages: &'a [Message],
    /// Tools offered to the model.
    pub tools: &'a [ToolDefinition],
    /// Tool choice; only sent when tools are offered.
    pub tool_choice: Option<&'a ToolChoice>,
}

/// A parsed completion.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    /// The assistant message (text, tool calls, reasoning).
    pub message: Message,
    /// Usage, when the provider reported it.
    pub usage: Option<ModelUsage>,
    /// `finish_reason`, when present.
    pub finish_reason: Option<String>,
}
