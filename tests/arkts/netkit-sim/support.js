'use strict';
// Shared by the transport's simulator tests (transport.test.js, OHOS-8; round3.test.js,
// OHOS-9): NetworkKitTransport.ets transpiled as scripts/run-ohostest.js does, on the
// netstack simulator (http.js), driven by the host build of the native module against a
// local OpenAI-compatible server on real sockets. Needs the host build (scripts/test-js.sh:
// $CARGO_TARGET_DIR/arkagent.node or ARKAGENT_NODE) and scripts/arkts-lint's node_modules
// (npm ci; scripts/lint-arkts.sh).

const nodeHttp = require('node:http');
const path = require('node:path');

const { harIndex, kits } = require(path.join(__dirname, '../../../scripts/run-ohostest.js'));

const har = harIndex();
const sim = kits['@kit.NetworkKit'].http;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(predicate, what, ms = 3000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** Every simulated HttpRequest the transport creates, with the time of its destroy(). */
const clients = [];
const createHttp = sim.createHttp;
sim.createHttp = () => {
  const client = createHttp();
  const entry = { client, destroyedAt: 0 };
  const destroy = client.destroy.bind(client);
  client.destroy = () => {
    if (!entry.destroyedAt) entry.destroyedAt = Date.now();
    destroy();
  };
  clients.push(entry);
  return entry;
};
// The transport calls createHttp() and uses the returned object: hand it the client.
const wrapped = sim.createHttp;
sim.createHttp = () => wrapped().client;

function chunk(delta) {
  return `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
}

function completion(content) {
  return JSON.stringify({ id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }] });
}

/**
 * A local OpenAI-compatible server: `script[i](req, res, body)` answers the i-th
 * request. Records requests (method, url, time) and each connection's close time.
 */
async function provider(script) {
  const requests = [];
  const sockets = [];
  const server = nodeHttp.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const index = requests.length;
      requests.push({ method: req.method, url: req.url, at: Date.now(), body });
      (script[index] || script[script.length - 1])(req, res, body);
    });
  });
  server.on('connection', (socket) => {
    const entry = { closedAt: 0 };
    sockets.push(entry);
    socket.on('close', () => { entry.closedAt = Date.now(); });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    sockets,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  };
}

/**
 * A runtime on NetworkKitTransport; `tune(model)` adjusts the ModelConfig, `options` the
 * NetworkKitTransportOptions.
 */
function runtime(server, tune = () => {}, options = {}) {
  const model = new har.ModelConfig(server.baseUrl, 'sk-netkit-test-0000', 'm');
  model.maxAttempts = 1;
  tune(model);
  const transportOptions = Object.assign(new har.NetworkKitTransportOptions(), options);
  const transport = new har.NetworkKitTransport(transportOptions).asTransport();
  return new har.AgentRuntime(new har.AgentRuntimeConfig(model), transport, new har.ToolRegistry());
}

/**
 * A request as the native module hands it over (index.d.ts HttpRequest): the body as
 * `bodyBytes` (an ArrayBuffer) and as `body` (a string).
 */
function httpRequest(method, url, body, stream = false) {
  const bytes = Buffer.from(body, 'utf8');
  return { method, url, headers: [], bodyBytes: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length), body, stream };
}

async function settle(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error };
  }
}

module.exports = { har, sim, clients, sleep, waitFor, chunk, completion, provider, runtime, httpRequest, settle };
