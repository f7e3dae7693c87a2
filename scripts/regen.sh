#!/usr/bin/env bash
# Regenerates everything generated in this repository, from its one source each (BND-3;
# ARCHITECTURE.md, "What is generated"):
#
#   ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts   the N-API crate's ts blocks,
#       the closed-set unions and the records' interfaces (Rust enums and types, printed by
#       scripts/closed-sets)                                   scripts/gen-dts.js
#   ohos/arkagent/Index.ets (its two export lists)             scripts/gen-dts.js, from the d.ts
#   include/JSON-SHAPES.md (the records' JSON, for C)          scripts/gen-dts.js
#   ohos/arkagent/consumer-rules.txt (ArkGuard keep rules)     scripts/gen-dts.js (through
#       scripts/gen-consumer-rules.js), from the d.ts
#   include/arkagent.h (cbindgen over bindings/c/src)          scripts/gen-header.sh
#   REQUIREMENTS.md (requirement ids → the tests named after them)
#                                                              scripts/gen-requirements.py
#
#   scripts/regen.sh           rewrites them all
#   scripts/regen.sh --check   rewrites nothing; exits 1 naming each stale file
#                              (scripts/test.sh runs this: CI fails on a stale file)
#
# Needs cargo, node and python3; installs ohos-typescript (scripts/arkts-lint, `npm ci`)
# for the keep rules when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

check=0
[[ "${1:-}" == "--check" ]] && check=1

if [[ ! -d scripts/arkts-lint/node_modules/ohos-typescript ]]; then
  (cd scripts/arkts-lint && npm ci --silent --no-audit --no-fund)
fi

stale=()
if ((check)); then
  node scripts/gen-dts.js --check || stale+=("index.d.ts / Index.ets / consumer-rules.txt / include/JSON-SHAPES.md")
  cargo test --quiet --test it ffi_1_committed_header_is_current >/dev/null 2>&1 || stale+=("include/arkagent.h")
  python3 scripts/gen-requirements.py --check || stale+=("REQUIREMENTS.md")
  if ((${#stale[@]})); then
    printf 'regen: stale (run scripts/regen.sh): %s\n' "${stale[@]}" >&2
    exit 1
  fi
  echo "regen: every generated file is current"
else
  node scripts/gen-dts.js
  bash scripts/gen-header.sh
  python3 scripts/gen-requirements.py
  echo "regen: index.d.ts, Index.ets, include/JSON-SHAPES.md, consumer-rules.txt, include/arkagent.h and REQUIREMENTS.md regenerated"
fi
