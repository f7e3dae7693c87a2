//! Streaming Chat Completions (LLM-2): `chat.completion.chunk` events assembled into
//! deltas for the UI and into the same [`ChatResponse`] the non-streaming parser returns
//! (the SSE framing and chunking are the shared `llm::stream`'s).
//!
//! Handles the providers' variations: tool-call deltas of parallel calls interleaved by
//! `index` (id and name in the first delta of a call; later deltas may repeat the name or
//! carry `"id": ""`), arguments concatenated; `[DONE]`; usage in a final chunk with empty
//! `choices` (`stream_options.include_usage`), in the last chunk beside the choices (Zhipu)
//! or inside the choice (Moonshot); DeepSeek `reasoning_content` (or `reasoning`, Ollama and
//! vLLM) kept apart from the answer; an error object in the middle of a stream.

use serde_json::Value;

use super::chunk::{ChunkWire, DeltaWire, ToolCallDeltaWire};
use crate::error::LlmError;
use crate::history::{ModelUsage, ThinkingBlocks, ToolCall};
use crate::llm::common::{classify_error_object, finish_message, json_error, Args, Obj, Text};
use crate::llm::delta::{DeltaSink, StreamDelta, StreamEvents, StreamHalt as Halt};
use crate::llm::request::ChatResponse;
use crate::llm::sse::SseEvent;
use crate::llm::stream::StreamParser;

/// The protocol's reading of streamed events.
pub(super) fn events() -> Box<dyn StreamEvents> {
    Box::<Accumulator>::default()
}

impl StreamParser {
    /// A parser of an OpenAI-compatible body (`chat.completion.chunk` events, `[DONE]`),
    /// the default wire format's.
    pub fn new() -> Self {
        Self::with_events(events())
    }
}

impl Default for StreamParser {
    fn default() -> Self {
        Self::new()
    }
}

/// Parses a complete OpenAI-compatible SSE body (tests, fuzzing, benchmarks).
pub fn parse_stream(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let mut parser = StreamParser::new();
    parser.push(body, None)?;
    parser.finish(None)
}


#[derive(Debug, Default)]
struct Accumulator {
    /// Answer text; `Some` once any `content` string arrived (even empty).
    content: Option<String>,
    /// Reasoning text; `Some` once any reasoning string arrived (even empty: THINK-1).
    reasoning: Option<String>,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<ModelUsage>,
    saw_choice: bool,
    done: bool,
}

#[derive(Debug)]
struct PartialCall {
    index: u32,
    id: String,
    name: String,
    /// `None` until an `arguments` string arrives.
    arguments: Option<String>,
    /// `ToolCallStarted` was emitted (once the name is known).
    started: bool,
}

impl StreamEvents for Accumulator {
    fn on_event(&mut self, event: SseEvent<'_>, sink: &mut DeltaSink<'_>) -> Result<(), Halt> {
        if self.done {
            return Err(Halt::Done);
        }
        let data = event.data.trim();
        if data.is_empty() {
            return Ok(());
        }
        if data == "[DONE]" {
            self.done = true;
            return Err(Halt::Done);
        }
        self.on_chunk(event.event, data, sink).map_err(Halt::Failed)
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn into_response(self: Box<Self>) -> Result<ChatResponse, LlmError> {
        self.assemble()
    }
}

impl Accumulator {

    fn on_chunk(&mut self, event: &str, data: &str, sink: &mut DeltaSink<'_>) -> Result<(), LlmError> {
        if event == "error" {
            // `event: error` with a JSON body, with or without an `error` wrapper.
            let value: Value = serde_json::from_str(data).unwrap_or(Value::Null);
            let err = value.get("error").cloned().unwrap_or(value);
            return Err(classify_error_object(200, &err));
        }
        let chunk: ChunkWire<'_> = serde_json::from_str(data).map_err(|e| json_error("stream chunk", &e))?;
        if let Some(err) = chunk.error.filter(|e| !e.is_null()) {
            return Err(classify_error_object(200, &err));
        }
        let top_usage = matches!(chunk.usage, Some(Obj::Object(_)));
        if let Some(Obj::Object(usage)) = chunk.usage {
            self.usage = Some(usage.into_usage());
        }
        for choice in chunk.choices.into_iter().flatten() {
            if choice.index.unwrap_or(0) != 0 {
                continue; // n > 1: only the first choice, like the non-streaming parser
            }
            self.saw_choice = true;
            if let (false, Some(Obj::Object(usage))) = (top_usage, choice.usage) {
                self.usage = Some(usage.into_usage()); // Moonshot
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason.into_owned());
            }
            if let Some(delta) = choice.delta {
                self.apply_delta(delta, sink);
            }
        }
        Ok(())
    }

    fn apply_delta(&mut self, delta: DeltaWire<'_>, sink: &mut DeltaSink<'_>) {
        if let Text(Some(text)) = delta.content {
            self.content.get_or_insert_with(String::new).push_str(&text);
            if let (false, Some(sink)) = (text.is_empty(), sink.as_mut()) {
                sink(StreamDelta::Text(text.into_owned()));
            }
        }
        // `reasoning_content` wins; vLLM sends both with the same text.
        if let Some(text) = delta.reasoning_content.0.or(delta.reasoning.0) {
            self.reasoning.get_or_insert_with(String::new).push_str(&text);
            if let (false, Some(sink)) = (text.is_empty(), sink.as_mut()) {
                sink(StreamDelta::Reasoning(text.into_owned()));
            }
        }
        for call in delta.tool_calls.into_iter().flatten() {
            self.apply_tool_call(call, sink);
        }
    }

    fn apply_tool_call(&mut self, delta: ToolCallDeltaWire<'_>, sink: &mut DeltaSink<'_>) {
        let id = delta.id.filter(|id| !id.is_empty());
        let index = match delta.index {
            Some(index) => index,
            // No index (non-standard): a new id opens a call, otherwise continue the last.
            None => match &id {
                Some(id) => match self.calls.iter().find(|c| c.id == **id) {
                    Some(call) => call.index,
                    None => self.calls.iter().map(|c| c.index.saturating_add(1)).max().unwrap_or(0),
                },
                None => self.calls.last().map_or(0, |c| c.index),
            },
        };
        let pos = match self.calls.iter().position(|c| c.index == index) {
            Some(pos) => pos,
            None => {
                self.calls.push(PartialCall { index, id: String::new(), name: String::new(), arguments: None, started: false });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        if let (true, Some(id)) = (call.id.is_empty(), id) {
            call.id = id.into_owned();
        }
        let (name, arguments) = match delta.function {
            Some(f) => (f.name, f.arguments),
            None => (None, None),
        };
        if let (true, Some(name)) = (call.name.is_empty(), name.filter(|n| !n.is_empty())) {
            call.name = name.into_owned();
        }
        let fragment = arguments.and_then(Args::into_text);
        if let Some(f) = &fragment {
            call.arguments.get_or_insert_with(String::new).push_str(f);
        }
        let Some(sink) = sink.as_mut() else { return };
        if !call.started && !call.name.is_empty() {
            call.started = true;
            sink(StreamDelta::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
            // Fragments that arrived before the name are delivered now, in one piece.
            if let Some(args) = call.arguments.as_ref().filter(|a| !a.is_empty()) {
                sink(StreamDelta::ToolCallArguments { index, fragment: args.clone() });
            }
        } else if call.started {
            if let Some(f) = fragment.filter(|f| !f.is_empty()) {
                sink(StreamDelta::ToolCallArguments { index, fragment: f.into_owned() });
            }
        }
    }

    fn assemble(mut self) -> Result<ChatResponse, LlmError> {
        if !self.done {
            return Err(LlmError::Transport("stream ended before [DONE]".into()));
        }
        if !self.saw_choice {
            return Err(LlmError::MalformedResponse("no choices".into()));
        }
        self.calls.sort_by_key(|c| c.index);
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            if call.name.is_empty() {
                return Err(LlmError::MalformedResponse("tool call without name".into()));
            }
            tool_calls.push(ToolCall { id: call.id, name: call.name, arguments: call.arguments.unwrap_or_else(|| "{}".into()) });
        }
        Ok(ChatResponse {
            message: finish_message(self.content, tool_calls, self.reasoning, ThinkingBlocks::new()),
            usage: self.usage,
            finish_reason: self.finish_reason,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Message;

    fn chunk(delta: &str) -> String {
        format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":null}}]}}\n\n")
    }

    #[test]
    fn llm_2_interleaved_parallel_tool_calls_are_assembled_by_index() {
        let mut body = String::new();
        body += &chunk(r#"{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"get_weather","arguments":""}}]}"#);
        body += &chunk(r#"{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"get_time","arguments":"{\"tz\":"}}]}"#);
        body += &chunk(r#"{"tool_calls":[{"index":0,"id":"","function":{"arguments":"{\"city\":"}}]}"#);
        body += &chunk(r#"{"tool_calls":[{"index":1,"function":{"name":"get_time","arguments":"\"UTC\"}"}}]}"#);
        body += &chunk(r#"{"tool_calls":[{"index":0,"function":{"arguments":"\"北京\"}"}}]}"#);
        body += "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n";
        let mut deltas = Vec::new();
        let mut parser = StreamParser::new();
        parser.push(body.as_bytes(), Some(&mut |d| deltas.push(d))).unwrap();
        let r = parser.finish(None).unwrap();
        assert_eq!(
            r.message.tool_calls(),
            [
                ToolCall { id: "call_a".into(), name: "get_weather".into(), arguments: r#"{"city":"北京"}"#.into() },
                ToolCall { id: "call_b".into(), name: "get_time".into(), arguments: r#"{"tz":"UTC"}"#.into() },
            ]
        );
        assert_eq!(r.message, Message::Assistant { content: None, tool_calls: r.message.tool_calls().to_vec(), reasoning: None, thinking: Default::default() });
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(deltas[0], StreamDelta::ToolCallStarted { index: 0, id: "call_a".into(), name: "get_weather".into() });
        assert_eq!(deltas[1], StreamDelta::ToolCallStarted { index: 1, id: "call_b".into(), name: "get_time".into() });
        assert_eq!(deltas[2], StreamDelta::ToolCallArguments { index: 1, fragment: r#"{"tz":"#.into() });
        assert_eq!(deltas.len(), 6);
    }

    #[test]
    fn llm_2_reasoning_kept_apart_and_usage_from_final_chunk() {
        let mut body = String::from(": keep-alive\n\n");
        body += &chunk(r#"{"role":"assistant","content":null,"reasoning_content":"想一想"}"#);
        body += &chunk(r#"{"content":"答案","reasoning_content":null}"#);
        body += "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n";
        body += "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":4,\"total_tokens\":14,\
                 \"prompt_cache_hit_tokens\":6,\"completion_tokens_details\":{\"reasoning_tokens\":3}}}\n\ndata: [DONE]\n\n";
        let r = parse_stream(body.as_bytes()).unwrap();
        assert_eq!(r.message, Message::Assistant { content: Some("答案".into()), tool_calls: vec![], reasoning: Some("想一想".into()), thinking: Default::default() });
        let u = r.usage.unwrap();
        assert_eq!((u.prompt_tokens, u.completion_tokens, u.total_tokens, u.cached_tokens, u.reasoning_tokens), (10, 4, 14, Some(6), Some(3)));
    }

    #[test]
    fn llm_2_nothing_after_done_is_parsed() {
        let body = format!("{}data: [DONE]\n\ndata: not json\n\n", chunk(r#"{"content":"x"}"#));
        assert_eq!(parse_stream(body.as_bytes()).unwrap().message.text(), Some("x"));
    }

    #[test]
    fn llm_3_error_event_and_error_object_in_stream_are_classified() {
        let body = format!("{}data: {{\"error\":{{\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"}}}}\n\n", chunk(r#"{"content":"x"}"#));
        assert_eq!(parse_stream(body.as_bytes()).unwrap_err().code(), "llm_rate_limited");
        let body = "event: error\ndata: {\"message\":\"This model's maximum context length is 8192 tokens\"}\n\n";
        assert_eq!(parse_stream(body.as_bytes()).unwrap_err(), LlmError::ContextOverflow);
    }
    #[test]
    fn llm_2_bytes_after_done_are_ignored_in_any_chunking() {
        // Invalid UTF-8, a broken chunk and an oversized line after [DONE].
        for tail in [&b"data: \xFF\xFE\n\n"[..], b"data: {not json\n\n", b"event: error\ndata: {}\n\n"] {
            let mut body = chunk(r#"{"content":"x"}"#).into_bytes();
            body.extend_from_slice(b"data: [DONE]\n\n");
            body.extend_from_slice(tail);
            let whole = parse_stream(&body).unwrap();
            assert_eq!(whole.message.text(), Some("x"));
            // Every cut point (a sample under Miri; 0 and the end put the tail in the
            // same chunk as [DONE]).
            let step = if cfg!(miri) { 11 } else { 1 };
            for cut in (0..=body.len()).step_by(step).chain([body.len()]) {
                let mut parser = StreamParser::new();
                parser.push(&body[..cut], None).unwrap();
                parser.push(&body[cut..], None).unwrap();
                assert_eq!(parser.finish(None).unwrap(), whole, "cut at {cut}");
            }
        }
    }

    #[test]
    fn llm_2_a_failed_parser_keeps_its_error() {
        let mut parser = StreamParser::new();
        let e = parser.push(b"data: {oops\n\n", None).unwrap_err();
        assert_eq!(e.code(), "llm_malformed_response");
        assert_eq!(parser.push(b"data: [DONE]\n\n", None), Err(e.clone()));
        assert_eq!(parser.finish(None), Err(e));
    }
}
