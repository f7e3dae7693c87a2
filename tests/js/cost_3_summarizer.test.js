'use strict';
// COST-3 through the N-API surface, on the exact bodies the JS transport receives: when
// the summarizer is the conversation's own model, each compression asks for the snapshot
// with one request that is the last main request's bytes up to the end of its last
// message (what the provider has cached), then the answer appended since and the
// compression instruction — tools, tool choice and every other field unchanged. An
// answer that calls a tool is asked for once more, then the chunked transcript is used.

const test = require('node:test');
const assert = require('node:assert/strict');

const { chatCompletions, assertSummarizerReuses } = require('./prefix');
const { prefixRuntime } = require('./cost_4_session');
const {
  native, completion, snapshot, isPrefixSummaryRequest, isTranscriptSummaryRequest, COMPRESSION_MARK, BASE_URL, API_KEY, longWeatherChat,
} = require('./support');

test('COST-3 the summarizer request starts with the previous main request\'s bytes up to its last message and ends with the instruction', async () => {
  const { runtime, bodies } = prefixRuntime({ compress: true });
  for (let i = 0; i < 16; i++) await runtime.run(`task ${i}`);
  let checked = 0;
  let lastMain;
  for (const raw of bodies) {
    const body = JSON.parse(raw);
    if (isPrefixSummaryRequest(body)) {
      assert.ok(lastMain, 'a main request came first');
      assertSummarizerReuses(chatCompletions, lastMain, raw, COMPRESSION_MARK);
      assert.ok(body.messages.at(-1).content.endsWith(native.DEFAULT_SUMMARY_PROMPT.trimEnd()), 'the instruction carries the summary prompt');
      assert.equal(body.tools.length, 2, 'get_weather and retrieve_memory still offered');
      checked++;
    } else {
      assert.ok(!isTranscriptSummaryRequest(body), 'no transcript: the summarizer is the conversation\'s model');
      lastMain = raw;
    }
  }
  assert.ok(checked >= 2, `${checked} summarizer requests checked`);
  assert.equal(runtime.episodicMemories().length, checked, 'one request per compression, each committed');
});

/**
 * A runtime with a four-message history above the threshold, compressing with `compressor`
 * (keeping 2), whose transport answers a summary request on the conversation's bytes with
 * `onPrefix(body)` and anything else with a snapshot; `kinds` records each request's kind.
 */
function compressing(onPrefix, compressor = new native.ContextCompressor(1000, 2, undefined, 1)) {
  const kinds = [];
  const usage = { prompt_tokens: 5000, completion_tokens: 9, total_tokens: 5009 };
  const transport = async (request) => {
    const body = JSON.parse(request.body);
    if (isPrefixSummaryRequest(body)) {
      kinds.push('prefix');
      return onPrefix(usage);
    }
    kinds.push(isTranscriptSummaryRequest(body) ? 'transcript' : 'main');
    return { status: 200, headers: [], body: completion({ content: snapshot(), usage }) };
  };
  const config = new native.AgentRuntimeConfig(new native.ModelConfig(BASE_URL, API_KEY, 'prefix-model'));
  config.contextCompressor = compressor;
  const tools = new native.ToolRegistry();
  const toolRuns = [];
  tools.register(new native.ToolDefinition('get_weather', 'Weather', '{"type":"object"}'), async (call) => { toolRuns.push(call); return { content: 'sunny' }; });
  const runtime = new native.AgentRuntime(config, transport, tools);
  runtime.importState(longWeatherChat());
  return { runtime, kinds, toolRuns };
}

const snapshotAnswer = (usage) => ({ status: 200, headers: [], body: completion({ content: snapshot(), usage }) });

test('COST-3 an answer calling a tool is asked for once more, then the transcript is used', async () => {
  const { runtime, kinds, toolRuns } = compressing((usage) => (
    { status: 200, headers: [], body: completion({ toolCalls: [{ id: 'x', name: 'get_weather', arguments: {} }], usage }) }));
  const result = await runtime.compressNow();
  assert.equal(result.outcome, 'compressed');
  assert.deepEqual(kinds, ['prefix', 'prefix', 'transcript']);
  assert.equal(toolRuns.length, 0, 'a summarizer\'s tool call is never run');
  assert.equal(result.usage.promptTokens, 15000, 'the three calls, summed');
});

test('COST-3 a summarizerModel equal to the conversation\'s model reuses its bytes; another model gets a transcript', async () => {
  const same = new native.ContextCompressor(1000, 2, undefined, 1);
  same.summarizerModel = new native.ModelConfig(BASE_URL, API_KEY, 'prefix-model');
  const a = compressing(snapshotAnswer, same);
  assert.equal((await a.runtime.compressNow()).outcome, 'compressed');
  assert.deepEqual(a.kinds, ['prefix']);
  const other = new native.ContextCompressor(1000, 2, undefined, 1);
  other.summarizerModel = new native.ModelConfig(BASE_URL, API_KEY, 'other-model');
  const b = compressing(snapshotAnswer, other);
  assert.equal((await b.runtime.compressNow()).outcome, 'compressed');
  assert.deepEqual(b.kinds, ['transcript']);
});

test('COST-3 summarizerMaxInputTokens unset: a context-overflow answer to the request on the conversation\'s bytes falls back to chunks', async () => {
  const { runtime, kinds } = compressing(() => ({
    status: 400, headers: [], body: JSON.stringify({ error: { message: 'too long', code: 'context_length_exceeded' } }),
  }));
  const result = await runtime.compressNow();
  assert.equal(result.outcome, 'compressed');
  assert.deepEqual(kinds, ['prefix', 'transcript']);
  // Set below the conversation's size: no request on its bytes at all.
  const small = new native.ContextCompressor(1000, 2, undefined, 1);
  small.summarizerMaxInputTokens = 1200;
  const limited = compressing(snapshotAnswer, small);
  assert.equal((await limited.runtime.compressNow()).outcome, 'compressed');
  assert.ok(limited.kinds.length > 0 && limited.kinds.every((k) => k === 'transcript'), limited.kinds.join());
});
