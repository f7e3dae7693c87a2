'use strict';
// REL-6 (issue 42 item 2): random call sequences over the N-API module, as an app makes
// them — runs started on several runtimes (with a custom compressor called on every
// attempt, a session in a shared store, delegation to a clone), the host's HTTP requests
// answered in any order (text, tool calls — one that waits for a person, a delegation —,
// errors, garbage), compressor promises resolved, resolved twice, rejected, thrown or never
// answered, approvals answered (approve, edited, reject, twice, an unknown call), paused turns
// resumed or closed, sub-agents force-completed and closed, decomposed jobs, stores
// detached, cancels, exports imported elsewhere, listeners that throw, compressions,
// rewinds, regenerations, forks, runtimes dropped and garbage-collected mid-run whose
// transports answer after.
// A seeded PRNG decides every step, so a failing seed replays exactly. Oracles, not only
// "no crash": every rejection and throw carries a code of the module's ErrorCode union;
// every idle runtime's history stays paired (CORE-2); an export imports into a fresh
// runtime unchanged; at the end every run settles once its requests are answered (a
// compression nobody answers, once cancelled), the history is paired, and the totals'
// parent is the sum of the usages and total = parent + children (SUB-6); two answers to
// one call are made in the order given; a call that takes the run slot ("like run()") is
// never followed into the session by a run() made before it settled.
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
const stats = { fulfilled: 0, rejected: 0, codes: {}, reached: { compressions: 0, abandoned: 0, orphanAnswers: 0, approvals: 0, subAgentApprovals: 0, forced: 0, doubleTaps: 0, slotChecks: 0 } };

function checkCode(e, what) {
  stats.rejected += 1;
  if (e && e.code) stats.codes[e.code] = (stats.codes[e.code] || 0) + 1;
  assert.ok(e && typeof e.code === 'string' && CODES.has(e.code), `${what}: ${e && e.code} (${e && e.message}) is not a documented code`);
}

/** The store sessions of every runtime created with one share (a store in memory). */
const STORE = native.SessionStore.openMemory();

/**
 * One runtime with a host that holds each request until a step answers it. `variant`
 * (bits): 1 a custom compressor called on every attempt, whose answers wait for a step
 * (and which throws now and then); 2 the session in the shared store; 4 delegation to a
 * clone. Every runtime has `echo` and `ask` (which waits for a person).
 */
function slot(index, variant = 0) {
  const pending = [];
  const compressions = [];
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('echo', 'Echoes', '{"type":"object","properties":{"x":{"type":"string"}}}'),
    async (call) => {
      if (call.arguments.includes('throw')) throw new Error('the tool failed');
      return { content: `echo ${call.arguments}` };
    });
  const ask = new native.ToolDefinition('ask', 'Asks a person first', '{"type":"object"}');
  ask.requiresApproval = true;
  tools.register(ask, async () => ({ content: 'asked and done' }));
  const model = new native.ModelConfig('http://127.0.0.1:9/v1', API_KEY, 'm');
  // Retries stay (an overloaded answer is retried), with waits of a few ms.
  model.initialBackoffMs = 2;
  model.maxBackoffMs = 5;
  const config = new native.AgentRuntimeConfig(model);
  config.sessionId = `s${index}-${++created}`;
  if (variant & 1) {
    config.setCustomCompressor((stateJson) => {
      JSON.parse(stateJson);
      if (compressions.throwNext) { compressions.throwNext = false; throw new Error('a compressor that throws'); }
      return new Promise((resolve, reject) => compressions.push({ resolve, reject, stateJson }));
    }, 0);
  }
  if (variant & 4) config.allowClone = true;
  const transport = (request) => new Promise((resolve, reject) => pending.push({ resolve, reject, request }));
  const rt = variant & 2 ? new native.AgentRuntime(config, transport, tools, STORE) : new native.AgentRuntime(config, transport, tools);
  return { rt, pending, compressions, abandoned: 0, runs: [], ids: [], subs: [] };
}
let created = 0;

const reply = {
  text: (n) => ({ status: 200, body: completion({ content: `answer ${n}`, usage: { prompt_tokens: 50 + n, completion_tokens: 3, total_tokens: 53 + n } }) }),
  tool: (n) => ({ status: 200, body: completion({ toolCalls: [{ id: `call_${n}`, name: 'echo', arguments: { x: n % 3 === 0 ? 'throw' : `v${n}` } }], usage: { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65 } }) }),
  ask: (n) => ({ status: 200, body: completion({ toolCalls: [{ id: `ask_${n}`, name: 'ask', arguments: {} }, { id: `echo_${n}`, name: 'echo', arguments: { x: 'v' } }], usage: { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65 } }) }),
  delegate: (n) => ({ status: 200, body: completion({ toolCalls: [{ id: `del_${n}`, name: 'delegate_task', arguments: { assignee: 'clone', task_description: `look up ${n}` } }], usage: { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65 } }) }),
  garbage: () => ({ status: 200, body: '{"choices":[{"index":0,"message":' }),
  overloaded: () => ({ status: 503, body: '{"error":{"message":"overloaded"}}' }),
};

/** Tracks a call's promise: a rejection must carry a documented code. */
function track(s, promise, what) {
  s.runs.push(promise.then((r) => { stats.fulfilled += 1; if (r && r.runId) s.ids.push(r.runId); }, (e) => checkCode(e, what)));
}

/**
 * `promise` is of a call that takes the run slot before returning (run(), the gestures,
 * compressNow(), importState(): "like run()"); a run() made right after it, before it
 * settles, is refused: never both fulfilled.
 */
function trackHoldingTheSlot(s, promise, what) {
  const early = s.rt.run('too early');
  s.runs.push(Promise.allSettled([promise, early]).then(([p, q]) => {
    for (const [o, label] of [[p, what], [q, `run() right after ${what}`]]) {
      if (o.status === 'rejected') checkCode(o.reason, label);
      else { stats.fulfilled += 1; if (o.value && o.value.runId) s.ids.push(o.value.runId); }
    }
    assert.ok(p.status === 'rejected' || q.status === 'rejected', `${what} let a run() in before it settled`);
    if (p.status === 'fulfilled') stats.reached.slotChecks += 1;
  }));
}

let forks = 0;

/** The steps: each takes the PRNG, the slots and a counter. */
const STEPS = [
  (r, slots) => { const i = r(3); if (!slots[i]) slots[i] = slot(i, r(8)); },
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
      const committed = JSON.parse(fresh.rt.exportState()).history.messages;
      assert.equal(native.toolCallsPaired(JSON.stringify(committed)), true, 'an imported export is paired');
      // historyJson(): the committed history, then a paused turn's answer (TOOL-1).
      const paused = JSON.parse(exported).pending_turn;
      assert.deepEqual(JSON.parse(fresh.rt.historyJson()), paused ? [...committed, paused.assistant] : committed, 'the live history of an import');
    }), 'importState');
  }),
  (r, slots) => withSlot(slots, r, (s) => {
    if (r(2)) s.subs.push(s.rt.subscribe(() => { throw new Error('a listener that throws'); }));
    else if (s.subs.length) s.rt.unsubscribe(s.subs.pop());
  }),
  (r, slots) => withSlot(slots, r, (s) => (r(2) ? track : trackHoldingTheSlot)(s, s.rt.compressNow(), 'compressNow')),
  (r, slots) => withSlot(slots, r, (s) => {
    const id = s.ids[r(s.ids.length + 1)] || 'no-such-run';
    (r(2) ? track : trackHoldingTheSlot)(s, r(2) ? s.rt.regenerate(id) : s.rt.editAndResend(id, 'edited'), 'rewind gesture');
  }),
  (r, slots) => withSlot(slots, r, (s) => {
    const id = s.ids[r(s.ids.length + 1)] || 'no-such-run';
    const gesture = r(2) ? s.rt.rewind(id) : s.rt.fork(`fork-${forks++}`, r(2) ? id : undefined);
    (r(2) ? track : trackHoldingTheSlot)(s, gesture, 'rewind or fork');
  }),
  (r, slots) => {
    const i = r(3);
    if (slots[i] && r(4) === 0) {
      // Dropped mid-run and collected; its transport answers later (orphans).
      orphans.push(slots[i]);
      slots[i].dropped = true;
      slots[i] = undefined;
      gc();
    }
  },
  (r, slots, n) => {
    // A transport that answers after its runtime was dropped and collected.
    const o = orphans[r(orphans.length + 1)];
    const p = o && o.pending.shift();
    if (p) { stats.reached.orphanAnswers += 1; (r(2) ? p.resolve(reply.text(n)) : p.reject(new Error('gone'))); }
  },
  (r, slots, n) => withSlot(slots, r, (s) => { const p = s.pending.shift(); if (p) p.resolve(r(2) ? reply.ask(n) : reply.delegate(n)); }),
  (r, slots) => withSlot(slots, r, (s) => answerCompression(s, r)),
  (r, slots) => withSlot(slots, r, (s) => approvalStep(s, r)),
  (r, slots) => withSlot(slots, r, (s) => subAgentStep(s, r)),
  // The committed history (an export's) is paired at any moment, mid-run included (CORE-2,
  // CORE-6); historyJson() also shows an open or paused turn.
  (r, slots) => withSlot(slots, r, (s) => {
    const messages = JSON.parse(s.rt.exportState()).history.messages;
    assert.equal(native.toolCallsPaired(JSON.stringify(messages)), true, 'an export is paired at any moment');
  }),
];

/** Runtimes dropped with requests in flight: their transports may still answer. */
const orphans = [];

const SKIPPED = JSON.stringify({ outcome: 'skipped' });

/** Answers a waiting compression: skipped, twice, with garbage, rejected, or never. */
function answerCompression(s, r) {
  const c = s.compressions.shift();
  if (!c) { s.compressions.throwNext = r(4) === 0; return; }
  stats.reached.compressions += 1;
  const messages = JSON.parse(c.stateJson).history.messages;
  const split = native.computeSafeSplitIndex(JSON.stringify(messages), 2);
  switch (r(6)) {
    case 0: c.resolve(SKIPPED); break;
    case 1: c.resolve(SKIPPED); c.resolve(JSON.stringify({ outcome: 'failed' })); c.reject(new Error('late')); break;
    case 2: c.resolve(split > 0 ? JSON.stringify({ outcome: 'compressed', split_index: split, summary: 'what was said' }) : SKIPPED); break;
    case 3: c.resolve('{"outcome":'); break;
    case 4: c.reject(new Error('no summary today')); break;
    default: s.abandoned += 1; stats.reached.abandoned += 1; // never answered: only a cancel ends the attempt
  }
}

async function settled(promise, what) {
  try { return await promise; } catch (e) { checkCode(e, what); return undefined; }
}

/** Answers the first waiting approval (approve, edited, reject, twice, unknown) or closes the turn, or resumes. */
function approvalStep(s, r) {
  let waiting;
  try { waiting = s.rt.pendingApprovals(); } catch (e) { checkCode(e, 'pendingApprovals'); return; }
  const id = waiting.length && r(4) ? waiting[0].callId : 'no-such-call';
  if (waiting.length) stats.reached.approvals += 1;
  switch (r(6)) {
    case 5: s.runs.push(doubleTap(s, id)); break;
    case 0: s.runs.push(settled(s.rt.approve(id), 'approve')); break;
    case 1: s.runs.push(settled(s.rt.approve(id, '{"edited":true}'), 'approve edited')); break;
    case 2: s.runs.push(settled(s.rt.reject(id, 'not now'), 'reject')); break;
    case 3: s.runs.push(settled(s.rt.cancelApprovals(), 'cancelApprovals')); break;
    default: track(s, s.rt.resumeRun(), 'resumeRun');
  }
}

/**
 * A dialog tapped twice: approve then reject, not awaited. Answers are made in the order
 * they were given: never both, and never the second with the first refused as already
 * answered (the second overtaking the first).
 */
async function doubleTap(s, id) {
  const [first, second] = await Promise.allSettled([s.rt.approve(id), s.rt.reject(id, 'tapped twice')]);
  if (first.status === 'rejected') checkCode(first.reason, 'approve (first tap)');
  if (second.status === 'rejected') checkCode(second.reason, 'reject (second tap)');
  assert.ok(first.status === 'rejected' || second.status === 'rejected', `${id}: two taps, two answers`);
  const overtaken = first.status === 'rejected' && first.reason.code === 'approval_already_answered';
  assert.ok(!(overtaken && second.status === 'fulfilled'), `${id}: the second tap answered before the first`);
  if (first.status === 'fulfilled') stats.reached.doubleTaps += 1;
}

/** Sub-agents: force-completes the first running one, closes them all, or runs a decomposed job. */
function subAgentStep(s, r) {
  switch (r(4)) {
    case 0: {
      const active = s.rt.subAgents().active;
      const found = s.rt.forceCompleteSubAgent(active.length ? active[0].id : 'no-such-child', 'the user left');
      assert.equal(found, active.length > 0 && found, 'an unknown child is not found');
      if (found) stats.reached.forced += 1;
      break;
    }
    case 1: assert.equal(typeof s.rt.closeSubAgents(), 'number'); break;
    case 2: try { s.rt.detachStore(); } catch (e) { checkCode(e, 'detachStore'); } break;
    default: track(s, s.rt.runDecomposed([{ assignee: 'clone', taskDescription: 'a' }, { assignee: 'clone', taskDescription: 'b' }], 2), 'runDecomposed');
  }
}

/** A person answers every sub-agent call waiting for approval (they wait while their run goes on). */
function approveSubAgentCalls(s) {
  let waiting = [];
  try { waiting = s.rt.pendingApprovals(); } catch (e) { checkCode(e, 'pendingApprovals'); }
  for (const w of waiting) {
    if (!w.path.length) continue;
    stats.reached.subAgentApprovals += 1;
    s.runs.push(settled(s.rt.approve(w.callId), 'approve a sub-agent call'));
  }
}

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
    for (const s of live) {
      while (s.pending.length) s.pending.shift().resolve(reply.text(k));
      while (s.compressions.length) s.compressions.shift().resolve(SKIPPED);
      approveSubAgentCalls(s);
      // A compression its compressor never answers waits until the run is cancelled.
      if (s.abandoned && k === 50) s.rt.cancel();
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  for (const o of orphans.splice(0)) while (o.pending.length) o.pending.shift().resolve(reply.text(0));
  for (const s of live) {
    assert.ok(done, `seed ${seed}: every run settles once its requests are answered`);
    for (const outcome of await Promise.allSettled(s.runs)) assert.equal(outcome.status, 'fulfilled', `seed ${seed}: ${outcome.reason}`);
    if (s.dropped) continue;
    const state = JSON.parse(s.rt.exportState());
    assert.equal(native.toolCallsPaired(JSON.stringify(state.history.messages)), true, `seed ${seed}: paired at the end`);
    const totals = s.rt.totalUsage();
    assert.deepEqual(totals.parent, native.sumUsages(s.rt.usages()), `seed ${seed}: the parent's totals are the sum of its usages`);
    for (const k of ['promptTokens', 'completionTokens', 'totalTokens', 'cachedTokens', 'reasoningTokens', 'callCount', 'pricedCallCount']) {
      assert.equal(totals.total[k], totals.parent[k] + totals.children[k], `seed ${seed}: total.${k} = parent + children`);
    }
  }
  gc();
}

module.exports = { runSequence, STEPS, stats };
