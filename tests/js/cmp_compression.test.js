'use strict';
// CMP / MEM through the N-API surface (NAPI-2): ContextCompressor, compressNow(),
// CompressResult, compression inside run(), episodic memory and retrieve_memory, against
// a scripted model that answers the compressor's summary requests too.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, BASE_URL, API_KEY, completion, snapshot, SNAPSHOT_SECTIONS, isSummaryRequest, isPrefixSummaryRequest, pairingProblems,
  ScriptedModel, runtimeConfig, waitFor, deferred,
} = require('./support');

const LOOKUP_SCHEMA = JSON.stringify({ type: 'object', properties: { q: { type: 'string' } } });

/** Text long enough that a short snapshot is much smaller than it (the core requires that). */
function longText(topic, chars = 2400) {
  const sentence = `Notes on ${topic}: the loss rate of the baguette, not the toast, is what matters. `;
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars);
}

function lookupRegistry(calls = []) {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('lookup', 'Looks something up', LOOKUP_SCHEMA), async (call) => {
    calls.push(call);
    return { content: `result for ${JSON.parse(call.argumentsJson).q}` };
  });
  return registry;
}

/**
 * An exported state with six messages, the tool pair in the middle, and a last usage of
 * `promptTokens`. With keepRecentMessageCount 2 the naive split (4) would cut the tool
 * call from its result; the safe split is 3.
 */
function stateJson({ promptTokens = 5000 } = {}) {
  return JSON.stringify({
    version: 1,
    session_id: 'cmp-session',
    history: {
      messages: [
        { role: 'user', content: longText('the goal') },
        { role: 'assistant', content: longText('a first answer') },
        { role: 'user', content: longText('a follow-up') },
        { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"flour"}' }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'flour: 500 g', is_error: false },
        { role: 'assistant', content: 'KEPT: the final answer so far.' },
      ],
      episodic_memories: [],
    },
    usages: [{ prompt_tokens: promptTokens, completion_tokens: 40, total_tokens: promptTokens + 40 }],
  });
}

const SUMMARY_USAGE = { prompt_tokens: 1500, completion_tokens: 90, total_tokens: 1590 };

/** A compressor with a small threshold whose summary fits one request (no chunking). */
function smallCompressor(prompt) {
  const compressor = new native.ContextCompressor(1000, 2, prompt, 1);
  compressor.summarizerMaxInputTokens = 100000;
  return compressor;
}

/**
 * Checks a summary request. On the conversation's own bytes (COST-3, the summarizer being
 * the conversation's model): the conversation holds `includes`, and the instruction (the
 * last message) carries the prompt and says the last `kept` messages stay. From a
 * transcript: the prompt, and a conversation holding `includes` but not `excludes`.
 */
function assertSummaryRequest(body, { includes = [], excludes = [], kept, prompt = native.DEFAULT_SUMMARY_PROMPT } = {}) {
  assert.ok(isSummaryRequest(body));
  if (isPrefixSummaryRequest(body)) {
    const instruction = body.messages.at(-1).content;
    assert.ok(instruction.includes(prompt.trimEnd()), 'the instruction carries the summary prompt');
    if (kept !== undefined) assert.ok(instruction.includes(`except the last ${kept} `), `the last ${kept} messages stay`);
    const conversation = body.messages.slice(0, -1).map((m) => String(m.content)).join('\n');
    for (const text of includes) assert.ok(conversation.includes(text), `the conversation contains ${text.slice(0, 40)}`);
    return;
  }
  assert.equal(body.messages[0].content, prompt);
  const conversation = body.messages[1].content;
  for (const text of includes) assert.ok(conversation.includes(text), `summary input contains ${text.slice(0, 40)}`);
  for (const text of excludes) assert.ok(!conversation.includes(text), `summary input lacks ${text.slice(0, 40)}`);
}

test('cmp_3_context_compressor_defaults_settings_and_config_copy', () => {
  const defaults = new native.ContextCompressor();
  assert.equal(defaults.totalTokenThreshold, 64000);
  assert.equal(defaults.keepRecentMessageCount, 10);
  assert.equal(defaults.summaryPrompt, native.DEFAULT_SUMMARY_PROMPT);
  assert.equal(defaults.minMessagesToSummarize, 3);
  assert.equal(defaults.summarizerMaxInputTokens, undefined);
  assert.equal(defaults.summarizerModel, undefined);

  const c = new native.ContextCompressor(1000, 4, 'Summarize as <state_snapshot>.', 2);
  assert.deepEqual(
    [c.totalTokenThreshold, c.keepRecentMessageCount, c.summaryPrompt, c.minMessagesToSummarize],
    [1000, 4, 'Summarize as <state_snapshot>.', 2],
  );
  c.summarizerMaxInputTokens = 3000;
  assert.equal(c.summarizerMaxInputTokens, 3000);
  c.summarizerMaxInputTokens = undefined;
  assert.equal(c.summarizerMaxInputTokens, undefined);
  c.summarizerModel = new native.ModelConfig(BASE_URL, API_KEY, 'summary-model');
  assert.ok(c.summarizerModel instanceof native.ModelConfig);
  assert.equal(c.summarizerModel.model, 'summary-model');
  assert.equal('apiKey' in c.summarizerModel, false, 'the key stays write-only (LLM-4)');

  // Counts are non-negative integers; anything else is refused, not wrapped or truncated.
  assert.throws(() => new native.ContextCompressor(-1), (e) => e.code === 'invalid_config');
  assert.throws(() => new native.ContextCompressor(100, 2.5), (e) => e.code === 'invalid_config');
  assert.throws(() => { c.minMessagesToSummarize = Number.NaN; }, (e) => e.code === 'invalid_config');
  assert.throws(() => { c.summarizerMaxInputTokens = -5; }, (e) => e.code === 'invalid_config');
  assert.equal(c.minMessagesToSummarize, 2, 'a refused value changes nothing');
  // Class-typed properties take only instances of that class.
  assert.throws(() => { c.summarizerModel = { model: 'x' }; }, (e) => typeof e.code === 'string');
  assert.throws(() => { c.summarizerModel = new native.ToolRegistry(); }, (e) => typeof e.code === 'string');

  const config = runtimeConfig();
  assert.equal(config.contextCompressor, undefined, 'compression is off by default');
  config.contextCompressor = c;
  const copy = config.contextCompressor;
  assert.ok(copy instanceof native.ContextCompressor);
  assert.equal(copy.totalTokenThreshold, 1000);
  assert.equal(copy.summarizerModel.model, 'summary-model');
  c.totalTokenThreshold = 7;
  assert.equal(config.contextCompressor.totalTokenThreshold, 1000, 'the config holds a copy');
  assert.throws(() => { config.contextCompressor = new native.ModelConfig(BASE_URL, API_KEY, 'm'); }, (e) => typeof e.code === 'string');
  config.contextCompressor = undefined;
  assert.equal(config.contextCompressor, undefined);

  // The core validates the settings when the runtime is built: a summarizer window that
  // cannot hold the prompt is refused; a threshold of 0 is the custom compressor's rule
  // (every automatic attempt), not an error (issue 40 item 11).
  const tiny = new native.ContextCompressor();
  tiny.summarizerMaxInputTokens = 10;
  assert.throws(() => new native.AgentRuntime(runtimeConfig({ contextCompressor: tiny }), async () => ({ status: 500, body: '' }), new native.ToolRegistry()),
    (e) => e.code === 'invalid_config');
  const zero = runtimeConfig({ contextCompressor: new native.ContextCompressor(0) });
  assert.ok(new native.AgentRuntime(zero, async () => ({ status: 500, body: '' }), new native.ToolRegistry()));
});

test('cmp_8_default_summary_prompt_asks_for_the_five_snapshot_sections', () => {
  assert.equal(typeof native.DEFAULT_SUMMARY_PROMPT, 'string');
  assert.ok(native.DEFAULT_SUMMARY_PROMPT.includes('<state_snapshot>'));
  for (const section of SNAPSHOT_SECTIONS) {
    assert.ok(native.DEFAULT_SUMMARY_PROMPT.includes(`<${section}>`), `asks for ${section}`);
  }
});

test('cmp_5_compress_now_commits_episode_shorter_history_and_tagged_usage', async () => {
  const snap = snapshot({ overall_goal: 'Measure the baguette loss rate' });
  const model = new ScriptedModel([], {
    summarizer: (body) => {
      assertSummaryRequest(body, {
        includes: [longText('the goal'), longText('a follow-up')],
        excludes: ['KEPT: the final answer so far.', 'flour: 500 g'],
        kept: 3,
      });
      return completion({ content: `Here you go:\n${snap}`, usage: SUMMARY_USAGE });
    },
  });
  const compressor = smallCompressor();
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  runtime.importState(stateJson());
  const before = JSON.parse(runtime.historyJson());
  const events = [];
  runtime.subscribe((e) => events.push(e));

  const result = await runtime.compressNow();

  assert.deepEqual(model.problems, []);
  assert.equal(model.summaryRequests.length, 1);
  assert.equal(model.requests.length, 0);
  // A plain record (no longer a class): exactly the declared fields, absent ones null.
  assert.deepEqual(Object.keys(result).sort(), ['episodeId', 'errorCode', 'messagesArchived', 'outcome', 'reason', 'usage']);
  assert.equal(result.outcome, 'compressed');
  assert.equal(result.reason, 'compressed');
  assert.equal(typeof result.episodeId, 'string');
  assert.equal(result.errorCode, null);
  assert.equal(result.messagesArchived, 3, 'the safe split keeps the tool pair together (CMP-4)');
  assert.equal(result.usage.source, 'context_compression');
  assert.equal(result.usage.promptTokens, 1500);

  // History: the kept part only, still paired; the archived part lives in one episode.
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history, before.slice(3));
  assert.deepEqual(pairingProblems(history), []);
  const episodes = runtime.episodicMemories();
  assert.equal(episodes.length, 1);
  const [episode] = episodes;
  assert.ok(episode instanceof native.EpisodicMemory);
  assert.equal(episode.id, result.episodeId);
  assert.equal(episode.summary, snap, 'the validated snapshot, preamble dropped');
  assert.equal(episode.messageCount, 3);
  assert.deepEqual(JSON.parse(episode.archivedMessagesJson), before.slice(0, 3));
  assert.ok(episode.createdAtMs > 1.6e12);

  // MEM-1 over the live state.
  assert.deepEqual(runtime.listEpisodes().map((e) => e.id), [result.episodeId]);
  assert.equal(runtime.findEpisode(result.episodeId).summary, snap);
  assert.equal(runtime.findEpisode('no-such-snapshot'), undefined);

  // CMP-7: the usage is recorded after the commit, tagged; the next check skips on it.
  const usages = runtime.usages();
  assert.equal(usages.length, 2);
  assert.equal(usages[1].source, 'context_compression');
  assert.equal(usages[1].totalTokens, 1590);
  const state = runtime.exportState();
  const again = await runtime.compressNow();
  assert.equal(again.outcome, 'skipped');
  assert.equal(again.reason, 'last_usage_is_compression');
  assert.equal(again.usage, null);
  assert.equal(model.summaryRequests.length, 1, 'no second summary call');
  assert.equal(runtime.exportState(), state);

  await waitFor(() => events.filter((e) => e.type === 'compression').length === 2, 'two compression events');
  const [committed, skipped] = events.filter((e) => e.type === 'compression').map((e) => JSON.parse(e.payloadJson));
  assert.equal(committed.trigger, 'manual');
  assert.equal(committed.outcome, 'compressed');
  assert.equal(committed.episodeId, result.episodeId);
  assert.equal(committed.messagesBefore, 6);
  assert.equal(committed.messagesAfter, 3);
  assert.equal(skipped.reason, 'last_usage_is_compression');
});

test('cmp_6_failed_compression_leaves_state_identical', async () => {
  let reply = () => completion({ content: 'The user talked about bread. They want numbers.', usage: SUMMARY_USAGE });
  const model = new ScriptedModel([], { summarizer: () => reply() });
  const compressor = smallCompressor();
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  runtime.importState(stateJson());
  const before = runtime.exportState();

  // Prose without a snapshot: malformed_summary; its usage is reported, never recorded.
  // (Asked twice on the conversation's bytes, then from the transcript: COST-3.)
  const malformed = await runtime.compressNow();
  assert.deepEqual(model.problems, []);
  assert.equal(model.summaryRequests.length, 3);
  assert.equal(malformed.outcome, 'failed');
  assert.equal(malformed.reason, 'malformed_summary');
  assert.equal(malformed.episodeId, null);
  assert.equal(malformed.usage.source, 'context_compression');
  assert.equal(runtime.exportState(), before, 'byte-identical after a failed compression');
  assert.deepEqual(runtime.episodicMemories(), []);
  assert.equal(runtime.usages().length, 1);

  // The summarizer's HTTP call fails: llm_error with the model error's code.
  reply = () => ({ status: 401, body: '{"error":{"message":"bad key"}}' });
  const llmError = await runtime.compressNow();
  assert.equal(llmError.outcome, 'failed');
  assert.equal(llmError.reason, 'llm_error');
  assert.equal(llmError.errorCode, 'llm_auth');
  assert.equal(runtime.exportState(), before, 'byte-identical after a failed summary call');

  // Below the threshold: skipped without a call.
  const calls = model.summaryRequests.length;
  const low = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  low.importState(stateJson({ promptTokens: 999 }));
  const lowBefore = low.exportState();
  const skipped = await low.compressNow();
  assert.equal(skipped.outcome, 'skipped');
  assert.equal(skipped.reason, 'below_threshold');
  assert.equal(skipped.messagesArchived, 0);
  assert.equal(model.summaryRequests.length, calls);
  assert.equal(low.exportState(), lowBefore);
});

test('cmp_9_compression_during_run_emits_event_and_next_request_carries_snapshot', async () => {
  const input = longText('the trip plan', 3000);
  const snap = snapshot({ overall_goal: 'Plan the trip to Hangzhou', current_plan: 'Book the train next' });
  const toolCalls = [];
  const model = new ScriptedModel([
    (body) => {
      assert.equal(body.messages.at(-1).content, input);
      assert.ok(!body.messages.some((m) => m.role === 'system' && m.content.includes('<state_snapshot>')), 'nothing compressed yet');
      return completion({
        toolCalls: [{ id: 'call_a', name: 'lookup', arguments: { q: 'trains' } }],
        usage: { prompt_tokens: 5000, completion_tokens: 12, total_tokens: 5012 },
      });
    },
    (body) => {
      // CMP-9: the compressed part is gone from the messages, its snapshot is in the context.
      assert.ok(!JSON.stringify(body.messages).includes(input), 'the archived input is not sent again');
      const context = body.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n');
      assert.ok(context.includes(snap), 'the snapshot is in the system context');
      assert.ok(context.includes('retrieve_memory'));
      assert.deepEqual(body.messages.filter((m) => m.role !== 'system').map((m) => m.role), ['assistant', 'tool']);
      return completion({ content: 'Book the 9:00 train.', usage: { prompt_tokens: 800, completion_tokens: 6, total_tokens: 806 } });
    },
  ], {
    tools: ['lookup', 'retrieve_memory'],
    summarizer: (body) => {
      assertSummaryRequest(body, { includes: [input], excludes: ['result for trains'], kept: 2 });
      return completion({ content: snap, usage: SUMMARY_USAGE });
    },
  });
  const compressor = smallCompressor();
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, lookupRegistry(toolCalls));
  const events = [];
  runtime.subscribe((e) => events.push(e));

  const result = await runtime.run(input);

  assert.deepEqual(model.problems, []);
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'Book the 9:00 train.');
  assert.equal(toolCalls.length, 1);
  assert.deepEqual(model.log.map((l) => l.kind), ['turn', 'summary', 'turn']);

  const [episode] = runtime.episodicMemories();
  assert.equal(episode.summary, snap);
  assert.deepEqual(JSON.parse(episode.archivedMessagesJson).map((m) => m.role), ['user']);
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), ['assistant', 'tool', 'assistant']);
  const finished = history.find((m) => m.role === 'tool');
  assert.equal(finished.content, 'result for trains');
  assert.deepEqual(pairingProblems(history), []);
  assert.deepEqual(runtime.usages().map((u) => [u.promptTokens, u.source]),
    [[5000, undefined], [1500, 'context_compression'], [800, undefined]]);

  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  const types = events.map((e) => e.type);
  const compressionAt = types.indexOf('compression');
  assert.ok(compressionAt > 0, `a compression event among ${types}`);
  assert.equal(types.filter((t) => t === 'compression').length, 1);
  assert.ok(compressionAt < types.lastIndexOf('model_request'), 'compressed before the next model request');
  const compression = JSON.parse(events[compressionAt].payloadJson);
  assert.equal(events[compressionAt].runId, result.runId);
  assert.equal(compression.trigger, 'post_turn');
  assert.equal(compression.outcome, 'compressed');
  assert.equal(compression.reason, 'compressed');
  assert.equal(compression.episodeId, episode.id);
  assert.equal(compression.messagesBefore, 3);
  assert.equal(compression.messagesAfter, 2);
  assert.equal(compression.threshold, 1000);
  assert.equal(compression.usage.promptTokens, 1500);
  for (const e of events.filter((x) => x.type === 'model_request')) {
    const payload = JSON.parse(e.payloadJson);
    assert.equal(payload.compressionThreshold, 1000);
    assert.equal(typeof payload.estimatedPromptTokens, 'number');
  }
});

test('cmp_11_preflight_estimate_compresses_before_the_model_call', async () => {
  // No usage recorded yet: only the pre-flight estimate of the prompt can trigger.
  const state = JSON.parse(stateJson());
  state.usages = [];
  const snap = snapshot({ overall_goal: 'Measure the baguette loss rate' });
  const model = new ScriptedModel([
    (body) => {
      const context = body.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n');
      assert.ok(context.includes(snap), 'the first model call already sees the snapshot');
      assert.deepEqual(body.messages.filter((m) => m.role !== 'system').map((m) => m.content),
        ['KEPT: the final answer so far.', 'And now?']);
      return completion({ content: 'Now we weigh it.' });
    },
  ], {
    tools: ['retrieve_memory'],
    summarizer: () => completion({ content: snap, usage: SUMMARY_USAGE }),
  });
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: smallCompressor() }), model.transport, new native.ToolRegistry());
  runtime.importState(JSON.stringify(state));
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('And now?');
  assert.deepEqual(model.problems, []);
  assert.equal(result.status, 'completed');
  assert.deepEqual(model.log.map((l) => l.kind), ['summary', 'turn']);
  assert.equal(runtime.episodicMemories()[0].messageCount, 5);
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  const compression = events.find((e) => e.type === 'compression');
  const payload = JSON.parse(compression.payloadJson);
  assert.equal(payload.trigger, 'preflight');
  assert.equal(payload.outcome, 'compressed');
  assert.ok(payload.estimatedPromptTokens >= 1000, `estimate ${payload.estimatedPromptTokens}`);
});

test('mem_2_retrieve_memory_is_offered_with_a_compressor_and_reads_episodes', async () => {
  // Without a compressor: not offered.
  const plain = new ScriptedModel([(body) => {
    assert.deepEqual((body.tools || []).map((t) => t.function.name), []);
    return completion({ content: 'ok' });
  }]);
  await new native.AgentRuntime(runtimeConfig(), plain.transport, new native.ToolRegistry()).run('hi');
  assert.deepEqual(plain.problems, []);
  assert.equal(plain.requests.length, 1);

  // With one: offered next to the host tools, and it reads the live episodes.
  const episodeState = JSON.parse(stateJson({ promptTokens: 10 }));
  episodeState.history.episodic_memories.push({
    id: 'snap-7',
    summary: snapshot({ overall_goal: 'the old goal' }),
    created_at_ms: 1730000000000,
    message_count: 2,
    archived_messages: [{ role: 'user', content: 'archived question' }, { role: 'assistant', content: 'archived answer' }],
  });
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'm1', name: 'retrieve_memory', arguments: {} }] }),
    (body) => {
      const listed = JSON.parse(body.messages.at(-1).content);
      assert.equal(listed.total, 1);
      assert.equal(listed.episodes[0].snapshot_id, 'snap-7');
      return completion({ toolCalls: [{ id: 'm2', name: 'retrieve_memory', arguments: { snapshot_id: 'snap-7', offset: 1, limit: 1 } }] });
    },
    (body) => {
      const page = JSON.parse(body.messages.at(-1).content);
      assert.equal(page.total_messages, 2);
      assert.deepEqual(page.messages.map((m) => m.content), ['archived answer']);
      return completion({ toolCalls: [{ id: 'm3', name: 'retrieve_memory', arguments: { snapshot_id: 'snap-7', limit: 500 } }] });
    },
    (body) => {
      const bad = JSON.parse(body.messages.at(-1).content);
      assert.equal(bad.error.code, 'invalid_limit', 'limit > 100 is a tool error with a code, not a crash');
      return completion({ content: 'The old goal was found.' });
    },
  ], { tools: ['lookup', 'retrieve_memory'] });
  const compressor = new native.ContextCompressor(100000, 2);
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, lookupRegistry());
  runtime.importState(JSON.stringify(episodeState));
  const result = await runtime.run('What was the old goal?');
  assert.deepEqual(model.problems, []);
  assert.equal(result.status, 'completed');
  assert.equal(model.requests.length, 4);

  // The built-in name is taken while compression is on.
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('retrieve_memory', 'Mine', '{"type":"object"}'), async () => ({ content: '' }));
  assert.throws(() => new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, registry),
    (e) => e.code === 'tool_name_duplicate');
});

test('cmp_3_summarizer_model_and_prompt_are_used_for_summaries', async () => {
  const snap = snapshot();
  const prompt = `Custom prompt: reply with one <state_snapshot> holding ${SNAPSHOT_SECTIONS.join(', ')}.`;
  const model = new ScriptedModel([], {
    summaryModel: 'summary-model',
    summarizer: (body) => {
      assertSummaryRequest(body, { prompt });
      return completion({ content: snap, usage: SUMMARY_USAGE });
    },
  });
  const compressor = smallCompressor(prompt);
  compressor.summarizerModel = new native.ModelConfig(BASE_URL, API_KEY, 'summary-model');
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  runtime.importState(stateJson());
  const result = await runtime.compressNow();
  assert.deepEqual(model.problems, []);
  assert.equal(result.outcome, 'compressed');
  assert.equal(model.summaryRequests[0].body.model, 'summary-model');
});

test('cmp_10_summarizer_max_input_tokens_summarizes_in_chunks', async () => {
  const model = new ScriptedModel([], {
    summarizer: (body, index) => {
      const user = body.messages[1].content;
      assert.equal(user.includes('<previous_snapshot>'), index > 0, 'later chunks fold in the snapshot so far');
      return completion({ content: snapshot({ overall_goal: `goal after chunk ${index}` }), usage: SUMMARY_USAGE });
    },
  });
  const compressor = new native.ContextCompressor(1000, 2, undefined, 1);
  compressor.summarizerMaxInputTokens = 1200;
  const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: compressor }), model.transport, new native.ToolRegistry());
  runtime.importState(stateJson());
  const result = await runtime.compressNow();
  assert.deepEqual(model.problems, []);
  assert.equal(result.outcome, 'compressed');
  assert.ok(model.summaryRequests.length > 1, `${model.summaryRequests.length} summary calls`);
  const last = model.summaryRequests.length - 1;
  assert.match(runtime.episodicMemories()[0].summary, new RegExp(`goal after chunk ${last}`));
  // One usage for the whole attempt, summing the calls.
  assert.equal(result.usage.promptTokens, 1500 * model.summaryRequests.length);
});

test('napi_2_compress_now_without_compressor_and_during_a_run', async () => {
  const gate = deferred();
  const model = new ScriptedModel([async () => { await gate.promise; return completion({ content: 'done' }); }]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  const idle = await runtime.compressNow();
  assert.equal(idle.outcome, 'skipped');
  assert.equal(idle.reason, 'no_usage');

  const running = runtime.run('one');
  await assert.rejects(runtime.compressNow(), (e) => e instanceof Error && e.code === 'run_in_progress');
  gate.resolve();
  assert.equal((await running).status, 'completed');
});

test('cmp_6_compress_now_claims_the_run_slot_before_returning', async () => {
  // compressNow() takes the run slot synchronously, like run(): a run() in the same tick
  // is refused deterministically, whether or not the compression has started yet (here it
  // cannot have finished: its summary call needs this JS thread). Before, the slot was
  // taken on a worker thread, and such a run() usually won.
  for (let i = 0; i < 20; i += 1) {
    const summaryGate = deferred();
    const model = new ScriptedModel([() => completion({ content: 'after the compression' })], {
      summarizer: async () => {
        await summaryGate.promise;
        return completion({ content: snapshot(), usage: SUMMARY_USAGE });
      },
    });
    const runtime = new native.AgentRuntime(runtimeConfig({ contextCompressor: smallCompressor() }), model.transport,
      new native.ToolRegistry());
    runtime.importState(stateJson());
    const compressing = runtime.compressNow();
    await assert.rejects(runtime.run('same tick'), (e) => e instanceof Error && e.code === 'run_in_progress', `attempt ${i}`);
    await assert.rejects(runtime.compressNow(), (e) => e.code === 'run_in_progress');
    assert.throws(() => runtime.importState(stateJson()), (e) => e.code === 'run_in_progress');
    summaryGate.resolve();
    assert.equal((await compressing).outcome, 'compressed');
    // The refused run left no trace; the slot is free again afterwards.
    assert.ok(!runtime.historyJson().includes('same tick'));
    assert.equal((await runtime.run('next')).finalText, 'after the compression');
    assert.deepEqual(model.problems, []);
  }
});
