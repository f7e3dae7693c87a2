//! CHAT-1, CHAT-2 (results: BENCHMARKS.md): what a gesture costs in a chat of N runs (a
//! 200-character question, a 400-character answer each), against an instant in-process
//! transport (model latency excluded):
//!
//! - `chat_run/N`: one more plain run (the append-only path: the floor);
//! - `chat_regenerate/N`: `regenerate` of the last run — the rewind (the state cut, the
//!   encoding of the kept history rebuilt once) and the run;
//! - `chat_fork/N`: `fork` of the whole session without a store (the state copied and
//!   serialized: what the app gets).
//!
//! `cargo bench -p arkagent --bench gestures`.

#![allow(clippy::expect_used)] // a benchmark may panic on a broken fixture

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arkagent::{AgentRuntime, AgentRuntimeConfig, CancellationToken, HttpRequest, HttpResponse, HttpTransport, ModelConfig, TransportError};
use async_trait::async_trait;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};

/// Answers every request with the same 400-character text.
struct Instant(String);

#[async_trait]
impl HttpTransport for Instant {
    async fn send(&self, _r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        Ok(HttpResponse::full(200, self.0.clone()))
    }
}

fn answer() -> String {
    let text: String = "The weather is mild; \"light\" wind from the west.\n".chars().cycle().take(400).collect();
    serde_json::json!({"choices":[{"message":{"role":"assistant","content":text},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}})
    .to_string()
}

fn question(i: usize) -> String {
    format!("question {i}: ") + &"what should I wear today, and is it going to rain later? ".chars().cycle().take(200).collect::<String>()
}

/// A runtime with `runs` runs done; the last run's id.
fn chat(rt: &tokio::runtime::Runtime, runs: usize) -> (AgentRuntime, String) {
    let config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"));
    let agent = AgentRuntime::new(config, Arc::new(Instant(answer()))).expect("runtime");
    let mut last = String::new();
    for i in 0..runs {
        last = rt.block_on(agent.run(question(i))).expect("run").run_id;
    }
    (agent, last)
}

fn gestures(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio");
    let mut group = c.benchmark_group("chat");
    group.sample_size(30).measurement_time(Duration::from_secs(3));
    for runs in [10usize, 100, 1000] {
        let (agent, _) = chat(&rt, runs);
        let mut i = runs;
        group.bench_with_input(BenchmarkId::new("chat_run", runs), &runs, |b, _| {
            b.iter(|| {
                i += 1;
                black_box(rt.block_on(agent.run(question(i))).expect("run"));
            })
        });
        let (agent, mut last) = chat(&rt, runs);
        group.bench_with_input(BenchmarkId::new("chat_regenerate", runs), &runs, |b, _| {
            b.iter(|| {
                last = rt.block_on(agent.regenerate(&last)).expect("regenerate").run_id;
            })
        });
        group.bench_with_input(BenchmarkId::new("chat_fork", runs), &runs, |b, _| {
            b.iter(|| black_box(agent.fork("fork", None).expect("fork")))
        });
    }
    group.finish();
}

criterion_group!(benches, gestures);
criterion_main!(benches);
