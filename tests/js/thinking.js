'use strict';
// THINK-1..THINK-5: strict thinking providers behind the JS transport, answering as DeepSeek
// V4, Kimi K2.6 and Claude do with thinking on and refusing what they refuse (status and
// error body), whole or streamed as the request asks — the same rules as the Rust fake
// (tests/it/thinking_fake.rs):
// - DeepSeek / Kimi: every assistant message with tool calls carries the reasoning_content
//   the provider gave it, exactly ("" included); missing → 400 with the provider's message;
//   changed → 400; thinking on, a tool-call message without the field → 400 also when its
//   answer had no reasoning (one from before thinking: "" is accepted there);
//   reasoning_content other than "" on an answer that had none → 400.
// - Anthropic: in the current tool cycle (the request ends with tool results only), the
//   answer it continues starts with its thinking and redacted_thinking blocks as given
//   (missing → 400 "Expected `thinking` or `redacted_thinking`…"); any block not given
//   byte for byte in place → 400 "Invalid `signature`".
// Thinking is on unless the request switches it off. Each run calls `weather` `rounds`
// times (`delegate_task` once first when offered), then answers "done N"; summary requests
// get a snapshot. Not a test file itself.

const { snapshot, COMPRESSION_MARK } = require('./support');

const FLAVORS = ['deepseek', 'kimi', 'anthropic'];
const MODELS = { deepseek: 'deepseek-v4-flash', kimi: 'kimi-k2.6', anthropic: 'claude-sonnet-4-5' };
const BASE_URL = 'https://thinking.test/v1';

function reasoningOf(n) {
  return n % 3 === 2 ? '' : `Step ${n}: the user wants the weather; I should call the tool. «思考 ${n}»`;
}

function blocksOf(n, reasoning) {
  let h = 2166136261;
  for (const c of Buffer.from(reasoning)) h = Math.imul(h ^ c, 16777619) >>> 0;
  const blocks = [{ type: 'thinking', thinking: reasoning, signature: `EqQB${h.toString(16)}/${n}+sig==` }];
  if (n % 2 === 1) blocks.push({ type: 'redacted_thinking', data: `EmwKAhgBEgy3va3pzix/LafPsn4aDF${n}==` });
  return blocks;
}

const isReasoning = (b) => b.type === 'thinking' || b.type === 'redacted_thinking';
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

class ThinkingProvider {
  constructor(flavor, { rounds = 2, key } = {}) {
    this.flavor = flavor;
    this.rounds = rounds;
    this.key = key;
    this.given = new Map();
    this.next = 0;
    this.bodies = [];
    this.refusals = [];
    /** Request index (0-based) whose stream stops after its first reasoning piece. */
    this.hangAt = -1;
    this.transport = (request, sink) => this.send(request, sink);
  }

  get anthropic() { return this.flavor === 'anthropic'; }

  refuse(message) {
    this.refusals.push(message);
    const body = this.anthropic
      ? { type: 'error', error: { type: 'invalid_request_error', message } }
      : { error: { message, type: 'invalid_request_error', param: null, code: 'invalid_request_error' } };
    return { status: 400, body: JSON.stringify(body) };
  }

  checkChat(body) {
    const thinking = !(body.thinking && body.thinking.type === 'disabled');
    for (const [index, m] of body.messages.entries()) {
      const first = m.tool_calls && m.tool_calls[0] && m.tool_calls[0].id;
      if (!first) continue;
      const sent = m.reasoning_content;
      const hadReasoning = this.given.has(first) && this.given.get(first) !== null;
      // Thinking, both refuse any tool-call message without the field, also one whose
      // answer never had reasoning (a session from before thinking).
      if (thinking && sent === undefined && !hadReasoning) {
        return this.flavor === 'kimi'
          ? `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${index}`
          : `Missing \`reasoning_content\` field in the assistant message at message index ${index}`;
      }
      if (!this.given.has(first)) continue;
      const gave = this.given.get(first);
      if (gave !== null && sent === undefined) {
        return this.flavor === 'kimi'
          ? `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${index}`
          : 'The reasoning_content in the thinking mode must be passed back to the API.';
      }
      if (gave !== null && sent !== gave) return `reasoning_content of the assistant message at index ${index} differs from the model's`;
      if (gave === null && sent !== undefined && sent !== '') return `reasoning_content at index ${index} for an answer that had none`;
    }
    return null;
  }

  checkAnthropic(body) {
    const turns = body.messages;
    // The current tool cycle: the request ends with a user turn of tool results only.
    const last = turns.at(-1);
    const lastWithTools = last.role === 'user' && last.content.every((b) => b.type === 'tool_result') ? turns.length - 2 : -1;
    for (const [index, turn] of turns.entries()) {
      if (turn.role !== 'assistant') continue;
      const lead = [];
      for (const b of turn.content) { if (!isReasoning(b)) break; lead.push(b); }
      if (turn.content.slice(lead.length).some(isReasoning)) return `messages.${index}.content: a thinking block after the answer`;
      const call = turn.content.find((b) => b.type === 'tool_use');
      const text = turn.content.find((b) => b.type === 'text');
      const key = call ? call.id : text && `text:${text.text}`;
      const gave = this.given.get(key);
      if (gave && gave.length > 0 && lead.length === 0 && index === lastWithTools) {
        return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`tool_use\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
      }
      if (lead.length > 0 && !(gave && same(lead, gave))) return `messages.${index}.content.0: Invalid \`signature\` in \`thinking\` block`;
    }
    return null;
  }

  isSummary(body) {
    if (this.anthropic) {
      const first = (body.system || [])[0];
      const lastTurn = body.messages.at(-1);
      return Boolean(first && first.text.includes('<state_snapshot>') && !first.text.startsWith('Earlier conversation'))
        || lastTurn.content.some((b) => typeof b.text === 'string' && b.text.startsWith(COMPRESSION_MARK));
    }
    const first = body.messages[0];
    const last = body.messages.at(-1);
    return (first.role === 'system' && String(first.content).includes('<state_snapshot>') && !String(first.content).startsWith('Earlier conversation'))
      || (last.role === 'user' && String(last.content).startsWith(COMPRESSION_MARK));
  }

  toolRounds(body) {
    const userText = (m) => m.role === 'user' && (!this.anthropic || m.content.some((b) => b.type === 'text'));
    let start = 0;
    body.messages.forEach((m, i) => { if (userText(m)) start = i + 1; });
    return body.messages.slice(start).filter((m) => m.role === 'assistant'
      && (m.tool_calls || (Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_use')))).length;
  }

  answer(body) {
    const n = this.next++;
    const thinking = !(body.thinking && body.thinking.type === 'disabled');
    const offers = (name) => (body.tools || []).some((t) => t.name === name || (t.function && t.function.name === name));
    let text = null;
    let call = null;
    if (this.isSummary(body)) text = snapshot();
    else if (offers('delegate_task') && this.toolRounds(body) === 0) {
      call = { id: `call_${n}`, name: 'delegate_task', arguments: { assignee: 'clone', task_description: 'find the weather in Paris' } };
    } else if (this.toolRounds(body) < this.rounds && offers('weather')) call = { id: `call_${n}`, name: 'weather', arguments: { city: 'Paris' } };
    else text = `done ${n}`;
    const reasoning = thinking ? reasoningOf(n) : null;
    const blocks = reasoning === null ? [] : blocksOf(n, reasoning);
    const key = call ? call.id : `text:${text}`;
    this.given.set(key, this.anthropic ? blocks : reasoning);
    return { n, text, call, reasoning, blocks };
  }

  async send(request, sink) {
    const header = (name) => (request.headers.find((h) => h.name.toLowerCase() === name) || {}).value;
    if (this.key !== undefined) {
      const ok = this.anthropic ? header('x-api-key') === this.key : header('authorization') === `Bearer ${this.key}`;
      if (!ok) return this.refuse('the key header');
      if (request.body.includes(this.key)) return this.refuse('the API key leaked into the body');
    }
    const body = JSON.parse(request.body);
    this.bodies.push(request.body);
    const problem = this.anthropic ? this.checkAnthropic(body) : this.checkChat(body);
    if (problem) return this.refuse(problem);
    const a = this.answer(body);
    if (!body.stream) {
      return { status: 200, headers: [{ name: 'content-type', value: 'application/json' }], body: JSON.stringify(this.anthropic ? anthropicWhole(a) : chatWhole(a)) };
    }
    const events = this.anthropic ? anthropicEvents(a) : chatEvents(a);
    if (this.bodies.length - 1 === this.hangAt) {
      // The first reasoning piece, then silence until the library cancels the request.
      const first = events.findIndex((e) => e.includes('thinking_delta') || e.includes('reasoning_content'));
      setImmediate(() => events.slice(0, first + 1).forEach((e) => sink.write(e)));
      sink.onCancel(() => sink.fail('cancelled', 'cancelled'));
      return { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], streamed: true };
    }
    setImmediate(() => {
      for (const e of events) sink.write(e);
      sink.end();
    });
    return { status: 200, headers: [{ name: 'content-type', value: 'text/event-stream' }], streamed: true };
  }
}

const reasoningTokens = (a) => (a.reasoning === null ? 0 : 1 + Math.floor(Buffer.byteLength(a.reasoning) / 4));

function chatWhole(a) {
  const message = { role: 'assistant', content: a.text };
  if (a.reasoning !== null) message.reasoning_content = a.reasoning;
  if (a.call) message.tool_calls = [{ id: a.call.id, type: 'function', function: { name: a.call.name, arguments: JSON.stringify(a.call.arguments) } }];
  const r = reasoningTokens(a);
  return {
    id: 'chatcmpl-t', object: 'chat.completion', model: 'm',
    choices: [{ index: 0, message, finish_reason: a.call ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 20 + r, total_tokens: 120 + r, completion_tokens_details: { reasoning_tokens: r } },
  };
}

function chatEvents(a) {
  const chunk = (delta, finish = null) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const out = [];
  if (a.reasoning !== null) {
    const half = Math.floor(a.reasoning.length / 2);
    out.push(chunk({ role: 'assistant', content: null, reasoning_content: a.reasoning.slice(0, half) }));
    out.push(chunk({ content: null, reasoning_content: a.reasoning.slice(half) }));
  }
  if (a.text !== null) out.push(chunk({ content: a.text }));
  if (a.call) {
    const args = JSON.stringify(a.call.arguments);
    out.push(chunk({ tool_calls: [{ index: 0, id: a.call.id, type: 'function', function: { name: a.call.name, arguments: args.slice(0, 5) } }] }));
    out.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(5) } }] }));
  }
  const whole = chatWhole(a);
  out.push(chunk({}, whole.choices[0].finish_reason));
  out.push(`data: ${JSON.stringify({ choices: [], usage: whole.usage })}\n\ndata: [DONE]\n\n`);
  return out;
}

function anthropicUsage(a) {
  const r = reasoningTokens(a);
  return { input_tokens: 100, output_tokens: 20 + r, output_tokens_details: { thinking_tokens: r } };
}

function anthropicWhole(a) {
  const content = [...a.blocks];
  if (a.text !== null) content.push({ type: 'text', text: a.text });
  if (a.call) content.push({ type: 'tool_use', id: a.call.id, name: a.call.name, input: a.call.arguments });
  return { id: 'msg_t', type: 'message', role: 'assistant', model: 'm', content, stop_reason: a.call ? 'tool_use' : 'end_turn', usage: anthropicUsage(a) };
}

function anthropicEvents(a) {
  const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const out = [event('message_start', { message: { id: 'msg_t', role: 'assistant', content: [], usage: { input_tokens: 100, output_tokens: 1 } } })];
  const whole = anthropicWhole(a);
  whole.content.forEach((b, index) => {
    const delta = (d) => out.push(event('content_block_delta', { index, delta: d }));
    if (b.type === 'thinking') {
      out.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      const half = Math.floor(b.thinking.length / 2);
      for (const piece of [b.thinking.slice(0, half), b.thinking.slice(half)]) if (piece) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: b.signature });
    } else if (b.type === 'redacted_thinking') {
      out.push(event('content_block_start', { index, content_block: b }));
    } else if (b.type === 'text') {
      out.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
      delta({ type: 'text_delta', text: b.text });
    } else {
      out.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } }));
      const args = JSON.stringify(b.input);
      delta({ type: 'input_json_delta', partial_json: args.slice(0, 4) });
      delta({ type: 'input_json_delta', partial_json: args.slice(4) });
    }
    out.push(event('content_block_stop', { index }));
  });
  out.push(event('message_delta', { delta: { stop_reason: whole.stop_reason }, usage: anthropicUsage(a) }));
  out.push(event('message_stop', {}));
  return out;
}

module.exports = { FLAVORS, MODELS, BASE_URL, ThinkingProvider };
