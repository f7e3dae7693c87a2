#!/usr/bin/env bash
# Release build of the N-API module for OpenHarmony with the real OpenHarmony NDK
# (SPEC NAPI-4, OHOS-3, PERF-4): builds bindings/napi (`arkagent-napi`) for each ABI,
# installs it as ohos/arkagent/libs/<abi>/libarkagent.so, where hvigor packs it into the HAR, and
# packs <target dir>/ohos-har/arkagent.har (scripts/pack-har.sh; OHOS_HAR_OUT overrides)
# for apps that install the HAR file with ohpm.
#
#   OHOS_NDK_HOME=/path/to/sdk/openharmony scripts/build-ohos.sh
#   OHOS_ABIS="arm64-v8a x86_64 armeabi-v7a" ...   (default "arm64-v8a x86_64"; x86_64 is
#                                                  DevEco's emulator on a PC)
#
# OHOS_NDK_HOME is the SDK directory that holds native/ (native/llvm/bin/clang,
# native/sysroot), e.g. <DevEco>/sdk/default/openharmony or an OpenHarmony SDK's <api>/.
# CI runs this very script against the fake NDK scripts/ohos-link-check.sh generates
# (musl + stub system libraries, marked FAKE_NDK: then the libraries go to
# <target dir>/ohos-fake-ndk-libs/<abi>/, never to ohos/arkagent/libs/).
#
# Rust std (PERF-9): by default std is built from source with nightly (-Zbuild-std, needs
# rust-src; both installed here when missing) and -Zbuild-std-features=panic-unwind: std
# optimized for size with the rest of the library (the `ohos` profile) and without std's
# backtrace symbolizer (gimli, addr2line, miniz_oxide: 156 KB of the arm64 library), which
# an app cannot use: it has no RUST_BACKTRACE and no stderr to print a backtrace to.
# OHOS_BUILD_STD=0 uses rustup's prebuilt std instead
# (`rustup target add <arch>-unknown-linux-ohos`, the active toolchain; a larger library:
# the symbolizer alone is 156 KB on arm64); without nightly + rust-src the script falls
# back to the prebuilt std and says so.
# The C compiler for C dependencies, the archiver and the linker are the NDK's clang and
# llvm tools, called through small wrappers generated in <target dir>/ohos-toolchain/.
#
# Why not `ohrs build` / `ohrs artifact` (the ohos-rs CLI, SPEC OHOS-3)? Tried 2026-11-30
# with ohrs 1.5.0 (`cargo install ohrs --locked`: 2 min 53 s here) against the fake NDK of
# scripts/ohos-link-check.sh behind OHOS_NDK_HOME (a clang wrapper in native/llvm/bin that
# maps --target=aarch64-linux-ohos to musl, plus a placeholder
# native/build/cmake/ohos.toolchain.cmake, which ohrs requires); `ohrs build --release
# --arch arm64` ran (3 min 42 s cold with RUSTUP_TOOLCHAIN=nightly and
# `-- -Zbuild-std=std,panic_abort`, since this machine's rustup has no prebuilt std for the
# *-linux-ohos targets: 404) but packed the WRONG library:
#   - it picks the package by "the first workspace member whose directory contains the
#     cwd"; its napi check (`--skip-napi-check`) defaults to on and cannot be turned off, so
#     from bindings/napi it selects the root package `arkagent` and ships the C-ABI cdylib
#     libarkagent.so (exports arkagent_*, no napi_register_module_v1, no libace_napi.z.so)
#     under exactly the name the HAR imports; `-p arkagent-napi` is refused ("not found in
#     workspace"). Using it needs the N-API crate outside the root package (or a virtual
#     workspace root): a layout change of its own.
#   - it names outputs after the cargo artifact (libarkagent_napi.so), not libarkagent.so;
#   - it regenerates index.d.ts from the #[napi] items, replacing the hand-written,
#     lint-checked ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts;
#   - `ohrs artifact` only tars package/ + dist/ into <name>.har (gzip, `package/` prefix).
# So this script stays a plain cargo build with the NDK's clang per ABI and packs the .har
# itself (scripts/pack-har.sh: the layout `ohrs artifact` writes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CRATE="arkagent-napi"
ARTIFACT="libarkagent_napi.so"
# Cargo.toml's `ohos` profile: release, optimized for size (PERF-9). OHOS_PROFILE=release
# builds with the host's release profile instead.
PROFILE="${OHOS_PROFILE:-ohos}"
read -r -a ABIS <<<"${OHOS_ABIS:-arm64-v8a x86_64}"

die() {
  echo "build-ohos: error: $*" >&2
  exit 1
}

# ohos_std_for: how std is had (nightly build-std by default; see the header).
# shellcheck source=scripts/ohos-std.sh
source "$ROOT/scripts/ohos-std.sh"

# ABI -> Rust target, NDK clang target (= the sysroot lib dir), ELF machine (readelf -h).
rust_target() {
  case "$1" in
    arm64-v8a) echo aarch64-unknown-linux-ohos ;;
    x86_64) echo x86_64-unknown-linux-ohos ;;
    armeabi-v7a) echo armv7-unknown-linux-ohos ;;
    *) die "unknown ABI '$1' in OHOS_ABIS (arm64-v8a, x86_64, armeabi-v7a)" ;;
  esac
}
clang_target() {
  case "$1" in
    arm64-v8a) echo aarch64-linux-ohos ;;
    x86_64) echo x86_64-linux-ohos ;;
    armeabi-v7a) echo arm-linux-ohos ;;
  esac
}
elf_machine() {
  case "$1" in
    arm64-v8a) echo AArch64 ;;
    x86_64) echo 'X86-64' ;;
    armeabi-v7a) echo ARM ;;
  esac
}
[ "${#ABIS[@]}" -gt 0 ] || die "OHOS_ABIS is empty"
for abi in "${ABIS[@]}"; do rust_target "$abi" >/dev/null; done

if [ -z "${OHOS_NDK_HOME:-}" ]; then
  die "OHOS_NDK_HOME is not set. Point it at the OpenHarmony SDK directory that contains
  native/llvm/bin/clang and native/sysroot (DevEco Studio: <DevEco>/sdk/default/openharmony),
  e.g.  OHOS_NDK_HOME=\$HOME/ohos-sdk/linux/12 $0
  Without the NDK, scripts/ohos-check.sh still compile-checks the crate and
  scripts/ohos-link-check.sh link-checks it against musl."
fi
NDK="$(cd "$OHOS_NDK_HOME" 2>/dev/null && pwd)" || die "OHOS_NDK_HOME=$OHOS_NDK_HOME is not a directory"
LLVM_BIN="$NDK/native/llvm/bin"
SYSROOT="$NDK/native/sysroot"
for tool in clang clang++ llvm-ar llvm-ranlib llvm-strip llvm-nm llvm-readelf; do
  [ -x "$LLVM_BIN/$tool" ] || die "$LLVM_BIN/$tool not found: OHOS_NDK_HOME must be the SDK directory holding native/"
done
for abi in "${ABIS[@]}"; do
  [ -d "$SYSROOT/usr/lib/$(clang_target "$abi")" ] ||
    die "$SYSROOT/usr/lib/$(clang_target "$abi") not found: incomplete OpenHarmony NDK (ABI $abi)"
done
command -v cargo >/dev/null 2>&1 || die "cargo not found"
command -v rustup >/dev/null 2>&1 || die "rustup not found (needed to add the OHOS targets)"

cd "$ROOT"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
export OHOS_NDK_HOME="$NDK"
WRAP_DIR="$TARGET_DIR/ohos-toolchain"
# The fake NDK of scripts/ohos-link-check.sh (musl + stub system libraries, for CI) carries
# a FAKE_NDK marker: what it links must never reach ohos/arkagent/libs/ (and from there a
# HAR hvigor packs), so its libraries go to <target dir>/ohos-fake-ndk-libs/<abi>/.
LIBS_DIR="$ROOT/ohos/arkagent/libs"
if [ -f "$NDK/FAKE_NDK" ]; then
  LIBS_DIR="$TARGET_DIR/ohos-fake-ndk-libs"
  echo "build-ohos: FAKE NDK ($NDK/FAKE_NDK): a link check, not a device build; libraries go to $LIBS_DIR" >&2
fi
mkdir -p "$WRAP_DIR"
size_of() { wc -c <"$1" | tr -d ' '; }

for abi in "${ABIS[@]}"; do
  TARGET="$(rust_target "$abi")"
  CLANG_TARGET="$(clang_target "$abi")"
  TARGET_VAR="${TARGET//-/_}"
  DEST_DIR="$LIBS_DIR/$abi"
  DEST="$DEST_DIR/libarkagent.so"

  # Compiler wrappers: clang for the OHOS target and sysroot (what the NDK's CMake
  # toolchain file sets up), used as linker and as CC/CXX for C dependencies (the cc crate
  # reads CC_<target>/AR_<target>: a crate compiling bundled C, e.g. SQLite, needs nothing
  # more; extra C flags go in CFLAGS_<target>, which the cc crate reads too).
  for pair in "clang:$TARGET-clang" "clang++:$TARGET-clang++"; do
    real="${pair%%:*}"
    wrapper="$WRAP_DIR/${pair#*:}"
    {
      echo '#!/bin/sh'
      echo "# Generated by scripts/build-ohos.sh: the OpenHarmony NDK's $real for $TARGET."
      echo "exec \"$LLVM_BIN/$real\" --target=$CLANG_TARGET --sysroot=\"$SYSROOT\" -D__MUSL__ \"\$@\""
    } >"$wrapper"
    chmod +x "$wrapper"
  done
  export "CARGO_TARGET_${TARGET_VAR^^}_LINKER=$WRAP_DIR/$TARGET-clang"
  export "CC_$TARGET_VAR=$WRAP_DIR/$TARGET-clang"
  export "CXX_$TARGET_VAR=$WRAP_DIR/$TARGET-clang++"
  export "AR_$TARGET_VAR=$LLVM_BIN/llvm-ar"
  export "RANLIB_$TARGET_VAR=$LLVM_BIN/llvm-ranlib"

  # std built from source with nightly (the default), else rustup's prebuilt std.
  ohos_std_for "$TARGET" || exit 1

  echo "build-ohos: ${cargo_cmd[*]} build ${build_std[*]} --profile $PROFILE --target $TARGET -p $CRATE" >&2
  "${cargo_cmd[@]}" build ${build_std[@]+"${build_std[@]}"} --profile "$PROFILE" --target "$TARGET" -p "$CRATE"

  built="$TARGET_DIR/$TARGET/$PROFILE/$ARTIFACT"
  [ -f "$built" ] || die "the build produced no $built"

  # Sanity: a shared object for the ABI's machine.
  header="$("$LLVM_BIN/llvm-readelf" -h "$built" 2>/dev/null || true)"
  if [ -n "$header" ] && ! grep -q "Machine:.*$(elf_machine "$abi")" <<<"$header"; then
    die "$built is not an $(elf_machine "$abi") ELF"
  fi
  needed="$("$LLVM_BIN/llvm-readelf" -d "$built" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ' || true)"

  # SPEC OHOS-4: import nothing a device at the minimum API level (12) does not export:
  # every undefined symbol must be in the NDK's libc.so or in the published symbol list of
  # a NEEDED library (scripts/ohos-ndk-symbols/). Fails the build otherwise.
  bash "$ROOT/scripts/ohos-imports-check.sh" --libc "$SYSROOT/usr/lib/$CLANG_TARGET/libc.so" \
    --nm "$LLVM_BIN/llvm-nm" --readelf "$LLVM_BIN/llvm-readelf" "$built" ||
    die "$built imports symbols a device does not provide (listed above)"

  mkdir -p "$DEST_DIR"
  "$LLVM_BIN/llvm-strip" --strip-all -o "$DEST.tmp" "$built"
  mv -f "$DEST.tmp" "$DEST"
  echo "build-ohos: built    $built ($(size_of "$built") bytes)"
  echo "build-ohos: installed ${DEST#"$ROOT/"} (stripped: $(size_of "$DEST") bytes)${needed:+; NEEDED: $needed}"
done

# The .har an app installs (`"@arkagent/arkagent": "file:<path>/arkagent.har"` in its
# oh-package.json5, then `ohpm install`): ohos/ with the libraries just built.
har_libs=()
for abi in "${ABIS[@]}"; do har_libs+=(--lib "$abi=$LIBS_DIR/$abi/libarkagent.so"); done
bash "$ROOT/scripts/pack-har.sh" "${har_libs[@]}" --out "${OHOS_HAR_OUT:-$TARGET_DIR/ohos-har/arkagent.har}"
