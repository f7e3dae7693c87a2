//! THINK-1..THINK-5: strict thinking providers, answering as DeepSeek V4, Kimi K2.6, Qwen3.5
//! and Claude do with thinking on (shared/notes/thinking-models.md), and refusing what they
//! refuse, with their status and error body:
//!
//! - DeepSeek / Kimi (Chat Completions): every assistant message with tool calls must carry
//!   the `reasoning_content` the provider gave that answer, exactly (the empty string
//!   included); missing → 400 with the provider's message; changed → 400; a
//!   `reasoning_content` on an answer the provider gave none → 400 (the fake's own rule:
//!   no request carries reasoning a provider never sent); an assistant message with
//!   neither `content` nor `tool_calls` → 400 (DeepSeek's "content or tool_calls must be
//!   set").
//! - Anthropic: in the current tool cycle (a request whose last turn is tool results
//!   only), the answer it continues must start with its `thinking` and
//!   `redacted_thinking` blocks exactly as given (400 "Expected `thinking` or
//!   `redacted_thinking`…" when missing); a block that is not one the provider gave, byte
//!   for byte and in place (a changed signature or text, a reordered or dropped block) →
//!   400 "Invalid `signature`"; other turns may leave theirs out. A text block of only
//!   whitespace, anywhere → 400 "text content blocks must contain non-whitespace text".
//! - Qwen: a call that does not stream must say `enable_thinking: false` (400 otherwise);
//!   its reasoning need not come back (and is not checked).
//!
//! Thinking is on unless the request switches it off (`thinking: {"type": "disabled"}`,
//! `enable_thinking: false`): then answers carry no reasoning at all. Each run calls the
//! `weather` tool `rounds` times (or `delegate_task` once first, when offered), then
//! answers `done`; summarizer requests get a snapshot. Answers are whole or SSE, as the
//! request asks; usage reports reasoning tokens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use arkagent::{CancellationToken, HttpRequest, HttpResponse, HttpTransport, TransportError};
use async_trait::async_trait;
use serde_json::{json, Value};

use crate::support::{compression_instruction_mark, snapshot_text};

/// Which provider the fake plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    DeepSeek,
    Kimi,
    Qwen,
    Anthropic,
}

impl Flavor {
    pub const ALL: [Flavor; 4] = [Flavor::DeepSeek, Flavor::Kimi, Flavor::Qwen, Flavor::Anthropic];

    /// A model config for this provider at the fake's address (the provider recognised from
    /// the model name).
    pub fn config(self, key: &str, stream: bool) -> arkagent::ModelConfig {
        let (wire, model) = match self {
            Flavor::DeepSeek => (arkagent::llm::WireFormat::OPENAI, "deepseek-v4-flash"),
            Flavor::Kimi => (arkagent::llm::WireFormat::OPENAI, "kimi-k2.6"),
            Flavor::Qwen => (arkagent::llm::WireFormat::OPENAI, "qwen3.5-plus"),
            Flavor::Anthropic => (arkagent::llm::WireFormat::ANTHROPIC, "claude-sonnet-4-5"),
        };
        let mut c = arkagent::ModelConfig::new("https://thinking.test/v1", key, model);
        c.wire_format = wire;
        c.stream = stream;
        c.retry.max_attempts = 1;
        c
    }

    fn anthropic(self) -> bool {
        self == Flavor::Anthropic
    }
}

/// What the provider gave one answer (keyed by the answer's first tool call id).
#[derive(Debug, Clone)]
enum Given {
    /// Chat Completions: the `reasoning_content` field, if it sent one.
    Reasoning(Option<String>),
    /// Anthropic: the reasoning blocks, in order.
    Blocks(Vec<Value>),
    /// Anthropic, interleaved thinking: the answer's whole content, every block in place.
    Content(Vec<Value>),
}

#[derive(Default)]
struct State {
    given: HashMap<String, Given>,
    next: usize,
    bodies: Vec<String>,
    refusals: Vec<String>,
    /// Requests (by index) after whose first reasoning piece the answer stops until cancelled.
    hang_at: Option<usize>,
    /// Answers (by number) with a blank text: see [`ThinkingProvider::blank_answer_at`].
    blank_at: Option<usize>,
    /// Anthropic answers with a call interleave their blocks: see [`ThinkingProvider::interleave`].
    interleave: bool,
    /// Error answers (status, body) for the next requests that are not a summarizer's.
    troubles: std::collections::VecDeque<(u16, Value)>,
}

pub struct ThinkingProvider {
    pub flavor: Flavor,
    key: String,
    /// Tool rounds per run before the final answer.
    rounds: usize,
    state: Mutex<State>,
}

/// An error answer: status and body.
type Refusal = (u16, Value);

impl ThinkingProvider {
    pub fn new(flavor: Flavor, key: &str, rounds: usize) -> Arc<Self> {
        Arc::new(Self { flavor, key: key.to_owned(), rounds, state: Mutex::default() })
    }

    /// Every request body, as sent.
    pub fn bodies(&self) -> Vec<String> {
        self.state.lock().unwrap().bodies.clone()
    }

    /// The error messages the provider answered with so far.
    pub fn refusals(&self) -> Vec<String> {
        self.state.lock().unwrap().refusals.clone()
    }

    /// Request `index` (0-based) stops after its first reasoning piece until cancelled.
    pub fn hang_at(&self, index: usize) {
        self.state.lock().unwrap().hang_at = Some(index);
    }

    /// Answer `n` (0-based, summaries included) is blank, as a thinking model's can be:
    /// on Chat Completions, reasoning and nothing else (`content: null`, no calls,
    /// `finish_reason: "length"`: the budget went on thinking); on Anthropic, a text block
    /// of `"\n\n"` before its tool call (or as its whole answer).
    pub fn blank_answer_at(&self, n: usize) {
        self.state.lock().unwrap().blank_at = Some(n);
    }

    /// Claude's interleaved thinking: every Anthropic answer with a call comes as a thinking
    /// block, a preamble text, a second (redacted) reasoning block, then the call — each
    /// block's signature covering what precedes it, so the blocks must come back in place.
    pub fn interleave(&self) {
        self.state.lock().unwrap().interleave = true;
    }

    /// The next request that is not a summarizer's is refused as too long for the context
    /// window (Anthropic's 400), the one after it gets 529 `overloaded_error`: a run that
    /// compresses for the overflow, then fails before an answer.
    pub fn overflow_then_overload(&self) {
        let error = |kind: &str, message: &str| json!({"type": "error", "error": {"type": kind, "message": message}});
        let mut state = self.state.lock().unwrap();
        state.troubles.push_back((400, error("invalid_request_error", "prompt is too long: 208000 tokens > 200000 maximum")));
        state.troubles.push_back((529, error("overloaded_error", "Overloaded")));
    }

    fn refuse(&self, message: String) -> Refusal {
        let body = if self.flavor.anthropic() {
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}})
        } else if self.flavor == Flavor::Qwen {
            json!({"error": {"code": "InvalidParameter", "message": message, "type": "invalid_request_error"}})
        } else {
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": "invalid_request_error"}})
        };
        (400, body)
    }

    // ------------------------------------------------------------------ the checks

    fn check(&self, body: &Value, given: &HashMap<String, Given>) -> Result<(), Refusal> {
        match self.flavor {
            Flavor::DeepSeek | Flavor::Kimi => self.check_chat(body, given),
            Flavor::Qwen => {
                if body["stream"] != json!(true) && body["enable_thinking"] != json!(false) {
                    return Err(self.refuse("parameter.enable_thinking must be set to false for non-streaming calls".into()));
                }
                Ok(())
            }
            Flavor::Anthropic => self.check_anthropic(body, given),
        }
    }

    fn check_chat(&self, body: &Value, given: &HashMap<String, Given>) -> Result<(), Refusal> {
        for (index, m) in body["messages"].as_array().into_iter().flatten().enumerate() {
            let no_calls = m["tool_calls"].as_array().is_none_or(Vec::is_empty);
            if m["role"] == "assistant" && m["content"].is_null() && no_calls {
                return Err(self.refuse(format!("Invalid assistant message at index {index}: content or tool_calls must be set")));
            }
            let Some(first) = m["tool_calls"][0]["id"].as_str() else {
                continue;
            };
            let sent = m.get("reasoning_content");
            let had_reasoning = matches!(given.get(first), Some(Given::Reasoning(Some(_))));
            // Thinking, both refuse any tool-call message without the field, also one
            // whose answer never had reasoning (a session from before thinking).
            if sent.is_none() && !had_reasoning && !self.thinking_off(body) {
                return Err(self.refuse(match self.flavor {
                    Flavor::Kimi => format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}"),
                    _ => format!("Missing `reasoning_content` field in the assistant message at message index {index}"),
                }));
            }
            let Some(Given::Reasoning(gave)) = given.get(first) else { continue };
            match (gave, sent) {
                (Some(_), None) => {
                    return Err(self.refuse(match self.flavor {
                        Flavor::Kimi => format!("thinking is enabled but reasoning_content is missing in assistant tool call message at index {index}"),
                        _ => "The reasoning_content in the thinking mode must be passed back to the API.".into(),
                    }))
                }
                (Some(gave), Some(sent)) if sent != &json!(gave) => {
                    return Err(self.refuse(format!("reasoning_content of the assistant message at index {index} differs from the model's")))
                }
                // `""` is what a client sends for an answer without reasoning.
                (None, Some(sent)) if sent != &json!("") => {
                    return Err(self.refuse(format!("reasoning_content at index {index} for an answer that had none")))
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_anthropic(&self, body: &Value, given: &HashMap<String, Given>) -> Result<(), Refusal> {
        let turns = body["messages"].as_array().cloned().unwrap_or_default();
        let system = body["system"].as_array().cloned().unwrap_or_default();
        let texts = system.iter().chain(turns.iter().flat_map(|t| t["content"].as_array().into_iter().flatten()));
        if texts.filter(|b| b["type"] == "text").any(|b| b["text"].as_str().is_none_or(|t| t.trim().is_empty())) {
            return Err(self.refuse("messages: text content blocks must contain non-whitespace text".into()));
        }
        // The current tool cycle: the request ends with a user turn that holds tool results
        // (the lastmost set, also when the user's next text shares their turn), answering
        // the assistant turn before it.
        let results_last = turns.last().is_some_and(|t| t["role"] == "user" && blocks_of(t).iter().any(|b| b["type"] == "tool_result"));
        let last_with_tools = results_last.then(|| turns.len().checked_sub(2)).flatten();
        for (index, turn) in turns.iter().enumerate().filter(|(_, t)| t["role"] == "assistant") {
            let blocks = blocks_of(turn);
            let first_call = blocks.iter().find(|b| b["type"] == "tool_use").and_then(|b| b["id"].as_str());
            if let Some(Given::Content(content)) = first_call.and_then(|id| given.get(id)) {
                // Outside the current cycle the provider strips the blocks (they may be left
                // out); where they are sent, each must be in its place.
                let bare: Vec<Value> = blocks.iter().map(without_cache_control).collect();
                let latest = Some(index) == last_with_tools;
                if (latest || bare.iter().any(is_reasoning)) && &bare != content {
                    return Err(self.refuse(format!(
                        "messages.{index}.content: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response."
                    )));
                }
                continue;
            }
            let reasoning: Vec<Value> = blocks.iter().take_while(|b| is_reasoning(b)).cloned().collect();
            if blocks.iter().skip(reasoning.len()).any(is_reasoning) {
                return Err(self.refuse(format!("messages.{index}.content: a thinking block after the answer")));
            }
            // An answer is known by its first tool call, a final one by its text.
            let first_call = blocks.iter().find(|b| b["type"] == "tool_use").and_then(|b| b["id"].as_str()).map(str::to_owned);
            let key = first_call.or_else(|| blocks.iter().find_map(|b| b["text"].as_str()).map(|t| format!("text:{t}")));
            let gave = key.and_then(|k| given.get(&k)).and_then(|g| match g {
                Given::Blocks(b) => Some(b.clone()),
                Given::Reasoning(_) | Given::Content(_) => None,
            });
            match gave {
                Some(gave) if reasoning.is_empty() && !gave.is_empty() && Some(index) == last_with_tools => {
                    return Err(self.refuse(format!(
                        "messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns."
                    )))
                }
                Some(gave) if !reasoning.is_empty() && reasoning != gave => {
                    return Err(self.refuse(format!("messages.{index}.content.0: Invalid `signature` in `thinking` block")))
                }
                None if !reasoning.is_empty() => {
                    return Err(self.refuse(format!("messages.{index}.content.0: Invalid `signature` in `thinking` block")))
                }
                _ => {}
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------ the answers

    /// Whether the request switched thinking off.
    fn thinking_off(&self, body: &Value) -> bool {
        body["thinking"]["type"] == "disabled" || body["enable_thinking"] == json!(false)
    }

    /// The reasoning of answer `n`: a text, empty every third answer.
    fn reasoning(n: usize) -> String {
        if n % 3 == 2 {
            String::new()
        } else {
            format!("Step {n}: the user wants the weather; I should call the tool, then answer. «思考 {n}»")
        }
    }

    fn answer(&self, body: &Value, state: &mut State) -> Value {
        let n = state.next;
        state.next += 1;
        // Qwen thinks only in streamed calls.
        let qwen_whole = self.flavor == Flavor::Qwen && body["stream"] != json!(true);
        let thinking = !(self.thinking_off(body) || qwen_whole);
        let (text, call) = if is_summary(body, self.flavor) {
            (Some(snapshot_text("answer the weather", "called weather")), None)
        } else {
            let offers = |name: &str| body["tools"].as_array().into_iter().flatten().any(|t| t["name"] == name || t["function"]["name"] == name);
            let rounds = tool_rounds(body, self.flavor);
            if offers("delegate_task") && rounds == 0 {
                (None, Some(("delegate_task", json!({"assignee": "clone", "task_description": "find the weather in Paris"}))))
            } else if rounds < self.rounds && offers("weather") {
                (None, Some(("weather", json!({"city": "Paris"}))))
            } else {
                (Some(format!("done {n}")), None)
            }
        };
        let blank = state.blank_at == Some(n);
        let (text, call) = match (blank, self.flavor.anthropic()) {
            (true, true) => (Some("\n\n".to_owned()), call),
            (true, false) => (None, None),
            (false, _) => (text, call),
        };
        let call = call.map(|(name, args)| (format!("call_{n}"), name, args));
        let reasoning = thinking.then(|| Self::reasoning(n));
        let blocks = reasoning.as_ref().map(|r| anthropic_blocks(n, r)).unwrap_or_default();
        let key = match (&call, &text) {
            (Some((id, _, _)), _) => Some(id.clone()),
            (None, Some(text)) => Some(format!("text:{text}")),
            (None, None) => None,
        };
        if let Some(key) = key {
            let given = if self.flavor.anthropic() { Given::Blocks(blocks.clone()) } else { Given::Reasoning(reasoning.clone()) };
            state.given.insert(key, given);
        }
        let mut answer = json!({"n": n, "text": text, "call": call.map(|(id, name, args)| json!({"id": id, "name": name, "arguments": args})),
               "reasoning": reasoning, "blocks": blocks, "blank": blank});
        if state.interleave && self.flavor.anthropic() && answer["call"].is_object() && !blocks.is_empty() {
            // [thinking, preamble, redacted_thinking, tool_use], or [preamble, thinking,
            // tool_use]: a reasoning block follows text.
            let whole = anthropic_whole(&answer)["content"].as_array().cloned().unwrap_or_default();
            let preamble = json!({"type": "text", "text": format!("Checking, step {n}.")});
            let at = usize::from(blocks.len() > 1);
            let mut content = whole[..at].to_vec();
            content.push(preamble);
            content.extend(whole[at..].iter().cloned());
            state.given.insert(answer["call"]["id"].as_str().unwrap_or_default().to_owned(), Given::Content(content.clone()));
            answer["content"] = json!(content);
        }
        answer
    }

    fn render(&self, answer: &Value, stream: bool) -> String {
        match (self.flavor.anthropic(), stream) {
            (false, false) => chat_whole(answer).to_string(),
            (false, true) => chat_sse(answer),
            (true, false) => anthropic_whole(answer).to_string(),
            (true, true) => anthropic_sse(answer),
        }
    }
}

fn blocks_of(turn: &Value) -> Vec<Value> {
    turn["content"].as_array().cloned().unwrap_or_default()
}

fn is_reasoning(block: &Value) -> bool {
    block["type"] == "thinking" || block["type"] == "redacted_thinking"
}

/// Answer `n`'s Anthropic blocks: a signed thinking block (signature bound to its text and
/// place), and a redacted one every other answer.
fn anthropic_blocks(n: usize, reasoning: &str) -> Vec<Value> {
    let mut blocks = vec![json!({"type": "thinking", "thinking": reasoning, "signature": format!("EqQB{:x}/{n}+sig==", fnv(reasoning))})];
    if n % 2 == 1 {
        blocks.push(json!({"type": "redacted_thinking", "data": format!("EmwKAhgBEgy3va3pzix/LafPsn4aDF{n}==")}));
    }
    blocks
}

fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Assistant tool-call turns since the last user text (a turn of only tool results does
/// not count as user text).
fn tool_rounds(body: &Value, flavor: Flavor) -> usize {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let user_text = |m: &Value| match flavor {
        Flavor::Anthropic => m["role"] == "user" && blocks_of(m).iter().any(|b| b["type"] == "text"),
        _ => m["role"] == "user",
    };
    let start = messages.iter().rposition(user_text).map_or(0, |i| i + 1);
    messages[start..]
        .iter()
        .filter(|m| m["role"] == "assistant" && (m["tool_calls"].is_array() || blocks_of(m).iter().any(|b| b["type"] == "tool_use")))
        .count()
}

/// A summarizer request: the transcript's (system prompt with the snapshot format) or one
/// ending with the compression instruction.
pub fn is_summary(body: &Value, flavor: Flavor) -> bool {
    let mark = compression_instruction_mark();
    let summary_prompt = |s: &Value| s.as_str().is_some_and(|s| s.contains("<state_snapshot>") && !s.starts_with("Earlier conversation"));
    if flavor.anthropic() {
        let system = summary_prompt(&body["system"][0]["text"]);
        let last = body["messages"].as_array().and_then(|m| m.last()).map(blocks_of).unwrap_or_default();
        return system || last.iter().any(|b| b["text"].as_str().is_some_and(|t| t.starts_with(mark)));
    }
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let system = messages.first().is_some_and(|m| m["role"] == "system" && summary_prompt(&m["content"]));
    system || messages.last().is_some_and(|m| m["role"] == "user" && m["content"].as_str().is_some_and(|c| c.starts_with(mark)))
}

fn reasoning_tokens(answer: &Value) -> u64 {
    answer["reasoning"].as_str().map_or(0, |r| 1 + r.len() as u64 / 4)
}

fn chat_whole(answer: &Value) -> Value {
    let mut message = json!({"role": "assistant", "content": answer["text"]});
    if let Some(r) = answer["reasoning"].as_str() {
        message["reasoning_content"] = json!(r);
    }
    let finish = match (answer["call"].is_object(), answer["blank"] == json!(true)) {
        (true, _) => "tool_calls",
        (false, true) => "length",
        (false, false) => "stop",
    };
    if let Some(c) = answer["call"].as_object() {
        message["tool_calls"] = json!([{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"].to_string()}}]);
    }
    let r = reasoning_tokens(answer);
    json!({"id": "chatcmpl-t", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": finish}],
           "usage": {"prompt_tokens": 100, "completion_tokens": 20 + r, "total_tokens": 120 + r, "completion_tokens_details": {"reasoning_tokens": r}}})
}

fn chat_sse(answer: &Value) -> String {
    let chunk = |delta: Value, finish: Value| format!("data: {}\n\n", json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}));
    let mut out = String::new();
    if let Some(r) = answer["reasoning"].as_str() {
        let half = r.char_indices().nth(r.chars().count() / 2).map_or(r.len(), |(i, _)| i);
        out += &chunk(json!({"role": "assistant", "content": null, "reasoning_content": &r[..half]}), Value::Null);
        out += &chunk(json!({"content": null, "reasoning_content": &r[half..]}), Value::Null);
    }
    if let Some(t) = answer["text"].as_str() {
        out += &chunk(json!({"content": t, "reasoning_content": null}), Value::Null);
    }
    if let Some(c) = answer["call"].as_object() {
        let args = c["arguments"].to_string();
        let (a, b) = args.split_at(args.len() / 2);
        out += &chunk(json!({"tool_calls": [{"index": 0, "id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": a}}]}), Value::Null);
        out += &chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": b}}]}), Value::Null);
    }
    let whole = chat_whole(answer);
    out += &chunk(json!({}), whole["choices"][0]["finish_reason"].clone());
    out += &format!("data: {}\n\ndata: [DONE]\n\n", json!({"choices": [], "usage": whole["usage"]}));
    out
}

fn anthropic_usage(answer: &Value) -> Value {
    let r = reasoning_tokens(answer);
    json!({"input_tokens": 100, "output_tokens": 20 + r, "output_tokens_details": {"thinking_tokens": r}})
}

fn without_cache_control(block: &Value) -> Value {
    let mut b = block.clone();
    if let Some(o) = b.as_object_mut() {
        o.remove("cache_control");
    }
    b
}

fn anthropic_whole(answer: &Value) -> Value {
    let stop = if answer["call"].is_object() { "tool_use" } else { "end_turn" };
    if let Some(content) = answer["content"].as_array() {
        return json!({"id": "msg_t", "type": "message", "role": "assistant", "model": "m", "content": content, "stop_reason": stop, "usage": anthropic_usage(answer)});
    }
    let mut content: Vec<Value> = answer["blocks"].as_array().cloned().unwrap_or_default();
    if let Some(t) = answer["text"].as_str() {
        content.push(json!({"type": "text", "text": t}));
    }
    if let Some(c) = answer["call"].as_object() {
        content.push(json!({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}));
    }
    json!({"id": "msg_t", "type": "message", "role": "assistant", "model": "m", "content": content, "stop_reason": stop, "usage": anthropic_usage(answer)})
}

fn anthropic_sse(answer: &Value) -> String {
    let event = |kind: &str, data: Value| format!("event: {kind}\ndata: {data}\n\n");
    let mut out = event("message_start", json!({"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant",
        "content": [], "model": "m", "usage": {"input_tokens": 100, "output_tokens": 1}}}));
    let whole = anthropic_whole(answer);
    for (i, block) in whole["content"].as_array().unwrap().iter().enumerate() {
        let delta = |d: Value| event("content_block_delta", json!({"type": "content_block_delta", "index": i, "delta": d}));
        let start = match block["type"].as_str().unwrap() {
            "thinking" => json!({"type": "thinking", "thinking": "", "signature": ""}),
            "text" => json!({"type": "text", "text": ""}),
            "tool_use" => json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
            _ => block.clone(),
        };
        out += &event("content_block_start", json!({"type": "content_block_start", "index": i, "content_block": start}));
        match block["type"].as_str().unwrap() {
            "thinking" => {
                let t = block["thinking"].as_str().unwrap();
                let half = t.char_indices().nth(t.chars().count() / 2).map_or(t.len(), |(i, _)| i);
                for piece in [&t[..half], &t[half..]].into_iter().filter(|p| !p.is_empty()) {
                    out += &delta(json!({"type": "thinking_delta", "thinking": piece}));
                }
                out += &delta(json!({"type": "signature_delta", "signature": block["signature"]}));
            }
            "text" => out += &delta(json!({"type": "text_delta", "text": block["text"]})),
            "tool_use" => {
                let args = block["input"].to_string();
                let (a, b) = args.split_at(args.len() / 2);
                out += &delta(json!({"type": "input_json_delta", "partial_json": a}));
                out += &delta(json!({"type": "input_json_delta", "partial_json": b}));
            }
            _ => {}
        }
        out += &event("content_block_stop", json!({"type": "content_block_stop", "index": i}));
    }
    out += &event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"]}, "usage": anthropic_usage(answer)}));
    out + &event("message_stop", json!({"type": "message_stop"}))
}

#[async_trait]
impl HttpTransport for ThinkingProvider {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        let key_header = if self.flavor.anthropic() { ("x-api-key", self.key.clone()) } else { ("authorization", format!("Bearer {}", self.key)) };
        assert!(request.headers.iter().any(|(k, v)| k.eq_ignore_ascii_case(key_header.0) && *v == key_header.1), "the key header");
        assert!(!request.body.contains(&self.key), "the API key leaked into the body");
        let body: Value = serde_json::from_str(&request.body).expect("a JSON body");
        let (reply, hang) = {
            let mut state = self.state.lock().unwrap();
            state.bodies.push((*request.body).clone());
            let index = state.bodies.len() - 1;
            if !is_summary(&body, self.flavor) {
                if let Some((status, error)) = state.troubles.pop_front() {
                    return Ok(HttpResponse::full(status, error.to_string()));
                }
            }
            match self.check(&body, &state.given) {
                Err((status, error)) => {
                    state.refusals.push(error.to_string());
                    return Ok(HttpResponse::full(status, error.to_string()));
                }
                Ok(()) => {
                    let answer = self.answer(&body, &mut state);
                    (self.render(&answer, request.stream), state.hang_at == Some(index))
                }
            }
        };
        if !hang {
            return Ok(HttpResponse::full(200, reply));
        }
        // The first reasoning piece, then silence until the host's request is cancelled.
        let piece = reply.find(if self.flavor.anthropic() { "thinking_delta" } else { "reasoning_content" }).expect("a streamed reasoning");
        let cut = reply[piece..].find("\n\n").map_or(reply.len(), |i| piece + i + 2);
        let first = reply[..cut].to_owned();
        let (tx, rx) = arkagent::llm::BodyStream::channel();
        tx.send(first.into_bytes());
        tokio::spawn(async move {
            cancel.cancelled().await;
            drop(tx);
        });
        Ok(HttpResponse { status: 200, headers: vec![("content-type".into(), "text/event-stream".into())], body: arkagent::HttpBody::Stream(rx) })
    }
}
