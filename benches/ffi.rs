//! PERF-8 (C part): what a C host pays to get at a request body, the old shape against
//! the new one (results: BENCHMARKS.md).
//!
//! - old: the library serialized the whole request as JSON with the body JSON-escaped
//!   inside it (`HttpRequest::to_host_json`, removed; re-created here as it was) and the
//!   host parsed that JSON to get the body back (serde_json standing in for the host's
//!   JSON parser).
//! - new: the library lends `ArkAgentHttpRequest` (NUL-terminated copies of method, URL
//!   and headers; the body as pointer + length into its own `Arc<String>`), built as
//!   `HostTransport::send` builds it, and the host reads the bytes in place; a second
//!   line adds one copy of the body for hosts whose client must own it.
//!
//! `cargo bench -p arkagent --bench ffi`; a quick pass: `-- --quick`.

use std::ffi::CString;
use std::hint::black_box;
use std::sync::Arc;

use arkagent_c::{ArkAgentHttpHeader, ArkAgentHttpRequest};
use arkagent::HttpRequest;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde::{Deserialize, Serialize};

/// A chat-completions body of about `size` bytes: many messages whose text has quotes,
/// newlines, backslashes and non-ASCII, as real histories do (all of it needs escaping
/// in the old shape).
fn body(size: usize) -> String {
    let mut messages = vec![serde_json::json!({"role": "system", "content": "You are a helpful assistant.\nAnswer briefly."})];
    let mut i = 0;
    loop {
        let text = format!(
            "Turn {i}: the tool said \"sunny, 25 °C\" for 北京 and \"rain\" for 深圳.\nPath: C:\\\\data\\\\{i}.json — {}",
            "lorem ipsum dolor sit amet ".repeat(4)
        );
        messages.push(serde_json::json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": text}));
        let body = serde_json::json!({"model": "deepseek-chat", "messages": messages, "stream": true}).to_string();
        if body.len() >= size {
            return body;
        }
        i += 1;
    }
}

fn request(size: usize) -> HttpRequest {
    HttpRequest {
        method: "POST".into(),
        url: "https://api.deepseek.com/v1/chat/completions".into(),
        headers: vec![
            ("Content-Type".into(), "application/json".into()),
            ("Authorization".into(), "Bearer sk-0123456789abcdef0123456789abcdef".into()),
        ],
        body: Arc::new(body(size)),
        stream: true,
    }
}

/// The old shape, exactly as `HttpRequest::to_host_json` produced it.
fn old_host_json(request: &HttpRequest) -> String {
    #[derive(Serialize)]
    struct Header<'a> {
        name: &'a str,
        value: &'a str,
    }
    #[derive(Serialize)]
    struct Wire<'a> {
        method: &'a str,
        url: &'a str,
        headers: Vec<Header<'a>>,
        body: &'a str,
        stream: bool,
    }
    let wire = Wire {
        method: &request.method,
        url: &request.url,
        headers: request.headers.iter().map(|(name, value)| Header { name, value }).collect(),
        body: request.body.as_str(),
        stream: request.stream,
    };
    serde_json::to_string(&wire).unwrap_or_default()
}

/// What a host parsed out of the old JSON.
#[derive(Deserialize)]
struct HostView {
    #[allow(dead_code)]
    method: String,
    #[allow(dead_code)]
    url: String,
    #[allow(dead_code)]
    headers: Vec<HostHeader>,
    body: String,
    #[allow(dead_code)]
    stream: bool,
}

#[derive(Deserialize)]
struct HostHeader {
    #[allow(dead_code)]
    name: String,
    #[allow(dead_code)]
    value: String,
}

/// Old: the library's CString of the JSON, the host's parse; returns the body length.
fn old_shape(request: &HttpRequest) -> usize {
    let json = CString::new(old_host_json(request)).unwrap_or_default();
    let view: HostView = serde_json::from_slice(json.as_bytes()).unwrap_or_else(|_| HostView {
        method: String::new(),
        url: String::new(),
        headers: Vec::new(),
        body: String::new(),
        stream: false,
    });
    view.body.len()
}

/// New: the library's request struct; `host` reads the body through it.
fn new_shape(request: &HttpRequest, host: impl FnOnce(&ArkAgentHttpRequest) -> usize) -> usize {
    let c = |s: &str| CString::new(s).unwrap_or_default();
    let method = c(&request.method);
    let url = c(&request.url);
    let strings: Vec<(CString, CString)> = request.headers.iter().map(|(n, v)| (c(n), c(v))).collect();
    let headers: Vec<ArkAgentHttpHeader> =
        strings.iter().map(|(name, value)| ArkAgentHttpHeader { name: name.as_ptr(), value: value.as_ptr() }).collect();
    let lent = ArkAgentHttpRequest {
        method: method.as_ptr(),
        url: url.as_ptr(),
        headers: headers.as_ptr(),
        header_count: headers.len(),
        body: request.body.as_ptr(),
        body_len: request.body.len(),
        stream: request.stream,
    };
    host(black_box(&lent))
}

/// The host hands the bytes to its client in place.
fn read_in_place(r: &ArkAgentHttpRequest) -> usize {
    // SAFETY: the library lends `body_len` bytes at `body` for the call.
    let body = unsafe { std::slice::from_raw_parts(r.body, r.body_len) };
    black_box(body).len()
}

/// The host copies the body once (its client must own the bytes).
fn copy_once(r: &ArkAgentHttpRequest) -> usize {
    // SAFETY: as above.
    let body = unsafe { std::slice::from_raw_parts(r.body, r.body_len) };
    black_box(body.to_vec()).len()
}

fn perf_8_c_body(c: &mut Criterion) {
    let mut group = c.benchmark_group("perf_8_c_body");
    for (label, size) in [("10KB", 10 << 10), ("100KB", 100 << 10), ("1MB", 1 << 20)] {
        let request = request(size);
        assert_eq!(old_shape(&request), request.body.len(), "the old shape round-trips the body");
        group.throughput(Throughput::Bytes(request.body.len() as u64));
        group.bench_with_input(BenchmarkId::new("old_json_in_json_parse", label), &request, |b, r| b.iter(|| old_shape(black_box(r))));
        group.bench_with_input(BenchmarkId::new("new_pointer_len", label), &request, |b, r| b.iter(|| new_shape(black_box(r), read_in_place)));
        group.bench_with_input(BenchmarkId::new("new_pointer_len_plus_copy", label), &request, |b, r| b.iter(|| new_shape(black_box(r), copy_once)));
    }
    group.finish();
}

criterion_group!(benches, perf_8_c_body);
criterion_main!(benches);
