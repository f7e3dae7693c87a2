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
# consumer-rules.txt, README.md, LICENSE, CHANGELOG.md (ohpm publishing needs the last two)
# and src/main (not the ohosTest sources), as hvigor's HAR packing does:
#   - obfuscation.txt: the HAR's consumer rules. ArkGuard merges a HAR's consumerFiles into
#     obfuscation.txt in the package, and an app that installs the .har reads that file
#     (not consumer-rules.txt), so without it a release app renames the native API's names;
#   - oh-package.json5 gains "compatibleSdkVersion" (the API level of the project's
#     compatibleSdkVersion in ohos/build-profile.json5, 12), "compatibleSdkType" (its
#     runtimeOS, HarmonyOS), "obfuscated": false and "nativeComponents" (libarkagent.so with
#     the same two fields), the fields hvigor writes into a packed HAR.
# Refuses, like ohos/arkagent/hvigorfile.ts, to pack a HAR without a non-empty
# libarkagent.so for at least one ABI. Prints the path and the size of the .har and of each
# library.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ABIS=(arm64-v8a armeabi-v7a x86_64)
MODULE_FILES=(Index.ets oh-package.json5 build-profile.json5 hvigorfile.ts consumer-rules.txt README.md LICENSE CHANGELOG.md)

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
# The consumer rules as ArkGuard ships them in a HAR (the module has one consumer file).
cp "$ROOT/ohos/arkagent/consumer-rules.txt" "$pkg/obfuscation.txt"

# compatibleSdkVersion "5.0.0(12)" -> API level 12; runtimeOS -> compatibleSdkType.
profile="$ROOT/ohos/build-profile.json5"
sdk_version="$(sed -n 's/.*"compatibleSdkVersion": *"[^"]*(\([0-9][0-9]*\))".*/\1/p' "$profile" | head -n 1)"
sdk_type="$(sed -n 's/.*"runtimeOS": *"\([A-Za-z]*\)".*/\1/p' "$profile" | head -n 1)"
{ [ -n "$sdk_version" ] && [ -n "$sdk_type" ]; } ||
  die "no compatibleSdkVersion \"x.y.z(API)\" or runtimeOS in $profile"
# Append the fields before the closing brace of oh-package.json5 (JSON5: a comma after
# the last member is fine, but the member before them needs one).
awk -v ver="$sdk_version" -v type="$sdk_type" '
  { lines[NR] = $0 }
  END {
    last = NR
    while (last > 0 && lines[last] !~ /^}[[:space:]]*$/) last--
    if (last == 0) { print "pack-har: oh-package.json5 has no closing brace" > "/dev/stderr"; exit 1 }
    prev = last - 1
    while (prev > 0 && lines[prev] ~ /^[[:space:]]*$/) prev--
    for (i = 1; i < last; i++) {
      line = lines[i]
      if (i == prev && line !~ /[,{][[:space:]]*$/) line = line ","
      print line
    }
    print "  \"compatibleSdkVersion\": " ver ","
    print "  \"compatibleSdkType\": \"" type "\","
    print "  \"obfuscated\": false,"
    print "  \"nativeComponents\": ["
    print "    { \"name\": \"libarkagent.so\", \"compatibleSdkVersion\": " ver ", \"compatibleSdkType\": \"" type "\" }"
    print "  ]"
    for (i = last; i <= NR; i++) print lines[i]
  }' "$ROOT/ohos/arkagent/oh-package.json5" >"$pkg/oh-package.json5" || die "could not write the packed oh-package.json5"
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
