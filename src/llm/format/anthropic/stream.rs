//! WIRE-1: a streamed Anthropic Messages answer. Events (the `type` in each event's data,
//! or the SSE `event:` name when the data has none): `message_start` (the usage so far),
//! `content_block_start` / `content_block_delta` (`text_delta`, `input_json_delta`,
//! `thinking_delta`, `signature_delta`; others ignored) / `content_block_stop`,
//! `message_delta` (`stop_reason`, cumulative usage), `message_stop` (the end marker),
//! `ping`, and `error` (classified like the same error answered with its HTTP status).
//! Unknown event types are skipped, as Anthropic asks of clients.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::Value;

use super::response::{classify_error_value, finish_reason, BlockWire, UsageWire};
use crate::error::LlmError;
use crate::history::{OrderRecorder, ThinkingBlock, ThinkingBlocks, ToolCall};
use crate::llm::delta::{DeltaSink, StreamDelta, StreamEvents, StreamHalt};
use crate::llm::request::ChatResponse;
use crate::llm::sse::SseEvent;
use crate::llm::common::{finish_message, json_error, Args, Obj, Text};

/// One event's data (the fields any event type uses).
#[derive(Deserialize)]
struct EventWire<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(default)]
    index: Option<u32>,
    #[serde(default, borrow)]
    content_block: Option<Obj<BlockWire<'a>>>,
    #[serde(default, borrow)]
    delta: Option<DeltaWire<'a>>,
    #[serde(default)]
    message: Option<StartWire>,
    #[serde(default)]
    usage: Option<Obj<UsageWire>>,
    /// A cold path (an error event): kept as a tree for the classifier.
    #[serde(default)]
    error: Option<Value>,
}

/// `message_start`'s `message`: only its usage is read.
#[derive(Deserialize)]
struct StartWire {
    #[serde(default)]
    usage: Option<Obj<UsageWire>>,
}

/// A `content_block_delta`'s or `message_delta`'s `delta`.
#[derive(Deserialize)]
struct DeltaWire<'a> {
    #[serde(default, borrow, rename = "type")]
    kind: Text<'a>,
    #[serde(default, borrow)]
    text: Text<'a>,
    #[serde(default, borrow)]
    partial_json: Text<'a>,
    #[serde(default, borrow)]
    thinking: Text<'a>,
    #[serde(default, borrow)]
    signature: Text<'a>,
    #[serde(default, borrow)]
    stop_reason: Text<'a>,
}

/// A tool call being streamed.
#[derive(Debug)]
struct PartialCall {
    /// The content block it is.
    block: u32,
    call: ToolCall,
    /// `input` of `content_block_start` (normally `{}`), used when no fragment follows.
    initial: String,
    /// Whether an `input_json_delta` arrived (then `call.arguments` is their concatenation).
    streamed: bool,
    /// Whether `initial` was handed to the listeners (at its block's stop, else at
    /// `message_stop`); fragments after that are ignored, as the message ignores them.
    handed: bool,
}

/// The assembled answer so far.
#[derive(Debug, Default)]
pub(super) struct Events {
    started: bool,
    /// `Some` once a text block started (even empty).
    content: Option<String>,
    /// THINK-1: the reasoning blocks with their content block index, in order.
    thinking: Vec<(u32, ThinkingBlock)>,
    /// THINK-2: the kinds of the blocks so far, in order (the text blocks' lengths).
    order: OrderRecorder,
    /// The content block index of the text block the order's last text slot counts.
    text_block: Option<u32>,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<UsageWire>,
    done: bool,
}

fn text(t: Text<'_>) -> Option<Cow<'_, str>> {
    t.0.filter(|t| !t.is_empty())
}

impl StreamEvents for Events {
    fn on_event(&mut self, event: SseEvent<'_>, sink: &mut DeltaSink<'_>) -> Result<(), StreamHalt> {
        if self.done {
            return Err(StreamHalt::Done);
        }
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        let wire: EventWire<'_> = match serde_json::from_str(data) {
            Ok(wire) => wire,
            // An event type this client does not know may carry fields of any shape (a
            // usage notice's string `message`): skipped, as Anthropic asks of clients.
            Err(_) if !is_known(data, event.event) => return Ok(()),
            Err(e) => return Err(StreamHalt::Failed(json_error("stream event", &e))),
        };
        let kind = wire.kind.0.clone().unwrap_or(Cow::Borrowed(event.event));
        match kind.as_ref() {
            "message_start" => self.on_start(wire),
            "content_block_start" => self.on_block_start(wire, sink),
            "content_block_delta" => self.on_delta(wire, sink),
            "message_delta" => self.on_message_delta(wire),
            "message_stop" => {
                self.hand_initial_arguments(|_| true, sink);
                self.done = true;
                return Err(StreamHalt::Done);
            }
            "content_block_stop" => self.on_block_stop(wire.index.unwrap_or(0), sink),
            "error" => return Err(StreamHalt::Failed(classify_error_value(wire.error.as_ref().unwrap_or(&Value::Null)))),
            _ => {} // ping and future event types
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn usage_so_far(&self) -> Option<crate::history::ModelUsage> {
        self.usage.map(UsageWire::into_usage)
    }

    fn into_response(self: Box<Self>) -> Result<ChatResponse, LlmError> {
        if !self.done {
            return Err(LlmError::Transport("stream ended before message_stop".into()));
        }
        if !self.started {
            return Err(LlmError::MalformedResponse("stream without message_start".into()));
        }
        if self.calls.iter().any(|p| p.call.name.is_empty()) {
            return Err(LlmError::MalformedResponse("tool use without name".into()));
        }
        let calls = self.calls.into_iter().map(|p| ToolCall { arguments: if p.streamed { p.call.arguments } else { p.initial }, ..p.call });
        let thinking = ThinkingBlocks::with_order(self.thinking.into_iter().map(|(_, block)| block).collect(), self.order.finish());
        Ok(ChatResponse {
            message: finish_message(self.content, calls.collect(), None, thinking),
            usage: self.usage.map(UsageWire::into_usage),
            finish_reason: self.finish_reason,
        })
    }
}

impl Events {
    fn merge_usage(&mut self, usage: Option<Obj<UsageWire>>) {
        if let Some(Obj::Object(usage)) = usage {
            self.usage.get_or_insert_with(UsageWire::default).merge(usage);
        }
    }

    fn on_start(&mut self, wire: EventWire<'_>) {
        self.started = true;
        self.merge_usage(wire.message.and_then(|m| m.usage));
    }

    fn on_message_delta(&mut self, wire: EventWire<'_>) {
        if let Some(reason) = wire.delta.and_then(|d| d.stop_reason.0) {
            self.finish_reason = Some(finish_reason(&reason));
        }
        self.merge_usage(wire.usage);
    }

    fn on_block_start(&mut self, wire: EventWire<'_>, sink: &mut DeltaSink<'_>) {
        let Some(Obj::Object(block)) = wire.content_block else { return };
        let index = wire.index.unwrap_or(0);
        match block.kind() {
            "text" => {
                let content = self.content.get_or_insert_with(String::new);
                self.order.text(0);
                self.text_block = Some(index);
                if let Some(t) = text(block.text) {
                    content.push_str(&t);
                    self.order.more_text(t.len());
                    emit(sink, || StreamDelta::Text(t.into_owned()));
                }
            }
            "thinking" | "redacted_thinking" => self.start_thinking(index, block, sink),
            "tool_use" => {
                self.order.call();
                self.text_block = None;
                self.start_call(index, block, sink);
            }
            _ => {}
        }
    }

    /// A reasoning block begins: its text so far (normally none) is shown, a redacted one
    /// is announced as such (a stray `thinking` field on it is not shown: it is not kept).
    fn start_thinking(&mut self, index: u32, block: BlockWire<'_>, sink: &mut DeltaSink<'_>) {
        if let Some(block) = block.thinking_block() {
            match &block {
                ThinkingBlock::Thinking { thinking, .. } if !thinking.is_empty() => emit(sink, || StreamDelta::Reasoning(thinking.clone())),
                ThinkingBlock::Thinking { .. } => {}
                ThinkingBlock::RedactedThinking { .. } => emit(sink, || StreamDelta::RedactedReasoning),
            }
            self.thinking.push((index, block));
            self.order.reasoning();
            self.text_block = None;
        }
    }

    /// The `thinking` block at content block `index`, if it is one.
    fn thinking_at(&mut self, index: u32) -> Option<(&mut String, &mut String)> {
        match self.thinking.iter_mut().rev().find(|(i, _)| *i == index) {
            Some((_, ThinkingBlock::Thinking { thinking, signature })) => Some((thinking, signature)),
            _ => None,
        }
    }

    fn start_call(&mut self, block: u32, wire: BlockWire<'_>, sink: &mut DeltaSink<'_>) {
        let position = u32::try_from(self.calls.len()).unwrap_or(u32::MAX);
        let id = wire.id.0.clone().map(Cow::into_owned).unwrap_or_default();
        let name = wire.name.0.clone().map(Cow::into_owned).unwrap_or_default();
        let initial = wire.input.and_then(Args::into_text).filter(|t| !t.trim().is_empty()).map_or_else(|| "{}".to_owned(), Cow::into_owned);
        if !name.is_empty() {
            emit(sink, || StreamDelta::ToolCallStarted { index: position, id: id.clone(), name: name.clone() });
        }
        let call = ToolCall { id, name, arguments: String::new() };
        self.calls.push(PartialCall { block, call, initial, streamed: false, handed: false });
    }

    fn on_delta(&mut self, wire: EventWire<'_>, sink: &mut DeltaSink<'_>) {
        let Some(delta) = wire.delta else { return };
        let index = wire.index.unwrap_or(0);
        match delta.kind.0.as_deref().unwrap_or_default() {
            "text_delta" => {
                let content = self.content.get_or_insert_with(String::new);
                if let Some(t) = text(delta.text) {
                    content.push_str(&t);
                    // Text of a block whose start was not seen (or not the last one begun)
                    // is a text block of its own, as the whole answer would have it.
                    if self.text_block != Some(index) {
                        self.order.text(0);
                        self.text_block = Some(index);
                    }
                    self.order.more_text(t.len());
                    emit(sink, || StreamDelta::Text(t.into_owned()));
                }
            }
            "thinking_delta" => {
                let Some(t) = text(delta.thinking) else { return };
                let Some((thinking, _)) = self.thinking_at(index) else { return };
                thinking.push_str(&t);
                emit(sink, || StreamDelta::Reasoning(t.into_owned()));
            }
            "signature_delta" => {
                let Some(fragment) = delta.signature.0 else { return };
                if let Some((_, signature)) = self.thinking_at(index) {
                    signature.push_str(&fragment);
                }
            }
            "input_json_delta" => {
                let Some(position) = self.calls.iter().position(|c| c.block == index && !c.handed) else { return };
                let partial = &mut self.calls[position];
                // Only a fragment with bytes replaces the start's input: gateways that send
                // the whole input in `content_block_start` follow it with one empty delta.
                if let Some(fragment) = text(delta.partial_json) {
                    partial.streamed = true;
                    partial.call.arguments.push_str(&fragment);
                    let index = u32::try_from(position).unwrap_or(u32::MAX);
                    emit(sink, || StreamDelta::ToolCallArguments { index, fragment: fragment.into_owned() });
                }
            }
            _ => {} // citations_delta and future delta types
        }
    }
}

impl Events {
    /// A block ended: a tool call whose arguments came whole with its start (no fragment
    /// followed) hands them to the listeners now, as one fragment (a call without
    /// arguments, `{}`, has none to hand).
    fn on_block_stop(&mut self, index: u32, sink: &mut DeltaSink<'_>) {
        self.hand_initial_arguments(|c| c.block == index, sink);
    }

    /// Hands the whole arguments of the calls `which` picks that came with their start and
    /// were not handed yet: at their block's stop, or at `message_stop` for a block that
    /// never stopped (issue 42's `stream_chunking` run: such a call's arguments were in the
    /// message but never reached the listeners). Once, however many stops arrive.
    fn hand_initial_arguments(&mut self, which: impl Fn(&PartialCall) -> bool, sink: &mut DeltaSink<'_>) {
        for (position, call) in self.calls.iter_mut().enumerate() {
            if !which(call) || call.streamed || call.handed || call.initial == "{}" {
                continue;
            }
            call.handed = true;
            let index = u32::try_from(position).unwrap_or(u32::MAX);
            emit(sink, || StreamDelta::ToolCallArguments { index, fragment: call.initial.clone() });
        }
    }
}

/// The event types this client reads (an unknown one is skipped, whatever its fields).
fn is_known(data: &str, sse_name: &str) -> bool {
    #[derive(Deserialize)]
    struct KindOnly<'a> {
        #[serde(default, borrow, rename = "type")]
        kind: Text<'a>,
    }
    const KNOWN: [&str; 7] =
        ["message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop", "error"];
    // Data that is not JSON at all is malformed whatever its type.
    let Ok(only) = serde_json::from_str::<KindOnly<'_>>(data) else { return true };
    let kind = only.kind.0;
    KNOWN.contains(&kind.as_deref().unwrap_or(sse_name))
}

/// Hands a delta to the sink; built only when there is one.
fn emit(sink: &mut DeltaSink<'_>, delta: impl FnOnce() -> StreamDelta) {
    if let Some(sink) = sink.as_mut() {
        sink(delta());
    }
}
