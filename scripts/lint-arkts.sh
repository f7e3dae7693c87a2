#!/usr/bin/env bash
# ArkTS lint of the HAR (SPEC NAPI-3), offline: no hvigor, no HarmonyOS SDK.
#
#  1. installs the pinned checker (scripts/arkts-lint: ohos-typescript 4.9.5-r9) with npm ci;
#  2. checks everything ArkTS under ohos/ -- Index.ets, src/main/ets, the ohosTest cases and
#     the native module's index.d.ts (as a .d.ets copy, so the arkts-* rules apply) --
#     expecting 0 errors, and Index.ets re-exporting every name the native module exports
#     (a class added to index.d.ts must be added to Index.ets's export list too);
#  3. checks the known-bad fixture tests/arkts/bad/bad.ets, expecting it to FAIL with each
#     rule it breaks reported, so a checker that silently passes everything is caught.
#
# Prints `arkts-lint: N passed, M failed`; exits non-zero when any expectation fails.
# Needs node + npm (Node.js 20); the first run downloads ohos-typescript from npm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINT_DIR="$ROOT/scripts/arkts-lint"
STUBS="tests/arkts/stubs"
NATIVE_DTS="ohos/src/main/cpp/types/libarkagent/index.d.ts"
BAD="tests/arkts/bad/bad.ets"
# Every rule bad.ets breaks; all must be reported.
BAD_RULES=(
  arkts-no-any-unknown
  arkts-no-obj-literals-as-types
  arkts-no-indexed-signatures
  arkts-no-structural-typing
  arkts-no-untyped-obj-literals
  arkts-no-for-in
)

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "lint-arkts: $tool not found (Node.js 20 with npm is required)" >&2
    exit 1
  fi
done

# npm ci from the committed lock file; skipped when exactly the locked version is installed.
locked_version() {
  node -e 'const l=require(process.argv[1]);process.stdout.write(l.packages["node_modules/ohos-typescript"].version)' \
    "$LINT_DIR/package-lock.json"
}
installed_version() {
  node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch(e){}' \
    "$LINT_DIR/node_modules/ohos-typescript/package.json"
}
if [ "$(installed_version)" != "$(locked_version)" ]; then
  echo "lint-arkts: installing ohos-typescript $(locked_version) (npm ci)" >&2
  (cd "$LINT_DIR" && npm ci --silent --no-audit --no-fund >/dev/null)
fi

cd "$ROOT"
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "lint-arkts: FAILED: $*" >&2; }

out="$(mktemp)"
trap 'rm -f "$out"' EXIT

# 1. The HAR: 0 errors expected. One PASS/FAIL line per file from --summary.
rc=0
node "$LINT_DIR/check.js" --summary --stubs "$STUBS" --module "libarkagent.so=$NATIVE_DTS" \
  --reexports ohos/Index.ets=libarkagent.so ohos >"$out" 2>&1 || rc=$?
grep -v '^PASS ' "$out" | grep -v '^FAIL ' || true
while read -r status file _; do
  case "$status" in
    PASS) pass ;;
    FAIL) fail "$file has ArkTS errors (listed above)" ;;
  esac
done < <(grep -E '^(PASS|FAIL) ' "$out")
if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
  fail "checker exited $rc on ohos/ without naming a failing file"
elif [ "$rc" -eq 0 ] && ! grep -q '^PASS ' "$out"; then
  fail "checker found no ArkTS files under ohos/"
fi

# 2. The known-bad fixture: the checker must reject it (exit 1, not a crash) naming each rule.
rc=0
node "$LINT_DIR/check.js" --stubs "$STUBS" "$BAD" >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 1 ]; then
  cat "$out" >&2
  fail "$BAD: checker exited $rc, expected 1 (rejected)"
else
  missing=0
  for rule in "${BAD_RULES[@]}"; do
    if grep -q "($rule)" "$out"; then
      pass
    else
      fail "$BAD: rule $rule not reported"
      missing=$((missing + 1))
    fi
  done
  if [ "$missing" -ne 0 ]; then cat "$out" >&2; fi
fi

echo "arkts-lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
