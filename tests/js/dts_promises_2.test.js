'use strict';
// Promises of index.d.ts, second round, read as a stranger who has only the docs: custom
// compressors and their thresholds, the compression event, context overflow (CMP-1,
// CMP-2, CMP-6, CMP-7), usage totals and prices (COST-1, COST-2, BND-1), the event stream
// (CORE-5), the SessionStore (STORE-4, STORE-5, STORE-6), image bounds (IMG-5), the HTTP
// transport and its body sink (LLM-1, LLM-2, LLM-3), runtime limits (CORE-4) and the tool
// registry (TOOL-1, NAPI-2). Each test quotes the sentence it checks. The areas of
// dts_promises.test.js are not repeated here.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const {
  native, completion, snapshot, sseEvent, textStream, modelConfig, runtimeConfig, ScriptedModel, pairingProblems, waitFor, deferred,
} = require('./support');

const USAGE = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };
const OBJECT_SCHEMA = '{"type":"object"}';
const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];
// A 1×1 PNG (70 bytes).
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const OVERFLOW = JSON.stringify({ error: { message: 'maximum context length exceeded', type: 'invalid_request_error', code: 'context_length_exceeded' } });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const payloads = (events, type) => events.filter((e) => e.type === type).map((e) => JSON.parse(e.payloadJson));

function tempDir(tag) {
  return fs.mkdtempSync(path.join(os.tmpdir(), `arkagent-dts2-${tag}-`));
}

/** Subscribes a collector; `finished(n)` waits for the n-th run_finished. */
function collect(runtime) {
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const finished = (n = 1) => waitFor(() => events.filter((e) => e.type === 'run_finished').length >= n, `run_finished #${n}`);
  return { events, finished };
}

/** A registry with the tool `t` (answers "ok"). */
function oneTool(execute = async () => ({ content: 'ok' })) {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('t', 'A tool', OBJECT_SCHEMA), execute);
  return registry;
}

/** The model calls `t` once, then answers. */
function toolThenAnswer(answer = 'done') {
  return new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c1', name: 't', arguments: {} }], usage: USAGE }),
    () => completion({ content: answer, usage: USAGE }),
  ]);
}

function streamedModel(tune = () => {}) {
  const model = modelConfig();
  model.stream = true;
  tune(model);
  return model;
}

// ------------------------------------------------------------------ CMP: custom compressors

/** One single-turn run with a custom compressor that skips and records its contexts. */
async function customCompressorRun(threshold) {
  const estimates = [];
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson, contextJson) => {
    estimates.push(JSON.parse(contextJson).estimated_prompt_tokens);
    return native.CompressOutcome.skipped().toJson();
  }, threshold);
  const model = new ScriptedModel([() => completion({ content: 'The answer is forty-two, as usual.', usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 } })]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const { events, finished } = collect(runtime);
  await runtime.run('What is the answer to everything?');
  await finished();
  assert.deepEqual(model.problems, []);
  return { estimates, request: payloads(events, 'model_request')[0] };
}

// setCustomCompressor(): "`threshold` is the runtime's trigger: before a model call and
// after a turn, `compress` is called only when the prompt size (as in the "model_request"
// event) reaches it ... otherwise the runtime skips ... without calling it. ... The
// threshold is reported in events."
test('cmp_1_js_a_custom_threshold_is_reached_at_exactly_the_prompt_size_of_the_model_request_event', async () => {
  const far = await customCompressorRun(1e9);
  assert.deepEqual(far.estimates, [], 'far below: never called');
  const preflight = far.request.estimatedPromptTokens;
  assert.ok(preflight > 0);

  const atPreflight = await customCompressorRun(preflight);
  assert.equal(atPreflight.request.compressionThreshold, preflight, 'the threshold is reported in model_request');
  assert.equal(atPreflight.estimates.length, 2, 'reached before the model call and after the turn');
  assert.equal(atPreflight.estimates[0], preflight, 'called with the size the model_request event shows');
  const postTurn = atPreflight.estimates[1];
  assert.ok(postTurn > preflight, 'the answer made the prompt larger');

  assert.deepEqual((await customCompressorRun(preflight + 1)).estimates, [postTurn], 'one token above: only after the turn');
  assert.deepEqual((await customCompressorRun(postTurn)).estimates, [postTurn], 'reached exactly after the turn');
  assert.deepEqual((await customCompressorRun(postTurn + 1)).estimates, [], 'one token above both: never called');
});

/** A run of `turns` tool turns, then the answer, with threshold 0 and a compressor that answers `answer`. */
async function thresholdZeroRun(answer, turns = 1) {
  const contexts = [];
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson, contextJson) => {
    contexts.push(JSON.parse(contextJson));
    return answer;
  }, 0);
  const model = new ScriptedModel([
    ...Array.from({ length: turns }, (_, i) => () => completion({ toolCalls: [{ id: `c${i}`, name: 't', arguments: {} }], usage: USAGE })),
    () => completion({ content: 'done', usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(config, model.transport, oneTool());
  const { events, finished } = collect(runtime);
  const result = await runtime.run('use the tool');
  await finished();
  await sleep(20); // a late compression event would show here
  assert.deepEqual(model.problems, []);
  assert.equal(result.status, 'completed');
  return { contexts, compressions: payloads(events, 'compression') };
}

const attempt = (c) => `${c.trigger}/${c.outcome}/${c.reason}`;

// setCustomCompressor(): "0 (the same on every surface): nothing is below it, so
// `compress` is called before every model call and after every turn (except right after
// a compression, and while automatic attempts back off after a failed one: skipped with
// "backing_off_after_failure" until three more model calls were made)."
// CompressionPayload: "every `compressed` and `failed` outcome, and `skipped` for
// `no_safe_split`, `last_usage_is_compression` and `backing_off_after_failure` (routine
// below-threshold checks are not reported)." README says the same twice ("every automatic
// attempt compresses (but the one right after a compression, and those of the three model
// calls after a failed attempt …)"; "Custom compressors": "… and during the back-off").
test('cmp_1_js_threshold_0_calls_the_compressor_at_every_step_and_backs_off_three_model_calls_after_a_failure', async () => {
  // Two model calls: before call 1, after turn 1, before call 2, after turn 2.
  const skipping = await thresholdZeroRun(native.CompressOutcome.skipped().toJson());
  assert.equal(skipping.contexts.length, 4, 'an attempt that skips: called at every step');
  assert.deepEqual(skipping.compressions, [], 'routine skips are not reported');
  // Four model calls: the failure before call 1 holds the automatic attempts back until
  // three model calls were made; the attempt after turn 3 is made (and fails again).
  const failing = await thresholdZeroRun(native.CompressOutcome.failed('llm_error', 'llm_server').toJson(), 3);
  assert.equal(failing.contexts.length, 2, `called twice: ${failing.compressions.map(attempt).join(', ')}`);
  assert.deepEqual(failing.compressions.map(attempt), [
    'preflight/failed/llm_error',
    'post_turn/skipped/backing_off_after_failure', 'preflight/skipped/backing_off_after_failure',
    'post_turn/skipped/backing_off_after_failure', 'preflight/skipped/backing_off_after_failure',
    'post_turn/failed/llm_error',
    'preflight/skipped/backing_off_after_failure', 'post_turn/skipped/backing_off_after_failure',
  ]);
  const failed = failing.compressions.find((c) => c.outcome === 'failed');
  assert.deepEqual([failed.errorCode, failed.threshold], ['llm_server', 0]);
});

// setCustomCompressor(): "compressNow() and a context overflow always call it."
// CompressContext: "estimatedPromptTokens: ... unset for compressNow() and overflow";
// "force: True after the model refused the context as too long".
test('cmp_1_js_a_context_overflow_calls_the_custom_compressor_with_force_and_no_estimate_whatever_the_threshold', async () => {
  const contexts = [];
  const config = runtimeConfig();
  // No threshold: 64000, far above this small conversation.
  config.setCustomCompressor(async (stateJson, contextJson) => {
    contexts.push(native.CompressContext.parse(contextJson));
    assert.equal(JSON.parse(stateJson).history.messages.length, 3);
    return native.CompressOutcome.compressed(2, 'the user said m0, the assistant a0', undefined,
      { promptTokens: 7, completionTokens: 3, totalTokens: 10 }).toJson();
  });
  const model = new ScriptedModel([
    () => ({ status: 400, body: OVERFLOW }),
    (body) => {
      assert.ok(!JSON.stringify(body.messages).includes('"m0"'), 'the archived messages left the request');
      return completion({ content: 'fits now', usage: USAGE });
    },
  ]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  await runtime.importState(JSON.stringify({
    version: 1,
    session_id: 'overflow',
    history: { messages: [{ role: 'user', content: 'm0' }, { role: 'assistant', content: 'a0' }], episodic_memories: [] },
    usages: [],
  }));
  const { events, finished } = collect(runtime);
  const result = await runtime.run('hello');
  await finished();
  assert.deepEqual(model.problems, []);
  assert.deepEqual([result.status, result.finalText], ['completed', 'fits now']);
  assert.equal(contexts.length, 1, 'called once, for the overflow');
  assert.equal(contexts[0].force, true);
  assert.equal(contexts[0].estimatedPromptTokens, undefined);
  const [compression] = payloads(events, 'compression');
  assert.deepEqual([compression.trigger, compression.outcome, compression.threshold, compression.estimatedPromptTokens],
    ['overflow', 'compressed', 64000, null]);
  assert.equal(runtime.episodicMemories().length, 1);
  assert.equal(runtime.usages().filter((u) => u.source === 'context_compression').length, 1, 'its usage tagged');
});

// CustomCompressor: "anything unusable ... fails the attempt ("compressor_error", or
// "invalid_split_index", "post_commit_pairing_violation", "invalid_episode_id",
// "empty_summary") and changes nothing."
test('cmp_1_mem_3_js_a_custom_answer_with_a_taken_or_blank_episode_id_or_a_cut_tool_pair_changes_nothing', async () => {
  const state = JSON.stringify({
    version: 1,
    session_id: 'custom-ids',
    history: {
      messages: [
        { role: 'user', content: 'm0' }, { role: 'assistant', content: 'a0' }, { role: 'user', content: 'm1' },
        { role: 'assistant', tool_calls: [{ id: 'c1', name: 't', arguments: '{}' }] },
        { role: 'tool', tool_call_id: 'c1', content: 'r', is_error: false },
        { role: 'assistant', content: 'a1' },
      ],
      episodic_memories: [{ id: 'snap-1', summary: 'older', created_at_ms: 1730000000000, message_count: 1, archived_messages: [{ role: 'user', content: 'z' }] }],
    },
    usages: [],
  });
  const usage = { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 };
  const cases = [
    [{ outcome: 'compressed', split_index: 3, summary: 's', episode_id: 'snap-1', usage }, 'invalid_episode_id'],
    [{ outcome: 'compressed', split_index: 3, summary: 's', episode_id: '   ', usage }, 'invalid_episode_id'],
    [{ outcome: 'compressed', split_index: 4, summary: 's', usage }, 'post_commit_pairing_violation'],
  ];
  for (const [answer, reason] of cases) {
    const config = runtimeConfig();
    config.setCustomCompressor(async () => JSON.stringify(answer), 1000);
    const runtime = new native.AgentRuntime(config, new ScriptedModel([]).transport, oneTool());
    await runtime.importState(state);
    const before = runtime.exportState();
    const result = await runtime.compressNow();
    assert.deepEqual([result.outcome, result.reason, result.episodeId], ['failed', reason, null], JSON.stringify(answer));
    assert.equal(runtime.exportState(), before, `${reason}: byte-identical (no episode, no usage recorded)`);
    assert.deepEqual(runtime.listEpisodes().map((e) => e.id), ['snap-1']);
  }
  // The same answer with a fresh id commits: the refusals above were about the id and the split.
  const config = runtimeConfig();
  config.setCustomCompressor(async () => JSON.stringify({ outcome: 'compressed', split_index: 3, summary: 's', episode_id: 'snap-2', usage }), 1000);
  const runtime = new native.AgentRuntime(config, new ScriptedModel([]).transport, oneTool());
  await runtime.importState(state);
  const result = await runtime.compressNow();
  assert.deepEqual([result.outcome, result.episodeId, result.messagesArchived], ['compressed', 'snap-2', 3]);
  assert.deepEqual(runtime.listEpisodes().map((e) => e.id), ['snap-1', 'snap-2']);
});

// ------------------------------------------------------------------ COST: usage totals

// RunResult.usage: "What this runtime's runs used, plus each compression `compress_now`
// committed (its `CompressResult::usage`) and the usages a resumed or imported state
// brought, adds up to `total_usage`."
test('cost_1_js_the_runs_usages_and_compressNows_add_up_to_totalUsage', async () => {
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson) => {
    const n = JSON.parse(stateJson).history.messages.length;
    return n >= 2
      ? native.CompressOutcome.compressed(1, 'the first question', undefined, { promptTokens: 40, completionTokens: 8, totalTokens: 48 }).toJson()
      : native.CompressOutcome.skipped().toJson();
  }, 1e9);
  const model = new ScriptedModel([
    () => completion({ content: 'a', usage: { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65 } }),
    () => completion({ content: 'b', usage: { prompt_tokens: 70, completion_tokens: 5, total_tokens: 75 } }),
  ]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const { events, finished } = collect(runtime);
  const first = await runtime.run('q1');
  const compressed = await runtime.compressNow();
  assert.equal(compressed.outcome, 'compressed');
  assert.equal(compressed.usage.totalTokens, 48);
  const second = await runtime.run('q2');
  await finished(2);
  assert.deepEqual(model.problems, []);
  const total = runtime.totalUsage().total;
  const finishedUsages = payloads(events, 'run_finished').map((p) => p.usage);
  assert.deepEqual(finishedUsages.map((u) => u.totalTokens), [first.usage.totalTokens, second.usage.totalTokens]);
  assert.deepEqual([first.usage.totalTokens, second.usage.totalTokens], [65, 75], 'a run counts its own calls only');
  assert.equal(first.usage.totalTokens + compressed.usage.totalTokens + second.usage.totalTokens, total.totalTokens,
    `the runs' usages and compressNow()'s add up to totalUsage().total (${total.totalTokens})`);
  assert.equal(first.usage.callCount + 1 + second.usage.callCount, total.callCount);

  // An imported state brings its usages: they are in the total, in no run of this runtime.
  const other = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([() => completion({ content: 'c', usage: USAGE })]).transport, new native.ToolRegistry());
  await other.importState(runtime.exportState());
  const third = await other.run('q3');
  assert.equal(other.totalUsage().total.totalTokens, total.totalTokens + third.usage.totalTokens);
});

// ModelPrice: "A call is priced once, when its usage arrives: prompt tokens served from the
// cache ... at cachedInputPerMillion, ... the rest of the prompt at inputPerMillion,
// completion tokens ... at outputPerMillion; rounded to the nearest billionth of the
// currency unit." ModelConfig.price: "a rate that is negative, not finite or above 1e9,
// throws "invalid_config"". ModelPrice.currency: "1 to 16 bytes without spaces".
// sumUsages(): "Throws "invalid_argument" for ... an unknown source".
test('cost_2_bnd_1_js_a_call_is_rounded_once_to_the_nearest_billionth_and_price_bounds_hold_at_their_edge', async () => {
  const cases = [
    // 0.1 nanos a token: 4 + 4 tokens = 0.8 nanos, rounded once: 1 (parts rounded apart: 0 + 0).
    [{ inputPerMillion: 0.0001, cachedInputPerMillion: 0.0001, outputPerMillion: 0.0001 }, { prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 }, 1],
    // 1 uncached × 0.3 + 2 cached × 0.1 + 2 out × 0.2 = 0.9 nanos: 1.
    [{ inputPerMillion: 0.0003, cachedInputPerMillion: 0.0001, outputPerMillion: 0.0002 },
      { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5, prompt_tokens_details: { cached_tokens: 2 } }, 1],
    // 0.4 nanos: 0, and still a cost (the call was priced).
    [{ inputPerMillion: 0.0001, cachedInputPerMillion: 0.0001, outputPerMillion: 0.0001 }, { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 }, 0],
  ];
  for (const [rates, usage, nanos] of cases) {
    const model = modelConfig();
    model.price = { currency: 'USD', ...rates };
    const scripted = new ScriptedModel([() => completion({ content: 'x', usage })]);
    const runtime = new native.AgentRuntime(runtimeConfig({ model }), scripted.transport, new native.ToolRegistry());
    const result = await runtime.run('hi');
    assert.deepEqual(runtime.usages()[0].cost, { currency: 'USD', nanos }, JSON.stringify([rates, usage]));
    assert.deepEqual(result.usage.costs, [{ currency: 'USD', nanos }]);
    assert.equal(result.usage.pricedCallCount, 1);
  }
  const price = (currency, rate) => ({ currency, inputPerMillion: rate, cachedInputPerMillion: 0, outputPerMillion: 0 });
  const accepts = (p) => { const m = modelConfig(); m.price = p; return m.price.currency; };
  const refuses = (p, what) => {
    const m = modelConfig();
    m.price = price('CNY', 1);
    assert.throws(() => { m.price = p; }, (e) => e.code === 'invalid_config', what);
    assert.equal(m.price.currency, 'CNY', `${what}: nothing changed`);
  };
  assert.equal(accepts(price('USD', 1e9)), 'USD', 'a rate of exactly 1e9');
  refuses(price('USD', 1000000000.0000001), 'the next rate above 1e9');
  assert.equal(accepts(price('A'.repeat(16), 1)), 'A'.repeat(16), '16 bytes');
  refuses(price('A'.repeat(17), 1), '17 bytes');
  assert.equal(accepts(price('Ä'.repeat(8), 1)), 'Ä'.repeat(8), '8 characters, 16 bytes');
  refuses(price('Ä'.repeat(9), 1), '9 characters, 18 bytes');
  const u = (extra) => [{ promptTokens: 1, completionTokens: 1, totalTokens: 2, ...extra }];
  assert.equal(native.sumUsages(u({ source: 'unreported' })).callCount, 1);
  assert.throws(() => native.sumUsages(u({ source: 'bogus' })), (e) => e.code === 'invalid_argument', 'an unknown source');
});

// ------------------------------------------------------------------ STORE

// SessionCommittedPayload: "commitSeq: The session's commit sequence number (1 for its first
// commit)". AgentEvent: "a runtime constructed with a SessionStore also sends
// "session_committed" after each commit"; AgentEventListener: ""run_finished" is always a
// run's last event". detachStore(): "What was committed stays; nothing more is committed."
test('store_6_js_session_committed_counts_from_1_before_run_finished_and_detachStore_commits_nothing_more', async () => {
  const store = native.SessionStore.openMemory();
  const config = () => { const c = runtimeConfig(); c.sessionId = 'commits'; return c; };
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c1', name: 't', arguments: {} }], usage: USAGE }),
    () => completion({ content: 'done', usage: USAGE }),
    () => completion({ content: 'after the detach', usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(config(), model.transport, oneTool(), store);
  const { events, finished } = collect(runtime);
  const result = await runtime.run('hello');
  // Detached as soon as the run settled: everything the run committed must stay.
  assert.equal(runtime.detachStore(), true);
  await finished();
  await sleep(20); // a late event would show here
  const ofRun = events.filter((e) => e.runId === result.runId);
  assert.equal(ofRun.at(-1).type, 'run_finished', ofRun.map((e) => e.type).join());
  const commits = payloads(ofRun, 'session_committed');
  assert.deepEqual(commits.map((c) => c.commitSeq), [1, 2, 3], 'user message, tool turn, answer');
  const [summary] = store.list();
  assert.deepEqual([summary.commitSeq, summary.messageCount], [3, 4]);
  const history = runtime.historyJson();
  const usages = runtime.usages();

  // Detached: the runtime goes on, nothing reaches the store.
  const mark = events.length;
  assert.equal((await runtime.run('more')).finalText, 'after the detach');
  await waitFor(() => events.slice(mark).some((e) => e.type === 'run_finished'), 'run_finished after the detach');
  await sleep(20);
  assert.deepEqual(events.slice(mark).filter((e) => e.type === 'session_committed'), [], 'no commit after detachStore()');
  assert.deepEqual(store.list(), [summary]);
  const reopened = new native.AgentRuntime(config(), model.transport, oneTool(), store);
  assert.equal(reopened.historyJson(), history, 'the session as it was when detached');
  assert.deepEqual(reopened.usages(), usages);
  assert.deepEqual(model.problems, []);
});

// SessionSummary.title: "(a photo without text is passed over) … It follows an edit of the
// first run's text, and a rewind to before the first run empties it."
test('store_4_chat_1_js_the_title_follows_an_edit_or_rewind_of_the_first_run', async () => {
  const store = native.SessionStore.openMemory();
  const title = (id) => store.list().find((s) => s.id === id).title;
  const open = (id) => {
    const config = runtimeConfig();
    config.sessionId = id;
    const model = new ScriptedModel(Array.from({ length: 8 }, () => () => completion({ content: 'ok', usage: USAGE })));
    return new native.AgentRuntime(config, model.transport, new native.ToolRegistry(), store);
  };
  const rt = open('t');
  const first = (await rt.run('Paris?')).runId;
  await rt.run('And Oslo?');
  assert.equal(title('t'), 'Paris?');
  const edited = (await rt.editAndResend(first, 'Tokyo?')).runId;
  assert.equal(title('t'), 'Tokyo?', 'an edit of the first run');
  await rt.rewind(edited);
  assert.equal(title('t'), '', 'rewound to before the first run');
  const photo = open('p');
  await photo.runParts([native.ContentPart.image(new Uint8Array(PNG))]);
  assert.equal(title('p'), '', 'a photo alone has no text');
  await photo.run('what is it?');
  assert.equal(title('p'), 'what is it?');
});

// SessionSummary.title: "The first user text's first line, at most 80 characters";
// SessionStore.list(): "Every session, most recently updated first."
test('store_4_js_list_titles_are_the_first_line_cut_at_80_characters_most_recent_first', async () => {
  const store = native.SessionStore.openMemory();
  const inputs = {
    cjk80: '界'.repeat(80),
    cjk81: '界'.repeat(81),
    ascii81: 'a'.repeat(81),
    lines: 'the first line\nthe second line',
  };
  for (const [id, input] of Object.entries(inputs)) {
    const config = runtimeConfig();
    config.sessionId = id;
    const model = new ScriptedModel([() => completion({ content: 'ok', usage: USAGE })]);
    const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry(), store);
    await runtime.run(input);
    runtime.detachStore();
  }
  const titles = Object.fromEntries(store.list().map((s) => [s.id, s.title]));
  assert.deepEqual(titles, {
    cjk80: '界'.repeat(80), cjk81: '界'.repeat(80), ascii81: 'a'.repeat(80), lines: 'the first line',
  });
  const listed = store.list();
  for (let i = 1; i < listed.length; i += 1) {
    assert.ok(listed[i - 1].updatedMs >= listed[i].updatedMs, `most recently updated first: ${listed.map((s) => `${s.id}@${s.updatedMs}`)}`);
  }
  const latest = Math.max(...listed.map((s) => s.updatedMs));
  assert.ok(listed.filter((s) => s.updatedMs === latest).some((s) => s.id === 'lines') && listed[0].updatedMs === latest);
});

const HAS_SQLITE3 = (() => { try { execFileSync('sqlite3', ['-version'], { stdio: 'ignore' }); return true; } catch { return false; } })();

// SessionStore: ""store_foreign" (another application's database), "store_newer_schema"
// (written by a newer library; left untouched)".
test('store_5_js_a_foreign_database_and_a_newer_schema_get_their_codes_and_are_left_untouched', { skip: !HAS_SQLITE3 && 'the sqlite3 command is needed' }, async () => {
  const dir = tempDir('codes');
  const foreign = path.join(dir, 'notes.db');
  execFileSync('sqlite3', [foreign, "PRAGMA journal_mode=DELETE; CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes(body) VALUES ('keep me');"]);
  const foreignBytes = fs.readFileSync(foreign);
  assert.throws(() => native.SessionStore.open(foreign), (e) => e.code === 'store_foreign');
  assert.deepEqual(fs.readFileSync(foreign), foreignBytes, 'the other application\'s database is left as it was');

  const newer = path.join(dir, 'sessions.db');
  const store = native.SessionStore.open(newer);
  const config = runtimeConfig();
  config.sessionId = 's';
  const runtime = new native.AgentRuntime(config, new ScriptedModel([() => completion({ content: 'ok' })]).transport, new native.ToolRegistry(), store);
  await runtime.run('hello');
  runtime.detachStore();
  execFileSync('sqlite3', [newer, 'INSERT INTO arkagent_schema(version) VALUES (999999);']);
  const newerBytes = fs.readFileSync(newer);
  assert.throws(() => native.SessionStore.open(newer), (e) => e.code === 'store_newer_schema');
  assert.deepEqual(fs.readFileSync(newer), newerBytes, 'left untouched');
});

// ------------------------------------------------------------------ CORE-5: events

// ToolCallDeltaPayload: "the name when the call begins, then argument fragments to
// concatenate"; "index: Position of the call in the answer"; "name: Tool name, on the first
// delta of a call"; "argumentsDelta: Argument text fragment (empty on the first delta)".
test('core_5_js_tool_call_delta_names_each_call_once_and_its_fragments_make_its_arguments', async () => {
  const call = (index, fields) => sseEvent({ choices: [{ index: 0, delta: { tool_calls: [{ index, ...fields }] }, finish_reason: null }] });
  const chunks = [
    call(0, { id: 'c0', type: 'function', function: { name: 'look', arguments: '' } }),
    call(0, { function: { arguments: '{"q":' } }),
    // The second call starts with a first fragment in the same chunk as its name.
    call(1, { id: 'c1', type: 'function', function: { name: 'look', arguments: '{"q"' } }),
    call(0, { function: { arguments: '"a"}' } }),
    call(1, { function: { arguments: ':"b"}' } }),
    sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
    sseEvent('[DONE]'),
  ];
  const ran = [];
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('look', 'Looks', '{"type":"object","properties":{"q":{"type":"string"}}}'),
    async (c) => { ran.push(c.argumentsJson); return { content: 'ok' }; });
  const model = new ScriptedModel([
    (body, index, sink) => { setTimeout(() => { chunks.forEach((c) => sink.write(c)); sink.end(); }, 1); return { status: 200, headers: SSE_HEADERS, streamed: true }; },
    (body, index, sink) => { setTimeout(() => { textStream(['fin', 'al']).forEach((c) => sink.write(c)); sink.end(); }, 1); return { status: 200, headers: SSE_HEADERS, streamed: true }; },
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig({ model: streamedModel() }), model.transport, registry);
  const { events, finished } = collect(runtime);
  assert.equal((await runtime.run('look twice')).finalText, 'final');
  await finished();
  assert.deepEqual(model.problems, []);
  assert.deepEqual(ran, ['{"q":"a"}', '{"q":"b"}']);
  const types = events.map((e) => e.type);
  const deltas = payloads(events, 'tool_call_delta');
  assert.ok(types.lastIndexOf('tool_call_delta') < types.indexOf('model_response'), 'deltas before the answer is parsed');
  const started = payloads(events, 'tool_call_started');
  for (const index of [0, 1]) {
    const own = deltas.filter((d) => d.index === index);
    assert.deepEqual([own[0].name, own[0].argumentsDelta, own[0].iteration], ['look', '', 1], `call ${index}: its first delta`);
    assert.ok(own.slice(1).every((d) => d.name === null), `call ${index}: named once`);
    assert.equal(own.map((d) => d.argumentsDelta).join(''), started[index].arguments, `call ${index}: the fragments concatenate to its arguments`);
  }
});

// ------------------------------------------------------------------ LLM: transport and sink

// HttpBodySink.failWithResponse(): "the model call fails as if the transport had resolved
// with `response` — classified by its status, headers (`Retry-After` is honoured) and body
// ..., like any error answer: a 429 or 503 is retried after the wait the server asked for."
test('llm_2_llm_3_js_failWithResponse_is_classified_like_a_response_401_fails_at_once_503_is_retried', async () => {
  const auth = new ScriptedModel([(body, index, sink) => {
    setTimeout(() => { sink.write('{"error":'); sink.failWithResponse({ status: 401, body: '{"error":{"message":"bad key"}}' }); }, 1);
    return { status: 200, streamed: true };
  }]);
  const tune = (m) => { m.initialBackoffMs = 0; m.maxBackoffMs = 0; };
  const refused = new native.AgentRuntime(runtimeConfig({ model: streamedModel(tune) }), auth.transport, new native.ToolRegistry());
  await assert.rejects(refused.run('x'), (e) => e.code === 'llm_auth');
  assert.equal(auth.requests.length, 1, 'an auth error is not retried');
  assert.deepEqual(JSON.parse(refused.historyJson()), [], 'the first call failed: the input is taken out');

  const busy = new ScriptedModel([
    (body, index, sink) => {
      setTimeout(() => sink.failWithResponse({ status: 503, headers: [{ name: 'retry-after', value: '0' }], body: '{"error":{"message":"busy"}}' }), 1);
      return { status: 200, streamed: true };
    },
    (body, index, sink) => { setTimeout(() => { textStream(['ok']).forEach((c) => sink.write(c)); sink.end(); }, 1); return { status: 200, streamed: true }; },
  ]);
  const retried = new native.AgentRuntime(runtimeConfig({ model: streamedModel(tune) }), busy.transport, new native.ToolRegistry());
  assert.equal((await retried.run('x')).finalText, 'ok');
  assert.equal(busy.requests.length, 2, 'the 503 was retried');
  assert.deepEqual([...auth.problems, ...busy.problems], []);
});

// HttpTransport: "Reject when no response arrived: an Error whose `code` is ... "cancelled"
// as cancelled"; HttpBodySink.fail(): ""cancelled" cancelled". ModelConfig.maxAttempts:
// "Attempts per model call, the first included (default 3; 0 and 1 mean no retry).
// Retried: ... never past cancel()."
test('llm_1_llm_3_js_a_cancelled_code_ends_the_run_cancelled_and_maxAttempts_0_makes_one_attempt', async () => {
  const fast = (m) => { m.initialBackoffMs = 0; m.maxBackoffMs = 0; };
  let calls = 0;
  const model = modelConfig();
  fast(model);
  const rejecting = new native.AgentRuntime(runtimeConfig({ model }), async () => {
    calls += 1;
    throw Object.assign(new Error('the host gave up'), { code: 'cancelled' });
  }, new native.ToolRegistry());
  const { events, finished } = collect(rejecting);
  assert.equal((await rejecting.run('x')).status, 'cancelled');
  await finished();
  assert.equal(payloads(events, 'run_finished')[0].status, 'cancelled');
  assert.equal(calls, 1, 'a cancelled call is not retried');

  const sinkModel = new ScriptedModel([(body, index, sink) => { setTimeout(() => sink.fail('gone', 'cancelled'), 1); return { status: 200, streamed: true }; }]);
  const failing = new native.AgentRuntime(runtimeConfig({ model: streamedModel(fast) }), sinkModel.transport, new native.ToolRegistry());
  assert.equal((await failing.run('x')).status, 'cancelled');
  assert.equal(sinkModel.requests.length, 1);

  for (const [attempts, expected] of [[0, 1], [1, 1], [2, 2]]) {
    let sent = 0;
    const m = modelConfig();
    fast(m);
    m.maxAttempts = attempts;
    const runtime = new native.AgentRuntime(runtimeConfig({ model: m }), async () => { sent += 1; return { status: 503, body: 'busy' }; }, new native.ToolRegistry());
    await assert.rejects(runtime.run('x'), (e) => e.code === 'llm_server');
    assert.equal(sent, expected, `maxAttempts ${attempts}`);
  }
});

// HttpBodySink: "Writes never block; they return false once the library stopped reading
// (answer complete, timeout, cancel) or after end()/fail() ... Each request gets its own sink."
test('llm_2_js_a_sink_kept_after_its_request_ended_cannot_touch_a_later_request', async () => {
  const sinks = [];
  const gate = deferred();
  const model = new ScriptedModel([
    // The whole answer with [DONE], never end(): the library stops reading at [DONE].
    (body, index, sink) => { sinks.push(sink); setTimeout(() => textStream(['one']).forEach((c) => sink.write(c)), 1); return { status: 200, headers: SSE_HEADERS, streamed: true }; },
    // Half an answer, then waits for the old sink to be abused.
    (body, index, sink) => {
      sinks.push(sink);
      const chunks = textStream(['tw', 'o']);
      (async () => { sink.write(chunks[0]); await gate.promise; chunks.slice(1).forEach((c) => sink.write(c)); sink.end(); })();
      return { status: 200, headers: SSE_HEADERS, streamed: true };
    },
    // Never answers: cancelled.
    (body, index, sink) => { sinks.push(sink); return { status: 200, headers: SSE_HEADERS, streamed: true }; },
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig({ model: streamedModel((m) => { m.maxAttempts = 1; }) }), model.transport, new native.ToolRegistry());
  assert.equal((await runtime.run('first')).finalText, 'one');
  const second = runtime.run('second');
  await waitFor(() => sinks.length === 2, 'the second request');
  assert.equal(sinks[0].write(textStream(['JUNK'])[0]), false);
  assert.equal(sinks[0].writeBytes(Buffer.from(sseEvent('[DONE]'))), false);
  sinks[0].fail('late', 'timeout');
  sinks[0].failWithResponse({ status: 500, body: 'late' });
  sinks[0].end();
  gate.resolve();
  const result = await second;
  assert.deepEqual([result.status, result.finalText], ['completed', 'two'], 'the old sink reached nothing');
  assert.equal(model.requests.length, 2, 'no retry was caused');

  const third = runtime.run('third');
  await waitFor(() => sinks.length === 3, 'the third request');
  runtime.cancel();
  assert.equal((await third).status, 'cancelled');
  await waitFor(() => sinks[2].cancelled, 'the third sink is cancelled');
  assert.equal(sinks[2].write(textStream(['too late'])[0]), false);
  sinks[2].end();
  assert.deepEqual(JSON.parse(runtime.historyJson()).filter((m) => m.role === 'assistant').map((m) => m.content), ['one', 'two']);
  assert.deepEqual(model.problems, []);
});

// ------------------------------------------------------------------ CORE-4: limits

// AgentRuntimeConfig.maxIterations: "Model calls per run at most (default 16)."
// RunResult.status "max_iterations"; CORE-4 history stays paired.
test('core_4_js_maxIterations_n_makes_exactly_n_model_calls_then_ends_max_iterations_paired', async () => {
  for (const n of [1, 3]) {
    let k = 0;
    const model = new ScriptedModel(Array.from({ length: n + 2 }, () => () => completion({ toolCalls: [{ id: `c${k += 1}`, name: 't', arguments: {} }], usage: USAGE })));
    const config = runtimeConfig();
    config.maxIterations = n;
    const runtime = new native.AgentRuntime(config, model.transport, oneTool());
    const { events, finished } = collect(runtime);
    const result = await runtime.run('loop');
    await finished();
    assert.deepEqual(model.problems, []);
    assert.equal(model.requests.length, n, `maxIterations ${n}: model calls`);
    assert.deepEqual([result.status, result.iterations, result.finalText, result.usage.callCount], ['max_iterations', n, null, n]);
    const history = JSON.parse(runtime.historyJson());
    assert.equal(history.length, 1 + 2 * n);
    assert.deepEqual(pairingProblems(history), []);
    const [end] = payloads(events, 'run_finished');
    assert.deepEqual([end.status, end.iterations], ['max_iterations', n]);
  }
});

// AgentRuntimeConfig.maxParallelTools: "Tool calls of one turn that run at once at most (default 4)."
test('core_4_js_maxParallelTools_bounds_the_tools_running_at_once', async () => {
  const gates = [];
  let running = 0;
  let peak = 0;
  const registry = oneTool(async (call) => {
    running += 1;
    peak = Math.max(peak, running);
    const gate = deferred();
    gates.push(gate);
    await gate.promise;
    running -= 1;
    return { content: `done ${call.id}` };
  });
  const ids = ['c1', 'c2', 'c3', 'c4', 'c5'];
  const model = new ScriptedModel([
    () => completion({ toolCalls: ids.map((id) => ({ id, name: 't', arguments: {} })), usage: USAGE }),
    (body) => {
      assert.deepEqual(body.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ids, 'results in the calls\' order');
      return completion({ content: 'all done', usage: USAGE });
    },
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig({ maxParallelTools: 2 }), model.transport, registry);
  const run = runtime.run('five calls');
  for (let released = 0; released < ids.length; released += 1) {
    // eslint-disable-next-line no-await-in-loop, no-loop-func
    await waitFor(() => gates.length === Math.min(released + 2, ids.length), `call ${released + 2} started`);
    // eslint-disable-next-line no-await-in-loop
    await sleep(10); // a third call running at once would start here
    assert.ok(running <= 2, `${running} calls at once`);
    gates[released].resolve();
  }
  assert.equal((await run).finalText, 'all done');
  assert.equal(peak, 2);
  assert.deepEqual(model.problems, []);
});

// ------------------------------------------------------------------ tools and images

// ToolDefinition.requiresApproval: "every call waits for a person's answer before it runs
// ... Read when the definition is registered."
test('tool_1_js_requiresApproval_is_read_when_the_definition_is_registered', async () => {
  for (const [atRegistration, later, status] of [[false, true, 'completed'], [true, false, 'awaiting_approval']]) {
    const ran = [];
    const definition = new native.ToolDefinition('t', 'Pays', OBJECT_SCHEMA);
    definition.requiresApproval = atRegistration;
    const registry = new native.ToolRegistry();
    registry.register(definition, async (call) => { ran.push(call.id); return { content: 'paid' }; });
    definition.requiresApproval = later;
    assert.equal(definition.requiresApproval, later);
    const model = toolThenAnswer();
    const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry);
    const result = await runtime.run('pay');
    assert.equal(result.status, status, `registered with requiresApproval ${atRegistration}, then set to ${later}`);
    assert.deepEqual(ran, atRegistration ? [] : ['c1']);
    assert.deepEqual(model.problems, []);
  }
});

// ToolRegistry.register(): "Throws code "tool_name_invalid" for a name that is not 1–64
// characters of ASCII letters, digits, `_` and `-`; "tool_name_duplicate" when the name is
// taken; "tool_parameters_invalid" when the parameters are not a JSON object;
// "invalid_json" when they are not JSON. A refused definition changes nothing."
// AgentRuntime(): ""tool_name_duplicate" when `tools` has a tool named "retrieve_memory"
// and the runtime compresses, or "delegate_task" and it delegates".
test('napi_2_js_register_refusals_change_nothing_and_carry_the_documented_codes', async () => {
  const registry = new native.ToolRegistry();
  const noop = async () => ({ content: '' });
  registry.register(new native.ToolDefinition('t', 'the first', OBJECT_SCHEMA), async () => ({ content: 'first' }));
  const second = new native.ToolDefinition('t', 'the second', '{"type":"object","properties":{"z":{"type":"string"}}}');
  assert.throws(() => registry.register(second, async () => ({ content: 'second' })), (e) => e.code === 'tool_name_duplicate');
  assert.throws(() => registry.register(new native.ToolDefinition('u', 'd', '{"type":'), noop), (e) => e.code === 'invalid_json');
  for (const bad of ['[]', '5', '"object"', 'null']) {
    assert.throws(() => registry.register(new native.ToolDefinition('v', 'd', bad), noop), (e) => e.code === 'tool_parameters_invalid', bad);
  }
  for (const bad of ['', 'x'.repeat(65), 'a.b', 'a b', 'façade']) {
    assert.throws(() => registry.register(new native.ToolDefinition(bad, 'd', OBJECT_SCHEMA), noop), (e) => e.code === 'tool_name_invalid', JSON.stringify(bad));
  }
  assert.deepEqual(registry.names(), ['t'], 'nothing changed');
  for (const good of ['x'.repeat(64), 'A-b_9']) registry.register(new native.ToolDefinition(good, 'd', OBJECT_SCHEMA), noop);
  assert.deepEqual(registry.names().length, 3);

  const model = toolThenAnswer();
  const only = new native.ToolRegistry();
  only.register(new native.ToolDefinition('t', 'the first', OBJECT_SCHEMA), async () => ({ content: 'first' }));
  assert.throws(() => only.register(second, noop), (e) => e.code === 'tool_name_duplicate');
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, only);
  await runtime.run('go');
  assert.deepEqual(model.problems, []);
  assert.deepEqual(model.requests[0].body.tools.map((t) => [t.function.name, t.function.description, t.function.parameters]),
    [['t', 'the first', { type: 'object' }]], 'the first definition stands');
  assert.equal(model.requests[1].body.messages.find((m) => m.role === 'tool').content, 'first', 'and its executor');

  // The library's own tool names, taken by the app's tools.
  const memory = new native.ToolRegistry();
  memory.register(new native.ToolDefinition('retrieve_memory', 'mine', OBJECT_SCHEMA), noop);
  const compressing = runtimeConfig();
  compressing.setCustomCompressor(async () => native.CompressOutcome.skipped().toJson());
  assert.throws(() => new native.AgentRuntime(compressing, model.transport, memory), (e) => e.code === 'tool_name_duplicate');
  new native.AgentRuntime(runtimeConfig(), model.transport, memory); // no compression: the name is the app's
  const delegate = new native.ToolRegistry();
  delegate.register(new native.ToolDefinition('delegate_task', 'mine', OBJECT_SCHEMA), noop);
  const cloning = runtimeConfig();
  cloning.allowClone = true;
  assert.throws(() => new native.AgentRuntime(cloning, model.transport, delegate), (e) => e.code === 'tool_name_duplicate');
  new native.AgentRuntime(runtimeConfig(), model.transport, delegate);
});

// ModelConfig.maxImageBytes: "The largest image accepted, in bytes ...: a larger one is
// refused with "image_too_large"". maxImagesPerRequest: "The most images one request may
// carry ...: an input past it is refused with "too_many_images"". runParts(): "Rejects,
// with nothing written and nothing sent".
test('img_5_js_maxImageBytes_and_maxImagesPerRequest_hold_at_their_exact_bound', async () => {
  const photo = () => native.ContentPart.image(new Uint8Array(PNG));
  const attempt = async (tune, count) => {
    const model = modelConfig();
    tune(model);
    const scripted = new ScriptedModel([() => completion({ content: 'a pixel', usage: USAGE })]);
    const runtime = new native.AgentRuntime(runtimeConfig({ model }), scripted.transport, new native.ToolRegistry());
    const parts = [native.ContentPart.text('look'), ...Array.from({ length: count }, photo)];
    try {
      return { status: (await runtime.runParts(parts)).status, sent: scripted.requests.length };
    } catch (e) {
      return { code: e.code, sent: scripted.requests.length, history: JSON.parse(runtime.historyJson()) };
    }
  };
  assert.deepEqual(await attempt((m) => { m.maxImageBytes = PNG.length; }, 1), { status: 'completed', sent: 1 });
  assert.deepEqual(await attempt((m) => { m.maxImageBytes = PNG.length - 1; }, 1), { code: 'image_too_large', sent: 0, history: [] });
  assert.deepEqual(await attempt((m) => { m.maxImagesPerRequest = 2; }, 2), { status: 'completed', sent: 1 });
  assert.deepEqual(await attempt((m) => { m.maxImagesPerRequest = 2; }, 3), { code: 'too_many_images', sent: 0, history: [] });
});

// ------------------------------------------------------------------ CMP-4: what the next call answers

// CustomCompressor: "A split index must be at least 1 and at most the number of messages,
// and leave the last message when the model has yet to answer it (the user's input or a
// tool result ends the history, as before a model call): else "invalid_split_index". ...
// the helpers computeSafeSplitIndex (keeping at least 1 message in that case) and
// toolCallsPaired pick a split the runtime accepts."
test('cmp_4_js_a_custom_split_must_leave_the_message_the_model_has_yet_to_answer', async () => {
  for (const keep of [0, 1]) {
    const config = runtimeConfig();
    const asked = [];
    config.setCustomCompressor(async (stateJson) => {
      const messages = JSON.stringify(JSON.parse(stateJson).history.messages);
      const split = native.computeSafeSplitIndex(messages, keep);
      asked.push(split);
      return split > 0 ? native.CompressOutcome.compressed(split, 'the earlier talk').toJson() : native.CompressOutcome.skipped().toJson();
    }, 0);
    const model = new ScriptedModel([
      () => completion({ content: 'a0', usage: USAGE }),
      (body) => {
        const users = body.messages.filter((m) => m.role === 'user').map((m) => JSON.stringify(m.content));
        assert.ok(users.some((u) => u.includes('QUESTION-2')), `keep ${keep}: the model is asked the second question: ${JSON.stringify(body.messages)}`);
        return completion({ content: 'a1', usage: USAGE });
      },
    ]);
    const runtime = new native.AgentRuntime(config, model.transport, oneTool());
    const { events, finished } = collect(runtime);
    await runtime.run('QUESTION-1');
    await runtime.run('QUESTION-2');
    await finished(2);
    assert.deepEqual(model.problems, []);
    // Each run: before its call (the input ends the history), after its answer.
    const outcomes = payloads(events, 'compression').map((c) => `${c.trigger}/${c.outcome}/${c.reason}`);
    if (keep === 0) {
      assert.equal(outcomes[0], 'preflight/failed/invalid_split_index', `keep 0: ${outcomes}`);
      assert.deepEqual(asked.slice(0, 1), [1], 'asked to archive the lone question');
    } else {
      assert.ok(!outcomes.some((o) => o.includes('invalid_split_index')), `keep 1 is always accepted: ${outcomes}`);
    }
    assert.equal(JSON.parse(runtime.historyJson()).at(-1).content, 'a1');
  }
});

// ContextCompressor: "the last `keepRecentMessageCount` messages stay (never splitting a tool
// call from its result; with 0, the user's input or tool results the model has yet to
// answer still stay)."
test('cmp_4_js_keep_recent_zero_still_asks_the_model_the_users_question_and_its_tool_results', async () => {
  const long = (tag) => `${tag} ${'and the crumb of the baguette keeps its water longer than the toast does. '.repeat(40)}`;
  const model = new ScriptedModel([
    () => completion({ content: 'a0', usage: USAGE }),
    () => completion({ toolCalls: [{ id: 'c1', name: 't', arguments: {} }], usage: USAGE }),
    (body) => {
      assert.equal(body.messages.at(-1).role, 'tool', 'the tool result the model has yet to answer is sent');
      return completion({ content: 'a1', usage: USAGE });
    },
  ], { summarizer: () => completion({ content: snapshot(), usage: USAGE }) });
  const compressor = new native.ContextCompressor(1, 0, undefined, 1);
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, oneTool());
  const { events, finished } = collect(runtime);
  await runtime.run(long('QUESTION-1'));
  await runtime.run(long('QUESTION-2'));
  await finished(2);
  assert.deepEqual(model.problems, []);
  const second = model.requests[1].body.messages;
  assert.ok(second.some((m) => m.role === 'user' && JSON.stringify(m.content).includes('QUESTION-2')), JSON.stringify(second));
  const committed = payloads(events, 'compression').filter((c) => c.outcome === 'compressed').map((c) => c.trigger);
  assert.deepEqual(committed, ['post_turn', 'post_turn'], 'after the first answer (all of it), after the tool turn (the question)');
  assert.deepEqual(JSON.parse(runtime.historyJson()).map((m) => m.role), ['assistant', 'tool', 'assistant']);
});
