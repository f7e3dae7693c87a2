'use strict';
// README promises of "## Quickstart: ArkTS (HarmonyOS)", "## What is in it" and
// "## Seed mapping", with the matching doc comments of index.d.ts, held against the N-API
// module. Each test quotes the sentence it checks. The Quickstart's code is transcribed as
// literally as JS allows and run against a scripted provider that speaks the real
// Chat Completions wire protocol (SSE when `model.stream = true`).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const {
  native, MODULE_PATH, BASE_URL, API_KEY, MODEL, completion, sseEvent, textStream, ScriptedModel,
  pairingProblems, modelConfig, runtimeConfig, waitFor,
} = require('./support');

const {
  AgentRuntime, AgentRuntimeConfig, ModelConfig, ToolRegistry, ToolDefinition, ContextCompressor,
  SessionStore,
} = native;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];
const usage = (prompt, completionTokens = 2) => ({ prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens });

/** The HAR's errorCode(e) (ohos/arkagent/src/main/ets/ArkAgentError.ets), transcribed. */
function errorCode(error) {
  const code = error.code;
  return typeof code === 'string' ? code : '';
}

/** The ErrorCode union of index.d.ts: every code the module may throw or reject with. */
const DTS = fs.readFileSync(path.join(__dirname, '..', '..', 'ohos', 'arkagent', 'src', 'main', 'cpp', 'types', 'libarkagent', 'index.d.ts'), 'utf8');
const ERROR_CODES = new Set([...DTS.match(/export type ErrorCode =([^;]*);/)[1].matchAll(/'([a-z_]+)'/g)].map((m) => m[1]));

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-readme-qs-'));
}

/** Settles a promise either way. */
async function settle(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error };
  }
}

/**
 * A streamed answer: resolves at once ("headers received") and writes `events` through the
 * sink with a small gap between them, then ends the body.
 */
function streamed(events, { gapMs = 2, end = true } = {}) {
  return (body, index, sink) => {
    assert.equal(body.stream, true, 'model.stream = true asks for a stream');
    (async () => {
      for (const e of events) {
        await sleep(gapMs);
        sink.write(e);
      }
      if (end) sink.end();
    })().catch((e) => sink.fail(e.message));
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
}

/** The SSE events of a streamed tool call, its arguments split in two pieces. */
function toolCallStream(id, name, args, u) {
  const text = JSON.stringify(args);
  const half = Math.floor(text.length / 2);
  const events = [
    sseEvent({ choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: text.slice(0, half) } }] }, finish_reason: null }] }),
    sseEvent({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: text.slice(half) } }] }, finish_reason: null }] }),
    sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
  ];
  if (u) events.push(sseEvent({ choices: [], usage: u }));
  events.push(sseEvent('[DONE]'));
  return events;
}

/**
 * The README's ArkTS Quickstart transcribed to JS. `baseUrl`, `apiKey` and the model name
 * are the scripted provider's (the README's are DeepSeek's); `transport` stands in for
 * `new NetworkKitTransport().asTransport()`, `filesDir` for `context.filesDir`.
 */
async function quickstart({ transport, filesDir, onTool = () => {}, onEvent = () => {}, store: givenStore }) {
  const apiKey = API_KEY;
  const model = new ModelConfig(BASE_URL, apiKey, MODEL);
  model.stream = true;
  const config = new AgentRuntimeConfig(model);
  config.systemPrompt = 'You are a helpful assistant.';
  config.contextCompressor = new ContextCompressor(64000, 10); // seed defaults

  const tools = new ToolRegistry();
  tools.register(new ToolDefinition('get_weather', 'Weather for a city',
    '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'),
  async (call) => {
    onTool(call);
    const result = { content: 'sunny, 25 °C' };
    return result;
  });

  // Durable session: committed at every step, resumed by id after a restart or a kill.
  const store = givenStore || SessionStore.open(filesDir + '/sessions.db');
  config.sessionId = 'chat-1';
  const runtime = new AgentRuntime(config, transport, tools, store);
  const restored = runtime.historyJson(); // the last chat's messages, [] the first time
  const deltas = [];
  runtime.subscribe((event) => {
    onEvent(event);
    if (event.type === 'text_delta') { deltas.push(JSON.parse(event.payloadJson).delta); /* append to the UI */ }
  });
  const result = await runtime.run('What is the weather in Beijing?');
  const listed = store.list(); // [{ id, title, updatedMs, messageCount, totalTokens, commitSeq }]
  return { runtime, store, restored, result, listed, deltas, config, model, tools };
}

/** The scripted provider of the Quickstart's question: a streamed get_weather call, then a streamed answer. */
function weatherModel() {
  return new ScriptedModel([
    streamed(toolCallStream('call_w1', 'get_weather', { city: 'Beijing' }, usage(120, 10))),
    streamed(textStream(['It is sunny', ' in Beijing, ', '25 °C.'], usage(150, 8))),
  ], { tools: ['get_weather', native.RETRIEVE_MEMORY_TOOL_NAME] });
}

// ------------------------------------------------------------------ Quickstart: ArkTS

// README: "const restored: string = runtime.historyJson();   // the last chat's messages, [] the first time"
// README: "runtime.subscribe((event) => { if (event.type === 'text_delta') { /* append to the UI */ } });"
// README: "store.list();                                    // [{ id, title, updatedMs, messageCount, totalTokens, commitSeq }]"
// README: "config.contextCompressor = new ContextCompressor(64000, 10); // seed defaults"
test('napi_2_store_6_core_5_js_the_arkts_quickstart_runs_as_written_streams_text_deltas_calls_the_tool_and_lists_the_session', async () => {
  const dir = tempDir();
  const model = weatherModel();
  const calls = [];
  const events = [];
  const qs = await quickstart({ transport: model.transport, filesDir: dir, onTool: (c) => calls.push(c), onEvent: (e) => events.push(e) });
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  assert.deepEqual(model.problems, []);
  assert.equal(qs.restored, '[]', '[] the first time');
  // "seed defaults": the same as the seed's constructor defaults, i.e. new ContextCompressor().
  const defaults = new ContextCompressor();
  const given = qs.config.contextCompressor;
  assert.deepEqual([given.totalTokenThreshold, given.keepRecentMessageCount, given.summaryPrompt, given.minMessagesToSummarize],
    [defaults.totalTokenThreshold, defaults.keepRecentMessageCount, defaults.summaryPrompt, defaults.minMessagesToSummarize]);
  assert.deepEqual([defaults.totalTokenThreshold, defaults.keepRecentMessageCount], [64000, 10]);
  // The system prompt, the tool and the question reach the provider.
  const first = model.requests[0].body;
  assert.equal(first.stream, true);
  assert.deepEqual(first.messages.map((m) => m.role), ['system', 'user']);
  assert.equal(first.messages[0].content, 'You are a helpful assistant.');
  assert.equal(first.messages[1].content, 'What is the weather in Beijing?');
  const weather = first.tools.find((t) => t.function.name === 'get_weather');
  assert.deepEqual([weather.function.description, weather.function.parameters.required], ['Weather for a city', ['city']]);
  // The tool ran once with the streamed arguments and the model read its content.
  assert.equal(calls.length, 1);
  assert.deepEqual([calls[0].id, calls[0].name, JSON.parse(calls[0].argumentsJson)], ['call_w1', 'get_weather', { city: 'Beijing' }]);
  const toolMessage = model.requests[1].body.messages.find((m) => m.role === 'tool');
  assert.deepEqual([toolMessage.tool_call_id, toolMessage.content], ['call_w1', 'sunny, 25 °C']);
  // text_delta: the answer as it streamed, piece by piece, and nothing else.
  assert.deepEqual(qs.deltas, ['It is sunny', ' in Beijing, ', '25 °C.']);
  assert.equal(qs.result.status, 'completed');
  assert.equal(qs.result.finalText, 'It is sunny in Beijing, 25 °C.');
  assert.equal(qs.result.iterations, 2);
  // store.list(): exactly the six documented fields.
  assert.equal(qs.listed.length, 1);
  const s = qs.listed[0];
  assert.deepEqual(Object.keys(s).sort(), ['commitSeq', 'id', 'messageCount', 'title', 'totalTokens', 'updatedMs']);
  assert.equal(s.id, 'chat-1');
  assert.equal(s.title, 'What is the weather in Beijing?');
  assert.equal(s.messageCount, 4, 'user, assistant tool call, tool result, answer');
  assert.equal(s.totalTokens, 130 + 158);
  assert.ok(Number.isSafeInteger(s.commitSeq) && s.commitSeq >= 1);
  assert.ok(Math.abs(s.updatedMs - Date.now()) < 60000, 'milliseconds since the epoch, now');
  assert.equal(s.commitSeq, Math.max(...events.filter((e) => e.type === 'session_committed').map((e) => JSON.parse(e.payloadJson).commitSeq)));
  qs.runtime.detachStore();
});

// README: "// Durable session: committed at every step, resumed by id after a restart or a kill."
// README: "const restored: string = runtime.historyJson();   // the last chat's messages, [] the first time"
test('store_6_store_3_js_the_quickstart_session_is_committed_at_every_step_and_resumed_by_id_after_a_restart_and_a_sigkill', async () => {
  const dir = tempDir();
  const dbPath = dir + '/sessions.db';
  // Every step is on disk when its session_committed event arrives: another connection lists it.
  const reader = SessionStore.open(dbPath);
  const seen = [];
  const model = weatherModel();
  const qs = await quickstart({
    transport: model.transport,
    filesDir: dir,
    onEvent: (e) => {
      if (e.type !== 'session_committed') return;
      const p = JSON.parse(e.payloadJson);
      const row = reader.list().find((x) => x.id === 'chat-1');
      seen.push([p.messageCount, row && row.messageCount, row && row.commitSeq >= p.commitSeq]);
    },
  });
  await waitFor(() => seen.some(([n]) => n === 4), 'the answer committed');
  assert.deepEqual(model.problems, []);
  assert.deepEqual(seen.map(([n]) => n).filter((n, i, a) => a.indexOf(n) === i), [1, 3, 4],
    'the question with the run start, the tool turn once paired, the answer');
  for (const [n, onDisk, seqOk] of seen) {
    assert.ok(onDisk >= n && seqOk, `commit of ${n} messages on disk when announced (${onDisk})`);
  }
  const history = JSON.parse(qs.runtime.historyJson());

  // A restart (the page rebuilt): the same code resumes the chat by its id.
  qs.runtime.detachStore();
  const again = weatherModel();
  const second = await quickstart({ transport: again.transport, filesDir: dir, store: qs.store });
  assert.deepEqual(JSON.parse(second.restored), history, 'the last chat\'s messages');
  assert.deepEqual(again.problems, []);
  assert.deepEqual(again.requests[0].body.messages.slice(1, 5).map((m) => m.role), ['user', 'assistant', 'tool', 'assistant'],
    'the resumed chat goes on from the restored messages');
  const afterRestart = JSON.parse(second.runtime.historyJson());
  assert.equal(afterRestart.length, 8);
  second.runtime.detachStore();

  // A kill: another process runs the Quickstart's run on the same file and dies by SIGKILL
  // right after its run finished, without closing anything.
  const child = `
    const { native, ScriptedModel, completion, BASE_URL, API_KEY, MODEL } = require(${JSON.stringify(path.join(__dirname, 'support.js'))});
    const model = new ScriptedModel([() => completion({ content: 'Still sunny.', usage: { prompt_tokens: 200, completion_tokens: 3, total_tokens: 203 } })]);
    const m = new native.ModelConfig(BASE_URL, API_KEY, MODEL);
    const config = new native.AgentRuntimeConfig(m);
    config.systemPrompt = 'You are a helpful assistant.';
    config.contextCompressor = new native.ContextCompressor(64000, 10);
    const tools = new native.ToolRegistry();
    tools.register(new native.ToolDefinition('get_weather', 'Weather for a city', '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}'), async () => ({ content: 'sunny, 25 °C' }));
    const store = native.SessionStore.open(${JSON.stringify(dbPath)});
    config.sessionId = 'chat-1';
    const runtime = new native.AgentRuntime(config, model.transport, tools, store);
    if (JSON.parse(runtime.historyJson()).length !== 8) { console.error('not resumed'); process.exit(3); }
    runtime.subscribe((e) => { if (e.type === 'run_finished') process.kill(process.pid, 'SIGKILL'); });
    runtime.run('And tomorrow?').catch((e) => { console.error(e); process.exit(4); });
  `;
  const out = spawnSync(process.execPath, ['-e', child], { env: { ...process.env, ARKAGENT_NODE: MODULE_PATH }, encoding: 'utf8', timeout: 30000 });
  assert.equal(out.signal, 'SIGKILL', `child: ${out.status} ${out.stderr}`);
  const third = weatherModel();
  const resumed = await quickstart({ transport: third.transport, filesDir: dir });
  const restored = JSON.parse(resumed.restored);
  assert.deepEqual(restored.slice(0, 8), afterRestart);
  assert.deepEqual(restored.slice(8).map((m) => [m.role, m.content]), [['user', 'And tomorrow?'], ['assistant', 'Still sunny.']]);
  assert.deepEqual(pairingProblems(restored), []);
  assert.deepEqual(third.problems, []);
  resumed.runtime.detachStore();
});

// README: "The store is optional: without it nothing is persisted (`exportState()` / `importState()` still are there)."
test('store_6_core_6_js_without_the_store_nothing_is_persisted_and_exportState_importState_carry_the_chat', async () => {
  const run = async (stateJson) => {
    const model = weatherModel();
    const m = new ModelConfig(BASE_URL, API_KEY, MODEL);
    m.stream = true;
    const config = new AgentRuntimeConfig(m);
    config.sessionId = 'chat-1';
    const tools = new ToolRegistry();
    tools.register(new ToolDefinition('get_weather', 'Weather for a city', '{"type":"object"}'), async () => ({ content: 'sunny, 25 °C' }));
    model.expectedTools = ['get_weather'];
    const runtime = new AgentRuntime(config, model.transport, tools);
    const restored = runtime.historyJson();
    if (stateJson) await runtime.importState(stateJson);
    await runtime.run('What is the weather in Beijing?');
    assert.deepEqual(model.problems, []);
    return { runtime, restored, model };
  };
  const a = await run();
  assert.equal(a.runtime.sessionId, 'chat-1');
  assert.equal(a.runtime.detachStore(), false, 'no store attached');
  const b = await run();
  assert.equal(b.restored, '[]', 'nothing was persisted for chat-1');
  const c = await run(a.runtime.exportState());
  assert.deepEqual(c.model.requests[0].body.messages.slice(0, 4).map((m) => m.role), ['user', 'assistant', 'tool', 'assistant'],
    'an imported state carries the chat on');
});

// README: "Every error thrown or rejected carries a stable `code` (`errorCode(e)` from the HAR); a
// wrong, missing or out-of-range argument throws `invalid_argument` (`invalid_config` for a
// setting) instead of being converted — `index.d.ts` lists the rules."
// index.d.ts: "Methods that return a Promise throw these synchronously." / "it throws, before anything changes"
test('napi_2_js_every_quickstart_line_refuses_wrong_missing_or_out_of_range_arguments_with_the_documented_code_and_changes_nothing', async () => {
  const expectCode = (fn, code, what) => {
    let thrown;
    try {
      fn();
    } catch (e) {
      thrown = e;
    }
    assert.ok(thrown instanceof Error, `${what}: throws an Error synchronously`);
    assert.equal(errorCode(thrown), code, `${what}: ${thrown && thrown.message}`);
    assert.ok(ERROR_CODES.has(errorCode(thrown)), `${what}: a code of ErrorCode`);
  };
  // Settings: invalid_config, never converted.
  expectCode(() => new ModelConfig(BASE_URL, undefined, MODEL), 'invalid_config', 'ModelConfig without a key');
  expectCode(() => new ModelConfig(BASE_URL, API_KEY), 'invalid_config', 'ModelConfig without a model');
  expectCode(() => new ModelConfig(BASE_URL, 42, MODEL), 'invalid_config', 'ModelConfig with a number key');
  const model = new ModelConfig(BASE_URL, API_KEY, MODEL);
  model.stream = true;
  expectCode(() => { model.stream = 'false'; }, 'invalid_config', "model.stream = 'false'");
  expectCode(() => { model.stream = 0; }, 'invalid_config', 'model.stream = 0');
  assert.equal(model.stream, true, 'a refused value changes nothing');
  expectCode(() => new AgentRuntimeConfig({ baseUrl: BASE_URL }), 'invalid_config', 'AgentRuntimeConfig of a look-alike object');
  const config = new AgentRuntimeConfig(model);
  config.systemPrompt = 'You are a helpful assistant.';
  expectCode(() => { config.systemPrompt = 7; }, 'invalid_config', 'systemPrompt = 7');
  assert.equal(config.systemPrompt, 'You are a helpful assistant.');
  expectCode(() => new ContextCompressor('64000', 10), 'invalid_config', "ContextCompressor('64000')");
  expectCode(() => new ContextCompressor(64000, -1), 'invalid_config', 'ContextCompressor(64000, -1)');
  expectCode(() => new ContextCompressor(64000.5, 10), 'invalid_config', 'ContextCompressor(64000.5)');
  expectCode(() => new ContextCompressor(2 ** 53, 10), 'invalid_config', 'ContextCompressor(2 ** 53)');
  expectCode(() => { config.contextCompressor = { totalTokenThreshold: 1 }; }, 'invalid_config', 'contextCompressor = a look-alike');
  expectCode(() => { config.sessionId = 1; }, 'invalid_config', 'sessionId = 1');
  config.sessionId = 'chat-1';
  expectCode(() => { config.sessionId = null; }, 'invalid_config', 'sessionId = null');
  assert.equal(config.sessionId, 'chat-1');
  // Methods and other constructors: invalid_argument.
  expectCode(() => new ToolDefinition('get_weather', 'Weather for a city'), 'invalid_argument', 'ToolDefinition without its schema');
  expectCode(() => new ToolDefinition('get_weather', 'Weather for a city', '{}', -5), 'invalid_argument', 'ToolDefinition timeoutMs -5');
  const tools = new ToolRegistry();
  const def = new ToolDefinition('get_weather', 'Weather for a city', '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}');
  expectCode(() => tools.register(def), 'invalid_argument', 'register without an executor');
  expectCode(() => tools.register(def, 'not a function'), 'invalid_argument', 'register with a string executor');
  expectCode(() => tools.register({ name: 'get_weather', description: 'd', parametersJson: '{}' }, async () => ({ content: '' })), 'invalid_argument', 'register of a look-alike definition');
  assert.deepEqual(tools.names(), [], 'nothing registered');
  expectCode(() => SessionStore.open(''), 'invalid_argument', "SessionStore.open('')");
  expectCode(() => SessionStore.open(), 'invalid_argument', 'SessionStore.open()');
  expectCode(() => new SessionStore(), 'private_constructor', 'new SessionStore()');
  const dir = tempDir();
  const store = SessionStore.open(dir + '/sessions.db');
  const transport = new ScriptedModel([]).transport;
  expectCode(() => new AgentRuntime(config, transport, tools, { list() { return []; } }), 'invalid_argument', 'a look-alike store');
  expectCode(() => new AgentRuntime(config, 'https://x', tools, store), 'invalid_argument', 'a transport that is not a function');
  expectCode(() => new AgentRuntime(config, transport, undefined, store), 'invalid_argument', 'no ToolRegistry');
  expectCode(() => AgentRuntime(config, transport, tools, store), 'invalid_call', 'AgentRuntime without new');
  assert.deepEqual(store.list(), [], 'no refused constructor opened or created the session');
  const runtime = new AgentRuntime(config, transport, tools, store);
  expectCode(() => runtime.subscribe('listener'), 'invalid_argument', 'subscribe(string)');
  expectCode(() => runtime.subscribe(), 'invalid_argument', 'subscribe()');
  expectCode(() => runtime.unsubscribe(-1), 'invalid_argument', 'unsubscribe(-1)');
  expectCode(() => runtime.unsubscribe(2 ** 32), 'invalid_argument', 'unsubscribe(2 ** 32)');
  expectCode(() => runtime.unsubscribe('1'), 'invalid_argument', "unsubscribe('1')");
  for (const bad of [undefined, 42, null, { toString: () => 'hi' }]) {
    expectCode(() => runtime.run(bad), 'invalid_argument', `run(${String(bad)}) throws synchronously, not a rejection`);
  }
  assert.equal(runtime.historyJson(), '[]', 'no refused run() wrote anything');
  assert.deepEqual(store.list(), [], 'and nothing reached the store');
  runtime.detachStore();
});

// ------------------------------------------------------------------ Time limits (OHOS-6)

/** A runtime over `turns` with a streaming ModelConfig tuned by `tune`. */
function streamingRuntime(turns, tune) {
  const model = new ScriptedModel(turns);
  const m = modelConfig();
  m.stream = true;
  m.initialBackoffMs = 1;
  m.maxBackoffMs = 5;
  tune(m);
  const runtime = new AgentRuntime(runtimeConfig({ model: m }), model.transport, new ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  return { model, runtime, events };
}

/** A reasoning chunk (DeepSeek's `reasoning_content`). */
const reasoning = (text) => sseEvent({ choices: [{ index: 0, delta: { reasoning_content: text }, finish_reason: null }] });

// README: "`requestTimeoutMs` (C/Rust `request_timeout_ms`, default 60 s) bounds a model call until
// its response arrives: for a streamed call until the transport resolved, otherwise until the
// whole body is in. A streamed body has no total limit; it fails with `llm_timeout` when no
// chunk arrives for `idleTimeoutMs` (`idle_timeout_ms`, default 120 s; 0: none), so a long
// reasoning stream that keeps sending is never cut."
test('ohos_6_js_a_stream_that_keeps_sending_is_never_cut_request_timeout_ends_at_the_resolve_and_idle_0_is_none', async () => {
  const defaults = modelConfig();
  assert.deepEqual([defaults.requestTimeoutMs, defaults.idleTimeoutMs], [60000, 120000]);
  // A reasoning stream of ~900 ms, a chunk every 30 ms, under a 100 ms request limit and a
  // 450 ms idle limit (wide: a loaded machine can hold a timer back): never cut.
  const long = [...Array.from({ length: 30 }, (_, i) => reasoning(`step ${i}. `)), ...textStream(['Done.'], usage(10))];
  let a = streamingRuntime([streamed(long, { gapMs: 30 })], (m) => { m.requestTimeoutMs = 100; m.idleTimeoutMs = 450; m.maxAttempts = 1; });
  const started = Date.now();
  const result = await a.runtime.run('think long');
  assert.ok(Date.now() - started >= 800, 'the stream outlived requestTimeoutMs many times');
  assert.deepEqual([result.status, result.finalText, a.model.requests.length], ['completed', 'Done.', 1]);
  assert.deepEqual(a.model.problems, []);

  // Streamed: the request limit runs until the transport resolved — a transport that takes
  // longer than requestTimeoutMs to resolve fails llm_timeout.
  a = streamingRuntime([(body, i, sink) => new Promise((resolve) => {
    const t = setTimeout(() => resolve({ status: 200, headers: SSE_HEADERS, streamed: true }), 2000);
    sink.onCancel(() => { clearTimeout(t); resolve({ status: 200, headers: SSE_HEADERS, streamed: true }); });
  })], (m) => { m.requestTimeoutMs = 100; m.idleTimeoutMs = 0; m.maxAttempts = 1; });
  const t0 = Date.now();
  await assert.rejects(a.runtime.run('slow headers'), (e) => errorCode(e) === 'llm_timeout');
  assert.ok(Date.now() - t0 < 1500, 'cut at requestTimeoutMs, before the transport resolved');

  // idleTimeoutMs 0: none — a stream silent for 400 ms (4 × requestTimeoutMs) goes on.
  a = streamingRuntime([(body, i, sink) => {
    (async () => {
      sink.write(reasoning('hmm'));
      await sleep(400);
      for (const e of textStream(['late but whole'], usage(10))) sink.write(e);
      sink.end();
    })();
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  }], (m) => { m.requestTimeoutMs = 100; m.idleTimeoutMs = 0; m.maxAttempts = 1; });
  assert.equal((await a.runtime.run('pause')).finalText, 'late but whole');

  // And with a limit, the same silence fails llm_timeout.
  a = streamingRuntime([(body, i, sink) => {
    (async () => {
      sink.write(reasoning('hmm'));
      await sleep(400);
      for (const e of textStream(['too late'], usage(10))) sink.write(e);
      sink.end();
    })();
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  }], (m) => { m.requestTimeoutMs = 0; m.idleTimeoutMs = 150; m.maxAttempts = 1; });
  await assert.rejects(a.runtime.run('pause'), (e) => errorCode(e) === 'llm_timeout');
});

// README: "A timed-out call is retried per the retry policy unless part of the answer was shown."
// index.d.ts (idleTimeoutMs): "the attempt fails with "llm_timeout" (retried like a timeout
// unless part of the answer was shown)"
test('ohos_6_llm_3_js_a_timed_out_call_is_retried_per_the_policy_unless_part_of_the_answer_was_shown', async () => {
  const answer = streamed(textStream(['Second time lucky.'], usage(10)));
  // 1. No response within requestTimeoutMs: retried, the retry answers.
  let a = streamingRuntime([(body, i, sink) => new Promise((resolve) => sink.onCancel(() => resolve({ status: 500, body: '' }))), answer],
    (m) => { m.requestTimeoutMs = 80; m.maxAttempts = 2; });
  let r = await a.runtime.run('q');
  assert.deepEqual([r.status, r.finalText, a.model.requests.length], ['completed', 'Second time lucky.', 2]);
  // 2. A stream silent from its start (nothing shown): retried.
  a = streamingRuntime([() => ({ status: 200, headers: SSE_HEADERS, streamed: true }), answer],
    (m) => { m.idleTimeoutMs = 80; m.maxAttempts = 2; });
  r = await a.runtime.run('q');
  assert.deepEqual([r.status, r.finalText, a.model.requests.length], ['completed', 'Second time lucky.', 2]);
  // 3. The retry policy bounds it: maxAttempts 3, every attempt silent → 3 attempts, llm_timeout.
  const silent = () => ({ status: 200, headers: SSE_HEADERS, streamed: true });
  a = streamingRuntime([silent, silent, silent, answer], (m) => { m.idleTimeoutMs = 60; m.maxAttempts = 3; });
  await assert.rejects(a.runtime.run('q'), (e) => errorCode(e) === 'llm_timeout');
  assert.equal(a.model.requests.length, 3);
  // 4. Part of the answer shown (a text_delta reached listeners), then silence: not retried.
  a = streamingRuntime([(body, i, sink) => {
    sink.write(textStream(['Half an ans'])[0]);
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  }, answer], (m) => { m.idleTimeoutMs = 80; m.maxAttempts = 3; });
  await assert.rejects(a.runtime.run('q'), (e) => errorCode(e) === 'llm_timeout');
  assert.equal(a.model.requests.length, 1, 'never retried once part of the answer was shown');
  assert.ok(a.events.some((e) => e.type === 'text_delta'), 'it was shown');
  await waitFor(() => a.events.some((e) => e.type === 'run_finished'), 'run_finished');
  const finished = JSON.parse(a.events.find((e) => e.type === 'run_finished').payloadJson);
  assert.deepEqual([finished.status, finished.errorCode], ['failed', 'llm_timeout']);
});

// ------------------------------------------------------------------ Your own transport (OHOS-7)

// README: "A host that learns the status only after streaming the body ends it with
// `sink.failWithResponse({ status, headers, body })`: the call fails as that answer would."
// README: "`sink.onCancel(() => request.abort())` runs once, ... and never after the transport
// resolved with a whole body, rejected, or called `end()`/`fail()`/`failWithResponse()`;
// `sink.cancelled` tells whether it happened."
// README (NetworkKitTransport): "the call is classified like any error answer, by its status, its
// `Retry-After` (the retry waits what the server asked) and its body."
test('ohos_7_llm_3_js_failWithResponse_fails_as_that_answer_honours_retry_after_and_onCancel_never_runs_after_it', async () => {
  const sinks = [];
  const failing = (status, headers, body) => (req, i, sink) => {
    const entry = { sink, calls: 0 };
    sink.onCancel(() => { entry.calls += 1; });
    sinks.push(entry);
    setTimeout(() => {
      sink.write(body.slice(0, 10));
      sink.failWithResponse({ status, headers, body });
    }, 5);
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
  const limited = JSON.stringify({ error: { message: 'Rate limit reached', type: 'rate_limit_error' } });
  let a = streamingRuntime([
    failing(429, [{ name: 'Retry-After', value: '1' }, { name: 'content-type', value: 'application/json' }], limited),
    streamed(textStream(['after the wait'], usage(10))),
  ], (m) => { m.maxAttempts = 2; m.maxBackoffMs = 8000; }); // maxBackoffMs caps Retry-After too
  const started = Date.now();
  const r = await a.runtime.run('q');
  const waited = Date.now() - started;
  assert.deepEqual([r.finalText, a.model.requests.length], ['after the wait', 2]);
  assert.ok(waited >= 950, `the retry waited the 1 s the server asked (${waited} ms), not the 1–5 ms backoff`);
  // 401 after the body: llm_auth, not retried; the error's code tells what to do.
  a = streamingRuntime([
    failing(401, [{ name: 'content-type', value: 'application/json' }], JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } })),
    streamed(textStream(['never'], usage(10))),
  ], (m) => { m.maxAttempts = 3; });
  const run = a.runtime.run('q');
  await assert.rejects(run, (e) => errorCode(e) === 'llm_auth');
  assert.equal(a.model.requests.length, 1);
  // Neither sink is ever cancelled afterwards: not by a cancel(), not by any timer.
  a.runtime.cancel();
  await sleep(100);
  for (const { sink, calls } of sinks) {
    assert.equal(calls, 0);
    assert.equal(sink.cancelled, false);
  }
});

// ------------------------------------------------------------------ Seed mapping

/** The seed's HistoryInvariants.toolCallsPaired, from seed 000 §2.4 / SPEC CORE-2. */
function seedToolCallsPaired(messages) {
  return pairingProblems(messages).length === 0;
}

/** The seed's computeSafeSplitIndex loop (seed 000 §2.4), O(n²) as written there. */
function seedComputeSafeSplitIndex(messages, keep) {
  if (messages.length <= keep) return -1;
  let splitIndex = messages.length - keep;
  while (splitIndex > 0) {
    if (seedToolCallsPaired(messages.slice(0, splitIndex)) && seedToolCallsPaired(messages.slice(splitIndex))) return splitIndex;
    splitIndex -= 1;
  }
  return -1;
}

/** A random history: user/assistant text, tool-call turns answered in order, out of order, late, twice or never. */
function randomHistory(rand, n) {
  const out = [];
  let next = 0;
  const open = [];
  while (out.length < n) {
    const r = rand();
    if (r < 0.2) out.push({ role: 'user', content: 'u' });
    else if (r < 0.35) out.push({ role: 'assistant', content: 'a' });
    else if (r < 0.6) {
      const k = 1 + Math.floor(rand() * 3);
      const calls = Array.from({ length: k }, () => ({ id: `c${next += 1}`, name: 't', arguments: '{}' }));
      out.push({ role: 'assistant', content: null, tool_calls: calls });
      open.push(...calls.map((c) => c.id));
    } else if (r < 0.93 && open.length > 0) {
      const at = rand() < 0.8 ? 0 : Math.floor(rand() * open.length);
      out.push({ role: 'tool', tool_call_id: open.splice(at, 1)[0], content: 'r' });
    } else if (r < 0.96) {
      out.push({ role: 'tool', tool_call_id: `c${1 + Math.floor(rand() * Math.max(next, 1))}`, content: 'orphan or repeat' });
    } else if (next > 0) {
      out.push({ role: 'assistant', content: null, tool_calls: [{ id: `c${next}`, name: 't', arguments: '{}' }] }); // a repeated id
    }
  }
  return out;
}

// README seed mapping: "| `computeSafeSplitIndex` | … | `computeSafeSplitIndex` |" and
// "| `HistoryInvariants.toolCallsPaired` | … | `toolCallsPaired` |"
// README: "Where `computeSafeSplitIndex` finds no split, C and ArkTS answer -1 as the seed does (Rust: `None`)."
test('cmp_4_core_2_par_1_js_computeSafeSplitIndex_and_toolCallsPaired_answer_what_the_seeds_loop_answers_on_random_histories', () => {
  let seed = 20240517;
  const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
  let noSplit = 0;
  let unpaired = 0;
  for (let round = 0; round < 1500; round += 1) {
    const messages = randomHistory(rand, Math.floor(rand() * 14));
    const json = JSON.stringify(messages);
    const paired = seedToolCallsPaired(messages);
    assert.equal(native.toolCallsPaired(json), paired, json);
    if (!paired) unpaired += 1;
    for (const keep of [0, 1, 2, 3, 5, 10, 20]) {
      const expected = seedComputeSafeSplitIndex(messages, keep);
      if (expected === -1) noSplit += 1;
      assert.equal(native.computeSafeSplitIndex(json, keep), expected, `keep ${keep}: ${json}`);
    }
  }
  assert.ok(noSplit > 100 && unpaired > 100, `the cases cover both answers (${noSplit} without a split, ${unpaired} unpaired)`);
  assert.equal(native.computeSafeSplitIndex('[]', 0), -1, 'nothing to split: -1');
  // Bad arguments: the documented codes, never a conversion.
  for (const bad of [-1, 1.5, '2', Number.NaN, undefined]) {
    assert.throws(() => native.computeSafeSplitIndex('[]', bad), (e) => errorCode(e) === 'invalid_argument', `keep ${String(bad)}`);
  }
  assert.throws(() => native.computeSafeSplitIndex('[{"role":', 1), (e) => errorCode(e) === 'invalid_json');
  assert.throws(() => native.toolCallsPaired(['not json text']), (e) => errorCode(e) === 'invalid_argument');
});

// README seed mapping: "| `validateEpisodicMemoryIds`, `EpisodeIdValidation` | … | `validateEpisodicMemoryIds`, `EpisodeIdValidation` |"
// index.d.ts: "MEM-3, the seed's validateEpisodicMemoryIds — the check importState() makes." /
// "Every id is non-blank and unique." / "The first id that is blank or repeats an earlier one."
test('mem_3_par_1_js_validateEpisodicMemoryIds_refuses_exactly_the_episodes_importState_refuses_and_names_the_first_bad_id', async () => {
  const ep = (id) => ({ id, summary: 's', created_at_ms: 1, message_count: 1, archived_messages: [] });
  const cases = [
    [[], true, undefined],
    [[ep('a')], true, undefined],
    [[ep('a'), ep('b'), ep('c')], true, undefined],
    [[ep('a'), ep('A')], true, undefined],
    [[ep('a'), ep('a ')], true, undefined],
    [[ep('')], false, ''],
    [[ep('   ')], false, '   '],
    [[ep('\t\n')], false, '\t\n'],
    [[ep('\u3000')], false, '\u3000'],
    [[ep('a'), ep('b'), ep('a'), ep('')], false, 'a'],
    [[ep('x'), ep(' '), ep('x')], false, ' '],
    [[ep('情节1'), ep('情节1')], false, '情节1'],
  ];
  for (const [episodes, valid, id] of cases) {
    const verdict = native.validateEpisodicMemoryIds(JSON.stringify(episodes));
    assert.ok(verdict instanceof native.EpisodeIdValidation);
    const what = JSON.stringify(episodes.map((e) => e.id));
    assert.deepEqual([verdict.valid, verdict.id], [valid, id], what);
    const runtime = new AgentRuntime(runtimeConfig(), new ScriptedModel([]).transport, new ToolRegistry());
    const before = runtime.exportState();
    const state = JSON.stringify({ version: 1, session_id: 'm3', usages: [], history: { messages: [], episodic_memories: episodes } });
    const outcome = await settle(Promise.resolve().then(() => runtime.importState(state)));
    if (valid) {
      assert.equal(outcome.error, undefined, `importState accepts ${what}`);
      assert.deepEqual(runtime.listEpisodes().map((e) => e.id), episodes.map((e) => e.id));
    } else {
      assert.equal(errorCode(outcome.error), 'invalid_state', `importState refuses ${what}`);
      assert.equal(runtime.exportState(), before, 'and changes nothing');
    }
  }
  assert.throws(() => native.validateEpisodicMemoryIds('{"id":"a"}'), (e) => errorCode(e) === 'invalid_json', 'not an array');
  assert.throws(() => native.validateEpisodicMemoryIds(), (e) => errorCode(e) === 'invalid_argument');
});

// README seed mapping: "| `allocateIsolatedSessionId` | … | `allocateIsolatedSessionId`, `NextId` |"
// index.d.ts: "the trimmed `requested` when it is non-empty, not the trimmed parent id and not in
// `activeIds`; otherwise `${parent}_w_${nextId()}`, drawn again while it is the parent's id or
// active, at most 16 more times. `nextId` is called synchronously"
test('sub_9_par_1_js_allocateIsolatedSessionId_draws_at_most_16_more_times_synchronously_and_compares_trimmed_ids_as_the_seed', () => {
  // Every draw active: 1 + 16 draws, then the last candidate as the seed returns it.
  let draws = 0;
  const active = Array.from({ length: 40 }, (_, i) => `p_w_${i + 1}`);
  const id = native.allocateIsolatedSessionId('p', 'p', active, () => String(draws += 1));
  assert.equal(draws, 17, 'the first draw and at most 16 more');
  assert.equal(id, 'p_w_17');
  // A free draw stops the loop.
  draws = 0;
  assert.equal(native.allocateIsolatedSessionId('p', '', ['p_w_1', 'p_w_2'], () => String(draws += 1)), 'p_w_3');
  assert.equal(draws, 3);
  // The trimmed parent id: " p " refuses "p" and prefixes with "p".
  draws = 0;
  assert.equal(native.allocateIsolatedSessionId(' p ', ' p', [], () => String(draws += 1)), 'p_w_1');
  // The trimmed request against the active ids as given.
  assert.equal(native.allocateIsolatedSessionId('p', ' w ', ['w'], () => 'x'), 'p_w_x', 'trimmed "w" is active');
  assert.equal(native.allocateIsolatedSessionId('p', ' w ', [' w '], () => 'x'), 'w', 'active " w " is not "w"');
  assert.equal(native.allocateIsolatedSessionId('p', '   ', [], () => '子'), 'p_w_子', 'a blank request draws');
  // Synchronously: the draws happen inside the call.
  let inside = false;
  let sawInside = false;
  inside = true;
  native.allocateIsolatedSessionId('p', '', [], () => { sawInside = inside; return 'z'; });
  inside = false;
  assert.equal(sawInside, true);
  // Hostile arguments.
  assert.throws(() => native.allocateIsolatedSessionId('p', '', [1], () => 'z'), (e) => errorCode(e) === 'invalid_argument', 'a non-string active id');
  assert.throws(() => native.allocateIsolatedSessionId('p', '', 'p_w_1', () => 'z'), (e) => errorCode(e) === 'invalid_argument', 'activeIds not an array');
  assert.throws(() => native.allocateIsolatedSessionId('p', '', [], 'z'), (e) => errorCode(e) === 'invalid_argument', 'nextId not a function');
  assert.throws(() => native.allocateIsolatedSessionId('p', '', [], () => Promise.resolve('z')), (e) => errorCode(e) === 'invalid_argument', 'an async nextId');
});

// README seed mapping: "| `SubAgentContext.summarize(content)` (the three-level summary) | … | `summarizeResult` |"
// Seed 003: "≤500 chars → 直接返回; >500 chars → 有 ## Summary/Result → 提取 section (≤1000); 无 → 截断前500字符 + "[truncated, N chars]""
test('iso_3_par_1_js_summarizeResult_keeps_500_characters_as_is_and_a_section_of_at_most_1000_alone', () => {
  const exactly500 = '字'.repeat(500);
  assert.equal(native.summarizeResult(exactly500), exactly500, '500 characters: as is');
  const long501 = 'a'.repeat(501);
  assert.equal(native.summarizeResult(long501), `${'a'.repeat(500)}[truncated, 501 chars]`);
  // index.d.ts reads the seed's "(≤1000)" as a condition: a section of exactly 1000
  // characters comes back alone, one of 1001 falls through to the truncation.
  const section1000 = `## Summary\n${'要'.repeat(1000 - 11)}`;
  assert.equal([...section1000].length, 1000);
  assert.equal(native.summarizeResult(`${'x'.repeat(600)}\n${section1000}\n## Next\nmore`), section1000);
  const body1001 = `${'x'.repeat(600)}\n${section1000}要\n## Next\nmore`;
  assert.equal(native.summarizeResult(body1001), `${'x'.repeat(600).slice(0, 500)}[truncated, ${[...body1001].length} chars]`);
  // "## Summary" before "## Result", wherever they stand.
  assert.equal(native.summarizeResult(`${'x'.repeat(600)}\n## Result\nR\n## Summary\nS`), '## Summary\nS');
  // A short section next to a long body: just the section.
  assert.equal(native.summarizeResult(`${'y'.repeat(700)}\n## Result\n完成。`), '## Result\n完成。');
  assert.equal(native.summarizeResult(''), '');
});

// README: "Seed 003's `spawn_sub_agent({ role, task, context })` is `delegate_task` with the optional
// `role` and `context` next to seed 000's required `assignee` and `task_description`; the model is
// never offered a tool named `spawn_sub_agent`."
// README: "Its context is the registry's record (`SubAgentContext` in `subAgents()`), which reads but does not run."
// README seed mapping: "| `storeMemory`, `recallMemory` with a namespace, its stats | … | `MemoryNamespace`, `NamespaceStats`, `AgentRuntime.memory`, `ToolContext.memory` |"
// index.d.ts (ToolExecutor): "reaches its memory namespace — for a sub-agent's tool, the sub-agent's own."
test('sub_1_iso_1_mem_4_par_1_js_delegate_task_takes_optional_role_and_context_no_spawn_sub_agent_and_a_childs_tool_gets_its_own_namespace', async () => {
  const seen = [];
  const tools = new ToolRegistry();
  tools.register(new ToolDefinition('note', 'Notes', '{"type":"object"}'), async (call, context) => {
    seen.push({ sessionId: context.sessionId, ns: context.memory.namespace, parentEntry: context.memory.recall('working', 'parent-note') });
    context.memory.store('working', 'child-note', '{"by":"child"}');
    return { content: 'noted' };
  });
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'd1', name: native.DELEGATE_TASK_TOOL_NAME, arguments: { assignee: native.CLONE_ASSIGNEE, task_description: 'take a note', role: 'general', context: 'the user likes tea' } }], usage: usage(20) }),
    () => completion({ toolCalls: [{ id: 'n1', name: 'note', arguments: {} }], usage: usage(30) }),
    () => completion({ content: 'child done', usage: usage(40) }),
    () => completion({ content: 'parent done', usage: usage(50) }),
  ]);
  const config = runtimeConfig();
  config.allowClone = true;
  const runtime = new AgentRuntime(config, model.transport, tools);
  runtime.memory().store('working', 'parent-note', '{"by":"parent"}');
  const result = await runtime.run('delegate a note');
  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'parent done');
  // The offered tool: delegate_task with assignee and task_description required, role and context optional.
  const offered = model.requests[0].body.tools.map((t) => t.function);
  assert.ok(!offered.some((f) => f.name === 'spawn_sub_agent'), 'no spawn_sub_agent');
  const delegate = offered.find((f) => f.name === native.DELEGATE_TASK_TOOL_NAME);
  assert.deepEqual([...delegate.parameters.required].sort(), ['assignee', 'task_description']);
  assert.ok(delegate.parameters.properties.role && delegate.parameters.properties.context, 'role and context are offered');
  // The child ran with the given context (not the seed's auto-condensation) and its own namespace.
  const childRequest = model.requests[1].body;
  assert.ok(JSON.stringify(childRequest.messages).includes('the user likes tea'), 'the explicit context reached the child');
  assert.ok(!childRequest.tools.some((t) => t.function.name === 'spawn_sub_agent'));
  const [record] = runtime.subAgents().history;
  assert.equal(seen.length, 1);
  assert.equal(seen[0].sessionId, record.id, 'the tool ran in the child');
  assert.equal(seen[0].ns, record.id, 'its namespace is the child\'s session id');
  assert.equal(seen[0].parentEntry, undefined, 'the parent\'s entries are not visible');
  assert.equal(runtime.memory().namespace, 'global');
  assert.equal(runtime.memory().recall('working', 'child-note'), undefined, 'the child\'s entries are not the parent\'s');
  assert.deepEqual(runtime.memory().ids('working'), ['parent-note']);
  // The record reads (the seed's SubAgentContext fields) but cannot run.
  assert.deepEqual([record.parentId, record.role, record.assignee, record.task, record.status],
    [runtime.sessionId, 'general', native.CLONE_ASSIGNEE, 'take a note', 'completed']);
  assert.ok(Array.isArray(record.messages) && record.messages.length > 0);
  assert.equal(typeof record.run, 'undefined', 'no standalone run');
  assert.equal(typeof record.forceComplete, 'undefined');
  assert.equal(record.result.summary, 'child done');
});
