#!/usr/bin/env bash
# Compile check of the N-API crate for OpenHarmony (SPEC NAPI-5), without the NDK:
#
#   OHOS_NDK_HOME=/nonexistent cargo +nightly check -Zbuild-std=std,panic_abort \
#       --target aarch64-unknown-linux-ohos -p arkagent-napi
#
# `check` never links, so no NDK is needed; std is built from rust-src because rustup has
# no prebuilt std for this target everywhere. Catches everything that does not compile for
# the target (cfg(target_env = "ohos") paths, napi-ohos OHOS-only APIs).
#
# When the nightly toolchain or rust-src cannot be installed (no network to the Rust dist
# server), prints a SKIPPED banner to stderr and exits 0 so the rest of the suite goes on.
# Uses the workspace's target dir (target/, or $CARGO_TARGET_DIR when set).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="aarch64-unknown-linux-ohos"
CRATE="arkagent-napi"

skipped() {
  {
    echo "################################################################################"
    echo "# SKIPPED: ohos-check ($TARGET compile check of $CRATE)"
    echo "# $1"
    echo "################################################################################"
  } >&2
  exit 0
}

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# shellcheck source=scripts/nightly-rust-src.sh
source "$ROOT/scripts/nightly-rust-src.sh"

cd "$ROOT"
echo "ohos-check: cargo +nightly check -Zbuild-std=std,panic_abort --target $TARGET -p $CRATE" >&2
started=$SECONDS
# A bogus NDK path: `check` must not need the NDK; napi-build-ohos only reads it to link.
OHOS_NDK_HOME=/nonexistent cargo +nightly check -Zbuild-std=std,panic_abort \
  --target "$TARGET" -p "$CRATE"
echo "ohos-check: $CRATE compiles for $TARGET ($((SECONDS - started)) s)" >&2
