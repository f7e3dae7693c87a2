'use strict';
// PERF-8 (N-API part): what a request body costs on its way to the JS transport. Not a
// test (node --test only runs *.test.js); run it by hand after a release build:
//
//   PROFILE=release bash scripts/test-js.sh
//   node tests/js/bench/transport_body.js      # or ARKAGENT_NODE=/path/to/arkagent.node
//
// For a user message of 10 KB, 100 KB and 1 MB (so a request body of about that size),
// times one run() against a transport that answers at once (a plain object): the whole
// round trip (JS→Rust run(), request encoding, Rust→JS transport call with the body,
// response parsing, run()'s Promise resolved). The transport takes the body as
// `request.bodyBytes` (PERF-9: an ArrayBuffer over the runtime's bytes, what
// NetworkKitTransport sends), or with BODY=string as `request.body` (the string, made when
// read; the only form before PERF-9). Also times the streamed response path: a 1 MB body
// written back through HttpBodySink.write / writeBytes in 16 KB chunks.
// Prints the median of several rounds per line.

const { performance } = require('node:perf_hooks');
const { native, completion, runtimeConfig, modelConfig, sseEvent } = require('../support');

const ROUNDS = Number(process.env.ROUNDS || 9);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function bench(label, n, fn) {
  for (let i = 0; i < Math.min(5, n); i += 1) await fn(); // warm-up
  const rounds = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1) await fn();
    rounds.push(((performance.now() - t0) * 1000) / n);
  }
  const m = median(rounds);
  console.log(`${label.padEnd(62)} ${m.toFixed(1).padStart(9)} µs/op`);
  return m;
}

async function main() {
  console.log(`node ${process.version}, ${process.arch}, module ${require('../support').MODULE_PATH}`);
  const answer = completion({ content: 'ok', usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
  const response = { status: 200, headers: [], body: answer };
  let seen = 0;
  const asString = process.env.BODY === 'string';
  console.log(`the transport reads request.${asString ? 'body (string)' : 'bodyBytes (ArrayBuffer)'}`);
  const transport = (request) => {
    seen = asString ? request.body.length : request.bodyBytes.byteLength;
    return response;
  };
  for (const [label, size, n] of [['10 KB', 10_000, 400], ['100 KB', 100_000, 100], ['1 MB', 1_000_000, 15]]) {
    const prompt = 'x'.repeat(size);
    await bench(`run(): request body ${label}, ASCII`, n, async () => {
      // A fresh runtime per run: the history (and the body) stays one message long.
      const runtime = new native.AgentRuntime(runtimeConfig(), transport, new native.ToolRegistry());
      await runtime.run(prompt);
    });
    if (seen < size) throw new Error(`the transport saw a ${seen}-char body`);
    const wide = '汉'.repeat(size / 3);
    await bench(`run(): request body ${label}, CJK (3-byte UTF-8)`, n, async () => {
      const runtime = new native.AgentRuntime(runtimeConfig(), transport, new native.ToolRegistry());
      await runtime.run(wide);
    });
  }

  // Streamed response: 1 MB of SSE text written back in 16 KB chunks.
  const piece = 'y'.repeat(1000);
  const events = [];
  for (let i = 0; i < 1000; i += 1) events.push(sseEvent({ choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }));
  events.push(sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), sseEvent('[DONE]'));
  const text = events.join('');
  const chunks = [];
  for (let i = 0; i < text.length; i += 16384) chunks.push(text.slice(i, i + 16384));
  const byteChunks = chunks.map((c) => Buffer.from(c));
  for (const [label, write] of [['write(text)', (sink, i) => sink.write(chunks[i])], ['writeBytes(Buffer)', (sink, i) => sink.writeBytes(byteChunks[i])]]) {
    const streaming = (request, sink) => {
      setImmediate(() => {
        for (let i = 0; i < chunks.length; i += 1) write(sink, i);
        sink.end();
      });
      return { status: 200, headers: [], streamed: true };
    };
    await bench(`run(): 1 MB streamed response, ${chunks.length} × ${label}`, 10, async () => {
      const model = modelConfig();
      model.stream = true;
      const runtime = new native.AgentRuntime(runtimeConfig({ model }), streaming, new native.ToolRegistry());
      const result = await runtime.run('hi');
      if ((result.finalText || "").length !== 1_000_000) throw new Error(`streamed answer of ${(result.finalText || "").length} chars`);
    });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
