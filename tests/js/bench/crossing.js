'use strict';
// PERF-5: N-API crossing costs of the host build, measured from Node.js. Not a test (not
// run by `node --test`, which only picks up *.test.js); run it by hand:
//
//   PROFILE=release bash scripts/test-js.sh     # builds target/release and target/arkagent.node
//   node tests/js/bench/crossing.js             # or ARKAGENT_NODE=/path/to/arkagent.node
//
// Measures
//  1. a trivial JS→Rust call: ToolRegistry.has(name) (string in, bool out);
//  2. a Rust→JS→Promise HTTP round trip: a whole run() against a transport that resolves
//     at once (JS→Rust run(), Rust→JS transport call, Promise settled back into Rust,
//     the core's request building and parsing, the run's Promise resolved in JS);
//  3. the marginal cost of one more Rust→JS→Promise crossing: a run whose one turn makes
//     K tool calls (one at a time) minus the plain run, divided by the K+1 extra
//     crossings (K tool calls plus the second model call);
//  4. one Rust→JS→Promise crossing directly: in a turn of 200 sequential tool calls, the
//     time from one tool call starting in JS to the next one starting (the tool's Promise
//     settled into Rust, the core records the result, the next threadsafe-function call
//     reaches JS) — no subtraction of two noisy means; median over all intervals.
// Prints one line per measurement (see benchAsync for the three numbers of an async one).

const { performance } = require('node:perf_hooks');
const { native, completion, runtimeConfig } = require('../support');

const ROUNDS = Number(process.env.ROUNDS || 7);

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function ns(ms, n) {
  return (ms * 1e6) / n;
}

function benchSync(label, n, fn) {
  fn(); // warm-up
  const rounds = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const t0 = performance.now();
    for (let i = 0; i < n; i += 1) fn();
    rounds.push(ns(performance.now() - t0, n));
  }
  const m = median(rounds);
  console.log(`${label.padEnd(58)} ${m.toFixed(0).padStart(9)} ns/call`);
  return m;
}

// Per op: the median over rounds of the mean wall time (what the numbers below always
// were), the median single op (robust to a loaded machine: other processes' time slices
// land in a few ops, not in the median) and the process CPU time per op (all threads).
async function benchAsync(label, n, fn) {
  for (let i = 0; i < Math.min(50, n); i += 1) await fn(); // warm-up
  const rounds = [];
  const ops = [];
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < ROUNDS; r += 1) {
    const t0 = performance.now();
    let last = t0;
    for (let i = 0; i < n; i += 1) {
      await fn();
      const now = performance.now();
      ops.push(now - last);
      last = now;
    }
    rounds.push(ns(last - t0, n) / 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  const m = median(rounds);
  const single = median(ops) * 1000;
  const cpuUs = (cpu.user + cpu.system) / (ROUNDS * n);
  console.log(`${label.padEnd(58)} ${m.toFixed(1).padStart(9)} µs/op  (median op ${single.toFixed(1)} µs, CPU ${cpuUs.toFixed(1)} µs/op)`);
  return { mean: m, single, cpu: cpuUs };
}

async function main() {
  console.log(`node ${process.version}, ${process.arch}, module ${require('../support').MODULE_PATH}`);

  // 1. JS→Rust.
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('noop', 'No-op', '{"type":"object"}'), async () => ({ content: 'ok' }));
  const jsSet = new Set(['noop']);
  benchSync('JS baseline: Set.has (no crossing)', 2_000_000, () => jsSet.has('noop'));
  const callNs = benchSync('JS→Rust: ToolRegistry.has(name)', 1_000_000, () => registry.has('noop'));
  benchSync('JS→Rust: ToolRegistry.names() (array out)', 300_000, () => registry.names());

  // 2. Rust→JS→Promise: a whole run against an immediately resolving transport.
  const answer = completion({ content: 'ok', usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
  const response = { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], body: answer };
  const jsTransport = async () => response;
  await benchAsync('JS baseline: await transport() (no crossing)', 100_000, () => jsTransport());

  const N = Number(process.env.RUNS || 2000);
  const fresh = () => new native.AgentRuntime(runtimeConfig(), jsTransport, new native.ToolRegistry());
  // A fresh runtime per round keeps the history (and the request body) the same size.
  let runtime = fresh();
  let count = 0;
  const oneRun = async () => {
    if (count % 20 === 0) runtime = fresh();
    count += 1;
    await runtime.run('hi');
  };
  const runUs = await benchAsync('run(): 1 model call via Promise transport', N, oneRun);

  const plain = { ...response };
  const syncRuntime = () => new native.AgentRuntime(runtimeConfig(), () => plain, new native.ToolRegistry());
  let rt2 = syncRuntime();
  let count2 = 0;
  await benchAsync('run(): 1 model call, transport returns a plain object', N, async () => {
    if (count2 % 20 === 0) rt2 = syncRuntime();
    count2 += 1;
    await rt2.run('hi');
  });

  // 3. Marginal crossing: K tool calls (one at a time) + one more model call.
  const K = 10;
  const toolCalls = Array.from({ length: K }, (_, i) => ({ id: `c${i}`, name: 'noop', arguments: {} }));
  const withTools = completion({ toolCalls, usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
  let turn = 0;
  const toolTransport = async () => {
    turn += 1;
    return { status: 200, headers: [], body: turn % 2 === 1 ? withTools : answer };
  };
  const toolConfig = () => {
    const c = runtimeConfig();
    c.maxParallelTools = 1;
    return c;
  };
  let rt3 = new native.AgentRuntime(toolConfig(), toolTransport, registry);
  let count3 = 0;
  const toolUs = await benchAsync(`run(): 2 model calls + ${K} sequential JS tool calls`, Math.max(200, N / 5), async () => {
    if (count3 % 10 === 0) rt3 = new native.AgentRuntime(toolConfig(), toolTransport, registry);
    count3 += 1;
    await rt3.run('hi');
  });

  // 4. Tool-to-tool intervals.
  const M = 200;
  const stamps = [];
  const timed = new native.ToolRegistry();
  timed.register(new native.ToolDefinition('noop', 'No-op', '{"type":"object"}'), async () => {
    stamps.push(performance.now());
    return { content: 'ok' };
  });
  const manyCalls = completion({ toolCalls: Array.from({ length: M }, (_, i) => ({ id: `m${i}`, name: 'noop', arguments: {} })) });
  let turn4 = 0;
  const manyTransport = async () => ({ status: 200, headers: [], body: turn4++ % 2 === 0 ? manyCalls : answer });
  const intervals = [];
  for (let r = 0; r < Math.max(3, ROUNDS * 2); r += 1) {
    stamps.length = 0;
    await new native.AgentRuntime(toolConfig(), manyTransport, timed).run('hi');
    if (r === 0) continue; // warm-up
    for (let i = 1; i < stamps.length; i += 1) intervals.push((stamps[i] - stamps[i - 1]) * 1000);
  }
  const interval = median(intervals);
  const p90 = [...intervals].sort((a, b) => a - b)[Math.floor(intervals.length * 0.9)];

  const perCrossing = (toolUs.mean - runUs.mean) / (K + 1);
  const perCrossingOp = (toolUs.single - runUs.single) / (K + 1);
  const perCrossingCpu = (toolUs.cpu - runUs.cpu) / (K + 1);
  console.log('');
  console.log(`PERF-5 JS→Rust call (ToolRegistry.has):                  ${(callNs / 1000).toFixed(3)} µs`);
  console.log(`PERF-5 Rust→JS→Promise HTTP round trip (whole run()):     ${runUs.mean.toFixed(1)} µs (median op ${runUs.single.toFixed(1)} µs, CPU ${runUs.cpu.toFixed(1)} µs)`);
  console.log(`PERF-5 marginal Rust→JS→Promise crossing (tool or HTTP): ~${perCrossing.toFixed(1)} µs (from median ops ${perCrossingOp.toFixed(1)} µs, CPU ${perCrossingCpu.toFixed(1)} µs)`);
  console.log(`PERF-5 one Rust→JS→Promise crossing (tool to tool):     ${interval.toFixed(1)} µs median, ${p90.toFixed(1)} µs p90 (${intervals.length} crossings)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
