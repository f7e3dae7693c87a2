//! The C ABI's integration tests. FFI-4 / FFI-5 / REL-3: compiles the C programs in
//! tests/c/ with the system C compiler against include/arkagent.h and the libarkagent_c.so
//! cargo built for this test run, then runs them (tests/c/programs.rs); drives the exports
//! from Rust; and checks that the header's text keeps its promises.
#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

#[path = "../../../../tests/c/programs.rs"]
mod programs;

mod ffi_3;
mod fuzz_replay;
mod header_promises;
mod header_promises_2;
mod readme_quickstart;

use std::collections::BTreeSet;
use std::ffi::{c_void, CStr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use programs::{compile, compile_and_run, deps_dir, run_program};

use arkagent_c::{self as ffi, ArkAgentHttp, ArkAgentHttpCompletion, ArkAgentHttpRequest, ArkAgentResult, ArkAgentRuntime};

fn root() -> &'static Path {
    programs::repo_root()
}

#[test]
fn ffi_4_c_program_runs_the_acceptance_scenario() {
    compile_and_run("scenario");
}

/// CORE-2/4/6, LLM-3/4, CMP-1/5, SUB-6 through the C ABI: tests/c/correctness.c.
#[test]
fn ffi_4_c_correctness_program_passes() {
    let stdout = compile_and_run("correctness");
    let passed: usize = stdout.split("correctness: ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(passed > 300, "{stdout}");
}

/// PAR-1 through the C ABI: tests/c/parity.c (issue 17 items 10–13).
#[test]
fn par_1_c_parity_program_passes() {
    compile_and_run("parity");
}

/// The exported function names the header declares.
fn header_exports() -> BTreeSet<String> {
    let header = std::fs::read_to_string(root().join("include/arkagent.h")).unwrap();
    header
        .lines()
        .filter(|l| !l.starts_with("//") && !l.starts_with(' ') && !l.starts_with("typedef"))
        .filter_map(|l| l.find("arkagent_").map(|at| &l[at..]))
        .filter_map(|rest| rest.split_once('(').map(|(name, _)| name.to_owned()))
        .collect()
}

#[test]
fn rel_3_c_bad_input_program_walks_every_export_and_never_crashes() {
    let exports = header_exports();
    assert!(exports.len() >= 39, "header parse found only {exports:?}");
    let program = std::fs::read_to_string(root().join("tests/c/bad_input.c")).unwrap();
    let missing: Vec<_> = exports.iter().filter(|e| !program.contains(&format!("{e}("))).collect();
    assert!(missing.is_empty(), "tests/c/bad_input.c does not exercise {missing:?}");
    let stdout = compile_and_run("bad_input");
    // Hundreds of checks; a run that silently skipped sections would show far fewer.
    let passed: usize = stdout.split("bad input: ").nth(1).and_then(|s| s.split(' ').next()).unwrap().parse().unwrap();
    assert!(passed > 400, "{stdout}");
}

/// Every `ARK_AGENT_*` / `ARKAGENT_*` name in `text`, except the include guard.
fn constant_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for prefix in ["ARK_AGENT_", "ARKAGENT_"] {
        for (at, _) in text.match_indices(prefix) {
            if at > 0 && text.as_bytes()[at - 1].is_ascii_alphanumeric() {
                continue;
            }
            let name: String =
                text[at..].chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect();
            names.insert(name);
        }
    }
    names.remove("ARKAGENT_H");
    names
}

#[test]
fn ffi_5_every_constant_the_header_and_readme_name_is_defined() {
    let header = std::fs::read_to_string(root().join("include/arkagent.h")).unwrap();
    let defined: BTreeSet<String> = header
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//"))
        .filter_map(|l| l.split_once(" = ").map(|(name, _)| name.to_owned()))
        .filter(|n| n.starts_with("ARK_AGENT_"))
        .chain(header.lines().filter_map(|l| l.strip_prefix("#define ")).filter_map(|l| l.split_whitespace().next().map(str::to_owned)))
        .collect();
    assert!(defined.contains("ARK_AGENT_RESULT_INVALID_ARGUMENT"), "{defined:?}");
    let named = constant_names(&header);
    let undefined: Vec<_> = named.difference(&defined).collect();
    assert!(undefined.is_empty(), "include/arkagent.h names constants it does not define: {undefined:?}");
    // The README's C quickstart uses the same spelling (its ARKAGENT_* env vars aside).
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let readme_named: Vec<_> = constant_names(&readme)
        .into_iter()
        .filter(|n| n.starts_with("ARK_AGENT_") || n.starts_with("ARKAGENT_RESULT") || n.starts_with("ARKAGENT_TRANSPORT") || n.starts_with("ARKAGENT_MEMORY"))
        .filter(|n| !defined.contains(n))
        .collect();
    assert!(readme_named.is_empty(), "README.md names constants the header does not define: {readme_named:?}");
}

// ------------------------------------------------ the config JSON's retry and timeout keys

/// What the scripted host does with each request.
struct Host {
    requests: AtomicUsize,
    /// Answer every request with this status (0: never answer, keep the completion).
    status: u16,
    held: Mutex<Vec<usize>>,
}

unsafe extern "C" fn host_http(userdata: *mut c_void, _request: *const ArkAgentHttpRequest, completion: *mut ArkAgentHttpCompletion) {
    // SAFETY: the tests pass a live Host that outlives the runtime.
    let host = unsafe { &*userdata.cast::<Host>() };
    host.requests.fetch_add(1, Ordering::SeqCst);
    if host.status == 0 {
        host.held.lock().unwrap().push(completion as usize);
        return;
    }
    let body = br#"{"error":{"message":"down"}}"#;
    // SAFETY: a live completion and a static body.
    let r = unsafe { ffi::arkagent_http_complete(completion, host.status, std::ptr::null(), body.as_ptr(), body.len()) };
    assert_eq!(r, ArkAgentResult::Ok);
}

/// Runs one turn with `model_extra` spliced into the model object; returns the result,
/// the number of requests, the time taken and the host.
fn run_with(model_extra: &str, status: u16) -> (ArkAgentResult, usize, Duration, Box<Host>) {
    let host = Box::new(Host { requests: AtomicUsize::new(0), status, held: Mutex::new(Vec::new()) });
    let config = format!(r#"{{"model":{{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"{model_extra}}}}}"#);
    let config = std::ffi::CString::new(config).unwrap();
    let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
    let ud = std::ptr::from_ref::<Host>(&host).cast_mut().cast::<c_void>();
    let http = ArkAgentHttp { send: Some(host_http), cancel: None, userdata: ud };
    // SAFETY: valid strings and out pointers; `host` outlives the runtime.
    unsafe {
        assert_eq!(ffi::arkagent_runtime_new(config.as_ptr(), std::ptr::null(), std::ptr::null(), &http, &mut rt), ArkAgentResult::Ok);
        let start = Instant::now();
        let result = ffi::arkagent_runtime_run(rt, c"hi".as_ptr(), std::ptr::null_mut());
        let took = start.elapsed();
        ffi::arkagent_runtime_free(rt);
        let n = host.requests.load(Ordering::SeqCst);
        (result, n, took, host)
    }
}

#[test]
fn ffi_5_c_config_retry_defaults_to_three_attempts() {
    let (result, requests, _, _) = run_with("", 503);
    assert_eq!(result, ArkAgentResult::LlmServer);
    assert_eq!(requests, 3, "the header states 3 attempts in total by default");
}

#[test]
fn ffi_5_c_config_retry_keys_are_honoured() {
    let (result, requests, took, _) = run_with(r#","retry":{"max_attempts":5,"initial_backoff_ms":1,"max_backoff_ms":2}"#, 500);
    assert_eq!(result, ArkAgentResult::LlmServer);
    assert_eq!(requests, 5);
    assert!(took < Duration::from_secs(2), "backoff capped at 2 ms, took {took:?}");
    let (_, requests, _, _) = run_with(r#","retry":{"max_attempts":1}"#, 500);
    assert_eq!(requests, 1);
}

#[test]
fn ffi_5_c_config_request_timeout_ends_an_unanswered_call() {
    let (result, requests, took, host) = run_with(r#","retry":{"max_attempts":1},"request_timeout_ms":50"#, 0);
    assert_eq!(result, ArkAgentResult::LlmTimeout);
    assert_eq!(requests, 1);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // Completing the timed-out request afterwards is allowed and ignored; a second time
    // it is already completed.
    let completion = host.held.lock().unwrap()[0] as *mut ArkAgentHttpCompletion;
    // SAFETY: a handle number and no other pointers.
    unsafe {
        assert_eq!(ffi::arkagent_http_fail(completion, 1, std::ptr::null()), ArkAgentResult::Ok);
        assert_eq!(ffi::arkagent_http_fail(completion, 1, std::ptr::null()), ArkAgentResult::AlreadyCompleted);
    }
    // SAFETY: static storage.
    assert_eq!(unsafe { CStr::from_ptr(ffi::arkagent_result_name(ArkAgentResult::LlmTimeout as i32)) }.to_str().unwrap(), "llm_timeout");
}

#[test]
fn ffi_5_c_config_retries_only_retryable_failures_and_rejects_unknown_keys() {
    let (result, requests, _, _) = run_with(r#","retry":{"max_attempts":4,"initial_backoff_ms":1,"max_backoff_ms":1}"#, 400);
    assert_eq!(result, ArkAgentResult::LlmBadRequest);
    assert_eq!(requests, 1, "a 4xx is not retried");
    for bad in [r#","retry":{"max_attempt":2}"#, r#","request_timeout":5"#, r#","retry":{"max_attempts":-1}"#] {
        let config = format!(r#"{{"model":{{"base_url":"http://127.0.0.1:9/v1","api_key":"k","model":"m"{bad}}}}}"#);
        let config = std::ffi::CString::new(config).unwrap();
        let mut rt: *mut ArkAgentRuntime = std::ptr::null_mut();
        let http = ArkAgentHttp { send: Some(host_http), cancel: None, userdata: std::ptr::null_mut() };
        // SAFETY: valid strings and out pointer; the callback is never called.
        let r = unsafe { ffi::arkagent_runtime_new(config.as_ptr(), std::ptr::null(), std::ptr::null(), &http, &mut rt) };
        assert_eq!(r, ArkAgentResult::InvalidJson, "{bad}");
        assert!(rt.is_null());
    }
}

// ------------------------------------------------ PERF-8 / OHOS-7: tests/c/transport.c

/// tests/c/transport.c, compiled once for all the tests below.
fn transport() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile("transport"))
}

/// Runs one case of tests/c/transport.c (the C host checks its own part).
fn transport_case(case: &str) -> String {
    let stdout = run_program(transport(), &[case]);
    assert!(stdout.contains(&format!("transport {case}: ")), "{stdout}");
    stdout
}

const TRANSPORT_KEY: &str = "sk-c-TRANSPORT-27182818";

/// What the C host of the `body` case wrote for request `n`: its meta lines and the body
/// bytes exactly as it read them through `request->body` / `body_len`.
struct SeenRequest {
    meta: Vec<String>,
    body: Vec<u8>,
}

fn body_case_requests() -> Vec<SeenRequest> {
    let dir = std::env::temp_dir().join(format!("arkagent-perf8-{}-{:?}", std::process::id(), std::thread::current().id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    run_program(transport(), &["body", dir.to_str().unwrap()]);
    let seen = (0..2)
        .map(|n| SeenRequest {
            meta: std::fs::read_to_string(dir.join(format!("req-{n}.meta"))).unwrap().lines().map(str::to_owned).collect(),
            body: std::fs::read(dir.join(format!("req-{n}.body"))).unwrap(),
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    seen
}

#[test]
fn perf_8_c_host_reads_the_body_bytes_as_the_json_the_model_gets() {
    use serde_json::{json, Value};
    let seen = body_case_requests();
    for request in &seen {
        // The bytes the host read are exactly one JSON document (no escaping, no NUL, no
        // truncation) and the key is not among them (it was redacted from the input).
        assert!(!String::from_utf8_lossy(&request.body).contains(TRANSPORT_KEY), "the API key is in a body");
        let body: Value = serde_json::from_slice(&request.body).expect("the body bytes parse as JSON");
        assert_eq!(body["model"], "m");
        assert_eq!(body["tools"][0]["function"]["name"], "probe");
    }
    let first: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(
        first["messages"],
        json!([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Beijing? my key is <redacted>"}])
    );
    let second: Value = serde_json::from_slice(&seen[1].body).unwrap();
    let messages = second["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    let call = &messages[2]["tool_calls"][0];
    assert_eq!((call["id"].as_str(), call["function"]["name"].as_str()), (Some("call_1"), Some("probe")));
    assert_eq!(call["function"]["arguments"], "{\"city\":\"Beijing\"}");
    // Every tool call is answered by the tool message that follows it.
    assert_eq!(messages[3]["tool_call_id"], "call_1");
    assert_eq!(messages[3]["content"], "sunny, 31 C");
}

#[test]
fn perf_8_c_host_gets_method_url_and_headers_with_authorization_only_in_headers() {
    for request in body_case_requests() {
        assert_eq!(&request.meta[..3], ["method POST", "url http://127.0.0.1:9/v1/chat/completions", "stream 0"]);
        let headers: Vec<&str> = request.meta[3..].iter().map(|l| l.strip_prefix("header ").unwrap()).collect();
        let auth: Vec<&&str> = headers.iter().filter(|h| h.to_ascii_lowercase().starts_with("authorization: ")).collect();
        assert_eq!(auth, [&format!("Authorization: Bearer {TRANSPORT_KEY}").as_str()], "{headers:?}");
        assert_eq!(headers.iter().filter(|h| h.contains(TRANSPORT_KEY)).count(), 1, "the key in one header only: {headers:?}");
        assert!(headers.iter().any(|h| h.eq_ignore_ascii_case("content-type: application/json")), "{headers:?}");
    }
}

#[test]
fn perf_8_c_a_retry_lends_the_same_body_bytes() {
    transport_case("retry");
}

#[test]
fn ohos_7_c_cancel_before_a_stream_began_calls_cancel_and_a_late_begin_is_ignored() {
    transport_case("cancel_not_begun");
}

#[test]
fn ohos_7_c_cancel_during_a_stream_calls_cancel_once_before_another_chunk() {
    transport_case("cancel_stream");
}

#[test]
fn ohos_7_c_cancel_before_a_non_streamed_answer_calls_cancel() {
    transport_case("cancel_waiting");
}

#[test]
fn ohos_7_c_timeout_calls_cancel_and_a_late_completion_is_ignored() {
    transport_case("timeout");
}

#[test]
fn ohos_7_c_cancel_is_never_called_for_requests_the_host_finished() {
    transport_case("normal");
}

#[test]
fn ohos_7_c_null_cancel_callback_is_allowed_and_polling_sees_the_cancel() {
    transport_case("null_cancel");
}

#[test]
fn ohos_7_c_a_stream_no_longer_needed_after_done_is_cancelled() {
    transport_case("done_early");
}

#[test]
fn ohos_7_c_compress_now_returns_after_the_cancel_its_timeout_caused() {
    transport_case("compress_timeout");
}

#[test]
fn ohos_7_c_run_decomposed_returns_after_the_cancel_its_timeout_caused() {
    transport_case("decomposed_timeout");
}

#[test]
fn ohos_7_c_a_blocking_call_does_not_wait_for_another_calls_cancel_callback() {
    transport_case("independent");
}

#[test]
fn ohos_7_c_cancel_may_run_while_send_is_still_running() {
    transport_case("cancel_in_send");
}

/// OHOS-7 (arkagent.h, the cancel callback: "a `send` that blocks until its response
/// arrives is not cut off by `request_timeout_ms` (what it finished is used)").
#[test]
fn ohos_7_c_a_send_that_blocks_past_the_timeout_is_not_cut_off() {
    transport_case("blocking_send");
}

#[test]
fn ohos_7_c_cancel_callbacks_finishing_each_others_requests_do_not_deadlock() {
    transport_case("cross_finish");
}

#[test]
fn ohos_7_c_freeing_the_runtime_cancels_its_open_request() {
    transport_case("free");
}

// ------------------------------------------------ the README's C code compiles

/// The fenced blocks of `lang` in README.md, in order.
fn readme_blocks(lang: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let fence = format!("```{lang}");
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match current.as_mut() {
            None if line.trim_end() == fence => current = Some(String::new()),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.push(current.take().unwrap()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
        }
    }
    blocks
}

/// `cc -fsyntax-only` on `source` against include/arkagent.h; panics with the compiler's
/// output when it does not compile.
fn syntax_check(name: &str, source: &str) {
    let dir = std::env::temp_dir().join(format!("arkagent-readme-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{name}.c"));
    std::fs::write(&file, source).unwrap();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I"])
        .arg(root().join("include"))
        .arg(&file)
        .output()
        .expect("a C compiler (cc) is installed");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(out.status.success(), "README.md's {name} does not compile against include/arkagent.h:\n{}\n{source}", String::from_utf8_lossy(&out.stderr));
}

/// FFI-4/FFI-3/STORE-6: the README's C quickstart (the `ArkAgentHttp` transport with its
/// request fields and cancel callback, the runtime, the store) and its durable-sessions
/// snippet compile against the header as they are printed. The quickstart's functions
/// go at file scope, its statements into a function; `body`/`body_len` stand for the
/// host's response.
#[test]
fn ffi_4_readme_c_snippets_compile_against_the_header() {
    let blocks = readme_blocks("c");
    assert_eq!(blocks.len(), 3, "the README's C blocks (quickstart, durable sessions, tool abort) changed: update this test");
    let quickstart = &blocks[0];
    let split = quickstart.find("ArkAgentHttp http =").expect("the quickstart builds an ArkAgentHttp");
    let (file_scope, statements) = quickstart.split_at(split);
    assert!(file_scope.contains("#include \"arkagent.h\""), "{file_scope}");
    let file_scope = file_scope.replacen(
        "#include \"arkagent.h\"\n",
        "#include \"arkagent.h\"\nstatic const char body[] = \"{}\";\nstatic const size_t body_len = 2;\n",
        1,
    );
    syntax_check("quickstart", &format!("{file_scope}\nvoid quickstart(void);\nvoid quickstart(void) {{\n{statements}}}\n"));
    let sessions = &blocks[1];
    syntax_check(
        "durable_sessions",
        &format!("#include \"arkagent.h\"\nvoid sessions(ArkAgentRuntime *rt, ArkAgentStore *store);\nvoid sessions(ArkAgentRuntime *rt, ArkAgentStore *store) {{\n{sessions}}}\n"),
    );
    // TOOL-4: the tool-abort snippet is a file on its own; its tool is registered.
    let abort = &blocks[2];
    assert!(abort.contains("arkagent_tool_on_abort(completion, on_abort, userdata)"), "{abort}");
    syntax_check(
        "tool_abort",
        &format!("{abort}\nArkAgentToolCallback registered(void);\nArkAgentToolCallback registered(void) {{ return search_flights; }}\n"),
    );
}

/// README: "Link with `-larkagent_c` (`cargo build --release -p arkagent-c` builds
/// `target/release/libarkagent_c.so` and `libarkagent_c.a`)". The package and library
/// names are the README's, the shared library is what every C program here links with
/// `-larkagent_c` (`compile`), and the static library links and runs a C program on its
/// own (no libarkagent_c.so needed at run time).
#[test]
fn ffi_1_readme_link_line_the_static_library_links_and_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let line = "Link with `-larkagent_c` (`cargo build --release -p arkagent-c` builds\n`target/release/libarkagent_c.so` and `libarkagent_c.a`).";
    assert!(readme.contains(line), "README's link line changed; update this test with it");
    let manifest = std::fs::read_to_string(root().join("bindings/c/Cargo.toml")).unwrap();
    assert!(manifest.contains("name = \"arkagent-c\""), "the package is `-p arkagent-c`");
    assert!(manifest.contains("name = \"arkagent_c\""), "the library is libarkagent_c");
    assert!(manifest.contains("\"cdylib\"") && manifest.contains("\"staticlib\""), "both a .so and a .a");

    let deps = deps_dir();
    let archive = deps.join("libarkagent_c.a");
    assert!(archive.exists(), "libarkagent_c.a not built in {}", deps.display());
    let exe = deps.join("arkagent-c-usage_count-static");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pthread"])
        .arg(root().join("tests/c/usage_count.c"))
        .arg("-I")
        .arg(root().join("include"))
        .arg(&archive)
        .args(["-lpthread", "-ldl", "-lm"])
        .arg("-o")
        .arg(&exe)
        .status()
        .expect("a C compiler (cc) is installed");
    assert!(status.success(), "tests/c/usage_count.c does not link against libarkagent_c.a");
    let ldd = Command::new("ldd").arg(&exe).output().map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    assert!(!ldd.contains("libarkagent_c"), "the static build still needs libarkagent_c.so:\n{ldd}");
    run_program(&exe, &[]);
}
