'use strict';
// BND-3 through the N-API surface: registering a protocol in the core gives it this
// scripted-model turn in JS. The protocols are read from the generated `WireFormat` union
// (scripts/closed-sets prints the core's registry); each one runs a streamed turn with a
// tool call — a whole answer calling the tool, then a streamed answer — against its strict
// fake server (tests/js/wire_fakes.js), which refuses what the real provider refuses.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, API_KEY, runtimeConfig } = require('./support');
const { fakeOf } = require('./wire_fakes');
const gen = require('../../scripts/gen-dts.js');

const BASE_URL = 'https://provider.example.test/v1';
const DTS = fs.readFileSync(path.join(__dirname, '..', '..', gen.DTS), 'utf8');
const REGISTERED = gen.declaredUnions(DTS).get('WireFormat');

async function turn(name) {
  const fake = fakeOf(name);
  const tools = new native.ToolRegistry();
  const calls = [];
  tools.register(new native.ToolDefinition('get_weather', 'Weather for a city',
    JSON.stringify({ type: 'object', properties: { city: { type: 'string' } } })), async (call) => {
    calls.push(JSON.parse(call.argumentsJson));
    return { content: 'sunny, 21C' };
  });
  const model = new native.ModelConfig(BASE_URL, API_KEY, 'test-model');
  model.wireFormat = name;
  model.stream = true;
  const seen = [];
  const transport = async (request, sink) => {
    const view = fake.check(request, BASE_URL, API_KEY);
    seen.push(view);
    if (view.problems.length > 0) return { status: 400, body: JSON.stringify({ error: { message: view.problems.join('; ') } }) };
    if (seen.length === 1) return fake.toolCall('get_weather', { city: 'Beijing' });
    setImmediate(() => {
      for (const piece of fake.textStream('Beijing is sunny.')) sink.write(piece);
      sink.end();
    });
    return { status: 200, headers: fake.sseHeaders, streamed: true };
  };
  const runtime = new native.AgentRuntime(runtimeConfig({ model, systemPrompt: 'You are a weather bot.' }), transport, tools);
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('Weather in Beijing?');
  await new Promise((resolve) => setImmediate(resolve));
  return { result, seen, calls, events, usages: runtime.usages() };
}

test('bnd_3 the registry reaches JS: every registered protocol is a WireFormat a ModelConfig takes', () => {
  assert.ok(Array.isArray(REGISTERED) && REGISTERED.includes('openai') && REGISTERED.includes('anthropic'), `${REGISTERED}`);
  const model = new native.ModelConfig(BASE_URL, API_KEY, 'm');
  for (const name of REGISTERED) {
    model.wireFormat = name;
    assert.equal(model.wireFormat, name);
  }
});

for (const name of REGISTERED || []) {
  test(`bnd_3 a streamed turn with a tool call over every registered protocol: ${name}`, async () => {
    const { result, seen, calls, events, usages } = await turn(name);
    assert.deepEqual(seen.flatMap((v) => v.problems), [], 'the strict fake accepted every request');
    assert.equal(result.status, 'completed');
    assert.equal(result.finalText, 'Beijing is sunny.');
    assert.deepEqual(calls, [{ city: 'Beijing' }]);
    assert.deepEqual(seen.map((v) => v.roles), [['system', 'user'], ['system', 'user', 'assistant', 'tool']]);
    assert.deepEqual(seen[1].tools, ['sunny, 21C']);
    assert.equal(usages.length, 2, 'one usage per model call');
    const text = events.filter((e) => e.type === 'text_delta').map((e) => JSON.parse(e.payloadJson).delta).join('');
    assert.equal(text, 'Beijing is sunny.', 'the stream reached the listener as text deltas');
    assert.ok(events.every((e) => !e.payloadJson.includes(API_KEY)), 'no event carries the key');
  });
}

test('bnd_3 a registered protocol without a fake server fails, naming what to add', () => {
  assert.throws(() => fakeOf('gemini'), /registered \(WireFormat\) but tests\/js\/wire_fakes\.js has no fake server/);
});
