'use strict';
// Promises of index.d.ts that no other test checked, read as a stranger who has only the
// docs: approve/reject/cancelApprovals/resumeRun (TOOL-1, TOOL-2), rewind/regenerate/
// editAndResend/fork (CHAT-1, CHAT-2), importState with a SessionStore (CORE-6, STORE-2),
// the sub-agent registry (ISO-1, ISO-4, SUB-6), ToolAbortSignal (TOOL-4) and MCP servers
// (MCP-1, MCP-3). Each test quotes the sentence it checks.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const {
  native, completion, runtimeConfig, ScriptedModel, RoutedModel, offeredTools, waitFor, deferred, approvalTools,
} = require('./support');
const { tinyMcpAnswer } = require('./mcp_servers');

const USAGE = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const toolMessages = (body) => body.messages.filter((m) => m.role === 'tool');
const payloads = (events, type) => events.filter((e) => e.type === type).map((e) => JSON.parse(e.payloadJson));
const lastUser = (body) => [...body.messages].reverse().find((m) => m.role === 'user').content;

/** The model's turn that pays 500 and asks for the weather. */
const payAndWeatherTurn = () => completion({
  toolCalls: [{ id: 'c_pay', name: 'pay', arguments: { amount: 500 } }, { id: 'c_w', name: 'weather', arguments: {} }],
  usage: USAGE,
});

function config(sessionId) {
  const c = runtimeConfig();
  c.sessionId = sessionId;
  return c;
}

function tmpDb(tag) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `arkagent-dts-${tag}-`));
  return { dir, file: path.join(dir, 'sessions.db') };
}

async function finishedRun(events, runId, status) {
  await waitFor(() => events.some((e) => e.type === 'run_finished' && e.runId === runId
    && JSON.parse(e.payloadJson).status === status), `run_finished ${status}`);
}

// ------------------------------------------------------------------ TOOL-1 / TOOL-2

// resumeRun(): "events as for a run, under the paused run's id, starting with
// "run_started" (empty input)." (AgentEvent: "run_finished" is always a run's last event.)
test('tool_1_js_resumeRun_events_start_with_run_started_of_empty_input_under_the_paused_run_id', async () => {
  const ran = [];
  const model = new ScriptedModel([payAndWeatherTurn, () => completion({ content: 'paid', usage: USAGE })]);
  const runtime = new native.AgentRuntime(config('resume-events'), model.transport, approvalTools(ran));
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const paused = await runtime.run('pay the bill');
  assert.equal(paused.status, 'awaiting_approval');
  await finishedRun(events, paused.runId, 'awaiting_approval');
  const mark = events.length;
  await runtime.approve('c_pay');
  const done = await runtime.resumeRun();
  assert.equal(done.status, 'completed');
  await finishedRun(events, paused.runId, 'completed');
  const resumed = events.slice(mark);
  assert.equal(resumed[0].type, 'run_started', resumed.map((e) => e.type).join());
  assert.deepEqual(JSON.parse(resumed[0].payloadJson), { type: 'run_started', input: '' });
  assert.equal(resumed.at(-1).type, 'run_finished');
  assert.ok(resumed.every((e) => e.runId === paused.runId), 'every event under the paused run\'s id');
  assert.deepEqual(model.problems, []);
});

// resumeRun(): "the run goes on as run() does (it may pause again) ... Rejects with
// "approval_not_pending", ... "run_in_progress""; cancelApprovals(): "Rejects with
// "run_in_progress""; rewind(): "Rejects ... "run_in_progress"".
test('tool_1_js_a_resumed_run_holds_the_slot_may_pause_again_and_then_nothing_waits', async () => {
  const ran = [];
  const gate = deferred();
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c1', name: 'pay', arguments: { amount: 1 } }], usage: USAGE }),
    async () => {
      await gate.promise;
      return completion({ toolCalls: [{ id: 'c2', name: 'pay', arguments: { amount: 2 } }], usage: USAGE });
    },
    () => completion({ content: 'both paid', usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(config('pause-again'), model.transport, approvalTools(ran));
  const first = await runtime.run('pay twice');
  await runtime.approve('c1');
  assert.deepEqual(ran, [], 'an approved call of the paused turn runs only when the run resumes');
  const resuming = runtime.resumeRun();
  await assert.rejects(runtime.resumeRun(), (e) => e.code === 'run_in_progress', 'resumeRun during resumeRun');
  await waitFor(() => model.requests.length === 2, 'the resumed model call');
  await assert.rejects(runtime.cancelApprovals(), (e) => e.code === 'run_in_progress', 'cancelApprovals during a run');
  await assert.rejects(runtime.rewind(first.runId), (e) => e.code === 'run_in_progress', 'rewind during a run');
  gate.resolve();
  const again = await resuming;
  assert.equal(again.status, 'awaiting_approval', 'it paused again');
  assert.equal(again.runId, first.runId);
  assert.deepEqual(again.pendingApprovals.map((p) => p.callId), ['c2']);
  await runtime.approve('c2');
  const done = await runtime.resumeRun();
  assert.deepEqual([done.status, done.finalText], ['completed', 'both paid']);
  assert.deepEqual(ran.map(([id]) => id), ['c1', 'c2']);
  await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_not_pending', 'nothing waits any more');
  assert.deepEqual(model.problems, []);
});

// approve(): "The answer is committed to the SessionStore (off the JS thread) before the
// Promise resolves: an app killed after that loses nothing." (with editedArgumentsJson)
// resumeRun(): "the approved calls run (each at most once ...)".
test('tool_2_js_an_approval_with_edited_arguments_survives_a_restart_and_runs_once', async () => {
  const { dir, file } = tmpDb('approve');
  const ran = [];
  const model = new ScriptedModel([payAndWeatherTurn, () => completion({ content: 'paid', usage: USAGE })]);
  const runtime = new native.AgentRuntime(config('approve-kill'), model.transport, approvalTools(ran), native.SessionStore.open(file));
  await runtime.run('pay');
  await runtime.approve('c_pay', '{"amount": 7}');
  assert.equal(runtime.detachStore(), true); // the app is killed: nothing more is committed
  const restarted = new native.AgentRuntime(config('approve-kill'), model.transport, approvalTools(ran), native.SessionStore.open(file));
  await assert.rejects(restarted.approve('c_pay'), (e) => e.code === 'approval_already_answered', 'the answer was kept');
  const done = await restarted.resumeRun();
  assert.equal(done.status, 'completed');
  assert.deepEqual(ran, [['c_w', null], ['c_pay', { amount: 7 }]], 'the edited arguments ran, once');
  assert.match(toolMessages(model.requests[1].body)[0].content, /^\[The user changed the arguments/);
  assert.deepEqual(model.problems, []);
  restarted.detachStore();
  fs.rmSync(dir, { recursive: true, force: true });
});

// cancelApprovals(): "every call that did not run is answered as on a cancel ("cancelled"
// ...), the calls that ran keep their results, the turn joins the history and is committed
// (off the JS thread); ... answering afterwards rejects with "approval_not_pending"".
test('tool_1_js_cancelApprovals_is_committed_to_the_store_and_survives_a_restart', async () => {
  const { dir, file } = tmpDb('cancel');
  const ran = [];
  const model = new ScriptedModel([payAndWeatherTurn, () => completion({ content: 'fresh', usage: USAGE })]);
  const runtime = new native.AgentRuntime(config('cancel-kill'), model.transport, approvalTools(ran), native.SessionStore.open(file));
  await runtime.run('pay');
  assert.equal(await runtime.cancelApprovals(), true);
  assert.equal(runtime.detachStore(), true);
  const restarted = new native.AgentRuntime(config('cancel-kill'), model.transport, approvalTools(ran), native.SessionStore.open(file));
  assert.deepEqual(restarted.pendingApprovals(), []);
  const exported = JSON.parse(restarted.exportState());
  assert.ok(!exported.pending_turn, 'no paused turn in the store');
  const history = exported.history.messages;
  assert.equal(native.toolCallsPaired(JSON.stringify(history)), true);
  const results = Object.fromEntries(history.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, JSON.stringify(m.content)]));
  assert.match(results.c_pay, /cancelled/);
  assert.match(results.c_w, /sunny/, 'the call that ran keeps its result');
  await assert.rejects(restarted.approve('c_pay'), (e) => e.code === 'approval_not_pending');
  await assert.rejects(restarted.resumeRun(), (e) => e.code === 'approval_not_pending');
  assert.equal((await restarted.run('something else')).finalText, 'fresh');
  assert.equal(model.requests.length, 2);
  assert.deepEqual(ran.map(([id]) => id), ['c_w']);
  assert.deepEqual(model.problems, []);
  restarted.detachStore();
  fs.rmSync(dir, { recursive: true, force: true });
});

// ------------------------------------------------------------------ CHAT-1 / CHAT-2

// rewind(): "that run and every later one are dropped — their messages, a turn of theirs
// waiting for approval — as one change".
test('chat_1_js_rewind_drops_a_turn_waiting_for_approval', async () => {
  const ran = [];
  const model = new ScriptedModel([
    () => completion({ content: 'hello', usage: USAGE }),
    payAndWeatherTurn,
    (body) => completion({ content: `answer to ${lastUser(body)}`, usage: USAGE }),
  ]);
  const runtime = new native.AgentRuntime(config('rewind-paused'), model.transport, approvalTools(ran));
  await runtime.run('hi');
  const paused = await runtime.run('pay');
  assert.equal(paused.status, 'awaiting_approval');
  const dropped = await runtime.rewind(paused.runId);
  assert.deepEqual(dropped.droppedRunIds, [paused.runId]);
  assert.equal(dropped.inputText, 'pay');
  assert.equal(dropped.messageCount, 2);
  assert.deepEqual(runtime.pendingApprovals(), []);
  assert.ok(!JSON.parse(runtime.exportState()).pending_turn, 'no paused turn exported');
  assert.equal(JSON.parse(runtime.historyJson()).length, 2, 'the live history lost the paused answer too');
  await assert.rejects(runtime.approve('c_pay'), (e) => e.code === 'approval_not_pending');
  await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_not_pending');
  const next = await runtime.run('again');
  assert.equal(next.finalText, 'answer to again');
  assert.ok(!JSON.stringify(model.requests[2].body).includes('c_pay'), 'the dropped turn is not sent');
  assert.deepEqual(ran.map(([id]) => id), ['c_w']);
  assert.deepEqual(model.problems, []);
});

// rewind(): "Like run(), it takes the run slot before the Promise is returned." — and
// run(): "a run() (or compressNow()) while a run is active rejects with code
// "run_in_progress"": a run() called right after rewind(), before its Promise settled,
// is refused (every time, not only when the worker thread is slow).
// SessionRewoundPayload: "The event's `run_id` is empty."
test('chat_1_js_rewind_takes_the_run_slot_before_its_promise_is_returned', async () => {
  for (const withStore of [false, true]) {
    const ROUNDS = 20;
    const model = new ScriptedModel(Array.from({ length: 3 * ROUNDS + 2 }, () => (body) => completion({ content: `answer to ${lastUser(body)}`, usage: USAGE })));
    const store = withStore ? native.SessionStore.openMemory() : undefined;
    const runtime = new native.AgentRuntime(config(`rewind-slot-${withStore}`), model.transport, new native.ToolRegistry(), store);
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const accepted = [];
    for (let i = 0; i < ROUNDS; i++) {
      const r = (await runtime.run(`round ${i}`)).runId;
      const rewinding = runtime.rewind(r);
      const early = runtime.run('too early'); // called before rewind()'s Promise settled
      const [rewound, run] = await Promise.allSettled([rewinding, early]);
      assert.equal(rewound.status, 'fulfilled', `round ${i}: the rewind`);
      if (run.status === 'fulfilled') {
        accepted.push(i);
        await runtime.rewind(run.value.runId); // undo the run that got in
      } else {
        assert.equal(run.reason.code, 'run_in_progress', `round ${i}`);
      }
    }
    assert.deepEqual(accepted, [], `${withStore ? 'with' : 'without'} a store: run() called before rewind() settled was accepted in ${accepted.length}/${ROUNDS} rounds`);
    await waitFor(() => events.some((e) => e.type === 'session_rewound'), 'session_rewound');
    assert.ok(events.filter((e) => e.type === 'session_rewound').every((e) => e.runId === ''), 'the event\'s run id is empty');
    assert.deepEqual(model.problems, []);
    if (store) runtime.detachStore();
  }
});

// fork(): "Like run(), it takes the run slot before the Promise is returned and holds it
// until the Promise settles": a run() called right after fork() is refused, every time.
test('chat_2_js_fork_holds_the_run_slot_until_its_promise_settles', async () => {
  const model = new ScriptedModel([(body) => completion({ content: `answer to ${lastUser(body)}`, usage: USAGE })]);
  const store = native.SessionStore.openMemory();
  const runtime = new native.AgentRuntime(config('fork-slot'), model.transport, new native.ToolRegistry(), store);
  const r = (await runtime.run('one')).runId;
  for (let i = 0; i < 20; i++) {
    const forking = runtime.fork(`fork-slot-${i}`, r);
    const [forked, early] = await Promise.allSettled([forking, runtime.run('too early')]);
    assert.equal(forked.status, 'fulfilled', `round ${i}: the fork`);
    assert.equal(early.status, 'rejected', `round ${i}: run() called before fork() settled`);
    assert.equal(early.reason.code, 'run_in_progress');
  }
  assert.deepEqual(model.problems, []);
  runtime.detachStore();
});

// regenerate(): "rewind(runId), then a new run ... as one call" (rewind(): "Like run(), it
// takes the run slot before the Promise is returned"): a run() called before it settled is
// refused, and so are compressNow() and importState().
test('chat_1_js_regenerate_holds_the_run_slot_until_its_promise_settles', async () => {
  const model = new ScriptedModel(Array.from({ length: 30 }, () => (body) => completion({ content: `answer to ${lastUser(body)}`, usage: USAGE })));
  const runtime = new native.AgentRuntime(config('regenerate-slot'), model.transport, new native.ToolRegistry(), native.SessionStore.openMemory());
  let r = (await runtime.run('one')).runId;
  for (let i = 0; i < 10; i++) {
    const regenerating = runtime.regenerate(r);
    // Handlers attached at once: the two rejections settle in either order.
    const early = assert.rejects(runtime.run('too early'), (e) => e.code === 'run_in_progress', `round ${i}: run()`);
    const compress = assert.rejects(runtime.compressNow(), (e) => e.code === 'run_in_progress', `round ${i}: compressNow()`);
    assert.throws(() => runtime.importState(runtime.exportState()), (e) => e.code === 'run_in_progress', `round ${i}: importState()`);
    await early;
    await compress;
    const again = await regenerating;
    assert.equal(again.finalText, 'answer to one');
    r = again.runId;
  }
  assert.deepEqual(JSON.parse(runtime.historyJson()).map((m) => m.content), ['one', 'answer to one']);
  assert.deepEqual(model.problems, []);
  runtime.detachStore();
});

/** A compressor that archives the first `split` messages. */
function splittingAt(split) {
  return async () => native.CompressOutcome.compressed(split, 'the user said one and two').toJson();
}

// rewind(): "Rejects (nothing changes) with ... "run_compressed" (a compression archived its
// input into an episode: refused, never a guess)"; regenerate()/editAndResend(): "Rejects
// like rewind() (then no run starts)"; fork(): "Rejects (nothing written) with ...
// "run_compressed" (the point is inside what a compression archived)".
test('chat_1_chat_2_js_a_run_whose_input_a_compression_archived_is_refused_run_compressed', async () => {
  const model = new ScriptedModel(Array.from({ length: 10 }, () => (body) => completion({ content: `answer to ${lastUser(body)}`, usage: USAGE })));
  const c = config('compressed-runs');
  c.setCustomCompressor(splittingAt(3));
  const store = native.SessionStore.openMemory();
  const runtime = new native.AgentRuntime(c, model.transport, new native.ToolRegistry(), store);
  const ids = [];
  for (const text of ['one', 'two', 'three']) ids.push((await runtime.run(text)).runId);
  const [r1, r2, r3] = ids;
  const compressed = await runtime.compressNow();
  assert.equal(compressed.outcome, 'compressed', JSON.stringify(compressed));
  const state = runtime.exportState();
  const requests = model.requests.length;
  for (const [what, call] of [
    ['rewind r1', () => runtime.rewind(r1)],
    ['rewind r2 (its input archived)', () => runtime.rewind(r2)],
    ['regenerate r1', () => runtime.regenerate(r1)],
    ['editAndResend r2', () => runtime.editAndResend(r2, 'changed')],
    ['fork through r1', () => runtime.fork('fork-r1', r1)],
  ]) {
    await assert.rejects(call(), (e) => e.code === 'run_compressed', what);
  }
  assert.equal(runtime.exportState(), state, 'nothing changed');
  assert.equal(model.requests.length, requests, 'no run started');
  assert.deepEqual(store.list().map((s) => s.id), ['compressed-runs'], 'no fork written');
  const dropped = await runtime.rewind(r3);
  assert.deepEqual(dropped.droppedRunIds, [r3], 'a run after the archived part still rewinds');
  assert.deepEqual(model.problems, []);
  runtime.detachStore();
});

// fork(): "(... absent: the whole session, a turn waiting for approval included) ...
// Resolves with the fork's state JSON (what importState() takes ...). This session does
// not change"; "Rejects (nothing written) with ... "run_in_progress"".
test('chat_2_js_a_fork_of_a_paused_session_carries_the_waiting_turn_and_the_source_does_not_change', async () => {
  const ran = [];
  const model = new ScriptedModel([payAndWeatherTurn, () => completion({ content: 'source paid', usage: USAGE })]);
  const source = new native.AgentRuntime(config('fork-source'), model.transport, approvalTools(ran));
  await source.run('pay');
  const before = source.exportState();
  const forkJson = await source.fork('fork-paused');
  assert.equal(source.exportState(), before, 'the source does not change');
  assert.deepEqual(source.pendingApprovals().map((p) => p.callId), ['c_pay']);
  const fork = JSON.parse(forkJson);
  assert.equal(fork.session_id, 'fork-paused');
  assert.deepEqual(fork.usages, [], 'its usages start empty');
  const forkRan = [];
  const forkModel = new ScriptedModel([(body) => {
    const results = Object.fromEntries(toolMessages(body).map((m) => [m.tool_call_id, m.content]));
    assert.equal(results.c_w, 'sunny', 'the call that ran in the source keeps its result');
    assert.match(results.c_pay, /tool_rejected/);
    return completion({ content: 'fork declined', usage: USAGE });
  }]);
  const forked = new native.AgentRuntime(config('other-id'), forkModel.transport, approvalTools(forkRan));
  await forked.importState(forkJson);
  assert.deepEqual(forked.pendingApprovals().map((p) => p.callId), ['c_pay'], 'the waiting turn came along');
  await forked.reject('c_pay');
  assert.equal((await forked.resumeRun()).finalText, 'fork declined');
  assert.deepEqual(forkRan, [], 'weather is not run again in the fork');
  assert.deepEqual(forkModel.problems, []);
  // The source is independent: its call still waits and its answer is its own.
  assert.deepEqual(source.pendingApprovals().map((p) => p.callId), ['c_pay']);
  await source.approve('c_pay');
  assert.equal((await source.resumeRun()).finalText, 'source paid');
  assert.deepEqual(ran.map(([id]) => id), ['c_w', 'c_pay']);
  assert.deepEqual(model.problems, []);

  // During a run: refused, nothing written.
  const gate = deferred();
  const slow = new ScriptedModel([async () => { await gate.promise; return completion({ content: 'late', usage: USAGE }); }]);
  const store = native.SessionStore.openMemory();
  const busy = new native.AgentRuntime(config('fork-busy'), slow.transport, new native.ToolRegistry(), store);
  const running = busy.run('go');
  await assert.rejects(busy.fork('fork-during-run'), (e) => e.code === 'run_in_progress');
  gate.resolve();
  await running;
  assert.ok(!store.list().some((s) => s.id === 'fork-during-run'), 'nothing written');
  busy.detachStore();
});

// ------------------------------------------------------------------ CORE-6 / STORE-2

// importState(): "With one [a store], the import is first written to the store ... off the
// JS thread ... Until it settles, run() and compressNow() are refused with
// "run_in_progress"." and "Throws "invalid_json", "invalid_state" or "run_in_progress"
// (nothing changes)."
test('core_6_js_importState_with_a_store_holds_the_run_slot_until_it_settles', async () => {
  const donor = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([() => completion({ content: 'theirs', usage: USAGE })]).transport, new native.ToolRegistry());
  await donor.run('a different conversation');
  const imported = donor.exportState();
  const store = native.SessionStore.openMemory();
  const model = new ScriptedModel([() => completion({ content: 'mine', usage: USAGE }), () => completion({ content: 'after', usage: USAGE })]);
  const runtime = new native.AgentRuntime(config('import-slot'), model.transport, new native.ToolRegistry(), store);
  await runtime.run('my conversation');
  const before = runtime.exportState();
  assert.throws(() => runtime.importState('{"version":'), (e) => e.code === 'invalid_json');
  assert.equal(runtime.exportState(), before, 'a refused import changes nothing');
  for (let i = 0; i < 20; i++) {
    const importing = runtime.importState(i % 2 === 0 ? imported : before);
    const run = runtime.run('too early');
    const compress = runtime.compressNow();
    assert.throws(() => runtime.importState(imported), (e) => e.code === 'run_in_progress', `round ${i}: a second import`);
    // Both settle before either is awaited: handled together, so neither rejection is
    // seen as unhandled while the other is awaited.
    const [ran, compressed] = await Promise.allSettled([run, compress]);
    assert.equal(ran.status, 'rejected', `round ${i}: run()`);
    assert.equal(ran.reason.code, 'run_in_progress', `round ${i}: run()`);
    assert.equal(compressed.status, 'rejected', `round ${i}: compressNow()`);
    assert.equal(compressed.reason.code, 'run_in_progress', `round ${i}: compressNow()`);
    await importing;
  }
  assert.equal(runtime.exportState(), before);
  assert.equal((await runtime.run('continue')).finalText, 'after');
  assert.deepEqual(model.problems, []);
  runtime.detachStore();
});

// ------------------------------------------------------------------ ISO / SUB

/** A parent delegating to `builder`, whose SubAgentFactory waits for `gate`. */
function delegationWithAGatedFactory(gate, onFactory) {
  const isParent = (body) => offeredTools(body).includes('delegate_task');
  const model = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'builder', task_description: 'build it' } }], usage: USAGE }),
      (body) => completion({ content: `parent read: ${toolMessages(body)[0].content}`, usage: USAGE }),
    ] },
    { name: 'worker', match: (body) => !isParent(body), turns: [() => completion({ content: 'built', usage: USAGE })] },
  ]);
  const c = runtimeConfig();
  c.registerSubAgent(native.SubAgentDefinition.create('builder', 'Builds', async (worker) => {
    onFactory();
    await gate.promise;
    worker.systemPrompt = 'You are the builder.';
  }));
  return { model, runtime: new native.AgentRuntime(c, model.transport, new native.ToolRegistry()) };
}

// activeChildren(): "a view of the registry, so each is in subAgents().active and
// closeSubAgents() reaches it"; closeSubAgents(): "A delegation whose SubAgentFactory has
// not settled has no child yet: it is not listed and not reached (the child starts once
// the factory settles); cancel() the run to stop it."
test('iso_1_js_a_delegation_whose_factory_has_not_settled_has_no_child_yet_and_cancel_stops_it', async () => {
  for (const stop of ['closeSubAgents', 'cancel']) {
    const gate = deferred();
    let building = false;
    const { model, runtime } = delegationWithAGatedFactory(gate, () => { building = true; });
    const running = runtime.run('delegate the build');
    await waitFor(() => building, 'the factory is building the worker');
    assert.deepEqual(runtime.activeChildren(), [], 'no child while its factory runs');
    assert.deepEqual(runtime.subAgents().active, [], 'the same view');
    if (stop === 'closeSubAgents') assert.equal(runtime.closeSubAgents(), 0, 'nothing to reach');
    else runtime.cancel();
    gate.resolve();
    const result = await running;
    if (stop === 'closeSubAgents') {
      assert.equal(result.status, 'completed');
      assert.equal(result.finalText, 'parent read: built', 'the child started once its factory settled');
      assert.equal(model.byRoute.worker.length, 1);
    } else {
      assert.equal(result.status, 'cancelled');
      assert.equal(model.byRoute.worker.length, 0, 'the cancelled delegation never started its child');
    }
    assert.deepEqual(runtime.activeChildren(), []);
    assert.deepEqual(model.problems, []);
  }
});

// forceCompleteSubAgent(): "The registry is this runtime's: after a resume or importState()
// the earlier children are in totalUsage() only."; "false when it is not running (or
// delegation is off)"; subAgents(): "Empty without delegation."
test('iso_4_sub_6_js_after_importState_earlier_children_are_in_totalUsage_only', async () => {
  const isParent = (body) => offeredTools(body).includes('delegate_task');
  const model = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'dig' } }], usage: USAGE }),
      () => completion({ content: 'parent done', usage: USAGE }),
    ] },
    { name: 'child', match: (body) => !isParent(body), turns: [() => completion({ content: 'dug', usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34 } })] },
  ]);
  const c = runtimeConfig();
  c.allowClone = true;
  const parent = new native.AgentRuntime(c, model.transport, new native.ToolRegistry());
  await parent.run('dig into it');
  const [child] = parent.subAgents().history;
  const children = parent.totalUsage().children;
  assert.deepEqual([children.totalTokens, children.callCount], [34, 1]);
  const c2 = runtimeConfig();
  c2.allowClone = true;
  const importer = new native.AgentRuntime(c2, new ScriptedModel([]).transport, new native.ToolRegistry());
  await importer.importState(parent.exportState());
  const view = importer.subAgents();
  assert.deepEqual([view.active.length, view.history.length, view.stats.completedCount, view.stats.totalTokens], [0, 0, 0, 0]);
  assert.deepEqual(importer.totalUsage().children, children, 'in totalUsage() only');
  assert.deepEqual(importer.totalUsage().total, parent.totalUsage().total);
  assert.equal(importer.forceCompleteSubAgent(child.id, 'user-stopped'), false);
  const plain = new native.AgentRuntime(runtimeConfig(), new ScriptedModel([]).transport, new native.ToolRegistry());
  assert.equal(plain.forceCompleteSubAgent('anyone', 'user-stopped'), false, 'delegation off');
  const empty = plain.subAgents();
  assert.deepEqual([empty.active, empty.history, empty.stats.active, empty.stats.history], [[], [], 0, 0]);
  assert.deepEqual(model.problems, []);
});

// ------------------------------------------------------------------ TOOL-4

// ToolAbortSignal: "it fires once ... when the run is cancelled (..., a sub-agent's
// force-completion: "cancelled")".
test('tool_4_js_a_sub_agents_tool_signal_fires_cancelled_on_its_force_completion', async () => {
  const heard = [];
  let started = false;
  const isParent = (body) => offeredTools(body).includes('delegate_task');
  const model = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'wait' } }], usage: USAGE }),
      () => completion({ content: 'parent done', usage: USAGE }),
    ] },
    { name: 'child', match: (body) => !isParent(body), turns: [
      () => completion({ toolCalls: [{ id: 'w1', name: 'wait', arguments: {} }], usage: USAGE }),
    ] },
  ]);
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('wait', 'Waits for ever', '{"type":"object"}'), (call, context) => {
    started = true;
    context.signal.onAbort(() => heard.push(context.signal.reason));
    return new Promise(() => {});
  });
  const c = runtimeConfig();
  c.allowClone = true;
  const runtime = new native.AgentRuntime(c, model.transport, tools);
  const running = runtime.run('delegate the wait');
  await waitFor(() => started, 'the child\'s tool runs');
  const [child] = runtime.activeChildren();
  assert.equal(runtime.forceCompleteSubAgent(child, 'user-stopped'), true);
  const result = await running;
  assert.equal(result.finalText, 'parent done');
  await waitFor(() => heard.length > 0, 'the child tool\'s abort listener');
  await sleep(20);
  assert.deepEqual(heard, ['cancelled'], 'once, with "cancelled"');
  assert.deepEqual(model.problems, []);
});

// ToolAbortSignal: "What it resolves with after the signal fired is ignored."
test('tool_4_js_what_a_tool_resolves_after_its_signal_fired_is_ignored', async () => {
  const LATE = 'LATE-RESULT-8c1f';
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c_slow', name: 'slow', arguments: {} }], usage: USAGE }),
    (body) => completion({ content: `tool said: ${toolMessages(body)[0].content}`, usage: USAGE }),
  ]);
  const tools = new native.ToolRegistry();
  let lateResolved = false;
  tools.register(new native.ToolDefinition('slow', 'Slow', '{"type":"object"}', 30), (call, context) => new Promise((resolve) => {
    context.signal.onAbort(() => { lateResolved = true; resolve({ content: LATE }); });
  }));
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, tools);
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('go slow');
  await finishedRun(events, result.runId, 'completed');
  await waitFor(() => lateResolved, 'the late resolve');
  await sleep(30);
  assert.match(result.finalText, /tool_timeout/);
  assert.ok(!result.finalText.includes(LATE));
  assert.ok(!runtime.exportState().includes(LATE), 'not in the state');
  assert.ok(!runtime.historyJson().includes(LATE), 'not in the history');
  const finished = payloads(events, 'tool_call_finished').filter((p) => p.callId === 'c_slow');
  assert.equal(finished.length, 1, 'one tool_call_finished');
  assert.equal(finished[0].errorCode, 'tool_timeout');
  assert.ok(!JSON.stringify(events).includes(LATE), 'not in any event');
  assert.deepEqual(model.problems, []);
});

// ------------------------------------------------------------------ MCP

const MCP_URL = 'https://mcp.example.test/mcp';

// McpServerOptions.retryAfterMs: "How long a server that failed is left alone before a run
// tries again"; McpServerOptions: "connected through the runtime's HttpTransport ... at the
// start of the first run, which emits an "mcp_server" event; a server that cannot be reached
// fails only itself"; McpServerPayload: "Before the run's first `model_request`";
// McpAuthorize: "A throw or rejection fails the server with "mcp_auth"".
test('mcp_3_js_an_unreachable_server_fails_only_itself_and_is_left_alone_for_retryAfterMs', async () => {
  for (const [retryAfterMs, triesAgain] of [[3600000, false], [0, true]]) {
    let mcpRequests = 0;
    const model = new ScriptedModel([() => completion({ content: 'one', usage: USAGE }), () => completion({ content: 'two', usage: USAGE })]);
    const c = runtimeConfig();
    c.addMcpServer({ name: 'down', url: MCP_URL, retryAfterMs });
    const transport = (request, sink) => {
      if (request.url === MCP_URL) {
        mcpRequests += 1;
        return Promise.reject(new Error('connection refused'));
      }
      return model.transport(request, sink);
    };
    const runtime = new native.AgentRuntime(c, transport, new native.ToolRegistry());
    const events = [];
    runtime.subscribe((e) => events.push(e));
    assert.equal(mcpRequests, 0, 'nothing before the first run');
    const first = await runtime.run('hi');
    assert.equal(first.finalText, 'one', 'the run goes on without it');
    await finishedRun(events, first.runId, 'completed');
    const [event] = payloads(events, 'mcp_server');
    assert.deepEqual([event.server, event.state, event.errorCode, event.toolCount], ['down', 'failed', 'mcp_unreachable', 0]);
    const types = events.map((e) => e.type);
    assert.ok(types.indexOf('mcp_server') < types.indexOf('model_request'), types.join());
    const afterFirst = mcpRequests;
    assert.ok(afterFirst > 0);
    assert.equal((await runtime.run('again')).finalText, 'two');
    if (triesAgain) assert.ok(mcpRequests > afterFirst, 'retryAfterMs 0: the next run tries again');
    else assert.equal(mcpRequests, afterFirst, 'left alone within retryAfterMs');
    assert.deepEqual(model.problems, []);
  }
  // An authorize that rejects (rather than throws) fails its server with mcp_auth.
  let mcpRequests = 0;
  const c = runtimeConfig();
  c.addMcpServer({ name: 'locked', url: MCP_URL }, async () => { throw new Error('no token'); });
  const model = new ScriptedModel([() => completion({ content: 'ok', usage: USAGE })]);
  const runtime = new native.AgentRuntime(c, (request, sink) => {
    if (request.url === MCP_URL) { mcpRequests += 1; return tinyMcpAnswer(request); }
    return model.transport(request, sink);
  }, new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('hi');
  await finishedRun(events, result.runId, 'completed');
  assert.deepEqual(payloads(events, 'mcp_server').map((p) => [p.state, p.errorCode]), [['failed', 'mcp_auth']]);
  assert.equal(mcpRequests, 0);
});

// McpServerOptions.approval: "Which calls wait for a person's approval (TOOL-1): ...
// "always""; deny: "These of the server's tools are never offered"; McpServerPayload
// toolCount: "Tools offered from it now (after the allow/deny filter)"; "The model sees its
// tools as `<name>__<tool>`".
test('mcp_2_js_approval_always_pauses_its_calls_and_deny_is_counted_in_toolCount', async () => {
  const mcpCalls = [];
  const transportFor = (model) => (request, sink) => {
    if (request.url === MCP_URL) {
      const message = JSON.parse(request.body);
      if (message.method === 'tools/call') mcpCalls.push(message.params);
      return tinyMcpAnswer(request);
    }
    return model.transport(request, sink);
  };
  const model = new ScriptedModel([
    (body) => {
      assert.ok(offeredTools(body).includes('tiny__echo'), offeredTools(body).join());
      return completion({ toolCalls: [{ id: 'e1', name: 'tiny__echo', arguments: { text: 'hi' } }], usage: USAGE });
    },
    (body) => completion({ content: `echoed ${toolMessages(body)[0].content}`, usage: USAGE }),
  ]);
  const c = runtimeConfig();
  c.addMcpServer({ name: 'tiny', url: MCP_URL, approval: 'always' });
  const runtime = new native.AgentRuntime(c, transportFor(model), new native.ToolRegistry());
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const paused = await runtime.run('echo hi');
  assert.equal(paused.status, 'awaiting_approval');
  assert.deepEqual(paused.pendingApprovals.map((p) => [p.callId, p.name]), [['e1', 'tiny__echo']]);
  assert.deepEqual(mcpCalls, [], 'not called before the answer');
  await runtime.approve('e1');
  const done = await runtime.resumeRun();
  assert.match(done.finalText, /^echoed .*hi/);
  assert.equal(mcpCalls.length, 1);
  assert.deepEqual(payloads(events, 'mcp_server').map((p) => [p.state, p.toolCount]), [['connected', 1]]);
  assert.deepEqual(model.problems, []);

  const denied = new ScriptedModel([(body) => {
    assert.ok(!offeredTools(body).some((n) => n.startsWith('tiny__')), 'a denied tool is not offered');
    return completion({ content: 'none', usage: USAGE });
  }]);
  const c2 = runtimeConfig();
  c2.addMcpServer({ name: 'tiny', url: MCP_URL, deny: ['echo'] });
  const rt2 = new native.AgentRuntime(c2, transportFor(denied), new native.ToolRegistry());
  const events2 = [];
  rt2.subscribe((e) => events2.push(e));
  const r2 = await rt2.run('hi');
  await finishedRun(events2, r2.runId, 'completed');
  assert.deepEqual(payloads(events2, 'mcp_server').map((p) => [p.state, p.toolCount]), [['connected', 0]]);
  assert.deepEqual(denied.problems, []);
});

// McpServerOptions.headers: "Their values are secrets: never in events, logs, errors or
// exports."; McpAuthorize: "The headers are kept in memory only."; SessionStore: (the
// runtime commits its session there).
test('mcp_1_js_header_and_authorize_secrets_never_reach_events_exports_or_the_store_file', async () => {
  const HEADER_SECRET = 'hdr-secret-5d2a9e';
  const AUTH_SECRET = 'auth-secret-71b3c0';
  const { dir, file } = tmpDb('mcp-secrets');
  const seenHeaders = [];
  const model = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'e1', name: 'tiny__echo', arguments: { text: 'x' } }], usage: USAGE }),
    () => completion({ content: 'done', usage: USAGE }),
  ]);
  const c = config('mcp-secrets');
  c.addMcpServer({ name: 'tiny', url: MCP_URL, headers: { 'X-Api-Key': HEADER_SECRET } },
    async () => ({ Authorization: `Bearer ${AUTH_SECRET}` }));
  const transport = (request, sink) => {
    if (request.url === MCP_URL) {
      seenHeaders.push(...request.headers.map((h) => h.value));
      return tinyMcpAnswer(request);
    }
    return model.transport(request, sink);
  };
  const runtime = new native.AgentRuntime(c, transport, new native.ToolRegistry(), native.SessionStore.open(file));
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('echo');
  assert.equal(result.finalText, 'done');
  await finishedRun(events, result.runId, 'completed');
  assert.ok(seenHeaders.includes(HEADER_SECRET), 'the header was sent to the server');
  assert.ok(seenHeaders.includes(`Bearer ${AUTH_SECRET}`), 'the authorization was sent to the server');
  for (const secret of [HEADER_SECRET, AUTH_SECRET]) {
    assert.ok(!JSON.stringify(events).includes(secret), `${secret} in an event`);
    assert.ok(!runtime.exportState().includes(secret), `${secret} in the export`);
    assert.ok(!JSON.stringify(model.requests.map((r) => r.request)).includes(secret), `${secret} in a model request`);
  }
  runtime.detachStore();
  for (const name of fs.readdirSync(dir, { recursive: true })) {
    if (!fs.statSync(path.join(dir, name)).isFile()) continue;
    const bytes = fs.readFileSync(path.join(dir, name));
    for (const secret of [HEADER_SECRET, AUTH_SECRET]) {
      assert.equal(bytes.includes(Buffer.from(secret)), false, `${secret} written to ${name}`);
    }
  }
  assert.deepEqual(model.problems, []);
  fs.rmSync(dir, { recursive: true, force: true });
});
