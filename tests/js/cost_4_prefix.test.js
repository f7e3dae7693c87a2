'use strict';
// COST-4 through the N-API surface, on the exact bodies the JS transport receives
// (checks in tests/js/prefix.js): between compressions every request extends the
// previous one; after a compression the system prompt and the tools stay first; after
// importState, and after a process SIGKILLed on its SessionStore is restarted, the next
// request is byte for byte the uninterrupted session's.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const { chatCompletions, checkSequence, assertSameRequest } = require('./prefix');
const { prefixRuntime } = require('./cost_4_session');
const { MODULE_PATH, isSummaryRequest } = require('./support');

/** The main (non-summary) bodies and, per body, whether a compression came before it:
 * the snapshot the request carries (its snapshot_id) changed. */
function mainBodies(bodies) {
  const main = bodies.filter((b) => !isSummaryRequest(JSON.parse(b)));
  const snapshotOf = (b) => (b.match(/snapshot_id ([^,]+), (\d+) episode/) || [])[0] || '';
  return { main, compressedBefore: main.map((b, i) => i > 0 && snapshotOf(b) !== snapshotOf(main[i - 1])) };
}

/** The bodies of run `k` (from `runStarts`: the body count before each run). */
const bodiesOfRun = (bodies, runStarts, k) => bodies.slice(runStarts[k], runStarts[k + 1] ?? bodies.length);

async function runs(runtime, bodies, from, to) {
  const starts = [];
  for (let i = from; i < to; i++) {
    starts[i] = bodies.length;
    await runtime.run(`task ${i}`);
  }
  return starts;
}

test('COST-4 between compressions every request extends the last; after one, the system prompt and tools stay first', async () => {
  const { runtime, bodies } = prefixRuntime({ compress: true });
  await runs(runtime, bodies, 0, 24);
  const { main, compressedBefore } = mainBodies(bodies);
  const { extended, crossed } = checkSequence(chatCompletions, main, compressedBefore);
  assert.ok(crossed >= 2 && extended >= 30, `${extended} extensions and ${crossed} compressions checked`);
});

test('COST-4 after importState the next request is the uninterrupted session\'s, byte for byte', async () => {
  const a = prefixRuntime();
  await runs(a.runtime, a.bodies, 0, 6);
  const exported = a.runtime.exportState();
  const before = a.bodies.length;
  await a.runtime.run('task 6');
  const b = prefixRuntime();
  await b.runtime.importState(exported);
  await b.runtime.run('task 6');
  const reference = a.bodies.slice(before);
  assert.equal(reference.length, 2);
  assert.equal(b.bodies.length, 2);
  reference.forEach((want, i) => assertSameRequest(want, b.bodies[i]));
});

test('COST-4 a process SIGKILLed on its store and restarted sends the uninterrupted session\'s next request', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-cost4-'));
  const db = path.join(dir, 'kill.db');
  const child = spawn(process.execPath, [path.join(__dirname, 'cost_4_child.js'), db, '0', '6'], {
    env: { ...process.env, ARKAGENT_NODE: MODULE_PATH },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => { out += d; if (out.includes('READY')) resolve(); });
    child.on('exit', (code) => reject(new Error(`the child exited (${code}) before READY`)));
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal)));
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');

  const resumed = prefixRuntime({ storePath: db });
  await resumed.runtime.run('task 6');
  const reference = prefixRuntime();
  const starts = await runs(reference.runtime, reference.bodies, 0, 7);
  const want = bodiesOfRun(reference.bodies, starts, 6);
  assert.equal(want.length, 2);
  assert.equal(resumed.bodies.length, 2);
  want.forEach((body, i) => assertSameRequest(body, resumed.bodies[i]));
  fs.rmSync(dir, { recursive: true, force: true });
});
