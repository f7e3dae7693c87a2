//! PERF-2 / issue 21 (results: BENCHMARKS.md, "Memory of a long chat"): peak memory of a
//! session of N turns, each one tool call whose result is 400 characters of mixed Chinese
//! and English, against an instant in-process transport that keeps nothing of what it
//! receives but the body's length. Goal: peak ≤ 5 × the last request body + 5 MB.
//!
//! Each N runs in a fresh child process (this binary re-executed), so the process peak
//! (`VmHWM`) is that session's alone. Reported per N: the last body, the peak of live heap
//! bytes (a counting global allocator), the process peak RSS and its baseline before the
//! session, and — at the end of the session — the bytes held per component
//! (`AgentRuntime::memory_report`).
//!
//! Three runs per N: `bare` (one thread, nothing attached), `app` (as an app runs it: a
//! 2-worker executor, an observer serializing every event, a SQLite store committing each
//! turn) and `resume` (a fresh process opens that store, resumes the 2N-message session
//! and runs one more turn). After each: an export of the whole session, and what it
//! allocated at its peak.
//!
//! `cargo bench -p arkagent --bench memory` (all sizes) or
//! `cargo bench -p arkagent --bench memory -- 500 2000` (some).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arkagent::{
    AgentEvent, AgentRuntime, SqliteStore, AgentRuntimeConfig, CancellationToken, HttpRequest, HttpResponse, HttpTransport, ModelConfig, RunStatus,
    ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolResult, TransportError,
};
use async_trait::async_trait;
use serde_json::json;

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let now = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed) + (new_size - layout.size());
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Asks for one `lookup` call per request until the `calls`-th, which it answers; keeps
/// only the last body's length.
struct Instant {
    calls: usize,
    seen: AtomicUsize,
    last_body: AtomicUsize,
}

#[async_trait]
impl HttpTransport for Instant {
    async fn send(&self, r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        let k = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        self.last_body.store(r.body.len(), Ordering::Relaxed);
        drop(r);
        let body = if k < self.calls {
            format!(
                r#"{{"choices":[{{"message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{k}","type":"function","function":{{"name":"lookup","arguments":"{{\"key\":\"k{k}\"}}"}}}}]}},"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}}}"#
            )
        } else {
            r#"{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}"#.to_owned()
        };
        Ok(HttpResponse::full(200, body))
    }
}

/// 400 characters of mixed Chinese and English (what the issue measured).
fn tool_result_text() -> String {
    "北京今天晴，气温 12 到 21 度；The quick brown fox jumps over the lazy dog. \"quoted\" 深圳多云。\n"
        .chars()
        .cycle()
        .take(400)
        .collect()
}

struct Lookup(String);

#[async_trait]
impl ToolExecutor for Lookup {
    async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        ToolResult::ok(self.0.clone())
    }
}

fn vm_hwm_kib() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1_000_000.0
}

/// One session of `n` turns in this process; prints one result line. `app`: as an app
/// runs it — a 2-worker executor, an observer reading every event, a SQLite store
/// committing every turn; otherwise the bare runtime on one thread.
fn child(n: usize, mode: &str) {
    let app = mode != "bare";
    let resume = mode == "resume";
    let exec = if app {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_time().build()
    } else {
        tokio::runtime::Builder::new_current_thread().enable_time().build()
    }
    .unwrap_or_else(|e| panic!("{e}"));
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"));
    config.system_prompt = "You are a helpful assistant. Use the lookup tool whenever a fact is needed.".into();
    config.max_iterations = u32::try_from(n).unwrap_or(u32::MAX);
    let schema = json!({"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]});
    config
        .tools
        .register(ToolDefinition::new("lookup", "Looks a fact up.", schema), Arc::new(Lookup(tool_result_text())))
        .unwrap_or_else(|e| panic!("{e}"));
    let transport = Arc::new(Instant { calls: n, seen: AtomicUsize::new(0), last_body: AtomicUsize::new(0) });
    let rt = AgentRuntime::new(config, transport.clone()).unwrap_or_else(|e| panic!("{e}"));
    let events = Arc::new(AtomicUsize::new(0));
    let _subscription = app.then(|| {
        let events = Arc::clone(&events);
        rt.subscribe(Arc::new(move |e: &AgentEvent| {
            // What a UI does with an event: reads it (its JSON is what crosses to ArkTS).
            let json = serde_json::to_string(e).map_or(0, |j| j.len());
            events.fetch_add(json.min(1), Ordering::Relaxed);
        }))
    });
    let dir = std::env::var_os("ARKAGENT_MEMORY_BENCH_DIR").map_or_else(
        || std::env::temp_dir().join(format!("arkagent-memory-bench-{}", std::process::id())),
        std::path::PathBuf::from,
    );
    let base_heap = LIVE.load(Ordering::Relaxed);
    PEAK.store(base_heap, Ordering::Relaxed);
    let base_rss = vm_hwm_kib() * 1024;
    if app {
        // Resuming: opening the store and the session (its 2n messages read back) is
        // inside the measurement, and so is one more turn (the first body built).
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let store = SqliteStore::open(dir.join("sessions.db")).unwrap_or_else(|e| panic!("{e}"));
        rt.attach_store(Arc::new(store), Some("bench")).unwrap_or_else(|e| panic!("{e}"));
    }
    if resume {
        assert!(rt.messages().len() >= 2 * n, "resumed {} messages", rt.messages().len());
        transport.seen.store(n - 1, Ordering::Relaxed);
    }
    let outcome = exec.block_on(rt.run("Look up the facts one by one, then summarize.")).unwrap_or_else(|e| panic!("{e}"));
    let iterations = if resume { 1 } else { n };
    assert_eq!((outcome.status, outcome.iterations as usize), (RunStatus::Completed, iterations));
    let body = transport.last_body.load(Ordering::Relaxed);
    let peak_heap = PEAK.load(Ordering::Relaxed) - base_heap;
    let peak_rss = vm_hwm_kib() * 1024;
    let report = rt.memory_report();
    let goal = 5 * body + 5_000_000;
    // An export of the whole session: what it allocates at its peak, beside what is held.
    let before_export = LIVE.load(Ordering::Relaxed);
    PEAK.store(before_export, Ordering::Relaxed);
    let export_len = rt.export_state().map_or(0, |j| j.len());
    let export_peak = PEAK.load(Ordering::Relaxed) - before_export;
    drop(rt);
    if std::env::var_os("ARKAGENT_MEMORY_BENCH_DIR").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!(
        "{mode:<6} turns {n:>6} | last body {:>7.2} MB | peak heap {:>7.2} MB ({:>4.1}× body) | peak RSS {:>7.2} MB (baseline {:>5.2} MB; goal ≤ {:>6.2} MB: {}) | export {:.2} MB, allocating {:.2} MB at its peak | at end: {}",
        mb(body),
        mb(peak_heap),
        peak_heap as f64 / body.max(1) as f64,
        mb(peak_rss),
        mb(base_rss),
        mb(goal),
        if peak_rss <= goal { "met" } else { "MISSED" },
        mb(export_len),
        mb(export_peak),
        report
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    if let Ok(n) = std::env::var("ARKAGENT_MEMORY_BENCH_CHILD") {
        let mode = std::env::var("ARKAGENT_MEMORY_BENCH_MODE").unwrap_or_default();
        child(n.parse().unwrap_or_else(|e| panic!("{e}")), &mode);
        return;
    }
    let sizes: Vec<usize> = if args.is_empty() {
        vec![10, 500, 2_000, 10_000]
    } else {
        args.iter().filter_map(|a| a.parse().ok()).collect()
    };
    let exe = std::env::current_exe().unwrap_or_else(|e| panic!("{e}"));
    for &n in &sizes {
        // bare; app (writes the store); resume (a fresh process resumes that store's session).
        let dir = std::env::temp_dir().join(format!("arkagent-memory-bench-{}-{n}", std::process::id()));
        for mode in ["bare", "app", "resume"] {
            let status = std::process::Command::new(&exe)
                .env("ARKAGENT_MEMORY_BENCH_CHILD", n.to_string())
                .env("ARKAGENT_MEMORY_BENCH_MODE", mode)
                .env("ARKAGENT_MEMORY_BENCH_DIR", &dir)
                .status()
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(status.success(), "the {n}-turn session ({mode}) failed");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
