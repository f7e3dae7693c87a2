'use strict';
// SUB (delegation) through the N-API surface (NAPI-2): SubAgentPolicy, SubAgentDefinition
// with a JS factory configuring a WorkerConfig, registerSubAgent, sub_agent events,
// totalUsage() and ChildUsageSummary, against a routed scripted model that serves the
// parent and its workers and checks every request.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, API_KEY, MODEL, completion, pairingProblems, RoutedModel, runtimeConfig, systemPrompt, lastUserText,
  offeredTools, waitFor,
} = require('./support');

const WORKER_PROMPT = 'You are the researcher.';
const NOTES_SCHEMA = '{"type":"object","properties":{"text":{"type":"string"}}}';
const DELEGATE_SCHEMA = '{"type":"object","properties":{"assignee":{"type":"string"},"task_description":{"type":"string"}}}';

const isParent = (body) => offeredTools(body).includes('delegate_task');
const isResearcher = (body) => systemPrompt(body) === WORKER_PROMPT;

/** A factory that makes the researcher: its own prompt and a `notes` tool. */
function researcherFactory(calls = []) {
  return (worker) => {
    calls.push(worker);
    worker.systemPrompt = WORKER_PROMPT;
    worker.maxIterations = 4;
    worker.tools.register(new native.ToolDefinition('notes', 'Takes notes', NOTES_SCHEMA), async () => ({ content: 'noted' }));
  };
}

function delegatingConfig(factory = researcherFactory(), { policy } = {}) {
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('researcher', 'Finds facts', factory));
  if (policy) config.subAgentPolicy = policy;
  return config;
}

/** The parent's first turn: delegate `task` to `assignee`. */
function delegateTurn(task, { assignee = 'researcher', id = 'call_delegate', usage, role } = {}) {
  const args = { assignee, task_description: task };
  if (role) args.role = role;
  return () => completion({ toolCalls: [{ id, name: 'delegate_task', arguments: args }], usage });
}

/** The tool message answering `callId`, from a request body (wire shape: no is_error). */
function toolMessage(body, callId) {
  return body.messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
}

async function runAndCollect(runtime, input) {
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run(input);
  await waitFor(() => events.some((e) => e.type === 'run_finished' && e.runId === result.runId), 'run_finished');
  return { result, events };
}

const subAgentPayloads = (events) => events.filter((e) => e.type === 'sub_agent').map((e) => JSON.parse(e.payloadJson));

test('sub_2_definition_create_trims_and_refuses_empty_reserved_and_duplicate_names', () => {
  const factory = () => {};
  const def = native.SubAgentDefinition.create('  researcher  ', 'Finds facts', factory);
  assert.ok(def instanceof native.SubAgentDefinition);
  assert.equal(def.name, 'researcher');
  assert.equal(def.description, 'Finds facts');
  for (const empty of ['', '   ']) {
    assert.throws(() => native.SubAgentDefinition.create(empty, 'x', factory), (e) => e.code === 'subagent_name_empty');
  }
  for (const reserved of ['clone', 'Clone', ' CLONE ']) {
    assert.throws(() => native.SubAgentDefinition.create(reserved, 'x', factory), (e) => e.code === 'subagent_name_reserved');
  }
  assert.throws(() => native.SubAgentDefinition.create('w', 'x', 'not a function'), (e) => typeof e.code === 'string');
  assert.throws(() => new native.SubAgentDefinition(), 'instances come from create()');

  const config = runtimeConfig();
  assert.deepEqual(config.subAgentNames(), []);
  config.registerSubAgent(def);
  assert.throws(() => config.registerSubAgent(native.SubAgentDefinition.create('researcher', 'again', factory)),
    (e) => e.code === 'subagent_name_duplicate');
  assert.throws(() => config.registerSubAgent(new native.ToolRegistry()), (e) => typeof e.code === 'string', 'wrong class refused');
  assert.deepEqual(config.subAgentNames(), ['researcher']);
  assert.equal(config.allowClone, false);
  config.allowClone = true;
  assert.equal(config.allowClone, true);
  assert.equal(config.childTokenBudget, undefined);
  config.childTokenBudget = 5000;
  assert.equal(config.childTokenBudget, 5000);
  assert.throws(() => { config.childTokenBudget = -1; }, (e) => e.code === 'invalid_config');
  config.childTokenBudget = undefined;
  assert.equal(config.childTokenBudget, undefined);
});

test('sub_3_policy_defaults_validation_and_the_run_budget', async () => {
  const defaults = new native.SubAgentPolicy();
  assert.deepEqual(
    [defaults.maxDepth, defaults.maxDelegationsPerRun, defaults.maxConcurrentChildren, defaults.parentContextMessageCount],
    [1, 4, 2, 10],
  );
  const custom = new native.SubAgentPolicy(1, 1, 3, 0);
  assert.deepEqual([custom.maxDelegationsPerRun, custom.maxConcurrentChildren, custom.parentContextMessageCount], [1, 3, 0]);
  for (const bad of [-1, 0.5, Number.NaN]) {
    assert.throws(() => new native.SubAgentPolicy(bad), (e) => e.code === 'invalid_config');
    assert.throws(() => { custom.maxConcurrentChildren = bad; }, (e) => e.code === 'invalid_config');
  }
  const config = runtimeConfig();
  assert.equal(config.subAgentPolicy.maxDelegationsPerRun, 4);
  config.subAgentPolicy = custom;
  custom.maxDelegationsPerRun = 9;
  assert.equal(config.subAgentPolicy.maxDelegationsPerRun, 1, 'the config keeps a copy');
  assert.throws(() => { config.subAgentPolicy = new native.ToolRegistry(); }, (e) => typeof e.code === 'string');
  const zero = runtimeConfig();
  zero.subAgentPolicy = new native.SubAgentPolicy(1, 4, 0);
  assert.throws(() => new native.AgentRuntime(zero, async () => ({ status: 500 }), new native.ToolRegistry()),
    (e) => e.code === 'invalid_config');

  // One delegation per run: of two in one turn exactly one runs, and a third call in the
  // same run is refused by the budget before its assignee is even looked at.
  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [
        () => completion({
          toolCalls: [
            { id: 'd1', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'first' } },
            { id: 'd2', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'second' } },
          ],
        }),
        () => completion({ toolCalls: [{ id: 'd3', name: 'delegate_task', arguments: { assignee: 'ghost', task_description: 'x' } }] }),
        () => completion({ content: 'done' }),
        // The next run has a fresh budget: now the unknown worker is what refuses it.
        () => completion({ toolCalls: [{ id: 'd4', name: 'delegate_task', arguments: { assignee: 'ghost', task_description: 'x' } }] }),
        () => completion({ content: 'done again' }),
      ],
    },
    { name: 'researcher', match: isResearcher, turns: [() => completion({ content: 'found it' })] },
  ]);
  const runtime = new native.AgentRuntime(delegatingConfig(undefined, { policy: new native.SubAgentPolicy(1, 1) }), model.transport,
    new native.ToolRegistry());
  const { result, events } = await runAndCollect(runtime, 'go');
  assert.equal(result.finalText, 'done');
  assert.equal((await runtime.run('again')).finalText, 'done again');
  await waitFor(() => events.filter((e) => e.type === 'run_finished').length === 2, 'both runs finished');
  assert.deepEqual(model.problems, []);
  const codes = new Map(events.filter((e) => e.type === 'tool_call_finished').map((e) => JSON.parse(e.payloadJson))
    .map((p) => [p.callId, p.errorCode]));
  assert.deepEqual([codes.get('d1'), codes.get('d2')].sort(), [null, 'subagent_run_budget_exceeded']);
  assert.equal(codes.get('d3'), 'subagent_run_budget_exceeded');
  assert.equal(codes.get('d4'), 'subagent_unknown_assignee');
  assert.equal(model.byRoute.researcher.length, 1);
});

test('sub_4_malicious_js_factory_cannot_give_a_worker_delegate_task', async () => {
  let maliciousCalls = 0;
  let factoryCalls = 0;
  let registeredInFactory = false;
  const factory = (worker) => {
    factoryCalls += 1;
    assert.equal(worker.name, 'researcher');
    assert.ok(worker instanceof native.WorkerConfig);
    worker.systemPrompt = WORKER_PROMPT;
    worker.tools.register(new native.ToolDefinition('delegate_task', 'Sneaky', DELEGATE_SCHEMA), async () => {
      maliciousCalls += 1;
      return { content: 'the worker delegated' };
    });
    worker.tools.register(new native.ToolDefinition('notes', 'Takes notes', NOTES_SCHEMA), async () => ({ content: 'noted' }));
    registeredInFactory = worker.tools.has('delegate_task');
  };
  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [
        delegateTurn('Research the topic'),
        (body) => {
          assert.equal(toolMessage(body, 'call_delegate').content, 'child finished');
          return completion({ content: 'all done' });
        },
      ],
    },
    {
      name: 'researcher',
      match: isResearcher,
      turns: [
        (body) => {
          assert.deepEqual(offeredTools(body), ['notes'], 'the worker is never shown delegate_task');
          // The model calls it anyway.
          return completion({ toolCalls: [{ id: 'w1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'recurse' } }] });
        },
        (body) => {
          assert.match(toolMessage(body, 'w1').content, /subagent_worker_cannot_delegate/);
          return completion({ content: 'child finished' });
        },
      ],
    },
  ]);
  const config = delegatingConfig(factory);
  config.allowClone = true;
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const { result, events } = await runAndCollect(runtime, 'Please research');

  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'all done');
  assert.equal(factoryCalls, 1);
  assert.equal(registeredInFactory, true, 'the factory could register it');
  assert.equal(maliciousCalls, 0, 'the malicious executor never ran');
  const childFinished = subAgentPayloads(events).map((p) => p.event).filter((e) => e.type === 'tool_call_finished');
  assert.deepEqual(childFinished.map((e) => [e.name, e.errorCode]), [['delegate_task', 'subagent_worker_cannot_delegate']]);
  assert.deepEqual(pairingProblems(JSON.parse(runtime.historyJson())), []);
});

test('sub_7_child_events_reach_js_listeners_with_every_correlation_field', async () => {
  const model = new RoutedModel([
    { name: 'parent', match: isParent, turns: [delegateTurn('Research X'), () => completion({ content: 'ok' })] },
    {
      name: 'researcher',
      match: isResearcher,
      turns: [
        () => completion({ toolCalls: [{ id: 'n1', name: 'notes', arguments: { text: 'x' } }] }),
        () => completion({ content: 'X is 42' }),
      ],
    },
  ]);
  const runtime = new native.AgentRuntime(delegatingConfig(), model.transport, new native.ToolRegistry());
  const { result, events } = await runAndCollect(runtime, 'Find X');
  assert.deepEqual(model.problems, []);
  await waitFor(() => subAgentPayloads(events).some((p) => p.event.type === 'run_finished'), 'the child run_finished');

  const bridged = events.filter((e) => e.type === 'sub_agent');
  assert.ok(bridged.length >= 6, `${bridged.length} child events`);
  const childIds = new Set();
  for (const e of bridged) {
    assert.equal(e.sessionId, runtime.sessionId);
    assert.equal(e.runId, result.runId);
    const p = JSON.parse(e.payloadJson);
    assert.equal(p.type, 'sub_agent');
    assert.equal(p.parentSessionId, runtime.sessionId);
    assert.equal(p.parentRunId, result.runId);
    assert.equal(typeof p.childSessionId, 'string');
    assert.notEqual(p.childSessionId, runtime.sessionId);
    assert.equal(typeof p.childRunId, 'string');
    assert.ok(p.childRunId.length > 0);
    assert.equal(p.assignee, 'researcher');
    assert.equal(p.taskDescription, 'Research X');
    assert.equal(p.depth, 1);
    assert.equal(p.event.sessionId, p.childSessionId);
    assert.equal(p.event.runId, p.childRunId);
    childIds.add(p.childSessionId);
  }
  assert.equal(childIds.size, 1);
  const childTypes = bridged.map((e) => JSON.parse(e.payloadJson).event.type);
  assert.deepEqual(childTypes.filter((t) => t !== 'text_delta'), [
    'run_started', 'model_request', 'model_response', 'tool_call_started', 'tool_call_finished',
    'model_request', 'model_response', 'run_finished',
  ]);
  // The bridged events sit inside the parent's delegate_task call.
  const types = events.map((e) => e.type);
  assert.ok(types.indexOf('tool_call_started') < types.indexOf('sub_agent'));
  assert.ok(types.lastIndexOf('sub_agent') < types.lastIndexOf('tool_call_finished'));
});

test('sub_8_child_provider_error_with_the_api_key_reaches_the_parent_only_as_a_code', async () => {
  const RAW = 'RAW-PROVIDER-DETAIL';
  const leakyBody = JSON.stringify({ error: { message: `${RAW}: Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error', code: API_KEY } });
  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [
        delegateTurn('Research X'),
        (body) => {
          assert.match(toolMessage(body, 'call_delegate').content, /llm_auth/);
          return completion({ content: 'the worker failed' });
        },
      ],
    },
    { name: 'researcher', match: isResearcher, turns: [() => ({ status: 401, headers: [], body: leakyBody })] },
  ]);
  const runtime = new native.AgentRuntime(delegatingConfig(), model.transport, new native.ToolRegistry());
  const { result, events } = await runAndCollect(runtime, 'Find X');
  assert.deepEqual(model.problems, []);
  assert.equal(result.finalText, 'the worker failed');
  await waitFor(() => subAgentPayloads(events).some((p) => p.event.type === 'run_finished'), 'the child run_finished');

  const finished = events.filter((e) => e.type === 'tool_call_finished').map((e) => JSON.parse(e.payloadJson));
  assert.equal(finished.length, 1);
  assert.equal(finished[0].errorCode, 'llm_auth');
  const childEnd = subAgentPayloads(events).map((p) => p.event).find((e) => e.type === 'run_finished');
  assert.deepEqual([childEnd.status, childEnd.errorCode], ['failed', 'llm_auth']);
  for (const [what, text] of [
    ['history', runtime.historyJson()],
    ['exported state', runtime.exportState()],
    ['events', events.map((e) => e.payloadJson).join('\n')],
    ['registry', runtime.subAgents().history.map((c) => JSON.stringify(c)).join('\n')],
  ]) {
    assert.ok(!text.includes(API_KEY), `no API key in the ${what}`);
    assert.ok(!text.includes(RAW), `no raw provider text in the ${what}`);
  }
  const [child] = runtime.subAgents().history;
  assert.deepEqual([child.status, child.result.errorCode], ['failed', 'llm_auth']);
});

test('sub_6_total_usage_counts_parent_and_children_once', async () => {
  const u = (p, c) => ({ prompt_tokens: p, completion_tokens: c, total_tokens: p + c });
  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [delegateTurn('Research X', { usage: u(10, 2) }), () => completion({ content: 'ok', usage: u(20, 3) })],
    },
    {
      name: 'researcher',
      match: isResearcher,
      turns: [
        () => completion({ toolCalls: [{ id: 'n1', name: 'notes', arguments: {} }], usage: u(5, 1) }),
        () => completion({ content: 'X', usage: u(7, 1) }),
      ],
    },
  ]);
  const runtime = new native.AgentRuntime(delegatingConfig(), model.transport, new native.ToolRegistry());
  const empty = runtime.totalUsage();
  assert.deepEqual(Object.keys(empty).sort(), ['children', 'discarded', 'parent', 'total'], 'a plain UsageTotals record');
  assert.equal(empty.discarded.callCount, 0, 'CHAT-3: nothing discarded');
  assert.equal(empty.total.callCount, 0);
  const { events } = await runAndCollect(runtime, 'Find X');
  assert.deepEqual(model.problems, []);

  const summary = (s) => [s.promptTokens, s.completionTokens, s.totalTokens, s.callCount];
  const totals = runtime.totalUsage();
  assert.equal(Object.getPrototypeOf(totals.parent), Object.prototype, 'a plain ChildUsageSummary record');
  assert.deepEqual(summary(totals.parent), [30, 5, 35, 2]);
  assert.deepEqual(summary(totals.children), [12, 2, 14, 2]);
  assert.deepEqual(summary(totals.total), [42, 7, 49, 4]);
  assert.deepEqual(runtime.usages().map((x) => x.totalTokens), [12, 23], 'child usage is never in the parent usages');
  const [delegated] = events.filter((e) => e.type === 'tool_call_finished').map((e) => JSON.parse(e.payloadJson));
  // COST-1: cached and reasoning tokens are in every sum (none reported here; no price).
  assert.deepEqual(delegated.metadata.child_usage, {
    prompt_tokens: 12, completion_tokens: 2, total_tokens: 14, cached_tokens: 0, reasoning_tokens: 0, call_count: 2, priced_call_count: 0,
  });
  // Records come only from the module: no constructor is exported for them.
  assert.equal(native.ChildUsageSummary, undefined);
});

test('sub_2_async_factory_configures_the_worker_and_a_throwing_factory_fails_the_delegation', async () => {
  const seen = [];
  const asyncFactory = async (worker) => {
    seen.push([worker.systemPrompt, worker.maxIterations, worker.model.model, worker.tools.names()]);
    await new Promise((r) => setTimeout(r, 10));
    worker.systemPrompt = WORKER_PROMPT;
    const model = worker.model;
    model.model = 'worker-model';
    worker.model = model;
    worker.maxParallelTools = 1;
    worker.tools.unregister('parent_tool');
  };
  const parentTools = new native.ToolRegistry();
  parentTools.register(new native.ToolDefinition('parent_tool', 'Only for the parent', '{"type":"object"}'), async () => ({ content: '' }));
  const config = runtimeConfig({ systemPrompt: 'Parent prompt.' });
  config.maxIterations = 7;
  config.registerSubAgent(native.SubAgentDefinition.create('researcher', 'Finds facts', asyncFactory));
  config.registerSubAgent(native.SubAgentDefinition.create('broken', 'Always fails', () => { throw new Error('factory bug'); }));
  config.registerSubAgent(native.SubAgentDefinition.create('rejecting', 'Always rejects', async () => { throw new Error('async bug'); }));
  const model = new RoutedModel([
    {
      name: 'parent',
      match: isParent,
      turns: [
        () => completion({
          toolCalls: [
            { id: 'ok', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'T' } },
            { id: 'bad', name: 'delegate_task', arguments: { assignee: 'broken', task_description: 'T' } },
          ],
        }),
        () => completion({ toolCalls: [{ id: 'rej', name: 'delegate_task', arguments: { assignee: 'rejecting', task_description: 'T' } }] }),
        () => completion({ content: 'done' }),
      ],
    },
    {
      name: 'researcher',
      match: isResearcher,
      model: 'worker-model',
      turns: [(body) => {
        assert.deepEqual(offeredTools(body), [], 'the factory removed the parent tool');
        return completion({ content: 'researched' });
      }],
    },
  ]);
  const runtime = new native.AgentRuntime(config, model.transport, parentTools);
  const { events } = await runAndCollect(runtime, 'go');
  assert.deepEqual(model.problems, []);
  assert.deepEqual(seen, [['Parent prompt.', 7, MODEL, ['parent_tool']]], 'the worker starts as the parent');
  const codes = Object.fromEntries(events.filter((e) => e.type === 'tool_call_finished')
    .map((e) => JSON.parse(e.payloadJson)).map((p) => [p.callId, p.errorCode]));
  assert.deepEqual(codes, { ok: null, bad: 'subagent_factory_failed', rej: 'subagent_factory_failed' });
});

test('sub_1 cmp_1 a named worker has a custom compressor only when its factory gives it one; a clone inherits the parent\'s', async () => {
  const skip = () => native.CompressOutcome.skipped('below_threshold').toJson();
  const asked = { parent: [], own: [] };
  const handed = [];
  const config = runtimeConfig();
  config.allowClone = true;
  // Threshold 0: every compressor a runtime has is asked on every attempt.
  config.setCustomCompressor(async (stateJson) => { asked.parent.push(stateJson); return skip(); }, 0);
  config.registerSubAgent(native.SubAgentDefinition.create('plain', 'keeps what it is handed', (worker) => {
    handed.push(worker.hasCustomCompressor);
  }));
  config.registerSubAgent(native.SubAgentDefinition.create('own', 'brings its own compressor', (worker) => {
    handed.push(worker.hasCustomCompressor);
    assert.throws(() => worker.setCustomCompressor(async () => skip(), -1), (e) => e.code === 'invalid_argument');
    worker.setCustomCompressor(async (stateJson) => { asked.own.push(stateJson); return skip(); }, 0);
    handed.push(worker.hasCustomCompressor);
  }));
  const model = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      delegateTurn('task of plain', { assignee: 'plain', id: 'd1' }),
      delegateTurn('task of own', { assignee: 'own', id: 'd2' }),
      delegateTurn('task of the clone', { assignee: 'clone', id: 'd3' }),
      () => completion({ content: 'root done' }),
    ] },
    { name: 'child', match: (body) => !isParent(body), turns: [0, 1, 2].map(() => () => completion({ content: 'child done' })) },
  ]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const result = await runtime.run('start');
  assert.equal(result.finalText, 'root done');
  assert.deepEqual(model.problems, []);
  assert.deepEqual(handed, [false, false, true], 'a factory is handed a worker without the parent\'s custom compressor');
  const about = (states, task) => states.filter((s) => s.includes(`"content":"${task}"`)).length;
  assert.equal(about(asked.parent, 'task of plain'), 0, 'a named worker does not inherit the parent\'s custom compressor');
  assert.ok(about(asked.own, 'task of own') > 0, 'a named worker\'s own compressor is asked with its state');
  assert.equal(about(asked.parent, 'task of own'), 0);
  assert.ok(about(asked.parent, 'task of the clone') > 0, 'a clone inherits the parent\'s');
  assert.equal(asked.own.length, about(asked.own, 'task of own'), 'the worker\'s own is asked by that worker only');
});
