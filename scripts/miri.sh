#!/usr/bin/env bash
# Issue 10 item 13: Miri runs the pure-core unit tests — history invariants and the
# pairing-safe split (via the reference comparison in arkagent::fuzzing), SSE framing,
# stream assembly, and every pure fuzz seed — looking for undefined behaviour.
#   scripts/miri.sh [extra test filters...]
# Needs nightly with the miri component (installed here when missing); skipped loudly
# otherwise. Tests that allocate tens of MiB are #[cfg_attr(miri, ignore)]; exhaustive
# loops shrink under cfg(miri). Budget: about 3 minutes on a 2-core machine once the
# Miri sysroot is built.
set -euo pipefail
cd "$(dirname "$0")/.."

check_name="Miri"
# shellcheck source=scripts/nightly-or-skip.sh
source scripts/nightly-or-skip.sh
if ! rustup component list --toolchain nightly --installed 2>/dev/null | grep -q '^miri'; then
  if ! rustup component add miri rust-src --toolchain nightly; then
    echo "SKIPPED: the miri component is not available for this nightly" >&2
    exit 0
  fi
fi

# Isolation off: the seed replay reads fuzz/corpus/ from disk.
export MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-disable-isolation"
filters=(llm::sse:: llm::stream:: fuzzing::tests:: "$@")
cargo +nightly miri setup >/dev/null
# `fuzzing`: the core feature holding arkagent::fuzzing (off in the default build).
cargo +nightly miri test -p arkagent --lib --features fuzzing -- "${filters[@]}"
