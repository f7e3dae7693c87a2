#!/usr/bin/env bash
# REL-3: runs every cargo-fuzz target under fuzz/ for a fixed time each.
#   scripts/fuzz.sh [seconds-per-target] [target...]     (default 20 s, every target)
# Needs the nightly toolchain (skipped loudly without it); installs cargo-fuzz when
# missing. Builds with AddressSanitizer, debug assertions and overflow checks (the
# cargo-fuzz defaults). Seeds come from fuzz/corpus/<target> (never written to); the
# growing working corpus is fuzz/work/<target> (git-ignored). A crash leaves its input in
# fuzz/artifacts/<target>/ and fails the script: fix the bug, then commit the input under
# fuzz/regressions/<target>/ so tests/it/fuzz_replay.rs replays it on stable forever.
# FUZZ_RUNS=N stops each target after N executions (or the time, whichever comes first):
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 86400 mcp_tools     (issue 42's 10⁷ per target)
# FUZZ_BUILD_FLAGS is passed to `cargo fuzz build/run` (scripts/test.sh uses `--dev`: an
# unoptimised build compiles much faster, which matters more than speed for a 5 s smoke).
# FUZZ_ARGS is passed to libFuzzer after the script's own flags (a later flag wins), e.g.
# FUZZ_ARGS=-detect_leaks=0: LeakSanitizer then checks once, when the run ends by its time
# or count (not after a Ctrl-C, which libFuzzer ends without it), instead of also after
# inputs that end with more allocations than frees (up to 1,000 checks of the whole heap:
# about a quarter of the call-sequence target's time while they last).
# ASan keeps no allocation stacks and no fake stacks here (malloc_context_size=0,
# detect_stack_use_after_return=0: 1.5x the executions of the call-sequence target; set
# ASAN_OPTIONS to override, e.g. ASAN_OPTIONS= to replay a crash with its full stacks), and
# the sequence target's stores live on tmpfs (/dev/shm, when writable: 1.35x more).
# Prints one line per target: executions, coverage (libFuzzer `cov`: instrumented edges
# reached; `ft`: features) and the corpus size libFuzzer ended with. Logs: fuzz/work/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-20}
shift || true

check_name="fuzzing"
# shellcheck source=scripts/nightly-or-skip.sh
source scripts/nightly-or-skip.sh
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  echo "installing cargo-fuzz (cargo install cargo-fuzz --locked)"
  cargo +nightly install cargo-fuzz --locked
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo +nightly fuzz list --fuzz-dir fuzz)
fi

export ASAN_OPTIONS="${ASAN_OPTIONS-malloc_context_size=0:detect_stack_use_after_return=0}"
if [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ]; then
  export TMPDIR=/dev/shm
fi

read -r -a build_flags <<<"${FUZZ_BUILD_FLAGS:-}"
read -r -a fuzz_args <<<"${FUZZ_ARGS:-}"
cargo +nightly fuzz build --fuzz-dir fuzz "${build_flags[@]}"

logdir=fuzz/work/logs
mkdir -p "$logdir"
declare -a summary=()
failed=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/work/$t"
  log="$logdir/$t.log"
  echo "==> fuzz $t for ${secs}s"
  if cargo +nightly fuzz run --fuzz-dir fuzz "${build_flags[@]}" "$t" "fuzz/work/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -print_final_stats=1 -max_len=8192 ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} "${fuzz_args[@]}" >"$log" 2>&1; then
    status=ok
  else
    status=CRASH
    failed=$((failed + 1))
    tail -n 40 "$log"
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n1)
  last=$(grep -E '^#[0-9]+' "$log" | tail -n1)
  cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  corpus=$(grep -o 'corp: [0-9]*' <<<"$last" | grep -o '[0-9]*' || true)
  summary+=("$(printf '%-16s %-5s %6ss  execs %-10s cov %-6s ft %-6s corpus %s' "$t" "$status" "$secs" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corpus:-?}")")
done

echo
echo "==> fuzz summary"
printf '  %s\n' "${summary[@]}"
[ "$failed" -eq 0 ]
