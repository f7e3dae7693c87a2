#!/usr/bin/env bash
# STORE-3, full count: SIGKILL a real session N times (default 1000) at random instants
# and check the committed state after every kill. scripts/test.sh runs the same test with
# the default 60 kills (through `cargo test`).
#   bash scripts/kill-test.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000}"
ARKAGENT_KILL_COUNT="$N" cargo test --quiet -p arkagent --test it store_kill::store_3_sigkill -- --nocapture --exact \
  store_kill::store_3_sigkill_at_random_instants_leaves_the_last_committed_state
