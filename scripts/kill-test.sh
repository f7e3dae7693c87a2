#!/usr/bin/env bash
# STORE-3, TOOL-2 and CHAT-1, full count: SIGKILL a real session N times (default 1000) at random instants
# and check the committed state after every kill. scripts/test.sh runs the same test with
# the default 60 kills (through `cargo test`).
#   bash scripts/kill-test.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000}"
ARKAGENT_KILL_COUNT="$N" cargo test --quiet -p arkagent --test it store_kill::store_3_sigkill -- --nocapture --exact \
  store_kill::store_3_sigkill_at_random_instants_leaves_the_last_committed_state
# TOOL-2: the same with a turn paused for approval at every step (default 100 in test.sh).
ARKAGENT_APPROVAL_KILL_COUNT="$N" cargo test --quiet -p arkagent --test it approval_kill::tool_2_sigkill -- --nocapture --exact \
  approval_kill::tool_2_sigkill_with_pending_approvals_loses_no_decision_and_runs_no_tool_twice
# CHAT-1, CHAT-2: the same with regenerates, edits, rewinds and forks between runs (default 60 in test.sh).
ARKAGENT_CHAT_KILL_COUNT="$N" cargo test --quiet -p arkagent --test it chat_kill::chat_1_sigkill -- --nocapture --exact \
  chat_kill::chat_1_sigkill_during_rewinds_and_forks_never_half_applies_one
