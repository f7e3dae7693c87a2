'use strict';
// ISO (isolation and coordination, seed 003) and MEM-4 through the N-API surface:
// runDecomposed(), the sub-agent registry view, role whitelists, closeSubAgents(), and
// the runtime's namespaced working memory.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, RoutedModel, runtimeConfig, systemPrompt, lastUserText, offeredTools, waitFor, deferred,
} = require('./support');

const WORKER_PROMPT = 'You are the analyst.';
const isAnalyst = (body) => systemPrompt(body) === WORKER_PROMPT;
const isParent = (body) => offeredTools(body).includes('delegate_task');
const usage = (p, c) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });

function analystConfig(configure = () => {}) {
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('analyst', 'Analyses one part', (worker) => {
    worker.systemPrompt = WORKER_PROMPT;
  }));
  configure(config);
  return config;
}

/** Three tasks; B's child gets an auth error. A's answer waits until B's request arrived. */
function decomposedScenario() {
  const route = (tag, turn) => ({
    name: tag, match: (body) => isAnalyst(body) && lastUserText(body).startsWith(`TASK-${tag}`), turns: [turn],
  });
  const model = new RoutedModel([
    route('A', async () => {
      // Both tasks of the first batch are running at once.
      await waitFor(() => model.byRoute.B.length === 1, 'B started while A runs');
      return completion({ content: 'A done', usage: usage(30, 5) });
    }),
    route('B', () => ({ status: 401, headers: [], body: '{"error":{"message":"bad key","code":"invalid_api_key"}}' })),
    route('C', () => completion({ content: 'C done', usage: usage(40, 6) })),
  ]);
  const tasks = [
    { assignee: 'analyst', taskDescription: 'TASK-A: sizes', role: 'code-review' },
    { assignee: 'analyst', taskDescription: 'TASK-B: prices' },
    { assignee: 'analyst', taskDescription: 'TASK-C: dates', role: 'document', context: 'dates are ISO' },
  ];
  return { model, tasks };
}

test('iso_7_decomposed_tasks_keep_input_order_with_one_failing_sibling', async () => {
  const { model, tasks } = decomposedScenario();
  const runtime = new native.AgentRuntime(analystConfig(), model.transport, new native.ToolRegistry());
  const running = runtime.runDecomposed(tasks, 3);
  // It takes the run slot at once, like run().
  await assert.rejects(runtime.run('same tick'), (e) => e.code === 'run_in_progress');
  const results = await running;

  assert.deepEqual(model.problems, []);
  assert.equal(results.length, 3);
  assert.ok(results.every((r) => r instanceof native.DecomposedResult));
  assert.deepEqual(results.map((r) => [r.content, r.isError, r.errorCode, r.status]), [
    ['A done', false, undefined, 'completed'],
    [results[1].content, true, 'llm_auth', 'failed'],
    ['C done', false, undefined, 'completed'],
  ]);
  assert.ok(!results[1].content.includes('bad key'), 'only the code reaches the parent');
  assert.deepEqual([results[0].childUsage.totalTokens, results[0].childUsage.callCount], [35, 1]);
  assert.deepEqual([results[2].childUsage.totalTokens, results[2].childUsage.callCount], [46, 1]);
  const ids = results.map((r) => r.childSessionId);
  assert.equal(new Set(ids).size, 3, 'every task had its own child session');
  assert.ok(ids.every((id) => typeof id === 'string' && id !== runtime.sessionId));
  assert.equal(JSON.parse(results[0].metadataJson).role, 'code-review');
  // The context given is used instead of the condensed parent view.
  assert.match(lastUserText(model.byRoute.C[0]), /dates are ISO/);
  // Children are not part of the parent's history or usages; their cost is in totalUsage().
  assert.deepEqual(JSON.parse(runtime.historyJson()), []);
  assert.deepEqual(runtime.usages(), []);
  assert.equal(runtime.totalUsage().children.totalTokens, 35 + 46);

  // maxConcurrency defaults to 3 (capped by the policy's 2); a task for an unknown worker
  // fails alone, before any child starts.
  const second = decomposedScenario();
  const runtime2 = new native.AgentRuntime(analystConfig(), second.model.transport, new native.ToolRegistry());
  const mixed = await runtime2.runDecomposed([second.tasks[0], second.tasks[1], { assignee: 'ghost', taskDescription: 'x' }]);
  assert.deepEqual(second.model.problems, []);
  assert.deepEqual(mixed.map((r) => r.errorCode), [undefined, 'llm_auth', 'subagent_unknown_assignee']);
  assert.equal(mixed[2].status, undefined);
  assert.equal(mixed[2].childUsage, undefined);
  assert.equal(mixed[2].childSessionId, undefined);

  // Without workers or clone there is nothing to delegate to.
  const plain = new native.AgentRuntime(runtimeConfig(), second.model.transport, new native.ToolRegistry());
  await assert.rejects(plain.runDecomposed(tasks), (e) => e.code === 'delegation_not_configured');
  assert.throws(() => runtime.runDecomposed(tasks, -1), (e) => e.code === 'invalid_argument');
});

test('iso_4_registry_shows_completed_children_with_roles', async () => {
  const { model, tasks } = decomposedScenario();
  const runtime = new native.AgentRuntime(analystConfig(), model.transport, new native.ToolRegistry());
  const before = runtime.subAgents();
  // Plain records now (no classes): exactly the declared fields.
  assert.deepEqual(Object.keys(before).sort(), ['active', 'history', 'stats']);
  assert.deepEqual([before.active.length, before.history.length, before.stats.completedCount], [0, 0, 0]);
  await runtime.runDecomposed(tasks);
  assert.deepEqual(model.problems, []);

  const view = runtime.subAgents();
  assert.equal(view.active.length, 0);
  assert.equal(view.history.length, 3);
  const byTask = (tag) => view.history.find((c) => c.task.startsWith(`TASK-${tag}`));
  const [a, b, c] = ['A', 'B', 'C'].map(byTask);
  assert.deepEqual(Object.keys(a).sort(), ['allowedTools', 'assignee', 'endedAtMs', 'id', 'maxIterations', 'messages', 'parentId',
    'result', 'role', 'startedAtMs', 'status', 'task']);
  assert.deepEqual([a.role, b.role, c.role], ['code-review', 'general', 'document']);
  assert.deepEqual([a.status, b.status, c.status], ['completed', 'failed', 'completed']);
  assert.deepEqual([a.result.errorCode, b.result.errorCode, c.result.errorCode], [null, 'llm_auth', null]);
  assert.deepEqual([a.result.summary, c.result.summary], ['A done', 'C done']);
  assert.deepEqual([a.result.tokenCount, c.result.tokenCount], [35, 46]);
  for (const child of [a, b, c]) {
    assert.equal(child.parentId, runtime.sessionId);
    assert.equal(child.assignee, 'analyst');
    assert.deepEqual(child.result.toolsUsed, []);
    assert.equal(child.result.forcedReason, null);
    assert.equal(typeof child.startedAtMs, 'number');
    assert.ok(child.endedAtMs >= child.startedAtMs);
    assert.ok(child.maxIterations > 0);
    assert.ok(Array.isArray(child.messages) && child.messages.length >= 1, 'the child kept its own messages');
    const json = JSON.parse(JSON.stringify(child));
    assert.equal(json.id, child.id);
    assert.ok(Array.isArray(json.messages) && json.messages.length >= 1, 'the child kept its own messages');
  }
  assert.deepEqual(a.allowedTools, ['read_file', 'search_files', 'list_dir']);
  assert.equal(b.allowedTools, null, 'general: every tool');
  const stats = view.stats;
  assert.deepEqual(Object.keys(stats).sort(), ['active', 'completedCount', 'history', 'totalTokens', 'usage']);
  assert.deepEqual([stats.active, stats.history, stats.completedCount], [0, 3, 3]);
  assert.equal(stats.totalTokens, a.result.tokenCount + b.result.tokenCount + c.result.tokenCount);
  // Records come only from the module: no constructor is exported for them.
  assert.equal(native.SubAgentContext, undefined);

  // Each runtime has its own registry, even from one config object.
  const config = analystConfig();
  const one = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const two = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  assert.equal(one.subAgents().history.length, 0);
  assert.equal(two.subAgents().history.length, 0);
  // No delegation: an empty view.
  assert.equal(new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry()).subAgents().stats.history, 0);
});

test('iso_2_role_whitelist_hides_a_tool_from_the_child', async () => {
  const calls = { read_file: 0, write_file: 0 };
  const tools = new native.ToolRegistry();
  for (const name of Object.keys(calls)) {
    tools.register(new native.ToolDefinition(name, name, '{"type":"object"}'), async () => {
      calls[name] += 1;
      return { content: `${name} ok` };
    });
  }
  const config = analystConfig((c) => {
    c.setRoleWhitelist('reader', ['read_file']);
    c.setRoleWhitelist('anything', null);
    c.setRoleWhitelist('absent'); // "null or absent: every tool"
  });
  assert.deepEqual(config.roleWhitelist('reader'), ['read_file']);
  assert.equal(config.roleWhitelist('anything'), null);
  assert.equal(config.roleWhitelist('absent'), null);
  assert.equal(config.roleWhitelist('general'), null);
  assert.deepEqual(config.roleWhitelist('code-review'), ['read_file', 'search_files', 'list_dir']);
  assert.throws(() => config.roleWhitelist('nope'), (e) => e.code === 'subagent_unknown_role');
  for (const role of ['reader', 'anything', 'general', 'code-review', 'code-generation', 'data-analysis', 'document', 'testing']) {
    assert.ok(config.roles().includes(role), role);
  }

  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [
        (body) => {
          const delegate = body.tools.find((t) => t.function.name === 'delegate_task');
          assert.ok(delegate.function.parameters.properties.role.enum.includes('reader'));
          assert.deepEqual(offeredTools(body).sort(), ['delegate_task', 'read_file', 'write_file']);
          return completion({
            toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'analyst', task_description: 'Read it', role: 'reader' } }],
          });
        },
        () => completion({ content: 'done' }),
      ],
    },
    {
      name: 'analyst',
      match: isAnalyst,
      turns: [
        (body) => {
          assert.deepEqual(offeredTools(body), ['read_file'], 'the child sees only its role\'s tools');
          // The model calls the hidden tool anyway, and the allowed one.
          return completion({
            toolCalls: [
              { id: 'w1', name: 'write_file', arguments: {} },
              { id: 'r1', name: 'read_file', arguments: {} },
            ],
          });
        },
        (body) => {
          const answer = (id) => body.messages.find((m) => m.role === 'tool' && m.tool_call_id === id).content;
          assert.match(answer('w1'), /tool_not_allowed/);
          assert.equal(answer('r1'), 'read_file ok');
          return completion({ content: 'read it' });
        },
      ],
    },
  ]);
  const runtime = new native.AgentRuntime(config, model.transport, tools);
  const result = await runtime.run('Delegate the reading');
  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'done');
  assert.deepEqual(calls, { read_file: 1, write_file: 0 });
  const [child] = runtime.subAgents().history;
  assert.equal(child.role, 'reader');
  assert.deepEqual(child.allowedTools, ['read_file']);
  assert.deepEqual(child.result.toolsUsed, ['write_file', 'read_file']);
});

test('iso_4_close_sub_agents_force_completes_running_children', async () => {
  const childGate = deferred();
  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [
        () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'analyst', task_description: 'Slow work' } }] }),
        (body) => {
          const answer = body.messages.find((m) => m.role === 'tool' && m.tool_call_id === 'd1').content;
          // SUB-8: the answer names the ending the record holds (closeSubAgents: session-closed).
          assert.equal(JSON.parse(answer).error.code, 'session-closed');
          return completion({ content: 'closed' });
        },
      ],
    },
    {
      name: 'analyst',
      match: isAnalyst,
      turns: [async () => { await childGate.promise; return completion({ content: 'too late' }); }],
    },
  ]);
  const runtime = new native.AgentRuntime(analystConfig(), model.transport, new native.ToolRegistry());
  assert.equal(runtime.closeSubAgents(), 0);
  const running = runtime.run('Start the slow work');
  await waitFor(() => model.byRoute.analyst.length === 1, 'the child is waiting for its model');

  const children = runtime.activeChildren();
  assert.equal(children.length, 1);
  const [active] = runtime.subAgents().active;
  assert.deepEqual([active.id, active.status, active.role, active.result], [children[0], 'active', 'general', null]);
  assert.equal(active.endedAtMs, null);

  assert.equal(runtime.closeSubAgents(), 1);
  const result = await running;
  childGate.resolve();
  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'closed');
  assert.deepEqual(runtime.activeChildren(), []);
  const [closed] = runtime.subAgents().history;
  assert.deepEqual([closed.id, closed.status, closed.result.forcedReason], [children[0], 'completed', 'session-closed']);
  assert.equal(runtime.closeSubAgents(), 0);
});

test('mem_4_working_memory_is_per_runtime_namespace_and_tier', () => {
  const transport = async () => ({ status: 500 });
  const runtime = new native.AgentRuntime(runtimeConfig(), transport, new native.ToolRegistry());
  assert.equal(runtime.memoryRecall('working', 'plan'), undefined);
  runtime.memoryStore('working', 'plan', '{"step":1,"note":"计划"}');
  assert.deepEqual(JSON.parse(runtime.memoryRecall('working', 'plan')), { step: 1, note: '计划' });
  assert.equal(runtime.memoryRecall('short_term', 'plan'), undefined, 'tiers are separate');
  runtime.memoryStore('short_term', 'plan', '"a fact"');
  runtime.memoryStore('working', 'plan', '{"step":2}');
  assert.equal(runtime.memoryRecall('short_term', 'plan'), '"a fact"');
  assert.deepEqual(JSON.parse(runtime.memoryRecall('working', 'plan')), { step: 2 });
  assert.throws(() => runtime.memoryStore('long_term', 'x', '1'), (e) => e.code === 'invalid_argument');
  assert.throws(() => runtime.memoryRecall('Working', 'x'), (e) => e.code === 'invalid_argument');
  assert.throws(() => runtime.memoryStore('working', 'x', '{oops'), (e) => e.code === 'invalid_json');
  // Another runtime (its own config, so its own store) sees nothing.
  const other = new native.AgentRuntime(runtimeConfig(), transport, new native.ToolRegistry());
  assert.equal(other.memoryRecall('working', 'plan'), undefined);
});
