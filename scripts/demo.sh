#!/usr/bin/env bash
# Runs the desktop demo (DX-2) from the repository root.
#
#   scripts/demo.sh                                   interactive REPL, offline
#   scripts/demo.sh --say "What is the weather in Beijing and Shenzhen?"
#                                                     one scripted turn, then exit
#   scripts/demo.sh --say "research the history of the baguette" --say /sub-agents
#                                                     a delegation to the researcher worker
#   scripts/demo.sh --help                            all options
#
# Offline by default: a simulated OpenAI-compatible model answers on 127.0.0.1 and is
# labelled "[simulated model]". Set ARKAGENT_BASE_URL, ARKAGENT_API_KEY and
# ARKAGENT_MODEL to talk to a real endpoint instead. RUST_LOG=info shows tracing on stderr;
# no level (trace included) shows the API key: the HTTP client's wire dump is never
# formatted and log lines are written with the key redacted.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec cargo run --quiet -p arkagent-demo -- "$@"
