'use strict';
// OHOS-8: the netstack simulator's own behaviours, each against a plain node:http server
// (no arkagent code involved), so that it stays faithful to netstack rather than to the
// transport it is used to test. The netstack source of each behaviour is cited in http.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeHttp = require('node:http');

const { http, ERRORS, setEventOrder, setTimeScale } = require('./http');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A local server answering with `handler(req, res)`; records every socket's close. */
async function serve(handler) {
  const closes = [];
  const server = nodeHttp.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => handler(req, res, body));
  });
  server.on('connection', (socket) => {
    const entry = { closed: false, at: 0 };
    closes.push(entry);
    socket.on('close', () => { entry.closed = true; entry.at = Date.now(); });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    closes,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

/** Records the events of `client` in order, with the Promise's settlement. */
function record(client) {
  const log = [];
  client.on('headersReceive', (h) => log.push(['headersReceive', h]));
  client.on('dataReceive', (d) => log.push(['dataReceive', Buffer.from(d).toString('utf8')]));
  client.on('dataEnd', () => log.push(['dataEnd']));
  client.on('dataReceiveProgress', (p) => log.push(['dataReceiveProgress', p]));
  return log;
}

test('ohos_8_sim_stream_event_order_data_end_before_the_status', async () => {
  const server = await serve((req, res) => {
    res.writeHead(200, [['Content-Type', 'text/event-stream'], ['X-Empty', ''], ['Set-Cookie', 'a=1'], ['Set-Cookie', 'b=2'], ['X-Twice', '1'], ['X-Twice', '2']]);
    res.write('data: one\n\n');
    setTimeout(() => { res.write('data: two\n\n'); res.end(); }, 20);
  });
  const client = http.createHttp();
  const log = record(client);
  const code = await client.requestInStream(server.url + '/s', { method: http.RequestMethod.POST, extraData: '{}' })
    .then((c) => { log.push(['resolved', c]); return c; });
  assert.equal(code, 200);
  const kinds = log.map((e) => e[0]);
  assert.deepEqual(kinds, ['headersReceive', 'dataReceive', 'dataReceive', 'dataEnd', 'resolved']);
  const header = log[0][1];
  // Lower-cased names; no status-line key; empty values dropped; set-cookie an array;
  // a repeated header keeps its last value.
  assert.equal(header['content-type'], 'text/event-stream');
  assert.ok(!Object.keys(header).some((k) => k.startsWith('HTTP/')), JSON.stringify(header));
  assert.ok(!('x-empty' in header));
  assert.deepEqual(header['set-cookie'], ['a=1', 'b=2']);
  assert.equal(header['x-twice'], '2');
  assert.equal(log[1][1] + log[2][1], 'data: one\n\ndata: two\n\n');
  // No progress without a Content-Length (dltotal is 0).
  assert.ok(!kinds.includes('dataReceiveProgress'));
  await server.close();
});

test('ohos_8_sim_an_error_status_resolves_a_stream_after_data_end', async () => {
  const server = await serve((req, res) => {
    res.writeHead(401, { 'Content-Type': 'application/json' });
    res.end('{"error":{"message":"bad key"}}');
  });
  const client = http.createHttp();
  const log = record(client);
  let dataEndSeenBeforeThen = false;
  const code = await client.requestInStream(server.url, { method: http.RequestMethod.POST, extraData: '{}' })
    .then((c) => { dataEndSeenBeforeThen = log.some((e) => e[0] === 'dataEnd'); return c; });
  assert.equal(code, 401, 'an HTTP error status is not a rejection');
  assert.equal(dataEndSeenBeforeThen, true);
  await server.close();
});

test('ohos_8_sim_request_resolves_whole_with_headers_and_no_data_events', async () => {
  const server = await serve((req, res) => {
    res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '2', 'Content-Length': '2' });
    res.end('{}');
  });
  const client = http.createHttp();
  const log = record(client);
  const response = await client.request(server.url, { method: http.RequestMethod.POST, extraData: '{}', expectDataType: http.HttpDataType.ARRAY_BUFFER });
  assert.equal(response.responseCode, 429);
  assert.equal(response.header['retry-after'], '2');
  assert.ok(response.result instanceof ArrayBuffer);
  assert.equal(Buffer.from(response.result).toString(), '{}');
  assert.equal(response.resultType, http.HttpDataType.ARRAY_BUFFER);
  await sleep(10);
  assert.deepEqual(log.map((e) => e[0]), ['headersReceive'], 'request() emits headersReceive only');
  await server.close();
});

test('ohos_8_sim_max_limit_applies_to_request_not_to_streams', async () => {
  const big = 'x'.repeat(64 * 1024);
  const server = await serve((req, res) => { res.writeHead(200, { 'Content-Length': String(big.length) }); res.end(big); });
  await assert.rejects(http.createHttp().request(server.url, { maxLimit: 1024 }), (e) => e.code === ERRORS.WRITE_ERROR[0]);
  const client = http.createHttp();
  const log = record(client);
  assert.equal(await client.requestInStream(server.url, { maxLimit: 1024 }), 200);
  const data = log.filter((e) => e[0] === 'dataReceive').map((e) => e[1]).join('');
  assert.equal(data.length, big.length);
  // With a Content-Length, progress events come along.
  const progress = log.filter((e) => e[0] === 'dataReceiveProgress').map((e) => e[1]);
  assert.ok(progress.length > 0);
  assert.deepEqual(progress.at(-1), { receiveSize: big.length, totalSize: big.length });
  await server.close();
});

test('ohos_8_sim_read_timeout_limits_the_whole_transfer', async () => {
  // The server keeps sending every 20 ms for 600 ms: readTimeout 200 still cuts it.
  const server = await serve((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    let n = 0;
    const tick = setInterval(() => {
      n += 1;
      if (n > 30) { clearInterval(tick); res.end(); } else res.write(': ping\n\n');
    }, 20);
    res.on('close', () => clearInterval(tick));
  });
  const started = Date.now();
  const error = await http.createHttp().requestInStream(server.url, { readTimeout: 200 }).then(() => null, (e) => e);
  assert.ok(error, 'rejected');
  assert.equal(error.code, 2300028);
  assert.equal(error.message, 'Timeout was reached');
  assert.ok(!(error instanceof Error), 'a plain { code, message } object');
  assert.ok(Date.now() - started < 550, 'cut before the stream ended');
  // readTimeout 0: no limit.
  assert.equal(await http.createHttp().requestInStream(server.url, { readTimeout: 0 }), 200);
  await server.close();
});

test('ohos_8_sim_destroy_mid_stream_aborts_at_the_next_bytes', async () => {
  let res;
  const server = await serve((req, r) => { res = r; r.writeHead(200, { 'Content-Type': 'text/event-stream' }); r.write('data: a\n\n'); });
  const client = http.createHttp();
  const log = record(client);
  const settled = client.requestInStream(server.url, {}).then((c) => ['resolved', c], (e) => ['rejected', e]);
  while (!log.some((e) => e[0] === 'dataReceive')) await sleep(2);
  client.destroy();
  client.destroy(); // a second destroy does nothing
  await sleep(50);
  assert.equal(server.closes[0].closed, false, 'destroy() alone does not close the socket');
  res.write('data: b\n\n');
  const [how, error] = await settled;
  assert.equal(how, 'rejected');
  assert.equal(error.code, ERRORS.WRITE_ERROR[0]);
  await sleep(20);
  assert.equal(server.closes[0].closed, true, 'the next bytes abort the transfer and close the socket');
  assert.deepEqual(log.map((e) => e[0]), ['headersReceive', 'dataReceive'], 'bytes after destroy() make no event');
  await server.close();
});

// Issue 18 item 2: destroy() only sets a flag (HttpRequest::Destroy → SetEventDestroy):
// the listeners stay registered and events netstack queued before it still fire.
test('ohos_8_sim_destroy_keeps_listeners_and_queued_events_still_fire', async () => {
  const server = await serve((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.end('data: a\n\n');
  });
  // The headers come after the first body event: destroy() there, with the rest of the
  // transfer (dataEnd, the status) already in.
  setEventOrder({ headersAfter: 1 });
  try {
    const client = http.createHttp();
    const log = [];
    client.on('headersReceive', () => {
      log.push('headersReceive');
      client.destroy();
    });
    client.on('dataReceive', () => log.push('dataReceive'));
    client.on('dataEnd', () => log.push('dataEnd'));
    const outcome = await client.requestInStream(server.url, {}).then((c) => ['resolved', c], (e) => ['rejected', e.code]);
    await sleep(20);
    assert.deepEqual(log, ['dataReceive', 'headersReceive', 'dataEnd'], 'dataEnd, queued before destroy(), still fires');
    assert.deepEqual(outcome, ['resolved', 200]);
    // Nothing cleared the listeners: a destroyed object still calls them.
    let late = 0;
    client.on('dataEnd', () => { late += 1; });
    client.emit('dataEnd');
    assert.equal(late, 1);
  } finally {
    setEventOrder(null);
    await server.close();
  }
});

test('ohos_8_sim_destroy_before_the_first_byte_aborts_when_headers_come_or_at_read_timeout', async () => {
  let res;
  const server = await serve((req, r) => { res = r; });
  const client = http.createHttp();
  const log = record(client);
  const settled = client.request(server.url, {}).then(() => 'resolved', (e) => e.code);
  while (!res) await sleep(2);
  client.destroy();
  await sleep(50);
  assert.equal(server.closes[0].closed, false);
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write('{');
  assert.equal(await settled, ERRORS.WRITE_ERROR[0]);
  await sleep(20);
  assert.equal(server.closes[0].closed, true);
  assert.deepEqual(log, []);
  // A server that never answers: only readTimeout ends a destroyed request.
  const silent = await serve(() => {});
  const quiet = http.createHttp();
  const pending = quiet.requestInStream(silent.url, { readTimeout: 150 }).then(() => 'resolved', (e) => e.code);
  await sleep(30);
  quiet.destroy();
  assert.equal(await pending, ERRORS.TIMEOUT[0]);
  await server.close();
  await silent.close();
});

test('ohos_8_sim_methods_bodies_and_connection_errors', async () => {
  const seen = [];
  const server = await serve((req, res, body) => {
    seen.push({ method: req.method, url: req.url, body, type: req.headers['content-type'] });
    res.end('ok');
  });
  // Default GET; GET extraData goes into the query.
  await http.createHttp().request(server.url + '/a');
  await http.createHttp().request(server.url + '/b', { extraData: 'x=1' });
  await http.createHttp().request(server.url + '/d', { method: http.RequestMethod.POST, extraData: '{"k":1}' });
  await http.createHttp().request(server.url + '/f', { method: http.RequestMethod.DELETE });
  assert.deepEqual(seen, [
    { method: 'GET', url: '/a', body: '', type: undefined },
    { method: 'GET', url: '/b?x=1', body: '', type: undefined },
    { method: 'POST', url: '/d', body: '{"k":1}', type: 'application/json' },
    { method: 'DELETE', url: '/f', body: '', type: undefined },
  ]);
  await server.close();
  // Nobody listening.
  await assert.rejects(http.createHttp().requestInStream(server.url), (e) => e.code === ERRORS.COULDNT_CONNECT[0]);
  // A server that closes without answering.
  const rude = nodeHttp.createServer((req) => req.socket.destroy());
  await new Promise((r) => rude.listen(0, '127.0.0.1', r));
  await assert.rejects(http.createHttp().request(`http://127.0.0.1:${rude.address().port}`), (e) => e.code === ERRORS.GOT_NOTHING[0]);
  await new Promise((r) => rude.close(r));
});

// Issue 18 item 4: at API 12 and 6.0 HttpExec::SetOption refuses a method outside the
// GET / POST families: PATCH never goes out, with or without a body.
test('ohos_8_sim_api_12_never_sends_patch', async () => {
  const seen = [];
  const server = await serve((req, res) => { seen.push(req.method); res.end('ok'); });
  // Without a body: SetOption fails; JS sees 2300999 "Unknown Other Error".
  for (const call of [(c) => c.request(server.url + '/p', { method: 'PATCH' }), (c) => c.requestInStream(server.url + '/p', { method: 'PATCH' })]) {
    const error = await call(http.createHttp()).then(() => null, (e) => e);
    assert.deepEqual(error, { code: 2300999, message: 'Unknown Other Error' });
  }
  // With a body: ParseExtraData fails first (401).
  await assert.rejects(http.createHttp().request(server.url + '/e', { method: 'PATCH', extraData: '{}' }), (e) => e.code === 401 && e.message === 'Parameter error');
  await sleep(20);
  assert.deepEqual(seen, [], 'nothing reached the server');
  await server.close();
});

// EventManager::AddListener removes every listener of the type first: one per type.
test('ohos_8_sim_on_replaces_the_listener_of_a_type_and_off_removes_it', async () => {
  const server = await serve((req, res) => { res.writeHead(200, { 'Content-Type': 'text/event-stream' }); res.end('data: x\n\n'); });
  const client = http.createHttp();
  let a = 0;
  let b = 0;
  const fa = () => { a += 1; };
  const fb = () => { b += 1; };
  client.on('dataEnd', fa);
  client.on('dataEnd', fb); // replaces fa
  await client.requestInStream(server.url);
  assert.deepEqual([a, b], [0, 1]);
  const other = http.createHttp();
  other.on('dataEnd', fa);
  other.off('dataEnd', fb); // not registered: nothing changes
  await other.requestInStream(server.url);
  assert.equal(a, 1);
  const third = http.createHttp();
  third.on('dataEnd', fa);
  third.off('dataEnd'); // all of them
  await third.requestInStream(server.url);
  assert.equal(a, 1);
  await server.close();
});

/** Serves an event stream of `n` chunks, 15 ms apart, so that each is one dataReceive. */
async function chunkedStream(n) {
  return serve((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write('data: 0\n\n');
    let i = 1;
    const tick = setInterval(() => {
      if (i === n) { clearInterval(tick); res.end(); return; }
      res.write(`data: ${i}\n\n`);
      i += 1;
    }, 15);
  });
}

async function orderOf(server) {
  const client = http.createHttp();
  const log = record(client);
  await client.requestInStream(server.url, {}).then((c) => log.push(['resolved', c]));
  await sleep(30); // a header event held past the end
  return log;
}

// Issue 18 item 1: headersReceive and the body travel through different uv queues
// (EmitByUvWithoutCheck vs CreateUvQueueWorkByModuleId): a body chunk may come first.
test('ohos_8_sim_event_order_headers_may_come_after_body_events', async () => {
  const server = await chunkedStream(3);
  try {
    // Default: arrival order.
    assert.deepEqual((await orderOf(server)).map((e) => e[0]),
      ['headersReceive', 'dataReceive', 'dataReceive', 'dataReceive', 'dataEnd', 'resolved']);
    setEventOrder({ headersAfter: 1 });
    assert.deepEqual((await orderOf(server)).map((e) => e[0]),
      ['dataReceive', 'headersReceive', 'dataReceive', 'dataReceive', 'dataEnd', 'resolved']);
    setEventOrder({ headersAfter: Infinity });
    assert.deepEqual((await orderOf(server)).map((e) => e[0]),
      ['dataReceive', 'dataReceive', 'dataReceive', 'dataEnd', 'resolved', 'headersReceive']);
    // Seeded: every position occurs over a few requests; the body keeps its order and
    // dataEnd still comes right before the settlement.
    setEventOrder({ seed: 18 });
    const positions = new Set();
    for (let i = 0; i < 16; i += 1) {
      const log = await orderOf(server);
      const kinds = log.map((e) => e[0]);
      positions.add(kinds.indexOf('headersReceive'));
      const body = kinds.filter((k) => k !== 'headersReceive');
      assert.deepEqual(body, ['dataReceive', 'dataReceive', 'dataReceive', 'dataEnd', 'resolved']);
      assert.equal(log.filter((e) => e[0] === 'dataReceive').map((e) => e[1]).join(''), 'data: 0\n\ndata: 1\n\ndata: 2\n\n');
    }
    assert.ok(positions.has(0) && positions.has(1) && positions.has(5), `positions seen: ${[...positions]}`);
  } finally {
    setEventOrder(null);
    await server.close();
  }
});

// Issue 18 item 8: one headersReceive per header block (OnWritingMemoryHeader at each
// "\r\n\r\n"), each with everything parsed so far; redirects are followed
// (CURLOPT_FOLLOWLOCATION) with the same method string; a redirect's body is not delivered.
test('ohos_8_sim_headers_receive_once_per_header_block_and_redirects_followed', async () => {
  const seen = [];
  const server = await serve((req, res, body) => {
    seen.push([req.method, req.url, body]);
    if (req.url === '/continue') {
      res.writeContinue();
      res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Final': '1' });
      res.end('done');
    } else if (req.url === '/r303') {
      res.writeHead(303, { Location: '/r307', 'Set-Cookie': 'a=1', 'X-Hop': '303' });
      res.end('redirect body');
    } else if (req.url === '/r307') {
      res.writeHead(307, { Location: '/end', 'X-Hop': '307' });
      res.end();
    } else {
      res.writeHead(200, { 'Content-Type': 'text/plain', 'Set-Cookie': 'b=2' });
      res.end('final');
    }
  });
  try {
    const first = http.createHttp();
    const blocks = [];
    first.on('headersReceive', (h) => blocks.push(h));
    const r1 = await first.request(server.url + '/continue', { method: 'POST', extraData: 'x' });
    await sleep(10);
    assert.equal(blocks.length, 2, JSON.stringify(blocks));
    assert.equal(blocks[0]['x-final'], undefined);
    assert.equal(blocks[1]['x-final'], '1');
    assert.equal(r1.result, 'done');

    const second = http.createHttp();
    const hops = [];
    second.on('headersReceive', (h) => hops.push(h));
    const r2 = await second.request(server.url + '/r303', { method: 'POST', extraData: '{"q":1}' });
    await sleep(10);
    assert.equal(r2.responseCode, 200);
    assert.equal(r2.result, 'final', 'only the final body');
    assert.equal(hops.length, 3);
    // Accumulated: a later block keeps the earlier names; set-cookie lines of earlier
    // blocks repeat (ParseHeaders appends them again at each block).
    assert.equal(hops[2]['x-hop'], '307');
    assert.deepEqual(hops[0]['set-cookie'], ['a=1']);
    assert.deepEqual(hops[2]['set-cookie'], ['a=1', 'a=1', 'a=1', 'b=2']);
    assert.deepEqual(r2.header['set-cookie'], hops[2]['set-cookie']);
    // The method string on every hop; the body only on the 307.
    assert.deepEqual(seen.slice(1), [['POST', '/r303', '{"q":1}'], ['POST', '/r307', ''], ['POST', '/end', '']]);
  } finally {
    await server.close();
  }
});

// Issue 18 item 8: OnWritingMemoryBody checks the limit before appending: a write that
// crosses maxLimit is taken; the next one fails.
test('ohos_8_sim_max_limit_is_checked_before_appending', async () => {
  const part = 'x'.repeat(1000);
  const serveParts = (n) => serve((req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    let i = 0;
    const tick = setInterval(() => {
      if (i === n) { clearInterval(tick); res.end(); return; }
      res.write(part);
      i += 1;
    }, 20);
  });
  const two = await serveParts(2);
  const response = await http.createHttp().request(two.url, { maxLimit: 1024 });
  assert.equal(response.result.length, 2000, 'the write crossing 1024 is still taken');
  const three = await serveParts(3);
  await assert.rejects(http.createHttp().request(three.url, { maxLimit: 1024 }), (e) => e.code === ERRORS.WRITE_ERROR[0]);
  // One write larger than the limit fails at once.
  const big = await serve((req, res) => res.end('y'.repeat(4096)));
  await assert.rejects(http.createHttp().request(big.url, { maxLimit: 1024 }), (e) => e.code === ERRORS.WRITE_ERROR[0]);
  await two.close();
  await three.close();
  await big.close();
});

// Issue 18 item 8: without expectDataType the result's type follows content-type
// (BuildRequestCallback): octet-stream and image/* give an ArrayBuffer, anything else a
// string; OBJECT with a body that is not JSON falls back to that rule.
test('ohos_8_sim_result_type_from_content_type_without_expect_data_type', async () => {
  const server = await serve((req, res) => {
    const type = { '/bin': 'application/octet-stream', '/png': 'image/png', '/json': 'application/json', '/text': 'text/plain' }[req.url];
    res.writeHead(200, { 'Content-Type': type });
    res.end(req.url === '/json' ? '{"a":1}' : 'not json');
  });
  const get = (p, options = {}) => http.createHttp().request(server.url + p, options);
  for (const p of ['/bin', '/png']) {
    const r = await get(p);
    assert.equal(r.resultType, http.HttpDataType.ARRAY_BUFFER, p);
    assert.ok(r.result instanceof ArrayBuffer, p);
  }
  for (const p of ['/json', '/text']) {
    const r = await get(p);
    assert.equal(r.resultType, http.HttpDataType.STRING, p);
    assert.equal(typeof r.result, 'string', p);
  }
  const parsed = await get('/json', { expectDataType: http.HttpDataType.OBJECT });
  assert.deepEqual([parsed.resultType, parsed.result], [http.HttpDataType.OBJECT, { a: 1 }]);
  const notJson = await get('/text', { expectDataType: http.HttpDataType.OBJECT });
  assert.deepEqual([notJson.resultType, notJson.result], [http.HttpDataType.STRING, 'not json']);
  const binary = await get('/bin', { expectDataType: http.HttpDataType.OBJECT });
  assert.equal(binary.resultType, http.HttpDataType.ARRAY_BUFFER);
  await server.close();
});

// OHOS-9 / PERF-9: an ArrayBuffer extraData is copied into the request while the options
// are parsed (RequestContext::GetRequestBody → HttpRequestOptions::SetBody), so the caller's
// buffer may change or be detached right after the call; an empty extraData (string or
// ArrayBuffer) fails the parse (GetRequestBody: "if body is empty, return false") with 401.
test('ohos_9_sim_array_buffer_extra_data_is_copied_at_the_call_and_an_empty_one_is_refused', async () => {
  const bodies = [];
  const server = await serve((req, res, body) => {
    bodies.push(body);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
  const bytes = new TextEncoder().encode('{"汉":"字"}');
  const buffer = bytes.buffer.slice(0);
  const pending = http.createHttp().requestInStream(server.url + '/b', { method: http.RequestMethod.POST, extraData: buffer });
  new Uint8Array(buffer).fill(0x41); // the caller reuses its buffer at once
  assert.equal(await pending, 200);
  assert.deepEqual(bodies, ['{"汉":"字"}']);
  for (const extraData of ['', new ArrayBuffer(0)]) {
    for (const inStream of [true, false]) {
      const client = http.createHttp();
      const call = inStream ? client.requestInStream(server.url + '/e', { method: http.RequestMethod.POST, extraData })
        : client.request(server.url + '/e', { method: http.RequestMethod.POST, extraData });
      await assert.rejects(call, (e) => e.code === ERRORS.PARSE[0], `${typeof extraData} inStream ${inStream}`);
    }
  }
  assert.equal(bodies.length, 1, 'nothing else was sent');
  await server.close();
});

// A test hook (not netstack): setTimeScale(f) makes every readTimeout and connectTimeout
// last f times its value, so tests run default options at a scale of seconds.
test('ohos_9_sim_time_scale_shortens_read_timeout', async () => {
  const server = await serve(() => {}); // never answers
  try {
    setTimeScale(0.001);
    const started = Date.now();
    await assert.rejects(http.createHttp().request(server.url + '/slow', { readTimeout: 300000 }), (e) => e.code === ERRORS.TIMEOUT[0]);
    const took = Date.now() - started;
    assert.ok(took >= 250 && took < 2000, `timed out after ${took} ms (300 s at 1/1000)`);
  } finally {
    setTimeScale(1);
    await server.close();
  }
});
