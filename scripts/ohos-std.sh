# Sourced by scripts/build-ohos.sh (and by tests/it/delivery.rs with a fake `rustup` on
# PATH): how the OHOS build gets Rust's std (PERF-9).
#
#   ohos_std_for <rust target>   sets cargo_cmd=(…) and build_std=(…), or returns 1
#
# Default: std built from source with nightly (-Zbuild-std; nightly and rust-src installed
# when missing) and -Zbuild-std-features=panic-unwind,optimize_for_size — std at the
# library's profile, without its backtrace symbolizer and with its size-optimized
# algorithms — and -Zlocation-detail=none: panics carry no file:line:column strings (a
# panic is still caught at the boundary and reported with its code; PERF-9, −88 KB on
# arm64 together, BENCHMARKS.md "Library size"); -Zfmt-debug=shallow: a derived `Debug`
# prints its type's or variant's name only (−12 KB; no message an app reads formats a
# derived type with `{:?}` beyond a unit variant, which prints the same — only panic and
# debug-log detail is shorter; issue 39); linked by lld with identical code folding
# (-fuse-ld=lld -Wl,--icf=all: the NDK's clang and the fake NDK both link with lld;
# identical monomorphized functions and read-only data are kept once: −20.8 KB on arm64,
# issue 42's eighth stop; `--icf=safe` found 176 bytes, rustc marks few sections foldable).
# Rust promises no distinct addresses for functions, so folding changes no behaviour.
# OHOS_BUILD_STD=0: rustup's prebuilt std for the target.
# Without nightly + rust-src the prebuilt std is the fallback, with a warning; neither:
# return 1 with the reason on stderr.

# True when nightly with rust-src is installed or can be installed now.
ohos_nightly_with_rust_src() {
  if ! rustup run nightly rustc --version >/dev/null 2>&1; then
    rustup toolchain install nightly --profile minimal >&2 || return 1
  fi
  rustup component add rust-src --toolchain nightly >&2
}

ohos_std_for() {
  local target=$1
  cargo_cmd=(cargo)
  build_std=()
  if [ "${OHOS_BUILD_STD:-1}" != "0" ] && ohos_nightly_with_rust_src; then
    echo "build-ohos: building std with nightly (-Zbuild-std, without the backtrace symbolizer)" >&2
    cargo_cmd=(cargo +nightly)
    build_std=("-Zbuild-std=std,panic_abort" "-Zbuild-std-features=panic-unwind,optimize_for_size"
      "--config" "build.rustflags=['-Zlocation-detail=none', '-Zfmt-debug=shallow', '-Clink-arg=-fuse-ld=lld', '-Clink-arg=-Wl,--icf=all']")
  elif rustup target add "$target" >/dev/null 2>&1; then
    [ "${OHOS_BUILD_STD:-1}" = "0" ] ||
      echo "build-ohos: WARNING: nightly + rust-src unavailable; using the prebuilt std (a larger library: it carries std's backtrace symbolizer)" >&2
    echo "build-ohos: using the prebuilt std of $target ($(rustc --version 2>/dev/null))" >&2
  else
    echo "build-ohos: error: no std for $target: neither nightly + rust-src (-Zbuild-std) nor \`rustup target add $target\` is available" >&2
    return 1
  fi
}
