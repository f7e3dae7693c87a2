'use strict';
// SUB-3 through the N-API surface, as index.d.ts states it: the concurrency cap counts
// each depth of the delegation tree (the default policy reaches maxDepth 3), and a worker
// that cannot be built after its factory succeeded consumes no delegation.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, ScriptedModel, runtimeConfig, lastUserText, offeredTools,
} = require('./support');

const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };

function delegateTo(assignee, task, id = 'call_d') {
  return completion({ toolCalls: [{ id, name: 'delegate_task', arguments: { assignee, task_description: task } }], usage });
}

/** A scripted model whose every request goes through `answer(body)`. */
function dispatching(answer, calls = 16) {
  return new ScriptedModel(Array.from({ length: calls }, () => (body) => answer(body)));
}

const firstLine = (text) => text.split('\n')[0];
const lastRole = (body) => body.messages.at(-1).role;

test('sub_3 the default concurrency cap counts each depth, so maxDepth 3 is reached', async () => {
  const next = { go: 'level one', 'level one': 'level two', 'level two': 'level three' };
  const model = dispatching((body) => {
    const task = firstLine(lastUserText(body));
    const delegates = offeredTools(body).includes('delegate_task');
    if (task === 'level three') {
      if (delegates) throw new Error('a worker at maxDepth was offered delegate_task');
      return completion({ content: 'three done', usage });
    }
    if (!delegates) throw new Error(`below maxDepth ${task} may delegate`);
    return lastRole(body) === 'user' ? delegateTo('clone', next[task]) : completion({ content: `${task} done`, usage });
  });
  const config = runtimeConfig();
  config.allowClone = true;
  const policy = new native.SubAgentPolicy(3);
  assert.equal(policy.maxConcurrentChildren, 2, 'the documented default');
  config.subAgentPolicy = policy;
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const result = await runtime.run('go');
  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'go done');
  const history = runtime.subAgents().history;
  assert.deepEqual(history.map((c) => [firstLine(c.task), c.status, c.result.errorCode]).sort(),
    [['level one', 'completed', null], ['level three', 'completed', null], ['level two', 'completed', null]]);
});

test('sub_3 a worker rejected after its factory succeeded consumes no delegation', async () => {
  const model = dispatching((body) => {
    if (!offeredTools(body).includes('delegate_task')) return completion({ content: `result of ${firstLine(lastUserText(body))}`, usage });
    const done = body.messages.filter((m) => m.role === 'tool').length;
    if (done === 0) return delegateTo('clashing', 't', 'call_1');
    if (done === 1) return delegateTo('clone', 'real work', 'call_2');
    return completion({ content: 'done', usage });
  });
  const config = runtimeConfig({ contextCompressor: new native.ContextCompressor() });
  config.allowClone = true;
  config.subAgentPolicy = new native.SubAgentPolicy(1, 1);
  // The worker copies the compressor; its own retrieve_memory clashes with the built-in one.
  config.registerSubAgent(native.SubAgentDefinition.create('clashing', 'registers retrieve_memory', (worker) => {
    worker.tools.register(new native.ToolDefinition('retrieve_memory', 'mine', '{"type":"object","properties":{}}'), async () => ({ content: 'x' }));
  }));
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  await runtime.run('go');
  assert.deepEqual(model.problems, []);
  const results = JSON.parse(runtime.historyJson()).filter((m) => m.role === 'tool');
  assert.equal(results.length, 2);
  assert.match(results[0].content, /tool_name_duplicate/);
  assert.equal(results[1].content, 'result of real work', 'the one delegation of the run was still available');
  assert.equal(runtime.subAgents().stats.history, 1, 'the rejected worker was never registered');
});

/** Root → child → grandchild (maxDepth 2): the child's two calls cost 200 each, the grandchild's one 500. */
function treeModel() {
  return dispatching((body) => {
    const task = firstLine(lastUserText(body));
    const first = lastRole(body) === 'user';
    const cost = (total) => ({ prompt_tokens: total - 10, completion_tokens: 10, total_tokens: total });
    if (task === 'grandchild task') return completion({ content: 'grandchild done', usage: cost(500) });
    if (task === 'child task') {
      return first
        ? completion({ toolCalls: [{ id: 'g', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'grandchild task' } }], usage: cost(200) })
        : completion({ content: 'child done', usage: cost(200) });
    }
    return first ? delegateTo('clone', 'child task') : completion({ content: 'root done', usage });
  });
}

function treeRuntime(model, budget) {
  const config = runtimeConfig();
  config.allowClone = true;
  config.subAgentPolicy = new native.SubAgentPolicy(2);
  if (budget !== undefined) config.childTokenBudget = budget;
  return new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
}

test('iso_4 sub_6 with nesting tokenCount covers the subtree and stats.totalTokens counts each call once', async () => {
  const model = treeModel();
  const runtime = treeRuntime(model);
  await runtime.run('go');
  assert.deepEqual(model.problems, []);
  const view = runtime.subAgents();
  const byTask = Object.fromEntries(view.history.map((c) => [firstLine(c.task), c]));
  assert.equal(byTask['grandchild task'].result.tokenCount, 500);
  assert.equal(byTask['child task'].result.tokenCount, 900, "the child's tokenCount covers its subtree");
  assert.equal(runtime.totalUsage().children.totalTokens, 900);
  assert.equal(view.stats.totalTokens, 900, 'each call once');
});

test('iso_5 childTokenBudget covers the child\'s own sub-agents', async () => {
  const model = treeModel();
  const runtime = treeRuntime(model, 800);
  await runtime.run('go');
  assert.deepEqual(model.problems, []);
  const byTask = Object.fromEntries(runtime.subAgents().history.map((c) => [firstLine(c.task), c]));
  assert.equal(byTask['grandchild task'].result.forcedReason, null, 'the grandchild stayed within its own budget');
  assert.equal(byTask['child task'].result.forcedReason, 'token-budget-exceeded');
});
