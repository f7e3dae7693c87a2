'use strict';
// SUB-6 through the N-API surface: a ModelUsage carries `callCount` (BND-1: the summarizer
// calls of a compression written in N chunks), so sumUsages(usages())
// counts model calls as Rust and C do and agrees with totalUsage().

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, completion, snapshot, textStream, waitFor, ScriptedModel, modelConfig, runtimeConfig } = require('./support');

const longText = (label) => `${label}: ${'details of the plan for the trip to Hangzhou and Suzhou '.repeat(40)}`;

function stateJson() {
  return JSON.stringify({
    version: 1,
    session_id: 'calls',
    history: {
      messages: [
        { role: 'user', content: longText('the goal') },
        { role: 'assistant', content: longText('a first answer') },
        { role: 'user', content: longText('a follow-up') },
        { role: 'assistant', content: longText('a second answer') },
        { role: 'user', content: 'and now?' },
        { role: 'assistant', content: 'KEPT' },
      ],
      episodic_memories: [],
    },
    usages: [{ prompt_tokens: 5000, completion_tokens: 40, total_tokens: 5040 }],
  });
}

test('sub_6 bnd_1 ModelUsage carries callCount: sumUsages(usages()) counts a chunked compression as its N calls', async () => {
  const model = new ScriptedModel([], {
    summarizer: () => completion({ content: snapshot(), usage: { prompt_tokens: 1500, completion_tokens: 90, total_tokens: 1590 } }),
  });
  const compressor = new native.ContextCompressor(1000, 2, undefined, 1);
  compressor.summarizerMaxInputTokens = 1200;
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  await runtime.importState(stateJson());
  const result = await runtime.compressNow();
  assert.deepEqual(model.problems, []);
  assert.equal(result.outcome, 'compressed');
  const chunks = model.summaryRequests.length;
  assert.ok(chunks > 1, `${chunks} summary calls`);
  assert.equal(result.usage.callCount, chunks);
  const usages = runtime.usages();
  assert.equal(usages.at(-1).callCount, chunks);
  assert.equal(usages.at(-1).source, 'context_compression');
  assert.equal(usages[0].callCount, undefined, 'a plain call stands for one');
  const summed = native.sumUsages(usages);
  assert.equal(summed.callCount, 1 + chunks);
  assert.equal(summed.callCount, runtime.totalUsage().parent.callCount, 'the same number as the runtime');
  assert.equal(native.sumUsages([{ promptTokens: 1, completionTokens: 1, totalTokens: 2, callCount: 3 }]).callCount, 3);
  assert.throws(() => native.sumUsages([{ promptTokens: 1, completionTokens: 1, totalTokens: 2, callCount: -1 }]),
    (e) => e.code === 'invalid_argument');
  // BND-1: a source is one of the UsageSource union.
  assert.throws(() => native.sumUsages([{ promptTokens: 1, completionTokens: 1, totalTokens: 2, source: 'mine' }]),
    (e) => e.code === 'invalid_argument');
});

test('sub_6 a call whose provider reported no usage counts: usages() holds it as source "unreported"', async () => {
  const model = new ScriptedModel([
    () => completion({ content: 'with usage', usage: { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 } }),
    () => completion({ content: 'no usage' }),
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  await runtime.run('one');
  await runtime.run('two');
  assert.deepEqual(model.problems, []);
  const usages = runtime.usages();
  assert.equal(usages.length, 2);
  assert.equal(usages[1].source, 'unreported');
  assert.equal(usages[1].totalTokens, 0);
  const parent = runtime.totalUsage().parent;
  assert.equal(parent.callCount, 2, 'both calls were made');
  assert.equal(parent.totalTokens, 32);
  assert.equal(native.sumUsages(usages).callCount, 2);
});

test('sub_6 a stream that breaks mid-answer without a cancel counts in callCount, like one cut off by a cancel', async () => {
  const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];
  const usage = { prompt_tokens: 30, completion_tokens: 2, total_tokens: 32 };
  const whole = (text) => (body, index, sink) => {
    setTimeout(() => { for (const chunk of textStream([text], usage)) sink.write(chunk); sink.end(); }, 1);
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
  const deltas = [];
  /** A first piece of the answer, then the connection breaks (no cancel). */
  const broken = (body, index, sink) => {
    (async () => {
      sink.write(textStream(['half an ans'])[0]);
      await waitFor(() => deltas.length > 0, 'a delta before the break');
      sink.fail('connection reset by peer', 'ECONNRESET');
    })();
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
  const model = new ScriptedModel([whole('fine'), broken, whole('again')]);
  const streaming = modelConfig();
  streaming.stream = true;
  const runtime = new native.AgentRuntime(runtimeConfig({ model: streaming }), model.transport, new native.ToolRegistry());
  runtime.subscribe((e) => { if (e.type === 'text_delta') deltas.push(e); });
  await runtime.run('one');
  await assert.rejects(runtime.run('two'), (e) => e.code === 'llm_transport');
  assert.deepEqual(model.problems, []);
  const usages = runtime.usages();
  assert.equal(usages.length, 2, 'the broken call has its usage entry');
  assert.equal(usages[1].source, 'unreported');
  assert.equal(runtime.totalUsage().parent.callCount, 2, 'the broken call was made');
  assert.equal(native.sumUsages(usages).callCount, 2);
  await runtime.run('three');
  assert.equal(runtime.totalUsage().parent.callCount, 3);
});
