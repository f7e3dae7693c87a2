//! How the fuzzed host answers what waits for it: the model's HTTP requests (a text, tool
//! calls, garbage, a 503, a transport failure, a context overflow, a streamed body cut
//! anywhere, a stream broken midway), held tool calls and compression attempts — each
//! also a second time, which must be refused.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::json;

use crate::*;

use super::oracles::never_broken;

use ArkAgentResult as R;

static CALL_IDS: AtomicU64 = AtomicU64::new(1);

/// The tools a model's answer may call (`nope` exists nowhere).
const TOOLS: [&str; 5] = ["echo", "hold", "ask", "delegate_task", "nope"];

/// What one answer says: `None` a text; else the names of the tools it calls.
fn calls_of(pick: u8) -> Option<Vec<&'static str>> {
    match pick % 8 {
        0..=4 => Some(vec![TOOLS[usize::from(pick % 8)]]),
        5 => Some(vec!["echo", "hold"]),
        6 => Some(vec!["ask", "echo"]),
        _ => None,
    }
}

fn arguments(name: &str) -> String {
    if name == "delegate_task" {
        json!({"assignee": "helper", "task_description": "look it up"}).to_string()
    } else {
        "{}".into()
    }
}

const USAGE: &str = r#"{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}"#;

/// A whole Chat Completions answer.
pub(super) fn whole_body(pick: u8) -> String {
    let (message, finish) = match calls_of(pick) {
        None => (json!({"role": "assistant", "content": "ok", "reasoning_content": "thinking"}), "stop"),
        Some(names) => {
            let calls: Vec<_> = names
                .iter()
                .map(|n| json!({"id": format!("call_{}", CALL_IDS.fetch_add(1, Ordering::Relaxed)), "type": "function", "function": {"name": n, "arguments": arguments(n)}}))
                .collect();
            (json!({"role": "assistant", "content": null, "reasoning_content": "a plan", "tool_calls": calls}), "tool_calls")
        }
    };
    let usage: serde_json::Value = serde_json::from_str(USAGE).unwrap_or_default();
    json!({"id": "c", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}).to_string()
}

fn chunk(delta: serde_json::Value, finish: Option<&str>) -> String {
    format!("data: {}\n\n", json!({"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}))
}

/// The same answer as an SSE stream (reasoning first, as thinking models send it).
pub(super) fn sse_body(pick: u8) -> String {
    let mut body = chunk(json!({"role": "assistant", "reasoning_content": "thin"}), None) + &chunk(json!({"reasoning_content": "king"}), None);
    match calls_of(pick) {
        None => body += &(chunk(json!({"content": "o"}), None) + &chunk(json!({"content": "k"}), Some("stop"))),
        Some(names) => {
            for (i, n) in names.iter().enumerate() {
                let id = format!("call_{}", CALL_IDS.fetch_add(1, Ordering::Relaxed));
                body += &chunk(json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": n, "arguments": ""}}]}), None);
                body += &chunk(json!({"tool_calls": [{"index": i, "function": {"arguments": arguments(n)}}]}), None);
            }
            body += &chunk(json!({}), Some("tool_calls"));
        }
    }
    body + &format!("data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[],\"usage\":{USAGE}}}\n\ndata: [DONE]\n\n")
}

const GARBAGE: &[u8] = br#"{"choices":[{"index":0,"message":"#;
const OVERFLOW: &[u8] = br#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;

/// One answer to an HTTP request, decided before it is given (it may be given on another thread).
#[derive(Clone, Copy)]
pub(super) struct HttpAnswer {
    pub how: u8,
    pub pick: u8,
    pub cut: u8,
}

/// An answer's code: documented for a finishing call (after a cancel it is ignored: `OK`).
fn answered(code: R, what: &str) {
    never_broken(code, what);
    assert!(matches!(code, R::Ok | R::Cancelled | R::AlreadyCompleted | R::InvalidHandle), "{what}: {code:?}");
}

impl HttpAnswer {
    /// Answers `completion` (a request that asked for a stream when `stream`).
    pub fn give(self, completion: usize, stream: bool) {
        let c = completion as *mut ArkAgentHttpCompletion;
        // SAFETY: a completion the library handed to `send`; finished at most once here (a
        // second finish below must be refused, not used).
        let code = unsafe {
            match self.how % 8 {
                0 | 1 => {
                    let body = whole_body(if self.how.is_multiple_of(8) { 7 } else { self.pick });
                    arkagent_http_complete(c, 200, std::ptr::null(), body.as_ptr(), body.len())
                }
                2 => arkagent_http_complete(c, 200, std::ptr::null(), GARBAGE.as_ptr(), GARBAGE.len()),
                3 => arkagent_http_complete(c, 503, c"[{\"name\":\"retry-after\",\"value\":\"0\"}]".as_ptr(), b"{}".as_ptr(), 2),
                4 => arkagent_http_fail(c, i32::from(self.pick % 2), c"connection reset".as_ptr()),
                5 => arkagent_http_complete(c, 400, std::ptr::null(), OVERFLOW.as_ptr(), OVERFLOW.len()),
                _ => self.stream(c, stream),
            }
        };
        answered(code, "an http answer");
        if self.how >= 128 {
            // SAFETY: the same completion again: finished already, it must be refused.
            let again = unsafe { arkagent_http_complete(c, 200, std::ptr::null(), GARBAGE.as_ptr(), GARBAGE.len()) };
            assert!(matches!(again, R::AlreadyCompleted | R::InvalidHandle), "a second answer: {again:?}");
        }
    }

    /// A streamed body in chunks cut where `cut` says (SSE when a stream was asked for, the
    /// whole JSON otherwise); `how % 8 == 7` breaks it after its first chunk.
    ///
    /// # Safety
    /// `c` a completion `send` received.
    unsafe fn stream(self, c: *mut ArkAgentHttpCompletion, stream: bool) -> R {
        let body = if stream { sse_body(self.pick) } else { whole_body(self.pick) };
        let bytes = body.as_bytes();
        let cut = (usize::from(self.cut) * bytes.len() / 256).min(bytes.len());
        // SAFETY: the caller's completion; NUL-terminated headers.
        let begun = unsafe { arkagent_http_stream_begin(c, 200, c"[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]".as_ptr()) };
        if begun != R::Ok {
            return begun;
        }
        let mut pieces = vec![&bytes[..cut]];
        if self.how % 8 == 6 {
            pieces.extend(bytes[cut..].chunks(1 + usize::from(self.pick)));
        }
        for piece in pieces {
            // SAFETY: a begun stream, `piece` readable.
            let code = unsafe { arkagent_http_stream_chunk(c, piece.as_ptr(), piece.len()) };
            assert!(matches!(code, R::Ok | R::Cancelled | R::AlreadyCompleted | R::InvalidHandle), "a chunk: {code:?}");
            if code != R::Ok {
                break;
            }
        }
        let error = if self.how % 8 == 7 { c"connection reset mid-stream".as_ptr() } else { std::ptr::null() };
        // SAFETY: a begun stream; NULL or a NUL-terminated message.
        unsafe { arkagent_http_stream_end(c, error) }
    }
}

/// A text and a tiny PNG: a run's input with a photo, or a tool's answer with one.
pub(super) const PARTS: &std::ffi::CStr = c"[{\"type\":\"text\",\"text\":\"the screen\"},{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==\"}]";

/// Answers a held call of the tool `hold` as `how` says.
pub(super) fn answer_tool(completion: usize, how: u8) {
    let c = completion as *mut ArkAgentToolCompletion;
    // SAFETY: a completion handed to the tool `hold`; finished at most once here.
    let code = unsafe {
        match how % 4 {
            0 => arkagent_tool_complete(c, c"held, then done".as_ptr(), 0),
            1 => arkagent_tool_fail(c, c"busy".as_ptr(), c"try later".as_ptr()),
            2 => arkagent_tool_complete_parts(c, PARTS.as_ptr(), 0),
            _ => {
                let registered = arkagent_tool_on_abort(c, Some(super::host::on_abort), std::ptr::null_mut());
                assert!(matches!(registered, R::Ok | R::AlreadyCompleted | R::InvalidHandle), "on_abort: {registered:?}");
                arkagent_tool_complete(c, c"{\"late\":true}".as_ptr(), 1)
            }
        }
    };
    answered(code, "a tool answer");
    if how >= 128 {
        // SAFETY: the same completion again: it must be refused.
        let again = unsafe { arkagent_tool_complete(c, c"again".as_ptr(), 0) };
        assert!(matches!(again, R::AlreadyCompleted | R::InvalidHandle), "a second tool answer: {again:?}");
    }
}

/// Answers a compression attempt as `how` says (`split`: the state's safe split index).
pub(super) fn answer_compression(completion: usize, split: i64, how: u8) {
    let c = completion as *mut ArkAgentCompressCompletion;
    let answer = match how % 5 {
        0 => json!({"outcome": "skipped"}).to_string(),
        2 if split > 0 => json!({"outcome": "compressed", "split_index": split, "summary": "what was said so far", "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}}).to_string(),
        2 | 3 => json!({"outcome": "compressed", "split_index": 0, "summary": "out of range"}).to_string(),
        _ => "{\"outcome\":".into(),
    };
    // The answers above are JSON texts without NUL bytes.
    let answer = std::ffi::CString::new(answer).unwrap_or_default();
    // SAFETY: a completion handed to the compressor; finished at most once here.
    let code = unsafe { if how % 5 == 1 { arkagent_compress_fail(c, c"no summary today".as_ptr()) } else { arkagent_compress_complete(c, answer.as_ptr()) } };
    never_broken(code, "a compression answer");
    assert!(matches!(code, R::Ok | R::AlreadyCompleted | R::InvalidHandle), "a compression answer: {code:?}");
    if how >= 128 {
        // SAFETY: the same completion again: it must be refused.
        let again = unsafe { arkagent_compress_fail(c, std::ptr::null()) };
        assert!(matches!(again, R::AlreadyCompleted | R::InvalidHandle), "a second compression answer: {again:?}");
    }
}
