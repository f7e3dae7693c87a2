'use strict';
// NAPI-2: whatever a host callback hands back — a transport, a tool, a worker factory or a
// custom compressor resolving with undefined or null, a non-Promise thenable, a throwing
// getter, a rejection with a Symbol — the run ends the documented way and the module
// leaves no unhandled rejection or uncaught exception behind (index.d.ts: every error
// thrown or rejected by the module is an Error with a stable `code`; either would end a
// Node process or an ArkTS app).

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, snapshot, ScriptedModel, runtimeConfig, lastUserText,
} = require('./support');

const SCHEMA = JSON.stringify({ type: 'object', properties: {} });

// Collected over the whole file; each test checks none arrived while it ran.
const stray = [];
process.on('unhandledRejection', (reason) => stray.push(`unhandledRejection: ${reason}`));
process.on('uncaughtException', (error) => stray.push(`uncaughtException: ${error}`));
// Node reports an exception left pending in a native callback as this warning (and ends
// the process under --force-node-api-uncaught-exceptions-policy, the future default).
process.on('warning', (warning) => {
  if (warning.code === 'DEP0168') stray.push(`uncaught N-API callback exception: ${warning.message}`);
});

/** Lets queued callbacks and microtasks run, then asserts nothing leaked out of the module. */
async function assertNothingStray() {
  for (let i = 0; i < 5; i += 1) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(stray.splice(0), [], 'no unhandled rejection or uncaught exception');
}

function noRetry(config) {
  config.maxAttempts = 1;
  return config;
}

function registry(name, fn) {
  const r = new native.ToolRegistry();
  if (fn) r.register(new native.ToolDefinition(name, 'a tool', SCHEMA), fn);
  return r;
}

const TRANSPORT_ANSWERS = {
  'resolves undefined': async () => undefined,
  'resolves null': async () => null,
  'returns undefined': () => undefined,
  'returns null': () => null,
  'returns a thenable that is not a Promise': () => ({ then(resolve) { resolve(undefined); } }),
  'resolves an object whose status getter throws': async () => ({ get status() { throw new Error('getter'); } }),
  'rejects with undefined': async () => { throw undefined; }, // eslint-disable-line no-throw-literal
  'rejects with null': () => Promise.reject(null), // eslint-disable-line prefer-promise-reject-errors
  'rejects with a Symbol': () => Promise.reject(Symbol('s')), // eslint-disable-line prefer-promise-reject-errors
  'rejects with an object whose code getter throws': () => Promise.reject({ get code() { throw new Error('getter'); } }), // eslint-disable-line prefer-promise-reject-errors
};

for (const [what, transport] of Object.entries(TRANSPORT_ANSWERS)) {
  test(`napi_2 a transport that ${what}: the run rejects with llm_transport, nothing else escapes`, async () => {
    const runtime = new native.AgentRuntime(noRetry(runtimeConfig()), transport, registry());
    await assert.rejects(runtime.run('hi'), (e) => e instanceof Error && e.code === 'llm_transport');
    await assertNothingStray();
    assert.equal(JSON.parse(runtime.historyJson()).length, 0, 'the failed first call took the input out');
  });
}

const TOOL_ANSWERS = {
  'resolves undefined': async () => undefined,
  'resolves null': async () => null,
  'returns null': () => null,
  'returns a thenable that is not a Promise': () => ({ then(resolve) { resolve(null); } }),
  'resolves an object whose content getter throws': async () => ({ get content() { throw new Error('getter'); } }),
  'rejects with null': () => Promise.reject(null), // eslint-disable-line prefer-promise-reject-errors
  'rejects with a Symbol': () => Promise.reject(Symbol('s')), // eslint-disable-line prefer-promise-reject-errors
};

for (const [what, tool] of Object.entries(TOOL_ANSWERS)) {
  test(`napi_2 core_2 a tool that ${what}: the model gets a tool error, the run completes, nothing else escapes`, async () => {
    const model = new ScriptedModel([
      () => completion({ toolCalls: [{ id: 'call_1', name: 'probe', arguments: {} }] }),
      () => completion({ content: 'done' }),
    ], { tools: ['probe'] });
    const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry('probe', tool));
    const result = await runtime.run('use the tool');
    assert.equal(result.status, 'completed');
    assert.deepEqual(model.problems, []);
    const answer = JSON.parse(runtime.historyJson()).find((m) => m.role === 'tool');
    assert.equal(answer.is_error, true, JSON.stringify(answer));
    await assertNothingStray();
  });
}

const FACTORY_ANSWERS = {
  'resolves undefined': async () => undefined,
  'resolves null': async () => null,
  'returns null': () => null,
  'rejects with a Symbol': () => Promise.reject(Symbol('s')), // eslint-disable-line prefer-promise-reject-errors
  'rejects with null': () => Promise.reject(null), // eslint-disable-line prefer-promise-reject-errors
};

for (const [what, factory] of Object.entries(FACTORY_ANSWERS)) {
  test(`napi_2 sub_2 a worker factory that ${what}: the delegation ends with a code, nothing else escapes`, async () => {
    const isParent = (body) => !lastUserText(body).includes('child task');
    const model = new ScriptedModel([
      () => completion({ toolCalls: [{ id: 'call_d', name: 'delegate_task', arguments: { assignee: 'w', task_description: 'child task' } }] }),
      (body) => (isParent(body) ? completion({ content: 'parent done' }) : completion({ content: 'child done' })),
      () => completion({ content: 'parent done' }),
    ]);
    const config = runtimeConfig();
    config.registerSubAgent(native.SubAgentDefinition.create('w', 'a worker', factory));
    const runtime = new native.AgentRuntime(config, model.transport, registry());
    const result = await runtime.run('delegate');
    assert.equal(result.status, 'completed');
    const answer = JSON.parse(runtime.historyJson()).find((m) => m.role === 'tool');
    assert.ok(answer, 'the delegation was answered');
    await assertNothingStray();
  });
}

const COMPRESSOR_ANSWERS = {
  'resolves undefined': async () => undefined,
  'resolves null': async () => null,
  'returns a thenable that is not a Promise': () => ({ then(resolve) { resolve(undefined); } }),
  'rejects with a Symbol': () => Promise.reject(Symbol('s')), // eslint-disable-line prefer-promise-reject-errors
};

for (const [what, compress] of Object.entries(COMPRESSOR_ANSWERS)) {
  test(`napi_2 cmp_1 a custom compressor that ${what}: compressNow fails with compressor_error, nothing else escapes`, async () => {
    const model = new ScriptedModel([() => completion({ content: 'a', usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } })],
      { summarizer: () => completion({ content: snapshot() }) });
    const config = runtimeConfig();
    config.setCustomCompressor(compress, 1);
    const runtime = new native.AgentRuntime(config, model.transport, registry());
    await runtime.run('hello');
    const before = runtime.exportState();
    const outcome = await runtime.compressNow();
    assert.equal(outcome.outcome, 'failed');
    assert.equal(outcome.reason, 'compressor_error');
    assert.equal(runtime.exportState(), before, 'nothing changed');
    await assertNothingStray();
  });
}
