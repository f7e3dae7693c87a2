#!/usr/bin/env bash
# ArkTS lint of the DevEco project ohos/ (SPEC NAPI-3, OHOS-1, OHOS-2), offline: no hvigor,
# no HarmonyOS SDK.
#
#  1. installs the pinned checker (scripts/arkts-lint: ohos-typescript 4.9.5-r9, json5) with
#     npm ci;
#  2. checks everything ArkTS under ohos/ -- the HAR (ohos/arkagent: Index.ets, src/main/ets,
#     the ohosTest cases, the native module's index.d.ts as a .d.ets copy so the arkts-*
#     rules apply) and the example app (ohos/example: the ArkUI page and the ability, which
#     import the HAR as '@arkagent/arkagent', like the app's ohpm `file:` dependency) --
#     expecting 0 errors, and Index.ets re-exporting every name the native module exports
#     (a class added to index.d.ts must be added to Index.ets's export list too). ArkUI
#     (struct components, decorators, `Column() { ... }.width(...)`) is parsed as ets-loader
#     does, against the declarations in tests/arkts/stubs/component;
#  3. checks the known-bad fixture tests/arkts/bad/bad.ets, expecting it to FAIL with each
#     rule it breaks reported, so a checker that silently passes everything is caught.
#  4. (OHOS-2) checks tests/arkts/bad/undeclared_sdk.ets, which uses an SDK module, a kit
#     export and a member no stub declares, and tests/arkts/bad/undeclared_arkui.ets, a page
#     using an ArkUI component, attributes and a decorator no stub declares (and an attribute
#     with a wrong argument type), expecting each to FAIL naming every one; checks that every stub names its
#     SDK source file and tag (scripts/arkts-lint/check-stubs.js; with OHOS_SDK_JS set to an
#     interface_sdk-js checkout at OpenHarmony-v5.0.0-Release, also every signature and
#     @since <= 12) and that check-stubs.js flags a bad stub against a tiny fake SDK.
#
#  5. (OHOS-9) every file is held to the project's minimum API level, compatibleSdkVersion in
#     ohos/build-profile.json5 ("5.0.0(12)" -> 12): a use of an SDK declaration whose
#     `@since` is above it is an error (check.js --min-api, scripts/arkts-lint/since.js);
#     the known-bad fixture tests/arkts/bad/since_above_min_api.ets (RequestMethod.PATCH,
#     @since 26) must FAIL, with the stubs (which lack it) and with any SDK.
#
# With OHOS_SDK_HOME set, steps 1, 2 and 5 check against that SDK's own declarations instead
# of the stubs, so a DevEco user can lint this project with their SDK. OHOS_SDK_HOME is an
# SDK `ets` folder or a folder holding one as ets/ (an OpenHarmony SDK's <api level>/),
# <n>/ets (the highest API level is taken) or openharmony/ets (+ hms/ets; DevEco's
# sdk/default). In the `ets` folder the declarations (api/, kits/, arkts/, component/) are
# found where each SDK generation puts them: in it (API 12 – 5.x), in ets1.1/ (6.0; ets1.2/
# is ArkTS-static) or in dynamic/ (7.0; static/ beside it); the log names the layout found.
# Only errors in the checked files count: a diagnostic inside the SDK's own files is printed
# as a warning "(in the SDK)". Only @ohos/hypium (an ohpm package, not in the SDK) still
# comes from the stubs. The stubs-minimality fixtures of step 3 (undeclared_*.ets: names
# the stubs leave out on purpose, which a real SDK declares) are skipped; the known-bad
# fixtures and the stub checks still run.
#
# Prints `arkts-lint: N passed, M failed`; exits non-zero when any expectation fails.
# Needs node + npm (Node.js 20); the first run downloads ohos-typescript from npm.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LINT_DIR="$ROOT/scripts/arkts-lint"
STUBS="tests/arkts/stubs"
NATIVE_DTS="ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts"
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

# npm ci from the committed lock file; skipped when exactly the locked versions are installed.
locked_version() {
  node -e 'const l=require(process.argv[1]);process.stdout.write(l.packages["node_modules/"+process.argv[2]].version)' \
    "$LINT_DIR/package-lock.json" "$1"
}
installed_version() {
  node -e 'try{process.stdout.write(require(process.argv[1]).version)}catch(e){}' \
    "$LINT_DIR/node_modules/$1/package.json"
}
for pkg in ohos-typescript json5; do
  if [ "$(installed_version "$pkg")" != "$(locked_version "$pkg")" ]; then
    echo "lint-arkts: installing ohos-typescript $(locked_version ohos-typescript), json5 $(locked_version json5) (npm ci)" >&2
    (cd "$LINT_DIR" && npm ci --silent --no-audit --no-fund >/dev/null)
    break
  fi
done

cd "$ROOT"
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "lint-arkts: FAILED: $*" >&2; }

out="$(mktemp)"
hypium_stubs="$(mktemp -d)"
trap 'rm -rf "$out" "$hypium_stubs"' EXIT

# The minimum API level (step 5): the product's compatibleSdkVersion, "5.0.0(12)" or 12.
min_api="$(node -e '
  const json5 = require(process.argv[1]);
  const profile = json5.parse(require("fs").readFileSync(process.argv[2], "utf8"));
  const version = String(profile.app.products[0].compatibleSdkVersion);
  const m = version.match(/\((\d+)\)$/) || version.match(/^(\d+)$/);
  if (!m) process.exit(1);
  process.stdout.write(m[1]);' "$LINT_DIR/node_modules/json5" ohos/build-profile.json5)" || {
  echo "lint-arkts: cannot read compatibleSdkVersion from ohos/build-profile.json5" >&2
  exit 1
}

# The declarations folder of an SDK `ets` folder $1: itself (api/ in it), ets1.1/ (6.0) or
# dynamic/ (7.0).
decl_dir() {
  local d
  for d in "$1" "$1/dynamic" "$1/ets1.1"; do
    if [ -d "$d/api" ]; then
      echo "$d"
      return 0
    fi
  done
  return 1
}
layout_of() {
  case "$1" in
    */dynamic) echo "7.0 layout, ets/dynamic/" ;;
    */ets1.1) echo "6.0 layout, ets/ets1.1/" ;;
    *) echo "ets/api/ layout" ;;
  esac
}

# The declarations to check against: the stubs, or (OHOS_SDK_HOME) a real SDK's ets folders.
decl_args=(--stubs "$STUBS")
sdk_dirs=()
if [ -n "${OHOS_SDK_HOME:-}" ]; then
  home="${OHOS_SDK_HOME%/}"
  if d="$(decl_dir "$home")" || d="$(decl_dir "$home/ets")"; then
    sdk_dirs=("$d")
  elif d="$(decl_dir "$home/openharmony/ets")"; then
    sdk_dirs=("$d")
    if d="$(decl_dir "$home/hms/ets")"; then sdk_dirs+=("$d"); fi
  else
    level=""
    for e in "$home"/*/ets; do
      n="${e%/ets}"
      n="${n##*/}"
      if [[ "$n" =~ ^[0-9]+$ ]] && decl_dir "$e" >/dev/null && { [ -z "$level" ] || [ "$n" -gt "$level" ]; }; then
        level="$n"
      fi
    done
    if [ -n "$level" ]; then sdk_dirs=("$(decl_dir "$home/$level/ets")"); fi
  fi
  if [ "${#sdk_dirs[@]}" -eq 0 ]; then
    echo "lint-arkts: OHOS_SDK_HOME=$OHOS_SDK_HOME holds no SDK declarations (looked for api/ in it, in ets/," \
      "openharmony/ets/ and <n>/ets/, each also under ets1.1/ (6.0) and dynamic/ (7.0))" >&2
    exit 1
  fi
  mkdir -p "$hypium_stubs/@ohos"
  cp -R "$STUBS/@ohos/hypium" "$hypium_stubs/@ohos/hypium"
  decl_args=()
  for d in "${sdk_dirs[@]}"; do decl_args+=(--sdk "$d"); done
  decl_args+=(--stubs "$hypium_stubs")
  echo "lint-arkts: checking against the SDK declarations in ${sdk_dirs[*]} ($(layout_of "${sdk_dirs[0]}"); OHOS_SDK_HOME)" >&2
fi
echo "lint-arkts: minimum API level $min_api (compatibleSdkVersion, ohos/build-profile.json5)" >&2

# 1. The HAR: 0 errors expected. One PASS/FAIL line per file from --summary.
rc=0
node "$LINT_DIR/check.js" --summary "${decl_args[@]}" --min-api "$min_api" --module "libarkagent.so=$NATIVE_DTS" \
  --module "@arkagent/arkagent=ohos/arkagent/Index.ets" \
  --reexports ohos/arkagent/Index.ets=libarkagent.so ohos >"$out" 2>&1 || rc=$?
grep -v '^PASS ' "$out" | grep -v '^FAIL ' || true
while read -r status file _; do
  case "$status" in
    PASS) pass ;;
    FAIL) fail "$file has ArkTS errors (listed above)" ;;
  esac
done < <(grep -E '^(PASS|FAIL) ' "$out")
# OHOS-1: the example app's page and ability are among the checked files.
for want in ohos/example/src/main/ets/pages/Index.ets ohos/example/src/main/ets/entryability/EntryAbility.ets; do
  grep -qE "^(PASS|FAIL) $want( |\$)" "$out" || fail "$want was not checked"
done
if [ "$rc" -ne 0 ] && ! grep -q '^FAIL ' "$out"; then
  fail "checker exited $rc on ohos/ without naming a failing file"
elif [ "$rc" -eq 0 ] && ! grep -q '^PASS ' "$out"; then
  fail "checker found no ArkTS files under ohos/"
fi

# 2. The known-bad fixture: the checker must reject it (exit 1, not a crash) naming each rule.
rc=0
node "$LINT_DIR/check.js" "${decl_args[@]}" "$BAD" >"$out" 2>&1 || rc=$?
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

# 2b. OHOS-9: an SDK member above the minimum API level is rejected: with the stubs (API 12)
#     it does not exist; an SDK that has it (7.0: @since 26) must report its level.
SINCE_BAD="tests/arkts/bad/since_above_min_api.ets"
rc=0
node "$LINT_DIR/check.js" "${decl_args[@]}" --min-api "$min_api" "$SINCE_BAD" >"$out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && grep -Eq "^$SINCE_BAD:[0-9]+:[0-9]+: error: ('PATCH' is @since [0-9]+ .*above the minimum API $min_api|Property 'PATCH' does not exist)" "$out"; then
  pass
  grep -E "^$SINCE_BAD:.*PATCH" "$out" >&2
else
  grep -v '(in the SDK)' "$out" >&2
  fail "$SINCE_BAD: RequestMethod.PATCH (API 26) was not rejected (checker exit $rc)"
fi

# 3. OHOS-2: code using an SDK module or member that no stub declares is rejected.
#    (Stubs only: a real SDK declares these names.)
UNDECLARED="tests/arkts/bad/undeclared_sdk.ets"
UNDECLARED_UI="tests/arkts/bad/undeclared_arkui.ets"
rc=0
if [ "${#sdk_dirs[@]}" -gt 0 ]; then
  echo "lint-arkts: skipped (stubs-minimality fixtures, declared by a real SDK): $UNDECLARED $UNDECLARED_UI" >&2
else
node "$LINT_DIR/check.js" --stubs "$STUBS" "$UNDECLARED" >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 1 ]; then
  cat "$out" >&2
  fail "$UNDECLARED: checker exited $rc, expected 1 (rejected)"
else
  for want in "Cannot find module '@kit.MediaKit'" "has no exported member 'common'" \
    "Property 'createHttpResponseCache' does not exist"; do
    if grep -qF "$want" "$out"; then pass; else fail "$UNDECLARED: \"$want\" not reported"; cat "$out" >&2; fi
  done
fi

# 3b. OHOS-1/OHOS-2: an ArkUI page using a component, attributes and a decorator no stub
#     declares (and an attribute with a wrong argument type) is rejected.
rc=0
node "$LINT_DIR/check.js" --stubs "$STUBS" "$UNDECLARED_UI" >"$out" 2>&1 || rc=$?
if [ "$rc" -ne 1 ]; then
  cat "$out" >&2
  fail "$UNDECLARED_UI: checker exited $rc, expected 1 (rejected)"
else
  for want in "Cannot find name 'Image'" "Property 'fontFamily' does not exist on type 'TextAttribute'" \
    "Property 'fontStyle' does not exist on type 'TextAttribute'" "Cannot find name 'Prop'" \
    "Argument of type 'string' is not assignable to parameter of type 'number'"; do
    if grep -qF "$want" "$out"; then pass; else fail "$UNDECLARED_UI: \"$want\" not reported"; cat "$out" >&2; fi
  done
fi
fi

# 4. OHOS-2: every stub names the SDK file and tag it is written from (API 12's tag); with
#    OHOS_SDK_JS=<interface_sdk-js checkout at OpenHarmony-v5.0.0-Release> also compares each
#    declared member with the real signature and its @since with API 12.
sdk_args=()
if [ -n "${OHOS_SDK_JS:-}" ]; then sdk_args=(--sdk "$OHOS_SDK_JS"); fi
if node "$LINT_DIR/check-stubs.js" --stubs "$STUBS" ${sdk_args[@]+"${sdk_args[@]}"} >"$out" 2>&1; then
  pass
else
  cat "$out" >&2
  fail "check-stubs.js: stubs without their SDK source, or differing from the SDK (above)"
fi
[ -n "${OHOS_SDK_JS:-}" ] || echo "lint-arkts: stub signatures not compared with the SDK (set OHOS_SDK_JS to an interface_sdk-js checkout)" >&2

# 5. check-stubs.js itself: against a tiny fake SDK it must flag a changed signature, an
#    undeclared member and a member above API 12, and pass a faithful stub.
fake="$(mktemp -d)"
mkdir -p "$fake/sdk/api" "$fake/good" "$fake/bad"
cat >"$fake/sdk/api/@ohos.fake.d.ts" <<'EOF'
declare namespace fake {
  /** @since 9 */
  function parse(text: string, radix?: number): number;
  /** @since 13 */
  function later(): void;
}
export default fake;
EOF
head_line='/* Source: interface_sdk-js api/@ohos.fake.d.ts @ OpenHarmony-v5.0.0-Release */'
printf '%s\ndeclare namespace fake {\n  function parse(text: string, radix?: number): number;\n}\nexport default fake;\n' \
  "$head_line" >"$fake/good/@ohos.fake.d.ts"
printf '%s\ndeclare namespace fake {\n  function parse(text: string): number;\n  function later(): void;\n  function invented(): void;\n}\nexport default fake;\n' \
  "$head_line" >"$fake/bad/@ohos.fake.d.ts"
rc=0
node "$LINT_DIR/check-stubs.js" --stubs "$fake/good" --sdk "$fake/sdk" >"$out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ]; then pass; else cat "$out" >&2; fail "check-stubs.js rejected a faithful stub"; fi
rc=0
node "$LINT_DIR/check-stubs.js" --stubs "$fake/bad" --sdk "$fake/sdk" >"$out" 2>&1 || rc=$?
if [ "$rc" -eq 1 ] && grep -q 'fake.parse: .* differs from the SDK' "$out" &&
  grep -q 'fake.later is @since 13' "$out" && grep -q 'fake.invented is not declared' "$out"; then
  pass
else
  cat "$out" >&2
  fail "check-stubs.js did not flag the changed, later and invented declarations (exit $rc)"
fi
rm -rf "$fake"

echo "arkts-lint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
