#!/usr/bin/env bash
# The one test command: everything that can run on a machine without the OpenHarmony NDK.
#   Rust core + C ABI + the demo (cargo test --workspace: unit, integration, the C
#   programs, header staleness, fuzz seed and regression replay), clippy over the
#   workspace, every generated file current (scripts/regen.sh --check), the C programs
#   under AddressSanitizer and valgrind, a short cargo-fuzz run
#   and Miri over the pure core (nightly), the N-API module under Node, the ArkTS lint,
#   the MCP conformance suite's client scenarios against the MCP client,
#   the HAR's ohosTest cases transpiled and run under Node against the host module, the
#   HAR's packaging rules (keep rules generated from index.d.ts, hvigorfile.ts refusing a
#   HAR without libs/<abi>/libarkagent.so), the DevEco project's files as hvigor reads them,
#   the aarch64-unknown-linux-ohos compile check, and scripts/build-ohos.sh -- the command a
#   user runs -- against a fake NDK (musl, stub system libraries built from the NDK's
#   published symbol lists) for arm64 and x86_64, with link checks and the packed .har
#   inspected (not a device test).
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

# ARKAGENT_PRUNE=1 (.ci/run sets it: CI runs on a small disk) removes a step's own build
# directory once the step is done — ASan's, cargo-fuzz's, Miri's, the host debug build once
# the Node and ArkTS steps are done, the OHOS check's — so the run's peak is the shared debug
# build plus one step; a developer's reruns keep theirs.
target_root=${CARGO_TARGET_DIR:-$PWD/target}
prune() {
  [ "${ARKAGENT_PRUNE:-0}" = 1 ] || return 0
  rm -rf "$@"
  echo "pruned $*: $(df -Ph . | awk 'NR == 2 { print $4 }') free"
}

clippy() {
  rustup component add clippy >/dev/null 2>&1 || true
  cargo clippy --quiet --workspace --all-targets -- -D warnings
}

# The N-API crate has no Rust test harness (bindings/napi/Cargo.toml says why); its tests
# run under Node below.
step "rust core, C ABI and demo (cargo test --workspace)" cargo test --workspace
step "clippy (cargo clippy --workspace --all-targets)" clippy
# ARCH-1: SQLite sits behind the core's default `sqlite` feature; the core builds without it.
step "generated files are current (scripts/regen.sh --check)" bash scripts/regen.sh --check
step "core without default features (cargo check -p arkagent --no-default-features)" cargo check --quiet -p arkagent --no-default-features
step "C tests under AddressSanitizer and valgrind (scripts/test-c-asan.sh)" bash scripts/test-c-asan.sh
prune "$target_root/asan"
# REL-3: the fuzz seeds and regression inputs were replayed by cargo test above (stable);
# here each cargo-fuzz target runs briefly (nightly; SKIPPED loudly without it).
step "fuzz smoke, 5 s per target (scripts/fuzz.sh 5)" env FUZZ_BUILD_FLAGS=--dev bash scripts/fuzz.sh 5
prune fuzz/target
step "Miri: pure-core unit tests (scripts/miri.sh)" bash scripts/miri.sh
prune "$target_root/miri"
step "N-API module under Node (scripts/test-js.sh)" bash scripts/test-js.sh
# MCP-4: the MCP conformance suite's client scenarios (after the N-API step's npm ci).
step "MCP conformance: initialize, tools_call, sse-retry (scripts/mcp-conformance.sh)" bash scripts/mcp-conformance.sh
step "ArkTS lint (scripts/lint-arkts.sh)" bash scripts/lint-arkts.sh
# After the lint (which installs ohos-typescript) and the N-API step (which builds the module).
step "ArkTS ohosTest cases under Node (scripts/run-ohostest.js)" node --test scripts/run-ohostest.js
# OHOS-5 (keep rules generated from index.d.ts, hvigorfile.ts's native-library check); needs
# the ohos-typescript and json5 the lint installs.
# OHOS-1: the DevEco project's structure as hvigor reads it (tests/arkts/ohos_1.test.js).
step "DevEco project and HAR packaging rules (node --test tests/arkts/)" node --test tests/arkts/
# The host debug build and the module copied from it have no user after this point.
prune "$target_root/debug" "$target_root/arkagent.node"
step "OHOS compile check (scripts/ohos-check.sh)" bash scripts/ohos-check.sh
prune "$target_root/aarch64-unknown-linux-ohos/debug"
step "OHOS build (scripts/build-ohos.sh on a fake NDK) and link check (scripts/ohos-link-check.sh)" bash scripts/ohos-link-check.sh

echo
echo "==> summary ($(($(date +%s) - start))s; build directories: $(du -sh "$target_root" 2>/dev/null | cut -f1))"
printf '  %s\n' "${results[@]}"
total=${#results[@]}
echo "test.sh: $((total - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
