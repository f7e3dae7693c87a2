'use strict';
// PERF-9 through the N-API surface (index.d.ts HttpRequest): the transport gets the request
// body as `bodyBytes`, an ArrayBuffer over the runtime's own bytes (handed over without a
// copy, no JS string made), and as `body`, the same bytes as a string made only when a
// host reads it and then kept; both valid until the transport's Promise settles, when
// `bodyBytes` is detached (byteLength 0) and a `body` never read reads "".

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, completion, modelConfig, runtimeConfig } = require('./support');

const answer = () => ({ status: 200, headers: [], body: completion({ content: 'ok' }) });
const TEXT = '北京 "quoted" \\ 😀 tab\t'.repeat(2000);

test('perf_9_the_body_comes_as_bytes_and_as_a_string_made_only_when_read', async () => {
  let seen;
  const runtime = new native.AgentRuntime(runtimeConfig(), (request) => {
    const before = Object.getOwnPropertyDescriptor(request, 'body');
    const bytes = request.bodyBytes;
    const decoded = Buffer.from(bytes).toString('utf8');
    const text = request.body; // the string is made here
    seen = { request, before, bytes, decoded, text, after: Object.getOwnPropertyDescriptor(request, 'body'), again: request.body };
    return answer();
  }, new native.ToolRegistry());
  await runtime.run(TEXT);
  const { request, before, bytes, decoded, text, after, again } = seen;
  assert.deepEqual(Object.keys(request).sort(), ['body', 'bodyBytes', 'headers', 'method', 'stream', 'url']);
  assert.ok(bytes instanceof ArrayBuffer);
  assert.equal(typeof before.get, 'function', 'body is a getter until read');
  assert.equal(before.enumerable, true);
  // The same bytes: the UTF-8 of the string, the whole request JSON.
  assert.equal(decoded, text);
  assert.equal(JSON.parse(text).messages.at(-1).content, TEXT);
  // Made once, then a plain property holding the same string.
  assert.equal(after.get, undefined);
  assert.equal(after.value, text);
  assert.equal(again, text);
  // Settled: bodyBytes detached; the body read before stays.
  assert.equal(request.bodyBytes.byteLength, 0);
  assert.equal(bytes.byteLength, 0);
  assert.equal(request.body, text);
});

test('perf_9_the_body_is_valid_until_the_promise_settles_then_bytes_are_detached', async () => {
  let request;
  let during;
  const runtime = new native.AgentRuntime(runtimeConfig(), (r) => {
    request = r;
    return new Promise((resolve) => setTimeout(() => {
      during = request.bodyBytes.byteLength; // still open: valid
      resolve(answer());
    }, 20));
  }, new native.ToolRegistry());
  await runtime.run(TEXT);
  assert.ok(during > Buffer.byteLength(TEXT), `${during} bytes while open`);
  assert.equal(request.bodyBytes.byteLength, 0, 'detached once settled');
  assert.equal(request.body, '', 'a body never read before reads ""');
});

test('perf_9_every_attempt_gets_the_same_bytes_and_a_rejection_settles_too', async () => {
  const model = modelConfig();
  model.maxAttempts = 3;
  model.initialBackoffMs = 0;
  model.maxBackoffMs = 0;
  const attempts = [];
  const runtime = new native.AgentRuntime(runtimeConfig({ model }), async (request) => {
    attempts.push({ request, text: Buffer.from(request.bodyBytes).toString('utf8') });
    if (attempts.length < 3) throw new Error('network down');
    return answer();
  }, new native.ToolRegistry());
  assert.equal((await runtime.run(TEXT)).status, 'completed');
  assert.equal(attempts.length, 3);
  assert.ok(attempts.every((a) => a.text === attempts[0].text), 'every attempt sends the same body');
  assert.equal(JSON.parse(attempts[0].text).messages.at(-1).content, TEXT);
  assert.ok(attempts.every((a) => a.request.bodyBytes.byteLength === 0), 'each detached when its call settled');
  assert.notEqual(attempts[0].request.bodyBytes, attempts[1].request.bodyBytes, 'one ArrayBuffer per attempt');
});

test('perf_9_a_streamed_call_detaches_its_bytes_once_resolved_and_still_streams', async () => {
  const model = modelConfig();
  model.stream = true;
  let request;
  const runtime = new native.AgentRuntime(runtimeConfig({ model }), (r, sink) => {
    request = r;
    setImmediate(() => {
      sink.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'streamed' }, finish_reason: 'stop' }] })}\n\n`);
      sink.write('data: [DONE]\n\n');
      sink.end();
    });
    return { status: 200, headers: [], streamed: true };
  }, new native.ToolRegistry());
  assert.equal((await runtime.run('hi')).finalText, 'streamed');
  assert.equal(request.bodyBytes.byteLength, 0);
});
