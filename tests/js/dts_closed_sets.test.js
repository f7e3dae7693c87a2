'use strict';
// ARCH-2 / STYLE rule 15 / issue 28 item 10: every string the module hands over from a
// closed set is typed in index.d.ts by a union generated from its Rust enum
// (scripts/closed-sets prints the enums' strings, scripts/gen-dts.js writes the unions).
// These tests compare the committed unions with the enums both ways, hold the docs that
// list such strings to them, check that every event type has its payload interface, and
// check the values and payloads the module really hands to JS against the declarations.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const {
  native, completion, sseEvent, textStream, snapshot, ScriptedModel, RoutedModel, modelConfig, runtimeConfig,
  offeredTools, waitFor,
} = require('./support');
const { tinyMcpAnswer } = require('./mcp_servers');

const ROOT = path.join(__dirname, '..', '..');
const gen = require(path.join(ROOT, 'scripts', 'gen-dts.js'));
const sig = require(path.join(ROOT, 'scripts', 'dts-signatures.js'));

const DTS_TEXT = fs.readFileSync(path.join(ROOT, gen.DTS), 'utf8');
const SETS = gen.closedSets();
const UNIONS = gen.declaredUnions(DTS_TEXT);
const DECLARATIONS = sig.dtsDeclarations(DTS_TEXT);
const setNamed = (name) => SETS.find((s) => s.name === name);

test('ARCH-2 the closed sets come from the Rust enums (the printer sees them all)', () => {
  // Guards the printer: a broken probe must not make every comparison vacuous.
  // (A new set — ChildEnding, WireFormat — is one more line in scripts/closed-sets/main.rs;
  // the tests below then cover it without change.)
  for (const name of ['ErrorCode', 'EventType', 'CompressOutcomeKind', 'CompressReason', 'CompressionTrigger',
    'PromptSizeSource', 'RunStatus']) {
    assert.ok(SETS.some((s) => s.name === name), `scripts/closed-sets prints ${name}`);
  }
  assert.equal(setNamed('ErrorCode').values.length, 47 + 5, 'the 47 codes of arkagent::ErrorCode and the module\'s 5');
  assert.equal(setNamed('EventType').values.length, 16);
  assert.ok(setNamed('CompressReason').values.includes('compressor_error'));
  assert.deepEqual(setNamed('CompressOutcomeKind').values, ['skipped', 'compressed', 'failed']);
  for (const s of SETS) assert.match(s.source, /`arkagent::/, `${s.name} names its enum`);
});

for (const { name } of SETS) {
  test(`ARCH-2 the ${name} union of index.d.ts equals its Rust enum, value for value`, () => {
    const set = setNamed(name);
    assert.ok(UNIONS.has(name), `index.d.ts declares the union ${name}`);
    assert.deepEqual(UNIONS.get(name), set.values);
    assert.deepEqual(gen.closedSetProblems([set], DTS_TEXT), []);
    // Its doc says where the values come from.
    const doc = new RegExp(`/\\*\\*((?:(?!\\*/)[\\s\\S])*)\\*/\\nexport type ${name} =`).exec(DTS_TEXT);
    const text = doc ? doc[1].replace(/\s*\n\s*\*\s*/g, ' ') : '';
    assert.ok(text.includes(`Generated from the Rust ${set.source}`), `${name}'s doc names ${set.source}: ${text}`);
  });
}

test('ARCH-2 a union that drifts from its enum is reported both ways', () => {
  const set = setNamed('CompressReason');
  const withoutOne = DTS_TEXT.replace("  | 'compressor_error';", ';').replace("  | 'invalid_split_index';", "  | 'invalid_split_index'");
  assert.notEqual(withoutOne, DTS_TEXT);
  assert.deepEqual(gen.closedSetProblems([set], withoutOne),
    [`CompressReason: 'compressor_error' (a variant of the Rust ${set.source}) is missing`]);
  const withExtra = DTS_TEXT.replace("  | 'compressor_error';", "  | 'compressor_error'\n  | 'made_up';");
  assert.deepEqual(gen.closedSetProblems([set], withExtra),
    [`CompressReason: 'made_up' is no variant of the Rust ${set.source}`]);
  // And the generator writes a new variant at once: the committed file is then stale.
  const grown = SETS.map((s) => (s.name === 'EventType' ? { ...s, values: [...s.values, 'new_event'] } : s));
  const regenerated = gen.generate(undefined, grown);
  assert.ok(regenerated.includes("  | 'new_event';"));
  assert.notEqual(regenerated, DTS_TEXT);
});

test('ARCH-2 (28.10) CompressResult.reason is a CompressReason, and that union names every reason, compressor_error included', () => {
  const result = DECLARATIONS.get('CompressResult');
  assert.ok(result && result.kind === 'interface', 'CompressResult is declared (generated)');
  assert.equal(result.members.get('reason').type, 'CompressReason');
  const body = /export interface CompressResult \{([\s\S]*?)\n\}/.exec(DTS_TEXT)[1];
  assert.match(body, /\*\/\n  reason: CompressReason;/, 'CompressResult.reason is documented');
  assert.deepEqual(UNIONS.get('CompressReason'), setNamed('CompressReason').values);
  assert.ok(UNIONS.get('CompressReason').includes('compressor_error'));
});

/** The members of an interface of the d.ts, inherited ones included. */
function membersOf(name) {
  const d = DECLARATIONS.get(name);
  assert.ok(d, `index.d.ts declares ${name}`);
  const inherited = d.extends ? membersOf(d.extends) : new Map();
  return new Map([...inherited, ...d.members]);
}

/** The payload interface of each event type: the one interface whose `type` is that literal. */
function payloadInterfaces() {
  const byType = new Map();
  for (const d of DECLARATIONS.values()) {
    const type = d.kind === 'interface' && d.members.get('type');
    const literal = type && /^'([a-z_]+)'$/.exec(type.type);
    if (!literal) continue;
    assert.ok(!byType.has(literal[1]), `one payload interface for "${literal[1]}"`);
    assert.equal(d.extends, 'EventPayload', `${d.name} extends EventPayload`);
    byType.set(literal[1], d.name);
  }
  return byType;
}

test('ARCH-2 every event type has a typed payload interface, and every payload interface an event type', () => {
  const byType = payloadInterfaces();
  assert.deepEqual([...byType.keys()].sort(), [...setNamed('EventType').values].sort());
  assert.equal(membersOf('EventPayload').get('type').type, 'EventType');
  assert.equal(membersOf('AgentEvent').get('type').type, 'EventType');
  assert.equal(membersOf('CompressionPayload').get('reason').type, 'CompressReason');
  assert.equal(membersOf('RunFinishedPayload').get('errorCode').type, 'ErrorCode | null');
});

/**
 * Whether a JSON value fits a declared type: string/number/boolean/null, a string literal,
 * a closed-set union, `T[]`, `Object` (any JSON value), an interface (every key declared,
 * every required member present, recursively), or a union of these. Returns the problems.
 */
function fits(value, type, where) {
  const options = type.split(' | ');
  const results = options.map((t) => fitsOne(value, t.trim(), where));
  return results.some((r) => r.length === 0) ? [] : [`${where}: ${JSON.stringify(value)} is no ${type}`, ...results.flat()];
}

function fitsOne(value, type, where) {
  if (type === 'string' || type === 'number' || type === 'boolean') return typeof value === type ? [] : ['type'];
  if (type === 'null') return value === null ? [] : ['null'];
  if (type === 'Object') return value !== null && value !== undefined ? [] : ['Object'];
  if (/^'.*'$/.test(type)) return value === type.slice(1, -1) ? [] : ['literal'];
  if (UNIONS.has(type)) return UNIONS.get(type).includes(value) ? [] : [`not in ${type}`];
  if (type.endsWith('[]')) return Array.isArray(value) ? value.flatMap((v, i) => fits(v, type.slice(0, -2), `${where}[${i}]`)) : ['array'];
  if (DECLARATIONS.has(type)) return fitsInterface(value, type, where);
  return [`${where}: unknown declared type ${type}`];
}

function fitsInterface(value, name, where) {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [`${where}: not an object`];
  const members = membersOf(name);
  const problems = [];
  for (const key of Object.keys(value)) {
    if (!members.has(key)) problems.push(`${where}.${key}: not declared in ${name}`);
  }
  for (const m of members.values()) {
    if (!(m.name in value)) {
      if (!m.optional) problems.push(`${where}.${m.name}: declared in ${name}, missing`);
    } else {
      problems.push(...fits(value[m.name], m.type, `${where}.${m.name}`));
    }
  }
  return problems;
}

const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];
const USAGE = { prompt_tokens: 40, completion_tokens: 6, total_tokens: 46 };

/** Writes SSE chunks to the sink, then ends it. */
function streamed(chunks) {
  return (body, index, sink) => {
    setImmediate(() => {
      for (const c of chunks) sink.write(c);
      sink.end();
    });
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
}

/** A streamed turn: reasoning, then a call of `echo` written in two deltas. */
const reasoningAndToolCall = streamed([
  sseEvent({ choices: [{ index: 0, delta: { role: 'assistant', reasoning_content: 'Thinking.' }, finish_reason: null }] }),
  sseEvent({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'echo', arguments: '' } }] }, finish_reason: null }] }),
  sseEvent({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"x":1}' } }] }, finish_reason: null }] }),
  sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }),
  sseEvent({ choices: [], usage: USAGE }),
  sseEvent('[DONE]'),
]);

/**
 * Events of every type, from two runtimes: one streaming, with a tool, a SessionStore
 * and a compressor (compressNow afterwards); one delegating to a worker.
 */
async function eventsOfEveryType() {
  const events = [];
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('echo', 'Echoes', '{"type":"object"}'),
    async (call) => ({ content: call.argumentsJson }));
  const model = new ScriptedModel([reasoningAndToolCall, streamed(textStream(['Do', 'ne'], USAGE))], {
    tools: ['echo'],
    summarizer: () => completion({ content: snapshot(), usage: { prompt_tokens: 30, completion_tokens: 20, total_tokens: 50 } }),
  });
  const streaming = modelConfig();
  streaming.stream = true;
  // Priced (COST-2): its usages carry a cost and its run_finished costs; the delegating
  // runtime below has no price, so both shapes are seen.
  streaming.price = { currency: 'USD', inputPerMillion: 0.27, cachedInputPerMillion: 0.07, outputPerMillion: 1.1 };
  const compressor = new native.ContextCompressor(10, 1, undefined, 1);
  compressor.summarizerMaxInputTokens = 100000;
  compressor.summarizerModel = modelConfig();
  const config = runtimeConfig({ model: streaming });
  config.contextCompressor = compressor;
  const runtime = new native.AgentRuntime(config, model.transport, registry, native.SessionStore.openMemory());
  runtime.subscribe((e) => events.push(e));
  await runtime.run(`Use echo on this: ${'long text '.repeat(400)}`);
  await runtime.compressNow();
  assert.deepEqual(model.problems, []);

  const worker = native.SubAgentDefinition.create('researcher', 'Finds facts', (w) => { w.systemPrompt = 'You research.'; });
  const parentConfig = runtimeConfig();
  parentConfig.registerSubAgent(worker);
  const isParent = (body) => offeredTools(body).includes('delegate_task');
  const routed = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'Find it.' } }], usage: USAGE }),
      () => completion({ content: 'Found.', usage: USAGE }),
    ] },
    { name: 'worker', match: (body) => !isParent(body), turns: [() => completion({ content: 'It is here.', usage: USAGE })] },
  ]);
  const parent = new native.AgentRuntime(parentConfig, routed.transport, new native.ToolRegistry());
  parent.subscribe((e) => events.push(e));
  await parent.run('Delegate.');
  assert.deepEqual(routed.problems, []);
  // TOOL-1: a call that waits for approval.
  const asking = new native.ToolRegistry();
  const pay = new native.ToolDefinition('pay', 'Pays', '{"type":"object"}');
  pay.requiresApproval = true;
  asking.register(pay, async () => ({ content: 'paid' }));
  const approvalModel = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'p1', name: 'pay', arguments: {} }], usage: USAGE }),
  ], { tools: ['pay'] });
  const paused = new native.AgentRuntime(runtimeConfig(), approvalModel.transport, asking);
  paused.subscribe((e) => events.push(e));
  const pausedRun = await paused.run('Pay.');
  assert.equal(pausedRun.status, 'awaiting_approval');
  assert.deepEqual(approvalModel.problems, []);
  // CHAT-1: a rewind.
  await paused.rewind(pausedRun.runId);
  // MCP-3: a server that answers (connected) and one that cannot be reached (failed).
  const mcpConfig = runtimeConfig();
  mcpConfig.addMcpServer({ name: 'up', url: 'https://up.example.test/mcp' });
  mcpConfig.addMcpServer({ name: 'down', url: 'https://down.example.test/mcp' });
  const mcpModel = new ScriptedModel([() => completion({ content: 'ok', usage: USAGE })], { tools: ['up__echo'] });
  const mcpTransport = async (request, sink) => {
    if (request.url.startsWith('https://down.')) throw new Error('connection refused');
    return request.url.startsWith('https://up.') ? tinyMcpAnswer(request) : mcpModel.transport(request, sink);
  };
  const withMcp = new native.AgentRuntime(mcpConfig, mcpTransport, new native.ToolRegistry());
  withMcp.subscribe((e) => events.push(e));
  await withMcp.run('Hi.');
  assert.deepEqual(mcpModel.problems, []);
  await waitFor(() => events.filter((e) => e.type === 'run_finished').length >= 4, 'every run finished');
  return events;
}

test('ARCH-2 every event payload the module emits fits the payload interface of its type', async () => {
  const events = await eventsOfEveryType();
  const byType = payloadInterfaces();
  const seen = new Set(events.map((e) => e.type));
  // The scenario covers every event type of the Rust enum: a new one fails here until it does.
  assert.deepEqual([...setNamed('EventType').values].filter((t) => !seen.has(t)), [], 'event types never emitted');
  const problems = [];
  for (const e of events) {
    problems.push(...fitsInterface(e, 'AgentEvent', `event ${e.seq}`));
    const payload = JSON.parse(e.payloadJson);
    assert.equal(payload.type, e.type);
    if (e.type !== 'sub_agent') {
      problems.push(...fitsInterface(payload, byType.get(e.type), `${e.type} #${e.seq}`));
    } else {
      const { sessionId, runId, seq: childSeq, atMs, type: childType } = payload.event;
      const correlation = { sessionId, runId, seq: childSeq, atMs, type: childType };
      problems.push(...fitsInterface({ ...payload, event: correlation }, byType.get(e.type), `${e.type} #${e.seq}`));
      // The child's own event: its correlation fields and type (its other fields are
      // those of its own type's payload).
      const { sessionId: s, runId: r, seq, atMs: at, ...own } = payload.event;
      problems.push(...fitsInterface(own, byType.get(own.type), `${e.type}.event (${own.type})`));
    }
  }
  assert.deepEqual(problems, []);
  // Optional and nullable members were seen both ways where the scenario allows.
  const payloads = (type) => events.filter((e) => e.type === type).map((e) => JSON.parse(e.payloadJson));
  assert.ok(payloads('tool_call_delta').some((p) => p.name === null) && payloads('tool_call_delta').some((p) => p.name === 'echo'));
  assert.ok(payloads('model_response').every((p) => p.usage !== null));
  assert.ok(payloads('model_response').some((p) => p.usage.cost) && payloads('model_response').some((p) => !p.usage.cost));
  assert.ok(payloads('run_finished').some((p) => p.usage.costs) && payloads('run_finished').some((p) => !p.usage.costs));
  assert.ok(payloads('compression').some((p) => p.outcome === 'compressed' && p.usage.source === 'context_compression'));
  assert.ok(payloads('mcp_server').some((p) => p.errorCode === null) && payloads('mcp_server').some((p) => p.errorCode === 'mcp_unreachable'));
});

test('ARCH-2 the planted payload check fails on a payload that does not fit', () => {
  const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0, callCount: 1, pricedCallCount: 0 };
  const good = { type: 'run_finished', status: 'completed', iterations: 1, errorCode: null, usage };
  assert.deepEqual(fitsInterface(good, 'RunFinishedPayload', 'p'), []);
  assert.notDeepEqual(fitsInterface({ ...good, status: 'done' }, 'RunFinishedPayload', 'p'), []);
  assert.notDeepEqual(fitsInterface({ ...good, errorCode: 'no_such_code' }, 'RunFinishedPayload', 'p'), []);
  assert.notDeepEqual(fitsInterface({ ...good, extra: 1 }, 'RunFinishedPayload', 'p'), []);
  const { iterations, ...missing } = good;
  assert.notDeepEqual(fitsInterface(missing, 'RunFinishedPayload', 'p'), []);
  assert.notDeepEqual(fitsInterface({ ...good, usage: { ...usage, costs: [{ currency: 'USD' }] } }, 'RunFinishedPayload', 'p'), []);
  // The snake_case keys the events had before BND-2 fit no more.
  assert.notDeepEqual(fitsInterface({ type: 'run_finished', status: 'completed', iterations: 1, error_code: null, usage }, 'RunFinishedPayload', 'p'), []);
});

test('NAPI-2 the strings the module hands to JS are those of the declared unions', async () => {
  const model = new ScriptedModel([() => completion({ content: 'ok', usage: USAGE })], {
    summarizer: () => completion({ content: 'no snapshot', usage: USAGE }),
  });
  const compressor = new native.ContextCompressor(10, 1, undefined, 1);
  compressor.summarizerMaxInputTokens = 100000;
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  const result = await runtime.run('hi');
  assert.ok(UNIONS.get('RunStatus').includes(result.status), `RunResult.status ${result.status}`);
  const compressed = await runtime.compressNow();
  assert.ok(UNIONS.get('CompressOutcomeKind').includes(compressed.outcome), compressed.outcome);
  assert.ok(UNIONS.get('CompressReason').includes(compressed.reason), compressed.reason);
  const answer = native.CompressOutcome.skipped();
  assert.ok(UNIONS.get('CompressOutcomeKind').includes(answer.outcome));
  // skipped(reason?): "default "below_threshold""; failed(reason?): "default "llm_error"".
  assert.equal(answer.reason, 'below_threshold');
  assert.equal(JSON.parse(answer.toJson()).reason, 'below_threshold');
  assert.equal(native.CompressOutcome.failed().reason, 'llm_error');
  assert.equal(native.CompressOutcome.skipped('no_safe_split').reason, 'no_safe_split');
});

test('NAPI-2 the code of every Error the module throws or rejects with is an ErrorCode (NativeError.code)', async () => {
  const codes = [];
  const record = (e) => {
    assert.ok(e instanceof Error, 'an Error');
    codes.push(e.code);
  };
  const attempt = async (fn) => {
    try {
      await fn();
      assert.fail('expected a throw');
    } catch (e) {
      record(e);
    }
  };
  const config = runtimeConfig();
  const denied = new native.AgentRuntime(config, async () => ({ status: 401, body: '{"error":{"message":"no"}}' }), new native.ToolRegistry());
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('t', 'T', '{"type":"object"}'), async () => ({ content: '' }));
  await attempt(() => new native.DecomposedResult());
  await attempt(() => native.ToolRegistry());
  await attempt(() => new native.ModelConfig(1, 2, 3));
  await attempt(() => denied.run(5));
  await attempt(() => denied.importState('{'));
  await attempt(() => config.roleWhitelist('no-such-role'));
  await attempt(() => native.SubAgentDefinition.create('clone', 'x', () => {}));
  await attempt(() => registry.register(new native.ToolDefinition('t', 'T', '{"type":"object"}'), async () => ({ content: '' })));
  await attempt(() => denied.run('hi'));
  const pending = denied.run('again').then(() => assert.fail('expected a rejection'), (e) => e);
  await attempt(() => denied.run('while running'));
  record(await pending);
  assert.deepEqual(codes, ['private_constructor', 'invalid_call', 'invalid_config', 'invalid_argument', 'invalid_json',
    'subagent_unknown_role', 'subagent_name_reserved', 'tool_name_duplicate', 'llm_auth', 'run_in_progress', 'llm_auth']);
  for (const code of codes) assert.ok(UNIONS.get('ErrorCode').includes(code), `${code} is an ErrorCode`);
  assert.equal(DECLARATIONS.get('NativeError').members.get('code').type, 'ErrorCode');
});

test('ARCH-2 NAPI-2 sub-agent statuses and endings are strings of the declared unions (SubAgentStatus, ChildStatus, ChildEnding)', async () => {
  const config = runtimeConfig();
  config.allowClone = true;
  let started = false;
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('wait', 'Waits', '{"type":"object"}'), async () => {
    started = true;
    await new Promise(() => {}); // until the library stops awaiting it
  });
  // Task A: the clone answers; task B: the clone calls `wait`, and closeSubAgents() ends it.
  const isB = (body) => JSON.stringify(body.messages).includes('task B');
  const routed = new RoutedModel([
    { name: 'A', match: (body) => !isB(body), turns: [() => completion({ content: 'A done.', usage: USAGE })] },
    { name: 'B', match: isB, turns: [() => completion({ toolCalls: [{ id: 'w1', name: 'wait', arguments: {} }], usage: USAGE })] },
  ]);
  const runtime = new native.AgentRuntime(config, routed.transport, tools);
  const job = runtime.runDecomposed([{ assignee: 'clone', taskDescription: 'task A' }, { assignee: 'clone', taskDescription: 'task B' }], 2);
  await waitFor(() => started, 'the clone of task B waits in its tool');
  assert.ok(runtime.subAgents().active.every((c) => UNIONS.get('SubAgentStatus').includes(c.status) && c.status === 'active'));
  runtime.closeSubAgents();
  const results = await job;
  assert.deepEqual(routed.problems, []);
  assert.deepEqual(results.map((r) => r.status), ['completed', 'forced']);
  assert.ok(results.every((r) => UNIONS.get('ChildStatus').includes(r.status)), 'DecomposedResult.status');
  const { history } = runtime.subAgents();
  assert.deepEqual(history.map((c) => c.status).sort(), ['completed', 'completed']);
  assert.ok(history.every((c) => UNIONS.get('SubAgentStatus').includes(c.status)), 'SubAgentContext.status');
  const forced = history.find((c) => c.result.forcedReason !== null);
  assert.equal(forced.result.forcedReason, 'session-closed');
  assert.ok(UNIONS.get('ChildEnding').includes(forced.result.forcedReason), 'a library forcedReason is a ChildEnding');
  assert.deepEqual(SETS.find((s) => s.name === 'ChildStatus').values, ['completed', 'forced', 'failed']);
});
