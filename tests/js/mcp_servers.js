'use strict';
// MCP-4's real peers for the Node tests: the official TypeScript SDK's server
// (tests/mcp/sdk-server.mjs) and the hostile one (tests/mcp/hostile-server.mjs), started
// as child processes that exit when this process closes their stdin; and an HttpTransport
// over Node's fetch, as the HAR's NetworkKit transport moves bytes on the phone.

const { spawn } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const MCP_DIR = path.join(__dirname, '..', 'mcp');

/** True once `npm ci` ran in tests/mcp (scripts/test-js.sh runs it). */
function fixturesInstalled() {
  return fs.existsSync(path.join(MCP_DIR, 'node_modules', '@modelcontextprotocol', 'sdk'));
}

/** Starts `script` with `args`; resolves with { url, stop() } once it printed its URL. */
function startServer(script, args = []) {
  const child = spawn(process.execPath, [path.join(MCP_DIR, script), ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n')[0];
      if (out.includes('\n')) {
        const { url } = JSON.parse(line);
        resolve({ url, stop: () => child.stdin.end(), stderr: () => stderr });
      }
    });
    child.on('exit', (code) => reject(new Error(`${script} exited ${code}: ${stderr}`)));
  });
}

/**
 * An HttpTransport over fetch: the request's method, headers and body as the library
 * built them; an event stream is handed over chunk by chunk through the sink, and the
 * sink's onCancel aborts the request (OHOS-7).
 */
async function fetchTransport(request, sink) {
  const controller = new AbortController();
  sink.onCancel(() => controller.abort());
  const headers = {};
  for (const h of request.headers) headers[h.name] = h.value;
  const init = { method: request.method, headers, signal: controller.signal };
  if (request.method !== 'GET') init.body = request.body;
  const response = await fetch(request.url, init);
  const responseHeaders = [];
  response.headers.forEach((value, name) => responseHeaders.push({ name, value }));
  const type = response.headers.get('content-type') || '';
  if (!type.startsWith('text/event-stream') || !response.body) {
    return { status: response.status, headers: responseHeaders, body: await response.text() };
  }
  (async () => {
    try {
      for await (const chunk of response.body) {
        if (!sink.writeBytes(chunk)) break;
      }
      sink.end();
    } catch (e) {
      sink.fail(String(e.message || e));
    }
  })();
  return { status: response.status, headers: responseHeaders, streamed: true };
}

/**
 * A minimal well-behaved MCP server answered in-process (no child process): `initialize`
 * (2025-11-25, a session id), 202 for notifications, `tools/list` with one tool `echo`,
 * `tools/call` echoing the arguments.
 */
function tinyMcpAnswer(request) {
  const message = JSON.parse(request.body);
  const json = (result) => ({
    status: 200,
    headers: [{ name: 'content-type', value: 'application/json' }, { name: 'mcp-session-id', value: 'tiny-1' }],
    body: JSON.stringify({ jsonrpc: '2.0', id: message.id, result }),
  });
  if (message.id === undefined) return { status: 202, body: '' };
  if (message.method === 'initialize') return json({ protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'tiny', version: '1' } });
  if (message.method === 'tools/list') return json({ tools: [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' } }] });
  return json({ content: [{ type: 'text', text: JSON.stringify(message.params.arguments) }] });
}

module.exports = { MCP_DIR, fixturesInstalled, startServer, fetchTransport, tinyMcpAnswer };
