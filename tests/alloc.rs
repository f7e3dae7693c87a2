//! PERF-3 / CMP-6: a compression attempt that is skipped or fails allocates no copy of the
//! history. Counted with a global allocator (deterministic, not timed): the bytes an
//! attempt allocates do not grow with the history, and no single allocation is as large
//! as the history's message array.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use arkagent::compress::{CompressOutcome, CompressReason, ContextCompressorConfig};
use arkagent::runtime::Compression;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, AgentState, CancellationToken, HttpRequest, HttpResponse, HttpTransport, Message,
    ModelConfig, ModelUsage, ToolCall, TransportError,
};
use async_trait::async_trait;

struct Counting;
static COUNTING: AtomicBool = AtomicBool::new(false);
static BYTES: AtomicUsize = AtomicUsize::new(0);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            BYTES.fetch_add(layout.size(), Ordering::Relaxed);
            LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            BYTES.fetch_add(new_size, Ordering::Relaxed);
            LARGEST.fetch_max(new_size, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Answers every request with a reply that is not a snapshot (the attempt fails).
struct Prose;
#[async_trait]
impl HttpTransport for Prose {
    async fn send(&self, _r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        Ok(HttpResponse::full(200, &br#"{"choices":[{"message":{"role":"assistant","content":"prose"}}]}"#[..]))
    }
}

fn runtime(messages: usize, prompt_tokens: u64) -> AgentRuntime {
    let mut c = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"));
    c.compression = Some(Compression::Default {
        config: ContextCompressorConfig { total_token_threshold: 1000, keep_recent_message_count: 10, summarizer_max_input_tokens: Some(2000), ..Default::default() },
        summarizer: None,
    });
    let rt = AgentRuntime::new(c, Arc::new(Prose)).unwrap();
    let mut state = AgentState::new("s");
    for i in 0..messages / 4 {
        let id = format!("c{i}");
        state.history.messages.push(Message::user(format!("question number {i} with some words")));
        state.history.messages.push(Message::assistant_tool_calls(vec![ToolCall { id: id.clone(), name: "t".into(), arguments: "{}".into() }]));
        state.history.messages.push(Message::tool_result(id, "result text of moderate length", false));
        state.history.messages.push(Message::assistant("an answer"));
    }
    state.usages.push(ModelUsage { prompt_tokens, ..Default::default() });
    rt.import_state(&state.to_json().unwrap()).unwrap();
    rt
}

/// (bytes allocated, largest single allocation) during one `compress_now`.
fn measure(rt: &AgentRuntime, expect: (CompressOutcome, CompressReason)) -> (usize, usize) {
    let exec = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    BYTES.store(0, Ordering::SeqCst);
    LARGEST.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let result = exec.block_on(rt.compress_now()).unwrap();
    COUNTING.store(false, Ordering::SeqCst);
    assert_eq!((result.outcome, result.reason), expect);
    (BYTES.load(Ordering::SeqCst), LARGEST.load(Ordering::SeqCst))
}

#[test]
fn perf_3_failed_or_skipped_attempts_allocate_no_copy_of_the_history() {
    let small = runtime(1_000, 5_000);
    let large = runtime(40_000, 5_000);
    let array = 40_000 * std::mem::size_of::<Message>();

    // What a copy of the history costs, measured the same way.
    let messages = large.messages();
    BYTES.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    let copy = messages.clone();
    COUNTING.store(false, Ordering::SeqCst);
    let copy_bytes = BYTES.load(Ordering::SeqCst);
    drop((copy, messages));

    let failed = (CompressOutcome::Failed, CompressReason::MalformedSummary);
    let (small_bytes, _) = measure(&small, failed);
    let (large_bytes, large_max) = measure(&large, failed);
    eprintln!(
        "failed attempt: {small_bytes} B at 1k messages, {large_bytes} B at 40k messages \
         (largest block {large_max} B); a copy of the 40k history: {copy_bytes} B (array {array} B)"
    );
    // A copy would allocate the message array in one block and all texts besides.
    assert!(large_max < array / 2, "an allocation the size of the history: {large_max} B");
    assert!(large_bytes * 3 < copy_bytes, "the attempt allocated {large_bytes} B, a copy costs {copy_bytes} B");

    let skipped = (CompressOutcome::Skipped, CompressReason::BelowThreshold);
    let (skip_small, _) = measure(&runtime(1_000, 10), skipped);
    let (skip_large, _) = measure(&runtime(40_000, 10), skipped);
    eprintln!("skipped attempt: {skip_small} B at 1k messages, {skip_large} B at 40k messages");
    assert!(skip_large <= skip_small + 1024 && skip_large < 16 * 1024);
}
