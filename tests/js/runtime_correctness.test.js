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
