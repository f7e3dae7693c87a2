//! PERF-1 / PERF-7 (results: BENCHMARKS.md): whole sessions of N model calls, each asking
//! for one tool call whose result is 400 characters, the N-th answering, against an
//! instant in-process transport (model latency excluded). In the same run, the two floors
//! per turn: (a) re-serializing that turn's request from the typed wire structs, from
//! scratch; (b) copying its bytes (a memcpy of the body into a ready buffer).
//!
//! `perf_1_turn_parts`: the parts of one turn's fixed cost that can be timed alone —
//! parsing the model's answer (typed wire structs) and encoding the two messages the turn
//! commits (the assistant's call and the 400-character tool result), each once; beside
//! them, building a `serde_json::Value` tree of the same answer (the first step of the
//! parser before the typed response structs).
//!
//! `cargo bench -p arkagent --bench session`. Per-turn figures are the reported times
//! divided by N.

use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use arkagent::llm::openai::parse_response;
use arkagent::llm::openai::{encode_body, encode_message};
use arkagent::llm::ReasoningReplay;
use arkagent::{
    AgentRuntime, AgentRuntimeConfig, CancellationToken, ChatRequest, HttpRequest, HttpResponse, HttpTransport, Message, ModelConfig,
    RunStatus, ToolCall, ToolContext, ToolDefinition, ToolExecutor, ToolInvocation, ToolResult, TransportError,
};
use async_trait::async_trait;
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use serde_json::json;

/// Asks for one `lookup` call per request until the `calls`-th request, which it answers.
/// Records each body's length.
struct Instant {
    calls: usize,
    seen: AtomicUsize,
    lengths: Mutex<Vec<usize>>,
}

#[async_trait]
impl HttpTransport for Instant {
    async fn send(&self, r: HttpRequest, _c: CancellationToken) -> Result<HttpResponse, TransportError> {
        let k = self.seen.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(mut l) = self.lengths.lock() {
            l.push(r.body.len());
        }
        let body = if k < self.calls {
            tool_call_answer(k)
        } else {
            r#"{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}"#.to_owned()
        };
        Ok(HttpResponse::full(200, body))
    }
}

/// The model's answer asking for the `k`-th lookup.
fn tool_call_answer(k: usize) -> String {
    format!(
        r#"{{"choices":[{{"message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_{k}","type":"function","function":{{"name":"lookup","arguments":"{{\"key\":\"k{k}\"}}"}}}}]}},"finish_reason":"tool_calls"}}],"usage":{{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}}}"#
    )
}

fn tool_result_text() -> String {
    "The quick brown fox jumps over the lazy dog; \"quoted\" text.\n".chars().cycle().take(400).collect()
}

/// Answers every call with the same 400-character text.
struct Lookup(String);

#[async_trait]
impl ToolExecutor for Lookup {
    async fn execute(&self, _call: ToolInvocation, _ctx: ToolContext) -> ToolResult {
        ToolResult::ok(self.0.clone())
    }
}

fn runtime(calls: usize) -> (AgentRuntime, Arc<Instant>) {
    let mut config = AgentRuntimeConfig::new(ModelConfig::new("http://127.0.0.1:9/v1", "k", "m"));
    config.system_prompt = "You are a helpful assistant. Use the lookup tool whenever a fact is needed.".into();
    config.max_iterations = u32::try_from(calls).unwrap_or(u32::MAX);
    let schema = json!({"type": "object", "properties": {"key": {"type": "string", "description": "what to look up"}}, "required": ["key"]});
    let result = tool_result_text();
    let definition = ToolDefinition::new("lookup", "Looks a fact up.", schema);
    let registered = config.tools.register(definition, Arc::new(Lookup(result)));
    registered.unwrap_or_else(|e| panic!("{e}"));
    let transport = Arc::new(Instant { calls, seen: AtomicUsize::new(0), lengths: Mutex::new(Vec::new()) });
    let rt = AgentRuntime::new(config, transport.clone()).unwrap_or_else(|e| panic!("{e}"));
    (rt, transport)
}

const INPUT: &str = "Look up the facts one by one, then summarize.";

fn perf_1_session(c: &mut Criterion) {
    let exec = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap_or_else(|e| panic!("{e}"));
    let mut g = c.benchmark_group("perf_1_session");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for n in [10usize, 100, 500, 2_000] {
        // One session outside the timing: the history every turn's request is a prefix of,
        // and the body lengths (checked against the from-scratch encodings below).
        let (rt, transport) = runtime(n);
        let outcome = exec.block_on(rt.run(INPUT)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((outcome.status, outcome.iterations as usize), (RunStatus::Completed, n));
        let messages: Vec<Message> = rt.messages();
        let lengths = transport.lengths.lock().map(|l| l.clone()).unwrap_or_default();
        assert_eq!(lengths.len(), n);
        let model = rt.config().model.clone();
        let system = rt.config().system_prompt.clone();
        let tools = rt.tool_definitions().to_vec();
        // Turn k (1-based) sends the input plus k-1 (call, result) pairs.
        let request = |k: usize| ChatRequest {
            system_prompt: Some(system.as_str()),
            context_messages: &[],
            messages: &messages[..2 * k - 1],
            tools: &tools,
            tool_choice: None,
        };
        for k in [1, n / 2 + 1, n] {
            assert_eq!(encode_body(&model, &request(k)).len(), lengths[k - 1], "the floor encodes the same request");
        }
        let largest = encode_body(&model, &request(n)).into_bytes();
        let mut copy = vec![0u8; largest.len()];

        g.bench_with_input(BenchmarkId::new("session", n), &n, |b, &n| {
            b.iter_batched(
                || runtime(n).0,
                |rt| exec.block_on(rt.run(INPUT)).map(|o| black_box(o.iterations)),
                BatchSize::PerIteration,
            );
        });
        g.bench_with_input(BenchmarkId::new("floor_a_serialize_typed_from_scratch", n), &n, |b, &n| {
            b.iter(|| (1..=n).map(|k| black_box(encode_body(&model, &request(k))).len()).sum::<usize>());
        });
        g.bench_with_input(BenchmarkId::new("floor_b_memcpy_body", n), &n, |b, _| {
            b.iter(|| {
                for &len in &lengths {
                    copy[..len].copy_from_slice(black_box(&largest[..len]));
                    black_box(&mut copy);
                }
            });
        });
    }
    g.finish();
}

fn perf_1_turn_parts(c: &mut Criterion) {
    let mut g = c.benchmark_group("perf_1_turn_parts");
    g.sample_size(20).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    let answer = tool_call_answer(250);
    let call = ToolCall { id: "call_250".into(), name: "lookup".into(), arguments: r#"{"key":"k250"}"#.into() };
    let assistant = Message::Assistant { content: None, tool_calls: vec![call], reasoning: None, thinking: Default::default() };
    let result = Message::tool_result("call_250", tool_result_text(), false);
    g.bench_function("parse_response_tool_call", |b| b.iter(|| black_box(parse_response(black_box(answer.as_bytes())))));
    // What the former parser did before reading any field: build the `Value` tree.
    g.bench_function("value_tree_of_the_answer_alone", |b| {
        b.iter(|| black_box(serde_json::from_slice::<serde_json::Value>(black_box(answer.as_bytes())).is_ok()))
    });
    g.bench_function("encode_committed_messages", |b| {
        b.iter(|| encode_message(black_box(&assistant), ReasoningReplay::ToolCalls).len() + encode_message(black_box(&result), ReasoningReplay::ToolCalls).len())
    });
    g.finish();
}

criterion_group!(benches, perf_1_session, perf_1_turn_parts);
criterion_main!(benches);
