use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::content::Content;
use super::thinking::ThinkingBlocks;

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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// System instructions.
    System {
        /// Text.
        content: String,
    },
    /// User input: text, or ordered text and image parts (IMG-1).
    User {
        /// Text or parts (a JSON string or array).
        content: Content,
    },
    /// Model output: text and/or tool calls.
    Assistant {
        /// The answer text, if any.
        content: Option<String>,
        /// Tool calls, in the order the model emitted them.
        tool_calls: Vec<ToolCall>,
        /// Reasoning text of a Chat Completions answer (`reasoning_content`, or `reasoning`
        /// from Ollama and vLLM), exactly as received (THINK-1): `None` when the provider
        /// sent no such field, `Some("")` when it sent an empty one. Kept apart from the
        /// answer; sent back as the model's replay policy says (THINK-2).
        /// Exact (`Box<str>`): kept for the session's life without spare capacity (PERF-2).
        reasoning: Option<Box<str>>,
        /// Anthropic's reasoning blocks (`thinking` with its signature, `redacted_thinking`),
        /// in the order received, byte-exact (THINK-1); sent back before the turn's
        /// `tool_use`, or where they were among its text and tool calls when the model
        /// interleaved them (THINK-2; JSON `block_order`: [`ThinkingBlocks::order`]).
        /// Empty for other wire formats.
        thinking: ThinkingBlocks,
    },
    /// The result of one tool call.
    Tool {
        /// The id of the call this answers.
        tool_call_id: String,
        /// What the model sees: text, or ordered text and image parts (IMG-1).
        content: Content,
        /// True when the tool failed (the content then describes the error).
        is_error: bool,
    },
}

/// A message's role, read first-class (no buffering of the other fields: PERF-9).
#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// Every role's fields in one flat record: read in one pass whatever the field order,
/// where serde's internally tagged form buffers the whole message first (and compiles each
/// field's decoder twice: 22 KB of the arm64 library, PERF-9).
#[derive(Deserialize)]
struct MessageRepr {
    role: Role,
    #[serde(default)]
    content: Option<Content>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
    #[serde(default)]
    reasoning: Option<Box<str>>,
    #[serde(default)]
    thinking: ThinkingBlocks,
    #[serde(default)]
    block_order: Option<Box<str>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    is_error: bool,
}

impl MessageRepr {
    /// No spare capacity (PERF-2: a resumed session holds exactly its messages): a string
    /// read through an escape and an array read element by element come with some.
    fn exact(&mut self) {
        match &mut self.content {
            Some(Content::Text(text)) => text.shrink_to_fit(),
            Some(Content::Parts(parts)) => {
                parts.shrink_to_fit();
                for part in parts.iter_mut() {
                    if let super::ContentPart::Text { text } = part {
                        text.shrink_to_fit();
                    }
                }
            }
            None => {}
        }
        self.tool_calls.shrink_to_fit();
        for call in &mut self.tool_calls {
            call.id.shrink_to_fit();
            call.name.shrink_to_fit();
            call.arguments.shrink_to_fit();
        }
        if let Some(id) = &mut self.tool_call_id {
            id.shrink_to_fit();
        }
    }
}

/// The `role`-tagged JSON: each field left out when it is empty, as the reader allows
/// (`content` of an answer that only called tools, `tool_calls`, `reasoning`, `thinking`
/// and `block_order`); `is_error` always.
impl Serialize for Message {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match self {
            Self::System { content } => {
                map.serialize_entry("role", "system")?;
                map.serialize_entry("content", content)?;
            }
            Self::User { content } => {
                map.serialize_entry("role", "user")?;
                map.serialize_entry("content", content)?;
            }
            Self::Assistant { content, tool_calls, reasoning, thinking } => {
                map.serialize_entry("role", "assistant")?;
                if let Some(content) = content {
                    map.serialize_entry("content", content)?;
                }
                if !tool_calls.is_empty() {
                    map.serialize_entry("tool_calls", tool_calls)?;
                }
                if let Some(reasoning) = reasoning {
                    map.serialize_entry("reasoning", reasoning)?;
                }
                if !thinking.is_empty() {
                    map.serialize_entry("thinking", thinking)?;
                    if let Some(order) = thinking.order() {
                        map.serialize_entry("block_order", order)?;
                    }
                }
            }
            Self::Tool { tool_call_id, content, is_error } => {
                map.serialize_entry("role", "tool")?;
                map.serialize_entry("tool_call_id", tool_call_id)?;
                map.serialize_entry("content", content)?;
                map.serialize_entry("is_error", is_error)?;
            }
        }
        map.end()
    }
}

/// Reads the `role`-tagged form that [`Message`]'s `Serialize` writes: a field another
/// role has is ignored when absent from this role; `content` is text for `system` and
/// `assistant` (which may have none), text or parts for `user` and `tool`.
impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut r = MessageRepr::deserialize(deserializer)?;
        r.exact();
        let text = |content: Option<Content>| match content {
            None => Ok(None),
            Some(Content::Text(text)) => Ok(Some(text)),
            Some(Content::Parts(_)) => Err(D::Error::custom("a system or assistant message's content is text, not parts")),
        };
        Ok(match r.role {
            Role::System => Self::System { content: text(r.content)?.ok_or_else(|| D::Error::missing_field("content"))? },
            Role::User => Self::User { content: r.content.ok_or_else(|| D::Error::missing_field("content"))? },
            Role::Assistant => {
                let mut thinking = r.thinking;
                thinking.put_order(r.block_order);
                Self::Assistant { content: text(r.content)?, tool_calls: r.tool_calls, reasoning: r.reasoning, thinking }
            }
            Role::Tool => Self::Tool {
                tool_call_id: r.tool_call_id.ok_or_else(|| D::Error::missing_field("tool_call_id"))?,
                content: r.content.ok_or_else(|| D::Error::missing_field("content"))?,
                is_error: r.is_error,
            },
        })
    }
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::System { content: content.into() }
    }
    /// A user message: a string, or parts (`Vec<ContentPart>`).
    pub fn user(content: impl Into<Content>) -> Self {
        Self::User { content: content.into() }
    }
    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::Assistant { content: Some(content.into()), tool_calls: Vec::new(), reasoning: None, thinking: ThinkingBlocks::new() }
    }
    /// An assistant message with tool calls only.
    pub fn assistant_tool_calls(tool_calls: Vec<ToolCall>) -> Self {
        Self::Assistant { content: None, tool_calls, reasoning: None, thinking: ThinkingBlocks::new() }
    }
    /// A tool result: a string, or parts.
    pub fn tool_result(tool_call_id: impl Into<String>, content: impl Into<Content>, is_error: bool) -> Self {
        Self::Tool { tool_call_id: tool_call_id.into(), content: content.into(), is_error }
    }
    /// The tool calls of an assistant message (empty for other roles).
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self {
            Self::Assistant { tool_calls, .. } => tool_calls,
            _ => &[],
        }
    }
    /// The text content, if the message has one as plain text (a user message or tool
    /// result of parts has none: see [`Message::content`]).
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::System { content } => Some(content),
            Self::User { content } | Self::Tool { content, .. } => content.as_text(),
            Self::Assistant { content, .. } => content.as_deref(),
        }
    }

    /// The model's readable reasoning: a Chat Completions answer's `reasoning`, else the
    /// text of its Anthropic `thinking` blocks joined (`None` when it has neither, and for
    /// other roles).
    pub fn reasoning_text(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self {
            Self::Assistant { reasoning: Some(r), .. } => Some(std::borrow::Cow::Borrowed(&**r)),
            Self::Assistant { thinking, .. } if !thinking.is_empty() => Some(std::borrow::Cow::Owned(thinking.text())),
            _ => None,
        }
    }

    /// The content of a user message or tool result (text or parts).
    pub fn content(&self) -> Option<&Content> {
        match self {
            Self::User { content } | Self::Tool { content, .. } => Some(content),
            Self::System { .. } | Self::Assistant { .. } => None,
        }
    }

    /// IMG-4: this message as a reader of memory sees it: each image replaced by its line
    /// (borrowed when it has no image).
    pub fn with_image_lines(&self) -> std::borrow::Cow<'_, Message> {
        match self {
            Self::User { content } if content.has_images() => std::borrow::Cow::Owned(Self::User { content: content.with_image_lines() }),
            Self::Tool { tool_call_id, content, is_error } if content.has_images() => std::borrow::Cow::Owned(Self::Tool {
                tool_call_id: tool_call_id.clone(),
                content: content.with_image_lines(),
                is_error: *is_error,
            }),
            _ => std::borrow::Cow::Borrowed(self),
        }
    }

    /// The images this message carries, in order (only user messages and tool results
    /// carry any).
    pub fn images(&self) -> impl Iterator<Item = &super::image::ImagePart> {
        self.content().into_iter().flat_map(Content::images)
    }
}
