'use strict';
// NAPI-2 acceptance: the N-API classes driven from JS against a scripted
// OpenAI-compatible model (the JS transport) that checks every request it receives.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, API_KEY, completion, pairingProblems, ScriptedModel, runtimeConfig, waitFor, deferred,
} = require('./support');

const WEATHER_SCHEMA = JSON.stringify({
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
});

const USAGE_1 = {
  prompt_tokens: 120, completion_tokens: 30, total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 64 },
};
const USAGE_2 = {
  prompt_tokens: 210, completion_tokens: 18, total_tokens: 228,
  completion_tokens_details: { reasoning_tokens: 7 },
};

/** A weather tool whose two calls must overlap (parallel) before either answers. */
function weatherTool() {
  const calls = [];
  const bothStarted = deferred();
  const executor = async (call) => {
    calls.push(call);
    if (calls.length === 2) bothStarted.resolve();
    const timeout = new Promise((_, rej) => setTimeout(() => rej(new Error('second call never started in parallel')), 2000));
    await Promise.race([bothStarted.promise, timeout]);
    const { city } = JSON.parse(call.argumentsJson);
    return { content: JSON.stringify({ city, celsius: city === 'Beijing' ? 21 : 25 }) };
  };
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('get_weather', 'Current weather of a city', WEATHER_SCHEMA), executor);
  return { registry, calls };
}

function twoToolsThenAnswer() {
  return [
    (body) => {
      assert.equal(body.messages.at(-1).role, 'user');
      return completion({
        toolCalls: [
          { id: 'call_bj', name: 'get_weather', arguments: { city: 'Beijing' } },
          { id: 'call_sh', name: 'get_weather', arguments: { city: 'Shanghai' } },
        ],
        usage: USAGE_1,
      });
    },
    (body) => {
      const tail = body.messages.slice(-3);
      assert.deepEqual(tail.map((m) => m.role), ['assistant', 'tool', 'tool']);
      assert.deepEqual(tail.slice(1).map((m) => m.tool_call_id), ['call_bj', 'call_sh']);
      assert.deepEqual(JSON.parse(tail[1].content), { city: 'Beijing', celsius: 21 });
      assert.deepEqual(JSON.parse(tail[2].content), { city: 'Shanghai', celsius: 25 });
      return completion({ content: 'Beijing 21°C, Shanghai 25°C.', usage: USAGE_2 });
    },
  ];
}

test('napi_2_scripted_model_parallel_tools_history_usages_and_events', async () => {
  const model = new ScriptedModel(twoToolsThenAnswer(), { tools: ['get_weather'] });
  const { registry, calls } = weatherTool();
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry);
  const events = [];
  runtime.subscribe((e) => events.push(e));

  const result = await runtime.run('Weather in Beijing and Shanghai?');

  assert.deepEqual(model.problems, []);
  assert.equal(model.requests.length, 2);
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'Beijing 21°C, Shanghai 25°C.');
  assert.equal(result.iterations, 2);
  assert.equal(typeof result.runId, 'string');

  // The host tool ran twice, with the model's arguments.
  assert.deepEqual(calls.map((c) => [c.id, c.name, JSON.parse(c.argumentsJson)]), [
    ['call_bj', 'get_weather', { city: 'Beijing' }],
    ['call_sh', 'get_weather', { city: 'Shanghai' }],
  ]);

  // History: user, assistant with two calls, two results, final answer; paired.
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool', 'tool', 'assistant']);
  assert.deepEqual(pairingProblems(history), []);
  assert.equal(history[4].content, 'Beijing 21°C, Shanghai 25°C.');

  // Both usages, with cached and reasoning tokens.
  const usages = runtime.usages();
  assert.equal(usages.length, 2);
  assert.deepEqual(
    usages.map((u) => [u.promptTokens, u.completionTokens, u.totalTokens]),
    [[120, 30, 150], [210, 18, 228]],
  );
  assert.equal(usages[0].cachedTokens, 64);
  assert.equal(usages[1].reasoningTokens, 7);
  assert.equal(usages[0].reasoningTokens, undefined);
  assert.equal(usages[0].source, undefined);

  // Events (CORE-5): in order, one run, strictly increasing seq, JSON payloads.
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  assert.deepEqual(events.map((e) => e.type), [
    'run_started',
    'model_request', 'model_response',
    'tool_call_started', 'tool_call_started', 'tool_call_finished', 'tool_call_finished',
    'model_request', 'model_response', 'text_delta',
    'run_finished',
  ]);
  for (let i = 1; i < events.length; i += 1) assert.ok(events[i].seq > events[i - 1].seq, 'seq increases');
  for (const e of events) {
    assert.equal(e.runId, result.runId);
    assert.equal(e.sessionId, runtime.sessionId);
    const payload = JSON.parse(e.payloadJson);
    assert.equal(payload.type, e.type);
    assert.ok(!e.payloadJson.includes(API_KEY), 'no key in events (LLM-4)');
  }
  const finished = JSON.parse(events.at(-1).payloadJson);
  assert.equal(finished.status, 'completed');
});

test('core_6_export_state_import_into_new_runtime_continues_history', async () => {
  const first = new ScriptedModel(twoToolsThenAnswer(), { tools: ['get_weather'] });
  const runtime = new native.AgentRuntime(runtimeConfig(), first.transport, weatherTool().registry);
  await runtime.run('Weather in Beijing and Shanghai?');
  const exported = runtime.exportState();
  assert.ok(!exported.includes(API_KEY), 'exported state holds no key (LLM-4)');
  const state = JSON.parse(exported);
  assert.equal(state.session_id, runtime.sessionId);

  const second = new ScriptedModel([
    (body) => {
      // The resumed conversation is sent whole, then the new input.
      const roles = body.messages.map((m) => m.role);
      assert.deepEqual(roles, ['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'user']);
      assert.equal(body.messages.at(-1).content, 'And tomorrow?');
      return completion({ content: 'Similar.', usage: { prompt_tokens: 260, completion_tokens: 3, total_tokens: 263 } });
    },
  ], { tools: ['get_weather'] });
  const resumed = new native.AgentRuntime(runtimeConfig(), second.transport, weatherTool().registry);
  assert.notEqual(resumed.sessionId, runtime.sessionId);
  resumed.importState(exported);
  assert.equal(resumed.sessionId, runtime.sessionId);
  assert.equal(resumed.historyJson(), runtime.historyJson());

  const result = await resumed.run('And tomorrow?');
  assert.deepEqual(second.problems, []);
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'Similar.');
  const history = JSON.parse(resumed.historyJson());
  assert.equal(history.length, 7);
  assert.deepEqual(pairingProblems(history), []);
  assert.deepEqual(resumed.usages().map((u) => u.totalTokens), [150, 228, 263]);
});

test('core_4_cancel_while_tool_in_flight_resolves_cancelled_with_paired_history', async () => {
  const toolStarted = deferred();
  const toolGate = deferred();
  let toolSettledAfterCancel = false;
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('slow', 'Never finishes in time', '{"type":"object"}'), async () => {
    toolStarted.resolve();
    await toolGate.promise;
    toolSettledAfterCancel = true;
    return { content: 'too late' };
  });
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }], usage: USAGE_1 }),
  ], { tools: ['slow'] });
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry);
  const events = [];
  runtime.subscribe((e) => events.push(e));

  const running = runtime.run('Do the slow thing');
  await toolStarted.promise;
  runtime.cancel();
  const result = await running;

  assert.equal(result.status, 'cancelled');
  assert.equal(toolSettledAfterCancel, false, 'the tool promise was still pending at cancel');
  assert.equal(model.requests.length, 1, 'no model call after cancel');
  assert.deepEqual(model.problems, []);
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.deepEqual(pairingProblems(history), []);
  assert.equal(history[2].tool_call_id, 'call_slow');
  assert.equal(history[2].is_error, true);

  // The late tool answer changes nothing.
  toolGate.resolve();
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(toolSettledAfterCancel, true);
  assert.equal(runtime.historyJson(), JSON.stringify(history));

  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  const finished = events.filter((e) => e.type === 'tool_call_finished').map((e) => JSON.parse(e.payloadJson));
  assert.equal(finished.length, 1);
  assert.equal(finished[0].errorCode, 'cancelled');
  assert.equal(JSON.parse(events.at(-1).payloadJson).status, 'cancelled');

  // The runtime is usable again after a cancelled run.
  assert.doesNotThrow(() => runtime.exportState());
});

test('napi_2_errors_carry_code_invalid_json_and_invalid_state', () => {
  const model = new ScriptedModel([]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  assert.throws(() => runtime.importState('{not json'), (e) => e instanceof Error && e.code === 'invalid_json');
  const unpaired = JSON.stringify({
    version: 1,
    session_id: 's-1',
    history: {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', tool_calls: [{ id: 'c1', name: 'x', arguments: '{}' }] },
      ],
      episodic_memories: [],
    },
    usages: [],
  });
  assert.throws(() => runtime.importState(unpaired), (e) => e.code === 'invalid_state');
  // A failed import leaves the state alone.
  assert.deepEqual(JSON.parse(runtime.historyJson()), []);
});

test('napi_2_run_while_running_rejects_with_run_in_progress', async () => {
  const gate = deferred();
  const model = new ScriptedModel([async () => { await gate.promise; return completion({ content: 'done' }); }]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  const first = runtime.run('one');
  // Refused at once: the first run holds the slot from the moment run() returned.
  await assert.rejects(runtime.run('two'), (e) => e instanceof Error && e.code === 'run_in_progress');
  await waitFor(() => model.requests.length === 1, 'first request');
  await assert.rejects(runtime.run('three'), (e) => e instanceof Error && e.code === 'run_in_progress');
  assert.throws(() => runtime.importState(runtime.exportState()), (e) => e.code === 'run_in_progress');
  gate.resolve();
  const result = await first;
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'done');
  assert.equal(JSON.parse(runtime.historyJson()).length, 2, 'the rejected run left no trace');
});

test('llm_1_transport_rejection_surfaces_as_coded_error', async () => {
  let calls = 0;
  const rejecting = async () => {
    calls += 1;
    const e = new Error('connection reset by peer');
    e.code = 'ECONNRESET';
    throw e;
  };
  const runtime = new native.AgentRuntime(runtimeConfig(), rejecting, new native.ToolRegistry());
  await assert.rejects(runtime.run('hello'), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'llm_transport');
    assert.match(e.message, /connection reset by peer/);
    return true;
  });
  assert.ok(calls >= 1);
  // The first model call failed, so the input is taken out again (index.d.ts, run()).
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), []);

  // A rejection whose code is "timeout" is a timeout.
  const timingOut = async () => { const e = new Error('took too long'); e.code = 'timeout'; throw e; };
  const runtime2 = new native.AgentRuntime(runtimeConfig(), timingOut, new native.ToolRegistry());
  await assert.rejects(runtime2.run('hello'), (e) => e.code === 'llm_timeout');

  // A synchronous throw and a response of the wrong shape are transport errors too.
  const throwing = () => { throw new TypeError('no network in tests'); };
  const runtime3 = new native.AgentRuntime(runtimeConfig(), throwing, new native.ToolRegistry());
  await assert.rejects(runtime3.run('hello'), (e) => e.code === 'llm_transport' && /no network in tests/.test(e.message));
  const shapeless = async () => ({ body: 'no status' });
  const runtime4 = new native.AgentRuntime(runtimeConfig(), shapeless, new native.ToolRegistry());
  await assert.rejects(runtime4.run('hello'), (e) => e.code === 'llm_transport');
});

test('llm_3_http_error_status_is_classified', async () => {
  const model = new ScriptedModel([() => ({ status: 401, body: '{"error":{"message":"bad key","code":"invalid_api_key"}}' })]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  await assert.rejects(runtime.run('hello'), (e) => e.code === 'llm_auth' && !e.message.includes(API_KEY));
});

test('napi_2_tool_rejection_becomes_error_result_the_model_sees', async () => {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('fails', 'Always fails', '{"type":"object"}'), async () => {
    const e = new Error('disk full');
    e.code = 'ENOSPC';
    throw e;
  });
  registry.register(new native.ToolDefinition('flags', 'Reports an error itself', '{"type":"object"}'),
    async () => ({ content: 'not allowed', isError: true }));
  const model = new ScriptedModel([
    () => completion({
      toolCalls: [
        { id: 'c_fail', name: 'fails', arguments: {} },
        { id: 'c_flag', name: 'flags', arguments: {} },
      ],
    }),
    (body) => {
      const [fail, flag] = body.messages.slice(-2);
      assert.equal(fail.tool_call_id, 'c_fail');
      assert.match(fail.content, /disk full/);
      assert.equal(flag.content, 'not allowed');
      return completion({ content: 'Sorry.' });
    },
  ], { tools: ['fails', 'flags'] });
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry);
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('try');
  assert.deepEqual(model.problems, []);
  assert.equal(result.status, 'completed');
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.filter((m) => m.role === 'tool').map((m) => m.is_error), [true, true]);
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  const finished = events.filter((e) => e.type === 'tool_call_finished').map((e) => JSON.parse(e.payloadJson));
  assert.equal(finished.find((f) => f.callId === 'c_fail').errorCode, 'ENOSPC');
});

test('core_5_throwing_listener_and_unsubscribe_do_not_break_the_run', async () => {
  const model = new ScriptedModel([() => completion({ content: 'one' }), () => completion({ content: 'two' })]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  let thrown = 0;
  runtime.subscribe(() => { thrown += 1; throw new Error('listener bug'); });
  const seen = [];
  const id = runtime.subscribe((e) => seen.push(e.type));
  assert.equal(typeof id, 'number');

  const first = await runtime.run('first');
  assert.equal(first.status, 'completed');
  await waitFor(() => seen.includes('run_finished'), 'run_finished');
  assert.ok(thrown > 0);

  assert.equal(runtime.unsubscribe(id), true);
  assert.equal(runtime.unsubscribe(id), false);
  const count = seen.length;
  const second = await runtime.run('second');
  assert.equal(second.finalText, 'two');
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(seen.length, count, 'no events after unsubscribe');
});

test('napi_2_config_classes_convert_and_validate', () => {
  const model = new native.ModelConfig('https://api.example.test/v1', API_KEY, 'm-1');
  assert.equal(model.baseUrl, 'https://api.example.test/v1');
  assert.equal(model.model, 'm-1');
  assert.equal(model.temperature, undefined);
  assert.equal(model.maxTokens, undefined);
  assert.equal(model.stream, false);
  assert.equal(Object.values(model).includes(API_KEY), false);
  assert.equal('apiKey' in model, false, 'the key is write-only (LLM-4)');
  model.temperature = 0.5;
  model.maxTokens = 256;
  model.stream = true;
  assert.equal(model.temperature, 0.5);
  // "temperature takes any finite number a 32-bit float holds (… it reads back as set, e.g. 0.7)".
  for (const t of [0.7, 0.1, 1.3, 2, 1e-7, 3.4e38]) {
    model.temperature = t;
    assert.equal(model.temperature, t, `temperature ${t} reads back as set`);
  }
  assert.throws(() => { model.temperature = 1e39; }, (e) => e.code === 'invalid_config');
  model.temperature = 0.5;
  assert.equal(model.maxTokens, 256);
  assert.equal(model.stream, true);

  const config = new native.AgentRuntimeConfig(model);
  assert.equal(config.systemPrompt, '');
  assert.equal(config.maxIterations, 16);
  assert.equal(config.maxParallelTools, 4);
  assert.equal(config.sessionId, '');
  config.sessionId = 'session-fixed';
  const runtime = new native.AgentRuntime(config, async () => ({ status: 500, body: '' }), new native.ToolRegistry());
  assert.equal(runtime.sessionId, 'session-fixed');

  config.maxIterations = 0;
  assert.throws(() => new native.AgentRuntime(config, async () => ({ status: 500, body: '' }), new native.ToolRegistry()),
    (e) => e.code === 'invalid_config');

  // Wrong argument types are rejected by napi with a code too.
  assert.throws(() => new native.AgentRuntimeConfig({ baseUrl: 'x' }), (e) => typeof e.code === 'string');
  assert.throws(() => new native.AgentRuntime(runtimeConfig(), 'not a function', new native.ToolRegistry()),
    (e) => typeof e.code === 'string');
});

test('napi_2_tool_registry_register_unregister_and_codes', () => {
  const registry = new native.ToolRegistry();
  const run = async () => ({ content: '' });
  const def = new native.ToolDefinition('lookup', 'Looks up', '{"type":"object"}');
  assert.equal(def.name, 'lookup');
  assert.equal(def.description, 'Looks up');
  assert.equal(def.parametersJson, '{"type":"object"}');
  registry.register(def, run);
  assert.equal(registry.has('lookup'), true);
  assert.deepEqual(registry.names(), ['lookup']);
  assert.throws(() => registry.register(def, run), (e) => e.code === 'tool_name_duplicate');
  assert.throws(() => registry.register(new native.ToolDefinition('b', '', '{oops'), run), (e) => e.code === 'invalid_json');
  assert.throws(() => registry.register(new native.ToolDefinition('bad name!', '', '{}'), run), (e) => e.code === 'tool_name_invalid');
  assert.equal(registry.unregister('lookup'), true);
  assert.equal(registry.unregister('lookup'), false);
  assert.deepEqual(registry.names(), []);
});

test('napi_2_episodic_memories_are_read_only_views_of_the_state', () => {
  const runtime = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([]).transport, new native.ToolRegistry());
  assert.deepEqual(runtime.episodicMemories(), []);
  const archived = [{ role: 'user', content: 'plan the trip' }, { role: 'assistant', content: 'ok' }];
  runtime.importState(JSON.stringify({
    version: 1,
    session_id: 's-mem',
    history: {
      messages: [{ role: 'user', content: 'next' }],
      episodic_memories: [{
        id: 'snap-1',
        summary: '<state_snapshot><overall_goal>trip</overall_goal></state_snapshot>',
        created_at_ms: 1730000000123,
        message_count: 2,
        archived_messages: archived,
      }],
    },
    usages: [{ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2, raw: { source: 'context_compression' } }],
  }));
  const [episode, ...rest] = runtime.episodicMemories();
  assert.equal(rest.length, 0);
  assert.ok(episode instanceof native.EpisodicMemory);
  assert.equal(episode.id, 'snap-1');
  assert.match(episode.summary, /overall_goal/);
  assert.equal(episode.createdAtMs, 1730000000123);
  assert.equal(episode.messageCount, 2);
  assert.deepEqual(JSON.parse(episode.archivedMessagesJson), archived);
  assert.equal(runtime.usages()[0].source, 'context_compression');
  assert.throws(() => new native.EpisodicMemory());

  const duplicate = JSON.parse(runtime.exportState());
  duplicate.history.episodic_memories.push({ ...duplicate.history.episodic_memories[0] });
  assert.throws(() => runtime.importState(JSON.stringify(duplicate)), (e) => e.code === 'invalid_state');
});

test('core_4_cancel_called_right_after_run_is_not_lost', async () => {
  // run() returns before (or while) the core run is polled on a worker thread; the run
  // slot is claimed inside run(), so a cancel() in that moment always reaches the run. (A
  // worker may already have handed the first request to the transport: it is abandoned.)
  for (let i = 0; i < 50; i += 1) {
    const model = new ScriptedModel([() => completion({ content: 'should not be needed' })]);
    const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
    const running = runtime.run('stop at once');
    runtime.cancel();
    const result = await running;
    assert.equal(result.status, 'cancelled', `attempt ${i}`);
    assert.ok(model.requests.length <= 1, `attempt ${i}: no model call after cancel`);
    assert.deepEqual(pairingProblems(JSON.parse(runtime.historyJson())), []);
  }
});

test('napi_2_wrong_class_arguments_are_refused_not_unwrapped', () => {
  // An instance of another class must be refused with a code; unwrapping it as the
  // expected class would read another struct's memory (a crash, not an error).
  const model = new native.ModelConfig('https://api.example.test/v1', API_KEY, 'm-1');
  const config = new native.AgentRuntimeConfig(model);
  const registry = new native.ToolRegistry();
  const transport = async () => ({ status: 500, body: '' });
  const refused = (e) => e instanceof Error && typeof e.code === 'string';
  assert.throws(() => new native.AgentRuntimeConfig(registry), refused);
  assert.throws(() => new native.AgentRuntime(model, transport, registry), refused);
  assert.throws(() => new native.AgentRuntime(config, transport, config), refused);
  assert.throws(() => registry.register(model, async () => ({ content: '' })), refused);
  assert.throws(() => { config.contextCompressor = model; }, refused);
  assert.throws(() => { new native.ContextCompressor().summarizerModel = registry; }, refused);
  assert.deepEqual(registry.names(), []);
  assert.ok(new native.AgentRuntime(config, transport, registry) instanceof native.AgentRuntime);
});
