//! FFI-3 (issue 28 item 13): callbacks carry `void *userdata` — HTTP (the host completes a
//! request through its completion handle, from any thread, chunk by chunk), tool execution
//! and events — and the header states each callback's thread and each pointer's lifetime
//! and owner.

use std::ffi::{c_char, c_void, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread::ThreadId;

use arkagent_c::{self as ffi, ArkAgentHttp, ArkAgentHttpCompletion, ArkAgentHttpRequest, ArkAgentResult, ArkAgentRuntime, ArkAgentToolCompletion, ArkAgentTools};

use super::root;

/// What the three callbacks saw: which callback, the userdata it got, its thread.
struct Seen {
    calls: Mutex<Vec<(&'static str, usize, ThreadId)>>,
    requests: AtomicUsize,
    events: Mutex<Vec<String>>,
    tool_args: Mutex<Vec<String>>,
}

impl Seen {
    fn record(&self, what: &'static str, userdata: *mut c_void) {
        self.calls.lock().unwrap().push((what, userdata as usize, std::thread::current().id()));
    }
}

static HTTP_SEEN: Seen = Seen { calls: Mutex::new(Vec::new()), requests: AtomicUsize::new(0), events: Mutex::new(Vec::new()), tool_args: Mutex::new(Vec::new()) };

/// The userdata each callback is given: three distinct addresses.
struct Host(u8);
static HTTP_HOST: Host = Host(1);
static TOOL_HOST: Host = Host(2);
static EVENT_HOST: Host = Host(3);

fn addr(host: &'static Host) -> *mut c_void {
    std::ptr::from_ref(host).cast_mut().cast()
}

/// The SSE body of answer `n`: a streamed tool call, then a streamed text with multi-byte
/// characters (both cut anywhere by the chunking below).
fn sse(n: usize) -> String {
    let chunks: Vec<String> = if n == 0 {
        vec![
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"probe","arguments":"{\"city\":"}}]}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"北京\"}"}}]}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#.into(),
        ]
    } else {
        vec![
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"晴，"}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":{"content":"31 度"}}]}"#.into(),
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":20,"completion_tokens":4,"total_tokens":24}}"#.into(),
        ]
    };
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    body
}

unsafe extern "C" fn send(userdata: *mut c_void, request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
    HTTP_SEEN.record("http", userdata);
    // SAFETY: the library's request, valid during this call.
    assert!(unsafe { (*request).stream }, "the config asks for a stream");
    let n = HTTP_SEEN.requests.fetch_add(1, Ordering::SeqCst);
    let completion = completion as usize;
    // Completed later, from another thread, seven bytes at a time.
    std::thread::spawn(move || {
        let completion = completion as *mut ArkAgentHttpCompletion;
        let body = sse(n);
        // SAFETY: a live completion handle; the chunks are valid for their lengths.
        unsafe {
            assert_eq!(ffi::arkagent_http_stream_begin(completion, 200, std::ptr::null()), ArkAgentResult::Ok);
            for chunk in body.as_bytes().chunks(7) {
                assert_eq!(ffi::arkagent_http_stream_chunk(completion, chunk.as_ptr(), chunk.len()), ArkAgentResult::Ok);
            }
            assert_eq!(ffi::arkagent_http_stream_end(completion, std::ptr::null()), ArkAgentResult::Ok);
        }
    });
}

unsafe extern "C" fn tool(userdata: *mut c_void, call_json: *const c_char, completion: *mut ArkAgentToolCompletion) {
    HTTP_SEEN.record("tool", userdata);
    // SAFETY: valid during this call.
    let call = unsafe { CStr::from_ptr(call_json) }.to_str().unwrap().to_owned();
    HTTP_SEEN.tool_args.lock().unwrap().push(call);
    let completion = completion as usize;
    std::thread::spawn(move || {
        let content = CString::new("晴 31 C").unwrap();
        // SAFETY: a live completion handle and a NUL-terminated string.
        let r = unsafe { ffi::arkagent_tool_complete(completion as *mut ArkAgentToolCompletion, content.as_ptr(), 0) };
        assert_eq!(r, ArkAgentResult::Ok);
    });
}

unsafe extern "C" fn event(userdata: *mut c_void, event_json: *const c_char) {
    HTTP_SEEN.record("event", userdata);
    // SAFETY: valid during this call.
    let text = unsafe { CStr::from_ptr(event_json) }.to_str().unwrap().to_owned();
    HTTP_SEEN.events.lock().unwrap().push(text);
}

#[test]
fn ffi_3_each_callback_gets_its_userdata_and_http_completes_from_another_thread_chunk_by_chunk() {
    let config = CString::new(r#"{"model":{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m","stream":true}}"#).unwrap();
    let definition = CString::new(r#"{"name":"probe","description":"weather","parameters":{"type":"object"}}"#).unwrap();
    let mut tools: *mut ArkAgentTools = std::ptr::null_mut();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    let http = ArkAgentHttp { send: Some(send), cancel: None, userdata: addr(&HTTP_HOST) };
    let runner = std::thread::current().id();
    // SAFETY: valid strings and out pointers; the userdata are statics.
    let outcome = unsafe {
        assert_eq!(ffi::arkagent_tools_new(&mut tools), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_tools_register(tools, definition.as_ptr(), Some(tool), addr(&TOOL_HOST)), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_runtime_new(config.as_ptr(), tools, std::ptr::null(), &http, &mut rt), ArkAgentResult::Ok);
        ffi::arkagent_tools_free(tools);
        let mut id = 0u64;
        assert_eq!(ffi::arkagent_runtime_subscribe(rt, Some(event), addr(&EVENT_HOST), &mut id), ArkAgentResult::Ok);
        let mut out: *mut c_char = std::ptr::null_mut();
        assert_eq!(ffi::arkagent_runtime_run(rt, c"Weather in Beijing?".as_ptr(), &mut out), ArkAgentResult::Ok);
        let outcome = CStr::from_ptr(out).to_str().unwrap().to_owned();
        ffi::arkagent_string_free(out);
        ffi::arkagent_runtime_free(rt);
        outcome
    };
    let outcome: serde_json::Value = serde_json::from_str(&outcome).unwrap();
    assert_eq!(outcome["final_text"], "晴，31 度", "the chunked stream reassembled: {outcome}");
    assert_eq!(HTTP_SEEN.requests.load(Ordering::SeqCst), 2);
    let args = HTTP_SEEN.tool_args.lock().unwrap().clone();
    assert_eq!(args.len(), 1);
    let call: serde_json::Value = serde_json::from_str(&args[0]).unwrap();
    assert_eq!((call["name"].as_str(), &call["arguments"]), (Some("probe"), &serde_json::json!({"city": "北京"})));

    // Each callback got its own userdata, on the thread running arkagent_runtime_run.
    let calls = HTTP_SEEN.calls.lock().unwrap().clone();
    for (what, host) in [("http", &HTTP_HOST), ("tool", &TOOL_HOST), ("event", &EVENT_HOST)] {
        let mine: Vec<_> = calls.iter().filter(|(w, _, _)| *w == what).collect();
        assert!(!mine.is_empty(), "no {what} callback");
        assert!(mine.iter().all(|(_, u, _)| *u == addr(host) as usize), "{what} got another userdata (Host {})", host.0);
        assert!(mine.iter().all(|(_, _, t)| *t == runner), "{what} ran on another thread than the blocking call's");
    }
    let events = HTTP_SEEN.events.lock().unwrap().clone();
    let types: Vec<String> = events.iter().map(|e| serde_json::from_str::<serde_json::Value>(e).unwrap()["type"].as_str().unwrap_or_default().to_owned()).collect();
    assert_eq!(types.first().map(String::as_str), Some("run_started"));
    assert_eq!(types.last().map(String::as_str), Some("run_finished"));
    assert!(types.iter().any(|t| t == "tool_call_delta") && types.iter().any(|t| t == "text_delta"), "{types:?}");
}

/// The callback typedefs of include/arkagent.h: name, parameters, the comment above.
fn callback_typedefs(header: &str) -> Vec<(String, Vec<String>, String)> {
    let lines: Vec<&str> = header.lines().collect();
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("typedef ").filter(|l| l.contains("(*")) else { continue };
        let name = rest.split("(*").nth(1).and_then(|r| r.split(')').next()).unwrap_or_default().to_string();
        let params = rest.rsplit_once('(').map(|(_, p)| p.trim_end_matches(");")).unwrap_or_default();
        let params = params.split(", ").map(str::to_string).collect();
        let comment: Vec<&str> = lines[..n].iter().rev().take_while(|l| l.starts_with("//")).copied().collect();
        let comment = comment.into_iter().rev().map(|l| l.trim_start_matches("//").trim()).collect::<Vec<_>>().join(" ");
        out.push((name, params, comment));
    }
    out
}

/// Words that state a borrowed pointer's lifetime or an owned one's owner.
const LIFETIME: &[&str] = &["valid only during", "valid until", "stays valid", "Finish `", "finish it", "Owned by", "owned by"];

#[test]
fn ffi_3_the_header_states_each_callbacks_thread_and_each_pointers_lifetime_and_owner() {
    let header = std::fs::read_to_string(root().join("include/arkagent.h")).unwrap();
    let typedefs = callback_typedefs(&header);
    let names: Vec<&str> = typedefs.iter().map(|(n, _, _)| n.as_str()).collect();
    assert!(names.len() >= 7 && names.contains(&"ArkAgentHttpSendCallback") && names.contains(&"ArkAgentEventCallback"), "{names:?}");
    let mut problems = Vec::new();
    for (name, params, comment) in &typedefs {
        if !comment.contains("thread") {
            problems.push(format!("{name}: says not which thread calls it"));
        }
        assert!(params.first().is_some_and(|p| p == "void *userdata"), "{name} does not carry userdata first: {params:?}");
        for param in params.iter().skip(1).filter(|p| p.contains('*')) {
            let pname = param.rsplit(['*', ' ']).next().unwrap_or_default();
            let named = comment.contains(&format!("`{pname}`"));
            let lifetime = LIFETIME.iter().any(|w| comment.contains(w));
            if !(named && lifetime) {
                problems.push(format!("{name}: `{pname}` has no stated lifetime or owner"));
            }
        }
        // The userdata's lifetime: stated where the callback is handed over.
        let typedef = format!("(*{name})");
        let handed: Vec<&str> = header.split("\n\n").filter(|b| b.contains(&format!("{name} ")) && !b.contains(&typedef)).collect();
        let stated = handed.iter().any(|b| b.contains("userdata") && (b.contains("until") || b.contains("passed to")));
        if !stated {
            problems.push(format!("{name}: where it is handed over, the userdata's lifetime is not stated"));
        }
    }
    assert!(problems.is_empty(), "include/arkagent.h (from bindings/c/src doc comments; scripts/gen-header.sh):\n{}", problems.join("\n"));
}
