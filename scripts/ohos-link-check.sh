#!/usr/bin/env bash
# Link check of the N-API module for OpenHarmony arm64 and x86_64 WITHOUT the OpenHarmony NDK
# (SPEC NAPI-5: "a link check producing an aarch64 ELF"; PERF-4: OHOS library size).
#
# What it does:
#   1. Installs (apt, as root) clang, lld, llvm, file and the arm64 musl, libunwind and
#      compiler-rt builtins, plus qemu-user-static; and the nightly toolchain with rust-src.
#   2. Builds a FAKE NDK under <target dir>/ohos-fake-ndk/: the OpenHarmony sysroot layout
#      that napi-build-ohos searches (native/sysroot/usr/lib/aarch64-linux-ohos/), filled
#      with Debian's arm64 musl, llvm-14's libunwind.a and compiler-rt builtins, stubs of
#      libace_napi.z.so and libhilog_ndk.z.so holding exactly the names of the NDK's
#      published symbol lists (scripts/ohos-ndk-symbols/*.txt, from
#      openharmony/interface_sdk_c at OpenHarmony-v5.0.0-Release = API 12; SPEC OHOS-4),
#      a `__fprintf_chk` compat lib and a clang/lld linker wrapper.
#      The x86_64 part (DevEco's PC emulator; OHOS-3) adds a second sysroot lib dir with
#      Debian's x86_64 musl and builtins, a libunwind.a compiled from rust-src's llvm
#      libunwind, stubs from the same lists (OHOS_LINK_CHECK_X86_64=0 leaves it out). The
#      fake NDK has the layout of the real one where scripts/build-ohos.sh looks
#      (native/llvm/bin/clang, llvm-ar, llvm-strip, llvm-readelf, ...), its clang mapping
#      --target=<arch>-linux-ohos to those musl wrappers, and a FAKE_NDK marker.
#   3. Builds with the command a user runs (SPEC OHOS-3), once for both ABIs:
#        OHOS_NDK_HOME=<fake NDK> OHOS_ABIS="arm64-v8a x86_64" OHOS_BUILD_STD=1
#          CARGO_TARGET_DIR=<target dir>/ohos-link scripts/build-ohos.sh
#      which builds -p arkagent-napi per ABI (nightly -Zbuild-std), runs its import check,
#      strips, and packs <target dir>/ohos-link/arkagent.har (scripts/pack-har.sh). Seeing
#      FAKE_NDK, build-ohos.sh installs the libraries under <target dir>/ohos-link/
#      ohos-fake-ndk-libs/<abi>/ instead of ohos/arkagent/libs/.
#   4. Checks: `file` says ARM aarch64 ELF shared object; NEEDED has libace_napi.z.so; a musl
#      dlopen(RTLD_NOW) under qemu-aarch64-static resolves every symbol and dlsym finds
#      napi_register_module_v1; scripts/ohos-imports-check.sh: every undefined symbol is
#      exported by libc.so or listed for a NEEDED library (OHOS-4), and the same check
#      rejects a tiny library importing napi_adjust_external_memory and OH_LOG_SetLogLevel
#      (absent at API 12), so it cannot silently pass; the same file / import / native musl
#      dlopen checks for x86_64. Prints the stripped sizes; the arm64 one must be at most
#      2,500,000 bytes (PERF-9; OHOS_MAX_SO_BYTES overrides).
#   5. Inspects the .har: module files (LICENSE, CHANGELOG.md and obfuscation.txt = the
#      consumer rules included; compatibleSdkVersion/Type), the d.ts (byte-equal to ohos/arkagent's),
#      libs/<abi>/libarkagent.so for each ABI being that ABI's N-API module, no ohosTest;
#      and that pack-har.sh refuses an empty library.
#
# This is a LINK CHECK AGAINST MUSL, NOT A DEVICE TEST: OpenHarmony's libc is a musl fork
# and the real libace_napi.z.so is replaced by stubs, so it proves the artifact links, is
# an AArch64 shared object and that its imports resolve against a musl libc plus the names
# the NDK publishes; it does not run the module in ArkTS. (libc: Debian's musl 1.2.3 stands
# in for OpenHarmony's musl fork; scripts/build-ohos.sh runs the same import check against
# the real NDK's libc.so.) Release builds for devices use the real NDK:
# scripts/build-ohos.sh.
#
# When a package or the nightly toolchain cannot be installed (no network, unknown
# package, not root), prints a SKIPPED banner to stderr and exits 0 so the rest of the
# suite goes on. Exits non-zero when the build or a check fails.
# Uses the workspace's target dir (target/, or $CARGO_TARGET_DIR when set) as the base.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="aarch64-unknown-linux-ohos"
OHOS_TRIPLE="aarch64-linux-ohos"     # the NDK's sysroot lib dir name
MUSL_TRIPLE="aarch64-linux-musl"      # what clang actually targets here
CRATE="arkagent-napi"
ARTIFACT="libarkagent_napi.so"
LLVM_MAJOR=14
PACKAGES=(clang lld llvm file "musl-dev:arm64" "libunwind-$LLVM_MAJOR-dev:arm64"
  "libclang-rt-$LLVM_MAJOR-dev:arm64" qemu-user-static)
# The x86_64 part (section 6) also needs the amd64 musl and compiler-rt builtins.
if [ "${OHOS_LINK_CHECK_X86_64:-1}" = 1 ]; then
  PACKAGES+=("musl-dev:amd64" "libclang-rt-$LLVM_MAJOR-dev:amd64")
fi
started=$SECONDS

say() { echo "ohos-link-check: $*" >&2; }
die() {
  echo "ohos-link-check: error: $*" >&2
  exit 1
}
skipped() {
  {
    echo "################################################################################"
    echo "# SKIPPED: ohos-link-check ($TARGET link check of $CRATE against musl)"
    echo "# $1"
    echo "################################################################################"
  } >&2
  exit 0
}

log="$(mktemp)"
stage="$(mktemp -d)"
trap 'rm -rf "$log" "$stage"' EXIT

# --- 1. System packages ---------------------------------------------------------------
as_root() {
  if [ "$(id -u)" = 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    return 1
  fi
}
is_installed() { [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]; }

command -v dpkg-query >/dev/null 2>&1 || skipped "not a Debian-based system (no dpkg); the recipe needs Debian's arm64 musl packages"
missing=()
for p in "${PACKAGES[@]}"; do
  is_installed "$p" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  if [ "$(id -u)" != 0 ] && ! { command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; }; then
    skipped "missing packages (${missing[*]}) and not root (no passwordless sudo) to install them"
  fi
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    as_root dpkg --add-architecture arm64 || skipped "'dpkg --add-architecture arm64' failed"
  fi
  apt_opts=(-o DPkg::Lock::Timeout=300 -o Acquire::Retries=2)
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" update >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    skipped "'apt-get update' failed (output above)"
  fi
  if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install -y \
    --no-install-recommends "${missing[@]}" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    skipped "'apt-get install ${missing[*]}' failed (output above)"
  fi
fi

find_tool() {
  local t
  for t in "$@"; do
    if command -v "$t" >/dev/null 2>&1; then
      command -v "$t"
      return 0
    fi
  done
  return 1
}
CLANG="$(find_tool "clang-$LLVM_MAJOR" clang)" || skipped "clang not found after installing it"
STRIP="$(find_tool llvm-strip "llvm-strip-$LLVM_MAJOR")" || skipped "llvm-strip not found after installing llvm"
READELF="$(find_tool llvm-readelf "llvm-readelf-$LLVM_MAJOR" readelf)" || skipped "no readelf found"
QEMU="$(find_tool qemu-aarch64-static qemu-aarch64)" || skipped "qemu-aarch64-static not found after installing qemu-user-static"
command -v file >/dev/null 2>&1 || skipped "file not found after installing it"
command -v ld.lld >/dev/null 2>&1 || skipped "ld.lld not found after installing lld"

MUSL_LIB="/usr/lib/$MUSL_TRIPLE"
MUSL_INC="/usr/include/$MUSL_TRIPLE"
UNWIND_A="/usr/lib/llvm-$LLVM_MAJOR/lib/libunwind.a"
BUILTINS_A=""
for f in /usr/lib/llvm-"$LLVM_MAJOR"/lib/clang/*/lib/linux/libclang_rt.builtins-aarch64.a; do
  [ -f "$f" ] && BUILTINS_A="$f"
done
for f in "$MUSL_LIB/libc.so" "$MUSL_LIB/crti.o" "$MUSL_INC/stdio.h" "$UNWIND_A" "$BUILTINS_A"; do
  { [ -n "$f" ] && [ -f "$f" ]; } || skipped "expected file ${f:-libclang_rt.builtins-aarch64.a} is missing after installing ${PACKAGES[*]}"
done

# --- 2. Rust: nightly + rust-src (as scripts/ohos-check.sh) ---------------------------
# shellcheck source=scripts/nightly-rust-src.sh
source "$ROOT/scripts/nightly-rust-src.sh"

# --- 3. The fake NDK ------------------------------------------------------------------
cd "$ROOT"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
NDK="$TARGET_DIR/ohos-fake-ndk"
SYSROOT="$NDK/native/sysroot"
L="$SYSROOT/usr/lib/$OHOS_TRIPLE"
WORK="$NDK/work"
BUILD_DIR="$TARGET_DIR/ohos-link"
mkdir -p "$L" "$WORK" "$NDK/bin" "$BUILD_DIR"

# One run at a time per target dir (two concurrent runs would rewrite the same files).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$NDK/.lock"
  flock 9
fi

# Replace $2 by $1 only when the content differs, so unchanged inputs keep their mtimes.
put() {
  if ! cmp -s "$1" "$2"; then
    cp -f "$1" "$2.tmp"
    mv -f "$2.tmp" "$2"
  fi
}

cat >"$NDK/README" <<'EOF'
FAKE OpenHarmony NDK generated by scripts/ohos-link-check.sh, for a link check only:
Debian's arm64 musl, llvm's libunwind/compiler-rt and a STUB libace_napi.z.so.
Never ship anything linked against it; release builds use the real NDK (scripts/build-ohos.sh).
EOF

# Headers for the clang wrappers (the NDK's sysroot has usr/include).
if [ "$(readlink "$SYSROOT/usr/include" 2>/dev/null)" != "$MUSL_INC" ]; then
  rm -rf "$SYSROOT/usr/include"
  ln -s "$MUSL_INC" "$SYSROOT/usr/include"
fi
# musl's startup files and libc (libm, libpthread, ... are empty archives in musl).
for f in crti.o crtn.o Scrt1.o crt1.o libc.so libm.a libpthread.a libdl.a librt.a libutil.a; do
  put "$MUSL_LIB/$f" "$L/$f"
done
put "$UNWIND_A" "$L/libunwind.a"
put "$BUILTINS_A" "$L/libclang_rt.builtins-aarch64.a"

# Linker wrapper (the note's recipe) and a C compiler wrapper for C dependencies.
# --gcc-toolchain points at an empty dir: otherwise clang picks up an installed
# gcc-aarch64-linux-gnu cross toolchain (glibc headers, libgcc_s) and mixes it into the
# musl build.
NO_GCC="$NDK/no-gcc-toolchain"
mkdir -p "$NO_GCC"
LINKER="$NDK/bin/$TARGET-link"
CC_WRAP="$NDK/bin/$TARGET-clang"
cat >"$stage/link" <<EOF
#!/bin/sh
# Generated by scripts/ohos-link-check.sh. FAKE NDK linker: aarch64 musl + lld (link check only).
exec "$CLANG" --target=$MUSL_TRIPLE --sysroot="$SYSROOT" --gcc-toolchain="$NO_GCC" \\
  -fuse-ld=lld -rtlib=compiler-rt \\
  -B"$L" -L"$L" "\$@" "$L/libfprintf_chk_compat.a" "$L/libclang_rt.builtins-aarch64.a"
EOF
cat >"$stage/cc" <<EOF
#!/bin/sh
# Generated by scripts/ohos-link-check.sh. FAKE NDK C compiler: aarch64 musl (link check only).
exec "$CLANG" --target=$MUSL_TRIPLE --sysroot="$SYSROOT" --gcc-toolchain="$NO_GCC" -D__MUSL__ "\$@"
EOF
chmod +x "$stage/link" "$stage/cc"
put "$stage/link" "$LINKER"
put "$stage/cc" "$CC_WRAP"
chmod +x "$LINKER" "$CC_WRAP"

# Compile $1 (C source, staged) into $2 with the remaining args (the compiler command),
# only when the source or the command changed or the output is missing.
build_c() {
  local src=$1 out=$2 kept
  shift 2
  kept="$WORK/$(basename "$(dirname "$out")")-$(basename "$out").c"
  { cat "$src"; echo "/* built with: $* */"; } >"$src.key"
  if [ -f "$out" ] && cmp -s "$src.key" "$kept"; then
    return 0
  fi
  "$@" -o "$out.tmp" "$src" || die "compiling $(basename "$out") failed"
  mv -f "$out.tmp" "$out"
  cp -f "$src.key" "$kept"
}
CC_ARGS=("$CC_WRAP" -O2 -fPIC)

# `__fprintf_chk`: Debian's arm64 libunwind.a was built with glibc's _FORTIFY_SOURCE and
# calls it; musl has no such symbol. Hidden, so the library does not export it.
cat >"$stage/compat.c" <<'EOF'
#include <stdarg.h>
#include <stdio.h>
__attribute__((visibility("hidden"))) int __fprintf_chk(FILE *f, int flag, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = vfprintf(f, fmt, ap);
  va_end(ap);
  (void)flag;
  return r;
}
EOF
if ! { [ -f "$L/libfprintf_chk_compat.a" ] && cmp -s "$stage/compat.c" "$WORK/compat.c"; }; then
  "${CC_ARGS[@]}" -c -o "$WORK/compat.o" "$stage/compat.c" || die "compiling the __fprintf_chk compat lib failed"
  rm -f "$L/libfprintf_chk_compat.a.tmp"
  ar_tool="$(find_tool llvm-ar "llvm-ar-$LLVM_MAJOR" ar)" || die "no archiver (llvm-ar) found"
  "$ar_tool" rcs "$L/libfprintf_chk_compat.a.tmp" "$WORK/compat.o"
  mv -f "$L/libfprintf_chk_compat.a.tmp" "$L/libfprintf_chk_compat.a"
  cp -f "$stage/compat.c" "$WORK/compat.c"
fi

# Stubs of the OpenHarmony system libraries, built from the NDK's published symbol lists
# (SPEC OHOS-4): scripts/ohos-ndk-symbols/<lib>.txt -> <lib>.z.so, one empty function per
# listed name (libace_napi.z.so, libhilog_ndk.z.so). scripts/ohos-imports-check.sh then
# fails on any import outside those lists, so a symbol the device lacks cannot link quietly.
SYMBOL_LISTS="$ROOT/scripts/ohos-ndk-symbols"
stubs_made=""
for list in "$SYMBOL_LISTS"/*.txt; do
  [ -f "$list" ] || die "no symbol lists in $SYMBOL_LISTS"
  lib="$(basename "$list" .txt)"
  awk '!/^#/ && NF { print $1 }' "$list" | sort -u >"$stage/$lib.names"
  [ -s "$stage/$lib.names" ] || die "$list lists no names"
  {
    echo "/* Generated by scripts/ohos-link-check.sh from ${list#"$ROOT/"} (the NDK's published"
    echo "   symbol list). STUB of OpenHarmony's $lib.z.so for a link check: every function"
    echo "   returns 9 (napi_generic_failure) and does nothing. */"
    while read -r name; do
      echo "int $name(void) { return 9; }"
    done <"$stage/$lib.names"
  } >"$stage/$lib.c"
  build_c "$stage/$lib.c" "$L/$lib.z.so" \
    "${CC_ARGS[@]}" -nostdlib -shared -fuse-ld=lld "-Wl,-soname,$lib.z.so" -w
  n=$(wc -l <"$stage/$lib.names" | tr -d ' ')
  stubs_made="${stubs_made:+$stubs_made, }$lib.z.so ($n functions)"
done

# Every OpenHarmony system library the workspace's Rust code links with
# `#[link(name = "...")]` (e.g. hilog_ndk.z for src/hilog.rs) needs a published symbol list.
{ grep -rhoE --include='*.rs' --exclude-dir=target --exclude-dir=node_modules --exclude-dir=.git \
  '#\[link\(name = "[^"]+"' "$ROOT" 2>/dev/null || true; } | sed 's/.*name = "//; s/"$//' | sort -u |
  while read -r lib; do
    case "$lib" in c | m | dl | pthread | rt | util | unwind) continue ;; esac
    [ -f "$SYMBOL_LISTS/lib${lib%.z}.txt" ] ||
      die "#[link(name = \"$lib\")] in the workspace but no published symbol list ${SYMBOL_LISTS#"$ROOT/"}/lib${lib%.z}.txt"
  done

# The dlopen probe: a musl executable run under qemu.
cat >"$stage/dlopen_probe.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: dlopen_probe LIB\n"); return 2; }
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { printf("dlopen(RTLD_NOW) failed: %s\n", dlerror()); return 1; }
  void *f = dlsym(h, "napi_register_module_v1");
  printf("dlopen(RTLD_NOW) ok; napi_register_module_v1 %s\n", f ? "found" : "MISSING");
  return f ? 0 : 1;
}
EOF
PROBE="$WORK/dlopen_probe"
# -unwindlib=none: clang would otherwise add -lgcc_s (absent: musl, no libgcc); rustc
# passes -nodefaultlibs and links libunwind.a itself, so only this C program needs it.
build_c "$stage/dlopen_probe.c" "$PROBE" "$LINKER" -O2 -unwindlib=none

# --- 3b. x86_64 (DevEco's emulator on a PC) in the fake NDK ------------------------------
# SPEC OHOS-3: arm64-v8a and x86_64. A second fake sysroot dir
# (native/sysroot/usr/lib/x86_64-linux-ohos) with Debian's x86_64 musl and compiler-rt
# builtins, a libunwind.a compiled from the llvm libunwind sources that rust-src ships
# (Debian's libunwind-14-dev:amd64 cannot be installed next to :arm64, both own
# /usr/lib/llvm-14/lib/libunwind.a), and stubs from the same symbol lists. The library is
# dlopen'ed natively by musl's loader. OHOS_LINK_CHECK_X86_64=0 leaves x86_64 out.
X64_TARGET="x86_64-unknown-linux-ohos"
ABIS="arm64-v8a"
if [ "${OHOS_LINK_CHECK_X86_64:-1}" = 1 ]; then
  ABIS="arm64-v8a x86_64"
  X64_MUSL="x86_64-linux-musl"
  L64="$SYSROOT/usr/lib/x86_64-linux-ohos"
  MUSL64_LIB="/usr/lib/$X64_MUSL"
  MUSL64_INC="/usr/include/$X64_MUSL"
  BUILTINS64_A="$(dirname "$BUILTINS_A")/libclang_rt.builtins-x86_64.a"
  RESOURCE_INC="$("$CLANG" -print-resource-dir)/include"
  UNWIND_SRC="$(rustc +nightly --print sysroot)/lib/rustlib/src/rust/src/llvm-project/libunwind"
  for f in "$MUSL64_LIB/libc.so" "$MUSL64_INC/stdio.h" "$BUILTINS64_A" "$UNWIND_SRC/src/libunwind.cpp"; do
    [ -f "$f" ] || die "x86_64 link check: $f is missing (packages: ${PACKAGES[*]}; rust-src of nightly)"
  done
  mkdir -p "$L64" "$WORK/unwind-x86_64"
  for f in crti.o crtn.o Scrt1.o crt1.o libc.so libm.a libpthread.a libdl.a librt.a libutil.a; do
    put "$MUSL64_LIB/$f" "$L64/$f"
  done
  put "$BUILTINS64_A" "$L64/libclang_rt.builtins-x86_64.a"
  LINKER64="$NDK/bin/$X64_TARGET-link"
  CC64="$NDK/bin/$X64_TARGET-clang"
  cat >"$stage/link64" <<EOF
#!/bin/sh
# Generated by scripts/ohos-link-check.sh. FAKE NDK linker: x86_64 musl + lld (link check only).
exec "$CLANG" --target=$X64_MUSL --sysroot="$SYSROOT" --gcc-toolchain="$NO_GCC" \\
  -fuse-ld=lld -rtlib=compiler-rt -B"$L64" -L"$L64" "\$@" "$L64/libclang_rt.builtins-x86_64.a"
EOF
  cat >"$stage/cc64" <<EOF
#!/bin/sh
# Generated by scripts/ohos-link-check.sh. FAKE NDK C compiler: x86_64 musl (link check only).
exec "$CLANG" --target=$X64_MUSL --sysroot="$SYSROOT" --gcc-toolchain="$NO_GCC" -nostdinc \\
  -isystem "$RESOURCE_INC" -isystem "$MUSL64_INC" -D__MUSL__ "\$@"
EOF
  put "$stage/link64" "$LINKER64"
  put "$stage/cc64" "$CC64"
  chmod +x "$LINKER64" "$CC64"

  # libunwind.a from rust-src's llvm libunwind (what Rust's own ohos std links).
  unwind_key="$(rustc +nightly --version) $CLANG $X64_MUSL"
  if ! { [ -f "$L64/libunwind.a" ] && [ "$(cat "$WORK/unwind-x86_64/key" 2>/dev/null)" = "$unwind_key" ]; }; then
    rm -f "$WORK/unwind-x86_64/"*.o
    for src in libunwind.cpp UnwindLevel1.c UnwindLevel1-gcc-ext.c Unwind-sjlj.c \
      UnwindRegistersRestore.S UnwindRegistersSave.S; do
      case "$src" in
        *.cpp) lang=(-std=c++17 -nostdinc++ -fno-exceptions -fno-rtti) ;;
        *.c) lang=(-std=c99) ;;
        *) lang=() ;;
      esac
      "$CC64" "${lang[@]}" -O2 -fPIC -funwind-tables -fvisibility=hidden -D_LIBUNWIND_IS_NATIVE_ONLY \
        -DNDEBUG -I"$UNWIND_SRC/include" -c "$UNWIND_SRC/src/$src" -o "$WORK/unwind-x86_64/$src.o" ||
        die "compiling llvm libunwind ($src) for x86_64 failed"
    done
    rm -f "$L64/libunwind.a.tmp"
    "$(find_tool llvm-ar "llvm-ar-$LLVM_MAJOR" ar)" rcs "$L64/libunwind.a.tmp" "$WORK/unwind-x86_64/"*.o
    mv -f "$L64/libunwind.a.tmp" "$L64/libunwind.a"
    echo "$unwind_key" >"$WORK/unwind-x86_64/key"
  fi

  stubs64=""
  for list in "$SYMBOL_LISTS"/*.txt; do
    lib="$(basename "$list" .txt)"
    cp "$stage/$lib.c" "$stage/$lib.x86_64.c"
    build_c "$stage/$lib.x86_64.c" "$L64/$lib.z.so" \
      "$CC64" -O2 -fPIC -nostdlib -shared -fuse-ld=lld "-Wl,-soname,$lib.z.so" -w
    stubs64="${stubs64:+$stubs64, }$lib.z.so"
  done
  build_c "$stage/dlopen_probe.c" "$WORK/dlopen_probe_x86_64" "$LINKER64" -O2 -unwindlib=none
  stubs_made="$stubs_made; x86_64: $stubs64"
else
  say "x86_64 left out (OHOS_LINK_CHECK_X86_64=${OHOS_LINK_CHECK_X86_64})"
fi

# --- 3c. The NDK layout scripts/build-ohos.sh expects ------------------------------------
# native/llvm/bin/clang (+ clang++) and the llvm tools, so the fake NDK can stand behind
# OHOS_NDK_HOME. build-ohos.sh calls `clang --target=<arch>-linux-ohos --sysroot=... ARGS`
# (its wrappers in <target dir>/ohos-toolchain/); this clang maps that to the musl wrappers
# above: a compile (-c/-S/-E) to <triple>-clang, anything else (rustc's link) to
# <triple>-link. The FAKE_NDK marker makes build-ohos.sh keep the result out of
# ohos/arkagent/libs/ (a musl-linked library must never reach a real HAR).
LLVM_BIN="$NDK/native/llvm/bin"
mkdir -p "$LLVM_BIN"
cat >"$stage/fake-clang" <<EOF
#!/bin/sh
# Generated by scripts/ohos-link-check.sh. FAKE NDK clang: --target=<arch>-linux-ohos is
# mapped to the musl wrappers in $NDK/bin (link check only).
target=
mode=link
for a in "\$@"; do
  case "\$a" in
    --target=aarch64*ohos*) target=$TARGET ;;
    --target=x86_64*ohos*) target=$X64_TARGET ;;
    --target=*) echo "fake NDK clang: unsupported \$a" >&2; exit 1 ;;
    -c | -S | -E | -M | -MM) mode=cc ;;
  esac
done
[ -n "\$target" ] || { echo "fake NDK clang: no --target=<arch>-linux-ohos" >&2; exit 1; }
for a in "\$@"; do
  shift
  case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac
done
if [ "\$mode" = cc ]; then exec "$NDK/bin/\$target-clang" "\$@"; fi
exec "$NDK/bin/\$target-link" "\$@"
EOF
put "$stage/fake-clang" "$LLVM_BIN/clang"
put "$stage/fake-clang" "$LLVM_BIN/clang++"
chmod +x "$LLVM_BIN/clang" "$LLVM_BIN/clang++"
for tool in llvm-ar llvm-ranlib llvm-strip llvm-nm llvm-readelf; do
  real="$(find_tool "$tool" "$tool-$LLVM_MAJOR")" || die "$tool not found after installing llvm"
  ln -sfn "$real" "$LLVM_BIN/$tool"
done
echo "scripts/ohos-link-check.sh" >"$NDK/FAKE_NDK"

# --- 4. Build: scripts/build-ohos.sh, the command a user runs ------------------------------
# OHOS_BUILD_STD=1 (build-ohos.sh's default, spelled out): std built with nightly, as a
# user's build does; rustup has no prebuilt std for the ohos targets here (download 404s).
say "OHOS_NDK_HOME=${NDK#"$ROOT/"} OHOS_ABIS=\"$ABIS\" scripts/build-ohos.sh" \
  "(CARGO_TARGET_DIR=${BUILD_DIR#"$ROOT/"})"
HAR="$BUILD_DIR/arkagent.har"
build_started=$SECONDS
if ! CARGO_TARGET_DIR="$BUILD_DIR" OHOS_NDK_HOME="$NDK" OHOS_ABIS="$ABIS" OHOS_BUILD_STD=1 \
  OHOS_HAR_OUT="$HAR" bash "$ROOT/scripts/build-ohos.sh"; then
  die "scripts/build-ohos.sh failed against the fake NDK"
fi
say "build-ohos.sh: $((SECONDS - build_started)) s"
SO="$BUILD_DIR/$TARGET/${OHOS_PROFILE:-ohos}/$ARTIFACT"
INSTALLED="$BUILD_DIR/ohos-fake-ndk-libs"
[ -f "$SO" ] || die "the build produced no $SO"

# --- 5. Checks ------------------------------------------------------------------------
passed=0
failed=0
check() {
  local name=$1 ok=$2 detail=$3
  if [ "$ok" = 1 ]; then
    passed=$((passed + 1))
    echo "ohos-link-check: ok    $name: $detail"
  else
    failed=$((failed + 1))
    echo "ohos-link-check: FAIL  $name: $detail"
  fi
}

desc="$(file -b "$SO")"
ok=0
grep -q 'ELF 64-bit LSB shared object, ARM aarch64' <<<"$desc" && ok=1
check "file: ARM aarch64 ELF shared object" "$ok" "$desc"

needed="$("$READELF" -d "$SO" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
ok=0
grep -qw 'libace_napi\.z\.so' <<<"$needed" && ok=1
check "readelf -d: NEEDED libace_napi.z.so" "$ok" "NEEDED: ${needed% }"

probe_out="$(LD_LIBRARY_PATH="$L" "$QEMU" "$PROBE" "$SO" 2>&1)" && ok=1 || ok=0
check "musl dlopen(RTLD_NOW) + dlsym(napi_register_module_v1) under $(basename "$QEMU")" "$ok" \
  "$(tr '\n' ' ' <<<"$probe_out" | sed 's/ $//')"

# OHOS-4: nothing imported that a device (API 12) does not export (build-ohos.sh ran the
# same check; repeated here so its result is listed).
NM="$(find_tool llvm-nm "llvm-nm-$LLVM_MAJOR")" || die "llvm-nm not found after installing llvm"
IMPORTS_CHECK=(bash "$ROOT/scripts/ohos-imports-check.sh" --libc "$L/libc.so" --nm "$NM" --readelf "$READELF")
imports_out="$("${IMPORTS_CHECK[@]}" "$SO" 2>&1)" && ok=1 || ok=0
check "every import in libc.so or the NDK symbol lists (scripts/ohos-ndk-symbols)" "$ok" \
  "$(tr '\n' ' ' <<<"$imports_out" | sed 's/ $//')"

# Self-check of that check: a library importing names the lists lack (one napi-sys-ohos
# declares but libace_napi.z.so does not export at API 12, one hilog name of API 21) must be
# rejected with exactly those names, while the listed names it also imports pass.
cat >"$stage/not_in_list.c" <<'EOF'
int napi_module_register(void);
int napi_adjust_external_memory(void);
int OH_LOG_Print(void);
int OH_LOG_SetLogLevel(void);
int probe(void) {
  return napi_module_register() + napi_adjust_external_memory() + OH_LOG_Print() + OH_LOG_SetLogLevel();
}
EOF
build_c "$stage/not_in_list.c" "$WORK/not_in_list.so" "$LINKER" -O2 -fPIC -shared -nostdlib \
  -L"$L" -lace_napi.z -lhilog_ndk.z
neg_rc=0
neg_out="$("${IMPORTS_CHECK[@]}" "$WORK/not_in_list.so" 2>&1)" || neg_rc=$?
ok=0
if [ "$neg_rc" = 1 ] && grep -q 'imports napi_adjust_external_memory ' <<<"$neg_out" &&
  grep -q 'imports OH_LOG_SetLogLevel ' <<<"$neg_out" &&
  ! grep -qE 'imports (napi_module_register|OH_LOG_Print) ' <<<"$neg_out"; then
  ok=1
fi
check "self-check: imports outside the lists are rejected" "$ok" \
  "exit $neg_rc: $(grep -oE 'imports [A-Za-z0-9_]+' <<<"$neg_out" | tr '\n' ' ' | sed 's/ $//')"

# build-ohos.sh kept the fake-NDK libraries out of the source tree.
ok=1
for abi in $ABIS; do
  [ -s "$INSTALLED/$abi/libarkagent.so" ] || ok=0
  if [ -e "$ROOT/ohos/arkagent/libs/$abi/libarkagent.so" ] &&
    cmp -s "$ROOT/ohos/arkagent/libs/$abi/libarkagent.so" "$INSTALLED/$abi/libarkagent.so"; then
    ok=0
  fi
done
check "build-ohos.sh installed the fake-NDK libraries under ${INSTALLED#"$ROOT/"}, not ohos/arkagent/libs" "$ok" "$ABIS"

# PERF-4: size of the library as installed (stripped by build-ohos.sh).
echo "ohos-link-check: built ${SO#"$ROOT/"} ($(wc -c <"$SO" | tr -d ' ') bytes), installed as libarkagent.so"
echo "ohos-link-check: libarkagent.so ($OHOS_TRIPLE, ${OHOS_PROFILE:-ohos} profile, stripped): $(wc -c <"$INSTALLED/arm64-v8a/libarkagent.so" | tr -d ' ') bytes"
# PERF-9: the arm64 library stays within 2.5 MB stripped (OHOS_MAX_SO_BYTES overrides).
max_so=${OHOS_MAX_SO_BYTES:-2500000}
so_bytes=$(wc -c <"$INSTALLED/arm64-v8a/libarkagent.so" | tr -d ' ')
check "PERF-9: arm64 libarkagent.so stripped <= $max_so bytes" "$([ "$so_bytes" -le "$max_so" ] && echo 1 || echo 0)" \
  "$so_bytes bytes ($((max_so - so_bytes)) to spare)"
# PERF-9: build-ohos.sh builds std without its backtrace symbolizer (README, "Building for
# HarmonyOS"): the DWARF section names only the symbolizer (gimli) carries are absent.
symbolizer=0
grep -qa 'debug_str_offsets.dwo' "$INSTALLED/arm64-v8a/libarkagent.so" && symbolizer=1
check "PERF-9: arm64 libarkagent.so has no backtrace symbolizer (std built without it)" "$((1 - symbolizer))" \
  "$([ "$symbolizer" = 0 ] && echo "no .debug_*.dwo section names" || echo "gimli's DWARF section names found")"

if [ "${OHOS_LINK_CHECK_X86_64:-1}" = 1 ]; then
  SO_X64_BUILT="$BUILD_DIR/$X64_TARGET/${OHOS_PROFILE:-ohos}/$ARTIFACT"
  [ -f "$SO_X64_BUILT" ] || die "the build produced no $SO_X64_BUILT"
  desc="$(file -b "$SO_X64_BUILT")"
  ok=0
  grep -q 'ELF 64-bit LSB shared object, x86-64' <<<"$desc" && ok=1
  check "x86_64: file: x86-64 ELF shared object" "$ok" "$desc"
  imports_out="$(bash "$ROOT/scripts/ohos-imports-check.sh" --libc "$L64/libc.so" --nm "$NM" \
    --readelf "$READELF" "$SO_X64_BUILT" 2>&1)" && ok=1 || ok=0
  check "x86_64: every import in libc.so or the NDK symbol lists" "$ok" "$(tr '\n' ' ' <<<"$imports_out" | sed 's/ $//')"
  probe_out="$(LD_LIBRARY_PATH="$L64" "$WORK/dlopen_probe_x86_64" "$SO_X64_BUILT" 2>&1)" && ok=1 || ok=0
  check "x86_64: musl dlopen(RTLD_NOW) + dlsym(napi_register_module_v1), native" "$ok" \
    "$(tr '\n' ' ' <<<"$probe_out" | sed 's/ $//')"
  echo "ohos-link-check: libarkagent.so (x86_64-linux-ohos, ${OHOS_PROFILE:-ohos} profile, stripped): $(wc -c <"$INSTALLED/x86_64/libarkagent.so" | tr -d ' ') bytes"
fi

# --- 6. The .har build-ohos.sh packed (scripts/pack-har.sh), inspected ---------------------
listing="$(tar -tzf "$HAR" 2>/dev/null || true)"
check "build-ohos.sh packed ${HAR#"$ROOT/"}" "$([ -n "$listing" ] && echo 1 || echo 0)" \
  "$( [ -f "$HAR" ] && echo "$(wc -c <"$HAR" | tr -d ' ') bytes" || echo 'missing')"
missing_entries=()
for entry in package/oh-package.json5 package/Index.ets package/consumer-rules.txt package/hvigorfile.ts \
  package/build-profile.json5 package/README.md package/LICENSE package/CHANGELOG.md package/obfuscation.txt \
  package/src/main/module.json5 package/src/main/ets/NetworkKitTransport.ets package/src/main/ets/ArkAgentError.ets \
  package/src/main/cpp/types/libarkagent/index.d.ts package/src/main/cpp/types/libarkagent/oh-package.json5; do
  grep -qxF "$entry" <<<"$listing" || missing_entries+=("$entry")
done
for abi in $ABIS; do
  grep -qxF "package/libs/$abi/libarkagent.so" <<<"$listing" || missing_entries+=("package/libs/$abi/libarkagent.so")
done
ok=0
if [ "${#missing_entries[@]}" -eq 0 ] && ! grep -qE '^package/(src/ohosTest|libs/.*\.gitkeep|oh_modules/|build/)' <<<"$listing"; then ok=1; fi
check ".har holds the module files, the d.ts and libs/<abi>/libarkagent.so for $ABIS (no ohosTest)" "$ok" \
  "$(grep -c . <<<"$listing") entries${missing_entries[0]:+; missing: ${missing_entries[*]}}"
# The d.ts in the .har is the committed one, byte for byte.
mkdir -p "$stage/har"
tar -xzf "$HAR" -C "$stage/har" 2>/dev/null || true
# ArkGuard reads an installed HAR's keep rules from obfuscation.txt; hvigor's SDK fields.
ok=0
cmp -s "$stage/har/package/obfuscation.txt" "$ROOT/ohos/arkagent/consumer-rules.txt" &&
  grep -q '"compatibleSdkVersion": 12,' "$stage/har/package/oh-package.json5" &&
  grep -q '"compatibleSdkType": "HarmonyOS",' "$stage/har/package/oh-package.json5" && ok=1
check ".har's obfuscation.txt is consumer-rules.txt; oh-package.json5 has compatibleSdkVersion 12 / compatibleSdkType HarmonyOS" "$ok" \
  "package/obfuscation.txt, package/oh-package.json5"
ok=0
cmp -s "$stage/har/package/src/main/cpp/types/libarkagent/index.d.ts" \
  "$ROOT/ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts" && ok=1
check ".har's index.d.ts is ohos/arkagent's" "$ok" "src/main/cpp/types/libarkagent/index.d.ts"
for abi in $ABIS; do
  packed="$stage/har/package/libs/$abi/libarkagent.so"
  case "$abi" in arm64-v8a) machine='ARM aarch64' ;; x86_64) machine='x86-64' ;; esac
  ok=0
  if [ -f "$packed" ] && cmp -s "$packed" "$INSTALLED/$abi/libarkagent.so" &&
    file -b "$packed" | grep -q "$machine" &&
    "$NM" -D --defined-only "$packed" | grep -qw napi_register_module_v1; then
    ok=1
  fi
  check ".har's libs/$abi/libarkagent.so is the $machine N-API module (napi_register_module_v1)" "$ok" \
    "$( [ -f "$packed" ] && echo "$(file -b "$packed" | cut -d, -f1-2), $(wc -c <"$packed" | tr -d ' ') bytes" || echo 'not in the .har')"
done
: >"$stage/empty.so"
neg_rc=0
bash "$ROOT/scripts/pack-har.sh" --lib "arm64-v8a=$stage/empty.so" --out "$stage/empty.har" >/dev/null 2>&1 || neg_rc=$?
ok=0
{ [ "$neg_rc" -ne 0 ] && [ ! -e "$stage/empty.har" ]; } && ok=1
check "pack-har.sh refuses a HAR whose libarkagent.so is empty" "$ok" "exit $neg_rc"

echo "ohos-link-check: (linked against Debian's musl and stubs of $stubs_made: a link check, not a device test)"
echo "ohos-link-check: $passed passed, $failed failed ($((SECONDS - started)) s)"
[ "$failed" -eq 0 ]
