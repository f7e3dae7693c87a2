//! COST-4: the prefix-stability checks, in one place for every wire format and surface
//! (Rust, and the C programs' bodies read back here). A provider's prompt cache hits a
//! request only as far as it starts with bytes it has seen, so:
//!
//! - between compressions each request body starts with the previous request's bytes up
//!   to the end of its last message, and everything after the messages (tools, tool
//!   choice, sampling) is unchanged ([`assert_extends`]);
//! - after a compression the system prompt and the tools are still what they were
//!   ([`assert_fixed_parts_kept`]);
//! - a resumed session sends what the uninterrupted one would have ([`assert_same_request`]).
//!
//! - a summarizer request on the conversation's model is the last main request's bytes
//!   up to the end of its last message, then the compression instruction, with
//!   everything after the messages unchanged ([`assert_summarizer_reuses`], COST-3).
//!
//! A format is read through a [`WireView`] ([`view`] gives the running test's); a format
//! that moves a cache marker from request to request (Anthropic's `cache_control`)
//! removes it in [`WireView::normalise`] before the bytes are compared.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use arkagent::{CancellationToken, HttpRequest, HttpResponse, HttpTransport, TransportError};
use async_trait::async_trait;
use serde_json::Value;

use crate::wire_fake::{anthropic_to_openai, wire, Wire};

/// How prefix checks read one wire format's request bodies.
pub trait WireView {
    /// The body as the provider's cache compares it (e.g. without moving cache markers).
    fn normalise<'a>(&self, body: &'a str) -> Cow<'a, str>;
    /// Byte range of the conversation in a normalised body: from the first message to
    /// the end of the last one (the messages array's brackets excluded).
    fn messages_span(&self, body: &str) -> (usize, usize);
    /// Byte offset just past the system prompt in a normalised body (0 without one).
    fn system_end(&self, body: &str) -> usize;
    /// The text of the body's last message (its last block's), if it has one.
    fn last_text(&self, body: &str) -> Option<String>;
    /// The OpenAI-compatible view of the body (what the scripted models assert on).
    fn openai(&self, body: &str) -> Value;
}

/// The view of the running test's wire format.
pub fn view() -> &'static dyn WireView {
    match wire() {
        Wire::OpenAi => &ChatCompletions,
        Wire::Anthropic => &AnthropicMessages,
    }
}

/// OpenAI-compatible Chat Completions: `{"model":…,"messages":[system?, …],"tools":…}`.
pub struct ChatCompletions;

impl WireView for ChatCompletions {
    fn normalise<'a>(&self, body: &'a str) -> Cow<'a, str> {
        Cow::Borrowed(body)
    }

    fn messages_span(&self, body: &str) -> (usize, usize) {
        let open = body.find("\"messages\":[").expect("a messages array") + "\"messages\":[".len();
        (open, open + json_len(&body[open..], b']'))
    }

    fn system_end(&self, body: &str) -> usize {
        let (start, _) = self.messages_span(body);
        if !body[start..].starts_with("{\"role\":\"system\"") {
            return 0;
        }
        start + json_len(&body[start + 1..], b'}') + 2
    }

    fn last_text(&self, body: &str) -> Option<String> {
        let v: Value = serde_json::from_str(body).ok()?;
        v["messages"].as_array()?.last()?["content"].as_str().map(str::to_owned)
    }

    fn openai(&self, body: &str) -> Value {
        serde_json::from_str(body).expect("a JSON body")
    }
}

/// Anthropic Messages: `{"model":…,"tools":[…],…,"system":[blocks],"messages":[turns]}`.
/// The latest block carries the moving breakpoint, the last turn grows block by block.
pub struct AnthropicMessages;

/// The moving breakpoint, as the encoder writes it over a block's `}`.
const MOVING_MARK: &str = r#","cache_control":{"type":"ephemeral"}"#;

impl WireView for AnthropicMessages {
    fn normalise<'a>(&self, body: &'a str) -> Cow<'a, str> {
        // The fixed breakpoints (system prompt, last tool) come before the messages.
        let open = body.find("\"messages\":[").expect("a messages array");
        let (head, messages) = body.split_at(open);
        assert!(messages.matches(MOVING_MARK).count() <= 1, "one moving breakpoint at most");
        Cow::Owned(format!("{head}{}", messages.replacen(MOVING_MARK, "", 1)))
    }

    /// To the end of the last block: a turn of the same role appends blocks to the last
    /// turn, so its closing `]}` is not part of what the next request repeats.
    fn messages_span(&self, body: &str) -> (usize, usize) {
        let open = body.find("\"messages\":[").expect("a messages array") + "\"messages\":[".len();
        let close = open + json_len(&body[open..], b']');
        (open, if close > open { close - 2 } else { close })
    }

    fn system_end(&self, body: &str) -> usize {
        let Some(start) = body.find("\"system\":[").map(|s| s + "\"system\":[".len()) else { return 0 };
        start + json_len(&body[start + 1..], b'}') + 2
    }

    fn last_text(&self, body: &str) -> Option<String> {
        let v: Value = serde_json::from_str(body).ok()?;
        v["messages"].as_array()?.last()?["content"].as_array()?.last()?["text"].as_str().map(str::to_owned)
    }

    fn openai(&self, body: &str) -> Value {
        anthropic_to_openai(&serde_json::from_str(body).expect("a JSON body"))
    }
}

/// Length of the JSON text before the `close` byte that ends the enclosing value
/// (strings and nesting skipped).
fn json_len(text: &str, close: u8) -> usize {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in text.bytes().enumerate() {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') => in_string = false,
            (true, _) => {}
            (false, b'"') => in_string = true,
            (false, b'[' | b'{') => depth += 1,
            (false, c) if (c == b']' || c == b'}') && depth == 0 => {
                assert_eq!(c, close, "unbalanced JSON");
                return i;
            }
            (false, b']' | b'}') => depth -= 1,
            _ => {}
        }
    }
    panic!("unterminated JSON value");
}

/// Where two bodies first differ, with context, for a failure message.
fn first_difference(a: &str, b: &str) -> String {
    let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let from = at.saturating_sub(80);
    let show = |s: &str| s.get(from..(at + 80).min(s.len())).unwrap_or("<not on a char boundary>").to_owned();
    format!("first difference at byte {at}:\n  before: …{}…\n  after:  …{}…", show(a), show(b))
}

/// COST-4: `next` starts with `previous`'s bytes up to the end of its last message and
/// keeps everything after the messages unchanged.
pub fn assert_extends(view: &dyn WireView, previous: &str, next: &str) {
    let (p, n) = (view.normalise(previous), view.normalise(next));
    let (_, p_end) = view.messages_span(&p);
    let (_, n_end) = view.messages_span(&n);
    assert!(n.starts_with(&p[..p_end]), "the request does not extend the previous one; {}", first_difference(&p, &n));
    assert!(n_end > p_end, "the request adds no message");
    assert_eq!(&p[p_end..], &n[n_end..], "what follows the messages (tools, tool choice, sampling) changed");
}

/// COST-4: after a compression, the system prompt (and what precedes it) and everything
/// after the messages (the tools) are unchanged.
pub fn assert_fixed_parts_kept(view: &dyn WireView, before: &str, after: &str) {
    let (b, a) = (view.normalise(before), view.normalise(after));
    let (b_sys, a_sys) = (view.system_end(&b), view.system_end(&a));
    assert!(b_sys > 0, "the request has no system prompt to keep");
    assert_eq!(&b[..b_sys], &a[..a_sys], "the system prompt is no longer the request's first bytes");
    let (_, b_end) = view.messages_span(&b);
    let (_, a_end) = view.messages_span(&a);
    assert_eq!(&b[b_end..], &a[a_end..], "the tools (or what else follows the messages) changed");
}

/// COST-3: a summarizer request on the conversation's model is `previous` (the last main
/// request) up to the end of its last message, then what was appended since and the
/// instruction as the last message (its text starting with `mark`), with tools, tool
/// choice and everything after the messages unchanged.
pub fn assert_summarizer_reuses(view: &dyn WireView, previous: &str, summarizer: &str, mark: &str) {
    assert_extends(view, previous, summarizer);
    let last = view.last_text(summarizer).expect("the summarizer request ends with a text");
    assert!(last.starts_with(mark), "the summarizer request does not end with the instruction: {last}");
    let (p, n) = (view.openai(previous), view.openai(summarizer));
    for field in ["tools", "tool_choice", "stream", "temperature", "model"] {
        assert_eq!(p.get(field), n.get(field), "{field} changed for the summarizer call");
    }
}

/// COST-4: a resumed session's request is the uninterrupted one's, byte for byte.
pub fn assert_same_request(expected: &str, actual: &str) {
    assert!(expected == actual, "the request differs from the uninterrupted session's; {}", first_difference(expected, actual));
}

/// Checks a sequence of main requests: each extends the one before, except right after
/// a compression (`compressed_before[i]`: one was committed between request i-1 and i),
/// where the fixed parts are kept. Returns (extensions checked, compressions crossed).
pub fn check_sequence(view: &dyn WireView, bodies: &[String], compressed_before: &[bool]) -> (usize, usize) {
    let (mut extended, mut crossed) = (0, 0);
    for i in 1..bodies.len() {
        if compressed_before[i] {
            assert_fixed_parts_kept(view, &bodies[i - 1], &bodies[i]);
            crossed += 1;
        } else {
            assert_extends(view, &bodies[i - 1], &bodies[i]);
            extended += 1;
        }
    }
    (extended, crossed)
}

/// A transport that records every request body, byte for byte, and passes the request on.
pub struct Recording<T> {
    inner: Arc<T>,
    bodies: Mutex<Vec<String>>,
}

impl<T> Recording<T> {
    pub fn new(inner: Arc<T>) -> Self {
        Self { inner, bodies: Mutex::default() }
    }

    /// Every body sent so far, in order.
    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }
}

#[async_trait]
impl<T: HttpTransport + 'static> HttpTransport for Recording<T> {
    async fn send(&self, request: HttpRequest, cancel: CancellationToken) -> Result<HttpResponse, TransportError> {
        self.bodies.lock().unwrap().push((*request.body).clone());
        self.inner.send(request, cancel).await
    }
}

#[test]
fn cost_4_the_anthropic_view_reads_a_growing_turn_as_an_extension() {
    let view = AnthropicMessages;
    let head = r#"{"model":"m","max_tokens":9,"tools":[{"name":"t","input_schema":{},"cache_control":{"type":"ephemeral"}}],"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"messages":["#;
    let a = format!(r#"{head}{{"role":"user","content":[{{"type":"text","text":"a","cache_control":{{"type":"ephemeral"}}}}]}}]}}"#);
    let b = format!(r#"{head}{{"role":"user","content":[{{"type":"text","text":"a"}},{{"type":"text","text":"b","cache_control":{{"type":"ephemeral"}}}}]}}]}}"#);
    assert_extends(&view, &a, &b);
    assert_eq!(view.last_text(&b).as_deref(), Some("b"));
    assert_eq!(&view.normalise(&a)[..view.system_end(&view.normalise(&a))], &head[..head.len() - r#","messages":["#.len() - 1]);
    let changed_tools = b.replace(r#""name":"t""#, r#""name":"u""#);
    let dropped = format!(r#"{head}{{"role":"user","content":[{{"type":"text","text":"b","cache_control":{{"type":"ephemeral"}}}}]}}]}}"#);
    for bad in [&changed_tools, &dropped] {
        assert!(std::panic::catch_unwind(|| assert_extends(&view, &a, bad)).is_err(), "extends accepted {bad}");
    }
    assert!(std::panic::catch_unwind(|| assert_fixed_parts_kept(&view, &a, &changed_tools)).is_err());
    assert_fixed_parts_kept(&view, &a, &dropped);
}

#[test]
fn cost_4_the_checks_catch_a_broken_prefix() {
    let view = ChatCompletions;
    let a = r#"{"model":"m","messages":[{"role":"system","content":"s ]}"},{"role":"user","content":"a"}],"tools":[1]}"#;
    let b = r#"{"model":"m","messages":[{"role":"system","content":"s ]}"},{"role":"user","content":"a"},{"role":"user","content":"b"}],"tools":[1]}"#;
    assert_extends(&view, a, b);
    assert_eq!(view.system_end(a), r#"{"model":"m","messages":[{"role":"system","content":"s ]}"}"#.len());
    let changed_system = b.replace("s ]}", "t ]}");
    let changed_tools = b.replace("[1]", "[2]");
    let dropped = r#"{"model":"m","messages":[{"role":"system","content":"s ]}"},{"role":"user","content":"b"}],"tools":[1]}"#;
    for (bad, check) in [(&changed_system, "extends"), (&changed_tools, "extends"), (&dropped.to_owned(), "extends"), (&changed_system, "fixed"), (&changed_tools, "fixed")] {
        let result = std::panic::catch_unwind(|| match check {
            "extends" => assert_extends(&view, a, bad),
            _ => assert_fixed_parts_kept(&view, a, bad),
        });
        assert!(result.is_err(), "{check} accepted {bad}");
    }
    assert_fixed_parts_kept(&view, a, dropped);
}
