'use strict';
// COST-4: the prefix-stability checks for the Node tests — the JS twin of
// tests/it/prefix.rs (same rules, same structure: keep the two in step). A provider's
// prompt cache hits a request only as far as it starts with bytes it has seen, so:
// between compressions each request body starts with the previous one's bytes up to the
// end of its last message and keeps what follows the messages (tools, tool choice,
// sampling); after a compression the system prompt and the tools are what they were; a
// resumed session sends what the uninterrupted one would have; a summarizer request on the
// conversation's model is the last main request's bytes up to the end of its last message,
// then the compression instruction (COST-3). A wire format is read through a view; a
// format that moves a cache marker removes it in `normalise`.

/** Length of the JSON text before the `close` character ending the enclosing value. */
function jsonLength(text, close) {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') {
      if (depth === 0) {
        if (c !== close) throw new Error('unbalanced JSON');
        return i;
      }
      depth--;
    }
  }
  throw new Error('unterminated JSON value');
}

/** OpenAI-compatible Chat Completions: `{"model":…,"messages":[system?, …],"tools":…}`. */
const chatCompletions = {
  normalise: (body) => body,
  /** [start of the first message, end of the last one). */
  messagesSpan(body) {
    const open = body.indexOf('"messages":[') + '"messages":['.length;
    if (open < '"messages":['.length) throw new Error('no messages array');
    return [open, open + jsonLength(body.slice(open), ']')];
  },
  /** Offset just past the system message (0 without one). */
  systemEnd(body) {
    const [start] = this.messagesSpan(body);
    if (!body.startsWith('{"role":"system"', start)) return 0;
    return start + jsonLength(body.slice(start + 1), '}') + 2;
  },
};

function firstDifference(a, b) {
  let at = 0;
  while (at < a.length && at < b.length && a[at] === b[at]) at++;
  const from = Math.max(0, at - 80);
  return `first difference at ${at}:\n  before: …${a.slice(from, at + 80)}…\n  after:  …${b.slice(from, at + 80)}…`;
}

/** `next` extends `previous` up to the end of its last message; the rest is unchanged. */
function assertExtends(view, previous, next) {
  const p = view.normalise(previous);
  const n = view.normalise(next);
  const pEnd = view.messagesSpan(p)[1];
  const nEnd = view.messagesSpan(n)[1];
  if (!n.startsWith(p.slice(0, pEnd))) throw new Error(`the request does not extend the previous one; ${firstDifference(p, n)}`);
  if (nEnd <= pEnd) throw new Error('the request adds no message');
  if (p.slice(pEnd) !== n.slice(nEnd)) throw new Error('what follows the messages (tools, tool choice, sampling) changed');
}

/** After a compression: the system prompt and what follows the messages are unchanged. */
function assertFixedPartsKept(view, before, after) {
  const b = view.normalise(before);
  const a = view.normalise(after);
  const bSys = view.systemEnd(b);
  if (bSys === 0) throw new Error('the request has no system prompt to keep');
  if (b.slice(0, bSys) !== a.slice(0, view.systemEnd(a))) throw new Error('the system prompt is no longer the first bytes');
  if (b.slice(view.messagesSpan(b)[1]) !== a.slice(view.messagesSpan(a)[1])) throw new Error('the tools changed');
}

/**
 * COST-3: `summarizer` is `previous` (the last main request) up to the end of its last
 * message, then what was appended since and the instruction (its text starting with
 * `mark`) as the last message; tools, tool choice and every other field unchanged.
 */
function assertSummarizerReuses(view, previous, summarizer, mark) {
  assertExtends(view, previous, summarizer);
  const p = JSON.parse(previous);
  const n = JSON.parse(summarizer);
  const last = n.messages.at(-1);
  if (last.role !== 'user' || !String(last.content).startsWith(mark)) {
    throw new Error(`the summarizer request does not end with the instruction: ${JSON.stringify(last).slice(0, 200)}`);
  }
  for (const field of ['model', 'tools', 'tool_choice', 'stream', 'temperature']) {
    if (JSON.stringify(p[field]) !== JSON.stringify(n[field])) throw new Error(`${field} changed for the summarizer call`);
  }
}

/** A resumed session's request is the uninterrupted one's, byte for byte. */
function assertSameRequest(expected, actual) {
  if (expected !== actual) throw new Error(`the request differs from the uninterrupted session's; ${firstDifference(expected, actual)}`);
}

/** Checks main requests in order; `compressedBefore[i]`: a compression came between i-1 and i. */
function checkSequence(view, bodies, compressedBefore) {
  let extended = 0;
  let crossed = 0;
  for (let i = 1; i < bodies.length; i++) {
    if (compressedBefore[i]) {
      assertFixedPartsKept(view, bodies[i - 1], bodies[i]);
      crossed++;
    } else {
      assertExtends(view, bodies[i - 1], bodies[i]);
      extended++;
    }
  }
  return { extended, crossed };
}

module.exports = { chatCompletions, assertExtends, assertFixedPartsKept, assertSameRequest, assertSummarizerReuses, checkSequence };
