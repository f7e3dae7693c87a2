'use strict';
// REL-6 (issue 42 item 2): random call sequences over the N-API module, as an app makes
// them — runs started on several runtimes, the host's HTTP requests answered in any order
// (text, tool calls, errors, garbage), cancels, exports imported elsewhere, listeners that
// throw, compressions, rewinds, runtimes dropped and garbage-collected mid-run. A seeded
// PRNG decides every step, so a failing seed replays exactly. Oracles, not only "no crash":
// every rejection and throw carries a code of the module's ErrorCode union; every idle
// runtime's history stays paired (CORE-2); an export imports into a fresh runtime
// unchanged; at the end every run settles once its requests are answered.
// Used by tests/js/rel_6_napi_sequences.test.js (a short fixed budget) and
// scripts/napi-sequences.js (any number of seeds).

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

const { native, completion, API_KEY } = require('./support');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

const DTS = fs.readFileSync(path.join(__dirname, '..', '..', 'ohos', 'arkagent', 'src', 'main', 'cpp', 'types', 'libarkagent', 'index.d.ts'), 'utf8');
const CODES = new Set([...(/export type ErrorCode =([^;]*);/.exec(DTS)[1].matchAll(/'([a-z_]+)'/g))].map((m) => m[1]));
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** xorshift32: the sequence is a function of the seed. */
function prng(seed) {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return x % n;
  };
}

/** What the sequences did: settled calls by outcome, rejections by code. */
const stats = { fulfilled: 0, rejected: 0, codes: {} };

function checkCode(e, what) {
  stats.rejected += 1;
  if (e && e.code) stats.codes[e.code] = (stats.codes[e.code] || 0) + 1;
  assert.ok(e && typeof e.code === 'string' && CODES.has(e.code), `${what}: ${e && e.code} (${e && e.message}) is not a documented code`);
}

/** One runtime with a host that holds each request until a step answers it. */
function slot(index) {
  const pending = [];
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('echo', 'Echoes', '{"type":"object","properties":{"x":{"type":"string"}}}'),
    async (call) => {
      if (call.arguments.includes('throw')) throw new Error('the tool failed');
      return { content: `echo ${call.arguments}` };
    });
  const model = new native.ModelConfig('http://127.0.0.1:9/v1', API_KEY, 'm');
  // Retries stay (an overloaded answer is retried), with waits of a few ms.
  model.initialBackoffMs = 2;
  model.maxBackoffMs = 5;
  const config = new native.AgentRuntimeConfig(model);
  config.sessionId = `s${index}`;
  const rt = new native.AgentRuntime(config, (request) => new Promise((resolve, reject) => pending.push({ resolve, reject, request })), tools);
  return { rt, pending, runs: [], ids: [], subs: [] };
}

const reply = {
  text: (n) => ({ status: 200, body: JSON.stringify(completion({ content: `answer ${n}`, usage: { prompt_tokens: 50 + n, completion_tokens: 3, total_tokens: 53 + n } })) }),
  tool: (n) => ({ status: 200, body: JSON.stringify(completion({ toolCalls: [{ id: `call_${n}`, name: 'echo', arguments: { x: n % 3 === 0 ? 'throw' : `v${n}` } }], usage: { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65 } })) }),
  garbage: () => ({ status: 200, body: '{"choices":[{"index":0,"message":' }),
  overloaded: () => ({ status: 503, body: '{"error":{"message":"overloaded"}}' }),
};

/** Tracks a call's promise: a rejection must carry a documented code. */
function track(s, promise, what) {
  s.runs.push(promise.then((r) => { stats.fulfilled += 1; if (r && r.runId) s.ids.push(r.runId); }, (e) => checkCode(e, what)));
}

function idle(s) {
  return s.pending.length === 0;
}

/** The steps: each takes the PRNG, the slots and a counter. */
const STEPS = [
  (r, slots) => { const i = r(3); if (!slots[i]) slots[i] = slot(i); },
  (r, slots, n) => withSlot(slots, r, (s) => track(s, s.rt.run(`question ${n}`), 'run')),
  (r, slots) => withSlot(slots, r, (s) => track(s, s.rt.runParts([native.ContentPart.text('and this?'), native.ContentPart.image(PNG)]), 'runParts')),
  (r, slots, n) => withSlot(slots, r, (s) => { const p = s.pending.shift(); if (p) p.resolve(reply.text(n)); }),
  (r, slots, n) => withSlot(slots, r, (s) => { const p = s.pending.shift(); if (p) p.resolve(reply.tool(n)); }),
  (r, slots) => withSlot(slots, r, (s) => { const p = s.pending.shift(); if (p) p.reject(Object.assign(new Error('socket closed'), { code: 'transport' })); }),
  (r, slots) => withSlot(slots, r, (s) => { const p = s.pending.shift(); if (p) p.resolve(r(2) ? reply.garbage() : reply.overloaded()); }),
  (r, slots) => withSlot(slots, r, (s) => s.rt.cancel()),
  (r, slots) => withSlot(slots, r, (s) => {
    let exported;
    try { exported = s.rt.exportState(); } catch (e) { checkCode(e, 'exportState'); return; }
    const fresh = slot(9);
    track(fresh, fresh.rt.importState(exported).then(() => {
      assert.deepEqual(JSON.parse(fresh.rt.exportState()).history, JSON.parse(exported).history, 'an export imports unchanged');
      assert.equal(native.toolCallsPaired(fresh.rt.historyJson()), true, 'an imported export is paired');
    }), 'importState');
  }),
  (r, slots) => withSlot(slots, r, (s) => {
    if (r(2)) s.subs.push(s.rt.subscribe(() => { throw new Error('a listener that throws'); }));
    else if (s.subs.length) s.rt.unsubscribe(s.subs.pop());
  }),
  (r, slots) => withSlot(slots, r, (s) => track(s, s.rt.compressNow(), 'compressNow')),
  (r, slots) => withSlot(slots, r, (s) => {
    const id = s.ids[r(s.ids.length + 1)] || 'no-such-run';
    track(s, r(2) ? s.rt.regenerate(id) : s.rt.editAndResend(id, 'edited'), 'rewind gesture');
  }),
  (r, slots) => { const i = r(3); if (slots[i] && r(4) === 0) { slots[i].dropped = true; slots[i] = undefined; gc(); } },
  (r, slots) => withSlot(slots, r, (s) => {
    if (!idle(s)) return;
    try {
      assert.equal(native.toolCallsPaired(s.rt.historyJson()), true, 'an idle history is paired');
    } catch (e) {
      if (!(e instanceof assert.AssertionError)) checkCode(e, 'historyJson'); else throw e;
    }
  }),
];

function withSlot(slots, r, f) {
  const s = slots[r(slots.length)];
  if (s) f(s);
}

/** Runs `steps` random steps from `seed`, then answers everything until all settles. */
async function runSequence(seed, steps) {
  const r = prng(seed);
  const slots = [slot(0), undefined, undefined];
  const all = [];
  for (let n = 0; n < steps; n++) {
    STEPS[r(STEPS.length)](r, slots, n);
    for (const s of slots) if (s) all.push(s);
    if (r(4) === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  // Settle: answer every request with text until every run has settled.
  const live = [...new Set(all)];
  let done = false;
  Promise.allSettled(live.flatMap((s) => s.runs)).then(() => { done = true; });
  const deadline = Date.now() + 20000;
  for (let k = 0; !done && Date.now() < deadline; k++) {
    for (const s of live) while (s.pending.length) s.pending.shift().resolve(reply.text(k));
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  for (const s of live) {
    assert.ok(done, `seed ${seed}: every run settles once its requests are answered`);
    for (const outcome of await Promise.allSettled(s.runs)) assert.equal(outcome.status, 'fulfilled', `seed ${seed}: ${outcome.reason}`);
    assert.equal(native.toolCallsPaired(s.rt.historyJson()), true, `seed ${seed}: paired at the end`);
  }
  gc();
}

module.exports = { runSequence, STEPS, stats };
