#!/usr/bin/env bash
# The one test command: everything that can run on a machine without the OpenHarmony NDK.
#   Rust core + C ABI (cargo test: unit, integration, the C scenario, header staleness),
#   clippy, a short cargo-fuzz run and Miri over the pure core (nightly), the demo's
#   tests, the N-API module under Node, the ArkTS lint, the HAR's ohosTest cases
#   transpiled and run under Node against the host module, the aarch64-unknown-linux-ohos
#   compile check, and a link check of the OHOS module against musl with stub system
#   libraries (not a device test).
# Installs what it needs (rustup components, npm packages); see .ci/run for the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
declare -a results=()
failed=0

step() {
  local name=$1
  shift
  local t0
  t0=$(date +%s)
  echo
  echo "==> $name"
  if "$@"; then
    results+=("ok    $name ($(($(date +%s) - t0))s)")
  else
    results+=("FAIL  $name ($(($(date +%s) - t0))s)")
    failed=$((failed + 1))
  fi
}

clippy() {
  rustup component add clippy >/dev/null 2>&1 || true
  cargo clippy --quiet -p arkagent -p arkagent-demo --all-targets -- -D warnings
}

step "rust core and C ABI (cargo test -p arkagent)" cargo test -p arkagent
step "demo (cargo test -p arkagent-demo)" cargo test -p arkagent-demo
step "clippy" clippy
# REL-3: the fuzz seeds and regression inputs were replayed by cargo test above (stable);
# here each cargo-fuzz target runs briefly (nightly; SKIPPED loudly without it).
step "fuzz smoke, 5 s per target (scripts/fuzz.sh 5)" env FUZZ_BUILD_FLAGS=--dev bash scripts/fuzz.sh 5
step "Miri: pure-core unit tests (scripts/miri.sh)" bash scripts/miri.sh
step "N-API module under Node (scripts/test-js.sh)" bash scripts/test-js.sh
step "ArkTS lint (scripts/lint-arkts.sh)" bash scripts/lint-arkts.sh
# After the lint (which installs ohos-typescript) and the N-API step (which builds the module).
step "ArkTS ohosTest cases under Node (scripts/run-ohostest.js)" node --test scripts/run-ohostest.js
step "OHOS compile check (scripts/ohos-check.sh)" bash scripts/ohos-check.sh
step "OHOS link check (scripts/ohos-link-check.sh)" bash scripts/ohos-link-check.sh

echo
echo "==> summary ($(($(date +%s) - start))s)"
printf '  %s\n' "${results[@]}"
total=${#results[@]}
echo "test.sh: $((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
