'use strict';
// README promises of "## Durable sessions", "## What a conversation costs" and
// "## Regenerate, edit, fork" (with the matching index.d.ts doc comments) that no other
// Node test checked, driven through the public N-API surface as a stranger with only the
// docs would: stores reopened after a SIGKILL, locks across processes, a full disk and a
// read-only file, a store written by an old version, prices across resumes and workers,
// provider counts that disagree with ours, Anthropic cache writes, the summarizer's
// cache-sharing rule, threshold 0, and the chat gestures across restarts and kills.
// Each test quotes the sentence it checks.
//
// When READMEPROMISES_CHILD is set this file is the child process of one of the tests
// (see the `children` table at the bottom).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const {
  native, API_KEY, BASE_URL, MODEL, completion, snapshot, pairingProblems, ScriptedModel, RoutedModel, runtimeConfig,
  offeredTools, isSummaryRequest, isPrefixSummaryRequest, isTranscriptSummaryRequest, waitFor, deferred, longWeatherChat,
} = require('./support');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const OBJECT_SCHEMA = '{"type":"object"}';
const lastUser = (body) => [...body.messages].reverse().find((m) => m.role === 'user').content;

function lookupRegistry(execute = async (call) => ({ content: `result for ${JSON.parse(call.argumentsJson).q}` })) {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('lookup', 'Looks something up', OBJECT_SCHEMA), execute);
  return registry;
}

function sessionConfig(sessionId, options) {
  const c = runtimeConfig(options);
  c.sessionId = sessionId;
  return c;
}

// ------------------------------------------------------------------ child processes

/** Holds session `held` (after one committed run) until killed. */
async function holdChild(db) {
  const store = native.SessionStore.open(db);
  const model = new ScriptedModel([() => completion({ content: 'held answer', usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } })]);
  const runtime = new native.AgentRuntime(sessionConfig('held'), model.transport, new native.ToolRegistry(), store);
  await runtime.run('held question');
  process.send({ holding: true });
  setInterval(() => {}, 1000);
}

/** Runs one turn whose tool never returns; reports each commit and the tool's start. */
async function toolChild(db) {
  const store = native.SessionStore.open(db);
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { q: 'flour' } }], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } }),
  ], { tools: ['lookup'] });
  const tools = lookupRegistry(async () => {
    process.send({ inTool: true });
    return new Promise(() => {});
  });
  const runtime = new native.AgentRuntime(sessionConfig('paired'), model.transport, tools, store);
  runtime.subscribe((e) => { if (e.type === 'session_committed') process.send({ commit: JSON.parse(e.payloadJson) }); });
  await runtime.run('hello before the crash');
}

/** Runs, and between runs regenerates, edits, rewinds or forks at a random run — forever. */
async function gesturesChild(db) {
  const store = native.SessionStore.open(db);
  let n = 0;
  const transport = async (request) => {
    await sleep(Math.random() * 3);
    const body = JSON.parse(request.body);
    n += 1;
    const usage = { prompt_tokens: 20 + n, completion_tokens: 2, total_tokens: 22 + n };
    const reply = body.messages.at(-1).role === 'user'
      ? completion({ toolCalls: [{ id: `c${process.pid}_${n}`, name: 'lookup', arguments: { q: `q${n}` } }], usage })
      : completion({ content: `answer ${n}`, usage });
    return { status: 200, body: reply };
  };
  const runtime = new native.AgentRuntime(sessionConfig('gestures'), transport, lookupRegistry(), store);
  process.send({ ready: true });
  for (let step = 0; ; step += 1) {
    const runs = (JSON.parse(runtime.exportState()).runs || []).map((r) => r.run_id);
    const pick = runs[Math.floor(Math.random() * runs.length)];
    const k = Math.floor(Math.random() * 6);
    /* eslint-disable no-await-in-loop */
    if (pick && k === 0) await runtime.regenerate(pick);
    else if (pick && k === 1) await runtime.editAndResend(pick, `edit ${step}`);
    else if (pick && k === 2) await runtime.rewind(pick);
    else if (pick && k === 3) await runtime.fork(`fork-${process.pid}-${step}`, pick);
    else await runtime.run(`task ${step}`);
    process.send({ step });
    /* eslint-enable no-await-in-loop */
  }
}

const children = { hold: holdChild, tool: toolChild, gestures: gesturesChild };

if (process.env.READMEPROMISES_CHILD) {
  children[process.env.READMEPROMISES_CHILD](process.argv[2])
    .catch((e) => { process.stderr.write(`child failed: ${e.code} ${e.stack}\n`); process.exit(3); });
} else {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const { fork, execFileSync } = require('node:child_process');

  const dirs = [];
  function tempDir(tag) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `arkagent-readme-sc-${tag}-`));
    dirs.push(dir);
    return dir;
  }
  test.after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a child of this file in `mode`; `messages` collects what it sends. */
  function startChild(mode, db) {
    const child = fork(__filename, [db], {
      env: { ...process.env, READMEPROMISES_CHILD: mode },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const messages = [];
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('message', (m) => messages.push(m));
    const exited = new Promise((r) => child.on('exit', (code, signal) => r({ code, signal })));
    return {
      child, messages, exited, stderr: () => stderr,
      async kill() {
        child.kill('SIGKILL');
        const { signal } = await exited;
        assert.equal(signal, 'SIGKILL', `the child was killed (stderr: ${stderr})`);
      },
    };
  }

  function assertCode(fn, code, what) {
    assert.throws(fn, (e) => {
      assert.equal(e.code, code, `${what}: code ${e.code} (${e.message})`);
      return true;
    }, what);
  }

  /**
   * Bytes of every file of `dir`, by name, but SQLite's `-shm` (its shared-memory WAL index:
   * read marks that any reader updates through its mapping, rebuilt from the WAL; no data).
   */
  function snapshotDir(dir) {
    return Object.fromEntries(fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isFile() && !n.endsWith('-shm'))
      .map((n) => [n, fs.readFileSync(path.join(dir, n))]));
  }

  function priced(model, currency, input, cached, output, extra = {}) {
    const config = new native.ModelConfig(BASE_URL, API_KEY, model);
    if (currency) config.price = { currency, inputPerMillion: input, cachedInputPerMillion: cached, outputPerMillion: output, ...extra };
    return config;
  }

  function usage(prompt, cached, out, reasoning) {
    const u = { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out, prompt_tokens_details: { cached_tokens: cached } };
    if (reasoning !== undefined) u.completion_tokens_details = { reasoning_tokens: reasoning };
    return u;
  }

  const costsOf = (summary) => (summary.costs || []).map((c) => ({ currency: c.currency, nanos: c.nanos }));
  const plain = (x) => JSON.parse(JSON.stringify(x));

  // ================================================================== Durable sessions

  // "writes the session at its natural commit points and nowhere else: the user message
  // with the run start; each assistant message together with its tool results, once the
  // turn is paired" … "each is announced by a `session_committed` event … everything up to
  // it survives the app being killed."
  test('store_2_store_3_js_a_turn_whose_tool_is_still_running_is_not_committed_and_a_kill_then_reopens_at_the_run_start', async () => {
    const dir = tempDir('tool');
    const db = path.join(dir, 'sessions.db');
    const c = startChild('tool', db);
    try {
      await waitFor(() => c.messages.some((m) => m.inTool) || c.child.exitCode !== null, 'the tool to start', 20000);
      assert.equal(c.child.exitCode, null, `the child runs: ${c.stderr()}`);
      await sleep(100); // a commit of the unpaired turn, were there one, would land now
      const reader = native.SessionStore.open(db);
      const [summary, ...others] = reader.list();
      assert.deepEqual(others, []);
      assert.deepEqual([summary.commitSeq, summary.messageCount], [1, 1], 'only the user message is stored while the tool runs');
      assert.deepEqual(c.messages.filter((m) => m.commit).map((m) => m.commit),
        [{ type: 'session_committed', commitSeq: 1, messageCount: 1 }], 'one commit announced: the run start');
    } finally {
      await c.kill();
    }
    const store = native.SessionStore.open(db);
    const resumed = new native.AgentRuntime(sessionConfig('paired'), async () => ({ status: 500 }), lookupRegistry(), store);
    const history = JSON.parse(resumed.historyJson());
    assert.deepEqual(history, [{ role: 'user', content: 'hello before the crash' }], 'the committed run start, no half turn');
    assert.deepEqual(pairingProblems(history), []);
    assert.equal(store.list()[0].messageCount, 1);
    resumed.detachStore();
  });

  // "A session open in one runtime is refused to a second (`session_locked`, also across
  // processes; the lock dies with its process)." SessionStore.delete(): ""session_locked"
  // while a runtime has it open."
  test('store_4_js_a_session_held_by_another_process_is_refused_session_locked_and_freed_by_its_death', async () => {
    const dir = tempDir('lock');
    const db = path.join(dir, 'sessions.db');
    const c = startChild('hold', db);
    const store = native.SessionStore.open(db);
    try {
      await waitFor(() => c.messages.some((m) => m.holding) || c.child.exitCode !== null, 'the child to hold its session', 20000);
      assert.equal(c.child.exitCode, null, `the child runs: ${c.stderr()}`);
      assert.deepEqual(store.list().map((s) => s.id), ['held']);
      const model = new ScriptedModel([() => completion({ content: 'mine', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } })]);
      assertCode(() => new native.AgentRuntime(sessionConfig('held'), model.transport, new native.ToolRegistry(), store),
        'session_locked', 'a runtime in another process has it');
      assertCode(() => store.delete('held'), 'session_locked', 'delete while another process has it');
      // The lock is the session's, not the file's: another session of the file is free.
      const other = new native.AgentRuntime(sessionConfig('free'), model.transport, new native.ToolRegistry(), store);
      assert.equal((await other.run('mine')).finalText, 'mine');
      other.detachStore();
      assert.equal(c.child.exitCode, null, 'the holder is still alive');
    } finally {
      await c.kill();
    }
    const resumed = new native.AgentRuntime(sessionConfig('held'), async () => ({ status: 500 }), new native.ToolRegistry(), store);
    assert.deepEqual(JSON.parse(resumed.historyJson()).map((m) => m.content), ['held question', 'held answer'], 'the dead holder\'s session resumes');
    resumed.detachStore();
    assert.equal(store.delete('held'), true);
  });

  /** A read-only directory: a read-only bind mount when root, else the mode; null when neither works. */
  function makeReadOnly(dir) {
    let mounted = false;
    try {
      execFileSync('mount', ['--bind', dir, dir], { stdio: 'ignore' });
      mounted = true;
      execFileSync('mount', ['-o', 'remount,ro,bind', dir], { stdio: 'ignore' });
    } catch {
      if (!mounted) {
        for (const n of fs.readdirSync(dir)) fs.chmodSync(path.join(dir, n), 0o444);
        fs.chmodSync(dir, 0o555);
      }
    }
    const restore = () => {
      if (mounted) execFileSync('umount', ['-l', dir]);
      else fs.chmodSync(dir, 0o755);
    };
    try {
      fs.writeFileSync(path.join(dir, 'probe'), 'x');
      fs.rmSync(path.join(dir, 'probe'));
      restore();
      return null;
    } catch {
      return restore;
    }
  }

  /** A tmpfs of `kb` KiB (root only); null when it cannot be mounted. */
  function smallDisk(kb) {
    const dir = tempDir('full');
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir], { stdio: 'ignore' });
    } catch {
      return null;
    }
    return { dir, unmount: () => execFileSync('umount', ['-l', dir]) };
  }

  // "A bad file gives a clear code and is left as it was: … `store_full`, `store_read_only`"
  // (SPEC STORE-5: "a full disk and a read-only directory each give a clear code, and
  // nothing committed is damaged"). SessionStore: ""store_read_only" (the file or its
  // directory cannot be written), "store_full" (the disk is full; nothing committed is
  // damaged)".
  test('store_5_js_a_full_disk_gives_store_full_and_an_existing_store_made_read_only_gives_store_read_only_both_undamaged', async (t) => {
    // --- store_full: a 512 KiB disk, a filler that can be removed again.
    const notHere = [];
    const disk = smallDisk(512);
    if (!disk) notHere.push('cannot mount a small tmpfs here (root needed)');
    else {
      await fullDiskChecks(disk);
    }

    // --- store_read_only: a store with a committed session whose directory turned read-only.
    await readOnlyChecks(t, notHere);
  });

  /** store_full on `disk`: the code, every announced commit kept, the store usable again. */
  async function fullDiskChecks(disk) {
    try {
      const db = path.join(disk.dir, 'sessions.db');
      const filler = path.join(disk.dir, 'filler');
      const store = native.SessionStore.open(db);
      const reader = native.SessionStore.open(db);
      const big = (tag) => `${tag} ${'the flour audit of the bakery, line by line. '.repeat(400)}`;
      const model = new ScriptedModel(Array.from({ length: 200 }, (_, i) => () => completion({ content: big(`answer ${i}`), usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })));
      const runtime = new native.AgentRuntime(sessionConfig('full'), model.transport, new native.ToolRegistry(), store);
      const commits = [];
      runtime.subscribe((e) => { if (e.type === 'session_committed') commits.push(JSON.parse(e.payloadJson)); });
      await runtime.run(big('question 0'));
      // The filler takes every byte left; runs then write into a full disk.
      const fd = fs.openSync(filler, 'w');
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(4096, 1));
      } catch (e) {
        if (e.code !== 'ENOSPC') throw e;
      } finally {
        fs.closeSync(fd);
      }
      let refusal = null;
      for (let i = 1; i < 100 && !refusal; i += 1) {
        try {
          await runtime.run(big(`question ${i}`)); // eslint-disable-line no-await-in-loop
        } catch (e) {
          refusal = e;
        }
      }
      assert.ok(refusal, 'the disk filled up');
      assert.equal(refusal.code, 'store_full', `${refusal.code}: ${refusal.message}`);
      await sleep(30);
      const last = commits.at(-1);
      const [listed] = reader.list();
      assert.deepEqual([listed.commitSeq, listed.messageCount], [last.commitSeq, last.messageCount], 'every announced commit is there');
      // Space again: the same runtime goes on committing.
      fs.rmSync(filler);
      const after = await runtime.run('a short question');
      assert.equal(after.status, 'completed');
      await waitFor(() => commits.at(-1).commitSeq > last.commitSeq + 1, 'commits after the space came back');
      runtime.detachStore();
      const resumed = new native.AgentRuntime(sessionConfig('full'), async () => ({ status: 500 }), new native.ToolRegistry(), reader);
      const history = JSON.parse(resumed.historyJson());
      assert.equal(history.length, reader.list()[0].messageCount);
      assert.deepEqual(pairingProblems(history), []);
      assert.equal(history.filter((m) => m.role === 'user').length, history.filter((m) => m.role === 'assistant').length, 'no half-written turn');
      resumed.detachStore();
    } finally {
      disk.unmount();
    }
  }

  /** store_read_only for a store whose directory turned read-only; the files left as they were. */
  async function readOnlyChecks(t, notHere) {
    const dir = tempDir('ro');
    const db = path.join(dir, 'sessions.db');
    const store = native.SessionStore.open(db);
    const first = new native.AgentRuntime(sessionConfig('ro'), new ScriptedModel([() => completion({ content: 'ok' })]).transport, new native.ToolRegistry(), store);
    await first.run('hello');
    first.detachStore();
    const before = snapshotDir(dir);
    const restore = makeReadOnly(dir);
    if (!restore) {
      t.skip([...notHere, 'cannot make a directory read-only here'].join('; '));
      return;
    }
    if (notHere.length > 0) t.skip(notHere.join('; '));
    try {
      let code = null;
      try {
        const again = native.SessionStore.open(db);
        new native.AgentRuntime(sessionConfig('ro'), async () => ({ status: 500 }), new native.ToolRegistry(), again); // eslint-disable-line no-new
      } catch (e) {
        code = e.code;
      }
      assert.equal(code, 'store_read_only', 'open() or the runtime that would write says store_read_only');
    } finally {
      restore();
    }
    assert.deepEqual(snapshotDir(dir), before, 'left as it was');
  }

  // "Every usage carries the provider's `cached_tokens` (and `reasoning_tokens`), and every sum
  // of usages adds them up: … exports and stored sessions (sessions and exports written before
  // these fields existed load, their cached tokens summed from the usages they kept)."
  // "Sessions stored before schema 7 (and exports without `runs`) have no run ids for their
  // old runs." SessionStore.open(): "an older schema is migrated forward".
  test('cost_1_store_4_chat_1_js_an_old_store_and_an_export_without_runs_load_with_their_cached_tokens_and_name_only_new_runs', async () => {
    const dir = tempDir('old');
    const db = path.join(dir, 'old.db');
    fs.copyFileSync(path.join(__dirname, '..', 'fixtures', 'cost', 'main-5545a0c.db'), db);
    const store = native.SessionStore.open(db);
    const [summary] = store.list();
    assert.equal(summary.id, 'old-main');
    const config = sessionConfig('old-main');
    config.allowClone = true;
    config.contextCompressor = new native.ContextCompressor(1000000, 2, undefined, 2);
    const model = new ScriptedModel([() => completion({ content: 'answer 4', usage: usage(500, 448, 9, 3) })], { tools: ['retrieve_memory'] });
    const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry(), store);
    const totals = runtime.totalUsage();
    assert.deepEqual([totals.parent.cachedTokens, totals.parent.reasoningTokens, totals.parent.callCount], [4 * 448, 4 * 3, 6]);
    assert.deepEqual([totals.children.totalTokens, totals.children.callCount], [129, 1]);
    assert.equal(totals.total.totalTokens, summary.totalTokens, 'the listed total is the sum');
    assert.ok(!('costs' in totals.total), 'no price then, no cost now');
    const before = JSON.parse(runtime.exportState());
    assert.equal(before.runs, undefined, 'no run ids for the old runs');
    const historyBefore = runtime.historyJson();
    // A new run has an id, and rewinding it gives back exactly the old session.
    const r = await runtime.run('turn 4');
    assert.deepEqual(model.problems, []);
    assert.equal(runtime.totalUsage().parent.cachedTokens, 5 * 448);
    const dropped = await runtime.rewind(r.runId);
    assert.deepEqual(dropped.droppedRunIds, [r.runId]);
    assert.equal(runtime.historyJson(), historyBefore);
    assert.equal(runtime.totalUsage().discarded.cachedTokens, 448);
    await sleep(20);
    assert.equal(store.list()[0].messageCount, summary.messageCount, 'the dropped rows are deleted');
    runtime.detachStore();

    // An export without `runs`: its runs cannot be named; a new run can.
    const source = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([
      () => completion({ content: 'a1', usage: usage(10, 0, 1) }), () => completion({ content: 'a2', usage: usage(12, 8, 1) }),
    ]).transport, new native.ToolRegistry());
    const r1 = await source.run('first');
    const r2 = await source.run('second');
    const exported = JSON.parse(source.exportState());
    assert.equal(exported.runs.length, 2);
    delete exported.runs;
    const next = new ScriptedModel([() => completion({ content: 'a3', usage: usage(14, 0, 1) })]);
    const imported = new native.AgentRuntime(runtimeConfig(), next.transport, new native.ToolRegistry());
    await imported.importState(JSON.stringify(exported));
    assert.equal(imported.totalUsage().total.cachedTokens, 8);
    const state = imported.exportState();
    await assert.rejects(imported.rewind(r1.runId), (e) => e.code === 'unknown_run');
    await assert.rejects(imported.regenerate(r2.runId), (e) => e.code === 'unknown_run');
    await assert.rejects(imported.fork('copy', r1.runId), (e) => e.code === 'unknown_run');
    assert.equal(imported.exportState(), state, 'each refusal changes nothing');
    const r3 = await imported.run('third');
    await imported.rewind(r3.runId);
    assert.deepEqual(JSON.parse(imported.historyJson()), exported.history.messages);
    assert.deepEqual(next.problems, []);
  });

  // Durable sessions: "`list_sessions` / `arkagent_store_list` give id, title (the first user
  // text), updated time, message count and total tokens" (SessionSummary.totalTokens: "the
  // session's own model calls plus its sub-agents'"). Regenerate, edit, fork: "their model
  // calls stay, marked `discarded` (the provider billed them): `totalUsage().total` never
  // shrinks, `totalUsage().discarded` says how much of it went to dropped answers"
  // (RewindResult.discarded: "their model calls and delegations").
  test('store_4_chat_3_js_a_rewound_delegation_stays_billed_in_totals_and_the_listed_tokens_across_a_restart', async () => {
    const store = native.SessionStore.openMemory();
    const config = () => {
      const c = sessionConfig('delegating', { model: priced(MODEL, 'USD', 1, 0.5, 2) });
      c.registerSubAgent(native.SubAgentDefinition.create('researcher', 'Finds facts', (worker) => {
        worker.model = priced('worker-model', 'CNY', 2, 1, 4);
      }));
      return c;
    };
    const model = new RoutedModel([
      { name: 'worker', match: (b) => b.model === 'worker-model', model: 'worker-model', turns: [() => completion({ content: 'the fact', usage: usage(300, 100, 40) })] },
      { name: 'parent', match: (b) => offeredTools(b).includes('delegate_task'), turns: [
        () => completion({ content: 'hi', usage: usage(100, 0, 10) }),
        () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'find it' } }], usage: usage(1000, 600, 50) }),
        () => completion({ content: 'found', usage: usage(1200, 1000, 30) }),
      ] },
    ]);
    const runtime = new native.AgentRuntime(config(), model.transport, new native.ToolRegistry(), store);
    await runtime.run('hello');
    const delegated = await runtime.run('find it');
    assert.deepEqual(model.problems, []);
    const before = runtime.totalUsage();
    await sleep(20);
    const listedBefore = store.list()[0];
    assert.equal(listedBefore.totalTokens, before.total.totalTokens, 'the listed tokens include the sub-agent\'s');
    assert.equal(before.children.totalTokens, 340);

    const dropped = await runtime.rewind(delegated.runId);
    // The dropped run's two parent calls and its worker's call, in both currencies.
    assert.equal(dropped.discarded.callCount, 3);
    assert.equal(dropped.discarded.totalTokens, 1050 + 1230 + 340);
    assert.deepEqual(costsOf(dropped.discarded), [{ currency: 'CNY', nanos: 660000 }, { currency: 'USD', nanos: 1560000 }]);
    const after = runtime.totalUsage();
    assert.deepEqual(plain(after.total), plain(before.total), 'the total never shrinks');
    assert.deepEqual(plain(after.discarded), plain(dropped.discarded));
    await sleep(20);
    const listedAfter = store.list()[0];
    assert.equal(listedAfter.totalTokens, listedBefore.totalTokens, 'the listed total tokens do not shrink either');
    assert.equal(listedAfter.messageCount, 2);
    runtime.detachStore();
    const resumed = new native.AgentRuntime(config(), model.transport, new native.ToolRegistry(), store);
    assert.deepEqual(plain(resumed.totalUsage()), plain(after), 'the same totals after a restart');
    resumed.detachStore();
  });

  // ================================================================== What a conversation costs

  // "Set the model's price and every call is priced once, when its usage arrives, by the model
  // config that made it" … "A worker's model is either a whole model config — ArkTS
  // `WorkerConfig.model` … — priced by what it carries" … "`pricedCallCount` says how many of
  // `callCount` were priced."
  test('cost_2_js_a_worker_model_config_without_a_price_is_not_priced_at_its_parents_price', async () => {
    const config = runtimeConfig({ model: priced(MODEL, 'USD', 1, 0.5, 2) });
    config.registerSubAgent(native.SubAgentDefinition.create('researcher', 'Finds facts', (worker) => {
      worker.model = new native.ModelConfig(BASE_URL, API_KEY, 'worker-model');
    }));
    const model = new RoutedModel([
      { name: 'worker', match: (b) => b.model === 'worker-model', model: 'worker-model', turns: [() => completion({ content: 'the fact', usage: usage(300, 100, 40, 10) })] },
      { name: 'parent', match: (b) => offeredTools(b).includes('delegate_task'), turns: [
        () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'find it' } }], usage: usage(1000, 600, 50) }),
        () => completion({ content: 'found', usage: usage(1200, 1000, 30) }),
      ] },
    ]);
    const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const result = await runtime.run('go');
    assert.deepEqual(model.problems, []);
    const parentCost = { currency: 'USD', nanos: 400 * 1000 + 600 * 500 + 50 * 2000 + 200 * 1000 + 1000 * 500 + 30 * 2000 };
    assert.deepEqual([result.usage.callCount, result.usage.pricedCallCount], [3, 2]);
    assert.deepEqual(costsOf(result.usage), [parentCost], 'the worker\'s call adds no money');
    const totals = runtime.totalUsage();
    assert.deepEqual([totals.children.callCount, totals.children.pricedCallCount], [1, 0]);
    assert.ok(!('costs' in totals.children), 'an unpriced child has no costs, not a 0');
    assert.equal(totals.children.cachedTokens, 100, 'its cached tokens are counted all the same');
    assert.deepEqual([totals.total.callCount, totals.total.pricedCallCount], [3, 2]);
    const stats = runtime.subAgents().stats.usage;
    assert.deepEqual([stats.callCount, stats.pricedCallCount, 'costs' in stats], [1, 0, false]);
    await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
    const child = events.filter((e) => e.type === 'sub_agent').map((e) => JSON.parse(e.payloadJson).event).find((e) => e.type === 'model_response');
    assert.ok(child && child.usage && !('cost' in child.usage), `the worker's model_response has no cost: ${JSON.stringify(child)}`);
  });

  // "every call is priced once, when its usage arrives, by the model config that made it" …
  // "Calls priced in different currencies are never converted or added together: a total
  // keeps one sum per currency, sorted by code; `pricedCallCount` says how many of
  // `callCount` were priced."
  test('cost_2_js_a_session_resumed_under_another_price_keeps_each_calls_cost_and_prices_only_new_calls', async () => {
    const dir = tempDir('price');
    const db = path.join(dir, 'sessions.db');
    const call = () => completion({ content: 'ok', usage: usage(1000, 400, 100) });
    const open = (model) => new native.AgentRuntime(sessionConfig('repriced', { model }), new ScriptedModel([call]).transport, new native.ToolRegistry(), native.SessionStore.open(db));
    const usd = open(priced(MODEL, 'USD', 1, 0.5, 2));
    await usd.run('one');
    usd.detachStore();
    const eur = open(priced(MODEL, 'EUR', 3, 1, 4));
    assert.deepEqual(eur.usages().map((u) => u.cost), [{ currency: 'USD', nanos: 1000000 }], 'the stored call keeps its price');
    const second = await eur.run('two');
    assert.deepEqual(costsOf(second.usage), [{ currency: 'EUR', nanos: 600 * 3000 + 400 * 1000 + 100 * 4000 }]);
    eur.detachStore();
    const unpriced = open(new native.ModelConfig(BASE_URL, API_KEY, MODEL));
    const third = await unpriced.run('three');
    assert.ok(!('costs' in third.usage), 'a call made without a price has none');
    const total = unpriced.totalUsage().total;
    assert.deepEqual(costsOf(total), [{ currency: 'EUR', nanos: 2600000 }, { currency: 'USD', nanos: 1000000 }], 'one sum per currency, sorted by code');
    assert.deepEqual([total.callCount, total.pricedCallCount], [3, 2]);
    assert.deepEqual(unpriced.usages().map((u) => (u.cost ? u.cost.currency : null)), ['USD', 'EUR', null]);
    unpriced.detachStore();
  });

  // "Every usage carries the provider's `cached_tokens` (and `reasoning_tokens`), and every
  // sum of usages adds them up" … "a call's cost is rounded once, to the nearest nano, and
  // totals add integers, so a total is exactly the sum of its usages on every surface".
  // ModelPrice: "prompt tokens served from the cache (`cachedTokens`) at
  // cachedInputPerMillion … the rest of the prompt at inputPerMillion". ModelUsage.totalTokens:
  // "Total tokens as reported (or prompt + completion when the provider omits it)". A
  // provider whose counts disagree with ours (more cached than prompt tokens, a total that is
  // not the sum, more reasoning than completion tokens) is kept as reported, and its cost is
  // never negative: the cache cannot have served more prompt tokens than were sent.
  test('cost_1_cost_2_js_provider_counts_that_disagree_with_ours_are_kept_as_reported_summed_and_never_priced_below_zero', async () => {
    const store = native.SessionStore.openMemory();
    const odd = { prompt_tokens: 100, completion_tokens: 10, total_tokens: 50, prompt_tokens_details: { cached_tokens: 150 }, completion_tokens_details: { reasoning_tokens: 20 } };
    const noTotal = { prompt_tokens: 200, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 50 } };
    const model = new ScriptedModel([() => completion({ content: 'a', usage: odd }), () => completion({ content: 'b', usage: noTotal })]);
    const runtime = new native.AgentRuntime(sessionConfig('odd', { model: priced(MODEL, 'USD', 1, 0.5, 2) }), model.transport, new native.ToolRegistry(), store);
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const first = await runtime.run('one');
    const second = await runtime.run('two');
    assert.deepEqual(model.problems, []);
    const [u1, u2] = runtime.usages();
    assert.deepEqual([u1.promptTokens, u1.completionTokens, u1.totalTokens, u1.cachedTokens, u1.reasoningTokens], [100, 10, 50, 150, 20], 'as reported');
    assert.equal(u2.totalTokens, 220, 'an omitted total is prompt + completion');
    // All 100 prompt tokens at the cached rate (0 uncached, not -50), 10 out.
    assert.deepEqual(u1.cost, { currency: 'USD', nanos: 100 * 500 + 10 * 2000 });
    assert.deepEqual(u2.cost, { currency: 'USD', nanos: 150 * 1000 + 50 * 500 + 20 * 2000 });
    assert.deepEqual(costsOf(first.usage), [u1.cost]);
    const total = runtime.totalUsage().total;
    assert.deepEqual([total.totalTokens, total.cachedTokens, total.reasoningTokens], [270, 200, 20]);
    assert.deepEqual(costsOf(total), [{ currency: 'USD', nanos: u1.cost.nanos + u2.cost.nanos }]);
    assert.deepEqual(plain(native.sumUsages(runtime.usages())), plain(total), 'the same sum from the usages');
    assert.deepEqual(plain(native.sumUsages([...runtime.usages()].reverse())), plain(total), 'in any order');
    await waitFor(() => events.filter((e) => e.type === 'run_finished').length === 2, 'run_finished');
    const responses = events.filter((e) => e.type === 'model_response').map((e) => JSON.parse(e.payloadJson).usage);
    assert.deepEqual(responses.map((u) => [u.totalTokens, u.cachedTokens, u.cost.nanos]), [[50, 150, u1.cost.nanos], [220, 50, u2.cost.nanos]]);
    assert.equal(second.usage.totalTokens, 220);
    assert.equal(store.list()[0].totalTokens, 270, 'the listed total sums the reported totals');
    runtime.detachStore();
  });

  const ANTHROPIC_URL = 'https://api.anthropic.example.test/v1';
  function anthropicModel(name, price) {
    const m = new native.ModelConfig(ANTHROPIC_URL, API_KEY, name);
    m.wireFormat = 'anthropic';
    if (price) m.price = price;
    return m;
  }
  const anthropicMessage = (text, u) => JSON.stringify({
    id: `msg_${Math.random().toString(36).slice(2)}`, type: 'message', role: 'assistant', model: 'claude-test',
    content: [{ type: 'text', text }], stop_reason: 'end_turn', usage: u,
  });

  // "An optional cache-write rate (`cache_write_per_million`) prices the prompt tokens a
  // provider reports as written to its cache (Anthropic's `cache_creation_input_tokens`);
  // without it they are priced at `input_per_million`" … "A summarizer's chunk of transcript
  // asks for no cache write on its messages (no later request would read it)." … "(a worker
  // or summarizer on another model by its own price)".
  test('cost_2_js_anthropic_cache_writes_are_priced_at_their_rate_else_the_input_rate_and_a_transcript_chunk_asks_no_cache_write', async () => {
    const ANTHROPIC_USAGE = { input_tokens: 20, cache_read_input_tokens: 64, cache_creation_input_tokens: 36, output_tokens: 5 };
    const rates = { currency: 'USD', inputPerMillion: 3, cachedInputPerMillion: 0.3, outputPerMillion: 15 };
    const expected = {
      withRate: 20 * 3000 + 64 * 300 + 36 * 3750 + 5 * 15000,
      withoutRate: (20 + 36) * 3000 + 64 * 300 + 5 * 15000,
    };
    for (const [label, price] of [['withRate', { ...rates, cacheWritePerMillion: 3.75 }], ['withoutRate', rates]]) {
      const bodies = [];
      const transport = async (request) => {
        const body = JSON.parse(request.body);
        bodies.push(body);
        const text = body.model === 'claude-summary' ? snapshot() : `answer ${bodies.length} ${'about the audit. '.repeat(5)}`;
        return { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], body: anthropicMessage(text, ANTHROPIC_USAGE) };
      };
      const config = new native.AgentRuntimeConfig(anthropicModel('claude-test', price));
      config.systemPrompt = 'You are a test assistant.';
      const compressor = new native.ContextCompressor(100, 2, undefined, 1);
      compressor.summarizerModel = anthropicModel('claude-summary'); // no price of its own
      config.contextCompressor = compressor;
      const runtime = new native.AgentRuntime(config, transport, new native.ToolRegistry());
      for (let i = 0; i < 3; i += 1) await runtime.run(`question ${i} ${'lorem ipsum '.repeat(50)}`); // eslint-disable-line no-await-in-loop
      const main = runtime.usages().filter((u) => u.source !== 'context_compression');
      const summaries = runtime.usages().filter((u) => u.source === 'context_compression');
      assert.equal(main.length, 3);
      assert.ok(summaries.length >= 1, 'a compression happened');
      for (const u of main) assert.deepEqual(u.cost, { currency: 'USD', nanos: expected[label] }, `${label}: ${JSON.stringify(u)}`);
      for (const u of summaries) assert.ok(!('cost' in u), `${label}: the unpriced summarizer's calls have no cost`);
      const total = runtime.totalUsage().total;
      assert.equal(total.pricedCallCount, 3);
      assert.equal(total.callCount, 3 + summaries.length);
      const summaryBodies = bodies.filter((b) => b.model === 'claude-summary');
      const mainBodies = bodies.filter((b) => b.model === 'claude-test');
      assert.ok(mainBodies.every((b) => JSON.stringify(b.messages).includes('cache_control')), 'the conversation asks for cache writes on its messages');
      for (const b of summaryBodies) {
        assert.ok(!JSON.stringify(b.messages).includes('cache_control'), `${label}: a transcript chunk asks for no cache write: ${JSON.stringify(b.messages).slice(0, 300)}`);
      }
    }
  });

  /** A runtime on `prefix-model` (priced in USD) with four long messages over the threshold, compressing with `compressor`. */
  function compressingRuntime(compressor) {
    const kinds = [];
    const u = { prompt_tokens: 5000, completion_tokens: 9, total_tokens: 5009 };
    const transport = async (request) => {
      const body = JSON.parse(request.body);
      kinds.push(isPrefixSummaryRequest(body) ? 'prefix' : isTranscriptSummaryRequest(body) ? 'transcript' : 'main');
      return { status: 200, headers: [], body: completion({ content: snapshot(), usage: u }) };
    };
    const model = new native.ModelConfig(BASE_URL, API_KEY, 'prefix-model');
    model.price = { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1 };
    const config = new native.AgentRuntimeConfig(model);
    config.contextCompressor = compressor;
    const runtime = new native.AgentRuntime(config, transport, new native.ToolRegistry());
    runtime.importState(longWeatherChat());
    return { runtime, kinds };
  }

  // "When the summarizer is the conversation's own model (no separate summarizer model, or one
  // with the same wire format, base URL, model, key and stream setting), a compression is one
  // request: the conversation's next request, byte for byte" … "as they always are for another
  // model" … "every call is priced once … by the model config that made it (a worker or
  // summarizer on another model by its own price)".
  test('cost_3_cost_2_js_a_summarizer_equal_in_the_five_settings_reuses_the_bytes_at_its_own_price_and_one_setting_off_gets_a_transcript', async () => {
    const variants = [
      ['a different price only', (m) => { m.price = { currency: 'CNY', inputPerMillion: 2, cachedInputPerMillion: 2, outputPerMillion: 2 }; }, 'prefix'],
      ['another stream setting', (m) => { m.stream = true; }, 'transcript'],
      ['another key', null, 'transcript'],
      ['another model', null, 'transcript'],
    ];
    for (const [label, tune, kind] of variants) {
      const summarizer = new native.ModelConfig(BASE_URL, label === 'another key' ? `${API_KEY}-2` : API_KEY, label === 'another model' ? 'other-model' : 'prefix-model');
      if (tune) tune(summarizer);
      const compressor = new native.ContextCompressor(1000, 2, undefined, 1);
      compressor.summarizerModel = summarizer;
      const { runtime, kinds } = compressingRuntime(compressor);
      const result = await runtime.compressNow(); // eslint-disable-line no-await-in-loop
      assert.equal(result.outcome, 'compressed', label);
      assert.deepEqual(kinds, [kind], label);
      if (label === 'a different price only') {
        assert.deepEqual(result.usage.cost, { currency: 'CNY', nanos: 5009 * 2000 }, 'the summarizer\'s own price, not the conversation\'s USD');
      } else {
        assert.ok(!('cost' in result.usage), `${label}: the summarizer config carries no price`);
      }
    }
  });

  const LONG_Q = (i) => `q${i} ${'a long question about the bakery audit and flour. '.repeat(60)}`;
  const LONG_A = (i) => `answer ${i} ${'the long answer about croissants and flour. '.repeat(60)}`;

  /** Four runs; the sequence of model requests and compression events, and the episodes made. */
  async function thresholdZeroRuns(config) {
    let calls = 0;
    const transport = async (request) => {
      const body = JSON.parse(request.body);
      const summary = isSummaryRequest(body);
      if (!summary) calls += 1;
      return { status: 200, body: completion({ content: summary ? snapshot() : LONG_A(calls), usage: usage(50, 0, 5) }) };
    };
    const runtime = new native.AgentRuntime(config, transport, new native.ToolRegistry());
    const events = [];
    runtime.subscribe((e) => events.push(JSON.parse(e.payloadJson)));
    for (let i = 0; i < 4; i += 1) await runtime.run(LONG_Q(i)); // eslint-disable-line no-await-in-loop
    await waitFor(() => events.filter((e) => e.type === 'run_finished').length === 4, 'run_finished');
    return {
      sequence: events.filter((e) => e.type === 'compression' || e.type === 'model_request')
        .map((e) => (e.type === 'compression' ? `${e.outcome}/${e.reason}` : 'request')),
      episodes: runtime.listEpisodes().length,
    };
  }

  /** A custom compressor that archives all but the last message, reporting `usage` when given. */
  function archivingAllButLast(reportUsage) {
    return async (stateJson) => {
      const n = JSON.parse(stateJson).history.messages.length;
      if (n < 2) return native.CompressOutcome.skipped('history_too_short').toJson();
      const u = reportUsage ? { promptTokens: 40, completionTokens: 8, totalTokens: 48 } : undefined;
      return native.CompressOutcome.compressed(n - 1, 'the earlier questions were about the bakery audit', undefined, u).toJson();
    };
  }

  // "A threshold of 0 means the same for the default compressor as for a custom one on every
  // surface: every automatic attempt compresses (but the one right after a compression)."
  test('cmp_3_cmp_7_js_threshold_0_compresses_at_every_attempt_but_the_one_right_after_a_compression_default_and_custom_alike', async () => {
    const defaults = await thresholdZeroRuns(runtimeConfig({ contextCompressor: new native.ContextCompressor(0, 1, undefined, 1) }));
    const custom = runtimeConfig();
    custom.setCustomCompressor(archivingAllButLast(true), 0);
    const customs = await thresholdZeroRuns(custom);
    const expected = ['request', 'compressed/compressed'];
    for (let i = 1; i < 4; i += 1) expected.push('skipped/last_usage_is_compression', 'request', 'compressed/compressed');
    assert.deepEqual(defaults.sequence, expected, 'the default compressor');
    assert.deepEqual(customs.sequence, expected, 'a custom compressor');
    assert.deepEqual([defaults.episodes, customs.episodes], [4, 4]);
  });

  // The same sentence, for a custom compressor that makes no model call and so reports no
  // usage (CompressOutcome.compressed(splitIndex, summary, episodeId?, usage?): the usage is
  // optional): "A threshold of 0 means the same for the default compressor as for a custom
  // one on every surface: every automatic attempt compresses (but the one right after a
  // compression)."
  // (Found by this test: such a compressor was called and compressed again right after its
  // own compression — the loop guard keyed on "the last usage is a compression's own".)
  test('cmp_3_cmp_7_js_threshold_0_a_custom_compressor_that_reports_no_usage_also_skips_right_after_a_compression', async () => {
    const custom = runtimeConfig();
    custom.setCustomCompressor(archivingAllButLast(false), 0);
    const customs = await thresholdZeroRuns(custom);
    const expected = ['request', 'compressed/compressed'];
    for (let i = 1; i < 4; i += 1) expected.push('skipped/last_usage_is_compression', 'request', 'compressed/compressed');
    assert.deepEqual(customs.sequence, expected, 'the same as the default compressor');
  });

  // ================================================================== Regenerate, edit, fork

  /** Records the raw bodies; answers "answer to <last user text>". */
  function echoModel(n = 20, u = usage(40, 30, 3)) {
    return new ScriptedModel(Array.from({ length: n }, () => (body) => completion({ content: `answer to ${lastUser(body)}`, usage: u })));
  }

  // "`regenerate(runId)`: … Its first request is the very bytes the dropped run sent, so the
  // provider's prompt cache serves them." "`editAndResend(runId, input)`: the same, with
  // `input` in the place of the old one; the request starts with the bytes sent up to the
  // end of the previous answer." "A point is named by a run id … keep it with the bubbles it
  // produced." — across a restart on SQLite (the stored run ids: "where each run began (its
  // run id, what a rewind or fork names)").
  test('chat_1_chat_3_js_after_a_restart_regenerate_resends_the_dropped_runs_bytes_and_editAndResend_keeps_the_prefix', async () => {
    const dir = tempDir('regen');
    const db = path.join(dir, 'chat.db');
    const before = echoModel();
    const first = new native.AgentRuntime(sessionConfig('restarted'), before.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    const ids = [];
    for (const text of ['task 1', 'task 2', 'task 3']) ids.push((await first.run(text)).runId); // eslint-disable-line no-await-in-loop
    first.detachStore();
    const raw = before.requests.map((r) => r.request.body);

    const after = echoModel();
    const second = new native.AgentRuntime(sessionConfig('restarted'), after.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    const again = await second.regenerate(ids[2]);
    assert.equal(again.status, 'completed');
    assert.notEqual(again.runId, ids[2]);
    assert.equal(after.requests[0].request.body, raw[2], 'the very bytes run 3 sent before the restart');
    const edited = await second.editAndResend(ids[1], 'task 2, edited');
    assert.equal(edited.finalText, 'answer to task 2, edited');
    const upToFirstAnswer = raw[1].slice(0, raw[1].indexOf('{"role":"user","content":"task 2"'));
    assert.ok(upToFirstAnswer.length > 0 && after.requests[1].request.body.startsWith(upToFirstAnswer), 'starts with the bytes up to the end of answer 1');
    assert.deepEqual(JSON.parse(second.historyJson()).map((m) => m.content),
      ['task 1', 'answer to task 1', 'task 2, edited', 'answer to task 2, edited']);
    assert.deepEqual([...before.problems, ...after.problems], []);
    second.detachStore();
  });

  function chineseModel(n) {
    return new ScriptedModel(Array.from({ length: n }, () => (body) => {
      const chars = body.messages.map((m) => m.content || '').join('').length;
      const prompt = Math.round(chars * 0.6) + 4 * body.messages.length;
      return completion({ content: '好的，我来帮你安排。第一天先去西湖边散步。', usage: { prompt_tokens: prompt, completion_tokens: 9, total_tokens: prompt + 9 } });
    }));
  }

  // "The token calibration keeps what it learned." (after a rewind; the calibration is part
  // of the stored session, so a restart keeps it too).
  test('chat_3_js_a_rewind_to_the_first_run_keeps_the_calibration_and_so_does_a_restart', async () => {
    const dir = tempDir('calibration');
    const db = path.join(dir, 'chat.db');
    const model = chineseModel(10);
    const runtime = new native.AgentRuntime(sessionConfig('calibrated'), model.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    const first = await runtime.run('你好！我下周要去杭州出差三天，能帮我安排一下行程吗？');
    await runtime.run('杭州这个季节天气怎么样？需要带什么衣服？');
    const learned = JSON.parse(runtime.exportState()).token_calibration;
    assert.ok(learned && learned[MODEL] && learned[MODEL].observations === 2, JSON.stringify(learned));
    await runtime.rewind(first.runId);
    assert.deepEqual(JSON.parse(runtime.historyJson()), [], 'back to an empty history');
    assert.deepEqual(JSON.parse(runtime.exportState()).token_calibration, learned, 'kept through the rewind');
    runtime.detachStore();

    const resumed = new native.AgentRuntime(sessionConfig('calibrated'), model.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    assert.deepEqual(JSON.parse(resumed.exportState()).token_calibration, learned, 'and through a restart');
    const requests = [];
    resumed.subscribe((e) => { if (e.type === 'model_request') requests.push(JSON.parse(e.payloadJson)); });
    await resumed.run('出差期间我想尝尝当地的特色菜，有什么推荐？');
    await waitFor(() => requests.length === 1, 'model_request');
    assert.equal(requests[0].promptSizeSource, 'calibrated', 'the first request after the rewind is sized by what was learned');
    assert.deepEqual(model.problems, []);
    resumed.detachStore();
  });

  /** Source session `src` on `store`: three runs, the first archived by a custom compressor. */
  async function forkSource(store, model) {
    const c = sessionConfig('src');
    c.setCustomCompressor(async () => native.CompressOutcome.compressed(2, 'the user said one').toJson(), 1e9);
    const runtime = new native.AgentRuntime(c, model.transport, new native.ToolRegistry(), store);
    const ids = [];
    for (const text of ['one', 'two', 'three']) ids.push((await runtime.run(text)).runId); // eslint-disable-line no-await-in-loop
    assert.equal((await runtime.compressNow()).outcome, 'compressed');
    return { runtime, ids };
  }

  // "`fork(newSessionId, throughRunId?)`: a new session from this one through that run's
  // answer …, written to the `SessionStore` as a new session; a runtime with `sessionId` =
  // `newSessionId` and the store resumes it. It has the messages, copies of the episodes and
  // the run ids; its usages start empty (what was spent stays the source's, so the totals of
  // both add up to the bill). Working memory belongs to a runtime and is not copied."
  test('chat_2_js_a_fork_has_copies_of_the_episodes_and_the_run_ids_not_the_working_memory_and_both_totals_add_up_to_the_bill', async () => {
    const dir = tempDir('fork');
    const db = path.join(dir, 'chat.db');
    const store = native.SessionStore.open(db);
    const model = echoModel();
    const { runtime: source, ids } = await forkSource(store, model);
    source.memoryStore('working', 'note', '{"draft":"the bakery list"}');
    const episodes = source.listEpisodes().map((e) => [e.id, e.summary, e.archivedMessagesJson]);
    assert.equal(episodes.length, 1);
    await source.fork('forked', ids[1]);
    const sourceCalls = source.totalUsage().total.callCount;
    assert.equal(sourceCalls, 3);
    source.detachStore();

    const forked = new native.AgentRuntime(sessionConfig('forked'), model.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    assert.deepEqual(forked.listEpisodes().map((e) => [e.id, e.summary, e.archivedMessagesJson]), episodes, 'the episodes, copied');
    assert.deepEqual(JSON.parse(forked.historyJson()).map((m) => m.content), ['two', 'answer to two'], 'through run 2\'s answer');
    assert.deepEqual(forked.usages(), [], 'its usages start empty');
    assert.equal(forked.memoryRecall('working', 'note'), undefined, 'working memory is not copied');
    forked.detachStore();
    // "Working memory belongs to a runtime": also to one built from the same config object.
    const shared = sessionConfig('shared');
    const first = new native.AgentRuntime(shared, model.transport, new native.ToolRegistry());
    first.memoryStore('working', 'note', '"mine"');
    const second = new native.AgentRuntime(shared, model.transport, new native.ToolRegistry());
    assert.equal(second.memoryRecall('working', 'note'), undefined, 'a second runtime of one config has its own');
    assert.equal(first.memoryRecall('working', 'note'), '"mine"');
    // Copies: deleting the source leaves the fork's episodes whole.
    assert.equal(store.delete('src'), true);
    const reopened = new native.AgentRuntime(sessionConfig('forked'), model.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    assert.deepEqual(reopened.listEpisodes().map((e) => [e.id, e.summary, e.archivedMessagesJson]), episodes, 'the copies outlive the source');
    await reopened.run('four');
    // The run ids came along: run 2 of the source can be rewound in the fork.
    const dropped = await reopened.rewind(ids[1]);
    assert.deepEqual(dropped.droppedRunIds[0], ids[1]);
    assert.deepEqual(JSON.parse(reopened.historyJson()), []);
    // The bill: the source's three calls and the fork's one, each counted once.
    assert.equal(reopened.totalUsage().total.callCount, 1, 'the fork counts only its own call');
    assert.equal(sourceCalls + reopened.totalUsage().total.callCount, model.requests.length, 'both totals add up to every call billed');
    assert.deepEqual(model.problems, []);
    reopened.detachStore();
  });

  // Durable sessions: "`list_sessions` / `arkagent_store_list` give id, title (the first user
  // text), …"; Regenerate, edit, fork: a fork "has the messages" of its source through that
  // run — so its first user text, and its title, are the source's.
  // (Found by this test: the fork was titled with its first live user text, "two".)
  test('store_4_chat_2_js_a_fork_is_listed_with_the_title_of_its_first_user_text', async () => {
    const store = native.SessionStore.openMemory();
    const { runtime, ids } = await forkSource(store, echoModel());
    await runtime.fork('forked', ids[1]);
    runtime.detachStore();
    const titles = Object.fromEntries(store.list().map((s) => [s.id, s.title]));
    assert.equal(titles.src, 'one');
    assert.equal(titles.forked, 'one', 'the fork begins with the same first user text');
  });

  // "Each change is one store transaction before anyone sees it: an app killed mid-gesture
  // reopens the old session or the new one, never half of it. The dropped messages' rows are
  // deleted; their model calls stay, marked `discarded`" … fork: "its usages start empty".
  test('chat_1_chat_2_js_sigkill_during_regenerates_edits_rewinds_and_forks_never_leaves_half_a_gesture', async () => {
    const dir = tempDir('kill');
    const db = path.join(dir, 'chat.db');
    let seenUsages = 0;
    let discardedSeen = 0;
    let forksSeen = 0;
    let stepsSeen = 0;
    for (let round = 0; round < 4; round += 1) {
      const c = startChild('gestures', db);
      try {
        await waitFor(() => c.messages.some((m) => m.ready) || c.child.exitCode !== null, 'the child', 20000); // eslint-disable-line no-await-in-loop
        await sleep(150 + Math.random() * 500); // eslint-disable-line no-await-in-loop
        assert.equal(c.child.exitCode, null, `the child is still running: ${c.stderr()}`);
      } finally {
        await c.kill(); // eslint-disable-line no-await-in-loop
      }
      stepsSeen += c.messages.filter((m) => m.step !== undefined).length;
      const store = native.SessionStore.open(db);
      for (const summary of store.list()) {
        const isFork = summary.id !== 'gestures';
        const runtime = new native.AgentRuntime(sessionConfig(summary.id), async () => ({ status: 500 }), lookupRegistry(), store);
        const state = JSON.parse(runtime.exportState());
        runtime.detachStore();
        const what = `round ${round}, ${summary.id}`;
        const messages = state.history.messages;
        assert.deepEqual(pairingProblems(messages), [], what);
        assert.equal(summary.messageCount, messages.length, `${what}: listed count`);
        const starts = (state.runs || []).map((r) => r.message);
        if (messages.length > 0) assert.equal(starts[0], 0, `${what}: the history begins with a run's input`);
        starts.forEach((start, i) => {
          const segment = messages.slice(start, starts[i + 1] ?? messages.length);
          const inputs = segment.filter((m) => m.role === 'user').length;
          assert.ok(segment[0] && segment[0].role === 'user' && inputs === 1 && [1, 3, 4].includes(segment.length),
            `${what}: run ${state.runs[i].run_id} holds ${segment.length} messages, ${inputs} inputs: half a gesture`);
        });
        const usages = state.usages || [];
        const tokens = usages.reduce((n, u) => n + u.total_tokens, 0);
        assert.equal(summary.totalTokens, tokens, `${what}: the listed tokens are the usages', discarded ones included`);
        if (isFork) {
          forksSeen += 1;
          assert.deepEqual(usages, [], `${what}: a fork starts with no usages`);
          continue;
        }
        const answers = messages.filter((m) => m.role === 'assistant').length;
        const kept = usages.filter((u) => !u.discarded).length;
        assert.equal(kept, answers, `${what}: live answers and the calls not discarded`);
        assert.ok(usages.length >= seenUsages, `${what}: billed calls lost (${usages.length} after ${seenUsages})`);
        seenUsages = usages.length;
        discardedSeen = usages.filter((u) => u.discarded).length;
      }
    }
    assert.ok(stepsSeen > 8 && seenUsages > 8, `the children made progress: ${stepsSeen} steps, ${seenUsages} calls`);
    assert.ok(discardedSeen > 0 && forksSeen > 0, `gestures were committed: ${discardedSeen} discarded calls, ${forksSeen} forks`);
  });

  // "A gesture holds the session as a run does: from the call until its Promise settles,
  // `run()`, `compressNow()` and the other gestures reject with `run_in_progress`" … "each
  // refusal changes nothing".
  test('chat_1_chat_2_js_while_editAndResend_waits_for_the_model_every_other_gesture_is_refused_and_nothing_changes', async () => {
    const gate = deferred();
    let calls = 0;
    const model = new ScriptedModel(Array.from({ length: 10 }, () => async (body) => {
      calls += 1;
      if (calls === 3) await gate.promise;
      return completion({ content: `answer to ${lastUser(body)}`, usage: usage(40, 0, 3) });
    }));
    const store = native.SessionStore.openMemory();
    const runtime = new native.AgentRuntime(sessionConfig('busy'), model.transport, new native.ToolRegistry(), store);
    const r1 = (await runtime.run('one')).runId;
    const r2 = (await runtime.run('two')).runId;
    const editing = runtime.editAndResend(r2, 'two, edited');
    await waitFor(() => model.requests.length === 3, 'the edited run\'s request');
    const during = runtime.exportState();
    const refusals = [
      ['rewind', runtime.rewind(r1)],
      ['regenerate', runtime.regenerate(r1)],
      ['editAndResend', runtime.editAndResend(r1, 'x')],
      ['fork', runtime.fork('busy-fork', r1)],
      ['run', runtime.run('three')],
      ['compressNow', runtime.compressNow()],
    ];
    const settled = await Promise.allSettled(refusals.map(([, promise]) => promise));
    settled.forEach((outcome, i) => {
      const what = refusals[i][0];
      assert.equal(outcome.status, 'rejected', `${what} was accepted during editAndResend`);
      assert.equal(outcome.reason.code, 'run_in_progress', `${what}: ${outcome.reason.message}`);
    });
    assert.equal(runtime.exportState(), during, 'the refusals changed nothing');
    assert.ok(!store.list().some((s) => s.id === 'busy-fork'), 'no fork written');
    gate.resolve();
    const edited = await editing;
    assert.equal(edited.finalText, 'answer to two, edited');
    assert.equal(model.requests.length, 3, 'no refused gesture sent a request');
    assert.deepEqual(JSON.parse(runtime.historyJson()).map((m) => m.content), ['one', 'answer to one', 'two, edited', 'answer to two, edited']);
    assert.deepEqual(model.problems, []);
    runtime.detachStore();
  });
}
