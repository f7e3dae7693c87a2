//! PERF-1 (a cold turn: right after an import, nothing cached), PERF-2, PERF-6 (results:
//! BENCHMARKS.md). Whole sessions: benches/session.rs.
//!
//! `cargo bench -p arkagent --bench core`; a quick pass: `-- --quick`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arkagent::llm::openai::build_request_body;
use arkagent::llm::ChatRequest;
use arkagent::compress::compute_safe_split_index;
use arkagent::runtime::DelegationConfig;
use arkagent::subagent::{DecomposedTask, SubAgentPolicy};
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, AgentState, CancellationToken, HttpRequest, HttpResponse, HttpTransport, Message, ModelConfig,
    ToolCall, TransportError,
};
use async_trait::async_trait;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};

fn call(id: String) -> ToolCall {
    ToolCall { id, name: "get_weather".into(), arguments: r#"{"city":"Beijing"}"#.into() }
}

/// A realistic history: user, two parallel calls, two results, an answer — repeated.
fn history(n: usize) -> Vec<Message> {
    let mut m = Vec::with_capacity(n);
    let mut t = 0;
    while m.len() < n {
        m.push(Message::user(format!("question {t}: what is the weather like in the two cities today?")));
        m.push(Message::assistant_tool_calls(vec![call(format!("a{t}")), call(format!("b{t}"))]));
        m.push(Message::tool_result(format!("a{t}"), "sunny, 25 °C, light wind from the south", false));
        m.push(Message::tool_result(format!("b{t}"), "rainy, 18 °C, heavy showers in the afternoon", false));
        m.push(Message::assistant("Beijing is sunny and Shenzhen is rainy; take an umbrella in Shenzhen."));
        t += 1;
    }
    m.truncate(n);
    // Keep it paired: drop a trailing partial turn.
    while !arkagent::HistoryInvariants::tool_calls_paired(&m) {
        m.pop();
    }
    m
}

/// Adversarial: a call made at the start and answered only at the very end, so no split
/// exists except at 1 — the seed's loop would re-check both halves n times.
fn adversarial(n: usize) -> Vec<Message> {
    let mut m = vec![Message::user("start a long job"), Message::assistant_tool_calls(vec![call("long".into())])];
    for i in 0..n.saturating_sub(3) {
        m.push(if i % 2 == 0 { Message::user("still waiting?") } else { Message::assistant("the job is still running") });
    }
    m.push(Message::tool_result("long", "done", false));
    m
}

/// The seed's loop: re-check both halves for every candidate.
fn seed_split(messages: &[Message], keep: usize) -> Option<usize> {
    if messages.len() <= keep {
        return None;
    }
    let mut split = messages.len() - keep;
    while split > 0 {
        if arkagent::HistoryInvariants::tool_calls_paired(&messages[..split]) && arkagent::HistoryInvariants::tool_calls_paired(&messages[split..]) {
            return Some(split);
        }
        split -= 1;
    }
    None
}

fn perf_2_split(c: &mut Criterion) {
    let mut g = c.benchmark_group("perf_2_compute_safe_split_index");
    g.sample_size(10);
    for n in [1_000usize, 10_000, 100_000, 1_000_000] {
        let normal = history(n);
        g.bench_with_input(BenchmarkId::new("typical", n), &normal, |b, h| b.iter(|| black_box(compute_safe_split_index(h, 10))));
        let adv = adversarial(n);
        assert_eq!(compute_safe_split_index(&adv, 10), Some(1));
        g.bench_with_input(BenchmarkId::new("adversarial_tail", n), &adv, |b, h| b.iter(|| black_box(compute_safe_split_index(h, 10))));
        if n <= 10_000 {
            // The seed's loop on the same input, for comparison (O(n²)).
            g.bench_with_input(BenchmarkId::new("seed_loop_adversarial_tail", n), &adv, |b, h| b.iter(|| black_box(seed_split(h, 10))));
        }
    }
    g.finish();
}

/// Answers every request at once with a final text (no model latency).
struct Instant;
#[async_trait]
impl HttpTransport for Instant {
    async fn send(&self, _r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        Ok(HttpResponse::full(
            200,
            &br#"{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}"#[..],
        ))
    }
}

fn perf_1_turn_overhead(c: &mut Criterion) {
    let exec = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("perf_1_turn");
    g.sample_size(20);
    for n in [10usize, 100, 1_000, 10_000] {
        let mut state = AgentState::new("bench");
        state.history.messages = history(n);
        let json = state.to_json().unwrap_or_default();
        let config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"));
        let model = config.model.clone();
        let rt = AgentRuntime::resume(config, Arc::new(Instant), &json).unwrap_or_else(|e| panic!("{e}"));
        // The whole turn: build + serialize the request, parse the answer, append, events.
        // The state is reset before each turn (not timed) so the history stays at n.
        g.bench_with_input(BenchmarkId::new("run_one_turn", n), &n, |b, _| {
            b.iter_batched(
                || rt.import_state(&json).unwrap_or_else(|e| panic!("{e}")),
                |()| exec.block_on(rt.run("one more question")).map(|o| black_box(o.iterations)),
                BatchSize::PerIteration,
            );
        });
        // The reference: serializing that turn's request body alone.
        let messages = history(n);
        g.bench_with_input(BenchmarkId::new("serialize_request_body", n), &n, |b, _| {
            b.iter(|| {
                let request = ChatRequest { system_prompt: None, context_messages: &[], messages: &messages, tools: &[], tool_choice: None };
                black_box(build_request_body(&model, &request).len())
            })
        });
    }
    g.finish();
}

/// Children answer after `latency`.
struct Slow(Duration);
#[async_trait]
impl HttpTransport for Slow {
    async fn send(&self, _r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        tokio::time::sleep(self.0).await;
        Instant.send(_r, _c).await
    }
}

fn perf_6_children(c: &mut Criterion) {
    let exec = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_time().build().unwrap_or_else(|e| panic!("{e}"));
    let latency = Duration::from_millis(50);
    let mut g = c.benchmark_group("perf_6_children_L50ms_max_concurrent_2");
    g.sample_size(10);
    for k in [1usize, 2, 4, 6, 8] {
        let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"));
        config.delegation = Some(DelegationConfig {
            allow_clone: true,
            policy: SubAgentPolicy { max_concurrent_children: 2, max_delegations_per_run: 64, ..Default::default() },
            ..Default::default()
        });
        let rt = AgentRuntime::new(config, Arc::new(Slow(latency))).unwrap_or_else(|e| panic!("{e}"));
        let tasks: Vec<DecomposedTask> =
            (0..k).map(|i| DecomposedTask { assignee: "clone".into(), task_description: format!("task {i}"), role: None, context: None }).collect();
        let expected = k.div_ceil(2) as u64 * 50;
        g.bench_with_input(BenchmarkId::new(format!("k={k} expected≈{expected}ms"), k), &k, |b, _| {
            b.iter(|| exec.block_on(rt.run_decomposed(&tasks, 2)).map(|r| black_box(r.len())));
        });
    }
    g.finish();
}

criterion_group!(benches, perf_2_split, perf_1_turn_overhead, perf_6_children);
criterion_main!(benches);
