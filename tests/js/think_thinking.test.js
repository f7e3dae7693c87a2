'use strict';
// THINK-1..THINK-5 through the N-API module, as an ArkTS app drives it: ModelConfig's
// thinking controls, and tool loops against strict thinking providers (tests/js/thinking.js)
// whole and streamed — several rounds and runs, exportState/importState, a SessionStore
// resume, compression, a clone child — on DeepSeek, Kimi and Claude rules.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { native, API_KEY, waitFor } = require('./support');
const { FLAVORS, MODELS, BASE_URL, ThinkingProvider } = require('./thinking');

function model(flavor, stream) {
  const m = new native.ModelConfig(BASE_URL, API_KEY, MODELS[flavor]);
  if (flavor === 'anthropic') m.wireFormat = 'anthropic';
  m.stream = stream;
  m.maxAttempts = 1;
  return m;
}

function weatherTools() {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('weather', 'Weather for a city', JSON.stringify({ type: 'object' })),
    async (call) => ({ content: `weather in ${JSON.parse(call.argumentsJson).city}: sunny` }));
  return registry;
}

function runtime(flavor, stream, { provider = new ThinkingProvider(flavor, { rounds: 2, key: API_KEY }), configure, configureModel, store } = {}) {
  const m = model(flavor, stream);
  if (configureModel) configureModel(m);
  const config = new native.AgentRuntimeConfig(m);
  config.systemPrompt = 'You are a weather assistant.';
  if (configure) configure(config);
  const rt = store ? new native.AgentRuntime(config, provider.transport, weatherTools(), store)
    : new native.AgentRuntime(config, provider.transport, weatherTools());
  return { rt, provider };
}

const MODES = FLAVORS.flatMap((f) => [[f, false], [f, true]]);

test('think_2_think_5_tool_loops_complete_against_each_strict_provider_whole_and_streamed', async () => {
  for (const [flavor, stream] of MODES) {
    const { rt, provider } = runtime(flavor, stream);
    const events = [];
    rt.subscribe((e) => events.push(e));
    for (let run = 0; run < 2; run += 1) {
      // eslint-disable-next-line no-await-in-loop
      const result = await rt.run(`run ${run}: the weather?`);
      assert.equal(result.status, 'completed', `${flavor} ${stream}: ${provider.refusals}`);
      assert.match(result.finalText, /^done/);
    }
    assert.deepEqual(provider.refusals, []);
    assert.equal(provider.bodies.length, 6);
    // THINK-1: the reasoning kept as received, on the wire format's own fields.
    const history = JSON.parse(rt.historyJson());
    const answers = history.filter((m) => m.role === 'assistant');
    if (flavor === 'anthropic') {
      assert.ok(answers.every((m) => m.thinking && m.thinking[0].signature.startsWith('EqQB')), `${flavor}`);
      assert.ok(answers.some((m) => m.thinking.some((b) => b.type === 'redacted_thinking')));
    } else {
      assert.ok(answers.every((m) => typeof m.reasoning === 'string'), `${flavor}`);
      assert.ok(answers.some((m) => m.reasoning === ''), 'an empty reasoning is kept apart from none');
    }
    // THINK-5: reasoning tokens in every usage and the total; reasoning deltas, redacted marked.
    const usages = rt.usages();
    assert.ok(usages.every((u) => u.reasoningTokens > 0 || u.reasoningTokens === 1), JSON.stringify(usages));
    const sum = usages.reduce((s, u) => s + u.reasoningTokens, 0);
    assert.equal(rt.totalUsage().total.reasoningTokens, sum);
    await waitFor(() => events.filter((e) => e.type === 'run_finished').length === 2, 'run_finished');
    const reasoning = events.filter((e) => e.type === 'reasoning_delta').map((e) => JSON.parse(e.payloadJson));
    assert.ok(reasoning.map((p) => p.delta).join('').includes('the user wants the weather'), `${flavor} ${stream}`);
    if (flavor === 'anthropic') assert.ok(reasoning.some((p) => p.redacted === true && p.delta === ''));
    else assert.ok(reasoning.every((p) => p.redacted === undefined));
  }
});

test('think_2_without_replay_each_strict_provider_refuses_the_second_call', async () => {
  for (const flavor of FLAVORS) {
    const { rt, provider } = runtime(flavor, true, { configureModel: (m) => { m.reasoningReplay = 'none'; } });
    await assert.rejects(rt.run('the weather?'), (e) => e.code === 'llm_bad_request');
    assert.equal(provider.refusals.length, 1, flavor);
  }
});

// README, "Sent back": DeepSeek and Kimi, thinking, refuse any tool-call message without
// `reasoning_content`, also one whose answer never had reasoning (a session kept from
// `deepseek-chat`, before thinking): it goes back with "", and without the field when
// thinking is 'off'.
test('think_2_js_a_tool_call_answer_kept_from_before_thinking_goes_back_with_an_empty_field', async () => {
  const OLD = [
    { role: 'user', content: 'the weather?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'old_1', name: 'weather', arguments: '{"city":"Oslo"}' }] },
    { role: 'tool', tool_call_id: 'old_1', content: 'sunny' },
    { role: 'assistant', content: 'Sunny.' },
  ];
  for (const flavor of ['deepseek', 'kimi']) {
    for (const [stream, thinking] of [[true, undefined], [false, undefined], [true, 'off']]) {
      const provider = new ThinkingProvider(flavor, { rounds: 1, key: API_KEY });
      const { rt } = runtime(flavor, stream, { provider, configureModel: (m) => { if (thinking) m.thinking = thinking; } });
      const state = JSON.parse(rt.exportState());
      state.history.messages = OLD;
      rt.importState(JSON.stringify(state));
      assert.equal((await rt.run('and tomorrow?')).status, 'completed', `${flavor} ${thinking}: ${provider.refusals}`);
      assert.deepEqual(provider.refusals, []);
      assert.equal(provider.bodies.length, 2);
      for (const raw of provider.bodies) {
        const old = JSON.parse(raw).messages.find((m) => m.tool_calls && m.tool_calls[0].id === 'old_1');
        if (thinking === 'off') assert.ok(!('reasoning_content' in old), raw);
        else assert.equal(old.reasoning_content, '', `${flavor}: ${raw}`);
        const text = JSON.parse(raw).messages.find((m) => m.content === 'Sunny.');
        assert.ok(!('reasoning_content' in text), 'an answer without calls needs none');
      }
    }
  }
});

test('think_1_export_import_and_a_session_store_continue_an_open_tool_cycle', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-think-'));
  try {
    for (const [flavor, stream] of MODES) {
      const provider = new ThinkingProvider(flavor, { rounds: 2, key: API_KEY });
      const dbPath = path.join(dir, `${flavor}-${stream}.db`);
      const store = native.SessionStore.open(dbPath);
      const first = runtime(flavor, stream, { provider, store, configure: (c) => { c.sessionId = 's'; c.maxIterations = 1; } }).rt;
      assert.equal((await first.run('the weather?')).status, 'max_iterations');
      const exported = first.exportState();
      const history = first.historyJson();
      assert.equal(first.detachStore(), true);
      // A new runtime on a new handle of the file: the reasoning is read back exactly.
      const resumed = runtime(flavor, stream, { provider, store: native.SessionStore.open(dbPath), configure: (c) => { c.sessionId = 's'; } }).rt;
      assert.equal(resumed.historyJson(), history, `${flavor}: the store keeps the reasoning as received`);
      assert.equal((await resumed.run('go on')).status, 'completed', `${flavor}: ${provider.refusals}`);
      resumed.detachStore();
      const imported = runtime(flavor, stream, { provider }).rt;
      imported.importState(exported);
      assert.equal(imported.historyJson(), history);
      assert.equal((await imported.run('go on')).status, 'completed', `${flavor}: ${provider.refusals}`);
      assert.deepEqual(provider.refusals, []);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('think_3_both_summarizer_paths_carry_the_reasoning', async () => {
  for (const flavor of FLAVORS) {
    for (const chunked of [false, true]) {
      const provider = new ThinkingProvider(flavor, { rounds: 3, key: API_KEY });
      const { rt } = runtime(flavor, true, {
        provider,
        configure: (c) => {
          const compressor = new native.ContextCompressor(300, 2, undefined, 2);
          // The chunked path: a summarizer on another model of the same provider.
          if (chunked) {
            const summarizer = model(flavor, true);
            summarizer.model = `${MODELS[flavor]}-summarizer`;
            compressor.summarizerModel = summarizer;
          }
          c.contextCompressor = compressor;
        },
      });
      // eslint-disable-next-line no-await-in-loop
      await rt.run('run 0');
      // eslint-disable-next-line no-await-in-loop
      await rt.run('run 1');
      assert.ok(rt.episodicMemories().length > 0, `${flavor}: a compression was committed`);
      assert.deepEqual(provider.refusals, []);
      const summaries = provider.bodies.map((b) => JSON.parse(b)).filter((b) => provider.isSummary(b)).map((b) => JSON.stringify(b));
      assert.ok(summaries.length > 0);
      const carried = chunked ? '[assistant reasoning] Step' : (flavor === 'anthropic' ? '"type":"thinking"' : 'reasoning_content');
      assert.ok(summaries.every((b) => b.includes(carried)), `${flavor} chunked=${chunked}: THINK-3`);
    }
  }
});

test('think_5_cancel_mid_reasoning_leaves_a_paired_history_and_the_next_run_completes', async () => {
  for (const flavor of FLAVORS) {
    const provider = new ThinkingProvider(flavor, { rounds: 2, key: API_KEY });
    provider.hangAt = 1; // the second call, after a tool round, mid-reasoning
    const { rt } = runtime(flavor, true, { provider });
    const events = [];
    rt.subscribe((e) => events.push(e));
    const running = rt.run('the weather?');
    await waitFor(() => events.some((e) => e.type === 'reasoning_delta' && JSON.parse(e.payloadJson).iteration === 2), 'the second call reasoning');
    rt.cancel();
    assert.equal((await running).status, 'cancelled', flavor);
    const history = JSON.parse(rt.historyJson());
    assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool'], 'the half answer is not kept');
    assert.equal((await rt.run('again')).status, 'completed', `${flavor}: ${provider.refusals}`);
    assert.deepEqual(provider.refusals, []);
  }
});

test('think_1_a_clone_child_on_a_thinking_model_completes_its_tool_loop', async () => {
  for (const [flavor, stream] of MODES) {
    const { rt, provider } = runtime(flavor, stream, { configure: (c) => { c.allowClone = true; } });
    const result = await rt.run('ask a helper for the weather');
    assert.equal(result.status, 'completed', `${flavor}: ${provider.refusals}`);
    assert.ok(rt.totalUsage().children.reasoningTokens > 0);
    assert.deepEqual(provider.refusals, []);
  }
});

test('think_4_model_config_thinking_controls_read_back_and_reach_the_body', async () => {
  const m = new native.ModelConfig('https://api.deepseek.com', API_KEY, 'deepseek-v4-flash');
  assert.equal(m.provider, undefined, 'unset: recognised from the base URL');
  assert.equal(m.thinking, undefined);
  assert.equal(m.reasoningReplay, 'auto');
  assert.deepEqual(m.extraBody, {});
  m.thinking = 'off';
  assert.equal(m.thinking, 'off');
  m.thinking = { effort: 'high' };
  assert.deepEqual({ ...m.thinking }, { effort: 'high' });
  m.thinking = { budgetTokens: 2048 };
  assert.equal(m.thinking.budgetTokens, 2048);
  m.thinking = undefined;
  assert.equal(m.thinking, undefined);
  m.provider = 'kimi';
  assert.equal(m.provider, 'kimi');
  m.provider = undefined;
  m.extraBody = { user_id: 'u-1', tags: ['a', 1] };
  assert.deepEqual(m.extraBody, { user_id: 'u-1', tags: ['a', 1] });
  // Off switches each provider's own field; the body carries extraBody too.
  for (const flavor of FLAVORS) {
    for (const stream of [false, true]) {
      const { rt, provider } = runtime(flavor, stream, {
        configureModel: (m) => { m.thinking = 'off'; m.extraBody = { user_id: 'u-1' }; },
      });
      // eslint-disable-next-line no-await-in-loop
      assert.equal((await rt.run('the weather?')).status, 'completed');
      for (const raw of provider.bodies) {
        const body = JSON.parse(raw);
        assert.deepEqual(body.thinking, { type: 'disabled' }, flavor);
        assert.equal(body.user_id, 'u-1');
        assert.ok(!raw.includes('reasoning_content') && !raw.includes('"type":"thinking"'), 'no reasoning the provider never sent');
      }
    }
  }
});

test('think_4_what_a_thinking_model_refuses_is_refused_when_the_runtime_is_created', () => {
  const create = (m, configure) => {
    configure(m);
    const config = new native.AgentRuntimeConfig(m);
    return () => new native.AgentRuntime(config, async () => ({ status: 500, body: '' }), weatherTools());
  };
  assert.throws(create(model('deepseek', true), (m) => { m.thinking = { budgetTokens: 2048 }; }), (e) => e.code === 'thinking_unsupported');
  assert.throws(create(model('deepseek', true), (m) => { m.extraBody = { messages: [] }; }), (e) => e.code === 'extra_body_conflict');
  assert.throws(create(model('anthropic', true), (m) => {
    m.thinking = 'on';
    m.temperature = 0.2;
  }), (e) => e.code === 'thinking_conflict');
  const qwen = new native.ModelConfig('https://dashscope.aliyuncs.com/compatible-mode/v1', API_KEY, 'qwen3.5-plus');
  assert.throws(create(qwen, (m) => { m.thinking = 'on'; }), (e) => e.code === 'thinking_conflict', 'Qwen thinks only in streamed calls');
  create(model('deepseek', true), (m) => { m.thinking = 'off'; })();
});
