//! WIRE-1: the test models speak both wire formats. Tests script answers once, in the
//! OpenAI-compatible shape; under `Wire::Anthropic` the fakes translate them into
//! Anthropic Messages answers (whole JSON, SSE events, error bodies), check every
//! request the way a strict Anthropic server would, and hand the tests an
//! OpenAI-compatible view of it, so one test body asserts on both formats.

use std::collections::{HashMap, HashSet};

use arkagent::HttpRequest;
use serde_json::{json, Map, Value};

/// The wire format a test speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    OpenAi,
    Anthropic,
}

impl Wire {
    /// The fake of the protocol registered as `name` (BND-3: every registered protocol
    /// gets every `each_wire` test; one without a fake here fails them all, loudly).
    pub fn of(name: &str) -> Wire {
        match name {
            "openai" => Wire::OpenAi,
            "anthropic" => Wire::Anthropic,
            other => panic!(
                "the protocol {other:?} is registered (llm::format::REGISTRY) but the test models have no fake for \
                 it: add its variant to tests/it/wire_fake.rs (`Wire`, `Wire::of`, `speak`) with the translations \
                 and the strict request check of a real server"
            ),
        }
    }

    /// One per registered protocol, in registry order.
    pub fn registered() -> Vec<Wire> {
        arkagent::llm::wire_format_names().map(Wire::of).collect()
    }

    /// The `wire_format` name it speaks.
    pub fn name(self) -> &'static str {
        match self {
            Wire::OpenAi => "openai",
            Wire::Anthropic => "anthropic",
        }
    }
}

tokio::task_local! {
    static WIRE: Wire;
}

std::thread_local! {
    static SYNC_WIRE: std::cell::Cell<Option<Wire>> = const { std::cell::Cell::new(None) };
}

/// The wire format of the running test (`OpenAi` outside [`each_wire`]).
pub fn wire() -> Wire {
    WIRE.try_with(|w| *w).ok().or_else(|| SYNC_WIRE.with(std::cell::Cell::get)).unwrap_or(Wire::OpenAi)
}

/// Says which format a failing test spoke.
struct Speaking(Wire);

impl Drop for Speaking {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("WIRE-1: the failing test body was speaking {:?}", self.0);
        }
    }
}

/// Runs an async test body once per registered wire format (BND-3: registering a protocol
/// runs every such test over it): the scripted models, the fake providers and
/// `model_config` built inside it speak that format.
pub async fn each_wire<F, Fut>(body: F)
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    for w in Wire::registered() {
        let _speaking = Speaking(w);
        WIRE.scope(w, body()).await;
    }
}

/// Runs `body` speaking `w` (a child process of a test that spoke it).
pub async fn in_wire<T>(w: Wire, body: impl std::future::Future<Output = T>) -> T {
    WIRE.scope(w, body).await
}

/// [`each_wire`] for a synchronous test body.
pub fn each_wire_sync(body: impl Fn()) {
    for w in Wire::registered() {
        let _speaking = Speaking(w);
        let before = SYNC_WIRE.with(|c| c.replace(Some(w)));
        body();
        SYNC_WIRE.with(|c| c.set(before));
    }
}

/// `config` speaking the running test's wire format.
pub fn speak(mut config: arkagent::ModelConfig) -> arkagent::ModelConfig {
    config.wire_format = arkagent::llm::wire_format(wire().name()).expect("a registered protocol");
    config
}

/// The signature the fakes give every `thinking` block they make of a scripted reasoning.
pub const FAKE_SIGNATURE: &str = "sig";

/// THINK-1: `message` (scripted with a Chat Completions `reasoning`) as the running wire
/// format's parser keeps it: on Anthropic the reasoning is a signed `thinking` block.
pub fn as_received(message: arkagent::Message) -> arkagent::Message {
    match (wire(), message) {
        (Wire::Anthropic, arkagent::Message::Assistant { content, tool_calls, reasoning: Some(r), .. }) => arkagent::Message::Assistant {
            content,
            tool_calls,
            reasoning: None,
            thinking: vec![arkagent::history::ThinkingBlock::Thinking { thinking: r.into(), signature: FAKE_SIGNATURE.into() }].into(),
        },
        (_, message) => message,
    }
}

/// The end marker of a stream in the running format (as error texts name it).
pub fn end_marker() -> &'static str {
    match wire() {
        Wire::OpenAi => "[DONE]",
        Wire::Anthropic => "message_stop",
    }
}

// ------------------------------------------------------------ answers

fn stop_reason(finish: &str) -> &str {
    match finish {
        "tool_calls" => "tool_use",
        "stop" => "end_turn",
        "length" => "max_tokens",
        other => other,
    }
}

/// An Anthropic `usage` object for an OpenAI-compatible one (`prompt_tokens` is the
/// whole prompt: uncached input + cache read).
fn usage(u: &Value) -> Value {
    let prompt = u["prompt_tokens"].as_u64().unwrap_or(0);
    let cached = u["prompt_tokens_details"]["cached_tokens"].as_u64();
    let mut out = json!({"input_tokens": prompt - cached.unwrap_or(0), "output_tokens": u["completion_tokens"].as_u64().unwrap_or(0)});
    if let Some(cached) = cached {
        out["cache_read_input_tokens"] = json!(cached);
    }
    out
}

/// Anthropic's error shape for an OpenAI-compatible error object (its code, else its
/// type, becomes the type).
fn error(err: &Value) -> Value {
    let mut e = Map::new();
    if let Some(kind) = err.get("code").filter(|c| !c.is_null()).or_else(|| err.get("type")).filter(|t| !t.is_null()) {
        e.insert("type".into(), kind.clone());
    }
    if let Some(message) = err.get("message").or(err.as_str().map(|_| err)) {
        e.insert("message".into(), message.clone());
    }
    json!({"type": "error", "error": e})
}

/// A tool call's `input`: the arguments as an object, or (not JSON) the text itself,
/// which the parser keeps verbatim like a lenient server's.
fn input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned()))
}

/// A whole Anthropic body for an OpenAI-compatible one: a completion becomes a
/// `message`, an error object an error; anything else stays (malformed stays malformed).
pub fn whole_to_anthropic(body: &Value) -> Value {
    if let Some(err) = body.get("error").filter(|e| !e.is_null()) {
        return error(err);
    }
    let Some(choice) = body["choices"].as_array().and_then(|c| c.first()) else {
        return if body.get("code").is_some() { error(body) } else { body.clone() };
    };
    let m = &choice["message"];
    let mut content = Vec::new();
    if let Some(r) = m["reasoning_content"].as_str().or(m["reasoning"].as_str()) {
        content.push(json!({"type": "thinking", "thinking": r, "signature": FAKE_SIGNATURE}));
    }
    if let Some(t) = m["content"].as_str() {
        content.push(json!({"type": "text", "text": t}));
    }
    for c in m["tool_calls"].as_array().into_iter().flatten() {
        let args = c["function"]["arguments"].as_str().unwrap_or("{}");
        content.push(json!({"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": input(args)}));
    }
    let mut out = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "test-model", "content": content,
        "stop_reason": choice["finish_reason"].as_str().map(stop_reason), "stop_sequence": null});
    if body["usage"].is_object() {
        out["usage"] = usage(&body["usage"]);
    }
    out
}

/// An error body (status ≥ 400) in Anthropic's shape when it is an OpenAI-compatible one.
pub fn error_to_anthropic(body: &[u8]) -> Vec<u8> {
    match serde_json::from_slice::<Value>(body) {
        Ok(v) if v.get("error").is_some_and(|e| !e.is_null()) => error(&v["error"]).to_string().into_bytes(),
        _ => body.to_vec(),
    }
}

fn event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

/// Rewrites an OpenAI-compatible SSE body as Anthropic events, chunk by chunk (each chunk
/// whole events; comments, whitespace and a BOM pass through; a chunk that is one JSON
/// body is converted whole).
#[derive(Default)]
pub struct SseToAnthropic {
    started: bool,
    /// The open block: its index and kind (`text`, `thinking`, or the call index).
    open: Option<(usize, String)>,
    blocks: usize,
    calls: HashMap<u64, usize>,
    finish: Option<String>,
    usage: Option<Value>,
}

impl SseToAnthropic {
    pub fn convert(&mut self, chunk: &[u8]) -> Vec<u8> {
        let text = String::from_utf8_lossy(chunk);
        let significant = text.trim_start_matches(['\u{feff}', ' ', '\r', '\n', '\t']);
        if significant.starts_with('{') {
            let v: Value = serde_json::from_str(significant).unwrap_or(Value::Null);
            let lead = &text[..text.len() - significant.len()];
            return format!("{lead}{}", if v.is_null() { significant.to_owned() } else { whole_to_anthropic(&v).to_string() }).into_bytes();
        }
        let mut out = String::new();
        for raw in text.split_inclusive("\n\n") {
            let data = raw.lines().find_map(|l| l.strip_prefix("data:")).map(str::trim);
            match data {
                None => out.push_str(raw), // a comment or blank lines
                Some("[DONE]") => self.done(&mut out),
                Some(data) => match serde_json::from_str::<Value>(data) {
                    Ok(v) => self.chunk(&v, &mut out),
                    Err(_) => out.push_str(raw), // broken JSON stays broken
                },
            }
        }
        out.into_bytes()
    }

    fn start(&mut self, out: &mut String) {
        if !self.started {
            self.started = true;
            out.push_str(&event("message_start", json!({"type": "message_start", "message": {"id": "msg_1", "type": "message",
                "role": "assistant", "content": [], "model": "test-model", "stop_reason": null, "usage": {"input_tokens": 0, "output_tokens": 1}}})));
        }
    }

    /// Closes the open block; a `thinking` block gets its signature first, as Anthropic
    /// sends it.
    fn close_block(&mut self, out: &mut String) {
        if let Some((index, open)) = self.open.take() {
            if open == "thinking" {
                Self::delta(index, json!({"type": "signature_delta", "signature": FAKE_SIGNATURE}), out);
            }
            out.push_str(&event("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        }
    }

    /// Makes `kind` the open block (closing another), returning its index.
    fn block(&mut self, kind: &str, start: Value, out: &mut String) -> usize {
        if let Some((index, open)) = &self.open {
            if open == kind {
                return *index;
            }
        }
        self.close_block(out);
        let index = self.blocks;
        self.blocks += 1;
        out.push_str(&event("content_block_start", json!({"type": "content_block_start", "index": index, "content_block": start})));
        self.open = Some((index, kind.to_owned()));
        index
    }

    fn delta(index: usize, delta: Value, out: &mut String) {
        out.push_str(&event("content_block_delta", json!({"type": "content_block_delta", "index": index, "delta": delta})));
    }

    fn chunk(&mut self, v: &Value, out: &mut String) {
        if let Some(err) = v.get("error").filter(|e| !e.is_null()) {
            out.push_str(&event("error", error(err)));
            return;
        }
        if v["usage"].is_object() {
            self.usage = Some(usage(&v["usage"]));
        }
        for choice in v["choices"].as_array().into_iter().flatten() {
            self.start(out);
            if choice["usage"].is_object() {
                self.usage = Some(usage(&choice["usage"]));
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finish = Some(stop_reason(reason).to_owned());
            }
            let d = &choice["delta"];
            if let Some(r) = d["reasoning_content"].as_str().or(d["reasoning"].as_str()) {
                let i = self.block("thinking", json!({"type": "thinking", "thinking": "", "signature": ""}), out);
                Self::delta(i, json!({"type": "thinking_delta", "thinking": r}), out);
            }
            if let Some(t) = d["content"].as_str() {
                let i = self.block("text", json!({"type": "text", "text": ""}), out);
                if !t.is_empty() {
                    Self::delta(i, json!({"type": "text_delta", "text": t}), out);
                }
            }
            for c in d["tool_calls"].as_array().into_iter().flatten() {
                self.tool_call(c, out);
            }
        }
    }

    fn tool_call(&mut self, c: &Value, out: &mut String) {
        let n = c["index"].as_u64().unwrap_or(0);
        let i = match self.calls.get(&n) {
            Some(i) => *i,
            None => {
                let start = json!({"type": "tool_use", "id": c["id"], "name": c["function"]["name"], "input": {}});
                let i = self.block(&format!("call {n}"), start, out);
                self.calls.insert(n, i);
                i
            }
        };
        if let Some(a) = c["function"]["arguments"].as_str() {
            Self::delta(i, json!({"type": "input_json_delta", "partial_json": a}), out);
        }
    }

    fn done(&mut self, out: &mut String) {
        self.close_block(out);
        if self.started {
            let mut delta = json!({"type": "message_delta", "delta": {"stop_reason": self.finish, "stop_sequence": null}});
            if let Some(u) = &self.usage {
                delta["usage"] = u.clone();
            }
            out.push_str(&event("message_delta", delta));
        }
        out.push_str(&event("message_stop", json!({"type": "message_stop"})));
    }
}

/// A completion as an OpenAI-compatible SSE body: reasoning, text, each tool call, the
/// finish and usage chunks, `[DONE]`.
pub fn completion_to_sse(body: &Value) -> String {
    let chunk = |delta: Value| format!("data: {}\n\n", json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta}]}));
    let Some(choice) = body["choices"].as_array().and_then(|c| c.first()) else { return format!("data: {body}\n\ndata: [DONE]\n\n") };
    let m = &choice["message"];
    let mut out = String::new();
    if let Some(r) = m["reasoning_content"].as_str() {
        out += &chunk(json!({"role": "assistant", "reasoning_content": r}));
    }
    if let Some(t) = m["content"].as_str() {
        out += &chunk(json!({"role": "assistant", "content": t}));
    }
    for (i, c) in m["tool_calls"].as_array().into_iter().flatten().enumerate() {
        out += &chunk(json!({"tool_calls": [{"index": i, "id": c["id"], "type": "function", "function": c["function"]}]}));
    }
    out += &format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]}));
    if body["usage"].is_object() {
        out += &format!("data: {}\n\n", json!({"choices": [], "usage": body["usage"]}));
    }
    out + "data: [DONE]\n\n"
}

// ------------------------------------------------------------ requests

/// The memory context's first words (a system block that is not the system prompt).
const MEMORY_CONTEXT: &str = "Earlier conversation was compressed";

fn ephemeral(block: &Value) -> bool {
    match block.get("cache_control") {
        None => false,
        Some(c) => {
            assert_eq!(c, &json!({"type": "ephemeral"}), "breakpoint shape");
            true
        }
    }
}

/// Checks an Anthropic request the way a strict server would and returns its body.
pub fn check_anthropic(request: &HttpRequest, key: &str) -> Value {
    assert_eq!(request.method, "POST");
    assert!(request.url.ends_with("/messages"), "url {}", request.url);
    let header = |name: &str| request.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    assert_eq!(header("x-api-key"), Some(key));
    assert_eq!(header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(header("authorization"), None, "no Bearer header on the Anthropic wire");
    assert!(!request.body.contains(key), "API key leaked into the request body");
    let body: Value = serde_json::from_str(&request.body).expect("request body is JSON");
    assert!(body["model"].is_string());
    assert!(body["max_tokens"].as_u64().is_some_and(|n| n > 0), "max_tokens is required");
    let mut breakpoints = 0;
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    assert!(body.get("tool_choice").is_none() || !tools.is_empty(), "tool_choice without tools");
    for (i, t) in tools.iter().enumerate() {
        assert!(t["name"].is_string() && t["input_schema"].is_object(), "tool {t}");
        assert_eq!(ephemeral(t), i + 1 == tools.len(), "the last tool, and only it, is a breakpoint");
        breakpoints += usize::from(ephemeral(t));
    }
    for (i, s) in body["system"].as_array().into_iter().flatten().enumerate() {
        assert_eq!(s["type"], "text");
        assert!(!s["text"].as_str().unwrap().is_empty(), "empty system block");
        let is_prompt = i == 0 && !s["text"].as_str().unwrap().starts_with(MEMORY_CONTEXT);
        assert_eq!(ephemeral(s), is_prompt, "the system prompt block, and only it, is a breakpoint: {s}");
        breakpoints += usize::from(ephemeral(s));
    }
    // A summarizer's chunk of transcript is a one-off: no later request reads a cache
    // write of its messages, so none is asked for (COST-2); every other request moves its
    // breakpoint to its latest block.
    let one_off = crate::support::is_transcript_summary_request(&anthropic_to_openai(&body));
    let turns = body["messages"].as_array().expect("messages array");
    // Anthropic answers 400 invalid_request_error "messages: at least one message is required".
    assert!(!turns.is_empty(), "messages: at least one message is required");
    breakpoints += check_turns(turns, one_off);
    assert!(breakpoints <= 4, "{breakpoints} breakpoints");
    body
}

/// Anthropic's pattern for tool ids (`^[a-zA-Z0-9_-]+$`): it refuses a request with any other.
fn anthropic_id(id: &str) -> bool {
    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Roles alternate from a user turn; every `tool_use` is answered by a `tool_result` in
/// the next user turn (results first); only the latest block is a breakpoint.
fn check_turns(turns: &[Value], one_off: bool) -> usize {
    let mut open: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut breakpoints = 0;
    for (t, turn) in turns.iter().enumerate() {
        let role = turn["role"].as_str().unwrap();
        assert_eq!(role, if t % 2 == 0 { "user" } else { "assistant" }, "roles alternate from a user turn");
        let blocks = turn["content"].as_array().expect("content blocks");
        assert!(!blocks.is_empty(), "empty turn");
        let mut answered = Vec::new();
        for (b, block) in blocks.iter().enumerate() {
            let last = t + 1 == turns.len() && b + 1 == blocks.len() && !one_off;
            assert_eq!(ephemeral(block), last, "only the latest block is a breakpoint (none in a one-off request): {block}");
            breakpoints += usize::from(last);
            match (role, block["type"].as_str().unwrap()) {
                (_, "text") => {
                    assert!(!block["text"].as_str().unwrap().is_empty(), "empty text block");
                    assert!(role == "assistant" || answered.len() == open.len(), "text before tool results");
                }
                ("assistant", "thinking" | "redacted_thinking") => {
                    // THINK-2: reasoning blocks open an answer, exactly as the fakes made them.
                    assert!(blocks[..b].iter().all(|p| p["type"] == "thinking" || p["type"] == "redacted_thinking"), "a reasoning block after the answer: {blocks:?}");
                    assert!(block.get("cache_control").is_none(), "a breakpoint on a reasoning block");
                    if block["type"] == "thinking" {
                        assert!(block["thinking"].is_string() && block["signature"].is_string(), "thinking block {block}");
                    }
                }
                ("assistant", "tool_use") => {
                    let id = block["id"].as_str().unwrap().to_owned();
                    assert!(anthropic_id(&id), "tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$' ({id:?})");
                    assert!(!id.is_empty() && seen.insert(id.clone()), "duplicate or empty tool_use id");
                    assert!(block["input"].is_object(), "input is an object");
                    answered.push(id);
                }
                ("user", "image") => {
                    check_image_block(block);
                    assert!(answered.len() == open.len(), "an image before tool results");
                }
                ("user", "tool_result") => {
                    for inner in block["content"].as_array().into_iter().flatten() {
                        match inner["type"].as_str() {
                            Some("text") => assert!(!inner["text"].as_str().unwrap().is_empty(), "empty text in a tool_result"),
                            Some("image") => check_image_block(inner),
                            other => panic!("{other:?} inside a tool_result"),
                        }
                    }
                    let id = block["tool_use_id"].as_str().unwrap().to_owned();
                    assert!(anthropic_id(&id), "tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$' ({id:?})");
                    assert!(open.contains(&id) && !answered.contains(&id), "tool_result answers an open tool_use: {id}");
                    answered.push(id);
                }
                other => panic!("block {other:?} in a {role} turn"),
            }
        }
        if role == "user" {
            assert_eq!(answered.len(), open.len(), "every tool_use answered in the next user turn: {open:?}");
            open.clear();
        } else {
            open = answered;
        }
    }
    assert!(open.is_empty(), "request ends with unanswered tool_use blocks {open:?}");
    breakpoints
}

/// A tool_result's text: its string, or its text blocks joined.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// An Anthropic image block as a Chat Completions `image_url` part.
pub fn image_url_of(block: &Value) -> Value {
    let s = &block["source"];
    let url = match s["type"].as_str() {
        Some("base64") => format!("data:{};base64,{}", s["media_type"].as_str().unwrap(), s["data"].as_str().unwrap()),
        _ => s["url"].as_str().unwrap_or_default().to_owned(),
    };
    json!({"type": "image_url", "image_url": {"url": url}})
}

/// IMG-2: an image block has a base64 source of a type Anthropic takes, or a URL.
fn check_image_block(block: &Value) {
    use base64::Engine;
    let source = &block["source"];
    match source["type"].as_str() {
        Some("base64") => {
            let media = source["media_type"].as_str().unwrap();
            assert!(["image/jpeg", "image/png", "image/gif", "image/webp"].contains(&media), "media_type {media}");
            let data = source["data"].as_str().unwrap();
            assert!(base64::engine::general_purpose::STANDARD.decode(data).is_ok(), "image data is not base64");
        }
        Some("url") => assert!(source["url"].as_str().unwrap().starts_with("https://")),
        other => panic!("image source {other:?}"),
    }
}

/// The user turn the format puts before a history that starts with the model's turn.
const CONTINUED: &str = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/llm/format/anthropic/continued.md"));

/// The OpenAI-compatible view of an Anthropic request body (what the tests assert on):
/// system blocks are system messages, `tool_result` blocks tool messages, the user turn
/// put before a history that starts with the model's turn is left out (`check_anthropic`
/// has checked it).
pub fn anthropic_to_openai(body: &Value) -> Value {
    let mut messages: Vec<Value> = body["system"].as_array().into_iter().flatten().map(|s| json!({"role": "system", "content": s["text"]})).collect();
    let turns = body["messages"].as_array().cloned().unwrap_or_default();
    let continued = json!([{"type": "text", "text": CONTINUED.trim_end()}]);
    let skip = usize::from(turns.len() > 1 && turns[0]["content"] == continued);
    for turn in &turns[skip..] {
        let blocks = turn["content"].as_array().unwrap();
        if turn["role"] == "assistant" {
            let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
            let calls: Vec<Value> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| json!({"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": b["input"].to_string()}}))
                .collect();
            let mut m = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text.concat()) }});
            let thinking: Vec<&Value> = blocks.iter().filter(|b| b["type"] == "thinking").collect();
            if !calls.is_empty() && !thinking.is_empty() {
                // THINK-2: the blocks sent back, as Chat Completions would carry them.
                m["reasoning_content"] = json!(thinking.iter().filter_map(|b| b["thinking"].as_str()).collect::<String>());
            }
            if !calls.is_empty() {
                m["tool_calls"] = json!(calls);
            }
            messages.push(m);
            continue;
        }
        for b in blocks {
            messages.push(match b["type"].as_str() {
                Some("tool_result") => json!({"role": "tool", "tool_call_id": b["tool_use_id"], "content": result_text(&b["content"])}),
                Some("image") => json!({"role": "user", "content": [image_url_of(b)]}),
                _ => json!({"role": "user", "content": b["text"]}),
            });
        }
    }
    let mut out = json!({"model": body["model"], "messages": messages});
    if let Some(tools) = body["tools"].as_array() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}}))
            .collect();
        out["tools"] = json!(tools);
    }
    if let Some(choice) = body.get("tool_choice") {
        out["tool_choice"] = match choice["type"].as_str() {
            Some("any") => json!("required"),
            Some("tool") => json!({"type": "function", "function": {"name": choice["name"]}}),
            Some(mode) => json!(mode),
            None => Value::Null,
        };
    }
    for field in ["temperature", "stream"] {
        if let Some(v) = body.get(field) {
            out[field] = v.clone();
        }
    }
    out
}
