'use strict';
// CMP-12 through the N-API surface, as index.d.ts promises it: the "model_request" event
// names the figure that decided the prompt size ("estimate" | "calibrated" | "provider"),
// and the calibration learned from the provider's prompt_tokens travels with
// exportState()/importState().

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, MODEL, completion, ScriptedModel, runtimeConfig, waitFor } = require('./support');

const TURNS = [
  '你好！我下周要去杭州出差三天，能帮我安排一下行程吗？',
  '杭州这个季节天气怎么样？需要带什么衣服？',
  '出差期间我想尝尝当地的特色菜，有什么推荐？',
];

/** A provider that spends 0.6 tokens per Chinese character of the messages (like DeepSeek or Qwen), or reports nothing. */
function chineseModel(n, { report = true } = {}) {
  return new ScriptedModel(Array.from({ length: n }, () => (body) => {
    const chars = body.messages.map((m) => m.content || '').join('').length;
    const usage = { prompt_tokens: Math.round(chars * 0.6) + 4 * body.messages.length, completion_tokens: 9, total_tokens: 0 };
    usage.total_tokens = usage.prompt_tokens + 9;
    return completion({ content: '好的，我来帮你安排。第一天先去西湖边散步。', usage: report ? usage : undefined });
  }));
}

async function chat(runtime, inputs) {
  const requests = [];
  runtime.subscribe((e) => {
    const payload = JSON.parse(e.payloadJson);
    if (payload.type === 'model_request') requests.push(payload);
  });
  for (const input of inputs) await runtime.run(input);
  await waitFor(() => requests.length === inputs.length, 'model_request events');
  return requests;
}

test('cmp_12 model_request names the figure that decided; the calibration survives exportState/importState', async () => {
  const model = chineseModel(3);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  const requests = await chat(runtime, TURNS);
  assert.deepEqual(model.problems, []);
  assert.equal(requests[0].promptSizeSource, 'estimate', 'nothing learned before the first count');
  for (const r of requests.slice(1)) assert.ok(['calibrated', 'provider'].includes(r.promptSizeSource), r.promptSizeSource);

  const exported = JSON.parse(runtime.exportState());
  const calibration = exported.token_calibration[MODEL];
  assert.equal(calibration.observations, 3);
  assert.ok(calibration.cjk < 0.8 && calibration.cjk >= 0.25, JSON.stringify(calibration));

  const resumed = new native.AgentRuntime(runtimeConfig(), chineseModel(1).transport, new native.ToolRegistry());
  resumed.importState(JSON.stringify(exported));
  const after = await chat(resumed, ['最后帮我总结一下。']);
  assert.equal(after[0].promptSizeSource, 'calibrated', 'the imported calibration sizes the first request');
  assert.deepEqual(JSON.parse(resumed.exportState()).token_calibration[MODEL].observations, 4);
});

test('cmp_12 a provider that reports no usage leaves every request sized by the static estimate', async () => {
  const model = chineseModel(3, { report: false });
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  const requests = await chat(runtime, TURNS);
  assert.deepEqual(requests.map((r) => r.promptSizeSource), ['estimate', 'estimate', 'estimate']);
  assert.equal(JSON.parse(runtime.exportState()).token_calibration, undefined);
});
