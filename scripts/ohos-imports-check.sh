#!/usr/bin/env bash
# Import check of an OpenHarmony shared object against what a device exports (SPEC OHOS-4).
#
#   scripts/ohos-imports-check.sh --libc LIBC_SO [--nm NM] [--readelf READELF] LIB.so
#
# Every undefined dynamic symbol of LIB.so must be
#   - exported by LIBC_SO (the NDK's libc.so: OpenHarmony's musl; in the fake NDK of
#     scripts/ohos-link-check.sh, Debian's arm64 musl), or
#   - a name in one of the NDK's published symbol lists under scripts/ohos-ndk-symbols/
#     (libace_napi.txt -> libace_napi.z.so, libhilog_ndk.txt -> libhilog_ndk.z.so; taken
#     from openharmony/interface_sdk_c at the tag named in each file's header) whose
#     library is NEEDED by LIB.so, introduced at or below OHOS_MIN_API (default 12, the
#     HAR's minimum), or
#   - one of the weak references every toolchain emits (__cxa_finalize,
#     __register_frame_info, __deregister_frame_info, _ITM_*, __gmon_start__).
# Every NEEDED entry must be libc.so or a library with a symbol list.
# Statically linked code (Rust std, libunwind, compiler-rt) has no undefined imports of its
# own left, so it needs no list.
#
# Prints one line per offending symbol / library and exits 1 when there is any; prints a
# summary and exits 0 otherwise; exits 2 on bad usage or a missing tool.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LISTS="$ROOT/scripts/ohos-ndk-symbols"
MIN_API="${OHOS_MIN_API:-12}"
NM=""
READELF=""
LIBC=""
LIB=""

usage() {
  echo "ohos-imports-check: $*" >&2
  echo "usage: $0 --libc LIBC_SO [--nm NM] [--readelf READELF] LIB.so" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --libc) LIBC=${2:-}; shift 2 || usage "--libc needs a file" ;;
    --nm) NM=${2:-}; shift 2 || usage "--nm needs a tool" ;;
    --readelf) READELF=${2:-}; shift 2 || usage "--readelf needs a tool" ;;
    -*) usage "unknown option $1" ;;
    *) [ -z "$LIB" ] || usage "one library at a time"; LIB=$1; shift ;;
  esac
done
[ -n "$LIB" ] || usage "no library given"
[ -f "$LIB" ] || usage "no such file: $LIB"
[ -n "$LIBC" ] && [ -f "$LIBC" ] || usage "--libc must name the NDK's libc.so (got '${LIBC}')"
first_tool() {
  local t
  for t in "$@"; do
    if command -v "$t" >/dev/null 2>&1; then
      command -v "$t"
      return 0
    fi
  done
  return 1
}
[ -n "$NM" ] || NM="$(first_tool llvm-nm llvm-nm-14 nm)" || usage "no llvm-nm found (pass --nm)"
[ -n "$READELF" ] || READELF="$(first_tool llvm-readelf llvm-readelf-14 readelf)" || usage "no readelf found (pass --readelf)"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# "name soname" for every name a NEEDED library may provide.
"$NM" -D --defined-only "$LIBC" | awk 'NF >= 3 { print $3, "libc.so" }' >"$tmp/allowed"
[ -s "$tmp/allowed" ] || usage "$LIBC exports no dynamic symbols: not a libc.so"
"$READELF" -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' >"$tmp/needed"
lists=0
for list in "$LISTS"/*.txt; do
  [ -f "$list" ] || continue
  soname="$(basename "$list" .txt).z.so"
  lists=$((lists + 1))
  # Only the libraries LIB.so really links: a name of an unlinked library resolves nowhere.
  grep -qxF "$soname" "$tmp/needed" || continue
  awk -v so="$soname" -v min="$MIN_API" '
    /^#/ || NF == 0 { next }
    { since = 0; for (i = 2; i <= NF; i++) if ($i ~ /^since=/) since = substr($i, 7) + 0 }
    since <= min { print $1, so }
  ' "$list" >>"$tmp/allowed"
done
[ "$lists" -gt 0 ] || usage "no symbol lists in $LISTS"

bad=0
while read -r so; do
  case "$so" in
    libc.so) ;;
    *)
      if [ ! -f "$LISTS/${so%.z.so}.txt" ]; then
        echo "ohos-imports-check: $LIB: NEEDED $so has no published symbol list in ${LISTS#"$ROOT/"}/"
        bad=$((bad + 1))
      fi
      ;;
  esac
done <"$tmp/needed"

"$NM" -D --undefined-only "$LIB" | awk '{ print $1, $2 }' >"$tmp/imports"
declare -A from=()
weak=0
while read -r kind name; do
  [ -n "$name" ] || continue
  name="${name%%@*}"
  so="$(awk -v n="$name" '$1 == n { print $2; exit }' "$tmp/allowed")"
  if [ -n "$so" ]; then
    from[$so]=$((${from[$so]:-0} + 1))
    continue
  fi
  case "$kind:$name" in
    [wv]:__cxa_finalize | [wv]:__register_frame_info | [wv]:__deregister_frame_info | \
      [wv]:_ITM_* | [wv]:__gmon_start__)
      weak=$((weak + 1))
      continue
      ;;
  esac
  echo "ohos-imports-check: $LIB imports $name ($([ "$kind" = U ] && echo strong || echo weak)): not exported by libc.so nor in the NDK symbol list of a NEEDED library (API <= $MIN_API)"
  bad=$((bad + 1))
done <"$tmp/imports"

if [ "$bad" -ne 0 ]; then
  echo "ohos-imports-check: $LIB: $bad import(s) a device does not provide"
  exit 1
fi
summary=""
for so in "${!from[@]}"; do summary="$summary, ${from[$so]} from $so"; done
echo "ohos-imports-check: $(basename "$LIB"): every import is provided (${summary#, }$([ "$weak" -eq 0 ] || echo ", $weak toolchain weak refs"); lists in ${LISTS#"$ROOT/"}/, API <= $MIN_API)"
