#!/usr/bin/env bash
# Builds the N-API module for the host and runs the Node.js tests against it (NAPI-1,
# NAPI-2). Exits non-zero when the build or any test fails.
#
#   scripts/test-js.sh            debug build
#   PROFILE=release scripts/test-js.sh
#
# ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts is generated from the `ts` blocks
# of bindings/napi/src: regenerate it with scripts/gen-dts.sh. It is checked first (and by
# tests/js/dts_generated.test.js): a hand edit, or a block changed without regenerating,
# fails here.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

profile="${PROFILE:-debug}"
cargo_flags=(-p arkagent-napi)
if [[ "$profile" == "release" ]]; then
  cargo_flags+=(--release)
fi

command -v node >/dev/null || { echo "test-js: node not found" >&2; exit 1; }

node scripts/gen-dts.js --check

cargo build "${cargo_flags[@]}"

target_dir="${CARGO_TARGET_DIR:-$root/target}"
so="$target_dir/$profile/libarkagent_napi.so"
[[ -f "$so" ]] || { echo "test-js: $so was not built" >&2; exit 1; }
# Node loads native modules by the .node extension; copy rather than link so a rebuild
# while tests run cannot swap the file under them.
cp "$so" "$target_dir/arkagent.node"

export ARKAGENT_NODE="$target_dir/arkagent.node"
node --test tests/js/
