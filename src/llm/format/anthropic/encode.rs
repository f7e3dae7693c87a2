//! WIRE-1: Anthropic Messages request bodies, from typed `Serialize` structs (PERF-1: no
//! `Value` tree but a tool call's `input`), encoded from scratch or written
//! incrementally into the session's encoding cache (PERF-7).
//!
//! The body: `{"model","max_tokens","tools"?,"tool_choice"?,"temperature"?,"stream"?,
//! "system"?:[text blocks],"messages":[…]}` — `messages` last, so the history is the
//! growing end of the body. Our history maps onto Anthropic's turns like this:
//! - user input, a tool result (`tool_result` block, `is_error` carried) and a system
//!   message inside the history (an imported one) are `user` content; an answer's text
//!   and tool calls (`tool_use` blocks, `input` = the arguments when they are a JSON
//!   object, `{}` otherwise) are `assistant` content, after the answer's `thinking` and
//!   `redacted_thinking` blocks exactly as received when the replay policy sends them
//!   (THINK-2; an answer with neither text nor tool calls sends nothing, its blocks
//!   included);
//! - consecutive messages of one role are merged into one message, so a turn's tool
//!   results (several `Message::Tool`) become ONE user message of `tool_result` blocks,
//!   appended block by block without touching earlier bytes;
//! - a history whose first message is the model's (after a compression) starts with a
//!   short user message (`continued.md`);
//! - empty texts are not sent (Anthropic refuses empty text blocks), nor the model's or
//!   the system's whitespace-only ones; a message left with no block is skipped.
//!
//! Prompt caching (`cache_control: {"type":"ephemeral"}`, at most 4 breakpoints) is
//! automatic, 3 breakpoints: the system prompt block and the last tool (fixed, encoded
//! once), and the last block of the latest message. That one moves: the cached body
//! holds the last block closed without it; closing a request cuts the block's final `}`
//! and writes the marker, reopening cuts the marker and puts the `}` back — O(marker).
//! So for this format "the next request starts with the previous one's bytes" holds up
//! to the previous request's last breakpoint: the previous body minus its marker
//! and closing brackets is a prefix of the next body.

use std::borrow::Cow;
use std::sync::Arc;

use serde::ser::Serializer;
use serde::Serialize;
use serde_json::Value;

use super::thinking::{body_extras, replay};
use super::tools::{tool_choice, CacheControl, Tools, WireToolChoice, BREAKPOINT};
use crate::history::{slots, Content, ContentPart, ImageSource, Message, Slot, ThinkingBlock, ThinkingBlocks, ToolCall};
use crate::llm::config::ModelConfig;
use crate::llm::format::{BodyWriter, Reopen, RequestEncoder, RequestParts};
use crate::llm::request::ToolChoice;
use crate::llm::thinking::ReasoningReplay;
use crate::tools::ToolDefinition;

/// `max_tokens` sent when the config sets none (Anthropic requires the field): 4096, the
/// output limit of the smallest current Claude models, so it is valid for every model.
pub const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 4096;

/// The marker that closes a block as a cache breakpoint, written over the block's `}`.
const MARKED_END: &str = r#","cache_control":{"type":"ephemeral"}}"#;

/// The user text that precedes a history starting with the model's turn.
fn continued() -> &'static str {
    include_str!("continued.md").trim_end()
}

/// One content block (system, user or assistant content).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {

    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: Cow<'a, str>,
        name: &'a str,
        input: Input,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// IMG-2: an image, base64 or URL source.
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: Cow<'a, str>,
        #[serde(skip_serializing_if = "ResultContent::is_empty")]
        content: ResultContent<'a>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// THINK-2: a reasoning block as received (an answer sends its blocks before its text
    /// or tool calls, or between them as they came: rarely, if ever, last).
    #[serde(untagged)]
    Thinking(&'a ThinkingBlock),
}

impl Block<'_> {
    fn mark(&mut self) {
        let (Block::Text { cache_control, .. }
        | Block::ToolUse { cache_control, .. }
        | Block::Image { cache_control, .. }
        | Block::ToolResult { cache_control, .. }) = self
        else {
            return; // a thinking block takes no breakpoint
        };
        *cache_control = BREAKPOINT;
    }
}

/// An image block's `source`: `{"type":"base64","media_type","data"}` (the base64
/// written straight into the body) or `{"type":"url","url"}`.
struct Source<'a>(&'a ImageSource);

impl Serialize for Source<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        match self.0 {
            ImageSource::Data(image) => {
                map.serialize_entry("type", "base64")?;
                map.serialize_entry("media_type", image.mime().as_str())?;
                map.serialize_entry("data", &Base64(image))?;
            }
            ImageSource::Url(url) => {
                map.serialize_entry("type", "url")?;
                map.serialize_entry("url", url)?;
            }
        }
        map.end()
    }
}

struct Base64<'a>(&'a crate::history::ImageData);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&self.0.base64())
    }
}

/// A `tool_result`'s content: its text (left out when empty, as before images), or its
/// text and image blocks (IMG-2: Anthropic takes images inside a tool result).
enum ResultContent<'a> {
    Text(&'a str),
    Blocks(Vec<Block<'a>>),
}

impl ResultContent<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Self::Text(text) => text.is_empty(),
            Self::Blocks(blocks) => blocks.is_empty(),
        }
    }
}

impl Serialize for ResultContent<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Text(text) => serializer.serialize_str(text),
            Self::Blocks(blocks) => blocks.serialize(serializer),
        }
    }
}

/// Whether a text is empty or only whitespace: Anthropic refuses such a text block (400
/// "text content blocks must contain non-whitespace text"), so none of the model's or the
/// system's is sent. (A user's blank input stays: dropped, the request would end with the
/// model's answer, a prefill.)
fn blank(text: &str) -> bool {
    text.trim().is_empty()
}

/// The blocks of a user message's or tool result's content (empty texts left out).
fn content_blocks(content: &Content) -> Vec<Block<'_>> {
    match content {
        Content::Text(text) => (!text.is_empty()).then_some(Block::Text { text, cache_control: None }).into_iter().collect(),
        Content::Parts(parts) => parts
            .iter()
            .filter_map(|p| match p {
                ContentPart::Text { text } => (!text.is_empty()).then_some(Block::Text { text, cache_control: None }),
                ContentPart::Image(image) => Some(Block::Image { source: Source(&image.source), cache_control: None }),
            })
            .collect(),
    }
}

/// A tool call's `input`: its arguments when they are a JSON object, else `{}` (the model
/// got a tool error for them; Anthropic accepts only an object).
struct Input(Option<Value>);

impl Input {
    fn of(call: &ToolCall) -> Self {
        Self(serde_json::from_str::<Value>(&call.arguments).ok().filter(Value::is_object))
    }
}

impl Serialize for Input {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Some(object) => object.serialize(serializer),
            None => serializer.collect_map(std::iter::empty::<((), ())>()),
        }
    }
}

/// Whose turn a message is on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    User,
    Assistant,
}

fn role(message: &Message) -> Role {
    match message {
        Message::Assistant { .. } => Role::Assistant,
        Message::System { .. } | Message::User { .. } | Message::Tool { .. } => Role::User,
    }
}

/// A tool call id as Anthropic takes it (`^[a-zA-Z0-9_-]+$`): unchanged when it fits;
/// otherwise (an OpenAI-compatible provider's `get_weather:0`, a session moved between
/// wires) each other character becomes `_` and a hash of the whole id is appended, so two
/// ids stay two. Deterministic: the same history encodes to the same bytes (COST-4), and
/// a call and its result map alike.
pub(super) fn wire_id(id: &str) -> Cow<'_, str> {
    let fits = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    if !id.is_empty() && id.bytes().all(fits) {
        return Cow::Borrowed(id);
    }
    // FNV-1a, 64 bits: stable across runs and builds.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let clean: String = id.chars().map(|c| if c.is_ascii() && fits(c as u8) { c } else { '_' }).collect();
    Cow::Owned(format!("{clean}_{hash:016x}"))
}

/// The blocks `message` contributes to its turn (none for an empty one); an answer's
/// reasoning blocks first, or where they came among its text and tool calls, when
/// `replay` sends them.
fn blocks(message: &Message, replay: ReasoningReplay) -> Vec<Block<'_>> {
    fn text(text: &str) -> Option<Block<'_>> {
        (!blank(text)).then_some(Block::Text { text, cache_control: None })
    }
    match message {
        Message::System { content } => text(content).into_iter().collect(),
        Message::User { content } => content_blocks(content),
        Message::Assistant { content, tool_calls, thinking, .. } => {
            if replay.sends(!tool_calls.is_empty()) {
                if let Some(ordered) = thinking.order().and_then(|order| in_order(order, content.as_deref().unwrap_or_default(), tool_calls, thinking)) {
                    return ordered;
                }
            }
            let answer: Vec<Block<'_>> = content
                .as_deref()
                .and_then(text)
                .into_iter()
                .chain(tool_calls.iter().map(tool_use))
                .collect();
            if answer.is_empty() || !replay.sends(!tool_calls.is_empty()) || thinking.is_empty() {
                return answer;
            }
            thinking.iter().map(Block::Thinking).chain(answer).collect()
        }
        Message::Tool { tool_call_id, content, is_error } => {
            let content = match content {
                Content::Text(text) => ResultContent::Text(text),
                Content::Parts(_) => ResultContent::Blocks(content_blocks(content)),
            };
            vec![Block::ToolResult { tool_use_id: wire_id(tool_call_id), content, is_error: *is_error, cache_control: None }]
        }
    }
}

/// A tool call's `tool_use` block.
fn tool_use(c: &ToolCall) -> Block<'_> {
    Block::ToolUse { id: wire_id(&c.id), name: &c.name, input: Input::of(c), cache_control: None }
}

/// THINK-2: an answer whose reasoning blocks were interleaved with its text and tool
/// calls, its blocks in the order it came in (`order`: [`ThinkingBlocks::order`]); `None`
/// when the order does not fit the message (its text changed, a block was dropped): the
/// blocks then go first. A blank text block is left out, as everywhere.
fn in_order<'a>(order: &str, content: &'a str, calls: &'a [ToolCall], thinking: &'a ThinkingBlocks) -> Option<Vec<Block<'a>>> {
    let (mut reasoning, mut calls, mut at) = (thinking.iter(), calls.iter(), 0usize);
    let mut out = Vec::new();
    for slot in slots(order)? {
        match slot {
            Slot::Reasoning => out.push(Block::Thinking(reasoning.next()?)),
            Slot::Call => {
                let c = calls.next()?;
                out.push(tool_use(c));
            }
            Slot::Text(n) => {
                let text = content.get(at..at.checked_add(n)?)?;
                at += n;
                if !blank(text) {
                    out.push(Block::Text { text, cache_control: None });
                }
            }
        }
    }
    if reasoning.next().is_some() || calls.next().is_some() || at != content.len() {
        return None;
    }
    // As in `blocks`: an answer with nothing but reasoning sends nothing.
    Some(if out.iter().all(|b| matches!(b, Block::Thinking(_))) { Vec::new() } else { out })
}

/// The fields before `system` and `messages`, fixed for a session.
#[derive(Serialize)]
struct Head<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    /// Widened from the config's `f32` as the OpenAI-compatible encoder does.
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    /// THINK-4: the thinking fields, then `extra_body`.
    #[serde(flatten)]
    extras: serde_json::Map<String, Value>,
}

impl<'a> Head<'a> {
    fn new(config: &'a ModelConfig, tools: &'a [ToolDefinition], choice: Option<&'a ToolChoice>) -> Self {
        let tools = (!tools.is_empty()).then_some(Tools(tools));
        Head {
            model: &config.model,
            max_tokens: config.max_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS),
            // tool_choice only goes with tools.
            tool_choice: tools.as_ref().and(choice).map(tool_choice),
            tools,
            temperature: config.temperature.map(f64::from),
            stream: config.stream.then_some(true),
            extras: body_extras(config, ANTHROPIC_DEFAULT_MAX_TOKENS),
        }
    }
}

/// The whole request, the from-scratch reference: the same fields as [`Head`] in the
/// same order, then `system` and `messages`.
#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Tools<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream: Option<bool>,
    #[serde(flatten)]
    extras: serde_json::Map<String, Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<Block<'a>>,
    messages: Vec<Turn<'a>>,
}

#[derive(Serialize)]
struct Turn<'a> {
    role: Role,
    content: Vec<Block<'a>>,
}

/// The system blocks: the system prompt (a breakpoint), then the text of each system
/// context message (the memory context).
fn system_blocks<'a>(system_prompt: &'a str, context: &'a [Message]) -> Vec<Block<'a>> {
    let prompt = (!blank(system_prompt)).then_some(Block::Text { text: system_prompt, cache_control: BREAKPOINT });
    let context = context.iter().filter_map(|m| match m {
        Message::System { content } if !blank(content) => Some(Block::Text { text: content, cache_control: None }),
        _ => None,
    });
    prompt.into_iter().chain(context).collect()
}

/// The turns of a conversation, merged and marked as the incremental writer sends them.
fn turns<'a>(messages: impl Iterator<Item = &'a Message>, replay: ReasoningReplay, mark_latest: bool) -> Vec<Turn<'a>> {
    let mut turns: Vec<Turn<'a>> = Vec::new();
    for message in messages {
        let content = blocks(message, replay);
        if content.is_empty() {
            continue;
        }
        let role = role(message);
        if turns.is_empty() && role == Role::Assistant {
            turns.push(Turn { role: Role::User, content: vec![Block::Text { text: continued(), cache_control: None }] });
        }
        match turns.last_mut() {
            Some(turn) if turn.role == role => turn.content.extend(content),
            _ => turns.push(Turn { role, content }),
        }
    }
    if let Some(block) = turns.last_mut().and_then(|t| t.content.last_mut()).filter(|_| mark_latest) {
        block.mark();
    }
    turns
}

fn to_json<T: Serialize>(value: &T) -> String {
    // These structs always serialize (string keys, finite or widened numbers).
    serde_json::to_string(value).unwrap_or_default()
}

/// Encodes `request`'s parts from scratch: the reference the writer must match.
pub(super) fn encode_request(
    config: &ModelConfig,
    parts: RequestParts<'_>,
    context: &[Message],
    history: &[Message],
    mark_latest: bool,
) -> String {
    let head = Head::new(config, parts.tools, parts.tool_choice);
    let other_context = context.iter().filter(|m| !matches!(m, Message::System { .. }));
    let request = Request {
        model: head.model,
        max_tokens: head.max_tokens,
        tools: head.tools,
        tool_choice: head.tool_choice,
        temperature: head.temperature,
        stream: head.stream,
        extras: head.extras,
        system: system_blocks(parts.system_prompt, context),
        messages: turns(other_context.chain(history), replay(config), mark_latest),
    };
    to_json(&request)
}

/// What a session's requests share, encoded once.
struct Fixed {
    /// `Head` serialized, without its closing `}`.
    head: String,
    /// The system prompt block (a breakpoint), "" for none.
    system: String,
    /// Which reasoning goes back (THINK-2), resolved.
    replay: ReasoningReplay,
}

/// The encoder of one session's requests.
pub(super) struct Encoder(Arc<Fixed>);

impl Encoder {
    pub(super) fn new(config: &ModelConfig, parts: RequestParts<'_>) -> Self {
        let mut head = to_json(&Head::new(config, parts.tools, parts.tool_choice));
        head.pop(); // the closing `}`: `system` and `messages` follow
        let system = system_blocks(parts.system_prompt, &[]).first().map(to_json).unwrap_or_default();
        Self(Arc::new(Fixed { head, system, replay: replay(config) }))
    }
}

impl RequestEncoder for Encoder {
    fn writer(&self) -> Box<dyn BodyWriter> {
        Box::new(Writer { fixed: Arc::clone(&self.0), open: None, markable: true })
    }

    fn heap_bytes(&self) -> usize {
        self.0.head.capacity() + self.0.system.capacity()
    }
}

/// Writes the body: the head, `"system":[…]`, `"messages":[`, then the turns. The last
/// turn stays open (its `]}` not written) so that a message of the same role appends
/// blocks to it.
#[derive(Clone)]
struct Writer {
    fixed: Arc<Fixed>,
    /// The role of the open turn; `None` before the first one.
    open: Option<Role>,
    /// Whether the latest block takes the moving breakpoint: not a reasoning block (an
    /// interleaved answer can end with one), as `Block::mark` in the reference.
    markable: bool,
}

impl Writer {
    fn open_turn(piece: &mut String, role: Role) {
        piece.push_str(match role {
            Role::User => r#"{"role":"user","content":["#,
            Role::Assistant => r#"{"role":"assistant","content":["#,
        });
    }
}

impl BodyWriter for Writer {
    fn start(&mut self, context: &[Message]) -> String {
        let f = &self.fixed;
        self.open = None;
        let mut head = f.head.clone();
        let mut system = f.system.clone();
        for block in system_blocks("", context) {
            if !system.is_empty() {
                system.push(',');
            }
            system.push_str(&to_json(&block));
        }
        if !system.is_empty() {
            head.push_str(r#","system":["#);
            head.push_str(&system);
            head.push(']');
        }
        head.push_str(r#","messages":["#);
        for m in context.iter().filter(|m| !matches!(m, Message::System { .. })) {
            head.push_str(&self.encode(m));
        }
        head
    }

    fn encode(&mut self, message: &Message) -> String {
        let content = blocks(message, self.fixed.replay);
        if content.is_empty() {
            return String::new();
        }
        let role = role(message);
        let mut piece = String::new();
        match self.open {
            Some(open) if open == role => piece.push(','),
            Some(_) => {
                piece.push_str("]},");
                Self::open_turn(&mut piece, role);
            }
            None if role == Role::Assistant => {
                Self::open_turn(&mut piece, Role::User);
                piece.push_str(&to_json(&Block::Text { text: continued(), cache_control: None }));
                piece.push_str("]},");
                Self::open_turn(&mut piece, role);
            }
            None => Self::open_turn(&mut piece, role),
        }
        for (i, block) in content.iter().enumerate() {
            if i > 0 {
                piece.push(',');
            }
            piece.push_str(&to_json(block));
        }
        self.open = Some(role);
        self.markable = !matches!(content.last(), Some(Block::Thinking(_)));
        piece
    }

    fn close_len(&self) -> usize {
        MARKED_END.len() + 4
    }

    fn close(&self, body: &mut String) -> Reopen {
        if self.open.is_none() {
            let keep = body.len();
            body.push_str("]}");
            return Reopen { keep, restore: "" };
        }
        if !self.markable {
            let keep = body.len();
            body.push_str("]}]}");
            return Reopen { keep, restore: "" };
        }
        // The latest block becomes the moving breakpoint: its `}` is replaced by the marker.
        debug_assert!(body.ends_with('}'), "an open turn ends with a block");
        let keep = body.len().saturating_sub(1);
        body.truncate(keep);
        body.push_str(MARKED_END);
        body.push_str("]}]}");
        Reopen { keep, restore: "}" }
    }

    fn close_with(&self, body: &mut String, last: &Message) -> Reopen {
        let keep = body.len();
        // A copy of the writer's state (the open turn's role): `last` merges into the
        // open turn or opens its own as any message would, and becomes the latest block.
        let mut writer = self.clone();
        let piece = writer.encode(last);
        body.reserve_exact(piece.len() + writer.close_len());
        body.push_str(&piece);
        writer.close(body);
        Reopen { keep, restore: "" }
    }
}
