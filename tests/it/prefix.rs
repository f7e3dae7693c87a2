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
//! A format is read through a [`WireView`]; a format that moves a cache marker from
//! request to request (Anthropic's `cache_control`) removes it in
//! [`WireView::normalise`] before the bytes are compared.

use std::borrow::Cow;
use std::sync::{Arc, Mutex};

use arkagent::{CancellationToken, HttpRequest, HttpResponse, HttpTransport, TransportError};
use async_trait::async_trait;

/// How prefix checks read one wire format's request bodies.
pub trait WireView {
    /// The body as the provider's cache compares it (e.g. without moving cache markers).
    fn normalise<'a>(&self, body: &'a str) -> Cow<'a, str>;
    /// Byte range of the conversation in a normalised body: from the first message to
    /// the end of the last one (the messages array's brackets excluded).
    fn messages_span(&self, body: &str) -> (usize, usize);
    /// Byte offset just past the system prompt in a normalised body (0 without one).
    fn system_end(&self, body: &str) -> usize;
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
