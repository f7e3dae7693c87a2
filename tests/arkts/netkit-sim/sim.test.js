'use strict';
// OHOS-8: the netstack simulator's own behaviours, each against a plain node:http server
// (no arkagent code involved), so that it stays faithful to netstack rather than to the
// transport it is used to test. The netstack source of each behaviour is cited in http.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const nodeHttp = require('node:http');

const { http, ERRORS } = require('./http');

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

test('ohos_8_sim_destroy_mid_stream_silences_events_and_aborts_at_the_next_bytes', async () => {
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
  assert.deepEqual(log.map((e) => e[0]), ['headersReceive', 'dataReceive'], 'no event after destroy()');
  await server.close();
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
  // A string method outside RequestMethod is sent as is; POST-like bodies default to JSON.
  await http.createHttp().request(server.url + '/c', { method: 'PATCH' });
  await http.createHttp().request(server.url + '/d', { method: http.RequestMethod.POST, extraData: '{"k":1}' });
  assert.deepEqual(seen, [
    { method: 'GET', url: '/a', body: '', type: undefined },
    { method: 'GET', url: '/b?x=1', body: '', type: undefined },
    { method: 'PATCH', url: '/c', body: '', type: undefined },
    { method: 'POST', url: '/d', body: '{"k":1}', type: 'application/json' },
  ]);
  // API 12 refuses a PATCH body: a parse error, nothing sent.
  await assert.rejects(http.createHttp().request(server.url + '/e', { method: 'PATCH', extraData: '{}' }), (e) => e.code === 401 && e.message === 'Parameter error');
  assert.equal(seen.length, 4);
  await server.close();
  // Nobody listening.
  await assert.rejects(http.createHttp().requestInStream(server.url), (e) => e.code === ERRORS.COULDNT_CONNECT[0]);
  // A server that closes without answering.
  const rude = nodeHttp.createServer((req) => req.socket.destroy());
  await new Promise((r) => rude.listen(0, '127.0.0.1', r));
  await assert.rejects(http.createHttp().request(`http://127.0.0.1:${rude.address().port}`), (e) => e.code === ERRORS.GOT_NOTHING[0]);
  await new Promise((r) => rude.close(r));
});

test('ohos_8_sim_on_off', async () => {
  const server = await serve((req, res) => { res.writeHead(200, { 'Content-Type': 'text/event-stream' }); res.end('data: x\n\n'); });
  const client = http.createHttp();
  let a = 0;
  let b = 0;
  const fa = () => { a += 1; };
  const fb = () => { b += 1; };
  client.on('dataEnd', fa);
  client.on('dataEnd', fa); // registered once
  client.on('dataEnd', fb);
  client.off('dataEnd', fb);
  await client.requestInStream(server.url);
  assert.deepEqual([a, b], [1, 0]);
  const other = http.createHttp();
  other.on('dataEnd', fa);
  other.off('dataEnd'); // all of them
  await other.requestInStream(server.url);
  assert.equal(a, 1);
  await server.close();
});
