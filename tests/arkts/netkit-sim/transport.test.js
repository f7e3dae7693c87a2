'use strict';
// OHOS-8: ohos/arkagent/src/main/ets/NetworkKitTransport.ets, transpiled as
// scripts/run-ohostest.js does, on the netstack simulator (http.js), driven by the host
// build of the native module (AgentRuntime) against a local OpenAI-compatible server on
// real sockets. What the server sees (methods, socket closes) is asserted server side.
// Needs the host build (scripts/test-js.sh: $CARGO_TARGET_DIR/arkagent.node or
// ARKAGENT_NODE) and scripts/arkts-lint's node_modules (npm ci; scripts/lint-arkts.sh).

const test = require('node:test');
const assert = require('node:assert/strict');

const { setEventOrder } = require('./http');
const { har, sim, clients, sleep, waitFor, chunk, completion, provider, runtime, httpRequest, settle } = require('./support');

test('ohos_8_netkit_streamed_and_whole_answers', async () => {
  const server = await provider([
    (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(chunk({ role: 'assistant', content: 'Hel' }));
      setTimeout(() => { res.write(chunk({ content: 'lo 世界' })); res.end('data: [DONE]\n\n'); }, 30);
    },
    (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(completion('whole answer'));
    },
  ]);
  const streaming = runtime(server, (m) => { m.stream = true; });
  const deltas = [];
  streaming.subscribe((e) => { if (e.type === 'text_delta') deltas.push(JSON.parse(e.payloadJson).delta); });
  assert.equal((await streaming.run('hi')).finalText, 'Hello 世界');
  await waitFor(() => deltas.join('') === 'Hello 世界', 'the deltas');
  assert.ok(deltas.length >= 2, 'streamed in pieces');
  assert.equal((await runtime(server).run('hi')).finalText, 'whole answer');
  assert.deepEqual(server.requests.map((r) => r.method), ['POST', 'POST']);
  assert.equal(JSON.parse(server.requests[0].body).stream, true);
  await server.close();
});

test('ohos_8_netkit_a_401_on_a_stream_is_an_auth_error_not_200', async () => {
  const server = await provider([
    (req, res) => {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key', code: 'invalid_api_key' } }));
    },
    // A proxy answering an error status with an event stream: the status is only known
    // at the end (after dataEnd), and must fail the stream — as the 502 it is (OHOS-9:
    // classified like any 502, no longer a bare "llm_transport").
    (req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/event-stream' });
      res.end(chunk({ role: 'assistant', content: 'not an answer' }));
    },
  ]);
  const rt = runtime(server, (m) => { m.stream = true; });
  await assert.rejects(rt.run('hi'), (e) => e.code === 'llm_auth');
  await assert.rejects(rt.run('hi'), (e) => e.code === 'llm_server' && /502/.test(e.message));
  await server.close();
});

test('ohos_8_netkit_a_429_with_retry_after_is_retried_per_policy', async () => {
  const server = await provider([
    (req, res) => {
      res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' });
      res.end(JSON.stringify({ error: { message: 'slow down' } }));
    },
    (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(chunk({ role: 'assistant', content: 'after the wait' }) + 'data: [DONE]\n\n');
    },
  ]);
  // Retry-After: 1 s, capped by maxBackoffMs (300 ms).
  const rt = runtime(server, (m) => { m.stream = true; m.maxAttempts = 2; m.initialBackoffMs = 1; m.maxBackoffMs = 300; });
  assert.equal((await rt.run('hi')).finalText, 'after the wait');
  assert.equal(server.requests.length, 2);
  const waited = server.requests[1].at - server.requests[0].at;
  assert.ok(waited >= 250 && waited < 5000, `waited ${waited} ms`);
  await server.close();
});

test('ohos_8_netkit_a_stall_past_the_idle_timeout_is_a_timeout_and_destroys_the_request', async () => {
  let res;
  const server = await provider([(req, r) => {
    res = r;
    r.writeHead(200, { 'Content-Type': 'text/event-stream' });
    r.write(chunk({ role: 'assistant', content: 'thinking' })); // then silence
  }]);
  const before = clients.length;
  const rt = runtime(server, (m) => { m.stream = true; m.idleTimeoutMs = 150; });
  const started = Date.now();
  await assert.rejects(rt.run('hi'), (e) => e.code === 'llm_timeout');
  assert.ok(Date.now() - started < 3000);
  const entry = clients[before];
  await waitFor(() => entry.destroyedAt > 0, 'destroy()');
  // netstack closes the socket when the next bytes arrive after destroy().
  res.write(': keep-alive\n\n');
  await waitFor(() => server.sockets[0].closedAt > 0, 'the socket to close');
  await server.close();
});

test('ohos_8_netkit_cancel_mid_stream_destroys_the_request_and_closes_the_socket', async () => {
  let ticker;
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: 'partial' }));
    // A model still thinking: keep-alive comments every 1.5 s, so that a destroy() made
    // only at the next chunk (a write refused by the sink) would come too late.
    ticker = setInterval(() => res.write(': keep-alive\n\n'), 1500);
    res.on('close', () => clearInterval(ticker));
  }]);
  const before = clients.length;
  const rt = runtime(server, (m) => { m.stream = true; });
  let deltas = 0;
  rt.subscribe((e) => { if (e.type === 'text_delta') deltas += 1; });
  const run = settle(rt.run('hi'));
  await waitFor(() => deltas > 0, 'the first delta');
  const cancelledAt = Date.now();
  rt.cancel();
  const entry = clients[before];
  await waitFor(() => entry.destroyedAt > 0, 'destroy()');
  assert.ok(entry.destroyedAt - cancelledAt < 700, 'destroyed promptly, before the next chunk');
  await waitFor(() => server.sockets[0].closedAt > 0, 'the socket to close');
  assert.ok(server.sockets[0].closedAt - cancelledAt < 2500, 'closed at the next keep-alive');
  const outcome = await run;
  assert.ok(outcome.error ? outcome.error.code === 'cancelled' : outcome.result.status === 'cancelled');
  clearInterval(ticker);
  await server.close();
});

test('ohos_8_netkit_cancel_before_the_first_byte_destroys_the_request', async () => {
  for (const stream of [true, false]) {
    let res;
    const server = await provider([(req, r) => { res = r; }]); // no answer yet
    const before = clients.length;
    const rt = runtime(server, (m) => { m.stream = stream; });
    const run = settle(rt.run('hi'));
    await waitFor(() => res !== undefined, 'the request at the server');
    const cancelledAt = Date.now();
    rt.cancel();
    const entry = clients[before];
    await waitFor(() => entry.destroyedAt > 0, `destroy() (stream: ${stream})`);
    assert.ok(entry.destroyedAt - cancelledAt < 1000, 'destroyed promptly, before any byte');
    await run;
    // netstack aborts the transfer (and closes the socket) when the first bytes arrive.
    assert.equal(server.sockets[0].closedAt, 0);
    res.writeHead(200, { 'Content-Type': stream ? 'text/event-stream' : 'application/json' });
    res.write(stream ? ': hello\n\n' : '{');
    await waitFor(() => server.sockets[0].closedAt > 0, 'the socket to close');
    await server.close();
  }
});

// Issue 18 item 4: API 12 (and 6.0) netstack sends no PATCH (HttpExec::SetOption); the
// transport passes the method through, so PATCH rejects — never goes out as POST.
test('ohos_8_netkit_patch_rejects_on_api_12_and_is_never_sent_as_post', async () => {
  const server = await provider([(req, res) => { res.writeHead(200, { 'Content-Type': 'application/json' }); res.end('{}'); }]);
  const transport = new har.NetworkKitTransport().asTransport();
  // A request of the transport contract, with a stand-in sink (only onCancel is used).
  const sink = { onCancel: () => {} };
  const request = (body, stream = false) => httpRequest('PATCH', server.baseUrl + '/x', body, stream);
  await assert.rejects(transport(request(''), sink), (e) => e.code === 'llm_transport' && /2300999/.test(e.message));
  await assert.rejects(transport(request('', true), sink), (e) => e.code === 'llm_transport' && /2300999/.test(e.message));
  await assert.rejects(transport(request('{"a":1}'), sink), (e) => e.code === 'llm_transport' && /401/.test(e.message));
  await sleep(20);
  assert.equal(server.requests.length, 0, 'nothing was sent');
  // Other methods go out as themselves.
  for (const method of ['GET', 'PUT', 'DELETE']) {
    const response = await transport(httpRequest(method, server.baseUrl + '/y', ''), sink);
    assert.equal(response.status, 200);
  }
  assert.deepEqual(server.requests.map((r) => r.method), ['GET', 'PUT', 'DELETE']);
  await server.close();
});

// README (OHOS-6, OHOS-9): every request goes through `requestInStream`; a stream's
// NetworkKit `readTimeout` (a limit on the whole transfer) is 1 hour
// (`streamReadTimeoutMs`), a request that does not stream gets `readTimeoutMs` (65 s).
test('ohos_9_netkit_read_timeout_is_an_hour_for_a_stream_and_65_s_otherwise', async () => {
  const seen = [];
  const previous = sim.createHttp;
  sim.createHttp = () => {
    const client = previous();
    for (const name of ['request', 'requestInStream']) {
      const call = client[name].bind(client);
      client[name] = (url, options, callback) => {
        seen.push({ name, readTimeout: options && options.readTimeout });
        return callback === undefined ? call(url, options) : call(url, options, callback);
      };
    }
    return client;
  };
  const server = await provider([
    (req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.end(`${chunk({ role: 'assistant', content: 'ok' })}data: [DONE]\n\n`);
    },
    (req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(completion('whole'));
    },
  ]);
  try {
    assert.equal((await runtime(server, (m) => { m.stream = true; }).run('hi')).finalText, 'ok');
    assert.equal((await runtime(server).run('hi')).finalText, 'whole');
    assert.deepEqual(seen, [
      { name: 'requestInStream', readTimeout: 3600000 },
      { name: 'requestInStream', readTimeout: 65000 },
    ]);
    const defaults = new har.NetworkKitTransportOptions();
    assert.deepEqual([defaults.streamReadTimeoutMs, defaults.readTimeoutMs, defaults.streamIdleTimeoutMs], [3600000, 65000, 300000]);
    // Just above the core's requestTimeoutMs (60 s), which fails a whole request first.
    assert.ok(defaults.readTimeoutMs > new har.ModelConfig('http://x/v1', 'sk-x', 'm').requestTimeoutMs);
  } finally {
    sim.createHttp = previous;
    await server.close();
  }
});

// Issue 18 item 2: after an idle-timeout cancel of a silent stream, netstack keeps the
// socket until readTimeout (destroy() only sets a flag): streamReadTimeoutMs bounds it.
test('ohos_8_netkit_an_idle_timeout_cancel_holds_the_socket_at_most_stream_read_timeout_ms', async () => {
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: 'thinking' })); // then silence, for ever
  }]);
  const before = clients.length;
  const rt = runtime(server, (m) => { m.stream = true; m.idleTimeoutMs = 100; }, { streamReadTimeoutMs: 600 });
  const started = Date.now();
  await assert.rejects(rt.run('hi'), (e) => e.code === 'llm_timeout');
  const entry = clients[before];
  await waitFor(() => entry.destroyedAt > 0, 'destroy()');
  await sleep(150);
  assert.equal(server.sockets[0].closedAt, 0, 'destroy() alone leaves the socket open');
  await waitFor(() => server.sockets[0].closedAt > 0, 'the socket to close at readTimeout', 3000);
  const held = server.sockets[0].closedAt - started;
  assert.ok(held >= 550 && held < 2000, `closed after ${held} ms`);
  await server.close();
});

/** One streamed run's answer and its deltas, on a server writing the chunks apart. */
async function streamedRun() {
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: 'Hel' }));
    setTimeout(() => res.write(chunk({ content: 'lo ' })), 15);
    setTimeout(() => { res.write(chunk({ content: '世界' })); res.end('data: [DONE]\n\n'); }, 30);
  }]);
  try {
    const rt = runtime(server, (m) => { m.stream = true; });
    const deltas = [];
    rt.subscribe((e) => { if (e.type === 'text_delta') deltas.push(JSON.parse(e.payloadJson).delta); });
    const result = await rt.run('hi');
    await waitFor(() => deltas.join('') === result.finalText, 'the deltas');
    return { text: result.finalText, deltas: deltas.join('') };
  } finally {
    await server.close();
  }
}

// Issue 18 item 1: a body chunk may reach JS before 'headersReceive' (netstack's two uv
// queues); the first bytes of the stream must not vanish, in any order netstack can deliver.
test('ohos_8_netkit_body_chunks_before_the_headers_are_not_lost', async () => {
  try {
    for (const order of [{ headersAfter: 1 }, { headersAfter: 2 }, { headersAfter: Infinity }]) {
      setEventOrder(order);
      assert.deepEqual(await streamedRun(), { text: 'Hello 世界', deltas: 'Hello 世界' }, JSON.stringify(order));
    }
    for (let seed = 1; seed <= 12; seed += 1) {
      setEventOrder({ seed });
      assert.deepEqual(await streamedRun(), { text: 'Hello 世界', deltas: 'Hello 世界' }, `seed ${seed}`);
    }
  } finally {
    setEventOrder(null);
  }
});

// Issue 18 item 3: the library cancels after netstack finished but before its late
// resolve reached the transport: the transport's Promise still settles, once.
test('ohos_8_netkit_a_cancel_before_a_late_resolve_still_settles_the_promise', async () => {
  const server = await provider([(req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(completion('whole'));
  }]);
  let cancel = null;
  const sink = { onCancel: (f) => { cancel = f; }, writeBytes: () => true, end: () => {}, fail: () => {} };
  const previous = sim.createHttp;
  sim.createHttp = () => {
    const client = previous();
    const call = client.requestInStream.bind(client);
    // netstack is done ('dataEnd' emitted, the status on its way) when the library cancels.
    client.requestInStream = (url, options) => call(url, options).then((code) => { cancel(); return code; });
    return client;
  };
  try {
    const transport = new har.NetworkKitTransport().asTransport();
    const outcome = await Promise.race([
      transport(httpRequest('POST', server.baseUrl + '/chat/completions', '{}', true), sink)
        .then((r) => ({ resolved: r }), (e) => ({ rejected: e.code })),
      sleep(2000).then(() => ({ pending: true })),
    ]);
    assert.deepEqual(outcome, { rejected: 'cancelled' });
  } finally {
    sim.createHttp = previous;
    await server.close();
  }
});

// Issue 18 items 1 and 8: a 100 Continue block gives its own headersReceive, and header
// events may overtake each other and the body: a whole error answer still reaches the core
// with its final headers (Retry-After) and status when the final block's event comes before
// the end. (Not handled: the 1xx block's event alone arriving after dataEnd and the status,
// the final one later still — the answer then carries the 1xx block's headers.)
test('ohos_8_netkit_header_events_overtaking_each_other_keep_the_fullest_headers', async () => {
  const server = await provider([(req, res) => {
    res.writeContinue();
    res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '7' });
    res.end(JSON.stringify({ error: { message: 'slow down' } }));
  }]);
  const sink = { onCancel: () => {}, writeBytes: () => true, end: () => {}, fail: () => {} };
  const transport = new har.NetworkKitTransport().asTransport();
  const request = httpRequest('POST', server.baseUrl + '/chat/completions', '{}', true);
  try {
    // [2, 0]: the 100 block's event overtaken by the final block's and the body.
    for (const order of [null, { headersAfter: 1 }, { headersAfter: [2, 0] }]) {
      setEventOrder(order);
      for (let i = 0; i < 3; i += 1) {
        const response = await transport(request, sink);
        const what = `${JSON.stringify(order)} #${i}`;
        assert.equal(response.status, 429, what);
        assert.ok(response.headers.some((h) => h.name === 'retry-after' && h.value === '7'), `${what}: ${JSON.stringify(response.headers)}`);
        assert.equal(JSON.parse(response.body).error.message, 'slow down', what);
      }
    }
  } finally {
    setEventOrder(null);
    await server.close();
  }
});
