use serde::{Deserialize, Serialize};

/// One tool call requested by the model inside an assistant message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id; the matching tool result carries it.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// The arguments exactly as the model produced them (normally a JSON object text;
    /// may be invalid JSON, which the runtime answers with a tool error).
    pub arguments: String,
}

/// A conversation message (CORE-1). Serialized with a `role` tag:
///
/// ```
/// use arkagent::Message;
/// let m = Message::user("hi");
/// assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"role":"user","content":"hi"}"#);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// System instructions.
    System {
        /// Text.
        content: String,
    },
    /// User input.
    User {
        /// Text.
        content: String,
    },
    /// Model output: text and/or tool calls.
    Assistant {
        /// The answer text, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// Tool calls, in the order the model emitted them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
        /// Reasoning text (DeepSeek `reasoning_content`), kept apart from the answer and
        /// never sent back to the provider.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// What the model sees.
        content: String,
        /// True when the tool failed (the content then describes the error).
        #[serde(default)]
        is_error: bool,
    },
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::System { content: content.into() }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User { content: content.into() }
    }
    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::Assistant { content: Some(content.into()), tool_calls: Vec::new(), reasoning: None }
    }
    /// An assistant message with tool calls only.
    pub fn assistant_tool_calls(tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant { content: None, tool_calls, reasoning: None }
    }
    /// A tool result.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        Self::Tool { tool_call_id: tool_call_id.into(), content: content.into(), is_error }
    }
    /// The tool calls of an assistant message (empty for other roles).
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Self::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
    /// The text content, if the message has one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::System { content } | Self::User { content } | Self::Tool { content, .. } => Some(content),
            Self::Assistant { content, .. } => content.as_deref(),
        }
    }
}
