//! Typed wire structs of a Chat Completions request (PERF-1, PERF-7): the body is
//! serialized from borrowing `Serialize` structs, never through a `serde_json::Value`
//! tree. The same request struct serializes either from the messages themselves (from
//! scratch, [`encode_body`]) or from per-message encodings made once and cached
//! ([`assemble_body`]); both go through one generic [`WireRequest`], so the field order
//! and separators cannot drift apart — the runtime's property test checks them byte for
//! byte.

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;
use serde_json::value::RawValue;

use super::client::{ChatRequest, ToolChoice};
use super::ModelConfig;
use crate::history::{Message, ToolCall};
use crate::tools::ToolDefinition;

/// One encoded piece of a body (a message, the tools array): JSON text, written verbatim.
pub type Encoded = Box<RawValue>;

/// The request object. `M` is the messages array, `T` the tools array.
#[derive(Serialize)]
struct WireRequest<'a, M, T> {
    model: &'a str,
    messages: M,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    /// Widened from the config's `f32` exactly as the `Value` encoder did before.
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
}

#[derive(Serialize)]
struct StreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: WireName<'a>,
    },
}

#[derive(Serialize)]
struct WireName<'a> {
    name: &'a str,
}

/// One message in the wire shape. Reasoning text is never sent back; a tool result's
/// `is_error` stays local.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        /// `null` when the model only called tools.
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "WireToolCalls::is_empty")]
        tool_calls: WireToolCalls<'a>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

impl<'a> From<&'a Message> for WireMessage<'a> {
    fn from(message: &'a Message) -> Self {
        match message {
            Message::System { content } => Self::System { content },
            Message::User { content } => Self::User { content },
            Message::Assistant { content, tool_calls, .. } => {
                Self::Assistant { content: content.as_deref(), tool_calls: WireToolCalls(tool_calls) }
            }
            Message::Tool { tool_call_id, content, .. } => Self::Tool { tool_call_id, content },
        }
    }
}

struct WireToolCalls<'a>(&'a [ToolCall]);

impl WireToolCalls<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for WireToolCalls<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|c| WireToolCall {
            id: &c.id,
            kind: "function",
            // Arguments are a JSON text, sent as a string exactly as the model produced them.
            function: WireFunctionCall { name: &c.name, arguments: &c.arguments },
        }))
    }
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunctionCall<'a>,
}

#[derive(Serialize)]
struct WireFunctionCall<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a serde_json::Value,
}

struct WireTools<'a>(&'a [ToolDefinition]);

impl Serialize for WireTools<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|t| WireTool {
            kind: "function",
            function: WireFunction { name: &t.name, description: &t.description, parameters: &t.parameters },
        }))
    }
}

/// The messages array from the messages themselves.
struct ScratchMessages<'a> {
    system: Option<&'a str>,
    context: &'a [Message],
    history: &'a [Message],
}

impl Serialize for ScratchMessages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = usize::from(self.system.is_some()) + self.context.len() + self.history.len();
        let mut seq = serializer.serialize_seq(Some(len))?;
        if let Some(content) = self.system {
            seq.serialize_element(&WireMessage::System { content })?;
        }
        for m in self.context.iter().chain(self.history) {
            seq.serialize_element(&WireMessage::from(m))?;
        }
        seq.end()
    }
}

/// The messages array from cached encodings (each written verbatim).
struct CachedMessages<'a> {
    system: Option<&'a RawValue>,
    context: &'a [Encoded],
    history: &'a [Encoded],
}

impl Serialize for CachedMessages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let len = usize::from(self.system.is_some()) + self.context.len() + self.history.len();
        let mut seq = serializer.serialize_seq(Some(len))?;
        if let Some(system) = self.system {
            seq.serialize_element(system)?;
        }
        for m in self.context.iter().chain(self.history) {
            seq.serialize_element(&**m)?;
        }
        seq.end()
    }
}

fn tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    match choice {
        ToolChoice::Auto => WireToolChoice::Mode("auto"),
        ToolChoice::None => WireToolChoice::Mode("none"),
        ToolChoice::Required => WireToolChoice::Mode("required"),
        ToolChoice::Function(name) => WireToolChoice::Function { kind: "function", function: WireName { name } },
    }
}

fn write_body<M: Serialize, T: Serialize>(
    config: &ModelConfig,
    messages: M,
    tools: Option<T>,
    choice: Option<&ToolChoice>,
    capacity: usize,
) -> String {
    let request = WireRequest {
        model: &config.model,
        messages,
        // tool_choice only goes with tools.
        tool_choice: tools.as_ref().and(choice).map(tool_choice),
        tools,
        temperature: config.temperature.map(f64::from),
        max_tokens: config.max_tokens,
        stream: config.stream.then_some(true),
        stream_options: config.stream.then_some(StreamOptions { include_usage: true }),
    };
    let mut out = Vec::with_capacity(capacity);
    // Serializing these structs cannot fail: every map key is a string and every number
    // finite or widened from a finite f32 (a non-finite one is written as `null`).
    if serde_json::to_writer(&mut out, &request).is_err() {
        out.clear();
    }
    // serde_json writes UTF-8 only.
    String::from_utf8(out).unwrap_or_default()
}

/// Encodes `request` from scratch: the reference the cached path must match byte for byte.
pub fn encode_body(config: &ModelConfig, request: &ChatRequest<'_>) -> String {
    let messages = ScratchMessages {
        system: request.system_prompt.filter(|s| !s.is_empty()),
        context: request.context_messages,
        history: request.messages,
    };
    let tools = (!request.tools.is_empty()).then_some(WireTools(request.tools));
    write_body(config, messages, tools, request.tool_choice, 256)
}

/// Cached encodings of a request's parts (see [`assemble_body`]).
#[derive(Debug, Clone, Copy)]
pub struct EncodedRequest<'a> {
    /// The system prompt message ([`encode_system`]), when non-empty.
    pub system: Option<&'a RawValue>,
    /// Context messages ([`encode_message`]).
    pub context: &'a [Encoded],
    /// The history ([`encode_message`]).
    pub history: &'a [Encoded],
    /// The tools array ([`encode_tools`]), when tools are offered.
    pub tools: Option<&'a RawValue>,
    /// Tool choice; only sent with tools.
    pub tool_choice: Option<&'a ToolChoice>,
}

/// Assembles a body from cached encodings: copies each piece once, encodes nothing again.
/// Byte-identical to [`encode_body`] of the same request.
pub fn assemble_body(config: &ModelConfig, parts: &EncodedRequest<'_>) -> String {
    let pieces = parts.system.into_iter().chain(parts.context.iter().map(|e| &**e)).chain(parts.history.iter().map(|e| &**e));
    let (count, bytes) = pieces.fold((0usize, 0usize), |(n, b), e| (n + 1, b + e.get().len()));
    let capacity = bytes + count + parts.tools.map_or(0, |t| t.get().len()) + config.model.len() + 192;
    let messages = CachedMessages { system: parts.system, context: parts.context, history: parts.history };
    write_body(config, messages, parts.tools, parts.tool_choice, capacity)
}

/// Encodes one message for the cache.
pub fn encode_message(message: &Message) -> Encoded {
    encode(&WireMessage::from(message))
}

/// Encodes the system prompt message.
pub fn encode_system(content: &str) -> Encoded {
    encode(&WireMessage::System { content })
}

/// Encodes the tools array; `None` when there are no tools.
pub fn encode_tools(tools: &[ToolDefinition]) -> Option<Encoded> {
    (!tools.is_empty()).then(|| encode(&WireTools(tools)))
}

fn encode<T: Serialize>(value: &T) -> Encoded {
    // As in write_body, these structs always serialize; `null` is a valid fallback.
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn perf_1_typed_body_has_the_provider_shape() {
        let mut config = ModelConfig::new("http://h/v1", "k", "m");
        config.stream = true;
        config.temperature = Some(0.5);
        config.max_tokens = Some(7);
        let tools = [ToolDefinition::new("f", "d", json!({"type": "object"}))];
        let messages = [
            Message::user("hi"),
            Message::Assistant {
                content: None,
                tool_calls: vec![ToolCall { id: "c".into(), name: "f".into(), arguments: "{}".into() }],
                reasoning: Some("secret thoughts".into()),
            },
            Message::tool_result("c", "r", true),
        ];
        let choice = ToolChoice::Function("f".into());
        let request = ChatRequest {
            system_prompt: Some("sys"),
            context_messages: &[],
            messages: &messages,
            tools: &tools,
            tool_choice: Some(&choice),
        };
        let body = encode_body(&config, &request);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            v,
            json!({"model": "m", "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "r"}],
              "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}],
              "tool_choice": {"type": "function", "function": {"name": "f"}},
              "temperature": 0.5, "max_tokens": 7, "stream": true, "stream_options": {"include_usage": true}})
        );
        let history: Vec<Encoded> = messages.iter().map(encode_message).collect();
        let system = encode_system("sys");
        let tools_enc = encode_tools(&tools).unwrap();
        let parts = EncodedRequest {
            system: Some(&system),
            context: &[],
            history: &history,
            tools: Some(&tools_enc),
            tool_choice: Some(&choice),
        };
        assert_eq!(assemble_body(&config, &parts), body);
        // The temperature is widened as the former `json!` encoder did: same bytes.
        assert_eq!(serde_json::to_string(&json!(0.3f32)).unwrap(), serde_json::to_string(&f64::from(0.3f32)).unwrap());
    }

    #[test]
    fn perf_1_no_tools_means_no_tool_choice_and_no_stream_fields() {
        let config = ModelConfig::new("http://h/v1", "k", "m");
        let request =
            ChatRequest { system_prompt: Some(""), context_messages: &[], messages: &[], tools: &[], tool_choice: Some(&ToolChoice::Auto) };
        assert_eq!(encode_body(&config, &request), r#"{"model":"m","messages":[]}"#);
    }
}
