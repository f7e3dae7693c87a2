'use strict';
// OHOS-9 / PERF-9 (issue 29, NetworkKit round 3): NetworkKitTransport.ets on the netstack
// simulator, driven by the host build of the native module against a local provider:
// streams are not cut by a total cap the docs deny, silence is failed by an idle timer,
// an error status served as an event stream keeps its status and Retry-After, a cancelled
// whole request settles at once and frees its socket by its cap, a whole answer waits
// (bounded) for its final header block after a 100 Continue, and the body goes out as
// the native module's ArrayBuffer, never as a string. Times are scaled down with the
// simulator's setTimeScale (a test hook) so each case takes seconds.

const test = require('node:test');
const assert = require('node:assert/strict');

const { setEventOrder, setTimeScale } = require('./http');
const { har, clients, sleep, waitFor, chunk, provider, runtime, httpRequest, settle } = require('./support');

/** A sink for calling the transport directly (only onCancel and the ends are used). */
function stubSink() {
  const sink = { cancel: null, ended: [] };
  sink.onCancel = (f) => { sink.cancel = f; };
  sink.writeBytes = () => true;
  sink.end = () => sink.ended.push('end');
  sink.fail = (message, code) => sink.ended.push(`fail ${code}`);
  sink.failWithResponse = (response) => sink.ended.push(`failWithResponse ${response.status}`);
  return sink;
}

// Item 1: NetworkKit's readTimeout limits the whole transfer; with the old 10-minute cap a
// reasoning model streaming for 25 minutes was cut. At a thousandth of real time: the old
// cap is 0.6 s, the new default (1 hour) 3.6 s; the stream sends for 1.5 s.
test('ohos_9_netkit_a_stream_that_keeps_sending_past_ten_minutes_is_not_cut', async () => {
  setTimeScale(0.001);
  let ticker;
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    let n = 0;
    ticker = setInterval(() => {
      n += 1;
      if (n <= 15) {
        res.write(chunk({ content: String(n % 10) }));
      } else {
        clearInterval(ticker);
        res.end('data: [DONE]\n\n');
      }
    }, 100);
  }]);
  try {
    const rt = runtime(server, (m) => { m.stream = true; }); // the transport's default options
    const started = Date.now();
    assert.equal((await rt.run('think for a long time')).finalText, '123456789012345');
    assert.ok(Date.now() - started >= 1400, 'the whole stream arrived');
    // The cap still holds: at a ten-thousandth (1 hour: 0.36 s) the same stream is cut.
    setTimeScale(0.0001);
    await assert.rejects(runtime(server, (m) => { m.stream = true; }).run('again'), (e) => e.code === 'llm_timeout');
  } finally {
    setTimeScale(1);
    clearInterval(ticker);
    await server.close();
  }
});

// Item 1: silence is failed by the transport's own idle timer (streamIdleTimeoutMs) with
// the idle code, also when the core's idleTimeoutMs is off; the request is destroyed at
// once, and netstack frees the socket at the cap (nothing arrives to abort on).
test('ohos_9_netkit_a_silent_stream_fails_with_the_idle_code_and_its_socket_goes_at_the_cap', async () => {
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: 'thinking' })); // then silence
  }]);
  const before = clients.length;
  const rt = runtime(server, (m) => { m.stream = true; m.idleTimeoutMs = 0; }, { streamIdleTimeoutMs: 300, streamReadTimeoutMs: 2000 });
  const started = Date.now();
  try {
    await assert.rejects(rt.run('hi'), (e) => e.code === 'llm_timeout');
    const failedAfter = Date.now() - started;
    assert.ok(failedAfter >= 250 && failedAfter < 1500, `failed after ${failedAfter} ms`);
    const entry = clients[before];
    assert.ok(entry.destroyedAt > 0 && entry.destroyedAt - started < 1500, 'destroyed by the idle timer');
    assert.equal(server.sockets[0].closedAt, 0, 'destroy() alone leaves the socket open');
    await waitFor(() => server.sockets[0].closedAt > 0, 'the socket to close at streamReadTimeoutMs', 4000);
    const held = server.sockets[0].closedAt - started;
    assert.ok(held >= 1900 && held < 3500, `closed after ${held} ms`);
  } finally {
    await server.close();
  }
});

// Item 2: a gateway's 429 / 503 with `Content-Type: text/event-stream`. NetworkKit tells the
// status only after the last byte, so the answer starts as a stream; it must still be
// classified as the 429 / 503 it is, waiting what Retry-After asks (not plain backoff),
// in any order netstack may deliver the events in.
test('ohos_9_netkit_an_error_status_served_as_an_event_stream_keeps_its_status_and_retry_after', async () => {
  const limited = (req, res) => {
    res.writeHead(429, { 'Content-Type': 'text/event-stream', 'Retry-After': '0.6' });
    res.end(JSON.stringify({ error: { message: 'slow down', code: 'rate_limit_exceeded' } }));
  };
  const answer = (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.end(chunk({ role: 'assistant', content: 'after the wait' }) + 'data: [DONE]\n\n');
  };
  const tune = (m) => { m.stream = true; m.maxAttempts = 2; m.initialBackoffMs = 1; m.maxBackoffMs = 5000; };
  try {
    for (const order of [null, { headersAfter: 1 }, { seed: 3 }]) {
      setEventOrder(order);
      const server = await provider([limited, answer]);
      assert.equal((await runtime(server, tune).run('hi')).finalText, 'after the wait', JSON.stringify(order));
      const waited = server.requests[1].at - server.requests[0].at;
      assert.ok(waited >= 600 && waited < 3000, `${JSON.stringify(order)}: waited ${waited} ms (backoff alone: ≤ 2 ms)`);
      await server.close();
    }
  } finally {
    setEventOrder(null);
  }
  // A 503 is a server error with its wait; a 429 for an exhausted quota is not retried.
  const server = await provider([
    (req, res) => { res.writeHead(503, { 'Content-Type': 'text/event-stream', 'Retry-After': '3' }); res.end('upstream overloaded'); },
    (req, res) => {
      res.writeHead(429, { 'Content-Type': 'text/event-stream' });
      res.end(JSON.stringify({ error: { message: 'no quota', code: 'insufficient_quota' } }));
    },
    answer,
  ]);
  const once = runtime(server, (m) => { m.stream = true; m.maxAttempts = 1; });
  await assert.rejects(once.run('hi'), (e) => e.code === 'llm_server' && /503/.test(e.message));
  const twice = runtime(server, tune);
  await assert.rejects(twice.run('hi'), (e) => e.code === 'llm_bad_request');
  assert.equal(server.requests.length, 2, 'the quota 429 was not retried');
  await server.close();
});

// Item 3: a whole (not streamed) request cancelled while its server is still silent: it is
// destroyed and its Promise rejects ("cancelled") at once, and netstack frees the socket at
// readTimeoutMs — 65 s by default (here 0.65 s), just above the core's requestTimeoutMs.
test('ohos_9_netkit_a_cancelled_whole_request_settles_at_once_and_frees_its_socket_at_read_timeout', async () => {
  setTimeScale(0.01);
  let res;
  const server = await provider([(req, r) => { res = r; }]); // a model still thinking
  const before = clients.length;
  const sink = stubSink();
  try {
    const started = Date.now();
    const transport = new har.NetworkKitTransport().asTransport();
    const pending = settle(transport(httpRequest('POST', server.baseUrl + '/chat/completions', '{"stream":false}'), sink));
    await waitFor(() => res !== undefined, 'the request at the server');
    const cancelledAt = Date.now();
    sink.cancel();
    const outcome = await Promise.race([pending, sleep(300).then(() => ({ pending: true }))]);
    assert.equal(outcome.error && outcome.error.code, 'cancelled', `settled at once: ${JSON.stringify(outcome)}`);
    assert.ok(clients[before].destroyedAt > 0 && clients[before].destroyedAt - cancelledAt < 100, 'destroyed at once');
    await waitFor(() => server.sockets[0].closedAt > 0, 'the socket to close', 5000);
    const held = server.sockets[0].closedAt - started;
    assert.ok(held >= 600 && held < 1500, `socket held ${held} ms`);
  } finally {
    setTimeScale(1);
    await server.close();
  }
});

// Item 4: a 100 Continue block gives its own 'headersReceive' (no header worth keeping), and
// the final block's event may reach JS only after 'dataEnd' and the status: the answer
// waits for it (bounded) instead of going out with the 1xx block's headers.
test('ohos_9_netkit_a_whole_answer_waits_for_its_final_header_block_after_a_100_continue', async () => {
  const server = await provider([(req, res) => {
    res.writeContinue();
    res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '7' });
    res.end(JSON.stringify({ error: { message: 'slow down' } }));
  }]);
  const transport = new har.NetworkKitTransport().asTransport();
  try {
    // The 100 block's event at once; the final block's after the settlement (≤ 200 ms).
    setEventOrder({ headersAfter: [0, Infinity] });
    for (const stream of [true, false, true]) {
      const response = await transport(httpRequest('POST', server.baseUrl + '/chat/completions', '{}', stream), stubSink());
      assert.equal(response.status, 429);
      assert.ok(response.headers.some((h) => h.name === 'retry-after' && h.value === '7'), `stream ${stream}: ${JSON.stringify(response.headers)}`);
      assert.equal(JSON.parse(response.body).error.message, 'slow down');
    }
    // Bounded: when the final block's event comes later than that (here 3 s), the answer
    // goes after 500 ms with what it has.
    setEventOrder({ headersAfter: [0, Infinity], afterEndMs: 3000, maxHoldMs: 5000 });
    const started = Date.now();
    const late = await transport(httpRequest('POST', server.baseUrl + '/chat/completions', '{}', false), stubSink());
    const took = Date.now() - started;
    assert.ok(took >= 450 && took < 1500, `answered after ${took} ms`);
    assert.equal(late.status, 429);
    assert.equal(JSON.parse(late.body).error.message, 'slow down');
  } finally {
    setEventOrder(null);
    await server.close();
  }
});

// NetworkKitTransportOptions.maxResponseBytes: netstack applies no maxLimit to
// requestInStream, so the transport enforces it on a whole answer.
test('ohos_9_netkit_a_whole_answer_over_max_response_bytes_fails_and_is_destroyed', async () => {
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ padding: 'x'.repeat(5000) }));
  }]);
  const before = clients.length;
  const rt = runtime(server, () => {}, { maxResponseBytes: 1000 });
  await assert.rejects(rt.run('hi'), (e) => e.code === 'llm_transport' && /maxResponseBytes/.test(e.message));
  assert.ok(clients[before].destroyedAt > 0);
  await server.close();
});

// PERF-9: the body goes out as `bodyBytes` (NetworkKit's extraData takes the ArrayBuffer);
// the transport never reads `body`, so the string is never made. An empty body is left out.
test('perf_9_netkit_sends_the_body_bytes_and_never_reads_the_body_string', async () => {
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  }]);
  const text = '{"messages":[{"role":"user","content":"北京 ✓ \\"quoted\\""}]}';
  const request = httpRequest('POST', server.baseUrl + '/chat/completions', text);
  let reads = 0;
  Object.defineProperty(request, 'body', { get: () => { reads += 1; return text; } });
  const transport = new har.NetworkKitTransport().asTransport();
  assert.equal((await transport(request, stubSink())).status, 200);
  assert.equal(server.requests[0].body, text);
  assert.equal(reads, 0, 'request.body was read');
  // What the native module hands over: its `body` stays an unread getter through a run.
  const seen = [];
  const inner = new har.NetworkKitTransport().asTransport();
  const model = new har.ModelConfig(server.baseUrl, 'sk-netkit-test-0000', 'm');
  model.maxAttempts = 1;
  const spy = (req, sink) => {
    const sent = inner(req, sink);
    seen.push({ bytes: req.bodyBytes.byteLength, getter: typeof Object.getOwnPropertyDescriptor(req, 'body').get });
    return sent;
  };
  const rt = new har.AgentRuntime(new har.AgentRuntimeConfig(model), spy, new har.ToolRegistry());
  await assert.rejects(rt.run('你好'), (e) => e.code === 'llm_malformed_response'); // '{}' is no completion
  assert.equal(seen.length, 1);
  assert.ok(seen[0].bytes > 0);
  assert.equal(seen[0].getter, 'function', 'the body string was made');
  assert.equal(JSON.parse(server.requests[1].body).messages.find((m) => m.role === 'user').content, '你好');
  // No body, no extraData (netstack refuses an empty one): a GET goes out bare.
  const bare = await transport(httpRequest('GET', server.baseUrl + '/models', ''), stubSink());
  assert.equal(bare.status, 200);
  assert.deepEqual([server.requests[2].method, server.requests[2].url, server.requests[2].body], ['GET', '/v1/models', '']);
  await server.close();
});

