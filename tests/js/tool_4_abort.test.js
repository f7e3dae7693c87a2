'use strict';
// TOOL-4 through the N-API surface: ToolDefinition's timeoutMs, AgentRuntimeConfig's and
// WorkerConfig's toolTimeoutMs, and ToolContext.signal (a ToolAbortSignal): it fires with
// "tool_timeout" at the call's deadline (the model reads a tool_timeout error result and the
// run goes on), with "cancelled" on the run's cancel, never for a call that settled first;
// a tool that ignores it cannot hold its run past the deadline.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, runtimeConfig, RoutedModel, ScriptedModel, systemPrompt, waitFor,
} = require('./support');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SCHEMA = JSON.stringify({ type: 'object', properties: {} });
const USAGE = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };

/** The model calls `slow` once, then answers with what the tool result said. */
function slowModel() {
  return new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }], usage: USAGE }),
    (body) => {
      const result = body.messages.find((m) => m.role === 'tool');
      return completion({ content: `tool said: ${result.content}`, usage: USAGE });
    },
  ], { tools: ['slow'] });
}

/** A runtime with the tool `slow` (run by `execute`), its definition's `timeoutMs` and the config's. */
function runtimeWith(model, execute, { timeoutMs, toolTimeoutMs } = {}) {
  const tools = new native.ToolRegistry();
  const definition = timeoutMs === undefined
    ? new native.ToolDefinition('slow', 'never finishes on its own', SCHEMA)
    : new native.ToolDefinition('slow', 'never finishes on its own', SCHEMA, timeoutMs);
  tools.register(definition, execute);
  const config = runtimeConfig();
  if (toolTimeoutMs !== undefined) config.toolTimeoutMs = toolTimeoutMs;
  return new native.AgentRuntime(config, model.transport, tools);
}

/** An executor that never settles and records what its signal did. */
function neverSettles() {
  const seen = { calls: 0, reasons: [], signal: null, abortedAtStart: null, reasonAtStart: undefined };
  const execute = (call, context) => {
    seen.calls += 1;
    seen.signal = context.signal;
    seen.abortedAtStart = context.signal.aborted;
    seen.reasonAtStart = context.signal.reason;
    context.signal.onAbort((...args) => seen.reasons.push([args.length, context.signal.reason]));
    return new Promise(() => {});
  };
  return { seen, execute };
}

for (const [name, options] of [
  ['the definition timeoutMs', { timeoutMs: 60 }],
  ['the config toolTimeoutMs', { toolTimeoutMs: 60 }],
  ['the definition timeoutMs over the config', { timeoutMs: 60, toolTimeoutMs: 100000 }],
]) {
  test(`tool_4_js_${name.replace(/ /g, '_')}_answers_tool_timeout_fires_the_signal_and_the_run_goes_on`, async () => {
    const model = slowModel();
    const { seen, execute } = neverSettles();
    const runtime = runtimeWith(model, execute, options);
    const result = await runtime.run('do the slow thing');
    assert.deepEqual(model.problems, []);
    assert.equal(result.status, 'completed');
    assert.match(result.finalText, /tool said: .*tool_timeout/);
    assert.equal(seen.calls, 1);
    assert.equal(seen.abortedAtStart, false);
    assert.equal(seen.reasonAtStart, null);
    assert.equal(seen.signal.aborted, true);
    assert.equal(seen.signal.reason, 'tool_timeout');
    await waitFor(() => seen.reasons.length > 0, 'the abort listener');
    await sleep(30);
    assert.deepEqual(seen.reasons, [[0, 'tool_timeout']], 'once, without arguments; the reason on the signal');
    // A listener added after the signal fired hears it too.
    const late = [];
    seen.signal.onAbort(() => late.push(seen.signal.reason));
    await waitFor(() => late.length > 0, 'a late listener');
    assert.deepEqual(late, ['tool_timeout']);
  });
}

test('tool_4_js_timeoutMs_0_means_no_deadline_and_cancel_fires_cancelled', async () => {
  const model = slowModel();
  const { seen, execute } = neverSettles();
  const runtime = runtimeWith(model, execute, { timeoutMs: 0, toolTimeoutMs: 10 });
  const run = runtime.run('do the slow thing').then((r) => r, (e) => ({ error: e }));
  await waitFor(() => seen.calls === 1, 'the tool call');
  await sleep(60); // past the runtime default: timeoutMs 0 wins
  assert.equal(seen.signal.aborted, false);
  runtime.cancel();
  const outcome = await run;
  assert.ok(outcome.error ? outcome.error.code === 'cancelled' : outcome.status === 'cancelled', JSON.stringify(outcome));
  await waitFor(() => seen.reasons.length > 0, 'the abort listener');
  assert.deepEqual(seen.reasons, [[0, 'cancelled']]);
  assert.equal(seen.signal.reason, 'cancelled');
  assert.equal(model.requests.length, 1, 'no model call after the cancel');
});

test('tool_4_js_a_call_that_settles_in_time_never_fires_its_signal', async () => {
  const model = slowModel();
  const heard = [];
  let signal = null;
  const runtime = runtimeWith(model, async (call, context) => {
    signal = context.signal;
    context.signal.onAbort(() => heard.push(context.signal.reason));
    return { content: 'fast' };
  }, { timeoutMs: 50 });
  const result = await runtime.run('do the slow thing');
  assert.equal(result.finalText, 'tool said: fast');
  await sleep(120);
  assert.deepEqual(heard, []);
  assert.equal(signal.aborted, false);
  assert.equal(signal.reason, null);
});

test('tool_4_js_a_listener_that_throws_is_ignored', async () => {
  const model = slowModel();
  const heard = [];
  const runtime = runtimeWith(model, (call, context) => {
    context.signal.onAbort(() => { throw new Error('broken listener'); });
    context.signal.onAbort(() => heard.push(context.signal.reason));
    return new Promise(() => {});
  }, { timeoutMs: 30 });
  const result = await runtime.run('do the slow thing');
  assert.equal(result.status, 'completed');
  await waitFor(() => heard.length > 0, 'the second listener');
  assert.deepEqual(heard, ['tool_timeout']);
});

test('tool_4_js_settings_read_back_and_bad_values_throw_stable_codes', () => {
  const d = new native.ToolDefinition('t', 'd', SCHEMA, 2500);
  assert.equal(d.timeoutMs, 2500);
  assert.equal(new native.ToolDefinition('t', 'd', SCHEMA).timeoutMs, null);
  for (const bad of [-1, 1.5, NaN, Infinity, 2 ** 32]) {
    assert.throws(() => new native.ToolDefinition('t', 'd', SCHEMA, bad), (e) => e.code === 'invalid_argument', String(bad));
  }
  const config = runtimeConfig();
  assert.equal(config.toolTimeoutMs, 0, 'no deadline by default');
  config.toolTimeoutMs = 1500;
  assert.equal(config.toolTimeoutMs, 1500);
  for (const bad of [-1, 0.5, NaN, 2 ** 32]) {
    assert.throws(() => { config.toolTimeoutMs = bad; }, (e) => e.code === 'invalid_config', String(bad));
  }
  assert.equal(config.toolTimeoutMs, 1500, 'a refused value changes nothing');
  assert.throws(() => new native.ToolAbortSignal(), (e) => typeof e.code === 'string');
});

test('tool_4_js_a_worker_starts_with_its_parents_toolTimeoutMs_and_its_factory_may_change_it', async () => {
  const WORKER_PROMPT = 'You are the slow worker.';
  const seen = [];
  const heard = [];
  const model = new RoutedModel([
    {
      name: 'parent',
      match: (body) => systemPrompt(body) !== WORKER_PROMPT,
      turns: [
        () => completion({ toolCalls: [{ id: 'call_d', name: 'delegate_task', arguments: { assignee: 'worker', task_description: 'slow' } }], usage: USAGE }),
        () => completion({ content: 'parent done', usage: USAGE }),
      ],
    },
    {
      name: 'worker',
      match: (body) => systemPrompt(body) === WORKER_PROMPT,
      turns: [
        () => completion({ toolCalls: [{ id: 'call_w', name: 'slow', arguments: {} }], usage: USAGE }),
        (body) => completion({ content: `worker read: ${body.messages.find((m) => m.role === 'tool').content}`, usage: USAGE }),
      ],
    },
  ]);
  const config = runtimeConfig();
  config.toolTimeoutMs = 100000;
  config.registerSubAgent(native.SubAgentDefinition.create('worker', 'Slow things', (worker) => {
    seen.push(worker.toolTimeoutMs);
    assert.throws(() => { worker.toolTimeoutMs = -1; }, (e) => e.code === 'invalid_config');
    worker.toolTimeoutMs = 40;
    worker.systemPrompt = WORKER_PROMPT;
    worker.tools.register(new native.ToolDefinition('slow', 'never finishes', SCHEMA), (call, context) => {
      context.signal.onAbort(() => heard.push(context.signal.reason));
      return new Promise(() => {});
    });
  }));
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const result = await runtime.run('delegate the slow thing');
  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'parent done');
  assert.deepEqual(seen, [100000], 'the parent\'s');
  const workerLast = model.byRoute.worker[1];
  assert.match(workerLast.messages.find((m) => m.role === 'tool').content, /tool_timeout/);
  await waitFor(() => heard.length > 0, 'the worker tool\'s abort listener');
  assert.deepEqual(heard, ['tool_timeout']);
});

// SUB-7, TOOL-4: cancelling the parent while its worker waits in a tool winds the worker
// down: the worker's tool hears "cancelled" (as index.d.ts says of a run's cancel), not
// "closed".
test('sub_7_tool_4_js_a_workers_tool_hears_cancelled_when_the_parent_is_cancelled', async () => {
  const WORKER_PROMPT = 'You are the waiting worker.';
  const heard = [];
  let started = false;
  const model = new RoutedModel([
    {
      name: 'parent',
      match: (body) => systemPrompt(body) !== WORKER_PROMPT,
      turns: [
        () => completion({ toolCalls: [{ id: 'call_d', name: 'delegate_task', arguments: { assignee: 'worker', task_description: 'wait' } }], usage: USAGE }),
      ],
    },
    {
      name: 'worker',
      match: (body) => systemPrompt(body) === WORKER_PROMPT,
      turns: [() => completion({ toolCalls: [{ id: 'call_w', name: 'slow', arguments: {} }], usage: USAGE })],
    },
  ]);
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('worker', 'Waits', (worker) => {
    worker.systemPrompt = WORKER_PROMPT;
    worker.tools.register(new native.ToolDefinition('slow', 'never finishes', SCHEMA), (call, context) => {
      started = true;
      context.signal.onAbort(() => heard.push(context.signal.reason));
      return new Promise(() => {});
    });
  }));
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const running = runtime.run('delegate the waiting');
  await waitFor(() => started, 'the worker tool started');
  runtime.cancel();
  const result = await running;
  assert.deepEqual(model.problems, []);
  assert.equal(result.status, 'cancelled');
  await waitFor(() => heard.length > 0, 'the worker tool\'s abort listener');
  await sleep(30);
  assert.deepEqual(heard, ['cancelled']);
});
