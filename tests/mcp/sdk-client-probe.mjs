#!/usr/bin/env node
// Trivial MCP client (official SDK Client + StreamableHTTPClientTransport)
// used only to learn/confirm how `@modelcontextprotocol/conformance client`
// drives a client under test:
//   - the scenario's server URL is appended as the LAST argv element;
//   - MCP_CONFORMANCE_SCENARIO holds the scenario name;
//   - MCP_CONFORMANCE_CONTEXT (JSON) is set only for scenarios needing extra data (auth).
// The conformance runner judges the client from what its mock server saw; the
// client's exit status only matters if non-zero (reported as "CLIENT EXITED
// WITH ERROR" and counted as a failure unless the scenario allows it).
//
//   node --import ./node20-compat.mjs node_modules/.bin/conformance client \
//        --command "node sdk-client-probe.mjs" --scenario initialize
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '(none)';
console.log(`probe: argv=${JSON.stringify(process.argv.slice(2))} scenario=${scenario}`);
if (process.env.MCP_CONFORMANCE_CONTEXT) console.log(`probe: context=${process.env.MCP_CONFORMANCE_CONTEXT}`);

const client = new Client({ name: 'arkagent-sdk-client-probe', version: '0.0.1' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
console.log(`probe: server=${JSON.stringify(client.getServerVersion())} protocol=${client.getNegotiatedProtocolVersion?.() ?? '?'}`);

const { tools } = await client.listTools();
console.log(`probe: tools=${tools.map((t) => t.name).join(',')}`);

switch (scenario) {
  case 'tools_call': {
    const r = await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
    console.log(`probe: add_numbers -> ${JSON.stringify(r.content)}`);
    break;
  }
  case 'sse-retry': {
    // The server closes the POST stream after a priming event (id + retry: 500)
    // and delivers the result on a GET stream the client must reopen with
    // Last-Event-ID after waiting `retry` ms.
    const r = await client.callTool({ name: 'test_reconnection', arguments: {} });
    console.log(`probe: test_reconnection -> ${JSON.stringify(r.content)}`);
    break;
  }
  default:
    break; // initialize: connecting (+ tools/list) is all that is checked
}
await client.close();
