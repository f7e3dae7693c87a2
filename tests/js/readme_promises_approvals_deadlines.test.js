'use strict';
// README promises of "## Asking the user first" and "## Tool deadlines and abort" (with the
// matching index.d.ts doc comments) that no other Node test checked, driven through the
// public N-API surface as a stranger with only the docs would, with hostile inputs: answers
// from an event listener before run() returned, from another runtime on the same store and
// after detachStore(); an app SIGKILLed right after its answers, with every call answered,
// inside a tool call of the pausing turn and of the resumed one, and with a sub-agent's call
// waiting; deadlines while a call waits for a person; tools that ignore their signal and
// settle late; deadlines of 0 and of 4294967295 ms; cancel() racing a tool's result.
// Each test quotes the sentence it checks.
//
// When APPROVALS_DEADLINES_CHILD is set this file is the child process of one of the tests
// (see the `children` table below): it works on the store file argv[2] and SIGKILLs itself
// at the moment the test needs.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const {
  native, completion, runtimeConfig, ScriptedModel, RoutedModel, offeredTools, PAY_SCHEMA, waitFor, deferred, pairingProblems,
  delegatingToAWaitingChild,
} = require('./support');

const USAGE = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };
const OBJECT_SCHEMA = '{"type":"object"}';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const toolMessages = (body) => body.messages.filter((m) => m.role === 'tool');
const toolContents = (body) => Object.fromEntries(toolMessages(body).map((m) => [m.tool_call_id, String(m.content)]));
const payloads = (events, type) => events.filter((e) => e.type === type).map((e) => JSON.parse(e.payloadJson));
const errorCode = (content) => {
  try {
    return JSON.parse(content).error.code;
  } catch {
    return null;
  }
};

function config(sessionId, options) {
  const c = runtimeConfig(options);
  c.sessionId = sessionId;
  return c;
}

/**
 * `pay` (requires approval) and `weather` (does not); `onPay` / `onWeather` run inside the
 * executors (a child kills itself there). Records what ran as [id, arguments].
 */
function payTools(ran, { onPay, onWeather } = {}) {
  const registry = new native.ToolRegistry();
  const pay = new native.ToolDefinition('pay', 'Pays', PAY_SCHEMA);
  pay.requiresApproval = true;
  registry.register(pay, async (call) => {
    ran.push([call.id, JSON.parse(call.argumentsJson)]);
    if (onPay) await onPay(call);
    return { content: `paid ${JSON.parse(call.argumentsJson).amount}` };
  });
  registry.register(new native.ToolDefinition('weather', 'Weather', OBJECT_SCHEMA), async (call) => {
    ran.push([call.id, null]);
    if (onWeather) await onWeather(call);
    return { content: 'sunny' };
  });
  return registry;
}

/** The model's turn that pays three amounts and asks for the weather. */
const threePaysAndWeather = () => completion({
  toolCalls: [
    { id: 'a', name: 'pay', arguments: { amount: 1 } },
    { id: 'b', name: 'pay', arguments: { amount: 2 } },
    { id: 'c', name: 'pay', arguments: { amount: 3 } },
    { id: 'w', name: 'weather', arguments: {} },
  ],
  usage: USAGE,
});

/** The model's turn that pays 500 and asks for the weather. */
const payAndWeather = () => completion({
  toolCalls: [{ id: 'c_pay', name: 'pay', arguments: { amount: 500 } }, { id: 'c_w', name: 'weather', arguments: {} }],
  usage: USAGE,
});

/** The model's last turn: it repeats the tool results it read, by call id. */
const echoResults = (body) => completion({ content: JSON.stringify(toolContents(body)), usage: USAGE });

/** Resolves with the sub-agent's waiting call (from pendingApprovals()) once its event came. */
function childCallWaits(runtime) {
  const waiting = deferred();
  runtime.subscribe((e) => {
    if (e.type !== 'sub_agent') return;
    if (JSON.parse(e.payloadJson).event.type !== 'approval_requested') return;
    waiting.resolve(runtime.pendingApprovals()[0]);
  });
  return waiting.promise;
}

// ------------------------------------------------------------------ child processes

/** SIGKILLs this process at once: nothing after this line runs, nothing more is written. */
function die() {
  process.kill(process.pid, 'SIGKILL');
}

/** Sends `message` to the test, then dies. */
function reportAndDie(message) {
  process.send(message, die);
}

/** Writes `name` beside the store: a side effect the test can see after the kill. */
function mark(db, name) {
  fs.writeFileSync(path.join(path.dirname(db), name), String(process.pid));
}

/**
 * Pauses on a, b, c (weather runs), answers a (edited) and b (rejected) — and c too when
 * `all` — awaiting each answer, and dies the moment the last answer's Promise resolved.
 */
async function answersChild(db, which) {
  const ran = [];
  const model = new ScriptedModel([threePaysAndWeather]);
  const runtime = new native.AgentRuntime(config('answered'), model.transport, payTools(ran), native.SessionStore.open(db));
  const paused = await runtime.run('pay three bills');
  await new Promise((sent) => process.send({ paused: paused.pendingApprovals, ran }, sent));
  await runtime.approve('a', '{"amount": 10}');
  await runtime.reject('b', 'not this one');
  if (which === 'all') await runtime.approve('c');
  die();
}

/** Pauses on c_pay (weather runs), approves it, resumes, and dies inside pay. */
async function resumeRunningChild(db) {
  const model = new ScriptedModel([payAndWeather]);
  const tools = payTools([], { onPay: () => { mark(db, 'paid-in-child'); die(); } });
  const runtime = new native.AgentRuntime(config('interrupted'), model.transport, tools, native.SessionStore.open(db));
  await runtime.run('pay the bill');
  await runtime.approve('c_pay');
  await runtime.resumeRun();
}

/** Dies inside weather, the call of the pausing turn that needs no answer (c_pay waits). */
async function pauseRunningChild(db) {
  const model = new ScriptedModel([payAndWeather]);
  const tools = payTools([], { onWeather: () => { mark(db, 'weather-in-child'); die(); } });
  const runtime = new native.AgentRuntime(config('interrupted'), model.transport, tools, native.SessionStore.open(db));
  await runtime.run('pay the bill');
}

/** Delegates; dies the moment the sub-agent's pay call waits for its answer. */
async function subWaitingChild(db) {
  const { model, registry } = delegatingToAWaitingChild([]);
  const c = config('delegating');
  c.allowClone = true;
  const runtime = new native.AgentRuntime(c, model.transport, registry, native.SessionStore.open(db));
  childCallWaits(runtime).then((waiting) => reportAndDie({ waiting, exported: runtime.exportState() }));
  await runtime.run('delegate the payment');
}

const children = { answers: answersChild, resumeRunning: resumeRunningChild, pauseRunning: pauseRunningChild, subWaiting: subWaitingChild };

if (process.env.APPROVALS_DEADLINES_CHILD) {
  children[process.env.APPROVALS_DEADLINES_CHILD](process.argv[2], process.argv[3])
    .catch((e) => { process.stderr.write(`child failed: ${e.code} ${e.stack}\n`); process.exit(3); });
} else {
  const test = require('node:test');
  const assert = require('node:assert/strict');
  const { fork } = require('node:child_process');

  const dirs = [];
  function tempDir(tag) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), `arkagent-readme-ad-${tag}-`));
    dirs.push(dir);
    return dir;
  }
  test.after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Runs a child of this file in `mode` on `db` until it SIGKILLs itself; resolves with
   * what it sent. Fails when it ends any other way.
   */
  async function childKilled(mode, db, ...args) {
    const child = fork(__filename, [db, ...args], {
      env: { ...process.env, APPROVALS_DEADLINES_CHILD: mode },
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    const messages = [];
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    child.on('message', (m) => messages.push(m));
    const timer = setTimeout(() => child.kill('SIGTERM'), 30000);
    const { code, signal } = await new Promise((r) => child.on('exit', (c, s) => r({ code: c, signal: s })));
    clearTimeout(timer);
    assert.equal(signal, 'SIGKILL', `the ${mode} child killed itself (exit ${code}; stderr: ${stderr})`);
    return messages;
  }

  // ================================================================ Asking the user first

  // "When a call must ask, the run stops: one `approval_requested` event per waiting call,
  // and `run()` resolves with status `awaiting_approval` and `pendingApprovals`." …
  // "answers may come in any order and at once — then `resumeRun()`: the approved calls run
  // and the run goes on" (resumeRun(): "the model gets every result in the calls' order").
  test('tool_1_tool_3_js_one_approval_requested_per_waiting_call_and_answers_in_any_order_at_once_reach_the_model_in_call_order', async () => {
    const ran = [];
    const registry = new native.ToolRegistry();
    const always = new native.ToolDefinition('always', 'Always asks', PAY_SCHEMA);
    always.requiresApproval = true;
    const run = (name) => async (call) => { ran.push(call.id); return { content: `${name} ran ${call.id}` }; };
    registry.register(always, run('always'));
    registry.register(new native.ToolDefinition('bigpay', 'Asks above 100', PAY_SCHEMA), run('bigpay'),
      (call) => JSON.parse(call.argumentsJson).amount > 100);
    registry.register(new native.ToolDefinition('send', 'The policy asks', OBJECT_SCHEMA), run('send'));
    registry.register(new native.ToolDefinition('read', 'Free', OBJECT_SCHEMA), run('read'));
    const c = config('order');
    c.setToolPolicy((call) => ({ decision: call.name === 'send' ? 'ask' : 'allow' }));
    const model = new ScriptedModel([
      () => completion({
        toolCalls: [
          { id: 'k1', name: 'always', arguments: { amount: 1 } },
          { id: 'k2', name: 'bigpay', arguments: { amount: 5 } },
          { id: 'k3', name: 'bigpay', arguments: { amount: 500 } },
          { id: 'k4', name: 'send', arguments: {} },
          { id: 'k5', name: 'read', arguments: {} },
          { id: 'k6', name: 'always', arguments: { amount: 2 } },
        ],
        usage: USAGE,
      }),
      (body) => completion({ content: toolMessages(body).map((m) => m.tool_call_id).join(','), usage: USAGE }),
    ]);
    const runtime = new native.AgentRuntime(c, model.transport, registry);
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const paused = await runtime.run('do all of it');
    await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
    assert.equal(paused.status, 'awaiting_approval');
    const asked = ['k1', 'k3', 'k4', 'k6'];
    assert.deepEqual(paused.pendingApprovals.map((p) => p.callId), asked);
    const requested = payloads(events, 'approval_requested');
    assert.deepEqual(requested.map((p) => [p.callId, p.reason]), [['k1', 'tool'], ['k3', 'tool'], ['k4', 'policy'], ['k6', 'tool']],
      'one event per waiting call, none for a call that needs no answer');
    const types = events.map((e) => e.type);
    assert.ok(types.lastIndexOf('approval_requested') < types.indexOf('run_finished'), 'the events come before the run ends');
    assert.equal(payloads(events, 'run_finished')[0].status, 'awaiting_approval');
    assert.deepEqual(ran.sort(), ['k2', 'k5'], 'the calls that need no answer have run');
    // Every answer at once, none awaited, in the reverse order of the calls.
    await Promise.all([runtime.approve('k6'), runtime.reject('k4', 'no sending'), runtime.approve('k3', '{"amount": 150}'), runtime.approve('k1')]);
    assert.deepEqual(runtime.pendingApprovals(), []);
    const done = await runtime.resumeRun();
    assert.equal(done.status, 'completed');
    assert.equal(done.finalText, 'k1,k2,k3,k4,k5,k6', 'the model reads every result in the calls\' order');
    assert.deepEqual(ran.slice(2).sort(), ['k1', 'k3', 'k6']);
    const results = toolContents(model.requests[1].body);
    assert.equal(errorCode(results.k4), 'tool_rejected');
    assert.match(results.k3, /^\[The user changed the arguments before this call ran; it ran with \{"amount":150\}\]\nbigpay ran k3$/);
    assert.equal(results.k6, 'always ran k6');
    assert.deepEqual(model.problems, []);
  });

  // "Once `run()` has returned, answer each call" (ApprovalRequestedPayload: "Once the run
  // has returned, answer it (… an answer while the run still holds its slot is refused with
  // `run_in_progress`)"; approve(): "Rejects (nothing changed) with … "run_in_progress"").
  // An app that answers in its "approval_requested" listener, before run() returned, must
  // be refused every time — else run()'s pendingApprovals lists a call already answered and
  // the README's runAsking loop answers it again.
  // (Found by this test: the answer was checked when a worker thread made it, by which time
  // run()'s slot was sometimes free; it is now refused as of when it is given.)
  test('tool_1_js_an_answer_from_the_event_listener_before_run_returned_is_refused_run_in_progress_and_changes_nothing', async () => {
    const outcomes = [];
    for (let round = 0; round < 20; round += 1) {
      const ran = [];
      const model = new ScriptedModel([payAndWeather, () => completion({ content: 'paid', usage: USAGE })]);
      const runtime = new native.AgentRuntime(config(`early-${round}`), model.transport, payTools(ran));
      let early = null;
      runtime.subscribe((e) => {
        if (e.type === 'approval_requested') early = runtime.approve('c_pay', '{"amount": 1}').then(() => 'resolved', (err) => err.code);
      });
      const paused = await runtime.run('pay');
      assert.equal(paused.status, 'awaiting_approval');
      assert.ok(early, 'the listener answered while run() was pending');
      const answer = await early;
      outcomes.push(answer);
      if (answer !== 'run_in_progress') continue;
      assert.deepEqual(runtime.pendingApprovals(), paused.pendingApprovals, 'the refused answer changed nothing');
      assert.equal(JSON.parse(runtime.exportState()).pending_turn.calls[0].state, 'awaiting_approval');
      // The README's loop, after run() returned.
      for (const call of paused.pendingApprovals) await runtime.approve(call.callId, '{"amount": 5}');
      assert.equal((await runtime.resumeRun()).finalText, 'paid');
      assert.deepEqual(ran, [['c_w', null], ['c_pay', { amount: 5 }]], 'the answer given after run() returned is the one that counts');
      assert.deepEqual(model.problems, []);
    }
    assert.deepEqual(outcomes.filter((o) => o !== 'run_in_progress'), [],
      `${outcomes.filter((o) => o !== 'run_in_progress').length}/20 answers given before run() returned were accepted`);
  });

  // "Nothing expires by itself: the person may take a minute or a day." (TOOL-4: "Every call
  // gets an abort signal that fires once — with `tool_timeout` at its deadline": an approved
  // call's deadline runs from when it runs, not from the pause.)
  test('tool_1_tool_4_js_nothing_expires_while_a_call_waits_and_an_approved_calls_deadline_runs_from_when_it_runs', async () => {
    const heard = { quick: [], stuck: [] };
    const ran = [];
    const registry = new native.ToolRegistry();
    const quick = new native.ToolDefinition('quick', 'Takes 40 ms; 400 ms deadline', PAY_SCHEMA, 400);
    quick.requiresApproval = true;
    registry.register(quick, async (call, context) => {
      ran.push(call.id);
      context.signal.onAbort(() => heard.quick.push(context.signal.reason));
      await sleep(40);
      return { content: 'quick done' };
    });
    const stuck = new native.ToolDefinition('stuck', 'Never finishes; the runtime deadline', PAY_SCHEMA);
    stuck.requiresApproval = true;
    registry.register(stuck, (call, context) => {
      ran.push(call.id);
      context.signal.onAbort(() => heard.stuck.push(context.signal.reason));
      return new Promise(() => {});
    });
    const c = config('no-expiry');
    c.toolTimeoutMs = 60;
    const model = new ScriptedModel([
      () => completion({ toolCalls: [{ id: 'q', name: 'quick', arguments: { amount: 1 } }, { id: 's', name: 'stuck', arguments: { amount: 2 } }], usage: USAGE }),
      echoResults,
    ]);
    const runtime = new native.AgentRuntime(c, model.transport, registry);
    const paused = await runtime.run('go');
    assert.equal(paused.status, 'awaiting_approval');
    await sleep(800); // far past both deadlines: the person takes their time
    assert.deepEqual(runtime.pendingApprovals().map((p) => p.callId), ['q', 's'], 'nothing expired');
    assert.deepEqual(ran, []);
    assert.deepEqual(heard, { quick: [], stuck: [] }, 'no signal fires while a call waits');
    await runtime.approve('q');
    await sleep(300);
    await runtime.approve('s');
    const done = await runtime.resumeRun();
    assert.equal(done.status, 'completed');
    const results = JSON.parse(done.finalText);
    assert.equal(results.q, 'quick done', 'the approved call had its whole deadline');
    assert.equal(errorCode(results.s), 'tool_timeout', 'an approved call still has its deadline');
    await waitFor(() => heard.stuck.length > 0, 'the stuck call\'s signal');
    await sleep(50);
    assert.deepEqual(heard, { quick: [], stuck: ['tool_timeout'] });
    assert.deepEqual(model.problems, []);
  });

  // "Every answer is committed to the `SessionStore` before its Promise resolves" — to the
  // session of the runtime that paused; approve(): "Rejects (nothing changed) with
  // "approval_not_pending" …". Another runtime on the same store cannot answer it, nor open
  // the paused session while the first has it.
  test('tool_1_store_4_js_another_runtime_on_the_same_store_cannot_answer_the_paused_call_and_changes_nothing', async () => {
    const dir = tempDir('other');
    const file = path.join(dir, 'sessions.db');
    const ran = [];
    const model = new ScriptedModel([payAndWeather, () => completion({ content: 'paid', usage: USAGE })]);
    const owner = new native.AgentRuntime(config('owner'), model.transport, payTools(ran), native.SessionStore.open(file));
    await owner.run('pay');
    const before = owner.exportState();
    const store = native.SessionStore.open(file);
    const other = new native.AgentRuntime(config('other'), async () => ({ status: 500 }), payTools(ran), store);
    assert.deepEqual(other.pendingApprovals(), [], 'the paused turn is not the other session\'s');
    for (const answer of [() => other.approve('c_pay'), () => other.reject('c_pay', 'from elsewhere'), () => other.resumeRun(), () => other.cancelApprovals()]) {
      const outcome = await answer().then((v) => ({ value: v }), (e) => ({ code: e.code }));
      assert.ok(outcome.code === 'approval_not_pending' || outcome.value === false, JSON.stringify(outcome));
    }
    assert.throws(() => new native.AgentRuntime(config('owner'), model.transport, payTools(ran), store),
      (e) => e.code === 'session_locked', 'the paused session is the owner\'s');
    assert.equal(owner.exportState(), before, 'nothing changed');
    assert.deepEqual(owner.pendingApprovals().map((p) => p.callId), ['c_pay']);
    await owner.approve('c_pay');
    assert.equal((await owner.resumeRun()).finalText, 'paid');
    assert.deepEqual(ran.map(([id]) => id), ['c_w', 'c_pay']);
    other.detachStore();
    owner.detachStore();
  });

  // "Every answer is committed to the `SessionStore` before its Promise resolves" … "A tool
  // runs at most once". A page rebuilt after detachStore() ("so that another runtime can open
  // it now") while the old page's dialog can still be tapped. detachStore(): "A turn paused
  // for approval goes with the stored session: pendingApprovals() is then empty here, and
  // approve(), reject() and resumeRun() reject with "approval_not_pending"". (Found by this
  // test: the old runtime's answer resolved uncommitted, and both runtimes ran the tool.)
  test('tool_2_js_an_answer_after_detachStore_is_refused_and_the_tool_never_runs_twice', async () => {
    const dir = tempDir('detached');
    const file = path.join(dir, 'sessions.db');
    const ran = [];
    const old = new native.AgentRuntime(config('page'), new ScriptedModel([payAndWeather, () => completion({ content: 'paid', usage: USAGE })]).transport,
      payTools(ran), native.SessionStore.open(file));
    await old.run('pay');
    assert.equal(old.detachStore(), true);
    assert.deepEqual(old.pendingApprovals(), [], 'the turn went with the session');
    const late = await old.approve('c_pay').then(() => 'resolved', (e) => e.code);
    assert.equal(late, 'approval_not_pending');
    await assert.rejects(old.reject('c_pay'), (e) => e.code === 'approval_not_pending');
    await assert.rejects(old.resumeRun(), (e) => e.code === 'approval_not_pending');
    assert.deepEqual(pairingProblems(JSON.parse(old.historyJson())), [], 'the old runtime\'s history stays paired');
    const rebuilt = new native.AgentRuntime(config('page'), new ScriptedModel([() => completion({ content: 'paid', usage: USAGE })]).transport,
      payTools(ran), native.SessionStore.open(file));
    try {
      if (late === 'resolved') {
        assert.deepEqual(rebuilt.pendingApprovals(), [], 'approve() resolved: the answer must be in the store');
        await assert.rejects(rebuilt.approve('c_pay'), (e) => e.code === 'approval_already_answered');
      } else {
        assert.deepEqual(rebuilt.pendingApprovals().map((p) => p.callId), ['c_pay'], `refused (${late}): nothing changed`);
      }
      // Whatever both pages do now, the payment is made at most once.
      await old.resumeRun().catch(() => {});
      await rebuilt.approve('c_pay').catch(() => {});
      await rebuilt.resumeRun().catch(() => {});
      assert.ok(ran.filter(([id]) => id === 'c_pay').length <= 1, `pay ran ${ran.filter(([id]) => id === 'c_pay').length} times`);
    } finally {
      rebuilt.detachStore();
    }
  });

  // "Every answer is committed to the `SessionStore` before its Promise resolves, and the
  // paused turn is in `exportState()`: an app killed with the dialog open finds the same
  // `pendingApprovals()` after restart, with the answers already given kept".
  test('tool_2_js_a_sigkill_the_moment_answers_resolved_reopens_with_the_same_pending_calls_and_the_answers_kept', async () => {
    const dir = tempDir('answers');
    const db = path.join(dir, 'sessions.db');
    const [{ paused, ran: ranInChild }] = await childKilled('answers', db, 'some');
    assert.deepEqual(paused.map((p) => p.callId), ['a', 'b', 'c']);
    assert.deepEqual(ranInChild, [['w', null]]);
    const ran = [];
    const model = new ScriptedModel([echoResults]);
    const runtime = new native.AgentRuntime(config('answered'), model.transport, payTools(ran), native.SessionStore.open(db));
    assert.deepEqual(runtime.pendingApprovals(), paused.filter((p) => p.callId === 'c'), 'the same dialog, the answered ones gone');
    const exported = JSON.parse(runtime.exportState());
    assert.equal(exported.pending_turn.calls.length, 4, 'the paused turn is in exportState()');
    await assert.rejects(runtime.approve('a'), (e) => e.code === 'approval_already_answered', 'a\'s answer was kept');
    await assert.rejects(runtime.approve('b'), (e) => e.code === 'approval_already_answered', 'b\'s answer was kept');
    await assert.rejects(runtime.run('something else'), (e) => e.code === 'approval_pending');
    await runtime.approve('c');
    const done = await runtime.resumeRun();
    assert.equal(done.status, 'completed');
    const results = JSON.parse(done.finalText);
    assert.match(results.a, /^\[The user changed the arguments before this call ran; it ran with \{"amount":10\}\]\npaid 10$/);
    assert.deepEqual(JSON.parse(results.b).error, { code: 'tool_rejected', message: 'not this one' });
    assert.equal(results.c, 'paid 3');
    assert.equal(results.w, 'sunny', 'the call that ran before the kill keeps its result');
    assert.deepEqual(ran, [['a', { amount: 10 }], ['c', { amount: 3 }]], 'b never ran; w was not run again');
    assert.deepEqual(model.problems, []);
    runtime.detachStore();
  });

  // "(when every call was answered before the kill, `pendingApprovals()` is empty and
  // `resumeRun()` goes on; it rejects with `approval_not_pending` when no turn is paused)".
  test('tool_2_js_a_sigkill_after_every_call_was_answered_reopens_with_nothing_pending_and_resumeRun_goes_on', async () => {
    const dir = tempDir('all');
    const db = path.join(dir, 'sessions.db');
    await childKilled('answers', db, 'all');
    const ran = [];
    const model = new ScriptedModel([echoResults]);
    const store = native.SessionStore.open(db);
    const runtime = new native.AgentRuntime(config('answered'), model.transport, payTools(ran), store);
    assert.deepEqual(runtime.pendingApprovals(), []);
    assert.ok(JSON.parse(runtime.exportState()).pending_turn, 'the turn is still paused, fully answered');
    await assert.rejects(runtime.run('something else'), (e) => e.code === 'approval_pending');
    const done = await runtime.resumeRun();
    assert.equal(done.status, 'completed');
    assert.deepEqual(Object.keys(JSON.parse(done.finalText)), ['a', 'b', 'c', 'w']);
    assert.deepEqual(ran, [['a', { amount: 10 }], ['c', { amount: 3 }]]);
    await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_not_pending', 'no turn is paused any more');
    runtime.detachStore();
    // And after one more restart.
    const again = new native.AgentRuntime(config('answered'), model.transport, payTools(ran), native.SessionStore.open(db));
    await assert.rejects(again.resumeRun(), (e) => e.code === 'approval_not_pending');
    assert.equal(native.toolCallsPaired(JSON.stringify(JSON.parse(again.exportState()).history.messages)), true);
    again.detachStore();
    assert.deepEqual(model.problems, []);
  });

  // "A tool runs at most once: a call the kill interrupted mid-execution is answered
  // `tool_interrupted`, never run again." — the approved call inside resumeRun(), and the
  // call of the pausing turn that needed no answer.
  test('tool_2_js_a_call_a_sigkill_interrupted_mid_execution_is_answered_tool_interrupted_and_never_run_again', async () => {
    for (const [mode, interrupted, marker, pendingAfter] of [
      ['resumeRunning', 'c_pay', 'paid-in-child', []],
      ['pauseRunning', 'c_w', 'weather-in-child', ['c_pay']],
    ]) {
      const dir = tempDir(mode);
      const db = path.join(dir, 'sessions.db');
      await childKilled(mode, db);
      assert.ok(fs.existsSync(path.join(dir, marker)), `${mode}: the tool had started in the child`);
      const ran = [];
      const model = new ScriptedModel([echoResults]);
      const runtime = new native.AgentRuntime(config('interrupted'), model.transport, payTools(ran), native.SessionStore.open(db));
      assert.deepEqual(runtime.pendingApprovals().map((p) => p.callId), pendingAfter, mode);
      for (const callId of pendingAfter) await runtime.approve(callId);
      const done = await runtime.resumeRun();
      assert.equal(done.status, 'completed', mode);
      const results = JSON.parse(done.finalText);
      assert.equal(errorCode(results[interrupted]), 'tool_interrupted', `${mode}: ${results[interrupted]}`);
      assert.ok(!ran.some(([id]) => id === interrupted), `${mode}: the interrupted call was run again`);
      if (mode === 'pauseRunning') assert.deepEqual(ran, [['c_pay', { amount: 500 }]], 'the approved call ran');
      const history = JSON.parse(runtime.exportState()).history.messages;
      assert.equal(history.filter((m) => m.role === 'tool' && m.tool_call_id === interrupted).length, 1);
      assert.equal(native.toolCallsPaired(JSON.stringify(history)), true);
      assert.deepEqual(model.problems, []);
      runtime.detachStore();
    }
  });

  // "A sub-agent cannot pause its parent's run: its call that needs approval waits in flight
  // while the run goes on — the sub-agent makes no model call meanwhile" and "Nothing
  // expires by itself" — not even under the runtime's tool deadline ("`delegate_task` and
  // `retrieve_memory` have no deadline").
  test('tool_1_tool_4_js_a_sub_agents_waiting_call_never_expires_under_a_deadline_and_its_sub_agent_makes_no_model_call_meanwhile', async () => {
    const ran = [];
    const { model, registry } = delegatingToAWaitingChild(ran);
    const c = config('sub-wait');
    c.allowClone = true;
    c.toolTimeoutMs = 150;
    const runtime = new native.AgentRuntime(c, model.transport, registry);
    const waits = childCallWaits(runtime);
    let settled = false;
    const running = runtime.run('delegate the payment').finally(() => { settled = true; });
    const waiting = await waits;
    assert.equal(waiting.name, 'pay');
    await sleep(1200); // eight deadlines
    assert.equal(settled, false, 'the run waits for the person');
    assert.deepEqual(runtime.pendingApprovals(), [waiting], 'nothing expired');
    assert.equal(model.byRoute.child.length, 1, 'the sub-agent made no model call meanwhile');
    assert.equal(model.byRoute.parent.length, 1);
    await runtime.approve(waiting.callId, '{"amount": 3}');
    const result = await running;
    assert.equal(result.status, 'completed');
    assert.deepEqual(ran, [{ amount: 3 }]);
    assert.match(result.finalText, /paid/);
    assert.doesNotMatch(result.finalText, /tool_timeout/);
    assert.deepEqual(model.problems, []);
  });

  // "the parent's `cancel()` or a `forceCompleteSubAgent` answers it `cancelled`" … "Answered
  // late — … after its sub-agent ended — it rejects with … `approval_not_pending`".
  test('tool_1_iso_1_js_forceCompleteSubAgent_answers_a_waiting_sub_agent_call_cancelled_and_the_parent_goes_on', async () => {
    const ran = [];
    const { model, registry } = delegatingToAWaitingChild(ran);
    const c = config('sub-force');
    c.allowClone = true;
    const runtime = new native.AgentRuntime(c, model.transport, registry);
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const waits = childCallWaits(runtime);
    const running = runtime.run('delegate the payment');
    const waiting = await waits;
    assert.equal(runtime.forceCompleteSubAgent(waiting.path[0], 'user-stopped'), true);
    const result = await running;
    assert.equal(result.status, 'completed', 'the parent\'s run goes on');
    assert.deepEqual(runtime.pendingApprovals(), []);
    await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');
    const childFinished = payloads(events, 'sub_agent').map((p) => p.event).filter((ev) => ev.type === 'tool_call_finished' && ev.callId === 'p');
    assert.deepEqual(childFinished.map((ev) => ev.errorCode), ['cancelled'], 'the waiting call is answered cancelled');
    await assert.rejects(runtime.approve(waiting.callId), (e) => e.code === 'approval_not_pending');
    await assert.rejects(runtime.reject(waiting.callId, 'too late'), (e) => e.code === 'approval_not_pending');
    assert.deepEqual(ran, [], 'it never ran');
    assert.equal(model.byRoute.child.length, 1, 'no model call of the ended sub-agent');
    assert.deepEqual(model.problems, []);
  });

  // "Such a call is not stored: it ends with its delegation, as a delegation does on a kill."
  test('tool_2_js_a_sub_agents_waiting_call_is_not_stored_and_after_a_sigkill_nothing_waits', async () => {
    const dir = tempDir('sub-kill');
    const db = path.join(dir, 'sessions.db');
    const [{ waiting, exported }] = await childKilled('subWaiting', db);
    assert.equal(waiting.path.length, 1);
    assert.ok(!JSON.parse(exported).pending_turn, 'no paused turn in the export while the sub-agent\'s call waits');
    const ran = [];
    const model = new ScriptedModel([() => completion({ content: 'fresh', usage: USAGE })]);
    const runtime = new native.AgentRuntime(config('delegating'), model.transport, new native.ToolRegistry(), native.SessionStore.open(db));
    assert.deepEqual(runtime.pendingApprovals(), []);
    await assert.rejects(runtime.approve(waiting.callId), (e) => e.code === 'approval_not_pending', 'its sub-agent ended with the kill');
    await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_not_pending');
    const state = JSON.parse(runtime.exportState());
    assert.ok(!state.pending_turn);
    assert.deepEqual(state.history.messages.map((m) => m.role), ['user'], 'the delegation ended with the kill: only the run start');
    assert.equal((await runtime.run('start again')).finalText, 'fresh');
    assert.deepEqual(ran, []);
    assert.deepEqual(model.problems, []);
    runtime.detachStore();
  });

  // "**Sub-agents** inherit the policy (after their role's whitelist)." (setToolPolicy():
  // "after the role's whitelist, never for a tool that does not exist")
  test('tool_3_iso_2_js_a_sub_agent_inherits_the_policy_after_its_roles_whitelist', async () => {
    const ran = [];
    const policySaw = [];
    const registry = new native.ToolRegistry();
    for (const name of ['pay', 'secret', 'lookup']) {
      registry.register(new native.ToolDefinition(name, name, OBJECT_SCHEMA), async (call) => { ran.push(call.id); return { content: `${name} ok` }; });
    }
    const isParent = (body) => offeredTools(body).includes('delegate_task');
    const model = new RoutedModel([
      { name: 'parent', match: isParent, turns: [
        () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'pay', role: 'payer' } }], usage: USAGE }),
        (body) => completion({ content: `parent read: ${toolMessages(body)[0].content}`, usage: USAGE }),
      ] },
      { name: 'child', match: (body) => !isParent(body), turns: [
        () => completion({
          toolCalls: [
            { id: 'cp', name: 'pay', arguments: {} },
            { id: 'cs', name: 'secret', arguments: {} },
            { id: 'cl', name: 'lookup', arguments: {} },
          ],
          usage: USAGE,
        }),
        (body) => completion({ content: JSON.stringify(toolContents(body)), usage: USAGE }),
      ] },
    ]);
    const c = config('sub-policy');
    c.allowClone = true;
    c.setRoleWhitelist('payer', ['pay', 'lookup']);
    c.setToolPolicy((call) => {
      policySaw.push(call.name);
      if (call.name === 'pay') return { decision: 'ask' };
      if (call.name === 'lookup') return { decision: 'deny', reason: 'no lookups for sub-agents' };
      return { decision: 'allow' };
    });
    const runtime = new native.AgentRuntime(c, model.transport, registry);
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const waits = childCallWaits(runtime);
    const running = runtime.run('delegate');
    const waiting = await waits;
    assert.equal(waiting.name, 'pay');
    assert.equal(waiting.callId, `${waiting.path[0]}/cp`);
    const childAsked = payloads(events, 'sub_agent').map((p) => p.event).find((ev) => ev.type === 'approval_requested');
    assert.equal(childAsked.reason, 'policy', 'the parent\'s policy asked for the sub-agent\'s call');
    await runtime.approve(waiting.callId);
    const result = await running;
    assert.equal(result.status, 'completed');
    assert.deepEqual(policySaw.sort(), ['delegate_task', 'lookup', 'pay'], 'every call but the one the whitelist barred: never "secret"');
    assert.deepEqual(ran, ['cp'], 'the barred and the denied calls never ran');
    const read = toolContents(model.byRoute.child[1]);
    assert.equal(read.cp, 'pay ok');
    assert.deepEqual(JSON.parse(read.cl).error, { code: 'tool_denied', message: 'no lookups for sub-agents' });
    assert.notEqual(errorCode(read.cs), 'tool_denied', 'the barred call is answered by the whitelist, not the policy');
    assert.ok(errorCode(read.cs), read.cs);
    assert.ok(!offeredTools(model.byRoute.child[0]).includes('secret'), 'nor shown to the sub-agent');
    assert.deepEqual(model.problems, []);
  });

  // ================================================================ Tool deadlines and abort

  // "Past the deadline the model reads a `tool_timeout` error result and the run goes on,
  // whatever the tool does: a tool that ignores its signal cannot hold its run." … "what it
  // answers afterwards is ignored."
  test('tool_4_js_tools_that_ignore_their_signal_and_settle_late_cannot_hold_the_run_and_their_late_answers_are_ignored', async () => {
    const LATE = 'LATE-ANSWER-5d2e';
    const late = { resolved: false, rejected: false };
    const gate = deferred();
    const registry = new native.ToolRegistry();
    registry.register(new native.ToolDefinition('resolves_late', 'Ignores its signal', OBJECT_SCHEMA, 50), async () => {
      await gate.promise;
      late.resolved = true;
      return { content: LATE };
    });
    registry.register(new native.ToolDefinition('rejects_late', 'Ignores its signal', OBJECT_SCHEMA, 50), async () => {
      await gate.promise;
      late.rejected = true;
      throw new Error(LATE);
    });
    registry.register(new native.ToolDefinition('fast', 'In time', OBJECT_SCHEMA, 5000), async () => ({ content: 'fast ok' }));
    const model = new ScriptedModel([
      () => completion({
        toolCalls: [{ id: 'r1', name: 'resolves_late', arguments: {} }, { id: 'r2', name: 'rejects_late', arguments: {} }, { id: 'f', name: 'fast', arguments: {} }],
        usage: USAGE,
      }),
      echoResults,
      () => completion({ content: 'second run', usage: USAGE }),
    ]);
    const runtime = new native.AgentRuntime(config('late'), model.transport, registry);
    const events = [];
    runtime.subscribe((e) => events.push(e));
    const result = await runtime.run('go');
    assert.equal(result.status, 'completed');
    assert.deepEqual(late, { resolved: false, rejected: false }, 'the run did not wait for the tools');
    const results = JSON.parse(result.finalText);
    assert.equal(errorCode(results.r1), 'tool_timeout');
    assert.equal(errorCode(results.r2), 'tool_timeout');
    assert.equal(results.f, 'fast ok');
    const stateBefore = runtime.exportState();
    gate.resolve();
    await waitFor(() => late.resolved && late.rejected, 'the late answers');
    await sleep(100);
    assert.equal(runtime.exportState(), stateBefore, 'the late answers changed nothing');
    assert.ok(!runtime.historyJson().includes(LATE));
    assert.ok(!JSON.stringify(events).includes(LATE), 'in no event');
    assert.equal(payloads(events, 'tool_call_finished').length, 3, 'one tool_call_finished per call');
    assert.equal((await runtime.run('again')).finalText, 'second run', 'the runtime works on');
    assert.ok(!JSON.stringify(model.requests[2].body).includes(LATE), 'the model never reads them');
    assert.deepEqual(model.problems, []);
  });

  // "A tool has no deadline unless you give it one (TOOL-4)" … "the runtime's
  // `toolTimeoutMs` (… default 0) is the deadline of every tool that sets none; 0 means
  // none." (ToolDefinition: "`timeoutMs` … an integer from 0 to 4294967295")
  test('tool_4_js_no_deadline_by_default_0_means_none_and_the_largest_deadline_is_kept_not_wrapped', async () => {
    const runOnce = async (setup) => {
      const registry = new native.ToolRegistry();
      const heard = [];
      const c = config('deadlines');
      const tools = setup(c);
      for (const [name, timeoutMs, ms] of tools) {
        const definition = timeoutMs === undefined
          ? new native.ToolDefinition(name, name, OBJECT_SCHEMA)
          : new native.ToolDefinition(name, name, OBJECT_SCHEMA, timeoutMs);
        registry.register(definition, async (call, context) => {
          context.signal.onAbort(() => heard.push([name, context.signal.reason]));
          await sleep(ms);
          return { content: `${name} ok` };
        });
      }
      const model = new ScriptedModel([
        () => completion({ toolCalls: tools.map(([name]) => ({ id: name, name, arguments: {} })), usage: USAGE }),
        echoResults,
      ]);
      const result = await new native.AgentRuntime(c, model.transport, registry).run('go');
      await sleep(50);
      assert.deepEqual(model.problems, []);
      return { results: JSON.parse(result.finalText), heard };
    };
    // Nothing set: a slow tool (a person deciding) is not cut off.
    let out = await runOnce((c) => {
      assert.equal(c.toolTimeoutMs, 0);
      return [['unset', undefined, 600]];
    });
    assert.deepEqual(out, { results: { unset: 'unset ok' }, heard: [] });
    // 0 on the definition and on the runtime: none.
    out = await runOnce((c) => {
      c.toolTimeoutMs = 0;
      return [['zero', 0, 600], ['inherits_zero', undefined, 600]];
    });
    assert.deepEqual(out, { results: { zero: 'zero ok', inherits_zero: 'inherits_zero ok' }, heard: [] });
    // The largest deadline, on the definition and on the runtime: a deadline 49 days away,
    // not one that wrapped to 0 ms or to none.
    out = await runOnce((c) => {
      c.toolTimeoutMs = 4294967295;
      assert.equal(c.toolTimeoutMs, 4294967295);
      return [['max', 4294967295, 100], ['inherits_max', undefined, 100], ['one_ms', 1, 400]];
    });
    assert.deepEqual(out.results.max, 'max ok');
    assert.deepEqual(out.results.inherits_max, 'inherits_max ok');
    assert.equal(errorCode(out.results.one_ms), 'tool_timeout', 'a 1 ms deadline still cuts');
    assert.deepEqual(out.heard, [['one_ms', 'tool_timeout']]);
    assert.equal(new native.ToolDefinition('t', 't', OBJECT_SCHEMA, 4294967295).timeoutMs, 4294967295);
  });

  // "Every call gets an abort signal that fires once — … `cancelled` when the run is
  // cancelled … — and never for a call that finished first." (ToolAbortSignal: "It never
  // fires for a call whose Promise settled first"; onAbort(): "unless the call's Promise
  // settled first".) The tool's Promise settles; cancel() comes a moment later.
  // (Found by this test: a cancel that came after the result won the race inside the run.)
  test('tool_4_js_cancel_racing_a_tool_result_never_fires_the_signal_of_a_call_whose_promise_settled_first', async () => {
    const outcomes = [];
    for (let round = 0; round < 20; round += 1) {
      const heard = [];
      let signal = null;
      let runtime = null;
      const registry = new native.ToolRegistry();
      registry.register(new native.ToolDefinition('quick', 'Answers at once', OBJECT_SCHEMA), (call, context) => new Promise((resolve) => {
        signal = context.signal;
        context.signal.onAbort(() => heard.push(context.signal.reason));
        setTimeout(() => {
          resolve({ content: 'the answer' });
          // Every microtask (the module's own reaction to the settled Promise included) runs
          // before this: the call finished first.
          setImmediate(() => runtime.cancel());
        }, 5);
      }));
      const model = new ScriptedModel([
        () => completion({ toolCalls: [{ id: 'q', name: 'quick', arguments: {} }], usage: USAGE }),
        () => completion({ content: 'done', usage: USAGE }),
      ]);
      runtime = new native.AgentRuntime(config(`race-${round}`), model.transport, registry);
      const result = await runtime.run('go').then((r) => r.status, (e) => e.code);
      await sleep(30);
      outcomes.push({ result, heard, aborted: signal.aborted });
      const history = JSON.parse(runtime.historyJson());
      assert.equal(native.toolCallsPaired(JSON.stringify(history)), true, `round ${round}: paired whatever won`);
    }
    const fired = outcomes.filter((o) => o.heard.length > 0 || o.aborted);
    assert.deepEqual(fired, [], `${fired.length}/20 rounds fired the signal of a call whose Promise had settled`);
  });

  // "`cancel()` stops a running run" — a resumed one too — and the abort signal fires
  // "`cancelled` when the run is cancelled"; "the calls that did not run are answered
  // `cancelled`" and the turn is closed: "it rejects with `approval_not_pending` when no turn
  // is paused".
  test('tool_4_tool_1_js_cancel_during_resumeRun_fires_the_approved_calls_signal_cancelled_and_closes_the_turn', async () => {
    const heard = [];
    let started = false;
    const LATE = 'AFTER-CANCEL-7a1b';
    const registry = new native.ToolRegistry();
    const pay = new native.ToolDefinition('pay', 'Pays slowly', PAY_SCHEMA);
    pay.requiresApproval = true;
    registry.register(pay, (call, context) => new Promise((resolve) => {
      started = true;
      context.signal.onAbort(() => {
        heard.push(context.signal.reason);
        resolve({ content: LATE });
      });
    }));
    const model = new ScriptedModel([
      () => completion({ toolCalls: [{ id: 'p', name: 'pay', arguments: { amount: 9 } }], usage: USAGE }),
      () => completion({ content: 'fresh start', usage: USAGE }),
    ]);
    const runtime = new native.AgentRuntime(config('cancel-resume'), model.transport, registry, native.SessionStore.openMemory());
    await runtime.run('pay');
    await runtime.approve('p');
    const resuming = runtime.resumeRun().then((r) => r.status, (e) => e.code);
    await waitFor(() => started, 'the approved call runs', 5000);
    runtime.cancel();
    assert.equal(await resuming, 'cancelled');
    await waitFor(() => heard.length > 0, 'the signal');
    await sleep(30);
    assert.deepEqual(heard, ['cancelled'], 'once, cancelled');
    assert.deepEqual(runtime.pendingApprovals(), []);
    await assert.rejects(runtime.resumeRun(), (e) => e.code === 'approval_not_pending');
    const state = JSON.parse(runtime.exportState());
    assert.ok(!state.pending_turn, 'the turn is closed');
    const tool = state.history.messages.filter((m) => m.role === 'tool');
    assert.equal(tool.length, 1);
    assert.equal(errorCode(String(tool[0].content)), 'cancelled');
    assert.ok(!runtime.exportState().includes(LATE), 'what it answered afterwards is ignored');
    assert.equal(model.requests.length, 1, 'no model call after the cancel');
    assert.equal((await runtime.run('something else')).finalText, 'fresh start');
    assert.deepEqual(model.problems, []);
  });

  // "`delegate_task` and `retrieve_memory` have no deadline (a child has its own budgets)."
  test('tool_4_sub_1_js_delegate_task_has_no_deadline_under_a_short_toolTimeoutMs', async () => {
    const isParent = (body) => offeredTools(body).includes('delegate_task');
    const model = new RoutedModel([
      { name: 'parent', match: isParent, turns: [
        () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'think long' } }], usage: USAGE }),
        (body) => completion({ content: `parent read: ${toolMessages(body)[0].content}`, usage: USAGE }),
      ] },
      { name: 'child', match: (body) => !isParent(body), turns: [
        async () => { await sleep(500); return completion({ content: 'CHILD-ANSWER', usage: USAGE }); },
      ] },
    ]);
    const c = config('delegate-deadline');
    c.allowClone = true;
    c.toolTimeoutMs = 20;
    const runtime = new native.AgentRuntime(c, model.transport, new native.ToolRegistry());
    const result = await runtime.run('delegate');
    assert.equal(result.status, 'completed');
    assert.match(result.finalText, /CHILD-ANSWER/);
    assert.doesNotMatch(result.finalText, /tool_timeout/);
    assert.deepEqual(model.problems, []);
  });
}
