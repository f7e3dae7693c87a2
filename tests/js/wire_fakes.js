'use strict';
// BND-3: a strict fake server per registered wire format, for the registry-driven
// conformance test (bnd_3_wire_conformance.test.js). Each fake checks a request the way
// the real provider would (URL, the key in its header and nowhere else, the protocol's
// own rules) and returns the conversation as roles — `system`, `user`, `assistant`,
// `tool` — so one test body asserts on every protocol; it answers in the protocol's own
// shapes: a whole answer calling a tool, a streamed text answer.
//
// A protocol registered in the core (its name in the generated `WireFormat` union) without
// an entry here fails the conformance test, naming this file.

const SSE = [{ name: 'content-type', value: 'text/event-stream' }];
const JSON_HEADERS = [{ name: 'content-type', value: 'application/json' }];

const header = (request, name) => (request.headers.find((h) => h.name.toLowerCase() === name) || {}).value;

/** Problems common to every protocol: the key never in the body. */
function common(request, key) {
  return request.body.includes(key) ? ['API key leaked into the body'] : [];
}

const FAKES = {
  openai: {
    check(request, baseUrl, key) {
      const p = common(request, key);
      if (request.url !== `${baseUrl}/chat/completions`) p.push(`url ${request.url}`);
      if (header(request, 'authorization') !== `Bearer ${key}`) p.push('Authorization does not carry the key');
      const body = JSON.parse(request.body);
      const open = new Set();
      const roles = body.messages.map((m) => {
        for (const c of m.tool_calls || []) open.add(c.id);
        if (m.role === 'tool' && !open.delete(m.tool_call_id)) p.push(`tool result ${m.tool_call_id} answers no call`);
        return m.role;
      });
      const tools = body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
      return { problems: p, roles, tools };
    },
    toolCall(name, args) {
      return {
        status: 200,
        headers: JSON_HEADERS,
        body: JSON.stringify({
          id: 'chatcmpl-1', object: 'chat.completion', model: 'm',
          choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }],
          usage: { prompt_tokens: 40, completion_tokens: 7, total_tokens: 47 },
        }),
      };
    },
    textStream(text) {
      const chunk = (delta, finish) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
      return [chunk({ role: 'assistant', content: '' }, null), ...[...text].map((c) => chunk({ content: c }, null)),
        chunk({}, 'stop'), `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 60, completion_tokens: 5, total_tokens: 65 } })}\n\n`,
        'data: [DONE]\n\n'];
    },
    sseHeaders: SSE,
  },
  anthropic: {
    check(request, baseUrl, key) {
      const p = common(request, key);
      if (request.url !== `${baseUrl}/messages`) p.push(`url ${request.url}`);
      if (header(request, 'x-api-key') !== key) p.push('x-api-key does not carry the key');
      if (header(request, 'anthropic-version') !== '2023-06-01') p.push('anthropic-version');
      if (header(request, 'authorization') !== undefined) p.push('an Authorization header on the Anthropic wire');
      const body = JSON.parse(request.body);
      if (!(body.max_tokens > 0)) p.push('max_tokens missing');
      const roles = body.system ? ['system'] : [];
      const tools = [];
      const open = new Set();
      body.messages.forEach((m, i) => {
        if (m.role !== (i % 2 === 0 ? 'user' : 'assistant')) p.push(`turn ${i} is ${m.role}`);
        const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
        for (const b of blocks) {
          if (b.type === 'tool_use') open.add(b.id);
          if (b.type === 'tool_result') {
            if (!open.delete(b.tool_use_id)) p.push(`tool_result ${b.tool_use_id} answers no tool_use`);
            tools.push(typeof b.content === 'string' ? b.content : b.content.map((x) => x.text).join(''));
          }
          if (b.type === 'text' && b.text === '') p.push('empty text block');
        }
        const results = blocks.filter((b) => b.type === 'tool_result').length;
        if (results > 0) roles.push(...Array(results).fill('tool'));
        if (results < blocks.length) roles.push(m.role);
      });
      return { problems: p, roles, tools };
    },
    toolCall(name, args) {
      return {
        status: 200,
        headers: JSON_HEADERS,
        body: JSON.stringify({
          id: 'msg_1', type: 'message', role: 'assistant', model: 'm',
          content: [{ type: 'tool_use', id: 'toolu_1', name, input: args }],
          stop_reason: 'tool_use',
          usage: { input_tokens: 40, cache_read_input_tokens: 0, output_tokens: 7 },
        }),
      };
    },
    textStream(text) {
      const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      return [
        event('message_start', { message: { id: 'msg_2', role: 'assistant', content: [], usage: { input_tokens: 60, output_tokens: 1 } } }),
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        ...[...text].map((c) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: c } })),
        event('content_block_stop', { index: 0 }),
        event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }),
        event('message_stop', {}),
      ];
    },
    sseHeaders: SSE,
  },
};

/** The fake of `name`; throws naming this file when a registered protocol has none. */
function fakeOf(name) {
  const fake = FAKES[name];
  if (!fake) {
    throw new Error(`the protocol "${name}" is registered (WireFormat) but tests/js/wire_fakes.js has no fake server for it: ` +
      'add one (check, toolCall, textStream) with the rules of the real provider');
  }
  return fake;
}

module.exports = { fakeOf, FAKES };
