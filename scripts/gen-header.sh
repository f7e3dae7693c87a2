#!/usr/bin/env bash
# Regenerates include/arkagent.h from bindings/c/src/ with cbindgen (via the FFI-1 test).
set -euo pipefail
cd "$(dirname "$0")/.."
ARKAGENT_BLESS=1 cargo test --quiet --test it ffi_1_committed_header_is_current
echo "include/arkagent.h regenerated"
