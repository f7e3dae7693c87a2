'use strict';
// PERF-8 / PERF-5 through the N-API surface: the request body reaches the JS transport
// exactly (it is created once from the core's shared bytes, no Rust copy in between), the
// response body comes back exactly through HttpBodySink.write/writeBytes, and the
// Rust→JS→Promise crossing (settled through per-env native functions bound to a call id,
// see bindings/napi/src/callback.rs) resolves every call with its own value, also with
// many crossings in flight at once.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, sseEvent, modelConfig, runtimeConfig,
} = require('./support');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const answer = (content = 'ok') => ({ status: 200, headers: [], body: completion({ content }) });

/** Text that exercises the encoder: every JSON escape, control characters, CJK, emoji. */
function awkwardText(length) {
  const pieces = ['"quoted"', '\\back\\slash', '\n\r\t\b\f', '\u0000\u0001\u001f\u007f', '</script>',
    '汉字テキスト', '😀👩‍👩‍👧', 'é\u0301', '\u2028\u2029', '{"json":[1,2]}', ' plain ascii '];
  let text = '';
  for (let i = 0; text.length < length; i += 1) text += pieces[i % pieces.length];
  return text;
}

/**
 * Runs `input` once and returns the request the transport received, its `body` read while
 * the call was open (PERF-9: `bodyBytes` is detached when the call settles, and a `body`
 * not read before then reads "").
 */
async function requestFor(input) {
  const requests = [];
  const runtime = new native.AgentRuntime(runtimeConfig(), async (request) => {
    void request.body;
    requests.push(request);
    return answer();
  }, new native.ToolRegistry());
  const result = await runtime.run(input);
  assert.equal(result.status, 'completed');
  assert.equal(requests.length, 1);
  return requests[0];
}

test('perf_8_transport_body_is_exactly_the_request_json_for_awkward_and_large_input', async () => {
  for (const input of ['hi', awkwardText(5_000), awkwardText(1_200_000), 'x'.repeat(1_100_000)]) {
    const request = await requestFor(input);
    assert.deepEqual(Object.keys(request).sort(), ['body', 'bodyBytes', 'headers', 'method', 'stream', 'url']);
    assert.equal(typeof request.body, 'string');
    const body = JSON.parse(request.body);
    // The user's text arrives character for character, so no byte was lost or re-encoded…
    assert.equal(body.messages.at(-1).role, 'user');
    assert.ok(body.messages.at(-1).content === input, `user text of ${input.length} chars arrives intact`);
    // …and the body is compact JSON as the core encoded it: re-encoding it changes nothing.
    assert.ok(JSON.stringify(body) === request.body, 'the body is exactly the request JSON');
    assert.ok(Buffer.byteLength(request.body) > Buffer.byteLength(input), 'the whole body, not a prefix');
  }
});

test('perf_8_a_retry_hands_the_transport_the_same_body', async () => {
  const model = modelConfig();
  model.maxAttempts = 3;
  model.initialBackoffMs = 0;
  model.maxBackoffMs = 0;
  const bodies = [];
  const runtime = new native.AgentRuntime(runtimeConfig({ model }), async (request) => {
    bodies.push(request.body);
    if (bodies.length < 3) throw new Error('network down');
    return answer();
  }, new native.ToolRegistry());
  const input = awkwardText(300_000);
  assert.equal((await runtime.run(input)).status, 'completed');
  assert.equal(bodies.length, 3);
  assert.ok(bodies[1] === bodies[0] && bodies[2] === bodies[0], 'every attempt sends the same body');
  assert.equal(JSON.parse(bodies[0]).messages.at(-1).content, input);
});

test('perf_8_streamed_body_arrives_exactly_through_write_and_write_bytes', async () => {
  const text = awkwardText(1_100_000);
  const events = [];
  const chars = Array.from(text); // deltas end on whole characters (no lone surrogates)
  for (let i = 0; i < chars.length; i += 10_000) {
    events.push(sseEvent({ choices: [{ index: 0, delta: { content: chars.slice(i, i + 10_000).join('') }, finish_reason: null }] }));
  }
  events.push(sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }), sseEvent('[DONE]'));
  const sse = Buffer.from(events.join(''), 'utf8');
  for (const how of ['write', 'writeBytes']) {
    const model = modelConfig();
    model.stream = true;
    const runtime = new native.AgentRuntime(runtimeConfig({ model }), (request, sink) => {
      const decoder = new TextDecoder();
      setImmediate(() => {
        // Odd chunk sizes split multi-byte characters (writeBytes) and escapes.
        for (let at = 0; at < sse.length; at += 65_521) {
          const bytes = sse.subarray(at, Math.min(sse.length, at + 65_521));
          assert.equal(how === 'write' ? sink.write(decoder.decode(bytes, { stream: true })) : sink.writeBytes(bytes), true);
        }
        sink.end();
      });
      return { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], streamed: true };
    }, new native.ToolRegistry());
    const result = await runtime.run('stream it');
    assert.equal(result.status, 'completed', how);
    assert.ok(result.finalText === text, `${how}: the streamed answer arrives intact`);
  }
});

test('perf_5_many_concurrent_crossings_each_resolve_with_their_own_value', async () => {
  const N = 64;
  const registry = new native.ToolRegistry();
  let inFlight = 0;
  let maxInFlight = 0;
  // Every shape a crossing can settle with: a plain value, a resolved Promise, a later
  // Promise, a rejection, a synchronous throw, a Promise resolved with the wrong shape.
  registry.register(new native.ToolDefinition('echo', 'Echoes', '{"type":"object"}'), (call) => {
    const { n } = JSON.parse(call.argumentsJson);
    switch (n % 6) {
      case 0: return { content: `plain ${n}` };
      case 1: return Promise.resolve({ content: `resolved ${n}` });
      case 2: {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        return sleep(n % 7).then(() => { inFlight -= 1; return { content: `later ${n}` }; });
      }
      case 3: return sleep(n % 5).then(() => { const e = new Error(`rejected ${n}`); e.code = `E${n}`; throw e; });
      case 4: throw new Error(`thrown ${n}`);
      default: return Promise.resolve({ wrong: n });
    }
  });
  const expected = (n) => [`plain ${n}`, `resolved ${n}`, `later ${n}`, `rejected ${n}`, `thrown ${n}`, null][n % 6];

  const runOne = async (r) => {
    let turn = 0;
    const seen = [];
    const transport = async (request) => {
      turn += 1;
      await sleep(r % 3);
      if (turn === 1) {
        const toolCalls = Array.from({ length: N }, (_, n) => ({ id: `r${r}_c${n}`, name: 'echo', arguments: { n } }));
        return { status: 200, headers: [], body: completion({ toolCalls }) };
      }
      seen.push(...JSON.parse(request.body).messages.filter((m) => m.role === 'tool'));
      return answer(`run ${r}`);
    };
    const config = runtimeConfig();
    config.maxParallelTools = 16;
    const runtime = new native.AgentRuntime(config, transport, registry);
    const result = await runtime.run(`run ${r}`);
    assert.equal(result.finalText, `run ${r}`);
    assert.equal(seen.length, N);
    for (let n = 0; n < N; n += 1) {
      const message = seen.find((m) => m.tool_call_id === `r${r}_c${n}`);
      const want = expected(n);
      if (n % 6 < 3) {
        assert.equal(message.content, want, `r${r}_c${n}`);
        continue;
      }
      // A failed tool's result carries the failure's message (and code) for the model.
      if (n % 6 === 3) assert.deepEqual(JSON.parse(message.content).error, { code: `E${n}`, message: want }, `r${r}_c${n}`);
      if (n % 6 === 4) assert.match(message.content, new RegExp(`\\b${want}\\b`), `r${r}_c${n}`);
      if (n % 6 === 5) assert.match(message.content, /Missing field `content`/, `r${r}_c${n}`);
    }
  };
  // Eight runtimes at once, 64 tool crossings each, 16 at a time per runtime.
  await Promise.all(Array.from({ length: 8 }, (_, r) => runOne(r)));
  assert.ok(maxInFlight > 1, 'crossings overlapped');
});

test('perf_5_promise_settling_handles_eager_thenables_odd_rejections_and_one_env_per_worker', async () => {
  // A Promise subclass whose `then` calls back synchronously, inside the call that chains
  // it; rejections with values that are not Errors.
  class Eager extends Promise {
    then(onFulfilled) {
      onFulfilled({ content: 'eager' });
      return this;
    }
  }
  const shapes = {
    eager: () => new Eager(() => {}),
    string: () => Promise.reject('plain string reason'),
    number: () => Promise.reject(42),
    nothing: () => Promise.reject(undefined),
  };
  const registry = new native.ToolRegistry();
  for (const [name, fn] of Object.entries(shapes)) {
    registry.register(new native.ToolDefinition(name, name, '{"type":"object"}'), fn);
  }
  let turn = 0;
  let results;
  const transport = async (request) => {
    turn += 1;
    if (turn === 1) {
      return { status: 200, headers: [], body: completion({ toolCalls: Object.keys(shapes).map((name) => ({ id: name, name, arguments: {} })) }) };
    }
    results = Object.fromEntries(JSON.parse(request.body).messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]));
    return answer('done');
  };
  assert.equal((await new native.AgentRuntime(runtimeConfig(), transport, registry).run('go')).finalText, 'done');
  assert.equal(results.eager, 'eager');
  assert.match(results.string, /plain string reason/);
  assert.match(results.number, /42/);
  assert.equal(typeof results.nothing, 'string');

  // Each worker thread is its own napi env with its own settling functions: runs there and
  // here at the same time both resolve; a worker terminated while a transport Promise is
  // pending drops it (env cleanup) without taking the process down.
  const { Worker } = require('node:worker_threads');
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    const s = require(workerData.support);
    const answer = { status: 200, headers: [], body: s.completion({ content: 'from worker' }) };
    const pending = workerData.hang;
    const transport = pending ? () => { parentPort.postMessage('pending'); return new Promise(() => {}); }
      : async () => { await new Promise((r) => setTimeout(r, 1)); return answer; };
    (async () => {
      const runtime = new s.native.AgentRuntime(s.runtimeConfig(), transport, new s.native.ToolRegistry());
      const texts = [];
      for (let i = 0; i < 20; i += 1) texts.push((await runtime.run('hi')).finalText);
      parentPort.postMessage(texts.every((t) => t === 'from worker') ? 'ok' : 'bad');
    })();
  `;
  const support = require.resolve('./support');
  const worker = (hang) => new Worker(source, { eval: true, workerData: { support, hang } });
  const first = (w, event) => new Promise((resolve, reject) => { w.once(event, resolve); w.once('error', reject); });

  const busy = [worker(false), worker(false)];
  const here = new native.AgentRuntime(runtimeConfig(), async () => answer('from main'), new native.ToolRegistry());
  const [a, b, mine] = await Promise.all([first(busy[0], 'message'), first(busy[1], 'message'), here.run('hi')]);
  assert.deepEqual([a, b, mine.finalText], ['ok', 'ok', 'from main']);
  await Promise.all(busy.map((w) => w.terminate()));

  const hanging = worker(true);
  assert.equal(await first(hanging, 'message'), 'pending');
  await hanging.terminate();
  // This env's table is untouched by the other env's cleanup.
  assert.equal((await here.run('again')).finalText, 'from main');
});
