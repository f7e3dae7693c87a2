//! SSE parsing throughput (LLM-2, PERF): a realistic multi-megabyte Chat Completions
//! stream — OpenAI-shaped chunks with ids and fingerprints, token-sized text deltas
//! (Chinese, English, emoji), DeepSeek-style reasoning deltas, tool-call argument
//! fragments, keep-alive comments, CRLF line endings on part of it — parsed
//!
//! - whole (`parse_stream`, no delta delivery),
//! - pushed in 1400-byte chunks with every delta handed to a sink (what the client does),
//! - framing only (`SseDecoder`), to separate SSE framing from JSON work.
//!
//! Run: `cargo bench -p arkagent --bench sse`; throughput is printed in MB/s (results:
//! BENCHMARKS.md, "SSE parsing").

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use arkagent::llm::{parse_stream, SseDecoder, SseError, StreamDelta, StreamParser};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

const HEADER: &str = r#""id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,"model":"deepseek-reasoner","system_fingerprint":"fp_f9f4fb6dbf""#;

/// Token-sized pieces, as providers stream them.
const TOKENS: &[&str] = &["北京", "今天", "天气", "晴", "，", " the", " weather", " is", " sunny", " 🌤️", "气温", " 25", "°C", "。", "\\n", " \\\"quoted\\\"", " and", "上海"];

fn stream(target_bytes: usize) -> Vec<u8> {
    let mut out = String::with_capacity(target_bytes + 4096);
    let mut i = 0usize;
    out += &format!("data: {{{HEADER},\"choices\":[{{\"index\":0,\"delta\":{{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n");
    // 1/4 reasoning, 3/4 answer, a tool call at the end.
    while out.len() < target_bytes / 4 {
        let t = TOKENS[i % TOKENS.len()];
        out += &format!("data: {{{HEADER},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":null,\"reasoning_content\":\"{t}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n");
        if i.is_multiple_of(500) {
            out += ": keep-alive\n\n";
        }
        i += 1;
    }
    while out.len() < target_bytes * 9 / 10 {
        let t = TOKENS[i % TOKENS.len()];
        let eol = if i.is_multiple_of(3) { "\r\n" } else { "\n" };
        out += &format!("data: {{{HEADER},\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{t}\",\"reasoning_content\":null}},\"logprobs\":null,\"finish_reason\":null}}],\"usage\":null}}{eol}{eol}");
        i += 1;
    }
    out += &format!("data: {{{HEADER},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"call_0\",\"type\":\"function\",\"function\":{{\"name\":\"write_file\",\"arguments\":\"\"}}}}]}},\"finish_reason\":null}}]}}\n\n");
    while out.len() < target_bytes {
        let t = TOKENS[i % TOKENS.len()];
        out += &format!("data: {{{HEADER},\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":\"{t}\"}}}}]}},\"finish_reason\":null}}]}}\n\n");
        i += 1;
    }
    out += &format!("data: {{{HEADER},\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"tool_calls\"}}]}}\n\n");
    out += &format!("data: {{{HEADER},\"choices\":[],\"usage\":{{\"prompt_tokens\":1200,\"completion_tokens\":{i},\"total_tokens\":{},\"prompt_tokens_details\":{{\"cached_tokens\":1024}},\"completion_tokens_details\":{{\"reasoning_tokens\":100}},\"prompt_cache_hit_tokens\":1024}}}}\n\ndata: [DONE]\n\n", 1200 + i);
    out.into_bytes()
}

fn bench_sse(c: &mut Criterion) {
    let body = stream(4 * 1024 * 1024);
    // Sanity: it parses, and to the expected shape.
    let parsed = parse_stream(&body).expect("the benchmark stream parses");
    assert!(parsed.message.text().is_some_and(|t| t.len() > 10_000));
    assert_eq!(parsed.message.tool_calls().len(), 1);

    let mut group = c.benchmark_group("sse");
    group.throughput(Throughput::BytesDecimal(body.len() as u64));
    group.sample_size(20);

    group.bench_function("parse_stream_whole_4MiB", |b| b.iter(|| black_box(parse_stream(black_box(&body)).unwrap())));

    group.bench_function("push_1400B_chunks_with_deltas_4MiB", |b| {
        b.iter(|| {
            let mut parser = StreamParser::new();
            let mut text_bytes = 0usize;
            let mut sink = |d: StreamDelta| {
                if let StreamDelta::Text(t) | StreamDelta::Reasoning(t) = d {
                    text_bytes += t.len();
                }
            };
            for chunk in body.chunks(1400) {
                parser.push(chunk, Some(&mut sink)).unwrap();
            }
            black_box(parser.finish(None).unwrap());
            black_box(text_bytes)
        })
    });

    group.bench_function("framing_only_1400B_chunks_4MiB", |b| {
        b.iter(|| {
            let mut decoder = SseDecoder::new();
            let mut events = 0usize;
            for chunk in body.chunks(1400) {
                decoder
                    .feed(chunk, |e| {
                        events += e.data.len();
                        Ok::<_, SseError>(())
                    })
                    .unwrap();
            }
            black_box(events)
        })
    });
    group.finish();
}

criterion_group!(benches, bench_sse);
criterion_main!(benches);
