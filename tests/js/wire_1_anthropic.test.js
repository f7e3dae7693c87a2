'use strict';
// WIRE-1 through the N-API surface: ModelConfig.wireFormat selects the provider protocol,
// and a run with a tool call speaks Anthropic Messages end to end (the JS transport checks
// every request like a strict Anthropic server and answers in Anthropic's shapes: a whole
// JSON tool_use answer, then a streamed text answer through the HttpBodySink).

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, API_KEY, runtimeConfig, waitFor } = require('./support');

const BASE_URL = 'https://api.anthropic.example.test/v1';
const MODEL = 'claude-test-1';
const EPHEMERAL = { type: 'ephemeral' };

function anthropicModel() {
  const model = new native.ModelConfig(BASE_URL, API_KEY, MODEL);
  model.wireFormat = 'anthropic';
  return model;
}

/** The problems a strict Anthropic server would find in `request` (empty: accepted). */
function problems(request) {
  const p = [];
  const header = (name) => (request.headers.find((h) => h.name.toLowerCase() === name) || {}).value;
  if (request.url !== `${BASE_URL}/messages`) p.push(`url ${request.url}`);
  if (header('x-api-key') !== API_KEY) p.push('x-api-key does not carry the key');
  if (header('anthropic-version') !== '2023-06-01') p.push('anthropic-version');
  if (header('authorization') !== undefined) p.push('an Authorization header on the Anthropic wire');
  if (request.body.includes(API_KEY)) p.push('API key leaked into the body');
  const body = JSON.parse(request.body);
  if (!(body.max_tokens > 0)) p.push('max_tokens missing');
  body.messages.forEach((m, i) => {
    if (m.role !== (i % 2 === 0 ? 'user' : 'assistant')) p.push(`turn ${i} is ${m.role}`);
    for (const b of m.content) if (b.type === 'text' && b.text === '') p.push('empty text block');
  });
  const marks = JSON.stringify(body).split('"cache_control"').length - 1;
  if (marks > 4) p.push(`${marks} breakpoints`);
  return p;
}

const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];
const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

test('wire_1_model_config_wire_format_defaults_to_openai_and_refuses_unknown_names', async () => {
  const model = new native.ModelConfig(BASE_URL, API_KEY, MODEL);
  assert.equal(model.wireFormat, 'openai');
  // The default speaks Chat Completions, with no max_tokens unless one is set.
  const bodies = [];
  const openai = new native.AgentRuntime(runtimeConfig({ model }), async (request) => {
    bodies.push([request.url, JSON.parse(request.body)]);
    return { status: 200, body: JSON.stringify({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }] }) };
  }, new native.ToolRegistry());
  assert.equal((await openai.run('hello')).finalText, 'hi');
  assert.equal(bodies[0][0], `${BASE_URL}/chat/completions`);
  assert.equal(bodies[0][1].max_tokens, undefined);
  model.wireFormat = 'anthropic';
  assert.equal(model.wireFormat, 'anthropic');
  for (const bad of ['Anthropic', 'claude', '']) {
    assert.throws(() => { model.wireFormat = bad; }, (e) => e.code === 'invalid_config', bad);
  }
  assert.equal(model.wireFormat, 'anthropic', 'a refused value changes nothing');
  assert.throws(() => { model.wireFormat = 7; }, (e) => e.code === 'invalid_config');
});

test('wire_1_a_turn_with_a_tool_call_over_anthropic_messages', async () => {
  const registry = new native.ToolRegistry();
  const calls = [];
  registry.register(
    new native.ToolDefinition('get_weather', 'Current weather of a city', JSON.stringify({ type: 'object', properties: { city: { type: 'string' } } })),
    async (call) => {
      calls.push(JSON.parse(call.argumentsJson));
      return { content: 'sunny, 21°C' };
    },
  );
  const model = anthropicModel();
  model.stream = true;
  const seen = [];
  const rejected = [];
  const transport = async (request, sink) => {
    const p = problems(request);
    const body = JSON.parse(request.body);
    seen.push(body);
    if (p.length > 0) {
      rejected.push(...p);
      return { status: 400, body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: p.join('; ') } }) };
    }
    if (seen.length === 1) {
      return {
        status: 200,
        headers: [{ name: 'content-type', value: 'application/json' }],
        body: JSON.stringify({
          id: 'msg_1', type: 'message', role: 'assistant', model: MODEL,
          content: [
            { type: 'thinking', thinking: 'Look it up.', signature: 'sig' },
            { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Beijing' } },
          ],
          stop_reason: 'tool_use',
          usage: { input_tokens: 30, cache_creation_input_tokens: 1200, cache_read_input_tokens: 0, output_tokens: 12 },
        }),
      };
    }
    setImmediate(() => {
      sink.write(event('message_start', { message: { id: 'msg_2', role: 'assistant', content: [], usage: { input_tokens: 25, cache_read_input_tokens: 1200, output_tokens: 1 } } }));
      sink.write(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
      sink.write(event('ping', {}));
      sink.write(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Beijing: ' } }));
      sink.write(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'sunny.' } }));
      sink.write(event('content_block_stop', { index: 0 }));
      sink.write(event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 4 } }));
      sink.write(event('message_stop', {}));
      sink.end();
    });
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
  const runtime = new native.AgentRuntime(runtimeConfig({ model, systemPrompt: 'You are a weather bot.' }), transport, registry);
  const events = [];
  runtime.subscribe((e) => events.push(e));

  const result = await runtime.run('Weather in Beijing?');

  assert.deepEqual(rejected, []);
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'Beijing: sunny.');
  assert.deepEqual(calls, [{ city: 'Beijing' }]);

  // First request: the system prompt, the tool and the latest block are the breakpoints.
  const [first, second] = seen;
  assert.equal(first.model, MODEL);
  assert.equal(first.max_tokens, 4096, 'the documented default when maxTokens is unset');
  assert.equal(first.stream, true);
  assert.deepEqual(first.system[0], { type: 'text', text: first.system[0].text, cache_control: EPHEMERAL });
  assert.ok(first.system[0].text.startsWith('You are a weather bot.'));
  const tool = first.tools.find((t) => t.name === 'get_weather');
  assert.deepEqual(tool.input_schema, { type: 'object', properties: { city: { type: 'string' } } });
  assert.deepEqual(first.tools.at(-1).cache_control, EPHEMERAL);
  assert.deepEqual(first.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Beijing?', cache_control: EPHEMERAL }] },
  ]);

  // Second request: the tool_use answered by a tool_result in the next user turn; the
  // thinking block goes back exactly as received, before the tool_use (THINK-2); the
  // breakpoint moved to the result.
  assert.deepEqual(second.messages, [
    { role: 'user', content: [{ type: 'text', text: 'Weather in Beijing?' }] },
    { role: 'assistant', content: [
      { type: 'thinking', thinking: 'Look it up.', signature: 'sig' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Beijing' } },
    ] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny, 21°C', cache_control: EPHEMERAL }] },
  ]);

  // History in the runtime's own shape; usage with the whole prompt and the cache read.
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
  assert.deepEqual(history[1].thinking, [{ type: 'thinking', thinking: 'Look it up.', signature: 'sig' }], 'THINK-1: the block as received');
  assert.equal(history[1].reasoning, undefined);
  const usages = runtime.usages();
  assert.deepEqual(usages.map((u) => [u.promptTokens, u.completionTokens, u.cachedTokens]), [[1230, 12, 0], [1225, 4, 1200]]);
  // BND-1: Anthropic's cache writes reach ArkTS, typed.
  assert.deepEqual(usages.map((u) => u.cacheWriteTokens), [1200, undefined]);
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  const deltas = events.filter((e) => e.type === 'text_delta').map((e) => JSON.parse(e.payloadJson).delta);
  assert.deepEqual(deltas, ['Beijing: ', 'sunny.']);
  const reasoning = events.filter((e) => e.type === 'reasoning_delta').map((e) => JSON.parse(e.payloadJson).delta);
  assert.deepEqual(reasoning, ['Look it up.'], 'thinking reaches listeners as reasoning');
});
