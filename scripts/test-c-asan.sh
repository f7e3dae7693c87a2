#!/usr/bin/env bash
# REL-3 / FFI-5: runs the C programs in tests/c/ (the acceptance scenario, the parity,
# store, import, nested-delegation and usage programs, the README's C quickstart, the
# bad-input walk over every export and the runtime-correctness program) against the library
#   1. under AddressSanitizer: libarkagent_c.so (the C ABI crate, bindings/c) built with
#      nightly `-Zsanitizer=address -Zbuild-std` (std instrumented too), the C program with gcc/clang
#      `-fsanitize=address`. Needs nightly + rust-src, installed here through
#      scripts/nightly-rust-src.sh; without them it prints a loud SKIPPED and goes on.
#   2. under valgrind (memcheck, definite leaks are errors) against the ordinary debug
#      build, when valgrind is installed; SKIPPED loudly otherwise.
# Exits non-zero when any program fails or any sanitizer reports an error.
# Builds go to ${CARGO_TARGET_DIR:-target}/asan (ASan) and the usual target dir, so a
# second run is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

target_root=${CARGO_TARGET_DIR:-$PWD/target}
host=$(rustc -vV | sed -n 's/^host: //p')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
programs=(scenario bad_input correctness transport store parity store_import worker_compressor usage_count nested images sub_endings quickstart)
failures=0
cc=${CC:-cc}

banner() {
  echo "=================================================================="
  echo "  $*"
  echo "=================================================================="
}

# Runs $1 (a label) with the rest of the arguments; counts failures.
run() {
  local label=$1
  shift
  echo "--> $label"
  if "$@" >"$log" 2>&1; then
    tail -n 1 "$log"
  else
    cat "$log"
    echo "FAILED: $label"
    failures=$((failures + 1))
  fi
}

compile() { # out, lib dir, extra flags…
  local out=$1 libdir=$2 src=$3
  shift 3
  "$cc" -std=c11 -Wall -Wextra -Werror -pthread -g "$@" "$src" -I include -L "$libdir" -larkagent_c \
    "-Wl,-rpath,$libdir" -o "$out"
}

# ------------------------------------------------------------------ AddressSanitizer
asan() {
  # nightly-rust-src.sh calls `skipped` when it cannot provide nightly + rust-src; here
  # that ends only the ASan half (a subshell), not the script.
  skipped() {
    banner "SKIPPED: C tests under AddressSanitizer — $*"
    exit 0
  }
  # shellcheck source=scripts/nightly-rust-src.sh
  source scripts/nightly-rust-src.sh
  local dir="$target_root/asan"
  echo "building libarkagent_c.so with -Zsanitizer=address -Zbuild-std (target dir $dir)"
  if ! RUSTFLAGS="-Zsanitizer=address" RUSTDOCFLAGS="-Zsanitizer=address" CARGO_TARGET_DIR="$dir" \
    cargo +nightly build --quiet -p arkagent-c --lib -Zbuild-std --target "$host" >"$log" 2>&1; then
    tail -n 30 "$log"
    echo "FAILED: the ASan build"
    exit 1
  fi
  local libdir="$dir/$host/debug"
  for p in "${programs[@]}"; do
    compile "$libdir/c-asan-$p" "$libdir" "tests/c/$p.c" -fsanitize=address -fno-omit-frame-pointer
    # The library's statics (handle registry, error strings) are reachable at exit, not
    # leaks; anything LeakSanitizer does report fails the run.
    run "ASan: tests/c/$p.c" env ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=0 \
      "$libdir/c-asan-$p"
  done
  [ "$failures" -eq 0 ]
}

# ------------------------------------------------------------------ valgrind
valgrind_run() {
  if ! command -v valgrind >/dev/null 2>&1; then
    banner "SKIPPED: C tests under valgrind — valgrind is not installed"
    return 0
  fi
  cargo build --quiet -p arkagent-c --lib
  local libdir="$target_root/debug"
  for p in "${programs[@]}"; do
    compile "$libdir/c-valgrind-$p" "$libdir" "tests/c/$p.c"
    run "valgrind: tests/c/$p.c" valgrind --quiet --error-exitcode=99 --leak-check=full \
      --errors-for-leak-kinds=definite --show-leak-kinds=definite --fair-sched=yes "$libdir/c-valgrind-$p"
  done
}

# The ASan half runs in a subshell so that its `skipped` (exit 0) ends only that half.
if ! (asan); then
  failures=$((failures + 1))
fi
valgrind_run

if [ "$failures" -ne 0 ]; then
  echo "test-c-asan: $failures failure(s)"
  exit 1
fi
echo "test-c-asan: ok"
