'use strict';
// LLM-2 / LLM-3 / NAPI-4 through the N-API surface: a JS transport that streams the body
// through its HttpBodySink, and the ModelConfig retry and timeout settings.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, textStream, sseEvent, pairingProblems, ScriptedModel, modelConfig, runtimeConfig,
  waitFor,
} = require('./support');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];

function streamingConfig() {
  const model = modelConfig();
  model.stream = true;
  return runtimeConfig({ model });
}

/** Text deltas of `events` as received by a listener. */
function textDeltas(events) {
  return events.filter((e) => e.type === 'text_delta').map((e) => JSON.parse(e.payloadJson).delta);
}

/** `text` as an ArrayBuffer of its UTF-8 bytes, split in two at byte `at`. */
function splitBytes(text, at) {
  const bytes = Buffer.from(text, 'utf8');
  const part = (from, to) => bytes.buffer.slice(bytes.byteOffset + from, bytes.byteOffset + to);
  return [part(0, at), part(at, bytes.length)];
}

test('llm_2_streamed_text_deltas_reach_listeners_before_the_last_chunk', async () => {
  const pieces = ['Hel', 'lo, ', 'stream', 'ing 世界'];
  const usage = { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 };
  const chunks = textStream(pieces, usage);
  const events = [];
  let lastChunkWritten = false;
  const deltasBeforeLastChunk = [];
  let writer;
  const model = new ScriptedModel([
    (body, index, sink) => {
      assert.equal(body.stream, true);
      assert.equal(body.stream_options.include_usage, true);
      assert.ok(sink instanceof native.HttpBodySink, 'the transport gets a sink');
      // Resolve at once ("headers received"), then write the body with gaps.
      writer = (async () => {
        for (let i = 0; i < chunks.length; i += 1) {
          await sleep(10);
          if (i === chunks.length - 1) {
            // Nothing but streaming can deliver every piece before the body is complete.
            await waitFor(() => textDeltas(events).length === pieces.length, 'text deltas before the last chunk');
            lastChunkWritten = true;
          }
          if (chunks[i].includes('世界')) {
            // Bytes, split inside a multi-byte character.
            const at = Buffer.from(chunks[i], 'utf8').indexOf(Buffer.from('世', 'utf8')) + 1;
            for (const part of splitBytes(chunks[i], at)) assert.equal(sink.writeBytes(part), true);
          } else {
            assert.equal(sink.write(chunks[i]), true);
          }
        }
        sink.end();
      })().catch((e) => {
        sink.fail(e.message);
        throw e;
      });
      return { status: 200, headers: SSE_HEADERS, streamed: true };
    },
  ]);
  const runtime = new native.AgentRuntime(streamingConfig(), model.transport, new native.ToolRegistry());
  runtime.subscribe((e) => {
    events.push(e);
    if (e.type === 'text_delta' && !lastChunkWritten) deltasBeforeLastChunk.push(JSON.parse(e.payloadJson).delta);
  });

  const result = await runtime.run('Say hello');
  await writer;
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');

  assert.deepEqual(model.problems, []);
  assert.deepEqual(deltasBeforeLastChunk, pieces, 'every delta arrived while the body was still open');
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'Hello, streaming 世界');
  assert.deepEqual(textDeltas(events), pieces);
  const types = events.map((e) => e.type);
  assert.ok(types.lastIndexOf('text_delta') < types.indexOf('model_response'), 'deltas come before the response');
  const usages = runtime.usages();
  assert.equal(usages.length, 1);
  assert.deepEqual([usages[0].promptTokens, usages[0].completionTokens, usages[0].totalTokens], [11, 4, 15]);
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant']);
  assert.equal(history[1].content, 'Hello, streaming 世界');
});

test('llm_2_truncated_stream_fails_with_a_code_and_leaves_history_paired', async () => {
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('echo', 'Echoes', '{"type":"object"}'), async (call) => ({ content: call.argumentsJson }));
  const deltas = [];
  /** Streams two pieces, waits until the first was delivered, then breaks off with `code`. */
  const truncated = (code) => (body, index, sink) => {
    (async () => {
      sink.write(textStream(['Partial ', 'answer'])[0]);
      sink.write(textStream(['Partial ', 'answer'])[1]);
      await waitFor(() => deltas.length > 0, 'a delta before the break');
      sink.fail('connection reset by peer', code);
      assert.equal(sink.write(sseEvent('[DONE]')), false, 'no writes after fail()');
    })();
    return { status: 200, headers: SSE_HEADERS, streamed: true };
  };
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { x: 1 } }] }),
    truncated('ECONNRESET'),
  ], { tools: ['echo'] });
  const runtime = new native.AgentRuntime(streamingConfig(), model.transport, registry);
  const events = [];
  runtime.subscribe((e) => {
    events.push(e);
    if (e.type === 'text_delta') deltas.push(e);
  });

  await assert.rejects(runtime.run('Echo then answer'), (e) => {
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'llm_transport');
    return true;
  });
  assert.deepEqual(model.problems, []);
  assert.equal(model.requests.length, 2, 'a stream that already delivered text is not retried');
  const history = JSON.parse(runtime.historyJson());
  assert.deepEqual(history.map((m) => m.role), ['user', 'assistant', 'tool']);
  assert.deepEqual(pairingProblems(history), []);
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
  const finished = JSON.parse(events.at(-1).payloadJson);
  assert.deepEqual([finished.status, finished.errorCode], ['failed', 'llm_transport']);

  // fail() with code "timeout" is a timeout.
  deltas.length = 0;
  const timing = new ScriptedModel([truncated('timeout')]);
  const runtime2 = new native.AgentRuntime(streamingConfig(), timing.transport, new native.ToolRegistry());
  runtime2.subscribe((e) => { if (e.type === 'text_delta') deltas.push(e); });
  await assert.rejects(runtime2.run('x'), (e) => e.code === 'llm_timeout');
  // The first call failed (its partial text was never committed): the input is taken out.
  assert.deepEqual(JSON.parse(runtime2.historyJson()).map((m) => m.role), []);
});

test('llm_2_sink_writes_after_the_library_stopped_reading_return_false', async () => {
  const sinks = [];
  const model = new ScriptedModel([
    // The whole answer, [DONE] included, but never end(): the library stops reading at [DONE].
    (body, index, sink) => {
      sinks.push(sink);
      setTimeout(() => { for (const chunk of textStream(['one'])) sink.write(chunk); }, 5);
      return { status: 200, headers: SSE_HEADERS, streamed: true };
    },
    // Ended properly.
    (body, index, sink) => {
      sinks.push(sink);
      setTimeout(() => { for (const chunk of textStream(['two'])) sink.write(chunk); sink.end(); }, 5);
      return { status: 200, headers: SSE_HEADERS, streamed: true };
    },
  ]);
  const runtime = new native.AgentRuntime(streamingConfig(), model.transport, new native.ToolRegistry());
  assert.equal((await runtime.run('first')).finalText, 'one');
  assert.equal(sinks[0].write(sseEvent('[DONE]')), false, 'the reader is gone after [DONE]');
  assert.equal(sinks[0].writeBytes(new ArrayBuffer(4)), false);
  assert.equal((await runtime.run('second')).finalText, 'two');
  assert.equal(sinks[1].write('late'), false, 'no writes after end()');
  sinks[1].end();
  sinks[1].fail('ignored after end');
  assert.deepEqual(model.problems, []);
  assert.throws(() => new native.HttpBodySink(), 'sinks come only with transport calls');
});

test('llm_2_whole_body_responses_still_work_when_streaming_is_requested', async () => {
  const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
  const model = new ScriptedModel([
    // An SSE body resolved whole (no sink), then a JSON completion from a server that ignored stream: true.
    () => ({ status: 200, headers: SSE_HEADERS, body: textStream(['whole ', 'sse'], usage).join('') }),
    () => completion({ content: 'plain json', usage }),
  ]);
  const runtime = new native.AgentRuntime(streamingConfig(), model.transport, new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  assert.equal((await runtime.run('a')).finalText, 'whole sse');
  assert.equal((await runtime.run('b')).finalText, 'plain json');
  await waitFor(() => events.filter((e) => e.type === 'run_finished').length === 2, 'both runs finished');
  assert.deepEqual(textDeltas(events), ['whole ', 'sse', 'plain json']);
  assert.deepEqual(runtime.usages().map((u) => u.totalTokens), [5, 5]);
  assert.deepEqual(model.problems, []);
});

test('llm_3_model_config_retry_and_timeout_map_to_the_core', async () => {
  const model = modelConfig();
  assert.deepEqual([model.maxAttempts, model.initialBackoffMs, model.maxBackoffMs, model.requestTimeoutMs], [3, 500, 8000, 60000]);
  // OHOS-6 (README "Time limits", index.d.ts): idleTimeoutMs defaults to 120 s; 0 is none.
  assert.equal(model.idleTimeoutMs, 120000);
  model.idleTimeoutMs = 0;
  assert.equal(model.idleTimeoutMs, 0);
  model.idleTimeoutMs = 2500;
  assert.equal(model.idleTimeoutMs, 2500);
  model.maxAttempts = 5;
  model.initialBackoffMs = 10;
  model.maxBackoffMs = 20;
  model.requestTimeoutMs = 0;
  assert.deepEqual([model.maxAttempts, model.initialBackoffMs, model.maxBackoffMs, model.requestTimeoutMs], [5, 10, 20, 0]);
  for (const name of ['maxAttempts', 'initialBackoffMs', 'maxBackoffMs', 'requestTimeoutMs', 'idleTimeoutMs']) {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      assert.throws(() => { model[name] = bad; }, (e) => e.code === 'invalid_config', `${name} = ${bad}`);
    }
  }
  assert.throws(() => { model.maxAttempts = 2 ** 32; }, (e) => e.code === 'invalid_config');
  assert.equal(model.maxAttempts, 5, 'a refused value changes nothing');

  /** Counts the calls of a transport that always fails with a retryable error. */
  async function attempts(configure) {
    let calls = 0;
    const m = modelConfig();
    configure(m);
    const runtime = new native.AgentRuntime(runtimeConfig({ model: m }), async () => {
      calls += 1;
      throw new Error('network down');
    }, new native.ToolRegistry());
    await assert.rejects(runtime.run('x'), (e) => e.code === 'llm_transport');
    return calls;
  }
  assert.equal(await attempts((m) => { m.maxAttempts = 1; }), 1);
  assert.equal(await attempts((m) => { m.maxAttempts = 4; m.initialBackoffMs = 0; m.maxBackoffMs = 0; }), 4);

  // requestTimeoutMs bounds an attempt whose response never comes.
  const slow = modelConfig();
  slow.maxAttempts = 1;
  slow.requestTimeoutMs = 50;
  const never = () => new Promise(() => {});
  const runtime = new native.AgentRuntime(runtimeConfig({ model: slow }), never, new native.ToolRegistry());
  const started = Date.now();
  await assert.rejects(runtime.run('x'), (e) => e.code === 'llm_timeout');
  assert.ok(Date.now() - started < 5000, 'timed out by the setting, not the 60 s default');
});
