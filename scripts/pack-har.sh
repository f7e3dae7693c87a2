#!/usr/bin/env bash
# Packs the HAR module ohos/ with its native library into a .har file (SPEC OHOS-3, OHOS-5):
# a gzip'd tar with everything under `package/`, the layout `ohrs artifact` and ohpm use, so
# `ohpm install <file>.har` (or a `file:` dependency on it) brings it into a DevEco project.
#
#   scripts/pack-har.sh [--lib ABI=PATH]... [--out FILE]
#
#   --lib ABI=PATH  the libarkagent.so to pack as libs/<ABI>/libarkagent.so (arm64-v8a,
#                   armeabi-v7a, x86_64); without any, every ohos/arkagent/libs/<abi>/libarkagent.so
#   --out FILE      where to write the .har (default: <target dir>/ohos-har/arkagent.har)
#
# Packs Index.ets, oh-package.json5, build-profile.json5, hvigorfile.ts,
# consumer-rules.txt, README.md and src/main (not the ohosTest sources). Refuses, like
# ohos/arkagent/hvigorfile.ts, to pack a HAR without a non-empty libarkagent.so for at least one
# ABI. Prints the path and the size of the .har and of each library.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ABIS=(arm64-v8a armeabi-v7a x86_64)
MODULE_FILES=(Index.ets oh-package.json5 build-profile.json5 hvigorfile.ts consumer-rules.txt README.md)

die() {
  echo "pack-har: error: $*" >&2
  exit 1
}

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
out="$TARGET_DIR/ohos-har/arkagent.har"
declare -A libs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lib)
      spec=${2:-}
      abi=${spec%%=*}
      lib=${spec#*=}
      { [ -n "$spec" ] && [ "$abi" != "$spec" ]; } || die "--lib needs ABI=PATH"
      printf '%s\n' "${ABIS[@]}" | grep -qxF "$abi" || die "unknown ABI $abi (one of ${ABIS[*]})"
      libs[$abi]=$lib
      shift 2
      ;;
    --out)
      out=${2:-}
      [ -n "$out" ] || die "--out needs a file"
      shift 2
      ;;
    *) die "unknown argument $1 (usage: $0 [--lib ABI=PATH]... [--out FILE])" ;;
  esac
done
if [ "${#libs[@]}" -eq 0 ]; then
  for abi in "${ABIS[@]}"; do
    [ -s "$ROOT/ohos/arkagent/libs/$abi/libarkagent.so" ] && libs[$abi]="$ROOT/ohos/arkagent/libs/$abi/libarkagent.so"
  done
fi
[ "${#libs[@]}" -gt 0 ] ||
  die "no libs/<abi>/libarkagent.so to pack (build it with scripts/build-ohos.sh); a HAR without it fails at the app's first import"
for abi in "${!libs[@]}"; do
  [ -s "${libs[$abi]}" ] || die "${libs[$abi]} (for $abi) is missing or empty"
done

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
pkg="$stage/package"
mkdir -p "$pkg/src"
for f in "${MODULE_FILES[@]}"; do
  cp "$ROOT/ohos/arkagent/$f" "$pkg/$f"
done
cp -R "$ROOT/ohos/arkagent/src/main" "$pkg/src/main"
for abi in "${!libs[@]}"; do
  mkdir -p "$pkg/libs/$abi"
  cp "${libs[$abi]}" "$pkg/libs/$abi/libarkagent.so"
done

mkdir -p "$(dirname "$out")"
# Reproducible: sorted names, fixed owner and time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - package |
  gzip -n -9 >"$out.tmp"
mv -f "$out.tmp" "$out"
size_of() { wc -c <"$1" | tr -d ' '; }
echo "pack-har: ${out#"$ROOT/"} ($(size_of "$out") bytes)"
for abi in "${ABIS[@]}"; do
  [ -n "${libs[$abi]:-}" ] && echo "pack-har:   libs/$abi/libarkagent.so ($(size_of "${libs[$abi]}") bytes)"
done
exit 0
