# Sourced by scripts/fuzz.sh and scripts/miri.sh (after setting `check_name`): installs the
# nightly toolchain with rust-src when missing (scripts/nightly-rust-src.sh), or prints a
# loud SKIPPED banner and exits 0 when it cannot.
skipped() {
  echo "################################################################################" >&2
  echo "# SKIPPED: ${check_name:-nightly check} — $1" >&2
  echo "################################################################################" >&2
  exit 0
}
log="$(mktemp)"
# shellcheck source=scripts/nightly-rust-src.sh
source scripts/nightly-rust-src.sh
rm -f "$log"
