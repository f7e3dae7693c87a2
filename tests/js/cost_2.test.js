'use strict';
// COST-1 / COST-2 through the N-API surface: ModelConfig.price prices each usage once, by
// the model config that made the call (the parent's, a worker's, a summarizer's own);
// RunResult.usage, totalUsage(), sumUsages()/JSON.stringify, the sub-agent registry and the events
// carry cached and reasoning tokens and per-currency costs that are exact integer sums;
// without a price there is no cost anywhere; invalid prices throw "invalid_config".

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, completion, snapshot, isSummaryRequest, RoutedModel, runtimeConfig, offeredTools, BASE_URL, API_KEY, waitFor } = require('./support');

const USD = (nanos) => ({ currency: 'USD', nanos });
const CNY = (nanos) => ({ currency: 'CNY', nanos });

function usage(prompt, cached, out, reasoning = 0) {
  return {
    prompt_tokens: prompt,
    completion_tokens: out,
    total_tokens: prompt + out,
    prompt_tokens_details: { cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}

function priced(model, currency, input, cached, output) {
  const config = new native.ModelConfig(BASE_URL, API_KEY, model);
  config.price = { currency, inputPerMillion: input, cachedInputPerMillion: cached, outputPerMillion: output };
  return config;
}

/** The parent (USD 0.27/0.07/1.10), a worker on "worker-model" (USD 1/0.1/4) and a
 * summarizer on "summary-model" (CNY 2/0.5/8); compression when the provider counts 1,500. */
function pricedSetup() {
  const parent = priced('scripted-chat-1', 'USD', 0.27, 0.07, 1.10);
  const compressor = new native.ContextCompressor(1400, 2, undefined, 1);
  compressor.summarizerModel = priced('summary-model', 'CNY', 2, 0.5, 8);
  const config = runtimeConfig({ model: parent, contextCompressor: compressor });
  config.registerSubAgent(native.SubAgentDefinition.create('researcher', 'Finds facts', (worker) => {
    worker.model = priced('worker-model', 'USD', 1, 0.1, 4);
  }));
  const model = new RoutedModel([
    { name: 'summary', match: isSummaryRequest, model: 'summary-model', turns: [() => completion({ content: snapshot(), usage: usage(900, 0, 120) })] },
    { name: 'worker', match: (b) => b.model === 'worker-model', model: 'worker-model',
      turns: [() => completion({ content: 'the boiling point is 100 °C at sea level. '.repeat(12), usage: usage(300, 100, 40, 10) })] },
    { name: 'parent', match: (b) => offeredTools(b).includes('delegate_task'), turns: [
      () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'researcher', task_description: 'find it' } }], usage: usage(1000, 600, 50) }),
      () => completion({ content: '100 °C', usage: usage(1200, 1000, 30, 5) }),
      () => completion({ content: 'you are welcome', usage: usage(1500, 1300, 20) }),
    ] },
  ]);
  model.summaryModel = 'summary-model';
  return { config, model };
}

const costs = (summary) => summary.costs.map((c) => ({ currency: c.currency, nanos: c.nanos }));

test('COST-2 every call is priced by its own model config and every total is the exact sum, per currency', async () => {
  const { config, model } = pricedSetup();
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const first = await runtime.run('go');
  const second = await runtime.run('thanks');
  assert.deepEqual(model.problems, []);
  assert.equal(runtime.listEpisodes().length, 1, 'the second run compressed');

  // p per 1M tokens = p × 1000 nanos a token: 400×270 + 600×70 + 50×1100, …
  assert.deepEqual(runtime.usages().map((u) => u.cost), [USD(205000), USD(157000), USD(167000), CNY(2760000)]);
  assert.deepEqual(costs(first.usage), [USD(205000 + 157000 + 370000)]);
  assert.equal(first.usage.cachedTokens, 600 + 1000 + 100);
  assert.equal(first.usage.reasoningTokens, 5 + 10);
  assert.equal(first.usage.pricedCallCount, 3);
  assert.deepEqual(costs(second.usage), [CNY(2760000), USD(167000)]);

  const totals = runtime.totalUsage();
  assert.deepEqual(costs(totals.children), [USD(370000)], 'the worker at its own price');
  assert.deepEqual(costs(totals.parent), [CNY(2760000), USD(529000)]);
  assert.deepEqual(costs(totals.total), [CNY(2760000), USD(899000)]);
  const summed = native.sumUsages(runtime.usages());
  assert.deepEqual(summed, totals.parent, 'the parent total is exactly the sum of the usages');
  assert.equal(JSON.stringify(summed), JSON.stringify(totals.parent), 'and so is its JSON');
  const byRun = [first, second].reduce((n, r) => n + r.usage.costs.find((c) => c.currency === 'USD').nanos, 0);
  assert.equal(byRun, totals.total.costs.find((c) => c.currency === 'USD').nanos, 'the runs add up to the total');

  const registry = runtime.subAgents();
  assert.deepEqual(costs(registry.stats.usage), [USD(370000)]);
  assert.equal(registry.stats.usage.cachedTokens, 100);
  assert.deepEqual(costs(registry.history[0].result.usage), [USD(370000)]);

  await waitFor(() => events.filter((e) => e.type === 'run_finished').length === 2, 'run_finished');
  const payloads = events.map((e) => JSON.parse(e.payloadJson));
  const responses = payloads.filter((p) => p.type === 'model_response').map((p) => p.usage.cost);
  assert.deepEqual(responses, [USD(205000), USD(157000), USD(167000)]);
  const finished = payloads.filter((p) => p.type === 'run_finished').map((p) => p.usage.costs);
  assert.deepEqual(finished, [[USD(732000)], [CNY(2760000), USD(167000)]]);
  const child = payloads.filter((p) => p.type === 'sub_agent').map((p) => p.event).find((e) => e.type === 'model_response');
  assert.deepEqual(child.usage.cost, USD(370000), "the worker's model_response at the worker's price");
});

test('COST-2 without a price there is no cost anywhere; COST-1 cached and reasoning tokens are summed all the same', async () => {
  const model = new RoutedModel([
    { name: 'parent', match: () => true, turns: [() => completion({ content: 'a', usage: usage(1000, 600, 50, 5) })] },
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e.payloadJson));
  const result = await runtime.run('one');
  assert.deepEqual(model.problems, []);
  assert.equal(runtime.usages()[0].cost, undefined);
  for (const sum of [result.usage, runtime.totalUsage().total, native.sumUsages(runtime.usages())]) {
    assert.equal(sum.costs, undefined);
    assert.ok(!('costs' in sum), 'costs is absent when no call was priced');
    assert.equal(sum.pricedCallCount, 0);
    assert.equal(sum.cachedTokens, 600);
    assert.equal(sum.reasoningTokens, 5);
    assert.ok(!JSON.stringify(sum).includes('cost'), JSON.stringify(sum));
  }
  await waitFor(() => events.length > 0 && events.at(-1).includes('run_finished'), 'run_finished');
  assert.ok(events.every((e) => !e.includes('"cost')), 'no cost in any event');
  assert.equal(new native.ModelConfig(BASE_URL, API_KEY, 'm').price, undefined, 'no default price');
});

test('COST-2 ModelConfig.price round-trips and invalid prices throw "invalid_config"', () => {
  const config = new native.ModelConfig(BASE_URL, API_KEY, 'm');
  config.price = { currency: 'CNY', inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8, cacheWritePerMillion: 2.5 };
  assert.deepEqual({ ...config.price }, { currency: 'CNY', inputPerMillion: 2, cachedInputPerMillion: 0.5, outputPerMillion: 8, cacheWritePerMillion: 2.5 });
  for (const bad of [
    { currency: '', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1 },
    { currency: 'U SD', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1 },
    { currency: 'USD', inputPerMillion: -1, cachedInputPerMillion: 1, outputPerMillion: 1 },
    { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: NaN, outputPerMillion: 1 },
    { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: Infinity },
    { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1, cacheWritePerMillion: -0.5 },
  ]) {
    assert.throws(() => { config.price = bad; }, (e) => e.code === 'invalid_config', JSON.stringify(bad));
  }
  assert.equal(config.price.currency, 'CNY', 'a refused price leaves the old one');
  config.price = undefined;
  assert.equal(config.price, undefined);
});

test('COST-1 COST-2 sumUsages sums cached and reasoning tokens and costs per currency, exactly', () => {
  const u = (cost, extra = {}) => ({ promptTokens: 10, completionTokens: 1, totalTokens: 11, ...extra, ...(cost ? { cost } : {}) });
  const summary = native.sumUsages([u(USD(5), { cachedTokens: 4 }), u(CNY(7)), u(USD(6), { reasoningTokens: 1 }), u(null)]);
  assert.deepEqual(costs(summary), [CNY(7), USD(11)]);
  assert.equal(summary.callCount, 4);
  assert.equal(summary.pricedCallCount, 3);
  assert.deepEqual(JSON.parse(JSON.stringify(summary)), {
    promptTokens: 40, completionTokens: 4, totalTokens: 44, cachedTokens: 4, reasoningTokens: 1, callCount: 4, pricedCallCount: 3,
    costs: [{ currency: 'CNY', nanos: 7 }, { currency: 'USD', nanos: 11 }],
  });
  assert.throws(() => native.sumUsages([u({ currency: 'USD', nanos: 1.5 })]), (e) => e.code === 'invalid_argument');
  assert.throws(() => native.sumUsages([u({ currency: '', nanos: 1 })]), (e) => e.code === 'invalid_argument');
});

test('COST-1 a state exported before cached tokens and money imports with its cached tokens summed and no costs', async () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const state = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'cost', 'main-5545a0c-state.json'), 'utf8');
  const model = new RoutedModel([]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  await runtime.importState(state);
  const totals = runtime.totalUsage();
  assert.equal(totals.parent.cachedTokens, 4 * 448);
  assert.equal(totals.parent.reasoningTokens, 4 * 3);
  assert.equal(totals.children.callCount, 1);
  assert.equal(totals.total.costs, undefined);
  assert.ok(!('costs' in totals.total), 'costs is absent when no call was priced');
  assert.equal(totals.total.pricedCallCount, 0);
});
