'use strict';
// Issue 28 item 7 through the N-API surface (CORE-5, ISO-7): runDecomposed() is a run like
// any other for listeners — "run_started" first (input: the task descriptions, one per
// line), the children's "sub_agent" events, "run_finished" last with its status,
// iterations 0 and its usage (its children's), all under the job's run id.

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, completion, ScriptedModel, runtimeConfig, waitFor } = require('./support');

const USAGE = { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 };
const TASKS = [{ assignee: 'clone', taskDescription: 'task A' }, { assignee: 'clone', taskDescription: 'task B' }];

function cloning(transport) {
  const config = runtimeConfig();
  config.allowClone = true;
  const runtime = new native.AgentRuntime(config, transport, new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  return { runtime, events };
}

/** The runtime's own events (its children's come wrapped as "sub_agent"), payloads parsed. */
function own(runtime, events) {
  return events.filter((e) => e.sessionId === runtime.sessionId).map((e) => ({ ...e, payload: JSON.parse(e.payloadJson) }));
}

test('core_5 iso_7 runDecomposed emits run_started first and run_finished last, with its usage', async () => {
  const model = new ScriptedModel([
    () => completion({ content: 'A done', usage: USAGE }),
    () => completion({ content: 'B done', usage: USAGE }),
  ]);
  const { runtime, events } = cloning(model.transport);
  const results = await runtime.runDecomposed(TASKS, 1);
  assert.deepEqual(model.problems, []);
  assert.deepEqual(results.map((r) => r.content), ['A done', 'B done']);
  await waitFor(() => own(runtime, events).some((e) => e.type === 'run_finished'), 'run_finished');
  const mine = own(runtime, events);
  const [first, last] = [mine[0], mine.at(-1)];
  assert.deepEqual(first.payload, { type: 'run_started', input: 'task A\ntask B' });
  assert.equal(last.type, 'run_finished');
  assert.deepEqual([last.payload.status, last.payload.iterations, last.payload.errorCode], ['completed', 0, null]);
  const children = runtime.totalUsage().children;
  assert.deepEqual([last.payload.usage.totalTokens, last.payload.usage.callCount], [children.totalTokens, children.callCount]);
  assert.deepEqual([children.totalTokens, children.callCount], [92, 2]);
  assert.ok(mine.slice(1, -1).every((e) => e.type === 'sub_agent'), mine.map((e) => e.type).join());
  for (const e of mine) {
    assert.equal(e.runId, first.runId, 'one run id');
    if (e.type === 'sub_agent') assert.equal(e.payload.parentRunId, first.runId);
  }
});

test('core_5 iso_7 a cancelled runDecomposed ends with run_finished "cancelled"', async () => {
  let started = 0;
  const hanging = (request, sink) => new Promise((resolve) => {
    started += 1;
    sink.onCancel(() => resolve({ status: 500, body: '' }));
  });
  const { runtime, events } = cloning(hanging);
  const job = runtime.runDecomposed(TASKS, 2);
  await waitFor(() => started === 2, 'both children call their model');
  runtime.cancel();
  const results = await job;
  assert.deepEqual(results.map((r) => r.errorCode), ['cancelled', 'cancelled']);
  await waitFor(() => own(runtime, events).some((e) => e.type === 'run_finished'), 'run_finished');
  const mine = own(runtime, events);
  assert.equal(mine[0].type, 'run_started');
  const last = mine.at(-1);
  assert.deepEqual([last.type, last.payload.status, last.payload.iterations], ['run_finished', 'cancelled', 0]);
});
