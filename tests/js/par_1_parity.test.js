'use strict';
// PAR-1 (issue 17, items 10-13) through the N-API surface: the seed's helpers for custom
// compressors and a typed CompressContext / CompressOutcome; a custom compressor asked
// only when a compression is due and never sent the archive (PERF-3); the MemoryService
// and memory namespace every tool gets; namespace access; per-child forceComplete,
// registry cleanup, a typed SubAgentChildEvent and the seed's constants.

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, MODEL, completion, ScriptedModel, runtimeConfig, waitFor } = require('./support');

const usage = (prompt) => ({ prompt_tokens: prompt, completion_tokens: 2, total_tokens: prompt + 2 });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const call = (id) => ({ id, name: 't', arguments: '{}' });
const HISTORY = JSON.stringify([
  { role: 'user', content: 'a' },
  { role: 'assistant', tool_calls: [call('k1')] },
  { role: 'tool', tool_call_id: 'k1', content: 'ok' },
  { role: 'assistant', content: 'done' },
]);

test('par_1 the seed helpers for custom compressors: computeSafeSplitIndex, toolCallsPaired, validateEpisodicMemoryIds, allocateIsolatedSessionId', () => {
  assert.equal(native.computeSafeSplitIndex(HISTORY, 2), 1, 'keep 2 would cut the pair: the split moves before it');
  assert.equal(native.computeSafeSplitIndex(HISTORY, 1), 3);
  assert.equal(native.computeSafeSplitIndex(HISTORY, 4), -1, 'none: -1 as in the seed');
  assert.equal(native.toolCallsPaired(HISTORY), true);
  assert.equal(native.toolCallsPaired(JSON.stringify([{ role: 'assistant', tool_calls: [call('k1')] }])), false);
  assert.equal(native.toolCallsPaired(JSON.stringify([{ role: 'tool', tool_call_id: 'x', content: '' }])), false);
  assert.throws(() => native.toolCallsPaired('{'), (e) => e.code === 'invalid_json');

  const episode = (id) => ({ id, summary: 's', created_at_ms: 1, message_count: 1 });
  const ok = native.validateEpisodicMemoryIds(JSON.stringify([episode('a'), episode('b')]));
  assert.ok(ok instanceof native.EpisodeIdValidation);
  assert.deepEqual([ok.valid, ok.id], [true, undefined]);
  const repeated = native.validateEpisodicMemoryIds(JSON.stringify([episode('a'), episode('a')]));
  assert.deepEqual([repeated.valid, repeated.id], [false, 'a']);
  const blank = native.validateEpisodicMemoryIds(JSON.stringify([episode(' ')]));
  assert.deepEqual([blank.valid, blank.id], [false, ' ']);

  let n = 0;
  const next = () => String(n += 1);
  assert.equal(native.allocateIsolatedSessionId('p', ' mine ', ['p_w_1'], next), 'mine');
  assert.equal(n, 0, 'a free request draws no id');
  assert.equal(native.allocateIsolatedSessionId('p', 'p', ['p_w_1'], next), 'p_w_2', 'parent id refused, active candidate drawn again');
  assert.throws(() => native.allocateIsolatedSessionId('p', '', [], () => { throw new RangeError('no ids'); }),
    (e) => e.code === 'invalid_argument' && e.message.includes('no ids'), 'a throwing nextId: invalid_argument naming it');
  assert.throws(() => native.allocateIsolatedSessionId('p', '', [], () => 5), (e) => e.code === 'invalid_argument');
});

test('par_1 a custom compressor written with CompressContext, computeSafeSplitIndex and CompressOutcome commits', async () => {
  const contexts = [];
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson, contextJson) => {
    const context = native.CompressContext.parse(contextJson);
    contexts.push(context);
    const messages = JSON.parse(stateJson).history.messages;
    const split = native.computeSafeSplitIndex(JSON.stringify(messages), 2);
    if (split < 0) return native.CompressOutcome.skipped('no_safe_split').toJson();
    return native.CompressOutcome.compressed(split, 'typed summary', 'ep-typed', { promptTokens: 5, completionTokens: 1, totalTokens: 6 }).toJson();
  }, 1000);
  const runtime = new native.AgentRuntime(config, new ScriptedModel([]).transport, new native.ToolRegistry());
  runtime.importState(JSON.stringify({ version: 1, session_id: 'typed', history: { messages: JSON.parse(HISTORY), episodic_memories: [] }, usages: [] }));
  const result = await runtime.compressNow();
  assert.deepEqual([result.outcome, result.episodeId, result.messagesArchived], ['compressed', 'ep-typed', 1]);
  assert.equal(JSON.parse(runtime.historyJson()).length, 3);
  assert.equal(runtime.usages().at(-1).source, 'context_compression');
  assert.ok(contexts[0] instanceof native.CompressContext);
  assert.deepEqual([contexts[0].estimatedPromptTokens, contexts[0].force], [undefined, false]);
  assert.equal(native.CompressContext.parse('{"estimated_prompt_tokens":7,"force":true}').estimatedPromptTokens, 7);
  assert.throws(() => native.CompressContext.parse('{"force":"yes"}'), (e) => e.code === 'invalid_json');
  const skipped = native.CompressOutcome.skipped('below_threshold');
  assert.deepEqual([skipped.outcome, skipped.reason], ['skipped', 'below_threshold']);
  assert.deepEqual(JSON.parse(native.CompressOutcome.failed('llm_error', 'llm_auth').toJson()),
    { outcome: 'failed', reason: 'llm_error', split_index: null, summary: null, episode_id: null, usage: null, error_code: 'llm_auth' });
});

test('perf_3 a custom compressor is asked only when the threshold says a compression is due, and never gets the archive', async () => {
  const MARKER = 'ARCHIVED-ORIGINAL';
  const big = `${MARKER} ${'lorem ipsum dolor sit amet '.repeat(600)}`;
  const seen = [];
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson, contextJson) => {
    const index = seen.length;
    seen.push({ stateJson, contextJson, at: process.hrtime.bigint() });
    if (index === 0) return native.CompressOutcome.skipped('history_too_short').toJson();
    if (index === 1) {
      const n = JSON.parse(stateJson).history.messages.length;
      return native.CompressOutcome.compressed(n, 'a long text was discussed').toJson();
    }
    return native.CompressOutcome.skipped('below_threshold').toJson();
  }, 2000);
  const turns = Array.from({ length: 21 }, () => () => completion({ content: 'ok', usage: usage(40) }));
  const model = new ScriptedModel(turns);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  await runtime.run(big);
  assert.equal(seen.length, 2, 'asked before and after the turn that reached the threshold');
  assert.equal(runtime.listEpisodes().length, 1);
  for (let i = 0; i < 20; i += 1) await runtime.run(`short question ${i}`);
  assert.deepEqual(model.problems, []);
  assert.equal(seen.length, 2, '20 turns below the threshold ask nothing (it was asked twice a turn)');
  const result = await runtime.compressNow();
  assert.equal(result.outcome, 'skipped');
  assert.equal(seen.length, 3, 'compressNow() always asks');
  const { stateJson, contextJson } = seen[2];
  const exported = runtime.exportState();
  assert.ok(exported.includes(MARKER), 'the archive is in the state');
  assert.ok(!stateJson.includes(MARKER) && !stateJson.includes('archived_messages'), 'but not in what the compressor gets');
  assert.ok(exported.length - stateJson.length >= big.length, `${stateJson.length} vs ${exported.length} bytes`);
  const sent = JSON.parse(stateJson);
  assert.deepEqual(sent.history.messages, JSON.parse(exported).history.messages);
  assert.deepEqual(Object.keys(sent.history.episodic_memories[0]).sort(), ['created_at_ms', 'id', 'message_count', 'summary']);
  assert.deepEqual(JSON.parse(contextJson), { estimated_prompt_tokens: null, force: false });
  console.log(`perf_3: compressor state ${stateJson.length} B vs exported ${exported.length} B; 3 calls in 21 turns + compressNow`);
});

test('mem_1 mem_4 every JS tool gets the MemoryService and its runtime namespace in its context', async () => {
  const contexts = [];
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('recall', 'Recalls', '{"type":"object"}'), async (toolCall, context) => {
    contexts.push(context);
    const episodes = context.listEpisodes();
    const found = context.findEpisode('ep1');
    context.memory.store('working', 'note', '{"v":1}');
    return { content: `${episodes.length}:${found.summary}:${JSON.parse(found.archivedMessagesJson)[0].content}:${context.findEpisode('nope') === undefined}` };
  });
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'a', name: 'recall', arguments: {} }], usage: usage(10) }),
    () => completion({ content: 'ok', usage: usage(10) }),
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, tools);
  runtime.importState(JSON.stringify({
    version: 1,
    session_id: 'mem-ctx',
    history: { messages: [], episodic_memories: [{ id: 'ep1', summary: 'trip plan', created_at_ms: 1, message_count: 1, archived_messages: [{ role: 'user', content: 'Beijing in May' }] }] },
    usages: [],
  }));
  const result = await runtime.run('what was planned?');
  assert.equal(result.status, 'completed');
  assert.deepEqual(model.problems, []);
  const toolMessage = JSON.parse(runtime.historyJson()).find((m) => m.role === 'tool');
  assert.equal(toolMessage.content, '1:trip plan:Beijing in May:true');
  assert.ok(contexts[0] instanceof native.ToolContext);
  assert.equal(contexts[0].sessionId, 'mem-ctx');
  assert.equal(contexts[0].runId, result.runId);
  assert.equal(contexts[0].memory.namespace, 'global');
  // The runtime's namespace handle sees what the tool stored: ids, stats, forget.
  const memory = runtime.memory();
  assert.ok(memory instanceof native.MemoryNamespace);
  assert.equal(memory.recall('working', 'note'), '{"v":1}');
  memory.store('short_term', 'fact', '"x"');
  assert.deepEqual(memory.ids('working'), ['note']);
  const stats = memory.stats();
  assert.deepEqual([stats.working, stats.shortTerm], [1, 1]);
  assert.equal(memory.forget('working', 'note'), true);
  assert.equal(memory.forget('working', 'note'), false);
  assert.deepEqual(memory.ids('working'), []);
  assert.equal(runtime.memoryRecall('short_term', 'fact'), '"x"', 'the same namespace as memoryStore/memoryRecall');
  assert.throws(() => memory.ids('long_term'), (e) => e.code === 'invalid_argument');
});

test('iso_1 iso_4 sub_1 sub_7 par_1 forceCompleteSubAgent(id, reason), cleanupSubAgents(maxAgeMs), SubAgentChildEvent and the seed constants', async () => {
  assert.deepEqual([native.DELEGATE_TASK_TOOL_NAME, native.CLONE_ASSIGNEE, native.SUB_AGENT_SERVICE_ID],
    ['delegate_task', 'clone', 'arkagent.sub_agent']);
  let childInFlight = false;
  const model = new ScriptedModel([
    () => completion({
      toolCalls: [{ id: 'd1', name: native.DELEGATE_TASK_TOOL_NAME, arguments: { assignee: native.CLONE_ASSIGNEE, task_description: 'dig' } }],
      usage: usage(20),
    }),
    // The child's call: in flight until the library cancels it.
    (body, index, sink) => new Promise((resolve) => {
      childInFlight = true;
      sink.onCancel(() => resolve({ status: 500, body: '' }));
    }),
    () => completion({ content: 'the child was stopped', usage: usage(30) }),
  ]);
  const config = runtimeConfig();
  config.allowClone = true;
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const run = runtime.run('dig into it');
  await waitFor(() => childInFlight, 'the child is running');
  const [child] = runtime.activeChildren();
  assert.ok(child, 'a running child');
  // README, seed mapping: one registry per runtime tree, not a process singleton — another
  // runtime neither lists nor force-completes nor cleans up this one's child.
  const otherConfig = runtimeConfig();
  otherConfig.allowClone = true;
  const other = new native.AgentRuntime(otherConfig, new ScriptedModel([]).transport, new native.ToolRegistry());
  assert.deepEqual([other.activeChildren().length, other.subAgents().active.length, other.subAgents().stats.active], [0, 0, 0]);
  assert.equal(other.forceCompleteSubAgent(child, 'not yours'), false);
  assert.equal(other.cleanupSubAgents(0), 0);
  assert.deepEqual(runtime.activeChildren(), [child], 'still running');
  assert.throws(() => runtime.forceCompleteSubAgent(child, ' '), (e) => e.code === 'invalid_argument');
  assert.equal(runtime.forceCompleteSubAgent('nobody', 'user-stopped'), false);
  assert.equal(runtime.forceCompleteSubAgent(child, 'user-stopped'), true);
  const result = await run;
  assert.equal(result.status, 'completed');
  await waitFor(() => events.some((e) => e.type === 'run_finished' && e.runId === result.runId), 'run_finished');
  assert.deepEqual(model.problems, []);
  assert.equal(runtime.forceCompleteSubAgent(child, 'user-stopped'), false, 'no longer running');
  const [record] = runtime.subAgents().history;
  assert.deepEqual([record.id, record.result.forcedReason, runtime.activeChildren().length], [child, 'user-stopped', 0]);
  assert.ok(model.requests[0].body.tools.some((t) => t.function.name === native.DELEGATE_TASK_TOOL_NAME));
  const finished = events.find((e) => e.type === 'tool_call_finished' && e.runId === result.runId);
  assert.equal(JSON.parse(finished.payloadJson).metadata.service, native.SUB_AGENT_SERVICE_ID);
  // A typed view of the child's events.
  const typed = events.map((e) => native.SubAgentChildEvent.from(e)).filter((e) => e !== undefined);
  assert.ok(typed.length > 0, 'sub_agent events');
  assert.equal(events.filter((e) => e.type === 'sub_agent').length, typed.length, 'every sub_agent event, and only those');
  for (const e of typed) {
    assert.ok(e instanceof native.SubAgentChildEvent);
    assert.deepEqual([e.parentSessionId, e.parentRunId, e.childSessionId, e.assignee, e.taskDescription, e.depth],
      [runtime.sessionId, result.runId, child, native.CLONE_ASSIGNEE, 'dig', 1]);
    assert.equal(e.event.sessionId, child);
    assert.equal(e.event.runId, e.childRunId);
    assert.equal(typeof JSON.parse(e.event.payloadJson).type, 'string');
  }
  assert.equal(typed[0].event.type, 'run_started');
  // ISO-4 cleanup(maxAgeMs).
  assert.equal(runtime.cleanupSubAgents(3600000), 0, 'nothing an hour old');
  await sleep(5);
  assert.equal(runtime.cleanupSubAgents(0), 1, 'the ended child is dropped');
  assert.equal(runtime.subAgents().history.length, 0);
});

// ------------------------------------------------------------------ issue 28

const skippedAnswer = () => native.CompressOutcome.skipped('below_threshold').toJson();

test('cmp_1 a custom compressor threshold of 0 asks on every automatic attempt, an absent one is 64000 (the rule of C and Rust too)', async () => {
  for (const [threshold, asked] of [[0, 2], [undefined, 0], [64000, 0]]) {
    let calls = 0;
    const config = runtimeConfig();
    config.setCustomCompressor(async () => { calls += 1; return skippedAnswer(); }, threshold);
    const model = new ScriptedModel([() => completion({ content: 'ok', usage: usage(40) })]);
    const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
    await runtime.run('hello');
    assert.deepEqual(model.problems, []);
    assert.equal(calls, asked, `threshold ${threshold}: asked before the first model call and after the turn, or never`);
  }
});

test('cmp_7 with threshold 0 a custom compressor is still not asked right after its own compression', async () => {
  const states = [];
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson) => {
    states.push(stateJson);
    if (states.length > 1) return skippedAnswer();
    const n = JSON.parse(stateJson).history.messages.length;
    return native.CompressOutcome.compressed(n, 's', undefined, { promptTokens: 5, completionTokens: 1, totalTokens: 6 }).toJson();
  }, 0);
  const model = new ScriptedModel([() => completion({ content: 'ok', usage: usage(40) })]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  runtime.importState(JSON.stringify({ version: 1, session_id: 'guard', usages: [usage(12)], history: { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }] } }));
  assert.equal((await runtime.compressNow()).outcome, 'compressed');
  await runtime.run('next');
  assert.deepEqual(model.problems, []);
  assert.equal(states.length, 2, 'compressNow(), then only the attempt after the turn');
  assert.ok(states[1].includes('"content":"next"'));
});

const FULL_STATE = {
  version: 1,
  session_id: 'full',
  usages: [{ prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 }],
  history: {
    messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }],
    episodic_memories: [{ id: 'ep1', summary: 'earlier', created_at_ms: 7, message_count: 1, archived_messages: [{ role: 'user', content: 'ARCHIVED' }] }],
  },
  child_usages: [{ call_id: 'd1', child_session_id: 'full_w_1', assignee: 'clone', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4, call_count: 1 } }],
  token_calibration: { [MODEL]: { ascii: 0.5, cjk: 1, other: 1, observations: 1 } },
};

test('cmp_1 a custom compressor gets exactly exportState() without the archived_messages (token_calibration included)', async () => {
  const states = [];
  const config = runtimeConfig();
  config.setCustomCompressor(async (stateJson) => { states.push(stateJson); return skippedAnswer(); });
  const runtime = new native.AgentRuntime(config, new ScriptedModel([]).transport, new native.ToolRegistry());
  runtime.importState(JSON.stringify(FULL_STATE));
  await runtime.compressNow();
  const exported = JSON.parse(runtime.exportState());
  assert.ok(exported.token_calibration[MODEL] && exported.child_usages.length === 1, runtime.exportState());
  for (const episode of exported.history.episodic_memories) delete episode.archived_messages;
  assert.equal(states.length, 1);
  assert.deepEqual(JSON.parse(states[0]), exported);
});

test('par_1 mem_2 RETRIEVE_MEMORY_TOOL_NAME, DEFAULT_MEMORY_LIMIT and MAX_MEMORY_LIMIT name what retrieve_memory does', async () => {
  assert.deepEqual([native.RETRIEVE_MEMORY_TOOL_NAME, native.DEFAULT_MEMORY_LIMIT, native.MAX_MEMORY_LIMIT], ['retrieve_memory', 20, 100]);
  const archived = Array.from({ length: 25 }, (_, i) => ({ role: 'user', content: `m${i}` }));
  const read = (id, limit) => ({ id, name: native.RETRIEVE_MEMORY_TOOL_NAME, arguments: limit === undefined ? { snapshot_id: 'ep1' } : { snapshot_id: 'ep1', limit } });
  const model = new ScriptedModel([
    () => completion({ toolCalls: [read('t1'), read('t2', native.MAX_MEMORY_LIMIT), read('t3', native.MAX_MEMORY_LIMIT + 1)], usage: usage(20) }),
    () => completion({ content: 'read', usage: usage(30) }),
  ]);
  const config = runtimeConfig();
  config.contextCompressor = new native.ContextCompressor();
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  runtime.importState(JSON.stringify({ version: 1, session_id: 'mem', usages: [], history: { messages: [], episodic_memories: [{ id: 'ep1', summary: 's', created_at_ms: 1, message_count: 25, archived_messages: archived }] } }));
  await runtime.run('what was said?');
  assert.deepEqual(model.problems, []);
  const tool = model.requests[0].body.tools.find((t) => t.function.name === native.RETRIEVE_MEMORY_TOOL_NAME);
  assert.ok(tool, 'offered by that name');
  assert.equal(tool.function.parameters.properties.limit.maximum, native.MAX_MEMORY_LIMIT);
  const results = Object.fromEntries(JSON.parse(runtime.historyJson()).filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, JSON.parse(m.content)]));
  assert.deepEqual([results.t1.messages.length, results.t1.next_offset], [native.DEFAULT_MEMORY_LIMIT, native.DEFAULT_MEMORY_LIMIT], 'no limit: a page of DEFAULT_MEMORY_LIMIT');
  assert.deepEqual([results.t2.messages.length, results.t2.next_offset], [25, null], 'MAX_MEMORY_LIMIT is accepted');
  assert.equal(results.t3.error.code, 'invalid_limit', 'MAX_MEMORY_LIMIT + 1 is refused');
});

test('par_1 iso_3 summarizeResult(content) (the seed\'s SubAgentContext.summarize) is the three-level summary', () => {
  assert.equal(native.summarizeResult('short'), 'short', '≤ 500 characters: as is');
  const x = 'x'.repeat(600);
  assert.equal(native.summarizeResult(`${x}\n## Summary\n结论：可行。\n## Details\nmore`), '## Summary\n结论：可行。');
  assert.equal(native.summarizeResult(`${x}\n## Result\nok\n`), '## Result\nok', 'else the ## Result section');
  assert.equal(native.summarizeResult('字'.repeat(600)), `${'字'.repeat(500)}[truncated, 600 chars]`, 'else 500 characters, never cut inside one');
  assert.equal(native.summarizeResult('😀'.repeat(501)), `${'😀'.repeat(500)}[truncated, 501 chars]`, 'characters are code points');
  assert.throws(() => native.summarizeResult(5), (e) => e.code === 'invalid_argument');
});
