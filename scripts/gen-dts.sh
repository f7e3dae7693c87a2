#!/usr/bin/env bash
# Regenerates ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts from the `ts` blocks of
# bindings/napi/src (see scripts/gen-dts.js). tests/js/dts_generated.test.js (run by
# scripts/test-js.sh) fails when the committed file differs; `--check` checks without writing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec node "$root/scripts/gen-dts.js" "$@"
