//! Typed wire structs of a Chat Completions request (PERF-1, PERF-7): the body is
//! serialized from borrowing `Serialize` structs, never through a `serde_json::Value`
//! tree. A body is serialized either from scratch ([`encode_body`]) or assembled from a
//! [`BodyTemplate`] (everything but the messages, encoded once) and per-message encodings
//! made once and cached ([`encode_message`]); both go through one generic `WireRequest`,
//! so the field order cannot drift apart — the runtime's property test checks the two
//! byte for byte.

use serde::ser::{SerializeSeq, Serializer};
use serde::Serialize;

use super::parts::{ToolImageCarrier, ToolText, WireContent};
use super::thinking::{body_extras, pads_missing_reasoning, replay, uses_max_completion_tokens};
use crate::history::{Message, ToolCall};
use crate::llm::config::ModelConfig;
use crate::llm::request::{ChatRequest, ToolChoice};
use crate::llm::thinking::ReasoningReplay;
use crate::tools::ToolDefinition;

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
    /// OpenAI's name for `max_tokens` (its reasoning models refuse the old one).
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<StreamOptions>,
    /// THINK-4: the thinking fields, then `extra_body`.
    #[serde(flatten)]
    extras: serde_json::Map<String, serde_json::Value>,
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

/// One message in the wire shape. An answer's reasoning goes back as `reasoning_content`
/// when the replay policy says so (THINK-2); a tool result's `is_error` stays local.
#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: WireContent<'a>,
    },
    Assistant {
        /// `null` when the model only called tools; `""` for an answer with neither text
        /// nor calls (all its tokens spent on reasoning, or filtered): DeepSeek refuses
        /// `null` there (400 "content or tool_calls must be set").
        content: Option<&'a str>,
        /// The reasoning exactly as received (`""` included), when it goes back; `""` for
        /// a tool-call answer that has none when [`Echo::pad`] says so.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<&'a str>,
        #[serde(skip_serializing_if = "WireToolCalls::is_empty")]
        tool_calls: WireToolCalls<'a>,
    },
    Tool {
        tool_call_id: &'a str,
        content: ToolText<'a>,
    },
}

/// THINK-2: which reasoning an answer sends back on this wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Echo {
    /// The resolved replay policy.
    pub(crate) replay: ReasoningReplay,
    /// A tool-call answer the policy sends back but that has no reasoning (one from before
    /// thinking, or from another provider) goes with `reasoning_content: ""`: DeepSeek's
    /// and Kimi's thinking modes refuse a tool-call message without the field (400).
    pub(crate) pad: bool,
}

impl Echo {
    /// The policy alone: never a field where the provider sent none.
    pub(crate) const fn plain(replay: ReasoningReplay) -> Self {
        Self { replay, pad: false }
    }

    /// `config`'s rule on this wire.
    pub(crate) fn of(config: &ModelConfig) -> Self {
        Self { replay: replay(config), pad: pads_missing_reasoning(config) }
    }
}

impl<'a> WireMessage<'a> {
    /// `message` on the wire, its reasoning sent back as `echo` says (THINK-2: never when
    /// the provider sent none, unless the provider refuses a tool call without it).
    fn of(message: &'a Message, echo: Echo) -> Self {
        match message {
            Message::System { content } => Self::System { content },
            Message::User { content } => Self::User { content: WireContent(content) },
            Message::Assistant { content, tool_calls, reasoning, .. } => Self::Assistant {
                content: content.as_deref().or_else(|| tool_calls.is_empty().then_some("")),
                reasoning_content: match reasoning.as_deref() {
                    _ if !echo.replay.sends(!tool_calls.is_empty()) => None,
                    None if echo.pad && !tool_calls.is_empty() => Some(""),
                    r => r,
                },
                tool_calls: WireToolCalls(tool_calls),
            },
            Message::Tool { tool_call_id, content, .. } => Self::Tool { tool_call_id, content: ToolText(content) },
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
    echo: Echo,
}

impl Serialize for ScratchMessages<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        if let Some(content) = self.system {
            seq.serialize_element(&WireMessage::System { content })?;
        }
        let mut carrier = ToolImageCarrier::default();
        for m in self.context.iter().chain(self.history) {
            if let Some(images) = carrier.before(m) {
                seq.serialize_element(&images)?;
            }
            seq.serialize_element(&WireMessage::of(m, self.echo))?;
            if let Some(images) = carrier.after(m) {
                seq.serialize_element(&images)?;
            }
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
        max_tokens: config.max_tokens.filter(|_| !uses_max_completion_tokens(config)),
        max_completion_tokens: config.max_tokens.filter(|_| uses_max_completion_tokens(config)),
        stream: config.stream.then_some(true),
        stream_options: config.stream.then_some(StreamOptions { include_usage: true }),
        extras: body_extras(config),
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
        echo: Echo::of(config),
    };
    let tools = (!request.tools.is_empty()).then_some(WireTools(request.tools));
    write_body(config, messages, tools, request.tool_choice, 256)
}

/// Everything of a body but its messages, encoded once: the model, the tools array, the
/// tool choice and the sampling fields. A body is `head` + `[` + messages + `]` + `tail`
/// ([`assemble`](Self::assemble)), byte-identical to [`encode_body`] of the same request.
#[derive(Debug, Clone)]
pub struct BodyTemplate {
    head: String,
    tail: String,
}

impl BodyTemplate {
    /// The template for requests under `config` offering `tools` with `tool_choice`.
    pub fn new(config: &ModelConfig, tools: &[ToolDefinition], tool_choice: Option<&ToolChoice>) -> Self {
        let tools = (!tools.is_empty()).then_some(WireTools(tools));
        // The same request serialized with two one-byte stand-ins for the messages array:
        // where the two differ is where the array goes.
        let a = write_body(config, 0u8, tools.as_ref(), tool_choice, 256);
        let b = write_body(config, 1u8, tools.as_ref(), tool_choice, 256);
        let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len());
        Self { head: a.get(..at).unwrap_or_default().to_owned(), tail: a.get(at + 1..).unwrap_or_default().to_owned() }
    }

    /// Heap bytes the template holds (PERF-2's memory report).
    pub fn heap_bytes(&self) -> usize {
        self.head.capacity() + self.tail.capacity()
    }

    /// Everything before the messages array's `[`.
    pub fn head(&self) -> &str {
        &self.head
    }

    /// Everything after the messages array's `]`.
    pub fn tail(&self) -> &str {
        &self.tail
    }

    /// The body whose messages array holds `runs`: each a non-empty run of encoded
    /// messages ([`encode_message`]) separated by commas. Copies each byte once.
    pub fn assemble(&self, runs: &[&str]) -> String {
        let len = self.head.len() + self.tail.len() + 2 + runs.iter().map(|r| r.len() + 1).sum::<usize>();
        let mut body = String::with_capacity(len);
        body.push_str(&self.head);
        body.push('[');
        for (i, run) in runs.iter().filter(|r| !r.is_empty()).enumerate() {
            if i > 0 {
                body.push(',');
            }
            body.push_str(run);
        }
        body.push(']');
        body.push_str(&self.tail);
        body
    }
}

/// Encodes one message as it appears in the messages array (alone: a tool result's
/// images, which go in a later user message, are left out; see [`encode_in_turn`]), an
/// answer's reasoning sent back as `replay` says (resolved: see [`replay_of`]) — never
/// where it has none: the runtime's own encoder ([`encode_body`] and the request encoder)
/// also sends `""` for a tool-call answer without reasoning to DeepSeek and Kimi while
/// they think, which refuse the message without the field.
pub fn encode_message(message: &Message, replay: ReasoningReplay) -> String {
    encode(&WireMessage::of(message, Echo::plain(replay)))
}

/// THINK-2: the replay policy `config`'s requests follow on this wire (`auto` resolved).
pub fn replay_of(config: &ModelConfig) -> ReasoningReplay {
    replay(config)
}

/// Encodes `message` in its place in a history that `carrier` has followed so far:
/// its wire message, preceded or followed by the user message carrying a turn's tool
/// images when that goes here (IMG-2), comma-separated.
pub(crate) fn encode_in_turn(carrier: &mut ToolImageCarrier, message: &Message, echo: Echo) -> String {
    let before = carrier.before(message).map(|images| encode(&images));
    let this = encode(&WireMessage::of(message, echo));
    let after = carrier.after(message).map(|images| encode(&images));
    if before.is_none() && after.is_none() {
        return this;
    }
    let pieces: Vec<String> = before.into_iter().chain(std::iter::once(this)).chain(after).collect();
    pieces.join(",")
}

/// Appends `message`'s encoding to a comma-separated run of encoded messages (O(message),
/// whatever the run's length).
pub fn append_message(run: &mut String, message: &Message, replay: ReasoningReplay) {
    if !run.is_empty() {
        run.push(',');
    }
    run.push_str(&encode_message(message, replay));
}

/// Encodes the system prompt message.
pub fn encode_system(content: &str) -> String {
    encode(&WireMessage::System { content })
}

fn encode<T: Serialize>(value: &T) -> String {
    // As in write_body, these structs always serialize; `null` is a valid fallback.
    serde_json::to_string(value).unwrap_or_else(|_| "null".to_owned())
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
                reasoning: Some("thoughts".into()),
                thinking: Default::default(),
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
                {"role": "assistant", "content": null, "reasoning_content": "thoughts", "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "c", "content": "r"}],
              "tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}],
              "tool_choice": {"type": "function", "function": {"name": "f"}},
              "temperature": 0.5, "max_tokens": 7, "stream": true, "stream_options": {"include_usage": true}})
        );
        let template = BodyTemplate::new(&config, &tools, Some(&choice));
        let mut run = String::new();
        for m in &messages {
            append_message(&mut run, m, ReasoningReplay::ToolCalls);
        }
        let system = encode_system("sys");
        assert_eq!(template.assemble(&[&system, "", &run]), body);
        let each: Vec<String> = messages.iter().map(|m| encode_message(m, ReasoningReplay::ToolCalls)).collect();
        assert_eq!(each.join(","), run);
        // The temperature is widened as the former `json!` encoder did: same bytes.
        assert_eq!(serde_json::to_string(&json!(0.3f32)).unwrap(), serde_json::to_string(&f64::from(0.3f32)).unwrap());
    }

    #[test]
    fn perf_1_no_tools_means_no_tool_choice_and_no_stream_fields() {
        let config = ModelConfig::new("http://h/v1", "k", "m");
        let request =
            ChatRequest { system_prompt: Some(""), context_messages: &[], messages: &[], tools: &[], tool_choice: Some(&ToolChoice::Auto) };
        assert_eq!(encode_body(&config, &request), r#"{"model":"m","messages":[]}"#);
        assert_eq!(BodyTemplate::new(&config, &[], Some(&ToolChoice::Auto)).assemble(&[]), r#"{"model":"m","messages":[]}"#);
    }
}
