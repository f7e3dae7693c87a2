#!/usr/bin/env bash
# MCP-4: the protocol's conformance suite (@modelcontextprotocol/conformance, pinned in
# tests/mcp/package.json) against arkagent's MCP client: the client scenarios a tools
# client must pass — initialize, tools_call, sse-retry — each must end "OVERALL: PASSED"
# with every check a success (a client that does nothing passes `initialize` with 0/0,
# so each scenario's own check must be seen). The client is the demo crate's
# `arkagent-mcp-conformance` binary (examples/demo/src/mcp_conformance.rs): the library's
# McpHub over a real HTTP transport (ureq).
#
#   scripts/mcp-conformance.sh            the three scenarios (CI)
#   scripts/mcp-conformance.sh --all      every client scenario, for the figure in
#                                         BENCHMARKS.md ("MCP client"); never fails
#
# The suite's CLI needs Node 22's fs.globSync for a command this does not use;
# tests/mcp/node20-compat.mjs stubs it (`npm run conformance`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
target_dir="${CARGO_TARGET_DIR:-$root/target}"
cargo build --quiet -p arkagent-demo --bin arkagent-mcp-conformance
client="$target_dir/debug/arkagent-mcp-conformance"
if [[ ! -d tests/mcp/node_modules/@modelcontextprotocol/conformance ]]; then
  (cd tests/mcp && npm ci --silent --no-audit --no-fund)
fi
cd tests/mcp
if [[ "${1:-}" == "--all" ]]; then
  npm run --silent conformance -- client --command "$client" --suite all 2>&1 | grep -E '^(✓|✗)|^Total' || true
  exit 0
fi
declare -A expect=([initialize]=mcp-client-initialization [tools_call]=tool-add-numbers [sse-retry]=client-sse-last-event-id)
failed=0
for scenario in initialize tools_call sse-retry; do
  out=$(npm run --silent conformance -- client --command "$client" --scenario "$scenario" 2>&1) || true
  if grep -q 'OVERALL: PASSED' <<<"$out" && grep -q "${expect[$scenario]}.*SUCCESS" <<<"$out"; then
    echo "mcp-conformance: $scenario passed ($(grep -E '^Passed:' <<<"$out"))"
  else
    echo "mcp-conformance: $scenario FAILED" >&2
    echo "$out" | tail -20 >&2
    failed=1
  fi
done
exit "$failed"
