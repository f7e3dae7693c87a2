'use strict';
// Issue 40 (promises round 3) through the N-API surface: the seams where the newer features
// meet the older ones, driven as an app would.

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, API_KEY, runtimeConfig } = require('./support');

const BASE_URL = 'https://api.anthropic.example.test/v1';

// Item 10: Anthropic's cache writes reach ArkTS (`cacheWriteTokens`) in the usage of the
// model_response event and in usages(), streamed and whole, as README says.
test('cost_1_js_anthropic_cache_write_tokens_are_kept_streamed_and_whole', async () => {
  for (const stream of [false, true]) {
    const model = new native.ModelConfig(BASE_URL, API_KEY, 'claude-test');
    model.wireFormat = 'anthropic';
    model.stream = stream;
    const usage = { input_tokens: 20, cache_read_input_tokens: 64, cache_creation_input_tokens: 36, output_tokens: 5 };
    const whole = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage };
    const transport = async (request, sink) => {
      if (!stream) return { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], body: JSON.stringify(whole) };
      setImmediate(() => {
        const ev = (type, data) => sink.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
        ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], usage: { ...usage, output_tokens: 1 } } });
        ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
        ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } });
        ev('content_block_stop', { index: 0 });
        ev('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } });
        ev('message_stop', {});
        sink.end();
      });
      return { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], streamed: true };
    };
    const runtime = new native.AgentRuntime(runtimeConfig({ model }), transport, new native.ToolRegistry());
    const events = [];
    runtime.subscribe((e) => events.push(e));
    await runtime.run('hello');
    await new Promise((resolve) => setImmediate(resolve));
    const [recorded] = runtime.usages();
    assert.equal(recorded.cacheWriteTokens, 36, `stream ${stream}: usages()`);
    assert.equal(recorded.cachedTokens, 64);
    assert.equal(recorded.promptTokens, 120, 'the whole prompt: uncached + reads + writes');
    const response = events.find((e) => e.type === 'model_response');
    assert.equal(JSON.parse(response.payloadJson).usage.cacheWriteTokens, 36, `stream ${stream}: the event`);
  }
});
