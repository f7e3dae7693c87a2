'use strict';
// Runtime correctness through the N-API surface, as index.d.ts promises it: compression on
// the provider's own counts (CMP-3, CMP-11), failed runs that leave the session usable
// (CORE-4), exportState() at any moment (CORE-6), the key never in state or events
// (LLM-4), tool error codes reaching the model (CORE-2), HTML 200 bodies (LLM-3) and the
// run slot held until compressNow() settles (CORE-4, CMP-1).

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, API_KEY, completion, snapshot, isSummaryRequest, ScriptedModel, runtimeConfig, textStream,
} = require('./support');

const SCHEMA = JSON.stringify({ type: 'object', properties: {} });

function registry(name, fn) {
  const r = new native.ToolRegistry();
  if (fn) r.register(new native.ToolDefinition(name, 'a tool', SCHEMA), fn);
  return r;
}

function longInput(turn) {
  return `turn ${turn}: ${'some details about the trip to Hangzhou '.repeat(12)}`;
}

/** A compressor with the given threshold; everything else default (summary window too). */
function compressor(threshold, keep, min) {
  return new native.ContextCompressor(threshold, keep, undefined, min);
}

function noRetry(config) {
  config.maxAttempts = 1;
  return config;
}

test('cmp_3_cmp_11 provider counts above the threshold compress though the local estimate is far below', async () => {
  const model = new ScriptedModel([0, 1, 2].map(() => (body) => completion({
    content: `answer ${body.messages.length}`,
    usage: { prompt_tokens: 5000, completion_tokens: 5, total_tokens: 5005 },
  })), { summarizer: () => completion({ content: snapshot(), usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } }) });
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor(2000, 2, 3) }), model.transport, registry());
  for (let t = 0; t < 3; t += 1) await runtime.run(longInput(t));
  assert.deepEqual(model.problems, []);
  assert.ok(model.summaryRequests.length >= 1, 'a summary request was made');
  assert.equal(runtime.episodicMemories().length, 1);
  const kinds = model.log.map((e) => e.kind);
  const at = kinds.indexOf('summary');
  const before = model.log.slice(0, at).filter((e) => e.kind === 'turn').at(-1).body.messages.filter((m) => m.role !== 'system').length;
  const after = model.log.slice(at).find((e) => e.kind === 'turn').body.messages.filter((m) => m.role !== 'system').length;
  assert.ok(after < before, `later requests are shorter (${after} < ${before})`);
});

test('cmp_3 a chat without tools compresses after its final answer', async () => {
  const model = new ScriptedModel([() => completion({ content: 'fine', usage: { prompt_tokens: 5000, completion_tokens: 5, total_tokens: 5005 } })], {
    summarizer: () => completion({ content: snapshot(), usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } }),
  });
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor(2000, 1, 1) }), model.transport, registry());
  const types = [];
  runtime.subscribe((e) => types.push(JSON.parse(e.payloadJson).type));
  const result = await runtime.run(longInput(0));
  assert.equal(result.status, 'completed');
  assert.equal(runtime.episodicMemories().length, 1, 'compressed within the run');
  assert.ok(types.indexOf('compression') > types.indexOf('model_response'));
});

test('cmp_3 summarizerMaxInputTokens defaults to a working window; too small is invalid_config', async () => {
  const model = new ScriptedModel([]);
  const small = compressor(10, 2, 1);
  assert.equal(small.summarizerMaxInputTokens, undefined);
  assert.doesNotThrow(() => new native.AgentRuntime(runtimeConfig({ contextCompressor: small }), model.transport, registry()));
  small.summarizerMaxInputTokens = 100;
  assert.throws(
    () => new native.AgentRuntime(runtimeConfig({ contextCompressor: small }), model.transport, registry()),
    (e) => e.code === 'invalid_config' && /summarizer_max_input_tokens/.test(e.message),
  );
});

test('core_4 a run whose first model call fails takes its input out again', async () => {
  const overflow = JSON.stringify({ error: { message: 'maximum context length exceeded', type: 'invalid_request_error', code: 'context_length_exceeded' } });
  const model = new ScriptedModel([
    () => completion({ content: 'hi', usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }),
    () => ({ status: 400, headers: [], body: overflow }),
    () => completion({ content: 'short answer', usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 } }),
  ]);
  const runtime = new native.AgentRuntime(noRetry(runtimeConfig()), model.transport, registry());
  await runtime.run('hello');
  const before = runtime.exportState();
  await assert.rejects(runtime.run('x'.repeat(100000)), (e) => e.code === 'llm_context_overflow');
  assert.equal(runtime.exportState(), before, 'the history is as before the failed run');
  await runtime.run('a short question');
  const roles = model.requests.at(-1).body.messages.map((m) => m.role);
  assert.ok(!roles.some((r, i) => r === 'user' && roles[i + 1] === 'user'), roles.join(','));
});

test('core_6 exportState() at every event, from a tool and in flight is always importable', async () => {
  let runtime;
  const seen = new Set();
  const failures = [];
  const check = (at) => {
    const exported = runtime.exportState();
    const fresh = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([]).transport, registry());
    try {
      fresh.importState(exported);
    } catch (e) {
      failures.push(`${at}: ${e.code} ${e.message}`);
    }
    seen.add(at);
  };
  const usage = { prompt_tokens: 5000, completion_tokens: 3, total_tokens: 5003 };
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'a', name: 'slow', arguments: {} }, { id: 'b', name: 'slow', arguments: {} }], usage }),
    () => completion({ content: 'done', usage }),
  ], { summarizer: () => completion({ content: snapshot(), usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } }) });
  const tools = registry('slow', async (call) => {
    check('tool_executor');
    await new Promise((r) => setTimeout(r, 10));
    return { content: `done ${call.id}` };
  });
  runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor(2000, 1, 1) }), model.transport, tools);
  runtime.subscribe((e) => check(JSON.parse(e.payloadJson).type));
  const timer = setInterval(() => check('in_flight'), 1);
  try {
    await runtime.run(longInput(0));
  } finally {
    clearInterval(timer);
  }
  assert.deepEqual(failures, []);
  for (const kind of ['run_started', 'model_request', 'model_response', 'tool_call_started', 'tool_executor', 'tool_call_finished', 'run_finished']) {
    assert.ok(seen.has(kind), `exported at ${kind}: ${[...seen].join(',')}`);
  }
});

test('llm_4 a key echoed by a tool, the model or the input never enters state or events', async () => {
  const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'a', name: 'leaky', arguments: { fail: false } }, { id: 'b', name: 'leaky', arguments: { fail: true } }], usage }),
    (body, i, sink) => {
      setImmediate(() => {
        for (const e of textStream(['your key is ', API_KEY], usage)) sink.write(e);
        sink.end();
      });
      return { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], streamed: true };
    },
  ]);
  const tools = registry('leaky', async (call) => {
    if (JSON.parse(call.argumentsJson).fail) {
      const e = new Error(`auth failed for ${API_KEY}`);
      e.code = 'auth_failed';
      throw e;
    }
    return { content: `OPENAI_API_KEY=${API_KEY}` };
  });
  const m = new native.ModelConfig('https://llm.example.test/v1', API_KEY, 'scripted-chat-1');
  m.stream = true;
  const runtime = new native.AgentRuntime(runtimeConfig({ model: m }), model.transport, tools);
  const events = [];
  runtime.subscribe((e) => events.push(e.payloadJson));
  await runtime.run(`my key is ${API_KEY}`);
  assert.deepEqual(model.problems, []);
  const exported = runtime.exportState();
  assert.ok(!exported.includes(API_KEY));
  assert.ok(exported.includes('<redacted>'));
  for (const e of events) assert.ok(!e.includes(API_KEY), e);
  for (const r of model.requests) assert.ok(!r.request.body.includes(API_KEY));
});

test('core_2 the model sees a failed tool\'s code with its message', async () => {
  const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'a', name: 'db', arguments: {} }], usage }),
    () => completion({ content: 'sorry', usage }),
  ]);
  const tools = registry('db', async () => {
    const e = new Error('database is locked');
    e.code = 'db_locked';
    throw e;
  });
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, tools);
  await runtime.run('go');
  const toolMessage = model.requests[1].body.messages.find((m) => m.role === 'tool');
  assert.deepEqual(JSON.parse(toolMessage.content), { error: { code: 'db_locked', message: 'database is locked' } });
});

test('llm_3 an HTML page with status 200 is llm_malformed_response, streamed or not', async () => {
  for (const stream of [false, true]) {
    const model = new ScriptedModel([() => ({ status: 200, headers: [{ name: 'content-type', value: 'text/html' }], body: '<html><body>Log in to the Wi-Fi</body></html>' })]);
    const m = new native.ModelConfig('https://llm.example.test/v1', API_KEY, 'scripted-chat-1');
    m.stream = stream;
    const runtime = new native.AgentRuntime(noRetry(runtimeConfig({ model: m })), model.transport, registry());
    await assert.rejects(runtime.run('hi'), (e) => e.code === 'llm_malformed_response' && /HTML/.test(e.message));
  }
});

test('core_4_cmp_1 compressNow() holds the run slot until its Promise settles, 1000 times', async () => {
  const model = new ScriptedModel([]);
  const withCompressor = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor(64000, 10, 3) }), model.transport, registry());
  const without = new native.AgentRuntime(runtimeConfig(), model.transport, registry());
  for (const runtime of [withCompressor, without]) {
    for (let i = 0; i < 1000; i += 1) {
      const attempt = runtime.compressNow();
      // Give the executor time to finish the (skipped) attempt: the slot must still be
      // taken, because the Promise has not settled.
      const until = process.hrtime.bigint() + 200000n;
      while (process.hrtime.bigint() < until);
      const run = runtime.run('must be refused');
      await assert.rejects(run, (e) => e.code === 'run_in_progress', `iteration ${i}`);
      const result = await attempt;
      assert.equal(result.outcome, 'skipped');
    }
  }
  assert.equal(model.requests.length, 0);
});

test('sub_6 sumUsages() and JSON.stringify() of the ChildUsageSummary', () => {
  const summary = native.sumUsages([
    { promptTokens: 10, completionTokens: 2, totalTokens: 12 },
    { promptTokens: 5, completionTokens: 1, totalTokens: 6, source: 'context_compression' },
  ]);
  assert.equal(Object.getPrototypeOf(summary), Object.prototype, 'a ChildUsageSummary is a plain object');
  assert.ok(!('costs' in summary), 'costs is absent when no call was priced');
  assert.deepEqual([summary.promptTokens, summary.completionTokens, summary.totalTokens, summary.callCount], [15, 3, 18, 2]);
  assert.deepEqual(JSON.parse(JSON.stringify(summary)), {
    promptTokens: 15, completionTokens: 3, totalTokens: 18, cachedTokens: 0, reasoningTokens: 0, callCount: 2, pricedCallCount: 0,
  });
  for (const bad of [-1, 1.5, NaN]) {
    assert.throws(() => native.sumUsages([{ promptTokens: bad, completionTokens: 0, totalTokens: 0 }]), (e) => e.code === 'invalid_argument');
  }
});

function sixMessageState() {
  const messages = [];
  for (let i = 0; i < 6; i += 1) messages.push({ role: 'user', content: `m${i}` });
  return JSON.stringify({ version: 1, session_id: 'custom', history: { messages, episodic_memories: [] }, usages: [] });
}

test('cmp_1 a custom ArkTS/JS compressor commits only what the runtime validated', async () => {
  const cases = [
    [async () => JSON.stringify({ outcome: 'compressed', split_index: 4, summary: 'four messages', usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 } }), 'compressed', 'compressed'],
    [async () => JSON.stringify({ outcome: 'skipped', reason: 'below_threshold' }), 'skipped', 'below_threshold'],
    [async () => JSON.stringify({ outcome: 'compressed', split_index: 99, summary: 'x' }), 'failed', 'invalid_split_index'],
    [async () => JSON.stringify({ outcome: 'compressed', split_index: 2, summary: ' ' }), 'failed', 'empty_summary'],
    [async () => 'not json', 'failed', 'compressor_error'],
    [async () => { throw new Error('boom'); }, 'failed', 'compressor_error'],
    [() => { throw new Error('sync boom'); }, 'failed', 'compressor_error'],
  ];
  for (const [compress, outcome, reason] of cases) {
    const seen = [];
    const config = runtimeConfig();
    config.setCustomCompressor(async (stateJson, contextJson) => {
      seen.push([stateJson, contextJson]);
      return compress();
    }, 1000);
    assert.equal(config.hasCustomCompressor, true);
    const runtime = new native.AgentRuntime(config, new ScriptedModel([]).transport, registry());
    runtime.importState(sixMessageState());
    const before = runtime.exportState();
    const result = await runtime.compressNow();
    assert.deepEqual([result.outcome, result.reason], [outcome, reason]);
    assert.equal(seen[0][0], before, 'the compressor got the exported state');
    assert.deepEqual(JSON.parse(seen[0][1]), { estimated_prompt_tokens: null, force: false });
    if (outcome === 'compressed') {
      assert.equal(JSON.parse(runtime.historyJson()).length, 2);
      assert.equal(runtime.episodicMemories()[0].summary, 'four messages');
      assert.equal(runtime.usages().at(-1).source, 'context_compression');
    } else {
      assert.equal(runtime.exportState(), before, `${reason}: nothing changed`);
    }
  }
  // The custom compressor wins over contextCompressor (index.d.ts: "contextCompressor is then ignored").
  let customCalls = 0;
  const both = runtimeConfig({ contextCompressor: compressor(1, 1, 1) });
  both.setCustomCompressor(async () => { customCalls += 1; return JSON.stringify({ outcome: 'skipped', reason: 'no_safe_split' }); });
  const summaryModel = new ScriptedModel([], { summarizer: () => completion({ content: snapshot() }) });
  const bothRuntime = new native.AgentRuntime(both, summaryModel.transport, registry());
  bothRuntime.importState(sixMessageState());
  assert.equal((await bothRuntime.compressNow()).reason, 'no_safe_split');
  assert.equal(customCalls, 1);
  assert.equal(summaryModel.summaryRequests.length, 0, 'the default compressor never ran');
  const config = runtimeConfig();
  assert.throws(() => config.setCustomCompressor(async () => '{}', -1), (e) => e.code === 'invalid_argument');
  config.setCustomCompressor(undefined);
  assert.equal(config.hasCustomCompressor, false);
});

test('mem_1 a host tool reads episodic memory during a run', async () => {
  let runtime;
  const usage = { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 };
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'a', name: 'recall', arguments: {} }], usage }),
    () => completion({ content: 'ok', usage }),
  ]);
  const tools = registry('recall', async () => {
    const episodes = runtime.listEpisodes();
    const found = runtime.findEpisode(episodes[0].id);
    return { content: `${episodes.length}:${found.summary}` };
  });
  runtime = new native.AgentRuntime(runtimeConfig(), model.transport, tools);
  runtime.importState(JSON.stringify({
    version: 1,
    session_id: 'mem',
    history: { messages: [], episodic_memories: [{ id: 'ep1', summary: 'trip plan', created_at_ms: 1, message_count: 0, archived_messages: [] }] },
    usages: [],
  }));
  await runtime.run('what was the plan?');
  const tool = model.requests[1].body.messages.find((m) => m.role === 'tool');
  assert.equal(tool.content, '1:trip plan');
});

test('core_4 runDecomposed() holds the run slot until its Promise settles too, 300 times', async () => {
  const model = new ScriptedModel([]);
  const config = runtimeConfig();
  config.allowClone = true;
  const runtime = new native.AgentRuntime(config, model.transport, registry());
  for (let i = 0; i < 300; i += 1) {
    // An unknown assignee fails at once, without a model call.
    const decomposed = runtime.runDecomposed([{ assignee: 'nobody', taskDescription: 'x' }]);
    const until = process.hrtime.bigint() + 200000n;
    while (process.hrtime.bigint() < until);
    await assert.rejects(runtime.run('must be refused'), (e) => e.code === 'run_in_progress', `iteration ${i}`);
    const [result] = await decomposed;
    assert.equal(result.errorCode, 'subagent_unknown_assignee');
  }
  assert.equal(model.requests.length, 0);
});
