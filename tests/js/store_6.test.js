'use strict';
// STORE-6 through the N-API surface: SessionStore.open / openMemory / list / delete, an
// AgentRuntime constructed with a store and a session id (resume, session_locked,
// detachStore), session_committed events, bad files and their codes, the API key kept
// out of the database, and a child process killed with SIGKILL mid-run.
//
// When STORE6_CHILD is set this file is the child of that last test (see runChild).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const {
  native, API_KEY, completion, snapshot, pairingProblems, ScriptedModel, runtimeConfig, waitFor,
} = require('./support');

const LOOKUP_SCHEMA = JSON.stringify({ type: 'object', properties: { q: { type: 'string' } } });

function lookupRegistry() {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('lookup', 'Looks something up', LOOKUP_SCHEMA),
    async (call) => ({ content: `result for ${JSON.parse(call.argumentsJson).q}` }));
  return registry;
}

/** The child of store_6_a_child_killed_with_sigkill_mid_run_reopens_consistent_and_paired. */
async function runChild() {
  const [dbPath] = process.argv.slice(2);
  const store = native.SessionStore.open(dbPath);
  const config = runtimeConfig();
  config.sessionId = 'killed';
  let turn = 0;
  // Alternates a tool call and an answer, after a random short delay, so the kill falls
  // anywhere: in a request, in a tool, in a commit.
  const transport = async (request) => {
    await new Promise((r) => setTimeout(r, Math.random() * 4));
    const body = JSON.parse(request.body);
    const last = body.messages.at(-1);
    turn += 1;
    const usage = { prompt_tokens: 10 + turn, completion_tokens: 3, total_tokens: 13 + turn };
    const reply = last.role === 'user'
      ? completion({ toolCalls: [{ id: `c${turn}`, name: 'lookup', arguments: { q: `q${turn}` } }], usage })
      : completion({ content: `answer ${turn}`, usage });
    return { status: 200, body: reply };
  };
  const runtime = new native.AgentRuntime(config, transport, lookupRegistry(), store);
  runtime.subscribe((e) => {
    if (e.type === 'session_committed') process.send(JSON.parse(e.payloadJson));
  });
  for (let i = 0; ; i += 1) {
    // eslint-disable-next-line no-await-in-loop
    await runtime.run(`question ${i}`);
  }
}

if (process.env.STORE6_CHILD) {
  runChild().catch((e) => { process.stderr.write(`child failed: ${e.code} ${e.message}\n`); process.exit(3); });
} else {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const { fork, execFileSync } = require('node:child_process');

  function tempDir(tag) {
    return fs.mkdtempSync(path.join(os.tmpdir(), `arkagent-store6-${tag}-`));
  }

  function assertCode(fn, code, what) {
    assert.throws(fn, (e) => {
      assert.ok(e instanceof Error, `${what}: an Error`);
      assert.equal(e.code, code, `${what}: code ${e.code} (${e.message})`);
      return true;
    }, what);
  }

  /** Text long enough that a short snapshot is much smaller than it (the core requires that). */
  function longText(topic, chars = 2400) {
    const sentence = `Notes on ${topic}: the loss rate of the baguette, not the toast, is what matters. `;
    return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
  }

  /** Six messages, a tool pair in the middle, a last usage above the compressor's threshold. */
  function stateJson(sessionId) {
    return JSON.stringify({
      version: 1,
      session_id: sessionId,
      history: {
        messages: [
          { role: 'user', content: `Plan the bakery audit\n${longText('the goal')}` },
          { role: 'assistant', content: longText('a first answer') },
          { role: 'user', content: longText('a follow-up') },
          { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"flour"}' }] },
          { role: 'tool', tool_call_id: 'call_1', content: 'flour: 500 g', is_error: false },
          { role: 'assistant', content: 'KEPT: the final answer so far.' },
        ],
        episodic_memories: [],
      },
      usages: [{ prompt_tokens: 5000, completion_tokens: 40, total_tokens: 5040 }],
    });
  }

  function compressingConfig(sessionId, threshold = 1000) {
    const compressor = new native.ContextCompressor(threshold, 2, undefined, 1);
    compressor.summarizerMaxInputTokens = 100000;
    const config = runtimeConfig({ contextCompressor: compressor });
    config.sessionId = sessionId;
    return config;
  }

  const summarizer = () => completion({
    content: snapshot({ overall_goal: 'Audit the bakery' }),
    usage: { prompt_tokens: 1500, completion_tokens: 90, total_tokens: 1590 },
  });

  const commits = (events) => events.filter((e) => e.type === 'session_committed').map((e) => JSON.parse(e.payloadJson));

  test('store_6_resume_restores_history_usages_and_archived_originals_across_runtimes', async () => {
    const dir = tempDir('resume');
    const store = native.SessionStore.open(path.join(dir, 'sessions.db'));
    assert.ok(store instanceof native.SessionStore);
    assert.deepEqual(store.list(), []);

    const model = new ScriptedModel([
      () => completion({ content: 'Next: count the croissants.', usage: { prompt_tokens: 60, completion_tokens: 7, total_tokens: 67 } }),
    ], { summarizer, tools: ['lookup', 'retrieve_memory'] });
    const first = new native.AgentRuntime(compressingConfig('chat-1'), model.transport, lookupRegistry(), store);
    assert.equal(first.sessionId, 'chat-1');
    const events = [];
    first.subscribe((e) => events.push(e));
    await first.importState(stateJson('chat-1'));
    const compressed = await first.compressNow();
    assert.equal(compressed.outcome, 'compressed');
    await first.run('What next?');
    assert.deepEqual(model.problems, []);
    await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');

    // session_committed: strictly increasing sequence numbers, the last one what list() reports.
    const seen = commits(events);
    assert.ok(seen.length >= 2, `commits seen: ${JSON.stringify(seen)}`);
    seen.forEach((c, i) => {
      assert.equal(typeof c.commitSeq, 'number');
      if (i > 0) assert.ok(c.commitSeq > seen[i - 1].commitSeq, 'increasing commitSeq');
    });
    const committedEvent = events.find((e) => e.type === 'session_committed');
    assert.equal(committedEvent.sessionId, 'chat-1');

    const history = JSON.parse(first.historyJson());
    const episodes = first.episodicMemories();
    assert.equal(episodes.length, 1);
    const usages = first.usages();

    // list(): the session with its title, counts and last commit.
    const [summary, ...others] = store.list();
    assert.deepEqual(others, []);
    assert.equal(summary.id, 'chat-1');
    // README quickstart: list() gives [{ id, title, updatedMs, messageCount, totalTokens, commitSeq }].
    assert.deepEqual(Object.keys(summary).sort(), ['commitSeq', 'id', 'messageCount', 'title', 'totalTokens', 'updatedMs']);
    assert.equal(summary.title, 'Plan the bakery audit', 'the first user text, first line');
    assert.equal(summary.messageCount, history.length + episodes[0].messageCount, 'live plus archived');
    assert.equal(summary.totalTokens, usages.reduce((n, u) => n + u.totalTokens, 0));
    assert.equal(summary.commitSeq, seen.at(-1).commitSeq);
    assert.equal(seen.at(-1).messageCount, summary.messageCount);
    assert.ok(summary.updatedMs > 1.6e12);

    // A second runtime on the same session is refused, also through another handle on the file.
    assertCode(() => new native.AgentRuntime(compressingConfig('chat-1'), model.transport, lookupRegistry(), store),
      'session_locked', 'a second runtime, same store');
    const otherHandle = native.SessionStore.open(path.join(dir, 'sessions.db'));
    assertCode(() => new native.AgentRuntime(compressingConfig('chat-1'), model.transport, lookupRegistry(), otherHandle),
      'session_locked', 'a second runtime, another handle');
    assertCode(() => store.delete('chat-1'), 'session_locked', 'delete while open');

    // Drop the first runtime's hold on the session; a new one resumes everything.
    assert.equal(first.detachStore(), true);
    assert.equal(first.detachStore(), false, 'nothing attached any more');
    const episodeId = episodes[0].id;
    const resumedModel = new ScriptedModel([
      (body) => {
        assert.ok(body.messages.some((m) => m.content === 'Next: count the croissants.'), 'the resumed history is sent');
        return completion({ toolCalls: [{ id: 'm1', name: 'retrieve_memory', arguments: { snapshot_id: episodeId, limit: 10 } }] });
      },
      (body) => {
        const page = JSON.parse(body.messages.at(-1).content);
        assert.equal(page.total_messages, 3);
        assert.ok(page.messages[0].content.startsWith('Plan the bakery audit'), 'an archived original');
        return completion({ content: 'Found it.' });
      },
    ], { tools: ['lookup', 'retrieve_memory'] });
    // A high threshold: no automatic compression in the way of the scripted turns.
    const second = new native.AgentRuntime(compressingConfig('chat-1', 100000), resumedModel.transport, lookupRegistry(), otherHandle);
    assert.deepEqual(JSON.parse(second.historyJson()), history, 'history restored');
    assert.deepEqual(second.usages().map((u) => u.totalTokens), usages.map((u) => u.totalTokens), 'usages restored');
    assert.deepEqual(second.episodicMemories().map((e) => [e.id, e.archivedMessagesJson]),
      episodes.map((e) => [e.id, e.archivedMessagesJson]), 'episodes restored with their originals');
    const secondEvents = [];
    second.subscribe((e) => secondEvents.push(e));
    const result = await second.run('What was the first request?');
    assert.equal(result.status, 'completed');
    assert.deepEqual(resumedModel.problems, []);
    await waitFor(() => secondEvents.some((e) => e.type === 'run_finished'), 'run_finished');
    assert.ok(commits(secondEvents)[0].commitSeq > summary.commitSeq, 'the sequence continues after a resume');

    // delete(): refused while open, then removes the session; a new runtime starts empty.
    assert.equal(second.detachStore(), true);
    assert.equal(store.delete('chat-1'), true);
    assert.equal(store.delete('chat-1'), false);
    assert.deepEqual(store.list(), []);
    const fresh = new native.AgentRuntime(compressingConfig('chat-1'), model.transport, lookupRegistry(), store);
    assert.deepEqual(JSON.parse(fresh.historyJson()), []);
    assert.deepEqual(fresh.episodicMemories(), []);
  });

  test('store_6_without_a_session_id_each_runtime_gets_a_new_session_and_no_store_persists_nothing', async () => {
    const store = native.SessionStore.openMemory();
    const reply = () => completion({ content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } });
    // README: "an empty one makes a new session each time" — the default, and set explicitly.
    assert.equal(runtimeConfig().sessionId, '');
    const emptyId = runtimeConfig();
    emptyId.sessionId = '';
    const a = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([reply]).transport, new native.ToolRegistry(), store);
    const b = new native.AgentRuntime(emptyId, new ScriptedModel([reply]).transport, new native.ToolRegistry(), store);
    assert.notEqual(a.sessionId, b.sessionId);
    assert.ok(a.sessionId !== '' && b.sessionId !== '', 'generated ids, read back from sessionId');
    await a.run('hello a');
    await b.run('hello b');
    assert.deepEqual(store.list().map((s) => s.id).sort(), [a.sessionId, b.sessionId].sort());
    assert.deepEqual(store.list().map((s) => s.title).sort(), ['hello a', 'hello b']);
    // Explicitly undefined: no store, nothing persisted, detachStore() false.
    const plain = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([reply]).transport, new native.ToolRegistry(), undefined);
    await plain.run('hello');
    assert.equal(plain.detachStore(), false);
    assert.equal(store.list().length, 2);
  });

  test('store_6_a_garbage_collected_runtime_releases_its_session', async () => {
    // gc() in this test process only (node --test runs each file in its own process).
    require('node:v8').setFlagsFromString('--expose-gc');
    const gc = require('node:vm').runInNewContext('gc');
    const store = native.SessionStore.openMemory();
    const config = () => {
      const c = runtimeConfig();
      c.sessionId = 'collected';
      return c;
    };
    (() => { new native.AgentRuntime(config(), async () => ({ status: 500 }), new native.ToolRegistry(), store); })();
    assertCode(() => store.delete('collected'), 'session_locked', 'held before the collection');
    let reopened = null;
    for (let i = 0; i < 100 && reopened === null; i += 1) {
      gc();
      // eslint-disable-next-line no-await-in-loop
      await new Promise((r) => setImmediate(r));
      try {
        reopened = new native.AgentRuntime(config(), async () => ({ status: 500 }), new native.ToolRegistry(), store);
      } catch (e) {
        assert.equal(e.code, 'session_locked');
      }
    }
    assert.ok(reopened, 'the session was released by the garbage collection');
  });

  test('store_6_detach_store_during_a_run_throws_run_in_progress', async () => {
    const store = native.SessionStore.openMemory();
    let release;
    const gate = new Promise((r) => { release = r; });
    const model = new ScriptedModel([async () => { await gate; return completion({ content: 'ok' }); }]);
    const config = runtimeConfig();
    config.sessionId = 'busy';
    const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry(), store);
    const run = runtime.run('hi');
    assertCode(() => runtime.detachStore(), 'run_in_progress', 'detachStore during a run');
    await waitFor(() => model.requests.length === 1, 'the request');
    release();
    await run;
    assert.equal(runtime.detachStore(), true);
  });

  test('store_6_bad_paths_give_their_codes_and_damage_nothing', async (t) => {
    const dir = tempDir('bad');
    assertCode(() => native.SessionStore.open(dir), 'store_io', 'a directory');
    assertCode(() => native.SessionStore.open(path.join(dir, 'no', 'such', 's.db')), 'store_io', 'a missing directory');
    assertCode(() => native.SessionStore.open(''), 'invalid_argument', 'an empty path');
    const corrupt = path.join(dir, 'corrupt.db');
    const garbage = Buffer.from('not a database at all. '.repeat(300));
    fs.writeFileSync(corrupt, garbage);
    assertCode(() => native.SessionStore.open(corrupt), 'store_corrupt', 'a corrupt file');
    assert.deepEqual(fs.readFileSync(corrupt), garbage, 'the corrupt file is left as it was');
    // A truncated store: a real one cut after its first page.
    const good = path.join(dir, 'good.db');
    const store = native.SessionStore.open(good);
    const config = runtimeConfig();
    config.sessionId = 's';
    const rt = new native.AgentRuntime(config, new ScriptedModel([() => completion({ content: 'ok' })]).transport, new native.ToolRegistry(), store);
    await rt.run('hello');
    rt.detachStore();
    const truncated = path.join(dir, 'truncated.db');
    fs.copyFileSync(good, truncated);
    fs.truncateSync(truncated, 100);
    assertCode(() => native.SessionStore.open(truncated), 'store_corrupt', 'a truncated file');

    // A read-only directory: a read-only bind mount when root, else the mode.
    const ro = tempDir('ro');
    const mounted = (() => { try { execFileSync('mount', ['--bind', ro, ro], { stdio: 'ignore' }); return true; } catch { return false; } })();
    try {
      if (mounted) execFileSync('mount', ['-o', 'remount,ro,bind', ro], { stdio: 'ignore' });
      else fs.chmodSync(ro, 0o555);
    } catch { /* checked by the probe below */ }
    let writable = true;
    try { fs.writeFileSync(path.join(ro, 'probe'), 'x'); } catch { writable = false; }
    try {
      if (writable) {
        t.skip('cannot make a directory read-only here');
        return;
      }
      assertCode(() => native.SessionStore.open(path.join(ro, 'new.db')), 'store_read_only', 'a read-only directory');
    } finally {
      if (mounted) execFileSync('umount', [ro]);
      else fs.chmodSync(ro, 0o755);
    }
  });

  test('store_6_the_api_key_never_reaches_the_database_files', async () => {
    const dir = tempDir('key');
    const store = native.SessionStore.open(path.join(dir, 'sessions.db'));
    const config = runtimeConfig();
    config.sessionId = 'secret';
    // The model and a tool echo the key; the store must hold "<redacted>" instead.
    const model = new ScriptedModel([
      () => completion({ toolCalls: [{ id: 'c1', name: 'lookup', arguments: { q: API_KEY } }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
      () => completion({ content: `Your key is ${API_KEY}`, usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } }),
    ], { tools: ['lookup'] });
    const runtime = new native.AgentRuntime(config, model.transport, lookupRegistry(), store);
    await runtime.run(`my key is ${API_KEY}`);
    assert.deepEqual(model.problems, []);
    assert.ok(store.list()[0].messageCount >= 4);
    const files = fs.readdirSync(dir);
    assert.ok(files.includes('sessions.db'));
    let all = Buffer.alloc(0);
    for (const name of files) {
      const file = path.join(dir, name);
      if (!fs.statSync(file).isFile()) continue;
      const bytes = fs.readFileSync(file);
      assert.ok(!bytes.includes(API_KEY), `${name} does not contain the key`);
      all = Buffer.concat([all, bytes]);
    }
    assert.ok(all.includes('Your key is <redacted>'), 'the echoed answer was stored, redacted');
    assert.ok(files.some((f) => f.endsWith('-wal')), `the WAL was scanned too: ${files}`);
  });

  test('store_6_a_child_killed_with_sigkill_mid_run_reopens_consistent_and_paired', async () => {
    const dir = tempDir('kill');
    const dbPath = path.join(dir, 'sessions.db');
    for (let round = 0; round < 3; round += 1) {
      const child = fork(__filename, [dbPath], { env: { ...process.env, STORE6_CHILD: '1' }, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
      let stderr = '';
      child.stderr.on('data', (d) => { stderr += d; });
      const committed = [];
      child.on('message', (m) => committed.push(m));
      const target = 3 + Math.floor(Math.random() * 20);
      const exited = new Promise((r) => child.on('exit', (code, signal) => r(signal)));
      try {
        // eslint-disable-next-line no-await-in-loop
        await waitFor(() => committed.length >= target || child.exitCode !== null, 'child commits', 20000);
        assert.equal(child.exitCode, null, `the child is still running: ${stderr}`);
      } finally {
        child.kill('SIGKILL');
      }
      // eslint-disable-next-line no-await-in-loop
      assert.equal(await exited, 'SIGKILL');

      const lastSeen = committed.at(-1);
      const store = native.SessionStore.open(dbPath);
      const [summary] = store.list();
      assert.equal(summary.id, 'killed');
      assert.ok(summary.commitSeq >= lastSeen.commitSeq, 'every commit the child reported survived');
      assert.ok(summary.messageCount >= lastSeen.messageCount);
      const config = runtimeConfig();
      config.sessionId = 'killed';
      // The dead child's lock is gone with it.
      const resumed = new native.AgentRuntime(config, async () => ({ status: 500 }), lookupRegistry(), store);
      const history = JSON.parse(resumed.historyJson());
      assert.equal(history.length, summary.messageCount, 'no duplicated or missing message');
      assert.deepEqual(pairingProblems(history), [], 'paired');
      assert.equal(history.at(-1).role === 'assistant' && Array.isArray(history.at(-1).tool_calls), false,
        'no tool call left without its results');
      const assistants = history.filter((m) => m.role === 'assistant').length;
      assert.equal(resumed.usages().length, assistants, 'one usage per committed answer');
      assert.equal(summary.totalTokens, resumed.usages().reduce((n, u) => n + u.totalTokens, 0));
      resumed.detachStore();
    }
  });
}
