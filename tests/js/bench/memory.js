'use strict';
// PERF-2 / PERF-9 (N-API part; results: BENCHMARKS.md, "Memory of a long chat"): peak RSS
// of a Node process running one session of N turns through the N-API module — each turn
// one JS tool call whose result is 400 characters of mixed Chinese and English, against a
// JS transport that answers at once and, like NetworkKitTransport, takes the body as
// `request.bodyBytes` (the ArrayBuffer over the runtime's bytes) and keeps nothing but its
// length. Goal (PERF-9): peak RSS − Node's own baseline ≤ 2 × the last request body + 5 MB.
// BODY=string reads `request.body` instead (the string a host may ask for), for comparison;
// WIRE=anthropic runs the same turns on the Anthropic Messages wire; STREAM=1 streams every
// answer through the HttpBodySink as SSE (OpenAI-compatible wire); REASONING=200-2000 gives
// every tool-call answer that many tokens of reasoning (varying by turn, ~4 characters a
// token; THINK-2: sent back on every later request, as DeepSeek V4 requires).
// Not a test (node --test only runs *.test.js); run it by hand after a release build:
//
//   PROFILE=release bash scripts/test-js.sh
//   node tests/js/bench/memory.js            # 500, 2000 and 10000 turns
//   node tests/js/bench/memory.js 500 2000   # some
//
// Each N runs ROUNDS times (default 3), each in a fresh child process, and the median of
// the rounds is printed last (one round varies by ~1 MB at 10,000 turns). The baseline is the child's resident memory
// (VmRSS, after a full GC) once the module is loaded, a 2-turn warm-up session ran (the
// module's own, its executor threads) and the transport's own JS work ran hot enough for
// V8's optimizing tier: without that, a run of ~1,000 turns pages in ~4 MB of the node
// binary's own code (TurboFan, measured per mapping in /proc/self/smaps) — Node's cost,
// the same with any module or none. The figure is the session's peak RSS (getrusage
// maxrss) over that baseline: stricter than over the warm-up's peak, which is higher than
// what is resident after it. V8 heap figures come from v8.getHeapStatistics; the growth at
// the end of the run is split into anonymous memory (heaps: the module's, V8's) and
// file-backed pages (code).

const { spawnSync } = require('node:child_process');
const v8 = require('node:v8');

const TEXT = '北京今天晴，气温 12 到 21 度；The quick brown fox jumps over the lazy dog. "quoted" 深圳多云。\n';
const RESULT = Array.from({ length: 400 }, (_, i) => [...TEXT][i % [...TEXT].length]).join('');

/** REASONING=min-max: the reasoning of answer k, or null. */
const REASONING = (process.env.REASONING || '').split('-').map(Number).filter((v) => v > 0);
function reasoningOf(k) {
  if (REASONING.length === 0) return null;
  const [min, max] = [REASONING[0], REASONING[1] || REASONING[0]];
  const tokens = min + ((k * 7919) % (max - min + 1));
  const unit = `Step ${k}: check the lookup result before the next call. `;
  return unit.repeat(Math.ceil((tokens * 4) / unit.length)).slice(0, tokens * 4);
}

function mb(bytes) {
  return (bytes / 1e6).toFixed(2);
}

/** WIRE=anthropic: the same turns on the Anthropic Messages wire (a whole JSON answer per
 * call, with the usage Anthropic always reports, cache counts included). */
const anthropic = process.env.WIRE === 'anthropic';

function anthropicAnswer(k, n) {
  const usage = { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const content = k < n
    ? [{ type: 'tool_use', id: `toolu_${k}`, name: 'lookup', input: { key: `k${k}` } }]
    : [{ type: 'text', text: 'done' }];
  const reasoning = k < n ? reasoningOf(k) : null;
  if (reasoning !== null) content.unshift({ type: 'thinking', thinking: reasoning, signature: `EqQB${k}sig` });
  return JSON.stringify({ id: `msg_${k}`, type: 'message', role: 'assistant', model: 'claude-test-1', content, stop_reason: k < n ? 'tool_use' : 'end_turn', usage });
}

/** STREAM=1 (OpenAI-compatible wire): each answer streamed through the sink as SSE, the
 * call's arguments in two deltas, with the usage chunk `include_usage` asks for. */
const stream = process.env.STREAM === '1' && !anthropic;

function streamedAnswer(support, k, n) {
  const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
  if (k >= n) return support.textStream(['do', 'ne'], usage);
  const call = (delta) => support.sseEvent({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, ...delta }] }, finish_reason: null }] });
  const reasoning = reasoningOf(k);
  const thought = reasoning === null ? [] : [support.sseEvent({ choices: [{ index: 0, delta: { role: 'assistant', content: null, reasoning_content: reasoning }, finish_reason: null }] })];
  return [
    ...thought,
    call({ id: `call_${k}`, type: 'function', function: { name: 'lookup', arguments: '' } }),
    call({ function: { arguments: '{"key":' } }),
    call({ function: { arguments: `"k${k}"}` } }),
    support.sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
    support.sseEvent({ choices: [], usage }),
    support.sseEvent('[DONE]'),
  ];
}

async function session(native, support, n) {
  let last = 0;
  let k = 0;
  const asString = process.env.BODY === 'string';
  const transport = (request, sink) => {
    last = asString ? Buffer.byteLength(request.body) : request.bodyBytes.byteLength;
    if (process.env.GC_EACH && global.gc) global.gc();
    k += 1;
    const body = anthropic ? anthropicAnswer(k, n) : k < n
      ? support.completion({ toolCalls: [{ id: `call_${k}`, name: 'lookup', arguments: { key: `k${k}` } }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } })
      : support.completion({ content: 'done', usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } });
    const reasoning = !anthropic && k < n ? reasoningOf(k) : null;
    if (reasoning !== null && !stream) {
      const whole = JSON.parse(body);
      whole.choices[0].message.reasoning_content = reasoning;
      return { status: 200, headers: [], body: JSON.stringify(whole) };
    }
    if (stream) {
      const events = streamedAnswer(support, k, n);
      setImmediate(() => {
        for (const event of events) sink.write(event);
        sink.end();
      });
      return { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], streamed: true };
    }
    return { status: 200, headers: [], body };
  };
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('lookup', 'Looks a fact up.', JSON.stringify({ type: 'object', properties: { key: { type: 'string' } } })), async () => ({ content: RESULT }));
  const model = support.modelConfig();
  if (anthropic) model.wireFormat = 'anthropic';
  model.stream = stream;
  const config = support.runtimeConfig({ model, systemPrompt: 'You are a helpful assistant. Use the lookup tool whenever a fact is needed.' });
  config.maxIterations = n;
  const runtime = new native.AgentRuntime(config, transport, tools);
  const outcome = await runtime.run('Look up the facts one by one, then summarize.');
  if (outcome.iterations !== n) throw new Error(`ran ${outcome.iterations} of ${n} turns`);
  return { runtime, last };
}

/** Anonymous and file-backed resident bytes now (/proc/self/status; 0 where unavailable). */
function residency() {
  let text = '';
  try {
    text = require('node:fs').readFileSync('/proc/self/status', 'utf8');
  } catch {
    return { anon: 0, file: 0 };
  }
  const kb = (name) => Number((text.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm')) || [0, 0])[1]) * 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile') };
}

/** What the transport does per turn, without the module: V8 optimizes it (and pages in its
 * optimizing compiler's code) before the measurement. Keeps nothing. */
function tierUp(support, calls) {
  let bytes = 0;
  for (let k = 0; k < calls; k += 1) {
    bytes += support.completion({ toolCalls: [{ id: `call_${k}`, name: 'lookup', arguments: { key: `k${k}` } }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }).length;
    if (anthropic) bytes += anthropicAnswer(k, calls).length;
    if (stream) bytes += streamedAnswer(support, k, calls).join('').length;
  }
  return bytes;
}

async function child(n) {
  const support = require('../support');
  const { native } = support;
  await session(native, support, 2); // warm-up: module, executor threads
  tierUp(support, 3000); // warm-up: V8's optimizing tier
  if (global.gc) global.gc();
  const before = residency();
  const v8Before = v8.getHeapStatistics().total_physical_size;
  const baseline = process.memoryUsage().rss;
  const { runtime, last } = await session(native, support, n);
  const peak = process.resourceUsage().maxRSS * 1024;
  const after = residency();
  const heap = v8.getHeapStatistics();
  const goal = 2 * last + 5e6;
  const over = peak - baseline;
  console.log(
    `node turns ${String(n).padStart(6)} | ${process.env.BODY === 'string' ? 'body as string' : 'bodyBytes'}${anthropic ? ' | anthropic' : ''}${stream ? ' | streamed' : ''}${REASONING.length ? ` | reasoning ${process.env.REASONING}` : ''} | last body ${mb(last).padStart(6)} MB | peak RSS ${mb(peak).padStart(7)} MB `
    + `(baseline ${mb(baseline)} MB; over baseline ${mb(over)} MB = ${(over / last).toFixed(1)}× body; goal ≤ ${mb(goal)} MB: ${over <= goal ? 'met' : 'MISSED'}) `
    + `| V8 heap used ${mb(heap.used_heap_size)} MB, external ${mb(heap.external_memory)} MB, physical ${mb(heap.total_physical_size - v8Before)} MB over the baseline's `
    + `| at the end over the baseline's: anonymous ${mb(after.anon - before.anon)} MB, file-backed ${mb(after.file - before.file)} MB (Node paging in its own code)`,
  );
  void runtime;
}

async function main() {
  if (process.env.ARKAGENT_MEMORY_BENCH_CHILD) {
    await child(Number(process.env.ARKAGENT_MEMORY_BENCH_CHILD));
    return;
  }
  const sizes = process.argv.slice(2).map(Number).filter((x) => x > 0);
  const rounds = Math.max(1, Number(process.env.ROUNDS || 3));
  for (const n of sizes.length > 0 ? sizes : [500, 2000, 10000]) {
    const overs = [];
    let goal = 0;
    for (let round = 0; round < rounds; round += 1) {
      const r = spawnSync(process.execPath, ['--expose-gc', __filename], { env: { ...process.env, ARKAGENT_MEMORY_BENCH_CHILD: String(n) }, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`the ${n}-turn session failed (${r.status})`);
      process.stdout.write(r.stdout);
      overs.push(Number(r.stdout.match(/over baseline ([0-9.]+) MB/)[1]));
      goal = Number(r.stdout.match(/goal ≤ ([0-9.]+) MB/)[1]);
    }
    // The allocator's and V8's threads make one round's figure vary by ~1 MB at 10,000
    // turns: the median of the rounds is the figure (each round a fresh process).
    const median = [...overs].sort((a, b) => a - b)[Math.floor(overs.length / 2)];
    console.log(`node turns ${String(n).padStart(6)} | median of ${rounds} round(s): over baseline ${median.toFixed(2)} MB (rounds ${overs.map((o) => o.toFixed(2)).join(' / ')}; goal ≤ ${goal.toFixed(2)} MB: ${median <= goal ? 'met' : 'MISSED'})`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
