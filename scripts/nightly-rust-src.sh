# Sourced by scripts/ohos-check.sh and scripts/ohos-link-check.sh: makes sure the nightly
# toolchain with rust-src is there (needed for -Zbuild-std), or calls the caller's
# `skipped "reason"` (which prints a loud SKIPPED banner and exits 0). Needs `$log`, a
# scratch file. An installed nightly is used as it is: updating it on every run would
# rebuild std and every dependency for the target from scratch.
command -v rustup >/dev/null 2>&1 || skipped "rustup not found; install Rust with rustup to run this check"
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "installing the nightly toolchain (minimal profile)" >&2
  if ! rustup toolchain install nightly --profile minimal >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    skipped "'rustup toolchain install nightly --profile minimal' failed (output above)"
  fi
fi
if ! rustup component add rust-src --toolchain nightly >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  skipped "'rustup component add rust-src --toolchain nightly' failed (output above)"
fi
