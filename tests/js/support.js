'use strict';
// Shared pieces of the Node tests: loading the host build of the N-API module, a
// scripted OpenAI-compatible model that checks every request it receives, and small
// async helpers. Not a test file itself (node --test only runs *.test.js).

const fs = require('node:fs');
const path = require('node:path');

// Where scripts/test-js.sh puts the host build: $CARGO_TARGET_DIR (default target/).
const MODULE_PATH = process.env.ARKAGENT_NODE || path.join(
  path.resolve(__dirname, '..', '..', process.env.CARGO_TARGET_DIR || 'target'), 'arkagent.node',
);
// eslint-disable-next-line import/no-dynamic-require
const native = require(MODULE_PATH);

const BASE_URL = 'https://llm.example.test/v1';
const API_KEY = 'sk-test-4f9c1b2e7d';
const MODEL = 'scripted-chat-1';

/** A Chat Completions response body with an assistant message. */
function completion({ content = null, toolCalls = [], usage, finishReason }) {
  const message = { role: 'assistant', content };
  if (toolCalls.length > 0) {
    message.tool_calls = toolCalls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }
  return JSON.stringify({
    id: 'chatcmpl-' + Math.random().toString(36).slice(2),
    object: 'chat.completion',
    created: 1730000000,
    model: MODEL,
    choices: [{
      index: 0,
      message,
      finish_reason: finishReason || (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    }],
    usage,
  });
}

/** One SSE event carrying a `chat.completion.chunk` (or `[DONE]` when `payload` is the string). */
function sseEvent(payload) {
  if (typeof payload === 'string') return `data: ${payload}\n\n`;
  return `data: ${JSON.stringify({ id: 'chatcmpl-stream', object: 'chat.completion.chunk', created: 1730000000, model: MODEL, ...payload })}\n\n`;
}

/**
 * The SSE events of a streamed text answer: one chunk per piece of `pieces`, a finish
 * chunk, the `include_usage` chunk when `usage` is given, and `[DONE]`.
 */
function textStream(pieces, usage) {
  const events = pieces.map((piece, i) => sseEvent({
    choices: [{ index: 0, delta: i === 0 ? { role: 'assistant', content: piece } : { content: piece }, finish_reason: null }],
  }));
  events.push(sseEvent({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  if (usage) events.push(sseEvent({ choices: [], usage }));
  events.push(sseEvent('[DONE]'));
  return events;
}

/**
 * Checks that every assistant tool call id is answered by exactly one later tool message
 * and every tool message answers an earlier call (CORE-2 over the wire shape or the
 * history shape). Returns a list of problems (empty when paired).
 */
function pairingProblems(messages) {
  const problems = [];
  const open = new Set();
  const answered = new Set();
  for (const m of messages) {
    if (m.role === 'assistant') {
      for (const c of m.tool_calls || []) {
        if (open.has(c.id) || answered.has(c.id)) problems.push(`tool call id repeats: ${c.id}`);
        open.add(c.id);
      }
    } else if (m.role === 'tool') {
      if (!open.has(m.tool_call_id)) problems.push(`tool result without an earlier open call: ${m.tool_call_id}`);
      open.delete(m.tool_call_id);
      answered.add(m.tool_call_id);
    }
  }
  for (const id of open) problems.push(`tool call never answered: ${id}`);
  return problems;
}

/** The five sections a `<state_snapshot>` must have (CMP-8). */
const SNAPSHOT_SECTIONS = ['overall_goal', 'key_knowledge', 'file_system_state', 'recent_actions', 'current_plan'];

/** A well-formed `<state_snapshot>` (CMP-8); `fields` overrides section texts. */
function snapshot(fields = {}) {
  const body = SNAPSHOT_SECTIONS.map((name) => `<${name}>${fields[name] || `${name} text`}</${name}>`).join('\n');
  return `<state_snapshot>\n${body}\n</state_snapshot>`;
}

/**
 * True for a chunked transcript's summary request (CMP-10): its system message asks for a
 * `<state_snapshot>` and its user message holds the `<conversation>` to summarize.
 */
function isTranscriptSummaryRequest(body) {
  const messages = (body && body.messages) || [];
  return messages.some((m) => m.role === 'system' && String(m.content).includes('<state_snapshot>'))
    && messages.some((m) => m.role === 'user' && String(m.content).includes('<conversation>'));
}

/**
 * The first line of the instruction a summary request on the conversation's own bytes
 * ends with (COST-3: src/compress/prefix_instruction.md).
 */
const COMPRESSION_MARK = fs.readFileSync(path.join(__dirname, '..', '..', 'src', 'compress', 'prefix_instruction.md'), 'utf8')
  .split('\n')[0];

/**
 * True for a summary request that reuses the conversation's request (COST-3): its last
 * message is the user instruction starting with COMPRESSION_MARK.
 */
function isPrefixSummaryRequest(body) {
  const last = ((body && body.messages) || []).at(-1);
  return Boolean(last) && last.role === 'user' && String(last.content).startsWith(COMPRESSION_MARK);
}

/** True for a compressor's summary request, of either form. */
function isSummaryRequest(body) {
  return isTranscriptSummaryRequest(body) || isPrefixSummaryRequest(body);
}

/**
 * A scripted model behind the JS transport. `turns` are functions
 * `(body, index, sink) => responseBodyString` (or objects `{ status, body }`, or
 * `{ status, streamed: true }` with the body written to `sink`), used in order.
 * Summary requests of a context compressor (see `isSummaryRequest`) go to `summarizer`
 * instead, `(body, index) => …` likewise, and are logged in `summaryRequests`;
 * `requests` holds the agent's own model calls, `log` both kinds in arrival order.
 * Every request is checked; problems are collected in `problems` and also make the
 * transport reject, so a bad request can never pass silently.
 */
class ScriptedModel {
  constructor(turns, { tools = [], summarizer, summaryModel = MODEL } = {}) {
    this.turns = turns;
    this.expectedTools = tools;
    this.summarizer = summarizer;
    this.summaryModel = summaryModel;
    this.requests = [];
    this.summaryRequests = [];
    this.log = [];
    this.problems = [];
    this.transport = (request, sink) => this.handle(request, sink);
  }

  /**
   * Summary requests: the summary model; a transcript's has no tools and exactly
   * [system, user]; one on the conversation's bytes is a paired conversation plus the
   * instruction.
   */
  checkSummary(body) {
    const p = [];
    if (body.model !== this.summaryModel) p.push(`summary model ${body.model}`);
    if (isPrefixSummaryRequest(body)) {
      p.push(...pairingProblems(body.messages.slice(0, -1)));
      return p;
    }
    if ((body.tools || []).length > 0) p.push('summary request offers tools');
    const roles = body.messages.map((m) => m.role).join(',');
    if (roles !== 'system,user') p.push(`summary request messages ${roles}`);
    return p;
  }

  check(request) {
    const p = [];
    if (request.method !== 'POST') p.push(`method ${request.method}`);
    if (request.url !== `${BASE_URL}/chat/completions`) p.push(`url ${request.url}`);
    if (typeof request.stream !== 'boolean') p.push('stream flag missing');
    const header = (name) => (request.headers.find((h) => h.name.toLowerCase() === name) || {}).value;
    if (header('authorization') !== `Bearer ${API_KEY}`) p.push('Authorization header does not carry the key');
    if (!String(header('content-type')).startsWith('application/json')) p.push('content-type');
    if (request.body.includes(API_KEY)) p.push('API key leaked into the body');
    let body;
    try {
      body = JSON.parse(request.body);
    } catch (e) {
      p.push(`body is not JSON: ${e.message}`);
      return { problems: p, body: null };
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      p.push('no messages');
      return { problems: p, body };
    }
    if (isSummaryRequest(body)) {
      p.push(...this.checkSummary(body));
      return { problems: p, body, summary: true };
    }
    if (body.messages.every((m) => m.role === 'system')) p.push('nothing to answer: only system messages');
    if (body.model !== MODEL) p.push(`model ${body.model}`);
    const toolNames = (body.tools || []).map((t) => t.type === 'function' && t.function && t.function.name);
    for (const name of this.expectedTools) {
      if (!toolNames.includes(name)) p.push(`tool ${name} not offered`);
    }
    for (const t of body.tools || []) {
      if (typeof t.function.parameters !== 'object') p.push(`tool ${t.function.name} has no parameters schema`);
    }
    p.push(...pairingProblems(body.messages || []));
    return { problems: p, body };
  }

  /** Runs one scripted turn; a string reply becomes a 200 JSON response. */
  async play(turn, label, body, index, sink) {
    let out;
    try {
      out = await turn(body, index, sink);
    } catch (e) {
      this.problems.push(`${label}: ${e.message}`);
      throw e;
    }
    return typeof out === 'string' ? { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], body: out } : out;
  }

  async handle(request, sink) {
    const { problems, body, summary } = this.check(request);
    const list = summary ? this.summaryRequests : this.requests;
    const index = list.length;
    const label = `${summary ? 'summary request' : 'request'} ${index}`;
    list.push({ request, body });
    this.log.push({ kind: summary ? 'summary' : 'turn', index, body });
    if (problems.length > 0) {
      this.problems.push(...problems.map((x) => `${label}: ${x}`));
      throw new Error(`scripted model rejected ${label}: ${problems.join('; ')}`);
    }
    const turn = summary ? this.summarizer : this.turns[index];
    if (!turn) {
      this.problems.push(`${label}: no scripted turn left`);
      throw new Error('no scripted turn left');
    }
    return this.play(turn, label, body, index, sink);
  }
}

/**
 * A scripted model for a parent runtime and its sub-agents. `routes` are
 * `{ name, match(body), turns: [(body, index, sink) => …], model? }`: each request goes to
 * the first route whose `match` holds and gets that route's next turn (turns are counted
 * per route, so parallel children do not race for one script). Requests are checked like
 * ScriptedModel's, against the route's `model` (default MODEL); `byRoute[name]` holds the
 * bodies each route received.
 */
class RoutedModel extends ScriptedModel {
  constructor(routes) {
    super([]);
    this.routes = routes;
    this.byRoute = Object.fromEntries(routes.map((r) => [r.name, []]));
  }

  async handle(request, sink) {
    const checked = this.check(request);
    const body = checked.body;
    const route = body && this.routes.find((r) => r.match(body));
    const expectedModel = (route && route.model) || MODEL;
    const problems = checked.problems.filter((p) => !p.startsWith('model '));
    if (body && body.model !== expectedModel) problems.push(`model ${body.model}, expected ${expectedModel}`);
    if (!route) problems.push('no route matches the request');
    const list = route ? this.byRoute[route.name] : this.requests;
    const index = list.length;
    const label = `${route ? route.name : 'unrouted'} request ${index}`;
    list.push(body);
    this.log.push({ kind: route ? route.name : 'unrouted', index, body });
    const turn = route && route.turns[index];
    if (!turn && route) problems.push('no scripted turn left');
    if (problems.length > 0) {
      this.problems.push(...problems.map((x) => `${label}: ${x}`));
      throw new Error(`scripted model rejected ${label}: ${problems.join('; ')}`);
    }
    return this.play(turn, label, body, index, sink);
  }
}

/** The system prompt of a request body ("" when none). */
function systemPrompt(body) {
  const system = body.messages.find((m) => m.role === 'system');
  return system ? String(system.content) : '';
}

/**
 * The text of the last user message of a request body: a child's task (its history starts
 * with a slice of the parent's, the task comes after it).
 */
function lastUserText(body) {
  const user = body.messages.filter((m) => m.role === 'user').at(-1);
  return user ? String(user.content) : '';
}

/** Names of the tools a request offers. */
function offeredTools(body) {
  return (body.tools || []).map((t) => t.function.name);
}

function modelConfig() {
  return new native.ModelConfig(BASE_URL, API_KEY, MODEL);
}

function runtimeConfig({ systemPrompt = 'You are a test assistant.', maxParallelTools, contextCompressor, model } = {}) {
  const config = new native.AgentRuntimeConfig(model || modelConfig());
  config.systemPrompt = systemPrompt;
  if (maxParallelTools !== undefined) config.maxParallelTools = maxParallelTools;
  if (contextCompressor !== undefined) config.contextCompressor = contextCompressor;
  return config;
}

/** Resolves once `predicate()` holds; rejects after `ms`. Events arrive asynchronously. */
async function waitFor(predicate, what, ms = 2000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A promise with its resolve/reject exposed. */
function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

/** TOOL-1 fixtures: `pay` (requires approval) and `weather` (does not); records what ran as [id, args]. */
const PAY_SCHEMA = JSON.stringify({ type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] });
function approvalTools(ran) {
  const registry = new native.ToolRegistry();
  const pay = new native.ToolDefinition('pay', 'Pays', PAY_SCHEMA);
  pay.requiresApproval = true;
  registry.register(pay, async (call) => { ran.push([call.id, JSON.parse(call.argumentsJson)]); return { content: 'pay done' }; });
  registry.register(new native.ToolDefinition('weather', 'Weather', '{"type":"object"}'), async (call) => {
    ran.push([call.id, null]);
    return { content: 'sunny' };
  });
  return registry;
}

/**
 * TOOL-1 fixture: a root that delegates to a clone whose `pay` call (requiresApproval) waits;
 * `ran` collects the arguments `pay` ran with. By default each side's last turn reads its
 * first tool result back ("parent read: …", "child read: …"). Returns the routed model and
 * the registry.
 */
function delegatingToAWaitingChild(ran, { childAnswer, parentAnswer } = {}) {
  const usage = { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 };
  const firstResult = (body) => body.messages.filter((m) => m.role === 'tool')[0].content;
  const registry = new native.ToolRegistry();
  const pay = new native.ToolDefinition('pay', 'Pays', PAY_SCHEMA);
  pay.requiresApproval = true;
  registry.register(pay, async (call) => { ran.push(JSON.parse(call.argumentsJson)); return { content: 'paid' }; });
  const isParent = (body) => offeredTools(body).includes('delegate_task');
  const model = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      () => completion({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'pay it' } }], usage }),
      parentAnswer || ((body) => completion({ content: `parent read: ${firstResult(body)}`, usage })),
    ] },
    { name: 'child', match: (body) => !isParent(body), turns: [
      () => completion({ toolCalls: [{ id: 'p', name: 'pay', arguments: { amount: 7 } }], usage }),
      childAnswer || ((body) => completion({ content: `child read: ${firstResult(body)}`, usage })),
    ] },
  ]);
  return { model, registry };
}

/** COST-3 fixture: an exported session of four long weather messages, its last usage at
 * 5,000 prompt tokens (a compression is due), as importState() takes it. */
function longWeatherChat() {
  const long = 'a long question about the weather in many cities, '.repeat(20);
  return JSON.stringify({
    version: 1,
    session_id: 's',
    history: { messages: [
      { role: 'user', content: long }, { role: 'assistant', content: long }, { role: 'user', content: long }, { role: 'assistant', content: 'ok' },
    ], episodic_memories: [] },
    usages: [{ prompt_tokens: 5000, completion_tokens: 1, total_tokens: 5001 }],
  });
}

module.exports = {
  PAY_SCHEMA,
  longWeatherChat,
  approvalTools,
  delegatingToAWaitingChild,
  native,
  MODULE_PATH,
  BASE_URL,
  API_KEY,
  MODEL,
  completion,
  sseEvent,
  textStream,
  SNAPSHOT_SECTIONS,
  snapshot,
  isSummaryRequest,
  isTranscriptSummaryRequest,
  isPrefixSummaryRequest,
  COMPRESSION_MARK,
  pairingProblems,
  ScriptedModel,
  RoutedModel,
  systemPrompt,
  lastUserText,
  offeredTools,
  modelConfig,
  runtimeConfig,
  waitFor,
  deferred,
};
