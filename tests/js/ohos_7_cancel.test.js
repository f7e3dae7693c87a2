'use strict';
// OHOS-7 through the N-API surface: HttpBodySink.onCancel / .cancelled. The callback runs
// once, on the JS thread, as soon as the library stops wanting a response the host has
// not finished (cancel, request or idle timeout, body no longer needed after [DONE]); never
// after the host finished the request first.

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, completion, textStream, modelConfig, runtimeConfig, waitFor } = require('./support');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SSE_HEADERS = [{ name: 'content-type', value: 'text/event-stream' }];

/** A runtime whose transport is `transport`; `tune(model)` adjusts the ModelConfig. */
function runtimeWith(transport, tune = () => {}) {
  const model = modelConfig();
  model.stream = true;
  model.maxAttempts = 1;
  tune(model);
  return new native.AgentRuntime(runtimeConfig({ model }), transport, new native.ToolRegistry());
}

/** Records onCancel calls of every sink the transport gets: `{ sink, calls, at }`. */
function watched() {
  const requests = [];
  const watch = (sink) => {
    const entry = { sink, calls: 0, at: 0, sync: false };
    let inRegistration = true;
    sink.onCancel(() => {
      entry.calls += 1;
      entry.at = Date.now();
      entry.sync = entry.sync || inRegistration;
    });
    inRegistration = false;
    requests.push(entry);
    return entry;
  };
  return { requests, watch };
}

/** Settles a run whichever way it ends (a cancelled run resolves or rejects). */
async function settle(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error };
  }
}

test('ohos_7_cancel_mid_stream_runs_on_cancel_once_promptly', async () => {
  const { requests, watch } = watched();
  const runtime = runtimeWith((request, sink) => {
    watch(sink);
    assert.equal(sink.cancelled, false);
    setTimeout(() => sink.write(textStream(['partial'])[0]), 1); // then nothing more
    return Promise.resolve({ status: 200, headers: SSE_HEADERS, streamed: true });
  });
  let deltas = 0;
  runtime.subscribe((e) => { if (e.type === 'text_delta') deltas += 1; });
  const run = settle(runtime.run('x'));
  await waitFor(() => deltas > 0, 'the first delta');
  const cancelledAt = Date.now();
  runtime.cancel();
  await waitFor(() => requests[0].calls > 0, 'onCancel', 2000);
  assert.ok(requests[0].at - cancelledAt < 1000, 'promptly, not at the next chunk');
  assert.equal(requests[0].sink.cancelled, true);
  assert.equal(requests[0].sink.write('late'), false);
  const outcome = await run;
  assert.ok(outcome.error ? outcome.error.code === 'cancelled' : outcome.result.status === 'cancelled');
  await sleep(50);
  assert.equal(requests[0].calls, 1, 'once');
});

test('ohos_7_cancel_before_the_first_byte_and_of_a_non_streamed_request', async () => {
  for (const stream of [true, false]) {
    const { requests, watch } = watched();
    const runtime = runtimeWith((request, sink) => {
      assert.equal(request.stream, stream);
      watch(sink);
      return new Promise(() => {}); // no response yet
    }, (m) => { m.stream = stream; });
    const run = settle(runtime.run('x'));
    await waitFor(() => requests.length === 1, 'the request');
    runtime.cancel();
    await waitFor(() => requests[0].calls === 1, `onCancel (stream: ${stream})`, 2000);
    assert.equal(requests[0].sink.cancelled, true);
    await run;
    await sleep(50);
    assert.equal(requests[0].calls, 1);
    assert.equal(requests[0].sync, false, 'never inside a JS call');
  }
});

test('ohos_7_request_and_idle_timeouts_run_on_cancel_once', async () => {
  // requestTimeoutMs: no response arrives.
  let { requests, watch } = watched();
  let runtime = runtimeWith((request, sink) => { watch(sink); return new Promise(() => {}); }, (m) => { m.requestTimeoutMs = 50; });
  await assert.rejects(runtime.run('x'), (e) => e.code === 'llm_timeout');
  await waitFor(() => requests[0].calls === 1, 'onCancel after the request timeout');

  // idleTimeoutMs: the stream stalls after its first chunk.
  ({ requests, watch } = watched());
  runtime = runtimeWith((request, sink) => {
    watch(sink);
    setTimeout(() => sink.write(textStream(['partial'])[0]), 1);
    return Promise.resolve({ status: 200, headers: SSE_HEADERS, streamed: true });
  }, (m) => { m.idleTimeoutMs = 80; });
  const started = Date.now();
  await assert.rejects(runtime.run('x'), (e) => e.code === 'llm_timeout');
  assert.ok(Date.now() - started < 5000, 'cut by idleTimeoutMs');
  await waitFor(() => requests[0].calls === 1, 'onCancel after the idle timeout');
  await sleep(50);
  assert.equal(requests[0].calls, 1);
});

test('ohos_7_done_without_end_cancels_the_rest_of_the_body', async () => {
  const { requests, watch } = watched();
  const runtime = runtimeWith((request, sink) => {
    watch(sink);
    setTimeout(() => { for (const chunk of textStream(['one'])) sink.write(chunk); }, 1); // never end()
    return Promise.resolve({ status: 200, headers: SSE_HEADERS, streamed: true });
  });
  assert.equal((await runtime.run('x')).finalText, 'one');
  await waitFor(() => requests[0].calls === 1, 'onCancel after [DONE]');
});

test('ohos_7_on_cancel_never_runs_after_a_normal_completion', async () => {
  const { requests, watch } = watched();
  const script = [
    // A whole body.
    () => Promise.resolve({ status: 200, body: completion({ content: 'whole' }) }),
    // A stream the host ends in the same tick as its last write.
    (sink) => {
      setTimeout(() => { for (const chunk of textStream(['streamed'])) sink.write(chunk); sink.end(); }, 1);
      return Promise.resolve({ status: 200, headers: SSE_HEADERS, streamed: true });
    },
    // A rejection (the host gave up itself).
    () => Promise.reject(Object.assign(new Error('offline'), { code: 'network' })),
    // A stream the host fails itself (the body broke off) after a first piece.
    (sink) => {
      setTimeout(() => { sink.write(textStream(['par'])[0]); sink.fail('connection reset', 'network'); }, 1);
      return Promise.resolve({ status: 200, headers: SSE_HEADERS, streamed: true });
    },
  ];
  const runtime = runtimeWith((request, sink) => {
    watch(sink);
    return script[requests.length - 1](sink);
  });
  assert.equal((await runtime.run('a')).finalText, 'whole');
  assert.equal((await runtime.run('b')).finalText, 'streamed');
  await assert.rejects(runtime.run('c'), (e) => e.code === 'llm_transport');
  await assert.rejects(runtime.run('d'), (e) => e.code === 'llm_transport');
  assert.equal(requests.length, 4);
  await sleep(100);
  for (const entry of requests) {
    assert.equal(entry.calls, 0);
    assert.equal(entry.sink.cancelled, false);
  }
  // Registered after the completion: never called either.
  let late = 0;
  for (const entry of requests) entry.sink.onCancel(() => { late += 1; });
  await sleep(50);
  assert.equal(late, 0);
});

test('ohos_7_on_cancel_registered_after_the_cancellation_runs_promptly', async () => {
  const sinks = [];
  const runtime = runtimeWith((request, sink) => { sinks.push(sink); return new Promise(() => {}); });
  const run = settle(runtime.run('x'));
  await waitFor(() => sinks.length === 1, 'the request');
  runtime.cancel();
  await waitFor(() => sinks[0].cancelled, 'cancelled');
  let calls = 0;
  sinks[0].onCancel(() => { calls += 1; });
  assert.equal(calls, 0, 'asynchronously, not inside onCancel()');
  await waitFor(() => calls === 1, 'the late callback');
  // A callback that throws does not break the others.
  sinks[0].onCancel(() => { throw new Error('ignored'); });
  sinks[0].onCancel(() => { calls += 1; });
  await waitFor(() => calls === 2, 'the callback after a throwing one');
  await run;
});
