'use strict';
// Issue 28 item 2 through the N-API surface (ISO-1, ISO-4, SUB-6): however a sub-agent
// ends — a final answer, a failure, forceCompleteSubAgent(), closeSubAgents(), stale
// cleanupSubAgents(), the parent's cancel() — its record in subAgents().history holds
// what it really spent (tokenCount, usage with cached tokens, costs and calls, toolsUsed,
// its messages so far) and subAgents().stats.totalTokens / stats.usage equal
// totalUsage().children.

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, BASE_URL, API_KEY, MODEL, completion, ScriptedModel, runtimeConfig, waitFor } = require('./support');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** 40 prompt tokens (10 of them cached) and 7 completion tokens: 47. */
const USAGE = { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47, prompt_tokens_details: { cached_tokens: 10 } };

/**
 * A parent that delegates "fetch it" to a clone and then answers; the clone calls
 * get_weather (47 tokens) and then plays `afterTool` (or never gets there: the tool waits).
 */
function setup({ toolWaits, afterTool }) {
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'fetch it' } }] }),
    () => completion({ toolCalls: [{ id: 'w1', name: 'get_weather', arguments: { city: 'Oslo' } }], usage: USAGE }),
    ...(afterTool ? [afterTool] : []),
    () => completion({ content: 'parent done' }),
  ]);
  const priced = new native.ModelConfig(BASE_URL, API_KEY, MODEL);
  priced.price = { currency: 'USD', inputPerMillion: 0.27, cachedInputPerMillion: 0.07, outputPerMillion: 1.10 };
  const config = runtimeConfig({ model: priced });
  config.allowClone = true;
  const state = { toolStarted: false };
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('get_weather', 'Weather', '{"type":"object"}'), async () => {
    state.toolStarted = true;
    if (toolWaits) await new Promise(() => {}); // until the library stops awaiting it
    return { content: 'sunny' };
  });
  const runtime = new native.AgentRuntime(config, model.transport, tools);
  return { model, runtime, state };
}

/** The record and the totals of a child that made its one call (47 tokens) and ran get_weather. */
function assertRealSpending(runtime, record, when) {
  assert.equal(record.result.tokenCount, 47, `${when}: tokenCount`);
  assert.deepEqual(record.result.toolsUsed, ['get_weather'], `${when}: toolsUsed`);
  const { usage } = record.result;
  assert.deepEqual([usage.totalTokens, usage.cachedTokens, usage.callCount, usage.pricedCallCount], [47, 10, 1, 1], `${when}: usage`);
  assert.ok(usage.costs.length === 1 && usage.costs[0].nanos > 0, `${when}: its cost`);
  const children = runtime.totalUsage().children;
  assert.deepEqual(usage, children, `${when}: the record's usage is what the parent recorded`);
  const { messages } = record;
  assert.ok(messages.some((m) => m.role === 'assistant' && (m.tool_calls || []).some((c) => c.id === 'w1')), `${when}: its messages so far`);
  const { stats } = runtime.subAgents();
  assert.equal(stats.totalTokens, children.totalTokens, `${when}: stats.totalTokens = totalUsage().children.totalTokens`);
  assert.deepEqual(stats.usage, children, `${when}: stats.usage = totalUsage().children`);
}

test('iso_4 sub_6 a completed child: its record and stats.totalTokens agree with totalUsage().children', async () => {
  const { model, runtime } = setup({ afterTool: () => completion({ content: 'child done', usage: { prompt_tokens: 0, completion_tokens: 5, total_tokens: 5 } }) });
  await runtime.run('go');
  assert.deepEqual(model.problems, []);
  const [record] = runtime.subAgents().history;
  assert.deepEqual([record.status, record.result.forcedReason, record.result.tokenCount], ['completed', null, 52]);
  const { stats } = runtime.subAgents();
  assert.deepEqual([stats.totalTokens, stats.usage], [52, runtime.totalUsage().children]);
});

test('iso_4 sub_6 a failed child archives what it spent and stats agree with totalUsage().children', async () => {
  const { model, runtime } = setup({ afterTool: () => ({ status: 400, body: '{"error":{"message":"no"}}' }) });
  await runtime.run('go');
  assert.deepEqual(model.problems, []);
  const [record] = runtime.subAgents().history;
  assert.equal(record.status, 'failed');
  assertRealSpending(runtime, record, 'failed');
});

/** Runs the parent until its child is inside get_weather, ends the child with `end`, checks it. */
async function endRunningChild(end, reason) {
  const { model, runtime, state } = setup({ toolWaits: true });
  const run = runtime.run('go');
  await waitFor(() => state.toolStarted, 'the child runs get_weather');
  const [child] = runtime.activeChildren();
  await end(runtime, child);
  const result = await run;
  assert.equal(result.status, reason === 'cancelled' ? 'cancelled' : 'completed');
  assert.deepEqual(model.problems, []);
  const view = runtime.subAgents();
  assert.equal(view.history.length, 1);
  const [record] = view.history;
  assert.deepEqual([record.id, record.status, record.result.forcedReason], [child, 'completed', reason]);
  assertRealSpending(runtime, record, reason);
  assert.equal(view.stats.completedCount, 1);
}

test('iso_4 sub_6 forceCompleteSubAgent(): the record holds what the child spent', async () => {
  await endRunningChild(async (runtime, child) => {
    assert.equal(runtime.forceCompleteSubAgent(child, 'user-stopped'), true);
    // At once: the registry archived the child's spending.
    const [record] = runtime.subAgents().history;
    assert.deepEqual([record.result.tokenCount, record.result.toolsUsed, runtime.subAgents().stats.totalTokens], [47, ['get_weather'], 47]);
  }, 'user-stopped');
});

test('iso_4 sub_6 closeSubAgents(): the record holds what the child spent', async () => {
  await endRunningChild(async (runtime) => {
    assert.equal(runtime.closeSubAgents(), 1);
    assert.equal(runtime.subAgents().stats.totalTokens, 47, 'at once');
  }, 'session-closed');
});

test('iso_4 sub_6 stale cleanupSubAgents(): the record holds what the child spent', async () => {
  await endRunningChild(async (runtime) => {
    await sleep(5);
    assert.equal(runtime.cleanupSubAgents(1), 1, 'the running child is stale');
    assert.equal(runtime.subAgents().stats.totalTokens, 47, 'at once');
  }, 'stale');
});

test('iso_4 sub_6 the parent cancel(): the record holds what the child spent', async () => {
  await endRunningChild(async (runtime) => {
    runtime.cancel();
  }, 'cancelled');
});
