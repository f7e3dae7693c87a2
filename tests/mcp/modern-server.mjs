#!/usr/bin/env node
// A real 2026-07-28 MCP server: the official TypeScript SDK v2 (`@modelcontextprotocol/server`
// 2.4.0, `createMcpHandler`) behind node:http. With `--reject-legacy` it is modern-only
// (`legacy: 'reject'`: no `initialize`, every request must carry the 2026-07-28 envelope);
// without it, it also serves 2025-era clients statelessly. Tools: `echo` {text} -> "echo:
// <text>", `café` {} -> "café ok" (a name that is not plain ASCII: `Mcp-Name` in base64).
//
// Start:   node tests/mcp/modern-server.mjs [--reject-legacy]   (stdin must be a pipe)
// Ready:   prints one line on stdout: {"url":"http://127.0.0.1:PORT/mcp"}
// Stop:    close its stdin.
import http from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { z } from 'zod';
const factory = () => {
  const server = new McpServer({ name: 'modern', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text: 'echo: ' + text }] }));
  server.registerTool('café', { description: 'Non-ASCII', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: 'café ok' }] }));
  return server;
};
const handler = createMcpHandler(factory, { legacy: process.argv.includes('--reject-legacy') ? 'reject' : 'stateless' });
const srv = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = Buffer.concat(chunks);
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  const request = new Request('http://127.0.0.1' + req.url, { method: req.method, headers, body: ['GET', 'HEAD'].includes(req.method) ? undefined : body });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (response.body) { for await (const c of response.body) res.write(c); }
  res.end();
});
srv.listen(0, '127.0.0.1', () => { console.log(JSON.stringify({ url: `http://127.0.0.1:${srv.address().port}/mcp` })); });
process.stdin.on('end', () => process.exit(0)); process.stdin.resume();
