'use strict';
// CHAT-1..CHAT-3 through the N-API surface, as README's "Regenerate, edit, fork" shows it:
// regenerate(runId), editAndResend(runId, input), rewind(runId) and fork(newSessionId,
// throughRunId?) named by RunResult.runId; the "session_rewound" event; totalUsage().discarded;
// a SessionStore that keeps the rewind across a new runtime and hands the fork to another;
// requests after a gesture that start with the bytes the provider saw; stable codes.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { native, completion, runtimeConfig, ScriptedModel, waitFor } = require('./support');

const USAGE = { prompt_tokens: 40, completion_tokens: 3, total_tokens: 43 };

const lastUser = (body) => [...body.messages].reverse().find((m) => m.role === 'user').content;

/** Answers every request "answer to <last user text>". */
function model() {
  return new ScriptedModel(Array.from({ length: 40 }, () => (body) => completion({ content: `answer to ${lastUser(body)}`, usage: USAGE })));
}

function runtime(m, sessionId, store) {
  const c = runtimeConfig();
  c.sessionId = sessionId;
  return new native.AgentRuntime(c, m.transport, new native.ToolRegistry(), store);
}

async function threeRuns(rt) {
  const ids = [];
  for (const text of ['task 1', 'task 2', 'task 3']) ids.push((await rt.run(text)).runId);
  return ids;
}

/** The body up to the end of its last message. */
const upToLastMessage = (raw) => raw.slice(0, raw.lastIndexOf('}]') + 1);

test('chat_1_js_regenerate_sends_the_same_bytes_and_editAndResend_keeps_the_prefix', async () => {
  const m = model();
  const rt = runtime(m, 'gestures');
  const [, r2, r3] = await threeRuns(rt);
  const history = rt.historyJson();
  const again = await rt.regenerate(r3);
  assert.equal(again.status, 'completed');
  assert.notEqual(again.runId, r3, 'a new run id');
  assert.equal(m.requests[3].request.body, m.requests[2].request.body, 'CHAT-3: the same request bytes');
  assert.equal(rt.historyJson(), history);
  const edited = await rt.editAndResend(r2, 'task 9');
  assert.equal(edited.finalText, 'answer to task 9');
  const raw = m.requests[4].request.body;
  assert.ok(raw.startsWith(upToLastMessage(m.requests[0].request.body).slice(0, -1)), 'CHAT-3: starts with run 1\'s bytes');
  assert.deepEqual(JSON.parse(rt.historyJson()).filter((x) => x.role === 'user').map((x) => x.content), ['task 1', 'task 9']);
  assert.deepEqual(m.problems, []);
});

test('chat_1_js_rewind_resolves_what_it_dropped_and_emits_session_rewound', async () => {
  const m = model();
  const rt = runtime(m, 'rewind');
  const [r1, r2, r3] = await threeRuns(rt);
  const before = rt.totalUsage();
  const events = [];
  rt.subscribe((e) => events.push(e));
  const result = await rt.rewind(r2);
  assert.deepEqual(result.droppedRunIds, [r2, r3]);
  assert.equal(result.runId, r2);
  assert.equal(result.inputText, 'task 2');
  assert.equal(result.messagesRemoved, 4);
  assert.equal(result.messageCount, 2);
  assert.equal(result.discarded.callCount, 2);
  assert.deepEqual(events.map((e) => e.type), ['session_rewound']);
  const payload = JSON.parse(events[0].payloadJson);
  assert.equal(payload.rewoundRunId, r2);
  assert.deepEqual(payload.droppedRunIds, [r2, r3]);
  const after = rt.totalUsage();
  assert.deepEqual(after.total, before.total, 'the provider billed them: the total stays');
  assert.equal(after.discarded.totalTokens, 86);
  assert.ok(rt.usages().filter((u) => u.discarded).length === 2);
  // Refusals: stable codes, nothing changed.
  const state = rt.exportState();
  for (const [call, code] of [
    [() => rt.rewind(r3), 'unknown_run'],
    [() => rt.regenerate('nope'), 'unknown_run'],
    [() => rt.editAndResend('nope', 'x'), 'unknown_run'],
    [() => rt.fork('rewind'), 'session_exists'],
    [() => rt.fork(''), 'invalid_config'],
    [() => rt.fork('other', 'nope'), 'unknown_run'],
    [() => rt.rewind(7), 'invalid_argument'],
  ]) {
    if (code === 'invalid_argument') assert.throws(call, (e) => e.code === code, code);
    else await assert.rejects(call(), (e) => e.code === code, code);
  }
  const running = rt.run('task 4');
  await assert.rejects(rt.rewind(r1), (e) => e.code === 'run_in_progress');
  await running;
  await rt.rewind((await rt.regenerate(r1)).runId);
  assert.equal(JSON.parse(rt.exportState()).history.messages.length, 0);
  assert.notEqual(rt.exportState(), state);
});

test('chat_1_chat_2_js_the_store_keeps_the_rewind_and_hands_the_fork_to_another_runtime', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-chat-'));
  const file = path.join(dir, 'chat.db');
  const m = model();
  let store = native.SessionStore.open(file);
  const rt = runtime(m, 'source', store);
  const [r1, r2] = await threeRuns(rt);
  const events = [];
  rt.subscribe((e) => events.push(e.type));
  await rt.rewind(r2);
  assert.deepEqual(events, ['session_rewound', 'session_committed']);
  const fork = JSON.parse(await rt.fork('forked', r1));
  assert.equal(fork.session_id, 'forked');
  assert.equal(fork.history.messages.length, 2);
  assert.equal(fork.usages.length, 0, 'what was spent stays the source\'s');
  await assert.rejects(rt.fork('forked'), (e) => e.code === 'session_exists');
  rt.detachStore();
  store = native.SessionStore.open(file);
  const listed = JSON.parse(JSON.stringify(store.list()));
  assert.deepEqual(listed.map((s) => s.id).sort(), ['forked', 'source']);
  const resumed = runtime(m, 'source', store);
  assert.deepEqual(JSON.parse(resumed.historyJson()).map((x) => x.content), ['task 1', 'answer to task 1']);
  assert.equal(resumed.totalUsage().discarded.callCount, 2, 'the discarded calls survive the restart');
  const before = m.requests.length;
  const forked = runtime(m, 'forked', store);
  await forked.run('task 4');
  // fork(): "session_locked" (another runtime has that session open).
  await assert.rejects(resumed.fork('forked'), (e) => e.code === 'session_locked');
  const raw = m.requests[before].request.body;
  assert.ok(raw.startsWith(upToLastMessage(m.requests[0].request.body).slice(0, -1)), 'CHAT-3: the fork starts with the source\'s bytes');
  await forked.rewind(r1);
  assert.equal(JSON.parse(forked.historyJson()).length, 0);
  assert.equal(JSON.parse(resumed.historyJson()).length, 2, 'independent');
  resumed.detachStore();
  forked.detachStore();
  assert.deepEqual(m.problems, []);
  fs.rmSync(dir, { recursive: true, force: true });
});

// README "Regenerate, edit, fork": "When that run fails before the model answered …, the
// session is put back as it was — the dropped runs return, in the store too
// (`session_committed`) — so nothing is lost".
test('chat_1_js_a_gesture_whose_run_fails_before_an_answer_puts_the_session_back', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-chat-'));
  const file = path.join(dir, 'chat.db');
  let down = false;
  const refusal = { status: 400, headers: [{ name: 'content-type', value: 'application/json' }], body: JSON.stringify({ error: { message: 'refused', type: 'invalid_request_error' } }) };
  const m = new ScriptedModel(Array.from({ length: 40 }, () => (body) => (down ? refusal : completion({ content: `answer to ${lastUser(body)}`, usage: USAGE }))));
  const rt = runtime(m, 'put-back', native.SessionStore.open(file));
  const [, r2, r3] = await threeRuns(rt);
  const history = rt.historyJson();
  const events = [];
  rt.subscribe((e) => events.push(e.type));
  down = true;
  await assert.rejects(rt.regenerate(r3), (e) => e.code === 'llm_bad_request');
  await assert.rejects(rt.editAndResend(r2, 'task 9'), (e) => e.code === 'llm_bad_request');
  assert.equal(rt.historyJson(), history, 'the answers and the inputs are back');
  assert.equal(rt.totalUsage().discarded.callCount, 0);
  await waitFor(() => events.filter((t) => t === 'session_rewound').length === 2 && events.at(-1) === 'session_committed', 'the put-back commit');
  rt.detachStore();
  down = false;
  const resumed = runtime(m, 'put-back', native.SessionStore.open(file));
  assert.equal(resumed.historyJson(), history, 'the store has it too');
  const again = await resumed.regenerate(r3);
  assert.equal(again.finalText, 'answer to task 3');
  resumed.detachStore();
  assert.deepEqual(m.problems, []);
  fs.rmSync(dir, { recursive: true, force: true });
});

// index.d.ts, rewind(): "Rejects … with "invalid_state" (an imported history marks the run
// inside a tool cycle)".
test('chat_1_js_a_run_marked_inside_a_tool_cycle_is_refused_with_invalid_state', async () => {
  const m = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c1', name: 'weather', arguments: '{}' }], usage: USAGE }),
    () => completion({ content: 'sunny', usage: USAGE }),
  ]);
  const rt = runtime(m, 'source');
  const { runId } = await rt.run('task 1');
  const state = JSON.parse(rt.exportState());
  const [user, call, result, answer] = state.history.messages;
  assert.deepEqual([user.role, call.role, result.role, answer.role], ['user', 'assistant', 'tool', 'assistant']);
  state.history.messages = [call, user, result, answer];
  state.runs = [{ ...state.runs[0], message: 1 }];
  const crafted = runtime(m, 'inside');
  crafted.importState(JSON.stringify(state));
  const before = crafted.historyJson();
  await assert.rejects(crafted.rewind(runId), (e) => e.code === 'invalid_state');
  assert.equal(crafted.historyJson(), before);
});
