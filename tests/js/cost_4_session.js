'use strict';
// COST-4: the session the prefix tests run (not a test file): a weather tool, a model
// that answers from the request alone ("task N" gets the tool call w-N, then a text;
// prompt tokens = a quarter of the body's bytes), optionally compression and a store.
// Every request body is recorded as the transport received it.

const { native, completion, snapshot, isSummaryRequest, BASE_URL, API_KEY } = require('./support');

function prefixRuntime({ compress = false, storePath } = {}) {
  const bodies = [];
  const transport = async (request) => {
    bodies.push(request.body);
    const body = JSON.parse(request.body);
    const usage = { prompt_tokens: Math.floor(request.body.length / 4), completion_tokens: 9, total_tokens: Math.floor(request.body.length / 4) + 9 };
    if (isSummaryRequest(body)) return { status: 200, headers: [], body: completion({ content: snapshot(), usage }) };
    const user = body.messages.filter((m) => m.role === 'user').at(-1);
    const n = String(user.content).replace('task ', '');
    const content = body.messages.at(-1).role === 'user' ? null : `In city ${n} it is sunny, 21 degrees, light wind.`;
    const toolCalls = content === null ? [{ id: `w-${n}`, name: 'get_weather', arguments: { city: `city ${n}` } }] : [];
    return { status: 200, headers: [], body: completion({ content, toolCalls, usage }) };
  };
  const config = new native.AgentRuntimeConfig(new native.ModelConfig(BASE_URL, API_KEY, 'prefix-model'));
  config.systemPrompt = 'You are a weather assistant. Answer briefly.';
  config.sessionId = 'prefix';
  if (compress) config.contextCompressor = new native.ContextCompressor(900, 4, undefined, 2);
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('get_weather', 'Weather for a city', '{"type":"object","properties":{"city":{"type":"string"}}}'),
    async () => ({ content: 'sunny' }));
  const store = storePath ? native.SessionStore.open(storePath) : undefined;
  const runtime = new native.AgentRuntime(config, transport, tools, store);
  return { runtime, bodies };
}

module.exports = { prefixRuntime };
