'use strict';
// TOOL-1..TOOL-3 through the N-API surface: ToolDefinition.requiresApproval, register()'s
// needsApproval, AgentRuntimeConfig.setToolPolicy, AgentRuntime.pendingApprovals /
// approve / reject / resumeRun, the "approval_requested" event; the pause survives a
// SessionStore reopened by a new runtime (an app killed with its dialog open) and
// exportState/importState; hostile answers reject with stable codes and change nothing.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const {
  native, completion, runtimeConfig, ScriptedModel, PAY_SCHEMA, approvalTools, delegatingToAWaitingChild, waitFor,
} = require('./support');

const USAGE = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };

/** The model pays 500 and asks for the weather in one turn, then answers. */
function payAndWeather() {
  return new ScriptedModel([
    () => completion({
      toolCalls: [{ id: 'c_pay', name: 'pay', arguments: { amount: 500 } }, { id: 'c_w', name: 'weather', arguments: {} }],
      usage: USAGE,
    }),
    () => completion({ content: 'paid', usage: USAGE }),
  ], { tools: ['pay', 'weather'] });
}

/** `pay` requires approval; `weather` does not. Records what ran. */
const tools = approvalTools;

function config(sessionId = 'approvals') {
  const c = runtimeConfig();
  c.sessionId = sessionId;
  return c;
}

const toolMessages = (body) => body.messages.filter((m) => m.role === 'tool');

test('tool_1_js_a_tool_requiring_approval_pauses_and_resumeRun_runs_it_once', async () => {
  const ran = [];
  const model = payAndWeather();
  const runtime = new native.AgentRuntime(config(), model.transport, tools(ran));
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const paused = await runtime.run('pay the bill');
  assert.equal(paused.status, 'awaiting_approval');
  assert.deepEqual(paused.pendingApprovals, [{ callId: 'c_pay', name: 'pay', arguments: '{"amount":500}', path: [] }]);
  assert.deepEqual(runtime.pendingApprovals(), paused.pendingApprovals);
  assert.deepEqual(ran, [['c_w', null]], 'weather ran at once, pay waits');
  // historyJson() is the live history: it ends with the paused answer, which exportState()
  // (the committed history, always paired) leaves out.
  const live = JSON.parse(runtime.historyJson());
  const committed = JSON.parse(runtime.exportState()).history.messages;
  assert.deepEqual(live.slice(0, -1), committed);
  assert.deepEqual(live[live.length - 1].tool_calls.map((c) => c.id), ['c_pay', 'c_w']);
  assert.equal(native.toolCallsPaired(JSON.stringify(committed)), true);
  // The same in a runtime the paused session was imported into.
  const imported = new native.AgentRuntime(config(), payAndWeather().transport, tools([]));
  await imported.importState(runtime.exportState());
  assert.deepEqual(JSON.parse(imported.historyJson()), live, 'an imported pause ends with its answer too');
  const requested = events.filter((e) => e.type === 'approval_requested').map((e) => JSON.parse(e.payloadJson));
  assert.deepEqual(requested.map((p) => [p.callId, p.name, p.reason]), [['c_pay', 'pay', 'tool']]);
  assert.equal(await runtime.approve('c_pay'), undefined, 'resolves with nothing');
  const done = await runtime.resumeRun();
  assert.equal(done.status, 'completed');
  assert.equal(done.finalText, 'paid');
  assert.equal(done.runId, paused.runId, 'the paused run goes on');
  assert.deepEqual(done.pendingApprovals, []);
  assert.deepEqual(ran, [['c_w', null], ['c_pay', { amount: 500 }]]);
  assert.deepEqual(model.problems, []);
  assert.deepEqual(toolMessages(model.requests[1].body).map((m) => m.tool_call_id), ['c_pay', 'c_w']);
});

// AgentEventListener: ""run_finished" is always the last event of a run() (or resumeRun())
// call. A run paused for approval hears more under its runId afterwards: answers to it are
// committed ("session_committed", with a store) and resumeRun() goes on with it."
test('tool_1_store_6_js_a_paused_runs_answers_commit_after_its_run_finished_and_resumeRun_ends_with_it', async () => {
  const runtime = new native.AgentRuntime(config('paused-events'), payAndWeather().transport, tools([]), native.SessionStore.openMemory());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const paused = await runtime.run('pay the bill');
  const ofRun = () => events.filter((e) => e.runId === paused.runId).map((e) => e.type);
  await waitFor(() => ofRun().includes('run_finished'), 'run_finished');
  assert.equal(ofRun().at(-1), 'run_finished');
  const before = ofRun().length;
  await runtime.approve('c_pay');
  await waitFor(() => ofRun().length > before, 'the answer\'s commit');
  assert.deepEqual(ofRun().slice(before), ['session_committed']);
  assert.equal((await runtime.resumeRun()).runId, paused.runId);
  await waitFor(() => ofRun().filter((t) => t === 'run_finished').length === 2, 'the resumed run_finished');
  await new Promise((r) => setTimeout(r, 20)); // a late event would show here
  assert.equal(ofRun().at(-1), 'run_finished');
});

test('tool_1_js_reject_and_edited_arguments_reach_the_model_honestly', async () => {
  for (const answer of ['reject', 'edit']) {
    const ran = [];
    const model = payAndWeather();
    const runtime = new native.AgentRuntime(config(), model.transport, tools(ran));
    await runtime.run('pay');
    if (answer === 'reject') await runtime.reject('c_pay', 'too expensive');
    else await runtime.approve('c_pay', '{"amount": 50}');
    await runtime.resumeRun();
    const result = toolMessages(model.requests[1].body)[0].content;
    if (answer === 'reject') {
      assert.deepEqual(ran.map(([id]) => id), ['c_w'], 'a rejected call never runs');
      assert.deepEqual(JSON.parse(result).error, { code: 'tool_rejected', message: 'too expensive' });
    } else {
      assert.deepEqual(ran[1], ['c_pay', { amount: 50 }], 'the edited arguments ran');
      assert.match(result, /^\[The user changed the arguments before this call ran; it ran with \{"amount":50\}\]\npay done$/);
      const assistant = model.requests[1].body.messages.find((m) => m.role === 'assistant');
      assert.equal(assistant.tool_calls[0].function.arguments, '{"amount":500}', 'the model\'s own call stays as it made it');
    }
    assert.deepEqual(model.problems, []);
  }
});

test('tool_1_js_needsApproval_decides_per_call_and_a_throw_asks', async () => {
  const ran = [];
  const registry = new native.ToolRegistry();
  registry.register(new native.ToolDefinition('pay', 'Pays', PAY_SCHEMA), async (call) => {
    ran.push(call.id);
    return { content: 'ok' };
  }, (call) => {
    const { amount } = JSON.parse(call.argumentsJson);
    if (amount < 0) throw new Error('broken predicate');
    return Promise.resolve(amount > 100);
  });
  const model = new ScriptedModel([
    () => completion({
      toolCalls: [
        { id: 'small', name: 'pay', arguments: { amount: 5 } },
        { id: 'big', name: 'pay', arguments: { amount: 900 } },
        { id: 'odd', name: 'pay', arguments: { amount: -1 } },
      ],
      usage: USAGE,
    }),
    () => completion({ content: 'done', usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(config(), model.transport, registry);
  const paused = await runtime.run('pay');
  assert.deepEqual(paused.pendingApprovals.map((p) => p.callId), ['big', 'odd']);
  assert.deepEqual(ran, ['small']);
  await runtime.approve('big');
  await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_pending', 'a call still waits');
  await runtime.reject('odd');
  await runtime.resumeRun();
  assert.deepEqual(ran, ['small', 'big']);
  assert.deepEqual(model.problems, []);
});

test('tool_3_js_the_policy_allows_denies_with_a_reason_and_asks', async () => {
  const ran = [];
  const seen = [];
  const registry = new native.ToolRegistry();
  for (const name of ['delete', 'send', 'read', 'odd', 'broken']) {
    registry.register(new native.ToolDefinition(name, name, '{"type":"object"}'), async (call) => {
      ran.push(call.id);
      return { content: 'ok' };
    });
  }
  const c = config();
  c.setToolPolicy(async (call) => {
    seen.push(call.name);
    if (call.name === 'delete') return { decision: 'deny', reason: 'not in this app' };
    if (call.name === 'send') return { decision: 'ask' };
    if (call.name === 'odd') return { decision: 'maybe' };
    if (call.name === 'broken') throw new Error('policy bug');
    return { decision: 'allow' };
  });
  const model = new ScriptedModel([
    () => completion({
      toolCalls: ['delete', 'send', 'read', 'odd', 'broken', 'missing'].map((name) => ({ id: name, name, arguments: {} })),
      usage: USAGE,
    }),
    () => completion({ content: 'ok', usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(c, model.transport, registry);
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const paused = await runtime.run('go');
  assert.deepEqual(paused.pendingApprovals.map((p) => p.callId), ['send']);
  assert.deepEqual(ran, ['read']);
  assert.deepEqual(seen, ['delete', 'send', 'read', 'odd', 'broken'], 'never for a tool that does not exist');
  const requested = events.find((e) => e.type === 'approval_requested');
  assert.equal(JSON.parse(requested.payloadJson).reason, 'policy');
  await runtime.approve('send');
  await runtime.resumeRun();
  const results = Object.fromEntries(toolMessages(model.requests[1].body).map((m) => [m.tool_call_id, m.content]));
  assert.deepEqual(JSON.parse(results.delete).error, { code: 'tool_denied', message: 'not in this app' });
  assert.match(results.odd, /no valid decision/);
  assert.match(results.broken, /the app's policy failed/);
  assert.match(results.missing, /unknown_tool/);
  assert.deepEqual(ran, ['read', 'send']);
  c.setToolPolicy(undefined);
});

test('tool_2_js_the_pause_and_a_decision_survive_a_new_runtime_on_the_same_store', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-approval-'));
  const file = path.join(dir, 'sessions.db');
  const ran = [];
  const model = new ScriptedModel([
    () => completion({
      toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }, { id: 'b', name: 'pay', arguments: { amount: 2 } },
        { id: 'c_w', name: 'weather', arguments: {} }],
      usage: USAGE,
    }),
    () => completion({ content: 'paid', usage: USAGE }),
  ]);
  let store = native.SessionStore.open(file);
  let runtime = new native.AgentRuntime(config(), model.transport, tools(ran), store);
  await runtime.run('pay twice');
  await runtime.reject('a', 'no');
  // The app is killed with b's dialog open: the runtime goes, the store is released.
  runtime.detachStore();
  runtime = null;
  store = native.SessionStore.open(file);
  const restarted = new native.AgentRuntime(config(), model.transport, tools(ran), store);
  assert.deepEqual(restarted.pendingApprovals().map((p) => p.callId), ['b']);
  // The export carries the pause too.
  const exported = JSON.parse(restarted.exportState());
  assert.equal(exported.pending_turn.calls.length, 3);
  await restarted.approve('b');
  const done = await restarted.resumeRun();
  assert.equal(done.status, 'completed');
  assert.deepEqual(ran.map(([id]) => id), ['c_w', 'b'], 'the call that ran before the kill is not run again');
  assert.match(toolMessages(model.requests[1].body)[0].content, /tool_rejected/);
  assert.deepEqual(model.problems, []);
  restarted.detachStore();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('tool_1_js_hostile_answers_reject_with_stable_codes_and_change_nothing', async () => {
  const ran = [];
  const model = payAndWeather();
  const runtime = new native.AgentRuntime(config(), model.transport, tools(ran));
  await assert.rejects(runtime.approve('c_pay'), (e) => e.code === 'approval_not_pending');
  await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_not_pending');
  await runtime.run('pay');
  const before = runtime.exportState();
  await assert.rejects(runtime.approve('nope'), (e) => e.code === 'approval_unknown_call');
  await assert.rejects(runtime.reject('c_w', 'x'), (e) => e.code === 'approval_already_answered');
  for (const bad of ['not json', '[1]', '{}', 'null']) {
    await assert.rejects(runtime.approve('c_pay', bad), (e) => e.code === 'tool_arguments_invalid', bad);
  }
  await assert.rejects(runtime.run('something else'), (e) => e.code === 'approval_pending');
  await assert.rejects(runtime.compressNow(), (e) => e.code === 'approval_pending');
  await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_pending');
  assert.throws(() => runtime.approve(42), (e) => e.code === 'invalid_argument');
  assert.equal(runtime.exportState(), before, 'the refused calls changed nothing');
  await runtime.approve('c_pay');
  await assert.rejects(runtime.approve('c_pay'), (e) => e.code === 'approval_already_answered');
  await runtime.resumeRun();
  assert.deepEqual(ran.map(([id]) => id), ['c_w', 'c_pay']);
});

test('tool_1_js_cancelApprovals_closes_the_turn_without_a_model_call', async () => {
  const ran = [];
  const model = new ScriptedModel([
    () => completion({
      toolCalls: [{ id: 'c_pay', name: 'pay', arguments: { amount: 500 } }, { id: 'c_w', name: 'weather', arguments: {} }],
      usage: USAGE,
    }),
    () => completion({ content: 'fresh start', usage: USAGE }),
  ], { tools: ['pay', 'weather'] });
  const runtime = new native.AgentRuntime(config(), model.transport, tools(ran));
  assert.equal(await runtime.cancelApprovals(), false, 'nothing waits');
  await runtime.run('pay');
  runtime.cancel(); // no run is active: the paused turn stays
  assert.equal(runtime.pendingApprovals().length, 1);
  assert.equal(await runtime.cancelApprovals(), true);
  assert.equal(model.requests.length, 1, 'no model call');
  assert.deepEqual(runtime.pendingApprovals(), []);
  await assert.rejects(runtime.approve('c_pay'), (e) => e.code === 'approval_not_pending');
  const history = JSON.parse(runtime.historyJson());
  assert.match(JSON.stringify(history.find((m) => m.role === 'tool' && m.tool_call_id === 'c_pay')), /cancelled/);
  assert.equal((await runtime.run('something else')).finalText, 'fresh start');
  assert.deepEqual(ran.map(([id]) => id), ['c_w']);
  assert.deepEqual(model.problems, []);
});

test('tool_1_js_two_answers_at_once_both_land', async () => {
  const ran = [];
  const registry = new native.ToolRegistry();
  const pay = new native.ToolDefinition('pay', 'Pays', PAY_SCHEMA);
  pay.requiresApproval = true;
  registry.register(pay, async (call) => { ran.push(call.id); return { content: 'ok' }; });
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'a', name: 'pay', arguments: { amount: 1 } }, { id: 'b', name: 'pay', arguments: { amount: 2 } }], usage: USAGE }),
    () => completion({ content: 'paid', usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(config(), model.transport, registry, native.SessionStore.openMemory());
  await runtime.run('pay both');
  await Promise.all([runtime.approve('a'), runtime.approve('b')]);
  await runtime.resumeRun();
  assert.deepEqual(ran.sort(), ['a', 'b']);
});

/**
 * A root that delegates to a clone whose `pay` call waits for approval; `childAnswer`
 * makes the clone's answer once it has the call's result.
 */
/** The shared fixture (support.js) on a runtime that allows clones; the parent answers "parent done". */
function delegatingToAWaitingChildRuntime(ran, childAnswer = () => completion({ content: 'child done', usage: USAGE })) {
  const { model, registry } = delegatingToAWaitingChild(ran, { childAnswer, parentAnswer: () => completion({ content: 'parent done', usage: USAGE }) });
  const c = config();
  c.allowClone = true;
  return { model, runtime: new native.AgentRuntime(c, model.transport, registry) };
}

test('tool_1_js_a_sub_agents_call_waits_in_flight_for_the_hosts_answer', async () => {
  const ran = [];
  const { model, runtime } = delegatingToAWaitingChildRuntime(ran, (body) => completion({ content: `child read: ${toolMessages(body)[0].content}`, usage: USAGE }));
  const events = [];
  let answered = null;
  runtime.subscribe((e) => {
    events.push(e);
    if (e.type !== 'sub_agent' || answered) return;
    const child = JSON.parse(e.payloadJson).event;
    if (child.type !== 'approval_requested') return;
    const waiting = runtime.pendingApprovals();
    assert.deepEqual(child.path, waiting[0].path, 'the event carries the delegation path');
    assert.equal(child.callId, waiting[0].callId);
    answered = waiting;
    runtime.approve(waiting[0].callId, '{"amount": 3}');
  });
  const result = await runtime.run('delegate the payment');
  assert.equal(result.status, 'completed');
  assert.equal(result.finalText, 'parent done');
  assert.equal(answered.length, 1);
  assert.equal(answered[0].name, 'pay');
  assert.equal(answered[0].path.length, 1);
  assert.equal(answered[0].callId, `${answered[0].path[0]}/p`);
  assert.deepEqual(ran, [{ amount: 3 }]);
  assert.deepEqual(runtime.pendingApprovals(), []);
  assert.deepEqual(model.problems, []);
  assert.match(model.byRoute.child[1].messages.find((m) => m.role === 'tool').content, /^\[The user changed the arguments/);
});

/** Calls `onWaiting(callId)` once, when the child's call waits for its answer. */
function whenTheChildWaits(runtime, onWaiting) {
  let seen = false;
  runtime.subscribe((e) => {
    if (e.type !== 'sub_agent' || seen) return;
    if (JSON.parse(e.payloadJson).event.type !== 'approval_requested') return;
    seen = true;
    onWaiting(runtime.pendingApprovals()[0].callId);
  });
}

// README "Asking the user first": a sub-agent's call answered late — a dialog tapped twice, or after its sub-agent
// ended — it rejects with approval_already_answered or approval_not_pending, never
// run_in_progress.
test('tool_1_js_a_sub_agents_call_answered_late_says_why_it_no_longer_waits', async () => {
  const ran = [];
  const { model, runtime } = delegatingToAWaitingChildRuntime(ran);
  let callId = null;
  let twice = null;
  whenTheChildWaits(runtime, (id) => {
    callId = id;
    const first = runtime.approve(id);
    twice = runtime.reject(id, 'tapped twice');
    first.catch(() => {});
    twice.catch(() => {});
  });
  const result = await runtime.run('delegate the payment');
  assert.equal(result.status, 'completed');
  assert.ok(callId, 'the child asked');
  await assert.rejects(twice, (e) => e.code === 'approval_already_answered', 'tapped twice while the run goes on');
  await assert.rejects(runtime.approve(callId), (e) => e.code === 'approval_already_answered', 'after its sub-agent ended');
  assert.deepEqual(ran, [{ amount: 7 }], 'the first answer stands');
  assert.deepEqual(model.problems, []);

  const cancelled = delegatingToAWaitingChildRuntime([]);
  let waiting = null;
  whenTheChildWaits(cancelled.runtime, (id) => { waiting = id; cancelled.runtime.cancel(); });
  assert.equal((await cancelled.runtime.run('delegate the payment')).status, 'cancelled');
  assert.ok(waiting, 'the child asked');
  await assert.rejects(cancelled.runtime.approve(waiting), (e) => e.code === 'approval_not_pending', 'never answered, its sub-agent ended');
  assert.deepEqual(cancelled.runtime.pendingApprovals(), []);
});

// index.d.ts approve(): "answered again ... rejects with approval_already_answered": the
// second of two answers given without awaiting is the refused one, whichever worker thread
// runs first (answers are made in the order JS gave them).
test('tool_1_js_answers_are_made_in_the_order_they_were_given', async () => {
  for (let i = 0; i < 20; i++) {
    const ran = [];
    const runtime = new native.AgentRuntime(config(`order-${i}`), payAndWeather().transport, tools(ran));
    await runtime.run('pay');
    const answers = i % 2 === 0
      ? [runtime.approve('c_pay'), runtime.reject('c_pay', 'tapped twice')]
      : [runtime.reject('c_pay', 'no'), runtime.approve('c_pay')];
    const closed = runtime.cancelApprovals();
    const [first, second, cancel] = await Promise.allSettled([...answers, closed]);
    assert.equal(first.status, 'fulfilled', `round ${i}: the first answer stands`);
    assert.equal(second.status, 'rejected', `round ${i}`);
    assert.equal(second.reason.code, 'approval_already_answered');
    assert.equal(cancel.status, 'fulfilled');
    assert.equal(cancel.value, true, 'the turn closed after both answers');
    assert.deepEqual(ran.map(([id]) => id), ['c_w']);
    const tool = JSON.parse(runtime.exportState()).history.messages.filter((m) => m.role === 'tool' && m.tool_call_id === 'c_pay');
    assert.equal(tool.length, 1);
    assert.match(tool[0].content, i % 2 === 0 ? /cancelled/ : /tool_rejected/, `round ${i}: ${tool[0].content}`);
  }
});
