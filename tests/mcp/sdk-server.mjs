#!/usr/bin/env node
// A real MCP server built with the official TypeScript SDK (McpServer +
// StreamableHTTPServerTransport on node:http), used as a well-behaved peer
// for arkagent's Rust MCP client tests.
//
// Start:   node tests/mcp/sdk-server.mjs [options]   (stdin must be a pipe)
// Ready:   prints exactly one line on stdout: {"url":"http://127.0.0.1:PORT/mcp"}
// Stop:    close its stdin (so a parent test process that dies takes it down),
//          or send SIGTERM/SIGINT.  All diagnostics go to stderr.
//
// Options:
//   --json            enableJsonResponse: answer requests as application/json
//                     (default: text/event-stream)
//   --stateless       sessionIdGenerator: undefined, a fresh McpServer+transport
//                     per request; GET/DELETE answer 405 (default: stateful,
//                     Mcp-Session-Id, one transport per session)
//   --expire-after N  (stateful) forget a session after N HTTP requests that
//                     carry its id: request N+1 gets the SDK's own
//                     404 {"code":-32001,"message":"Session not found"}
//   --require-auth    every HTTP request must carry
//                     "Authorization: Bearer mcp-secret-token", else 401
//   --many-tools N    also register N tools t0..t{N-1} ({} -> text "tK")
//   --paginate        tools/list pages of 2 tools with an opaque nextCursor
//                     (McpServer itself never paginates tools/list)
//   --list-changed    the first tools/call of `echo` registers a new tool
//                     `late` (in every live and future session), and the
//                     server emits notifications/tools/list_changed: on the
//                     echo call's own SSE stream (not with --json) and on
//                     each session's standalone GET stream if one is open.
//                     So --stateless --json delivers no notification at all.
//
// Tools: echo, add, image, fail, slow, dotted.name/with-slash, whoami
// (see registerTools below); plus t0.. and late as described above.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, McpError, ErrorCode, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

// ---------------------------------------------------------------- options
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(name);
const num = (name) => {
  const i = argv.indexOf(name);
  if (i < 0) return undefined;
  const n = Number(argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) fatal(`${name} needs a non-negative integer`);
  return n;
};
function fatal(msg) {
  process.stderr.write(`sdk-server: ${msg}\n`);
  process.exit(2);
}
const opts = {
  json: flag('--json'),
  stateless: flag('--stateless'),
  expireAfter: num('--expire-after'),
  requireAuth: flag('--require-auth'),
  manyTools: num('--many-tools') ?? 0,
  paginate: flag('--paginate'),
  listChanged: flag('--list-changed'),
};
const log = (...a) => process.stderr.write(`sdk-server: ${a.join(' ')}\n`);

const AUTH_VALUE = 'Bearer mcp-secret-token';
const PAGE_SIZE = 2;
// A valid 1x1 transparent PNG.
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ tools
// Set once `echo` has been called with --list-changed; servers built later
// (new sessions, or every request when stateless) then include `late` too.
let lateEnabled = false;
let oddNameWarned = false;
const liveServers = new Set();

function registerLate(server) {
  server.registerTool(
    'late',
    { description: 'Registered after the first echo call (--list-changed).', inputSchema: {} },
    async () => ({ content: [{ type: 'text', text: 'late tool ok' }] }),
  );
}

function registerTools(server) {
  server.registerTool(
    'echo',
    { description: 'Echoes the text back, prefixed with "echo: ".', inputSchema: { text: z.string() } },
    async ({ text }, extra) => {
      if (opts.listChanged && !lateEnabled) {
        lateEnabled = true;
        for (const s of liveServers) {
          // registerTool() makes the SDK send notifications/tools/list_changed
          // on the session's standalone GET stream (dropped if none is open).
          registerLate(s);
        }
        // Also send one on this request's own stream (SSE mode only; in JSON
        // mode the SDK drops request-related notifications), so a client that
        // never opens the GET stream still sees it.
        await extra.sendNotification({ method: 'notifications/tools/list_changed' });
      }
      return { content: [{ type: 'text', text: `echo: ${text}` }] };
    },
  );

  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );

  server.registerTool(
    'image',
    { description: 'Returns a 1x1 PNG image and a text.', inputSchema: {} },
    async () => ({
      content: [
        { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
        { type: 'text', text: 'a 1x1 png' },
      ],
    }),
  );

  server.registerTool(
    'fail',
    { description: 'Always fails (isError: true).', inputSchema: {} },
    async () => ({ isError: true, content: [{ type: 'text', text: 'the tool failed on purpose' }] }),
  );

  server.registerTool(
    'slow',
    {
      description: 'Takes `steps` steps of ~20ms, reporting progress (if a progressToken was given) and logging.',
      inputSchema: { steps: z.number().int().min(0).max(1000) },
    },
    async ({ steps }, extra) => {
      const progressToken = extra._meta?.progressToken;
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: 'slow', data: `starting ${steps} steps` },
      });
      for (let i = 1; i <= steps; i++) {
        await sleep(20);
        if (extra.signal.aborted) {
          log(`slow: cancelled at step ${i}`);
          return { isError: true, content: [{ type: 'text', text: `cancelled at step ${i}` }] };
        }
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: i, total: steps, message: `step ${i}/${steps}` },
          });
        }
      }
      return { content: [{ type: 'text', text: `done after ${steps} steps` }] };
    },
  );

  // A name outside ^[A-Za-z0-9_-]+$.  The SDK accepts it but console.warn()s
  // a multi-line notice each time; let that through only once per process.
  const warn = console.warn;
  if (oddNameWarned) console.warn = () => {};
  try {
    server.registerTool(
      'dotted.name/with-slash',
      { description: 'A tool whose name has a dot and a slash.', inputSchema: {} },
      async () => ({ content: [{ type: 'text', text: 'odd name ok' }] }),
    );
  } finally {
    console.warn = warn;
    oddNameWarned = true;
  }

  server.registerTool(
    'whoami',
    { description: 'Says whether the expected Authorization header was received.', inputSchema: {} },
    async (_args, extra) => {
      const auth = extra.requestInfo?.headers?.authorization;
      return { content: [{ type: 'text', text: auth === AUTH_VALUE ? 'auth ok' : 'auth missing' }] };
    },
  );

  for (let k = 0; k < opts.manyTools; k++) {
    server.registerTool(
      `t${k}`,
      { description: `Extra tool number ${k}.`, inputSchema: {} },
      async () => ({ content: [{ type: 'text', text: `t${k}` }] }),
    );
  }
  if (lateEnabled) registerLate(server);
}

// Replace McpServer's tools/list handler (which always returns every tool)
// by one that returns pages of PAGE_SIZE with an opaque nextCursor.
// The original handler lives in the low-level Server's handler map (private
// field _requestHandlers, present in SDK 1.x); we call it and slice.
function installPagination(mcp) {
  const full = mcp.server._requestHandlers.get('tools/list');
  if (!full) throw new Error('no tools/list handler to wrap (SDK internals changed?)');
  mcp.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const { tools } = await full(request, extra);
    let offset = 0;
    const cursor = request.params?.cursor;
    if (cursor !== undefined) {
      const m = /^page:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
      if (!m || Number(m[1]) > tools.length) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
      offset = Number(m[1]);
    }
    const page = tools.slice(offset, offset + PAGE_SIZE);
    const next = offset + PAGE_SIZE;
    return next < tools.length
      ? { tools: page, nextCursor: Buffer.from(`page:${next}`).toString('base64url') }
      : { tools: page };
  });
}

function buildServer() {
  const mcp = new McpServer(
    { name: 'arkagent-sdk-test-server', version: '1.0.0' },
    { capabilities: { logging: {} } },
  );
  registerTools(mcp);
  if (opts.paginate) installPagination(mcp);
  liveServers.add(mcp);
  mcp.server.onclose = () => liveServers.delete(mcp);
  return mcp;
}

// ------------------------------------------------------------------- HTTP
function sendJson(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req) {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

function newTransport(extra = {}) {
  return new StreamableHTTPServerTransport({ enableJsonResponse: opts.json, ...extra });
}

// A closed stateful transport answers every request with the SDK's own
// 404 {"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}.
const deadTransport = newTransport({ sessionIdGenerator: () => 'dead' });
await deadTransport.close();

const sessions = new Map(); // session id -> { transport, requests }
const expired = new Map(); // session id -> closed transport (answers 404)

async function handleStateless(req, res, body) {
  if (req.method !== 'POST') {
    return sendJson(res, 405, { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }, { Allow: 'POST' });
  }
  const mcp = buildServer();
  const transport = newTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    transport.close();
    mcp.close();
  });
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
}

async function handleStateful(req, res, body) {
  const sid = req.headers['mcp-session-id'];
  if (sid !== undefined) {
    const gone = expired.get(sid);
    if (gone) return gone.handleRequest(req, res, body);
    const entry = sessions.get(sid);
    if (!entry) return deadTransport.handleRequest(req, res, body); // never existed: SDK 404
    entry.requests++;
    if (opts.expireAfter !== undefined && entry.requests > opts.expireAfter) {
      log(`session ${sid} expired after ${opts.expireAfter} requests`);
      sessions.delete(sid);
      expired.set(sid, entry.transport);
      await entry.transport.close();
      return entry.transport.handleRequest(req, res, body);
    }
    return entry.transport.handleRequest(req, res, body);
  }
  // No session id.  An initialize request opens a new session; anything else
  // goes to a fresh, uninitialised transport so the SDK gives its own answer
  // (400 "Bad Request: Server not initialized").
  const mcp = buildServer();
  const transport = newTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      sessions.set(id, { transport, requests: 0 });
      log(`session ${id} opened`);
    },
  });
  transport.onclose = () => {
    if (transport.sessionId) sessions.delete(transport.sessionId);
    mcp.close();
  };
  if (!(req.method === 'POST' && isInit(body))) {
    res.on('close', () => transport.close()); // throwaway: only answers this request
  }
  await mcp.connect(transport);
  await transport.handleRequest(req, res, body);
}

function isInit(body) {
  return Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
}

const httpServer = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (url.pathname !== '/mcp') return sendJson(res, 404, { error: 'not found' });
    if (opts.requireAuth && req.headers.authorization !== AUTH_VALUE) {
      return sendJson(res, 401, { jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized' }, id: null }, {
        'WWW-Authenticate': 'Bearer realm="arkagent-test"',
      });
    }
    let body;
    if (req.method === 'POST') {
      const text = await readBody(req);
      try {
        body = JSON.parse(text);
      } catch {
        return sendJson(res, 400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON' }, id: null });
      }
    }
    if (opts.stateless) await handleStateless(req, res, body);
    else await handleStateful(req, res, body);
  } catch (err) {
    log(`error: ${err?.stack ?? err}`);
    if (!res.headersSent) sendJson(res, 500, { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    else res.end();
  }
});

// --------------------------------------------------------------- lifecycle
function shutdown() {
  for (const { transport } of sessions.values()) transport.close().catch(() => {});
  httpServer.closeAllConnections?.();
  httpServer.close();
  process.exit(0);
}
process.stdin.on('end', shutdown);
process.stdin.on('close', shutdown);
process.stdin.on('error', shutdown);
process.stdin.resume();
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);

httpServer.listen(0, '127.0.0.1', () => {
  const { port } = httpServer.address();
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` }) + '\n');
  log(`listening; options ${JSON.stringify(opts)}`);
});
