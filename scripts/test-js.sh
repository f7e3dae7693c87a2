#!/usr/bin/env bash
# Builds the N-API module for the host and runs the Node.js tests against it (NAPI-1,
# NAPI-2). Exits non-zero when the build or any test fails.
#
#   scripts/test-js.sh            debug build
#   PROFILE=release scripts/test-js.sh
#
# ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts is generated from the `ts` blocks
# of bindings/napi/src, the Rust enums of the closed sets and the core's records
# (scripts/closed-sets), and the crate's own #[napi] items with their Rust docs (napi-derive's
# type definitions): regenerate it with scripts/regen.sh. The module is built first with
# napi-derive writing its type definitions ($CARGO_TARGET_DIR/napi-type-def/arkagent-napi);
# then the generated files are checked (and by tests/js/dts_generated.test.js): a hand edit,
# a block or a doc changed without regenerating, or an enum variant added or removed, fails
# here; and scripts/dts-signatures.js compares every argument and return type of the d.ts
# with them (also run by tests/js/dts_signatures.test.js).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

profile="${PROFILE:-debug}"
cargo_flags=(-p arkagent-napi)
if [[ "$profile" == "release" ]]; then
  cargo_flags+=(--release)
fi

command -v node >/dev/null || { echo "test-js: node not found" >&2; exit 1; }

target_dir="${CARGO_TARGET_DIR:-$root/target}"
# napi-derive-ohos writes one JSON line per #[napi] item here while it expands the crate
# (napi-build-ohos makes the crate rebuild when this variable changes). A cached build
# writes nothing: when the file is missing, force one rebuild.
type_defs="$target_dir/napi-type-def"
mkdir -p "$type_defs"
export NAPI_TYPE_DEF_TMP_FOLDER="$type_defs"
if [[ ! -s "$type_defs/arkagent-napi" ]]; then
  export NAPI_FORCE_BUILD_ARKAGENT_NAPI="$(date +%s%N)"
fi
cargo build "${cargo_flags[@]}"
[[ -s "$type_defs/arkagent-napi" ]] || { echo "test-js: napi-derive wrote no $type_defs/arkagent-napi" >&2; exit 1; }
export ARKAGENT_NAPI_TYPE_DEF="$type_defs/arkagent-napi"
# The generated files from this very build's type definitions (BND-2: the classes'
# declarations are napi-derive's, with the Rust docs).
node scripts/gen-dts.js --check
node scripts/dts-signatures.js "$ARKAGENT_NAPI_TYPE_DEF"

so="$target_dir/$profile/libarkagent_napi.so"
[[ -f "$so" ]] || { echo "test-js: $so was not built" >&2; exit 1; }
# Node loads native modules by the .node extension; copy rather than link so a rebuild
# while tests run cannot swap the file under them.
cp "$so" "$target_dir/arkagent.node"

export ARKAGENT_NODE="$target_dir/arkagent.node"
# MCP-4: the official TypeScript SDK's server and the protocol's conformance suite
# (tests/mcp, from its lock file), which tests/js/mcp*.test.js run against.
if [[ ! -d tests/mcp/node_modules/@modelcontextprotocol/sdk ]]; then
  (cd tests/mcp && npm ci --silent --no-audit --no-fund)
fi
# IMG-9: the pure-JS JPEG codec (jpeg-js) tests/js/img_9.test.js prepares photos with.
if [[ ! -d tests/images/node_modules/jpeg-js ]]; then
  (cd tests/images && npm ci --silent --no-audit --no-fund)
fi
node --test tests/js/
