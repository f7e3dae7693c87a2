'use strict';
// README promises of "## Provider wire formats" and "## Thinking models" (with the matching
// index.d.ts doc comments on ModelConfig.wireFormat, thinking, reasoningReplay, extraBody,
// ModelUsage and ReasoningDeltaPayload) that no other Node test checked, driven through
// the public N-API surface as an app with only the docs would: SSE bodies written one byte
// at a time, reasoning interleaved with tool-call deltas, signatures in odd places, usage
// reports that repeat themselves, tool loops across an export/import and through a
// compression, and providers that refuse what the real ones refuse (the strict rules of
// tests/js/thinking.js and tests/js/wire_fakes.js). Each test quotes the sentence it checks;
// a sentence the library does not keep is a `todo` test whose reason starts "FINDING".

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, API_KEY, snapshot, waitFor, COMPRESSION_MARK } = require('./support');
const { ThinkingProvider } = require('./thinking');
const { FAKES } = require('./wire_fakes');

const JSON_HEADERS = [{ name: 'content-type', value: 'application/json' }];
const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];
const CITY_SCHEMA = JSON.stringify({ type: 'object', properties: { city: { type: 'string' } } });
const header = (request, name) => (request.headers.find((h) => h.name.toLowerCase() === name) || {}).value;
const isReasoningBlock = (b) => b.type === 'thinking' || b.type === 'redacted_thinking';

// ------------------------------------------------------------------ wire pieces

/** One Chat Completions SSE chunk. */
function chunk(delta, finish = null) {
  return `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}
const usageChunk = (usage) => `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', choices: [], usage })}\n\n`;
const DONE = 'data: [DONE]\n\n';

/** One Anthropic Messages SSE event. */
const aEvent = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** A whole JSON answer. */
const whole = (body) => ({ status: 200, headers: JSON_HEADERS, body: JSON.stringify(body) });

/** Streams `text` one byte per write (multi-byte characters split across writes), then ends. */
function everyByte(sink, text) {
  setImmediate(() => {
    for (const b of Buffer.from(text)) sink.writeBytes(Uint8Array.of(b));
    sink.end();
  });
  return { status: 200, headers: SSE_HEADERS, streamed: true };
}

/** Streams `events` one event per write. */
function streamed(sink, events) {
  setImmediate(() => {
    for (const e of events) sink.write(e);
    sink.end();
  });
  return { status: 200, headers: SSE_HEADERS, streamed: true };
}

/**
 * A Chat Completions answer, whole or streamed: `reasoning` under `reasoningKey`
 * (`reasoning_content`, or `reasoning` as Ollama and vLLM send it; left out when undefined),
 * `text`, and `calls` ([{ id, name, args }]).
 */
function chatAnswer(sink, stream, { reasoning, reasoningKey = 'reasoning_content', text = null, calls = [], usage }) {
  const finish = calls.length > 0 ? 'tool_calls' : 'stop';
  const u = usage || { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 };
  if (!stream) {
    const message = { role: 'assistant', content: text };
    if (reasoning !== undefined) message[reasoningKey] = reasoning;
    if (calls.length > 0) message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    return whole({ id: 'chatcmpl-w', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: finish }], usage: u });
  }
  const events = [];
  const first = { role: 'assistant', content: null };
  if (reasoning !== undefined) first[reasoningKey] = reasoning;
  events.push(chunk(first));
  if (text !== null) events.push(chunk({ content: text }));
  calls.forEach((c, index) => {
    const args = JSON.stringify(c.args);
    events.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: args.slice(0, 3) } }] }));
    events.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(3) } }] }));
  });
  events.push(chunk({}, finish), usageChunk(u), DONE);
  return streamed(sink, events);
}

/** An Anthropic Messages answer, whole or streamed, from its content blocks. */
function anthropicAnswer(sink, stream, content, { stopReason, usage } = {}) {
  const stop = stopReason || (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const u = usage || { input_tokens: 40, output_tokens: 9 };
  if (!stream) return whole({ id: 'msg_w', type: 'message', role: 'assistant', model: 'm', content, stop_reason: stop, usage: u });
  const events = [aEvent('message_start', { message: { id: 'msg_s', type: 'message', role: 'assistant', content: [], usage: { ...u, output_tokens: 1 } } })];
  content.forEach((b, index) => {
    const delta = (d) => events.push(aEvent('content_block_delta', { index, delta: d }));
    if (b.type === 'thinking') {
      events.push(aEvent('content_block_start', { index, content_block: { type: 'thinking', thinking: '' } }));
      if (b.thinking) delta({ type: 'thinking_delta', thinking: b.thinking });
      delta({ type: 'signature_delta', signature: b.signature });
    } else if (b.type === 'redacted_thinking') {
      events.push(aEvent('content_block_start', { index, content_block: b }));
    } else if (b.type === 'text') {
      events.push(aEvent('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      delta({ type: 'text_delta', text: b.text });
    } else {
      events.push(aEvent('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }));
      delta({ type: 'input_json_delta', partial_json: JSON.stringify(b.input) });
    }
    events.push(aEvent('content_block_stop', { index }));
  });
  events.push(aEvent('message_delta', { delta: { stop_reason: stop }, usage: { output_tokens: u.output_tokens } }), aEvent('message_stop', {}));
  return streamed(sink, events);
}

/** A plain text answer on `wire`. */
function textReply(wire, stream, sink, text = 'ok') {
  return wire === 'anthropic' ? anthropicAnswer(sink, stream, [{ type: 'text', text }]) : chatAnswer(sink, stream, { text });
}

// ------------------------------------------------------------------ runtime pieces

function registry(names = ['weather'], result = (call) => `sunny in ${JSON.parse(call.argumentsJson).city || 'town'}`) {
  const r = new native.ToolRegistry();
  for (const name of names) r.register(new native.ToolDefinition(name, `The ${name} tool`, CITY_SCHEMA), async (call) => ({ content: result(call) }));
  return r;
}

function modelOf(url, model, { wire, stream = false, configure } = {}) {
  const m = new native.ModelConfig(url, API_KEY, model);
  if (wire) m.wireFormat = wire;
  m.stream = stream;
  m.maxAttempts = 1;
  if (configure) configure(m);
  return m;
}

function runtimeOf(model, transport, tools = new native.ToolRegistry(), configure) {
  const config = new native.AgentRuntimeConfig(model);
  config.systemPrompt = 'You are a weather assistant.';
  if (configure) configure(config);
  return new native.AgentRuntime(config, transport, tools);
}

/** Every event of `rt`, payloads parsed, in arrival order. */
function listen(rt) {
  const events = [];
  rt.subscribe((e) => events.push({ type: e.type, ...JSON.parse(e.payloadJson) }));
  return events;
}
const finished = (events, n = 1) => waitFor(() => events.filter((e) => e.type === 'run_finished').length >= n, `${n} run_finished`);

/** The raw body up to (not including) its last `cache_control` breakpoint. */
const upToLastBreakpoint = (raw) => raw.slice(0, raw.lastIndexOf(',"cache_control"'));
const breakpoints = (raw) => raw.split('"cache_control"').length - 1;

/** A fresh rule book of the strict Anthropic fake (tests/js/thinking.js) and its checks. */
function anthropicRules() {
  const rules = new ThinkingProvider('anthropic');
  return {
    rules,
    /** What a strict Anthropic server refuses in `request` (null: accepted). */
    problem(request, baseUrl) {
      const p = FAKES.anthropic.check(request, baseUrl, API_KEY).problems;
      if (p.length > 0) return p.join('; ');
      return rules.checkAnthropic(JSON.parse(request.body));
    },
    refuse: (message) => rules.refuse(message),
    isSummary: (body) => rules.isSummary(body),
  };
}

// ================================================================== Thinking models: kept and sent back

// "A Chat Completions answer's `reasoning_content` (or `reasoning`, Ollama and vLLM) is the
// message's `reasoning` — `""` when the provider sent an empty field, absent when it sent
// none." … "on `'openai'`, `reasoning_content` on every assistant message with tool calls,
// exactly as received (`""` included)" … "`reasoning_delta` events as the reasoning streams"
// (index.d.ts ReasoningDeltaPayload: "Never part of the answer.")
test('think_1_think_2_think_5_js_deepseek_reasoning_split_at_every_byte_and_interleaved_with_tool_call_deltas_is_kept_shown_and_sent_back_exactly', async () => {
  const BASE = 'https://api.deepseek.com';
  const rules = new ThinkingProvider('deepseek');
  const PIECES = ['Der Nutzer will «天气» 🌦️ für ', 'Paris — und Berlin?\n', 'Zwei Aufrufe, "quoted" \\ back\u2028'];
  const REASONING = PIECES.join('');
  const bodies = [];
  const refusals = [];
  const transport = async (request, sink) => {
    const body = JSON.parse(request.body);
    bodies.push(body);
    const p = [];
    if (request.url !== `${BASE}/chat/completions`) p.push(`url ${request.url}`);
    if (header(request, 'authorization') !== `Bearer ${API_KEY}`) p.push('the key header');
    const rule = rules.checkChat(body);
    if (rule) p.push(rule);
    // An answer that had no reasoning gets none back (DeepSeek's rule, and the README's).
    for (const m of body.messages) if (m.role === 'assistant' && !m.tool_calls && 'reasoning_content' in m) p.push('reasoning_content on a text answer without reasoning');
    if (p.length > 0) {
      refusals.push(...p);
      return rules.refuse(p.join('; '));
    }
    const n = bodies.length - 1;
    let events;
    if (n === 0) {
      rules.given.set('call_a', REASONING);
      events = [
        chunk({ role: 'assistant', content: null, reasoning_content: PIECES[0] }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":' } }] }),
        chunk({ content: null, reasoning_content: PIECES[1] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '' } }] }),
        chunk({ content: null, reasoning_content: PIECES[2] }),
        chunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":"Berlin"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk({ prompt_tokens: 50, completion_tokens: 40, total_tokens: 90, completion_tokens_details: { reasoning_tokens: 30 } }),
        DONE,
      ];
    } else if (n === 1) {
      rules.given.set('call_c', '');
      events = [
        chunk({ role: 'assistant', content: null, reasoning_content: '' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_c', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }] }),
        chunk({}, 'tool_calls'), DONE,
      ];
    } else if (n === 2) {
      // DeepSeek with thinking off writes `reasoning_content: null` in every delta: none.
      events = [chunk({ role: 'assistant', content: 'Sunny ', reasoning_content: null }), chunk({ content: 'everywhere.', reasoning_content: null }), chunk({}, 'stop'), DONE];
    } else {
      events = [chunk({ role: 'assistant', content: 'Same tomorrow.' }), chunk({}, 'stop'), DONE];
    }
    return everyByte(sink, events.join(''));
  };
  const rt = runtimeOf(modelOf(BASE, 'deepseek-v4-flash', { stream: true }), transport, registry());
  const events = listen(rt);

  const first = await rt.run('Weather in Paris, Berlin and Rome?');
  await finished(events);
  const second = await rt.run('And tomorrow?');
  await finished(events, 2);

  assert.deepEqual(refusals, []);
  assert.equal(first.status, 'completed');
  assert.equal(first.finalText, 'Sunny everywhere.', 'reasoning is never part of the answer');
  assert.equal(second.finalText, 'Same tomorrow.');
  assert.equal(bodies.length, 4);
  // Kept as received: the whole reasoning, "" apart from none.
  const answers = JSON.parse(rt.historyJson()).filter((m) => m.role === 'assistant');
  assert.equal(answers[0].reasoning, REASONING);
  assert.deepEqual(answers[0].tool_calls.map((c) => [c.id, JSON.parse(c.arguments)]), [['call_a', { city: 'Paris' }], ['call_b', { city: 'Berlin' }]]);
  assert.equal(answers[1].reasoning, '', 'an empty field is ""');
  assert.ok(!('reasoning' in answers[2]), `a null field is no reasoning: ${JSON.stringify(answers[2])}`);
  // Sent back exactly, "" included, nothing where there was none.
  const replayed = bodies[3].messages.filter((m) => m.role === 'assistant');
  assert.equal(replayed[0].reasoning_content, REASONING);
  assert.equal(replayed[1].reasoning_content, '');
  assert.ok(!('reasoning_content' in replayed[2]));
  // Shown as it streams: every piece, whole characters, the last after a tool call began.
  const firstCall = events.slice(0, events.findIndex((e) => e.type === 'model_response'));
  const reasoning = firstCall.filter((e) => e.type === 'reasoning_delta');
  assert.equal(reasoning.map((e) => e.delta).join(''), REASONING);
  assert.ok(reasoning.every((e) => !e.delta.includes('\uFFFD') && e.redacted === undefined && e.iteration === 1));
  const lastReasoning = firstCall.findLastIndex((e) => e.type === 'reasoning_delta');
  const firstToolDelta = firstCall.findIndex((e) => e.type === 'tool_call_delta');
  assert.ok(firstToolDelta >= 0 && firstToolDelta < lastReasoning, 'reasoning after a tool-call delta is shown when it arrives');
  assert.ok(events.filter((e) => e.type === 'text_delta').every((e) => !e.delta.includes('Nutzer')));
  assert.equal(rt.usages()[0].reasoningTokens, 30);
});

// "A Chat Completions answer's `reasoning_content` (or `reasoning`, Ollama and vLLM) is the
// message's `reasoning` — `""` when the provider sent an empty field, absent when it sent
// none. … Both live in the history, `exportState()`/`importState()`" … "never on an answer
// whose provider sent none, so a plain OpenAI-compatible server sees nothing new" … (table,
// `other`) "`reasoning_content` of tool-call answers, where the server sent one".
test('think_1_think_2_js_ollama_reasoning_empty_and_absent_stay_apart_through_export_import_and_a_plain_server_sees_nothing_new', async () => {
  for (const stream of [false, true]) {
    const BASE = 'http://127.0.0.1:11434/v1';
    const bodies = [];
    const transport = async (request, sink) => {
      const raw = request.body;
      bodies.push(raw);
      const n = bodies.length - 1;
      const call = (id, city) => [{ id, name: 'weather', args: { city } }];
      if (n === 0) return chatAnswer(sink, stream, { reasoningKey: 'reasoning', reasoning: 'Ollama denkt «思» nach', calls: call('r1', 'Oslo') });
      if (n === 1) return chatAnswer(sink, stream, { reasoning: '', calls: call('e1', 'Lima') });
      if (n === 2) return chatAnswer(sink, stream, { calls: call('n1', 'Kyiv') });
      if (n === 3) return chatAnswer(sink, stream, { reasoningKey: 'reasoning', reasoning: 'final thoughts', text: 'Done.' });
      return chatAnswer(sink, stream, { text: 'Again.' });
    };
    const model = () => modelOf(BASE, 'llama3.3-think', { stream });
    const a = runtimeOf(model(), transport, registry());
    assert.equal((await a.run('Weather in Oslo, Lima, Kyiv?')).status, 'completed');
    const history = a.historyJson();
    const answers = JSON.parse(history).filter((m) => m.role === 'assistant');
    assert.deepEqual(answers.map((m) => ('reasoning' in m ? m.reasoning : 'ABSENT')), ['Ollama denkt «思» nach', '', 'ABSENT', 'final thoughts'], `stream=${stream}`);
    const exported = a.exportState();

    // The uninterrupted runtime and one restarted from the export send the same bytes.
    await a.run('and again?');
    const b = runtimeOf(model(), transport, registry());
    b.importState(exported);
    assert.equal(b.historyJson(), history, 'the import keeps "" and absent apart');
    await b.run('and again?');
    assert.equal(bodies.length, 6);
    assert.equal(bodies[5], bodies[4], `stream=${stream}: the restarted session's request is the uninterrupted one's, byte for byte`);
    const replayed = JSON.parse(bodies[4]).messages.filter((m) => m.role === 'assistant');
    assert.equal(replayed[0].reasoning_content, 'Ollama denkt «思» nach', 'Ollama\'s `reasoning` goes back as reasoning_content');
    assert.equal(replayed[1].reasoning_content, '');
    assert.ok(!('reasoning_content' in replayed[2]) && !('reasoning' in replayed[2]), 'none where the server sent none');
    assert.ok(!('reasoning_content' in replayed[3]), 'auto: only answers with tool calls');
    assert.ok(JSON.parse(bodies[4]).messages.every((m) => !('reasoning' in m)));
  }

  // A plain OpenAI-compatible server, which never sends reasoning, sees no reasoning field.
  for (const stream of [false, true]) {
    const raws = [];
    const transport = async (request, sink) => {
      raws.push(request.body);
      return raws.length % 2 === 1
        ? chatAnswer(sink, stream, { calls: [{ id: `p${raws.length}`, name: 'weather', args: { city: 'Bern' } }] })
        : chatAnswer(sink, stream, { text: 'Sunny.' });
    };
    const rt = runtimeOf(modelOf('http://127.0.0.1:8000/v1', 'mistral-small', { stream }), transport, registry());
    await rt.run('Weather?');
    await rt.run('Weather again?');
    assert.equal(raws.length, 4);
    assert.ok(raws.every((raw) => !raw.includes('reasoning')), `stream=${stream}: ${raws.at(-1)}`);
    assert.ok(!rt.historyJson().includes('reasoning'));
  }
});

// "for Qwen, nothing (it does not need it)." … "`'tool_calls'`, `'all'` (GLM's preserved
// thinking) and `'none'` set it explicitly." (index.d.ts reasoningReplay: "default 'auto', the
// provider's rule: on 'openai', `reasoning_content` of every answer that called a tool … none
// for Qwen")
test('think_2_js_qwen_gets_no_reasoning_back_and_tool_calls_all_none_set_the_replay_explicitly', async () => {
  const QWEN = ['https://dashscope.aliyuncs.com/compatible-mode/v1', 'qwen3.5-plus'];
  const GLM = ['https://open.bigmodel.cn/api/paas/v4', 'glm-5'];
  const DEEPSEEK = ['https://api.deepseek.com', 'deepseek-v4-pro'];
  // [label, provider, replay, reasoning the tool-call answer gets back, the text answer gets back]
  const cases = [
    ['qwen auto', QWEN, undefined, undefined, undefined],
    ['qwen tool_calls', QWEN, 'tool_calls', 'R-tool', undefined],
    ['qwen all', QWEN, 'all', 'R-tool', 'R-text'],
    ['glm all', GLM, 'all', 'R-tool', 'R-text'],
    ['glm auto', GLM, undefined, 'R-tool', undefined],
    ['deepseek none', DEEPSEEK, 'none', undefined, undefined],
  ];
  for (const [label, [url, name], replay, toolBack, textBack] of cases) {
    const bodies = [];
    const transport = async (request, sink) => {
      bodies.push(JSON.parse(request.body));
      const n = bodies.length - 1;
      if (n === 0) return chatAnswer(sink, true, { reasoning: 'R-tool', calls: [{ id: 'q1', name: 'weather', args: { city: 'Xi\'an' } }] });
      if (n === 1) return chatAnswer(sink, true, { reasoning: 'R-text', text: 'Sunny.' });
      if (n === 2) return chatAnswer(sink, true, { text: 'No reasoning here.' });
      return chatAnswer(sink, true, { text: 'Bye.' });
    };
    const m = modelOf(url, name, { stream: true });
    assert.equal(m.reasoningReplay, 'auto', 'the default');
    if (replay) m.reasoningReplay = replay;
    assert.equal(m.reasoningReplay, replay || 'auto');
    const rt = runtimeOf(m, transport, registry());
    await rt.run('Weather?');
    await rt.run('More?');
    await rt.run('Thanks.');
    assert.equal(bodies.length, 4, label);
    const replayed = bodies[3].messages.filter((x) => x.role === 'assistant');
    assert.equal(replayed[0].reasoning_content, toolBack, `${label}: the tool-call answer`);
    assert.equal(replayed[1].reasoning_content, textBack, `${label}: the text answer`);
    assert.ok(!('reasoning_content' in replayed[2]), `${label}: never where the provider sent none`);
    if (toolBack === undefined) assert.ok(!('reasoning_content' in replayed[0]), label);
    if (textBack === undefined) assert.ok(!('reasoning_content' in replayed[1]), label);
  }
});

// "An Anthropic answer's `thinking` blocks (text and `signature`) and `redacted_thinking`
// blocks (`data`) are the message's `thinking` array, in order, byte for byte; its
// `reasoning` stays absent" … "On `'anthropic'`, every answer's blocks before its text and
// `tool_use`: only the current tool cycle's are required, but the earlier ones stay in the
// append-only body, so the provider's prompt cache keeps hitting" … (Provider wire formats)
// "the system prompt, the last tool and the last block of the latest message are
// `cache_control` breakpoints (3 of the 4 allowed). Between compressions each request starts
// with the previous request's bytes up to its last breakpoint, which moves forward with the
// conversation."
test('think_1_think_2_wire_1_js_anthropic_blocks_of_every_answer_go_back_and_each_request_extends_the_last_up_to_its_breakpoint_across_an_import', async () => {
  for (const stream of [false, true]) {
    const provider = new ThinkingProvider('anthropic', { rounds: 2, key: API_KEY });
    const requests = [];
    const transport = (request, sink) => {
      requests.push(request.body);
      const p = FAKES.anthropic.check(request, 'https://thinking.test/v1', API_KEY).problems;
      if (p.length > 0) return provider.refuse(p.join('; '));
      return provider.transport(request, sink);
    };
    const model = () => modelOf('https://thinking.test/v1', 'claude-sonnet-4-5', { wire: 'anthropic', stream });
    const tools = () => registry(['weather', 'zeta']);
    // Stopped mid tool cycle, exported, continued in a new runtime, then another run.
    const a = runtimeOf(model(), transport, tools(), (c) => { c.maxIterations = 1; });
    assert.equal((await a.run('Weather in Paris?')).status, 'max_iterations');
    const b = runtimeOf(model(), transport, tools());
    b.importState(a.exportState());
    assert.equal((await b.run('go on')).status, 'completed', `${provider.refusals}`);
    assert.equal((await b.run('And Lyon?')).status, 'completed', `${provider.refusals}`);
    assert.deepEqual(provider.refusals, [], `stream=${stream}`);
    assert.ok(requests.length >= 6);

    for (const [i, raw] of requests.entries()) {
      const body = JSON.parse(raw);
      assert.equal(breakpoints(raw), 3, `request ${i}: three breakpoints`);
      assert.deepEqual(body.system.at(-1).cache_control, { type: 'ephemeral' }, 'the system prompt');
      assert.deepEqual(body.tools.at(-1).cache_control, { type: 'ephemeral' }, 'the last tool');
      assert.deepEqual(body.messages.at(-1).content.at(-1).cache_control, { type: 'ephemeral' }, 'the last block of the latest message');
      if (i > 0) {
        const prefix = upToLastBreakpoint(requests[i - 1]);
        assert.ok(raw.startsWith(prefix), `stream=${stream} request ${i} starts with request ${i - 1}'s bytes up to its last breakpoint`);
      }
    }
    // Every answer's blocks, as received, lead its turn in the last request; reasoning absent.
    const history = JSON.parse(b.historyJson()).filter((m) => m.role === 'assistant');
    const last = JSON.parse(requests.at(-1)).messages.filter((m) => m.role === 'assistant');
    assert.equal(last.length, history.length - 1, 'every answer but the last one is in the last request');
    assert.ok(history.slice(0, -1).some((m) => m.content && m.thinking.length > 0), 'a text answer of an earlier run has blocks too');
    for (const [i, m] of history.slice(0, -1).entries()) {
      assert.ok(!('reasoning' in m));
      assert.ok(m.thinking.length > 0);
      const key = m.tool_calls ? m.tool_calls[0].id : `text:${m.content}`;
      assert.equal(JSON.stringify(m.thinking), JSON.stringify(provider.given.get(key)), 'byte for byte, in order');
      const lead = last[i].content.slice(0, m.thinking.length);
      assert.equal(JSON.stringify(lead), JSON.stringify(m.thinking), `answer ${i}: its blocks first, exactly`);
      assert.ok(!last[i].content.slice(m.thinking.length).some(isReasoningBlock));
    }
  }
});

// "`thinking` and `redacted_thinking` blocks are kept exactly as received and sent back
// before the turn's `tool_use` …; their text reaches listeners as `reasoning_delta` events"
// … "with `redacted: true` and an empty `delta` for a `redacted_thinking` block" …
// "Anthropic's `usage.output_tokens_details.thinking_tokens`".
test('think_1_think_5_wire_1_js_anthropic_stream_split_at_every_byte_with_signatures_in_odd_places_is_kept_and_replayed_byte_for_byte', async () => {
  const BASE = 'https://api.anthropic.example.test/v1';
  const { rules, problem, refuse } = anthropicRules();
  const T0 = 'Erst «查询» 🌧️, dann antworten: "x" \\ y';
  const BLOCKS = [
    { type: 'thinking', thinking: T0, signature: 'EqQBCkgIARABGAIiQL+/odd==' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a+==' },
    // Display omitted: a signature and no text.
    { type: 'thinking', thinking: '', signature: 'EqQBsig/only+==' },
    // The signature in two pieces, the second after a ping.
    { type: 'thinking', thinking: 'Noch etwas.', signature: 'EqQBpart1/part2==' },
  ];
  const requests = [];
  const transport = async (request, sink) => {
    requests.push(JSON.parse(request.body));
    const p = problem(request, BASE);
    if (p) return refuse(p);
    const n = requests.length - 1;
    const ev = [aEvent('message_start', { message: { id: `msg_${n}`, type: 'message', role: 'assistant', content: [], usage: { input_tokens: 50, output_tokens: 1 } } }), aEvent('ping', {})];
    if (n === 0) {
      rules.given.set('toolu_1', BLOCKS);
      ev.push(
        aEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
        aEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: T0.slice(0, 7) } }),
        aEvent('ping', {}),
        aEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: T0.slice(7) } }),
        aEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: BLOCKS[0].signature } }),
        aEvent('content_block_stop', { index: 0 }),
        aEvent('content_block_start', { index: 1, content_block: BLOCKS[1] }),
        aEvent('content_block_stop', { index: 1 }),
        aEvent('content_block_start', { index: 2, content_block: { type: 'thinking', thinking: '' } }),
        aEvent('content_block_delta', { index: 2, delta: { type: 'signature_delta', signature: BLOCKS[2].signature } }),
        aEvent('content_block_stop', { index: 2 }),
        aEvent('content_block_start', { index: 3, content_block: { type: 'thinking', thinking: '' } }),
        aEvent('content_block_delta', { index: 3, delta: { type: 'thinking_delta', thinking: 'Noch etwas.' } }),
        aEvent('content_block_delta', { index: 3, delta: { type: 'signature_delta', signature: 'EqQBpart1/' } }),
        aEvent('ping', {}),
        aEvent('content_block_delta', { index: 3, delta: { type: 'signature_delta', signature: 'part2==' } }),
        aEvent('content_block_stop', { index: 3 }),
        aEvent('content_block_start', { index: 4, content_block: { type: 'text', text: '' } }),
        aEvent('content_block_delta', { index: 4, delta: { type: 'text_delta', text: 'Let me check.' } }),
        aEvent('content_block_stop', { index: 4 }),
        aEvent('content_block_start', { index: 5, content_block: { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} } }),
        aEvent('content_block_delta', { index: 5, delta: { type: 'input_json_delta', partial_json: '{"ci' } }),
        aEvent('content_block_delta', { index: 5, delta: { type: 'input_json_delta', partial_json: 'ty": "Paris"}' } }),
        aEvent('content_block_stop', { index: 5 }),
        aEvent('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 60, output_tokens_details: { thinking_tokens: 42 } } }),
      );
    } else {
      const text = n === 1 ? 'Sunny.' : 'Rainy.';
      const block = { type: 'thinking', thinking: `Antwort ${n}.`, signature: `EqQBfinal${n}==` };
      rules.given.set(`text:${text}`, [block]);
      ev.push(
        aEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
        aEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: block.thinking } }),
        aEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: block.signature } }),
        aEvent('content_block_stop', { index: 0 }),
        aEvent('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
        aEvent('content_block_delta', { index: 1, delta: { type: 'text_delta', text } }),
        aEvent('content_block_stop', { index: 1 }),
        aEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 8, output_tokens_details: { thinking_tokens: 3 } } }),
      );
    }
    ev.push(aEvent('message_stop', {}));
    return everyByte(sink, ev.join(''));
  };
  const rt = runtimeOf(modelOf(BASE, 'claude-sonnet-4-5', { wire: 'anthropic', stream: true }), transport, registry());
  const events = listen(rt);
  const first = await rt.run('Weather in Paris?');
  await finished(events);
  const second = await rt.run('Tomorrow?');
  await finished(events, 2);

  assert.deepEqual(rules.refusals, []);
  assert.equal(first.finalText, 'Sunny.');
  assert.equal(second.finalText, 'Rainy.');
  const answers = JSON.parse(rt.historyJson()).filter((m) => m.role === 'assistant');
  assert.equal(JSON.stringify(answers[0].thinking), JSON.stringify(BLOCKS), 'the blocks as received, in order, byte for byte');
  assert.ok(!('reasoning' in answers[0]));
  assert.equal(answers[0].content, 'Let me check.');
  assert.deepEqual(JSON.parse(answers[0].tool_calls[0].arguments), { city: 'Paris' });
  // Sent back before the text and the tool_use, in the tool cycle and in the next run.
  for (const body of [requests[1], requests[2]]) {
    const turn = body.messages.find((m) => m.role === 'assistant');
    assert.equal(JSON.stringify(turn.content.slice(0, 4)), JSON.stringify(BLOCKS));
    assert.deepEqual(turn.content.slice(4).map((b) => b.type), ['text', 'tool_use']);
  }
  // Listeners: the text as it streams, a redacted block as an empty delta.
  const toolTurn = events.slice(0, events.findIndex((e) => e.type === 'model_response'));
  const reasoning = toolTurn.filter((e) => e.type === 'reasoning_delta');
  assert.equal(reasoning.filter((e) => !e.redacted).map((e) => e.delta).join(''), `${T0}Noch etwas.`);
  assert.deepEqual(reasoning.filter((e) => e.redacted).map((e) => [e.delta, e.redacted]), [['', true]]);
  assert.ok(toolTurn.findIndex((e) => e.type === 'reasoning_delta') < toolTurn.findIndex((e) => e.type === 'text_delta'));
  assert.deepEqual(rt.usages().map((u) => u.reasoningTokens), [42, 3, 3]);
});

// "When Claude interleaved its reasoning with its text and tool calls (`[thinking, tool_use,
// thinking, tool_use]` …), the message also keeps that order as `block_order` — one letter
// per content block, `t` a reasoning block, `u` a tool call, `x` and a byte count a text
// block" … "Both live in the history, `exportState()`/`importState()`" … (Sent back) "or in
// their places among them as `block_order` says (… refuses a reordered answer with 400
// "…blocks in the latest assistant message cannot be modified")"
test('think_2_js_claudes_interleaved_blocks_are_kept_with_their_order_and_go_back_in_place', async () => {
  const CONTENT = [
    { type: 'thinking', thinking: 'Erst Paris.', signature: 'EqQB/one==' },
    { type: 'tool_use', id: 'toolu_a', name: 'weather', input: { city: 'Paris' } },
    { type: 'thinking', thinking: 'Dann «Berlin».', signature: 'EqQB/two==' },
    { type: 'text', text: 'And Berlin:' },
    { type: 'tool_use', id: 'toolu_b', name: 'weather', input: { city: 'Berlin' } },
  ];
  const bare = (blocks) => blocks.map(({ cache_control: _, ...b }) => b);
  for (const stream of [false, true]) {
    const bodies = [];
    const refusals = [];
    const transport = async (request, sink) => {
      const body = JSON.parse(request.body);
      bodies.push(body);
      const turn = body.messages.find((m) => m.role === 'assistant');
      if (turn && JSON.stringify(bare(turn.content)) !== JSON.stringify(CONTENT)) {
        const message = 'messages.1.content: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.';
        refusals.push(message);
        return { status: 400, headers: JSON_HEADERS, body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }) };
      }
      return anthropicAnswer(sink, stream, bodies.length === 1 ? CONTENT : [{ type: 'text', text: 'Sunny in both.' }]);
    };
    const model = () => modelOf('https://api.anthropic.com/v1', 'claude-opus-4-8', { wire: 'anthropic', stream });
    const rt = runtimeOf(model(), transport, registry());
    const out = await rt.run('Paris and Berlin?');
    assert.deepEqual(refusals, [], `stream=${stream}`);
    assert.equal(out.finalText, 'Sunny in both.');
    const answer = JSON.parse(rt.historyJson()).find((m) => m.role === 'assistant');
    assert.equal(answer.block_order, 'tutx11u', `stream=${stream}: ${JSON.stringify(answer)}`);
    assert.equal(answer.content, 'And Berlin:');
    // The export keeps the order: an imported runtime sends the answer in place again.
    const imported = runtimeOf(model(), transport, registry());
    imported.importState(rt.exportState());
    assert.equal(JSON.parse(imported.historyJson()).find((m) => m.role === 'assistant').block_order, 'tutx11u');
    bodies.length = 0;
    assert.equal((await imported.run('And tomorrow?')).finalText, 'Sunny in both.');
    assert.deepEqual(refusals, []);
  }
});

// ================================================================== Provider wire formats, "anthropic"

// "`max_tokens` is always sent: the config's, else 4096." … "finish reasons are reported in
// the OpenAI-compatible words (`stop`, `tool_calls`, `length`)." (index.d.ts maxTokens:
// "unset means none for 'openai' and 4096 for 'anthropic'")
test('wire_1_js_anthropic_sends_the_configs_max_tokens_and_reports_finish_reasons_in_openai_words', async () => {
  for (const stream of [false, true]) {
    for (const [maxTokens, sent] of [[undefined, 4096], [777, 777], [1, 1]]) {
      const bodies = [];
      const m = modelOf('https://api.anthropic.com/v1', 'claude-haiku-4-5', { wire: 'anthropic', stream });
      if (maxTokens !== undefined) m.maxTokens = maxTokens;
      const rt = runtimeOf(m, async (request, sink) => {
        bodies.push(JSON.parse(request.body));
        return anthropicAnswer(sink, stream, [{ type: 'text', text: 'ok' }]);
      });
      await rt.run('hi');
      assert.equal(bodies[0].max_tokens, sent, `stream=${stream} maxTokens=${maxTokens}`);
    }
    const stops = ['tool_use', 'end_turn', 'stop_sequence', 'max_tokens'];
    let n = 0;
    const rt = runtimeOf(modelOf('https://api.anthropic.com/v1', 'claude-haiku-4-5', { wire: 'anthropic', stream }), async (request, sink) => {
      void request.body;
      const stop = stops[n];
      n += 1;
      const content = stop === 'tool_use'
        ? [{ type: 'tool_use', id: 'toolu_f', name: 'weather', input: { city: 'Pisa' } }]
        : [{ type: 'text', text: `answer ${n}` }];
      return anthropicAnswer(sink, stream, content, { stopReason: stop });
    }, registry());
    const events = listen(rt);
    await rt.run('one');
    await rt.run('two');
    await rt.run('three');
    await finished(events, 3);
    assert.deepEqual(events.filter((e) => e.type === 'model_response').map((e) => e.finishReason), ['tool_calls', 'stop', 'stop', 'length'], `stream=${stream}`);
  }
});

// "Usage: `prompt_tokens` is the whole prompt (uncached input + cache reads + cache writes,
// so compression and calibration see its real size), `cached_tokens` the cache reads, and
// the cache writes in `cache_write_tokens` (ArkTS `cacheWriteTokens`)."
test('wire_1_cmp_js_anthropic_prompt_tokens_is_the_whole_prompt_once_even_when_the_stream_repeats_it_and_compression_sees_it', async () => {
  const CACHED = { input_tokens: 12, cache_creation_input_tokens: 300, cache_read_input_tokens: 4000 };
  // [label, stream, message_start usage, message_delta usage, whole usage]
  const variants = [
    ['whole', false],
    ['stream, output only in message_delta', true, { ...CACHED, output_tokens: 1 }, { output_tokens: 25 }],
    ['stream, message_delta repeats the input counts', true, { ...CACHED, output_tokens: 1 }, { ...CACHED, output_tokens: 25 }],
  ];
  for (const [label, stream, start, end] of variants) {
    for (const cached of [true, false]) {
      const kinds = [];
      const rules = new ThinkingProvider('anthropic');
      const transport = async (request, sink) => {
        const body = JSON.parse(request.body);
        if (rules.isSummary(body)) {
          kinds.push('summary');
          return anthropicAnswer(sink, false, [{ type: 'text', text: snapshot() }]);
        }
        kinds.push('main');
        const content = [{ type: 'text', text: `answer ${kinds.length}` }];
        if (!cached) return anthropicAnswer(sink, stream, content, { usage: { input_tokens: 12, output_tokens: 25 } });
        if (!stream) return anthropicAnswer(sink, false, content, { usage: { ...CACHED, output_tokens: 25 } });
        return streamed(sink, [
          aEvent('message_start', { message: { id: 'msg_u', type: 'message', role: 'assistant', content: [], usage: start } }),
          aEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          aEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: content[0].text } }),
          aEvent('content_block_stop', { index: 0 }),
          aEvent('message_delta', { delta: { stop_reason: 'end_turn' }, usage: end }),
          aEvent('message_stop', {}),
        ]);
      };
      const rt = runtimeOf(modelOf('https://api.anthropic.com/v1', 'claude-sonnet-4-5', { wire: 'anthropic', stream }), transport, undefined, (c) => {
        c.contextCompressor = new native.ContextCompressor(2000, 1, undefined, 1);
      });
      const events = listen(rt);
      await rt.run(`Hello there, a question. ${'Some context about the trip. '.repeat(40)}`);
      await finished(events);
      const u = rt.usages()[0];
      if (cached) {
        assert.deepEqual([u.promptTokens, u.cachedTokens, u.cacheWriteTokens, u.completionTokens], [4312, 4000, 300, 25], `${label}: ${JSON.stringify(u)}`);
        assert.equal(rt.totalUsage().total.promptTokens, 4312 + rt.usages().slice(1).reduce((s, x) => s + x.promptTokens, 0));
      } else {
        assert.deepEqual([u.promptTokens, u.completionTokens], [12, 25], label);
      }
      const compressed = events.filter((e) => e.type === 'compression' && e.outcome === 'compressed');
      assert.equal(compressed.length, cached ? 1 : 0, `${label} cached=${cached}: the cache reads count toward the threshold: ${kinds}`);
      if (cached) assert.ok(compressed[0].estimatedPromptTokens >= 4312, JSON.stringify(compressed[0]));
    }
  }
});

// "`overloaded_error` (HTTP 529) is retried after the server's `retry-after`; "prompt is too
// long" is `llm_context_overflow`, which triggers the overflow compression."
test('wire_1_cmp_js_anthropic_529_waits_for_retry_after_and_prompt_is_too_long_is_an_overflow_that_compresses', async () => {
  for (const stream of [false, true]) {
    const at = [];
    const m = modelOf('https://api.anthropic.com/v1', 'claude-sonnet-4-5', { wire: 'anthropic', stream });
    m.maxAttempts = 3;
    m.initialBackoffMs = 1;
    const rt = runtimeOf(m, async (request, sink) => {
      void request.body;
      at.push(Date.now());
      if (at.length === 1) {
        return { status: 529, headers: [{ name: 'retry-after', value: '1' }, ...JSON_HEADERS], body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }) };
      }
      return anthropicAnswer(sink, stream, [{ type: 'text', text: 'back' }]);
    });
    const result = await rt.run('hi');
    assert.equal(result.finalText, 'back');
    assert.equal(at.length, 2);
    const waited = at[1] - at[0];
    assert.ok(waited >= 950 && waited < 4000, `stream=${stream}: waited ${waited} ms for retry-after: 1`);
  }

  const TOO_LONG = { status: 400, headers: JSON_HEADERS, body: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 212000 tokens > 200000 maximum' } }) };
  const LONG = 'a long remark about the weather. '.repeat(30);
  const state = JSON.stringify({
    version: 1,
    session_id: 'overflow',
    history: { messages: [
      { role: 'user', content: `one ${LONG}` }, { role: 'assistant', content: `two ${LONG}` },
      { role: 'user', content: `three ${LONG}` }, { role: 'assistant', content: `four ${LONG}` },
    ], episodic_memories: [] },
    usages: [],
  });
  for (const withCompressor of [false, true]) {
    const rules = new ThinkingProvider('anthropic');
    const kinds = [];
    let mains = 0;
    const rt = runtimeOf(modelOf('https://api.anthropic.com/v1', 'claude-sonnet-4-5', { wire: 'anthropic' }), async (request, sink) => {
      const body = JSON.parse(request.body);
      if (rules.isSummary(body)) {
        kinds.push('summary');
        return anthropicAnswer(sink, false, [{ type: 'text', text: snapshot() }]);
      }
      kinds.push('main');
      mains += 1;
      return mains === 1 ? TOO_LONG : anthropicAnswer(sink, false, [{ type: 'text', text: 'fits now' }]);
    }, undefined, (c) => {
      // The default threshold (64000): only the provider's refusal can trigger it.
      if (withCompressor) c.contextCompressor = new native.ContextCompressor(undefined, 2, undefined, 1);
    });
    rt.importState(state);
    const events = listen(rt);
    if (!withCompressor) {
      await assert.rejects(rt.run('next'), (e) => e.code === 'llm_context_overflow');
      continue;
    }
    const result = await rt.run('next');
    await finished(events);
    assert.equal(result.finalText, 'fits now', `${kinds}`);
    const compression = events.filter((e) => e.type === 'compression');
    assert.deepEqual(compression.map((e) => [e.trigger, e.outcome]), [['overflow', 'compressed']]);
    assert.equal(rt.episodicMemories().length, 1);
  }
});

// ================================================================== Never altered

// "The redactor does not rewrite a signed block: when the API key (or a credential header's
// value) appears in one of an answer's blocks, all of that answer's blocks are dropped, so
// the secret is never kept — the provider then refuses the rest of that tool cycle with
// `llm_bad_request`"
test('think_2_js_an_api_key_inside_one_block_drops_all_of_that_answers_blocks_and_the_provider_refuses_the_cycle_llm_bad_request', async () => {
  for (const stream of [false, true]) {
    const BASE = 'https://api.anthropic.example.test/v1';
    const { rules, problem, refuse } = anthropicRules();
    const HELLO = [{ type: 'thinking', thinking: 'A greeting.', signature: 'EqQBhello==' }];
    const LEAKY = [
      { type: 'thinking', thinking: 'Plan: call the tool.', signature: 'EqQBplan==' },
      { type: 'thinking', thinking: `The header said ${API_KEY}; I must not repeat it.`, signature: 'EqQBleak==' },
      { type: 'redacted_thinking', data: 'EmwKAhgBredacted==' },
    ];
    const raws = [];
    const transport = async (request, sink) => {
      raws.push(request.body);
      const p = problem(request, BASE);
      if (p) return refuse(p);
      if (raws.length === 1) {
        rules.given.set('text:Hello!', HELLO);
        return anthropicAnswer(sink, stream, [...HELLO, { type: 'text', text: 'Hello!' }]);
      }
      rules.given.set('toolu_k', LEAKY);
      return anthropicAnswer(sink, stream, [...LEAKY, { type: 'tool_use', id: 'toolu_k', name: 'weather', input: { city: 'Graz' } }]);
    };
    const rt = runtimeOf(modelOf(BASE, 'claude-sonnet-4-5', { wire: 'anthropic', stream }), transport, registry());
    assert.equal((await rt.run('Hi!')).finalText, 'Hello!');
    await assert.rejects(rt.run('Weather in Graz?'), (e) => e.code === 'llm_bad_request', `stream=${stream}`);
    assert.equal(raws.length, 3);
    assert.equal(rules.refusals.length, 1);
    assert.match(rules.refusals[0], /Expected `thinking` or `redacted_thinking`/);
    const turns = JSON.parse(raws[2]).messages.filter((m) => m.role === 'assistant');
    assert.equal(JSON.stringify(turns[0].content.slice(0, 1)), JSON.stringify(HELLO), 'another answer\'s blocks are untouched');
    assert.deepEqual(turns[1].content.map((b) => b.type), ['tool_use'], 'all three blocks of the leaking answer are dropped, not rewritten');
    assert.ok(!raws[2].includes('<redacted>') && !raws[2].includes(API_KEY));
    assert.ok(!rt.historyJson().includes(API_KEY) && !rt.exportState().includes(API_KEY), 'the secret is never kept');
    const kept = JSON.parse(rt.historyJson()).find((m) => m.tool_calls);
    assert.ok(!kept.thinking || kept.thinking.length === 0, JSON.stringify(kept));
  }
});

/**
 * A tool loop on a strict Anthropic provider that compresses in the middle of it: main
 * request k (k < 5) calls `weather` with reasoning blocks, the sixth answers; a context
 * compressor with a small threshold compresses after tool rounds. Returns what it saw.
 */
async function compressedToolLoop({ model = 'claude-sonnet-4-5', configureModel, bindingRules = false, hostHeaders = {} } = {}) {
  const BASE = 'https://api.anthropic.example.test/v1';
  const { rules, problem, refuse, isSummary } = anthropicRules();
  const given = new Map();
  const log = [];
  const blocksOf = (k) => {
    const out = [{ type: 'thinking', thinking: `Round ${k}: still need the weather «${k}».`, signature: `EqQBround${k}/+==` }];
    if (k % 2 === 1) out.push({ type: 'redacted_thinking', data: `EmwKAhgBround${k}==` });
    return out;
  };
  const strip = (v) => JSON.parse(JSON.stringify(v || null, (key, x) => (key === 'cache_control' ? undefined : x)));
  const prefixOf = (body, i) => JSON.stringify(strip({ system: body.system, tools: body.tools, messages: body.messages.slice(0, i) }));
  let mains = 0;
  const transport = async (request, sink) => {
    const body = JSON.parse(request.body);
    const p = problem(request, BASE);
    log.push({ kind: isSummary(body) ? 'summary' : 'main', body });
    if (p) return refuse(p);
    if (bindingRules) {
      // Claude Fable / Mythos / 5.5: a block is bound to everything before its turn.
      const drop = body.thinking && body.thinking.block_binding && body.thinking.block_binding.prefix_mismatch_behavior === 'drop_block'
        && String(header(request, 'anthropic-beta') || hostHeaders['anthropic-beta'] || '').split(',').map((s) => s.trim()).includes('thinking-binding-controls-2026-08-01');
      for (const [i, turn] of body.messages.entries()) {
        const lead = turn.role === 'assistant' ? turn.content.filter(isReasoningBlock) : [];
        const call = turn.role === 'assistant' && turn.content.find((b) => b.type === 'tool_use');
        if (lead.length > 0 && call && given.get(call.id).prefix !== prefixOf(body, i) && !drop) {
          return refuse(`messages.${i}.content.0: the \`thinking\` block's signature does not match the conversation before it`);
        }
      }
    }
    if (isSummary(body)) return anthropicAnswer(sink, false, [{ type: 'text', text: snapshot() }]);
    const k = mains;
    mains += 1;
    if (k < 5) {
      const blocks = blocksOf(k);
      rules.given.set(`call_${k}`, blocks);
      given.set(`call_${k}`, { blocks, prefix: prefixOf(body, body.messages.length) });
      return anthropicAnswer(sink, false, [...blocks, { type: 'tool_use', id: `call_${k}`, name: 'weather', input: { city: `City ${k}` } }]);
    }
    const last = [{ type: 'thinking', thinking: 'All done.', signature: 'EqQBdone==' }];
    rules.given.set('text:All five are sunny.', last);
    return anthropicAnswer(sink, false, [...last, { type: 'text', text: 'All five are sunny.' }]);
  };
  const m = modelOf(BASE, model, { wire: 'anthropic' });
  if (configureModel) configureModel(m);
  const rt = runtimeOf(m, transport, registry(['weather'], () => `sunny ${'and warm '.repeat(30)}`), (c) => {
    c.contextCompressor = new native.ContextCompressor(400, 3, undefined, 2);
  });
  const events = listen(rt);
  let result;
  let error;
  try {
    result = await rt.run('The weather in five cities, one tool call each.');
  } catch (e) {
    error = e;
  }
  await finished(events);
  return { rt, rules, given, log, events, result, error };
}

// "A compression drops the blocks of the answers it keeps (what preceded them changed),
// except the open tool cycle's, which Anthropic requires before its `tool_use`; the episode
// keeps the originals." (and THINK-1: "Both live in the history … and the episodes")
test('think_2_cmp_js_a_compression_mid_tool_cycle_drops_the_kept_answers_blocks_but_the_open_cycles_and_its_episode_holds_them_as_received', async () => {
  const { rt, rules, given, log, events, result, error } = await compressedToolLoop();
  assert.equal(error, undefined, `${error && error.message} ${rules.refusals}`);
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'All five are sunny.');
  assert.deepEqual(rules.refusals, []);
  const compressions = events.filter((e) => e.type === 'compression' && e.outcome === 'compressed');
  assert.ok(compressions.length >= 1, 'a compression happened');
  // The first main request after each compression: only the open cycle's answer has blocks.
  let checked = 0;
  for (const [i, entry] of log.entries()) {
    if (entry.kind !== 'main' || i === 0 || log[i - 1].kind !== 'summary') continue;
    checked += 1;
    const turns = entry.body.messages.map((m, j) => [m, j]).filter(([m]) => m.role === 'assistant');
    assert.ok(turns.length >= 2, 'the compression kept more than the open cycle');
    const [open] = turns.at(-1);
    assert.equal(entry.body.messages.at(-1).content[0].type, 'tool_result', 'mid tool cycle');
    const openId = open.content.find((b) => b.type === 'tool_use').id;
    assert.equal(JSON.stringify(open.content.filter(isReasoningBlock)), JSON.stringify(given.get(openId).blocks), 'the open cycle keeps its blocks, exactly');
    for (const [kept] of turns.slice(0, -1)) assert.deepEqual(kept.content.filter(isReasoningBlock), [], 'a kept answer loses its blocks');
  }
  assert.ok(checked >= 1);
  // The episode holds the archived answers as received.
  const episode = rt.episodicMemories()[0];
  const archived = JSON.parse(episode.archivedMessagesJson).filter((m) => m.role === 'assistant');
  assert.ok(archived.length >= 1);
  for (const m of archived) {
    assert.equal(JSON.stringify(m.thinking), JSON.stringify(given.get(m.tool_calls[0].id).blocks), `episode: ${m.tool_calls[0].id}`);
  }
});

// "A compression drops the blocks of the answers it keeps … (the dropped blocks are gone:
// no provider would take them again); the episode keeps its own archived answers' blocks as
// they were." and THINK-1 "Both live in the history, … and the episodes": every answer is
// in the history or an episode, its blocks exactly as received or dropped whole — never
// altered. (This test first read "the episode keeps the originals" as keeping the dropped
// blocks too; the README now says they are gone.)
test('think_1_cmp_js_every_answer_keeps_its_blocks_as_received_or_loses_them_whole_after_compressions',
  async () => {
    const { rt, given, error } = await compressedToolLoop();
    assert.equal(error, undefined);
    const records = [...rt.episodicMemories().flatMap((e) => JSON.parse(e.archivedMessagesJson)), ...JSON.parse(rt.historyJson())];
    let dropped = 0;
    for (const [id, { blocks }] of given) {
      const m = records.find((x) => x.role === 'assistant' && x.tool_calls && x.tool_calls[0].id === id);
      assert.ok(m, `answer ${id} is in the history or an episode`);
      const kept = JSON.stringify(m.thinking || []);
      assert.ok(kept === JSON.stringify(blocks) || kept === '[]', `${id}: as received or none, never altered: ${kept}`);
      dropped += Number(kept === '[]');
    }
    assert.ok(dropped >= 1 && dropped < given.size, `some answers kept by a compression lost theirs (${dropped} of ${given.size})`);
  });

// "Anthropic's newest models (Claude Fable and Mythos 5.x, the 5.5 family) also check that
// nothing before a block changed: after a compression in the middle of a tool cycle they
// refuse that cycle's blocks unless the request asks them to drop mismatched blocks
// (`thinking.block_binding.prefix_mismatch_behavior: "drop_block"` with the `anthropic-beta:
// thinking-binding-controls-2026-08-01` header: `extraBody` and `extra_headers`, with
// `thinking` left unset)."
// (Found by this test: the ArkTS ModelConfig had no extra headers; it now has extraHeaders.)
test('think_2_think_4_js_a_claude_5_5_tool_loop_compressed_mid_cycle_completes_with_drop_block_in_extraBody_and_the_beta_header',
  async () => {
    const DROP = { thinking: { block_binding: { prefix_mismatch_behavior: 'drop_block' } } };
    const BETA = { 'anthropic-beta': 'thinking-binding-controls-2026-08-01' };
    // Without the request to drop mismatched blocks the strict 5.5 provider refuses the cycle.
    const plain = await compressedToolLoop({ model: 'claude-opus-5-5', bindingRules: true });
    assert.equal(plain.error && plain.error.code, 'llm_bad_request', 'the fake refuses like the 5.5 family');
    assert.match(plain.rules.refusals[0], /signature does not match the conversation before it/);
    // The library's half: extraBody is accepted with `thinking` unset and reaches every
    // request; with the header added by the host's own transport the loop completes.
    const viaTransport = await compressedToolLoop({ model: 'claude-opus-5-5', bindingRules: true, hostHeaders: BETA, configureModel: (m) => { m.extraBody = DROP; } });
    assert.equal(viaTransport.error, undefined, `${viaTransport.error && viaTransport.error.message}`);
    assert.equal(viaTransport.result.status, 'completed');
    assert.ok(viaTransport.log.some((e) => e.kind === 'summary'));
    assert.ok(viaTransport.log.every((e) => JSON.stringify(e.body.thinking) === JSON.stringify(DROP.thinking)));
    // The documented way: `extraBody` and `extra_headers` on the model config.
    const documented = await compressedToolLoop({
      model: 'claude-opus-5-5',
      bindingRules: true,
      configureModel: (m) => {
        m.extraBody = DROP;
        assert.ok('extraHeaders' in m, 'ModelConfig has a setting for extra headers (README: "`extraBody` and `extraHeaders`")');
        m.extraHeaders = BETA;
      },
    });
    assert.equal(documented.error, undefined, `${documented.error && documented.error.message}`);
    assert.equal(documented.result.status, 'completed');
  });

// ================================================================== Thinking controls (THINK-4)

const FIELDS = ['thinking', 'reasoning_effort', 'enable_thinking', 'thinking_budget', 'output_config'];

/**
 * Creates a runtime for a model with `configure` applied and runs one turn: the thinking
 * fields of the request, or the code the runtime constructor threw and how many requests
 * went out (none, when refused).
 */
async function thinkingOutcome(url, name, { wire, stream = true, configure } = {}) {
  const m = modelOf(url, name, { wire, stream });
  configure(m);
  const bodies = [];
  const transport = async (request, sink) => {
    bodies.push(JSON.parse(request.body));
    return textReply(wire || 'openai', stream, sink);
  };
  let rt;
  try {
    rt = runtimeOf(m, transport);
  } catch (e) {
    await new Promise((r) => setImmediate(r));
    assert.equal(bodies.length, 0, 'nothing is sent');
    return e.code;
  }
  await rt.run('hi');
  const body = bodies[0];
  return { fields: Object.fromEntries(FIELDS.filter((k) => k in body).map((k) => [k, body[k]])), body };
}

const SETTINGS = [undefined, 'off', 'on', { effort: 'high' }, { budgetTokens: 2048 }];
const U = 'thinking_unsupported';
const TYPE = (type) => ({ thinking: { type } });
const ROWS = {
  deepseek: [{}, TYPE('disabled'), TYPE('enabled'), { ...TYPE('enabled'), reasoning_effort: 'high' }, U],
  kimi: [{}, TYPE('disabled'), TYPE('enabled'), U, U],
  glm: [{}, TYPE('disabled'), TYPE('enabled'), U, U],
  qwen: [{}, { enable_thinking: false }, { enable_thinking: true }, U, { enable_thinking: true, thinking_budget: 2048 }],
  doubao: [{}, TYPE('disabled'), TYPE('enabled'), { ...TYPE('enabled'), reasoning_effort: 'high' }, U],
  openai: [{}, { reasoning_effort: 'none' }, U, { reasoning_effort: 'high' }, U],
  other: [{}, U, U, { reasoning_effort: 'high' }, U],
};

// "`thinking` on the model config — `'off'`, `'on'`, `{ effort }` or `{ budgetTokens }` …;
// unset sends nothing, so the provider's default holds. It is written for the config's
// `provider` — set, or recognised from the base URL's host, else the model name" (the table's
// "Recognised by", "'off' / 'on'", "{ effort }" and "{ budgetTokens }" columns) … "On the
// `'anthropic'` wire the other providers' Anthropic-compatible endpoints get `{type:
// enabled}` for `'on'`." … "A setting the provider has no switch for is refused when the
// runtime is created with `thinking_unsupported` … — nothing is sent"
test('think_4_js_each_provider_recognised_by_host_then_model_name_writes_the_tables_thinking_fields_or_refuses_before_sending', async () => {
  const N = 'house-model-7';
  const cases = [
    ['deepseek', 'https://api.deepseek.com', N], ['deepseek', 'http://gw.test/v1', 'deepseek-v4-flash'],
    ['kimi', 'https://api.moonshot.cn/v1', N], ['kimi', 'https://api.moonshot.ai/v1', N], ['kimi', 'http://gw.test/v1', 'kimi-k2.6'], ['kimi', 'http://gw.test/v1', 'moonshot-v1-8k'],
    ['glm', 'https://open.bigmodel.cn/api/paas/v4', N], ['glm', 'https://api.z.ai/api/paas/v4', N], ['glm', 'http://gw.test/v1', 'glm-4.7'],
    ['qwen', 'https://dashscope.aliyuncs.com/compatible-mode/v1', N], ['qwen', 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1', N],
    ['qwen', 'http://gw.test/v1', 'qwen3.5-plus'], ['qwen', 'http://gw.test/v1', 'qwq-32b'],
    ['doubao', 'https://ark.cn-beijing.volces.com/api/v3', N], ['doubao', 'http://gw.test/v1', 'doubao-seed-1-6'],
    ['openai', 'https://api.openai.com/v1', N], ['openai', 'http://gw.test/v1', 'gpt-4.1'], ['openai', 'http://gw.test/v1', 'o1-mini'],
    ['openai', 'http://gw.test/v1', 'o3'], ['openai', 'http://gw.test/v1', 'o4-mini'],
    ['other', 'http://127.0.0.1:8080/v1', 'llama3.3'],
    // The host decides before the model name; a host that only looks like one is not it.
    ['qwen', 'https://dashscope.aliyuncs.com/compatible-mode/v1', 'deepseek-v4-flash'],
    ['deepseek', 'https://api.deepseek.com', 'qwen3.5-plus'],
    ['other', 'https://api.deepseek.com.evil.test/v1', N],
  ];
  for (const [provider, url, name] of cases) {
    const got = [];
    for (const setting of SETTINGS) {
      // eslint-disable-next-line no-await-in-loop
      const out = await thinkingOutcome(url, name, { configure: (m) => { if (setting !== undefined) m.thinking = setting; } });
      got.push(typeof out === 'string' ? out : out.fields);
    }
    assert.deepEqual(got, ROWS[provider], `${url} ${name} is ${provider}`);
  }
  // A provider set explicitly wins over what the URL and name say.
  for (const [provider, url, name] of [['kimi', 'https://api.deepseek.com', 'deepseek-v4-flash'], ['qwen', 'http://127.0.0.1:8080/v1', 'llama3.3']]) {
    const got = [];
    for (const setting of SETTINGS) {
      // eslint-disable-next-line no-await-in-loop
      const out = await thinkingOutcome(url, name, { configure: (m) => { m.provider = provider; if (setting !== undefined) m.thinking = setting; } });
      got.push(typeof out === 'string' ? out : out.fields);
    }
    assert.deepEqual(got, ROWS[provider], `provider = '${provider}'`);
  }
  // The Anthropic wire: adaptive for Anthropic, enabled for the others' compatible endpoints.
  const claude = [];
  for (const setting of SETTINGS) {
    // eslint-disable-next-line no-await-in-loop
    const out = await thinkingOutcome('https://api.anthropic.com/v1', 'claude-sonnet-4-5', { wire: 'anthropic', configure: (m) => { if (setting !== undefined) m.thinking = setting; } });
    claude.push(out.fields);
  }
  assert.deepEqual(claude, [{}, TYPE('disabled'), TYPE('adaptive'), { ...TYPE('adaptive'), output_config: { effort: 'high' } }, { thinking: { type: 'enabled', budget_tokens: 2048 } }]);
  for (const url of ['https://api.deepseek.com/anthropic', 'https://api.moonshot.cn/anthropic', 'https://open.bigmodel.cn/api/anthropic']) {
    // eslint-disable-next-line no-await-in-loop
    const out = await thinkingOutcome(url, 'house-model', { wire: 'anthropic', configure: (m) => { m.thinking = 'on'; } });
    assert.deepEqual(out.fields, TYPE('enabled'), url);
  }
});

// Table, "Refuses with thinking on": OpenAI "`max_tokens` (sent as `max_completion_tokens`),
// a temperature on o-series and gpt-5 models (`thinking_conflict`)"; Anthropic "a forced
// `toolChoice` or a temperature other than 1 (`thinking_conflict`); Fable, Mythos and the 5.5
// family think when unset"; `{ budgetTokens }` "(1024 ≤ n < maxTokens)"; Qwen "a call that
// does not stream: `enable_thinking: false` is sent when `thinking` is unset, `'on'` is
// refused"; DeepSeek "(temperature is ignored)" … "an option the thinking model refuses
// with `thinking_conflict` — nothing is sent in either case."
test('think_4_js_what_each_thinking_model_refuses_is_refused_at_creation_with_nothing_sent_and_the_rest_is_adapted', async () => {
  const conflict = 'thinking_conflict';
  const run = (url, name, opts) => thinkingOutcome(url, name, opts);
  // The temperature travels as a 32-bit float (0.3 arrives as 0.30000001192092896).
  const near = (a, b) => typeof a === 'number' && Math.abs(a - b) < 1e-6;
  // OpenAI: temperature on reasoning models; max_tokens as max_completion_tokens everywhere.
  for (const name of ['o1-mini', 'o3', 'o4-mini', 'gpt-5', 'gpt-5.1']) {
    assert.equal(await run('https://api.openai.com/v1', name, { configure: (m) => { m.temperature = 0.5; } }), conflict, name);
  }
  for (const name of ['gpt-4.1', 'o3', 'gpt-5']) {
    const out = await run('https://api.openai.com/v1', name, { configure: (m) => { m.maxTokens = 500; if (name === 'gpt-4.1') m.temperature = 0.5; } });
    assert.equal(out.body.max_completion_tokens, 500, name);
    assert.ok(!('max_tokens' in out.body), name);
  }
  const deepseek = await run('https://api.deepseek.com', 'deepseek-v4-flash', { configure: (m) => { m.thinking = 'on'; m.temperature = 0.3; m.maxTokens = 500; } });
  assert.ok(near(deepseek.body.temperature, 0.3) && deepseek.body.max_tokens === 500, 'DeepSeek ignores the temperature: not refused');
  // Anthropic: a temperature other than 1 while thinking, also where the model thinks unset.
  const A = 'https://api.anthropic.com/v1';
  const anthropic = (name, configure) => run(A, name, { wire: 'anthropic', configure });
  assert.equal(await anthropic('claude-sonnet-4-5', (m) => { m.thinking = { effort: 'low' }; m.temperature = 0.5; }), conflict);
  assert.equal(await anthropic('claude-sonnet-4-5', (m) => { m.thinking = { budgetTokens: 2048 }; m.temperature = 0; }), conflict);
  assert.equal((await anthropic('claude-sonnet-4-5', (m) => { m.thinking = 'on'; m.temperature = 1; })).body.temperature, 1);
  assert.ok(near((await anthropic('claude-sonnet-4-5', (m) => { m.temperature = 0.2; })).body.temperature, 0.2), 'unset: this model does not think');
  for (const name of ['claude-fable-5', 'claude-mythos-5-1', 'claude-opus-5-5', 'anthropic/claude-mythos-5-1']) {
    assert.equal(await anthropic(name, (m) => { m.temperature = 0.2; }), conflict, `${name} thinks when unset`);
    if (name === 'claude-fable-5') continue;
    assert.ok(near((await anthropic(name, (m) => { m.thinking = 'off'; m.temperature = 0.2; })).body.temperature, 0.2), name);
  }
  // (table) "Fable refuses 'off' (it always thinks)" … "on Fable any temperature"; effort
  // "`minimal` is no Anthropic level and `xhigh` came with Opus 4.7"; budget "refused by the
  // adaptive-only models, Opus 4.7 and later, Claude 5, Fable and Mythos".
  const unsupported = 'thinking_unsupported';
  assert.equal(await anthropic('claude-fable-5', (m) => { m.thinking = 'off'; }), unsupported);
  assert.equal(await anthropic('claude-fable-5', (m) => { m.temperature = 1; }), conflict);
  assert.deepEqual((await anthropic('claude-fable-5', (m) => { m.thinking = { effort: 'xhigh' }; })).fields, { thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' } });
  for (const name of ['claude-opus-4-8', 'claude-sonnet-4-6', 'claude-sonnet-4-5']) {
    assert.equal(await anthropic(name, (m) => { m.thinking = { effort: 'minimal' }; }), unsupported, name);
  }
  assert.equal(await anthropic('claude-opus-4-6', (m) => { m.thinking = { effort: 'xhigh' }; }), unsupported);
  assert.deepEqual((await anthropic('claude-opus-4-7', (m) => { m.thinking = { effort: 'xhigh' }; })).fields.output_config, { effort: 'xhigh' });
  for (const name of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-sonnet-5', 'claude-mythos-5-1', 'claude-fable-5']) {
    assert.equal(await anthropic(name, (m) => { m.maxTokens = 8000; m.thinking = { budgetTokens: 2048 }; }), unsupported, name);
  }
  assert.deepEqual((await anthropic('claude-opus-4-6', (m) => { m.maxTokens = 8000; m.thinking = { budgetTokens: 2048 }; })).fields, { thinking: { type: 'enabled', budget_tokens: 2048 } });
  // (table) Doubao's `reasoning_effort` "`minimal` … `high`", OpenAI's "`minimal` … `xhigh`".
  const D = 'https://ark.cn-beijing.volces.com/api/v3';
  for (const effort of ['xhigh', 'max']) assert.equal(await run(D, 'doubao-seed-1-6', { configure: (m) => { m.thinking = { effort }; } }), unsupported, effort);
  assert.equal((await run(D, 'doubao-seed-1-6', { configure: (m) => { m.thinking = { effort: 'minimal' }; } })).fields.reasoning_effort, 'minimal');
  assert.equal(await run('https://api.openai.com/v1', 'gpt-5.1', { configure: (m) => { m.thinking = { effort: 'max' }; } }), unsupported);
  assert.equal((await run('https://api.openai.com/v1', 'gpt-5.1', { configure: (m) => { m.thinking = { effort: 'xhigh' }; } })).fields.reasoning_effort, 'xhigh');
  // Anthropic budget: 1024 ≤ n < maxTokens (4096 when maxTokens is unset).
  for (const [maxTokens, n, ok] of [[8000, 1023, false], [8000, 1024, true], [8000, 7999, true], [8000, 8000, false], [undefined, 4095, true], [undefined, 4096, false]]) {
    const out = await anthropic('claude-sonnet-4-5', (m) => { if (maxTokens) m.maxTokens = maxTokens; m.thinking = { budgetTokens: n }; });
    if (ok) assert.deepEqual(out.fields, { thinking: { type: 'enabled', budget_tokens: n } }, `${n} < ${maxTokens}`);
    else assert.equal(typeof out, 'string', `budget ${n} with maxTokens ${maxTokens} is refused before sending`);
  }
  // Qwen without streaming.
  const Q = 'https://dashscope.aliyuncs.com/compatible-mode/v1';
  assert.deepEqual((await run(Q, 'qwen3.5-plus', { stream: false, configure: () => {} })).fields, { enable_thinking: false });
  assert.deepEqual((await run(Q, 'qwen3.5-plus', { stream: true, configure: () => {} })).fields, {}, 'a streamed call keeps the default');
  assert.deepEqual((await run(Q, 'qwen3.5-plus', { stream: false, configure: (m) => { m.thinking = 'off'; } })).fields, { enable_thinking: false });
  assert.equal(await run(Q, 'qwen3.5-plus', { stream: false, configure: (m) => { m.thinking = { budgetTokens: 512 }; } }), conflict);
});

// Table, DeepSeek, "Refuses with thinking on": "`logprobs` or `top_logprobs` in `extraBody`,
// also with `thinking` unset (V4 thinks by default; `thinking_conflict`)" … "an option the
// thinking model refuses with `thinking_conflict` — nothing is sent in either case."
// (Found by this test: both were sent.)
test('think_4_js_deepseek_thinking_with_logprobs_is_refused_thinking_conflict_before_sending',
  async () => {
    for (const thinking of ['on', undefined, { effort: 'high' }]) {
      for (const extra of [{ logprobs: true }, { top_logprobs: 3 }]) {
        // eslint-disable-next-line no-await-in-loop
        const out = await thinkingOutcome('https://api.deepseek.com', 'deepseek-v4-flash', { configure: (m) => { if (thinking !== undefined) m.thinking = thinking; m.extraBody = extra; } });
        assert.equal(out, 'thinking_conflict', `${JSON.stringify(thinking)} ${JSON.stringify(extra)} was sent: ${out.body && JSON.stringify(out.body).slice(0, 200)}`);
      }
    }
    // Thinking off: DeepSeek takes logprobs.
    const off = await thinkingOutcome('https://api.deepseek.com', 'deepseek-v4-flash', { configure: (m) => { m.thinking = 'off'; m.extraBody = { logprobs: true }; } });
    assert.equal(off.body.logprobs, true);
  });

// "**`extraBody`** (C/Rust `extra_body`) is merged into the top level of every request for what
// the library has no setting for (`{ enable_search: true }`, a `user_id`); a field the library
// writes itself — … — and the thinking fields it writes for this config — is refused with
// `extra_body_conflict`." (index.d.ts extraBody: "is refused when the runtime is created")
test('think_4_js_extraBody_reaches_every_request_retries_and_summaries_and_the_fields_the_library_writes_are_refused', async () => {
  const EXTRA = { enable_search: true, user_id: 'u-1', search_options: { forced_search: false } };
  for (const stream of [false, true]) {
    const bodies = [];
    let attempts = 0;
    const m = modelOf('https://api.deepseek.com', 'deepseek-v4-flash', { stream });
    m.extraBody = EXTRA;
    m.maxAttempts = 2;
    m.initialBackoffMs = 1;
    const rt = runtimeOf(m, async (request, sink) => {
      const body = JSON.parse(request.body);
      bodies.push(body);
      attempts += 1;
      if (attempts === 1) return { status: 503, headers: JSON_HEADERS, body: '{"error":{"message":"busy"}}' };
      if (body.messages.at(-1).role === 'user' && String(body.messages.at(-1).content).startsWith(COMPRESSION_MARK)) return chatAnswer(sink, stream, { text: snapshot() });
      if (bodies.length === 2) return chatAnswer(sink, stream, { reasoning: 'r', calls: [{ id: 'x1', name: 'weather', args: { city: 'Ulm' } }] });
      return chatAnswer(sink, stream, { reasoning: 'r', text: `answer ${bodies.length}` });
    }, registry(), (c) => { c.contextCompressor = new native.ContextCompressor(60, 1, undefined, 1); });
    await rt.run(`Weather in Ulm? ${'Please be thorough. '.repeat(20)}`);
    await rt.run('And now?');
    assert.ok(bodies.length >= 5);
    assert.ok(bodies.some((b) => String(b.messages.at(-1).content).startsWith(COMPRESSION_MARK)), 'a summary request on the conversation\'s bytes');
    for (const b of bodies) {
      for (const [k, v] of Object.entries(EXTRA)) assert.deepEqual(b[k], v, `stream=${stream}: ${k} at the top level of every request`);
    }
  }
  // The Anthropic wire merges it too.
  const anthropicBody = await thinkingOutcome('https://api.anthropic.com/v1', 'claude-sonnet-4-5', { wire: 'anthropic', configure: (m) => { m.extraBody = { metadata: { user_id: 'u-2' } }; } });
  assert.deepEqual(anthropicBody.body.metadata, { user_id: 'u-2' });

  // The fields each wire writes itself.
  const refused = async (url, name, wire, extra, configure = () => {}) => thinkingOutcome(url, name, { wire, configure: (m) => { configure(m); m.extraBody = extra; } });
  for (const field of ['model', 'messages', 'tools', 'tool_choice', 'stream', 'stream_options', 'temperature', 'max_tokens', 'max_completion_tokens']) {
    assert.equal(await refused('http://127.0.0.1:8080/v1', 'llama3.3', undefined, { [field]: 1 }), 'extra_body_conflict', `openai wire: ${field}`);
  }
  for (const field of ['model', 'messages', 'tools', 'tool_choice', 'stream', 'temperature', 'max_tokens', 'system']) {
    assert.equal(await refused('https://api.anthropic.com/v1', 'claude-sonnet-4-5', 'anthropic', { [field]: 1 }), 'extra_body_conflict', `anthropic wire: ${field}`);
  }
  // The thinking fields it writes for this config — and only those.
  const DS = ['https://api.deepseek.com', 'deepseek-v4-flash'];
  assert.equal(await refused(...DS, undefined, { thinking: { type: 'enabled' } }, (m) => { m.thinking = 'off'; }), 'extra_body_conflict');
  assert.equal(await refused(...DS, undefined, { reasoning_effort: 'max' }, (m) => { m.thinking = { effort: 'high' }; }), 'extra_body_conflict');
  assert.deepEqual((await refused(...DS, undefined, { thinking: { type: 'enabled' } })).body.thinking, { type: 'enabled' }, 'unset: the library writes no thinking field');
  const Q = ['https://dashscope.aliyuncs.com/compatible-mode/v1', 'qwen3.5-plus'];
  assert.equal(await thinkingOutcome(...Q, { stream: false, configure: (m) => { m.extraBody = { enable_thinking: true }; } }), 'extra_body_conflict', 'Qwen without stream writes enable_thinking itself');
  assert.equal((await thinkingOutcome(...Q, { stream: true, configure: (m) => { m.extraBody = { enable_thinking: true }; } })).body.enable_thinking, true);
  assert.equal(await refused('https://api.openai.com/v1', 'gpt-5', undefined, { reasoning_effort: 'low' }, (m) => { m.thinking = 'off'; }), 'extra_body_conflict');
  assert.equal(await refused('https://api.anthropic.com/v1', 'claude-sonnet-4-5', 'anthropic', { output_config: {} }, (m) => { m.thinking = { effort: 'low' }; }), 'extra_body_conflict');
  const binding = { thinking: { block_binding: { prefix_mismatch_behavior: 'drop_block' } } };
  assert.deepEqual((await refused('https://api.anthropic.com/v1', 'claude-opus-5-5', 'anthropic', binding)).body.thinking, binding.thinking, 'thinking left unset');
  assert.equal(await refused('https://api.anthropic.com/v1', 'claude-opus-5-5', 'anthropic', binding, (m) => { m.thinking = 'on'; }), 'extra_body_conflict');
});

// "a field the library writes itself on the config's wire format — `model`, `messages`,
// `tools`, `tool_choice`, `stream`, `temperature`, `max_tokens` on both; `stream_options` and
// `max_completion_tokens` on `'openai'`; `system` on `'anthropic'` — … is refused with
// `extra_body_conflict`". (Found by this test: the README listed them all for both wires.)
test('think_4_js_every_field_the_readme_lists_for_a_wire_is_refused_in_extraBody_and_the_others_are_sent',
  async () => {
    const BOTH = ['model', 'messages', 'tools', 'tool_choice', 'stream', 'temperature', 'max_tokens'];
    const OWN = { openai: ['stream_options', 'max_completion_tokens'], anthropic: ['system'] };
    const wrong = [];
    for (const [wire, url, name] of [['openai', 'http://127.0.0.1:8080/v1', 'llama3.3'], ['anthropic', 'https://api.anthropic.com/v1', 'claude-sonnet-4-5']]) {
      const other = wire === 'openai' ? OWN.anthropic : OWN.openai;
      for (const field of [...BOTH, ...OWN[wire], ...other]) {
        // eslint-disable-next-line no-await-in-loop
        const out = await thinkingOutcome(url, name, { wire, configure: (m) => { m.extraBody = { [field]: 'x' }; } });
        const refused = out === 'extra_body_conflict';
        if (refused === other.includes(field)) wrong.push(`${wire}:${field} ${refused ? 'refused' : 'sent'}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

// "**Usage and events** (THINK-5): `reasoning_tokens` in every usage and total
// (`completion_tokens_details.reasoning_tokens`; Anthropic's
// `usage.output_tokens_details.thinking_tokens`), priced as output" (index.d.ts ModelUsage:
// "Reasoning tokens (part of the completion tokens)")
test('think_5_cost_2_js_reasoning_tokens_are_in_every_usage_and_total_and_priced_once_as_output_on_both_wires', async () => {
  const price = { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: 0.5, outputPerMillion: 4 };
  for (const wire of ['openai', 'anthropic']) {
    for (const stream of [false, true]) {
      let n = 0;
      const transport = async (request, sink) => {
        void request.body;
        n += 1;
        if (wire === 'openai') {
          const usage = { prompt_tokens: 1000, completion_tokens: 300, total_tokens: 1300, completion_tokens_details: { reasoning_tokens: 250 } };
          return n === 1 ? chatAnswer(sink, stream, { reasoning: 'r', calls: [{ id: 'p1', name: 'weather', args: { city: 'Ghent' } }], usage })
            : chatAnswer(sink, stream, { reasoning: 'r', text: 'ok', usage });
        }
        const usage = { input_tokens: 1000, output_tokens: 300, output_tokens_details: { thinking_tokens: 250 } };
        const block = { type: 'thinking', thinking: 'r', signature: `s${n}` };
        if (stream) {
          const content = n === 1 ? [block, { type: 'tool_use', id: 'p1', name: 'weather', input: { city: 'Ghent' } }] : [block, { type: 'text', text: 'ok' }];
          const stop = n === 1 ? 'tool_use' : 'end_turn';
          const ev = [aEvent('message_start', { message: { id: 'm', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 1000, output_tokens: 1 } } })];
          content.forEach((b, index) => {
            ev.push(aEvent('content_block_start', { index, content_block: b.type === 'tool_use' ? { ...b, input: {} } : { ...b, ...(b.type === 'text' ? { text: '' } : { thinking: '', signature: '' }) } }));
            if (b.type === 'thinking') ev.push(aEvent('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: 'r' } }), aEvent('content_block_delta', { index, delta: { type: 'signature_delta', signature: b.signature } }));
            if (b.type === 'text') ev.push(aEvent('content_block_delta', { index, delta: { type: 'text_delta', text: 'ok' } }));
            if (b.type === 'tool_use') ev.push(aEvent('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } }));
            ev.push(aEvent('content_block_stop', { index }));
          });
          ev.push(aEvent('message_delta', { delta: { stop_reason: stop }, usage: { output_tokens: 300, output_tokens_details: { thinking_tokens: 250 } } }), aEvent('message_stop', {}));
          return streamed(sink, ev);
        }
        return n === 1 ? anthropicAnswer(sink, false, [block, { type: 'tool_use', id: 'p1', name: 'weather', input: { city: 'Ghent' } }], { usage })
          : anthropicAnswer(sink, false, [block, { type: 'text', text: 'ok' }], { usage });
      };
      const m = modelOf('http://gw.test/v1', 'house-model', { wire: wire === 'anthropic' ? 'anthropic' : undefined, stream });
      m.price = price;
      const rt = runtimeOf(m, transport, registry());
      const events = listen(rt);
      const result = await rt.run('Weather in Ghent?');
      await finished(events);
      const label = `${wire} stream=${stream}`;
      // 1000 input at $1/M and 300 output (250 of them reasoning) at $4/M: 1000*1000 + 300*4000 nanos.
      const callCost = { currency: 'USD', nanos: 1000 * 1000 + 300 * 4000 };
      const usages = rt.usages();
      assert.equal(usages.length, 2, label);
      for (const u of usages) {
        assert.deepEqual([u.promptTokens, u.completionTokens, u.reasoningTokens], [1000, 300, 250], `${label}: ${JSON.stringify(u)}`);
        assert.deepEqual(u.cost, callCost, `${label}: reasoning priced once, as output`);
      }
      assert.equal(result.usage.reasoningTokens, 500, label);
      const total = rt.totalUsage().total;
      assert.equal(total.reasoningTokens, 500, label);
      assert.deepEqual(total.costs, [{ currency: 'USD', nanos: 2 * callCost.nanos }], label);
      assert.deepEqual(events.filter((e) => e.type === 'model_response').map((e) => e.usage.reasoningTokens), [250, 250], label);
    }
  }
});
