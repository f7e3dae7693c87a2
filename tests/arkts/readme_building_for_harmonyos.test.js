// README.md's "## Building for HarmonyOS" (to the end of the file) and the list in "## The two
// commands" of what scripts/test.sh runs, sentence by sentence: each test quotes the sentence it
// holds. Sentences held elsewhere are named where they fall (tests/arkts/ohos_1.test.js,
// ohos_2_lint_real_sdk.test.js, ohos_3_packed_har.test.js, ohos_5.test.js,
// ohos_5_example_build.test.js, ohos_9_lint_sdk_layouts.test.js, tests/it/delivery.rs).
// Builds nothing: static reads of the scripts and the project, plus scripts/build-ohos.sh run
// with a bogus NDK and a PATH holding no real cargo or rustup (only stand-ins that log their
// arguments and fail), so it stops at its input checks or at the choice of std, before any
// build; and scripts/nightly-or-skip.sh sourced without rustup, to see the SKIPPED banner.
// Needs scripts/arkts-lint's node_modules (json5; scripts/lint-arkts.sh installs them).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { test } = require('node:test');

const root = path.resolve(__dirname, '../..');
const JSON5 = require(path.join(root, 'scripts/arkts-lint/node_modules/json5'));

const read = (rel) => fs.readFileSync(path.join(root, rel), 'utf8');
const read5 = (rel) => JSON5.parse(read(rel));
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** The lines of a shell script that are not comments. */
const code = (text) => text.split('\n').filter((l) => !/^\s*#/.test(l)).join('\n');
/** The leading comment block of a script (after the shebang). */
const header = (text) => {
  const lines = text.split('\n');
  const out = [];
  for (const l of lines.slice(lines[0].startsWith('#!') ? 1 : 0)) {
    if (!l.startsWith('#')) break;
    out.push(l);
  }
  return out.join('\n');
};
/** scripts/test.sh's `step "name" command...` lines. */
const steps = () => read('scripts/test.sh').split('\n').filter((l) => l.startsWith('step '));
const stepRunning = (command) => {
  const found = steps().filter((l) => l.endsWith(' ' + command));
  assert.equal(found.length, 1, `scripts/test.sh has no (or more than one) step ending with ${command}:\n${steps().join('\n')}`);
  return found[0];
};

/** Absolute path of a tool on this machine's PATH. */
function which(name) {
  for (const dir of (process.env.PATH || '').split(':')) {
    const p = path.join(dir, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      // not here
    }
  }
  throw new Error(`${name} not found on PATH`);
}
const BASH = which('bash');

/**
 * A scratch dir with: bin/ (the only PATH the scripts get: dirname, mkdir, chmod, mktemp, rm and,
 * when `fakes`, stand-in `cargo` and `rustup` that append their arguments to log.txt and fail —
 * except `rustup toolchain install`, which "succeeds", so the rust-src step is reached), and
 * an NDK skeleton under ndk/ when `ndkLibDirs` is given: native/llvm/bin tools (scripts that
 * fail) and native/sysroot/usr/lib/<dir> for each dir.
 */
function scratch({ fakes = false, ndkLibDirs = null, fakeNdkMarker = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readme-ohos-'));
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  for (const t of ['dirname', 'mkdir', 'chmod', 'mktemp', 'rm']) fs.symlinkSync(which(t), path.join(bin, t));
  const log = path.join(dir, 'log.txt');
  if (fakes) {
    fs.writeFileSync(path.join(bin, 'cargo'), `#!/bin/sh\necho "cargo $*" >>"${log}"\nexit 1\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(bin, 'rustup'),
      `#!/bin/sh\necho "rustup $*" >>"${log}"\ncase "$1 $2" in 'toolchain install') exit 0 ;; esac\nexit 1\n`, { mode: 0o755 });
  }
  const ndk = path.join(dir, 'ndk');
  if (ndkLibDirs) {
    const llvm = path.join(ndk, 'native/llvm/bin');
    fs.mkdirSync(llvm, { recursive: true });
    for (const t of ['clang', 'clang++', 'llvm-ar', 'llvm-ranlib', 'llvm-strip', 'llvm-nm', 'llvm-readelf']) {
      fs.writeFileSync(path.join(llvm, t), '#!/bin/sh\nexit 1\n', { mode: 0o755 });
    }
    for (const d of ndkLibDirs) fs.mkdirSync(path.join(ndk, 'native/sysroot/usr/lib', d), { recursive: true });
    if (fakeNdkMarker) fs.writeFileSync(path.join(ndk, 'FAKE_NDK'), 'readme_building_for_harmonyos.test.js\n');
  }
  return { dir, bin, log, ndk, target: path.join(dir, 'target') };
}

/** scripts/build-ohos.sh with exactly `env` (PATH included), at most 20 s. */
function buildOhos(env) {
  const r = spawnSync(BASH, [path.join(root, 'scripts/build-ohos.sh')], { cwd: root, env, encoding: 'utf8', timeout: 20000 });
  assert.equal(r.error, undefined, String(r.error));
  assert.equal(r.signal, null, `build-ohos.sh was killed (${r.signal}): ${r.stderr}`);
  return r;
}

/** ohos/arkagent/libs as it is: what a run must leave unchanged. */
function libsSnapshot() {
  const out = [];
  const walk = (d) => {
    if (!fs.existsSync(d)) return;
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(`${path.relative(root, p)} ${fs.statSync(p).size} ${fs.statSync(p).mtimeMs}`);
    }
  };
  walk(path.join(root, 'ohos/arkagent/libs'));
  return out.sort();
}

// ---------------------------------------------------------------------------------------------
// "## Building for HarmonyOS", first paragraph.

// "`OHOS_NDK_HOME=/path/to/ohos-sdk/linux scripts/build-ohos.sh` builds `arkagent-napi` for
// `aarch64-unknown-linux-ohos` and `x86_64-unknown-linux-ohos` (`OHOS_ABIS`, default
// `arm64-v8a x86_64`; `armeabi-v7a` is accepted, not built on CI)"
test('ohos_3_readme_build_ohos_abis_default_arm64_and_x86_64_armeabi_v7a_accepted_unknown_refused', () => {
  const script = read('scripts/build-ohos.sh');
  // The ABI -> Rust target table.
  const table = /rust_target\(\) \{\n\s*case "\$1" in\n([\s\S]*?)\n\s*\*\) die "unknown ABI/.exec(script);
  assert.ok(table, 'build-ohos.sh has no rust_target table');
  const targets = Object.fromEntries([...table[1].matchAll(/^\s*([\w-]+)\) echo ([\w-]+) ;;$/gm)].map((m) => [m[1], m[2]]));
  assert.deepEqual(targets, {
    'arm64-v8a': 'aarch64-unknown-linux-ohos',
    x86_64: 'x86_64-unknown-linux-ohos',
    'armeabi-v7a': 'armv7-unknown-linux-ohos',
  });
  assert.match(script, /^read -r -a ABIS <<<"\$\{OHOS_ABIS:-arm64-v8a x86_64\}"$/m, 'the default OHOS_ABIS');

  const before = libsSnapshot();
  const run = (s, extra) => buildOhos({ PATH: s.bin, HOME: s.dir, CARGO_TARGET_DIR: s.target, ...extra });
  const scratches = [];
  try {
    // An unknown ABI is refused first, before OHOS_NDK_HOME is even looked at.
    let s = scratch();
    scratches.push(s);
    let r = run(s, { OHOS_ABIS: 'arm64-v8a riscv64' });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /build-ohos: error: unknown ABI 'riscv64' in OHOS_ABIS \(arm64-v8a, x86_64, armeabi-v7a\)/);

    // OHOS_NDK_HOME must be the SDK directory holding native/ (llvm/bin/clang, sysroot).
    s = scratch({ ndkLibDirs: [] });
    scratches.push(s);
    fs.rmSync(path.join(s.ndk, 'native/llvm/bin/clang'));
    r = run(s, { OHOS_NDK_HOME: s.ndk });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /native\/llvm\/bin\/clang not found: OHOS_NDK_HOME must be the SDK directory holding native\//);

    // The default: the NDK must have arm64-v8a's and x86_64's sysroot, and nothing more.
    s = scratch({ ndkLibDirs: ['aarch64-linux-ohos'] });
    scratches.push(s);
    r = run(s, { OHOS_NDK_HOME: s.ndk });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /sysroot\/usr\/lib\/x86_64-linux-ohos not found: incomplete OpenHarmony NDK \(ABI x86_64\)/);
    s = scratch({ ndkLibDirs: ['aarch64-linux-ohos', 'x86_64-linux-ohos'] });
    scratches.push(s);
    r = run(s, { OHOS_NDK_HOME: s.ndk });
    assert.equal(r.status, 1, r.stderr);
    // Past every input check (no armeabi-v7a sysroot asked for): it stops only for want of cargo.
    assert.match(r.stderr, /build-ohos: error: cargo not found/);
    assert.doesNotMatch(r.stderr, /arm-linux-ohos/);

    // armeabi-v7a is accepted (mapped to its sysroot, not refused as unknown).
    r = run(s, { OHOS_NDK_HOME: s.ndk, OHOS_ABIS: 'armeabi-v7a' });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /sysroot\/usr\/lib\/arm-linux-ohos not found: incomplete OpenHarmony NDK \(ABI armeabi-v7a\)/);
    fs.mkdirSync(path.join(s.ndk, 'native/sysroot/usr/lib/arm-linux-ohos'));
    r = run(s, { OHOS_NDK_HOME: s.ndk, OHOS_ABIS: 'armeabi-v7a' });
    assert.match(r.stderr, /build-ohos: error: cargo not found/);

    // These refusals come before anything is written.
    for (const sc of scratches) assert.ok(!fs.existsSync(sc.target), `${sc.target} was created`);
    assert.deepEqual(libsSnapshot(), before, 'ohos/arkagent/libs changed');
  } finally {
    for (const sc of scratches) fs.rmSync(sc.dir, { recursive: true, force: true });
  }

  // Not built on CI: CI's only OHOS build is scripts/ohos-link-check.sh's, for arm64-v8a and x86_64.
  const linkCheck = read('scripts/ohos-link-check.sh');
  const abisSet = [...code(linkCheck).matchAll(/^\s*ABIS="([^"]*)"$/gm)].map((m) => m[1]);
  assert.deepEqual(abisSet, ['arm64-v8a', 'arm64-v8a x86_64']);
  assert.match(linkCheck, /OHOS_ABIS="\$ABIS" OHOS_BUILD_STD=1/);
  for (const f of ['scripts/test.sh', '.ci/run']) {
    assert.doesNotMatch(read(f), /armeabi-v7a|OHOS_ABIS/, `${f} builds another ABI`);
  }
});

// "... builds `arkagent-napi` ... in release mode, installs `ohos/arkagent/libs/<abi>/libarkagent.so`
// (hvigor packs them into the HAR; its `hvigorfile.ts` refuses to pack a HAR without one) and packs
// `target/ohos-har/arkagent.har` with `scripts/pack-har.sh`."
// (The hvigorfile.ts refusal: ohos_5_har_without_native_library_fails_the_build, ohos_5.test.js.)
test('ohos_3_readme_build_ohos_builds_arkagent_napi_in_release_mode_installs_libs_abi_and_packs_target_ohos_har', () => {
  const script = code(read('scripts/build-ohos.sh'));
  assert.match(read('bindings/napi/Cargo.toml'), /^name = "arkagent-napi"$/m);
  assert.match(script, /^CRATE="arkagent-napi"$/m);
  const build = script.split('\n').find((l) => /"\$\{cargo_cmd\[@\]\}" build /.test(l));
  assert.ok(build, 'no cargo build line');
  assert.match(build, /--profile "\$PROFILE" --target "\$TARGET" -p "\$CRATE"$/);
  // Release mode: the `ohos` profile, which inherits release.
  assert.match(script, /^PROFILE="\$\{OHOS_PROFILE:-ohos\}"$/m);
  const profile = read('Cargo.toml').split('[profile.ohos]')[1].split('\n[')[0];
  assert.match(profile, /^inherits = "release"$/m);

  // Installed as ohos/arkagent/libs/<abi>/libarkagent.so (stripped), where hvigor packs it.
  assert.match(script, /^LIBS_DIR="\$ROOT\/ohos\/arkagent\/libs"$/m);
  assert.match(script, /^\s*DEST_DIR="\$LIBS_DIR\/\$abi"$/m);
  assert.match(script, /^\s*DEST="\$DEST_DIR\/libarkagent\.so"$/m);
  assert.match(script, /llvm-strip" --strip-all -o "\$DEST\.tmp" "\$built"\n\s*mv -f "\$DEST\.tmp" "\$DEST"/);
  assert.match(read('ohos/arkagent/.gitignore'), /^\/libs\/\*\*\/\*\.so$/m, 'a build product, never committed');

  // The .har: scripts/pack-har.sh with each ABI's installed library, to target/ohos-har/arkagent.har.
  assert.match(script, /^TARGET_DIR="\$\{CARGO_TARGET_DIR:-\$ROOT\/target\}"$/m);
  assert.match(script, /har_libs\+=\(--lib "\$abi=\$LIBS_DIR\/\$abi\/libarkagent\.so"\)/);
  assert.match(script, /^bash "\$ROOT\/scripts\/pack-har\.sh" "\$\{har_libs\[@\]\}" --out "\$\{OHOS_HAR_OUT:-\$TARGET_DIR\/ohos-har\/arkagent\.har\}"$/m);
});

// "`ohrs` is not used: the header of `scripts/build-ohos.sh` says why."
test('ohos_3_readme_ohrs_is_not_used_and_the_build_ohos_header_says_why', () => {
  const text = read('scripts/build-ohos.sh');
  const head = header(text);
  assert.match(head, /# Why not `ohrs build` \/ `ohrs artifact`/);
  // The reasons: it packs the wrong library, names it after the artifact, rewrites index.d.ts.
  assert.match(head, /packed the WRONG library/);
  assert.match(head, /ships the C-ABI cdylib/);
  assert.match(head, /names outputs after the cargo artifact/);
  assert.match(head, /regenerates index\.d\.ts/);
  assert.match(head, /So this script stays a plain cargo build/);
  assert.doesNotMatch(code(text), /\bohrs\b/, 'build-ohos.sh calls ohrs');
});

// "C dependencies are compiled with the NDK's clang through `CC_<target>` / `AR_<target>`."
// "Rust's std is built from source with nightly (`-Zbuild-std`; the script installs nightly and
// `rust-src` when missing)"
// and, of scripts/ohos-link-check.sh's fake NDK: "the libraries then go to
// `<target dir>/ohos-link/ohos-fake-ndk-libs/`, never to `ohos/arkagent/libs/`"
// Run with stand-ins for cargo and rustup only (nightly "installs", rust-src does not, no
// prebuilt std): it writes its compiler wrappers, then stops at the choice of std, unbuilt.
// (The build-std flags, OHOS_BUILD_STD=0 and the fallback without nightly:
// perf_9_ohos_3_build_ohos_builds_std_with_nightly_unless_told_or_unable, tests/it/delivery.rs.)
test('ohos_3_readme_build_ohos_uses_the_ndk_clang_for_c_installs_nightly_and_rust_src_and_keeps_fake_ndk_libs_out', () => {
  const script = code(read('scripts/build-ohos.sh'));
  assert.match(script, /export "CC_\$TARGET_VAR=\$WRAP_DIR\/\$TARGET-clang"/);
  assert.match(script, /export "CXX_\$TARGET_VAR=\$WRAP_DIR\/\$TARGET-clang\+\+"/);
  assert.match(script, /export "AR_\$TARGET_VAR=\$LLVM_BIN\/llvm-ar"/);
  assert.match(script, /^LLVM_BIN="\$NDK\/native\/llvm\/bin"$/m);
  assert.match(script, /^source "\$ROOT\/scripts\/ohos-std\.sh"$/m);
  assert.match(script, /^\s*ohos_std_for "\$TARGET" \|\| exit 1$/m);

  const before = libsSnapshot();
  const s = scratch({ fakes: true, ndkLibDirs: ['aarch64-linux-ohos', 'x86_64-linux-ohos'], fakeNdkMarker: true });
  try {
    // As scripts/ohos-link-check.sh runs it: CARGO_TARGET_DIR=<target dir>/ohos-link.
    const linkDir = path.join(s.target, 'ohos-link');
    const env = { PATH: s.bin, HOME: s.dir, OHOS_NDK_HOME: s.ndk, CARGO_TARGET_DIR: linkDir };
    let r = buildOhos(env);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, new RegExp(`FAKE NDK \\(${esc(s.ndk)}/FAKE_NDK\\): a link check, not a device build; ` +
      `libraries go to ${esc(path.join(linkDir, 'ohos-fake-ndk-libs'))}\\n`));
    assert.match(r.stderr, /build-ohos: error: no std for aarch64-unknown-linux-ohos/);
    // nightly and rust-src installed when missing, before the prebuilt std is tried.
    const calls = fs.readFileSync(s.log, 'utf8').trim().split('\n');
    assert.deepEqual(calls, [
      'rustup run nightly rustc --version',
      'rustup toolchain install nightly --profile minimal',
      'rustup component add rust-src --toolchain nightly',
      'rustup target add aarch64-unknown-linux-ohos',
    ]);
    // The C compiler for C dependencies (CC_aarch64_unknown_linux_ohos): the NDK's clang for the target.
    const wrapper = fs.readFileSync(path.join(linkDir, 'ohos-toolchain/aarch64-unknown-linux-ohos-clang'), 'utf8');
    assert.match(wrapper, new RegExp(`^exec "${esc(path.join(s.ndk, 'native/llvm/bin/clang'))}" --target=aarch64-linux-ohos ` +
      `--sysroot="${esc(path.join(s.ndk, 'native/sysroot'))}" -D__MUSL__ "\\$@"$`, 'm'));

    // OHOS_BUILD_STD=0: rustup's prebuilt std, no nightly asked for.
    fs.rmSync(s.log);
    r = buildOhos({ ...env, OHOS_BUILD_STD: '0' });
    assert.equal(r.status, 1, r.stderr);
    assert.deepEqual(fs.readFileSync(s.log, 'utf8').trim().split('\n'), ['rustup target add aarch64-unknown-linux-ohos']);

    // Without the FAKE_NDK marker (a real NDK) the libraries are not redirected.
    fs.rmSync(path.join(s.ndk, 'FAKE_NDK'));
    r = buildOhos(env);
    assert.equal(r.status, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /FAKE NDK|ohos-fake-ndk-libs/);

    // Nothing was built: cargo was never called, no library anywhere.
    assert.doesNotMatch(fs.readFileSync(s.log, 'utf8'), /^cargo/m);
    assert.ok(!fs.existsSync(path.join(linkDir, 'ohos-fake-ndk-libs')));
    assert.deepEqual(libsSnapshot(), before, 'ohos/arkagent/libs changed');
  } finally {
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
  // The marker switches LIBS_DIR to <its target dir>/ohos-fake-ndk-libs.
  assert.match(script, /if \[ -f "\$NDK\/FAKE_NDK" \]; then\n\s*LIBS_DIR="\$TARGET_DIR\/ohos-fake-ndk-libs"/);
});

// "optimized for size with the library and without std's backtrace symbolizer, which an app cannot
// use (no `RUST_BACKTRACE`, no stderr) — the arm64 library is then ≤ 2.5 MB stripped (PERF-9;
// `scripts/ohos-link-check.sh` fails above it, and when the symbolizer is linked;
// `perf_9_ohos_3_build_ohos_builds_std_with_nightly_unless_told_or_unable` holds the choice of std
// below)." / "`OHOS_BUILD_STD=0` uses rustup's prebuilt std on your toolchain instead (a larger
// library: the symbolizer alone is 156 KB on arm64); without nightly the script falls back to it and
// says so."
// (The 2.5 MB cap and BENCHMARKS.md's sizes: perf_4_release_library_sizes_are_reported_for_host_and_ohos_and_kept_small;
// the std choice: perf_9_ohos_3_..., both tests/it/delivery.rs.)
test('ohos_3_readme_link_check_fails_when_the_symbolizer_is_linked_and_the_named_test_holds_the_std_choice', () => {
  const head = header(read('scripts/build-ohos.sh'));
  assert.match(head, /an app cannot use: it has no RUST_BACKTRACE and no stderr/);
  assert.match(head, /the symbolizer alone is 156 KB on arm64/);
  assert.match(read('BENCHMARKS.md'), /std without\s+the symbolizer \(156 KB: gimli, addr2line, miniz_oxide\)[\s\S]{0,200}\(`OHOS_BUILD_STD=0`\) the symbolizer stays/);

  const linkCheck = code(read('scripts/ohos-link-check.sh'));
  assert.match(linkCheck, /grep -qa 'debug_str_offsets\.dwo' "\$INSTALLED\/arm64-v8a\/libarkagent\.so" && symbolizer=1/);
  assert.match(linkCheck, /check "PERF-9: arm64 libarkagent\.so has no backtrace symbolizer \(std built without it\)" "\$\(\(1 - symbolizer\)\)"/);
  assert.match(linkCheck, /check "PERF-9: arm64 libarkagent\.so stripped <= \$max_so bytes" "\$\(\[ "\$so_bytes" -le "\$max_so" \] && echo 1 \|\| echo 0\)"/);
  // A failed check fails the script.
  assert.match(linkCheck, /failed=\$\(\(failed \+ 1\)\)/);
  assert.match(linkCheck, /\[ "\$failed" -eq 0 \]\s*$/);

  const delivery = fs.readFileSync(path.join(root, 'tests/it/delivery.rs'), 'utf8');
  assert.match(delivery, /#\[test\]\nfn perf_9_ohos_3_build_ohos_builds_std_with_nightly_unless_told_or_unable\(\)/);
});

// ---------------------------------------------------------------------------------------------
// "In DevEco Studio (API 12 SDK or later; not run on this project's CI machine, which has no DevEco):"
// (API 12: ohos_1_the_devEco_project_is_complete_and_consistent.)
test('ohos_1_readme_deveco_steps_are_not_run_on_ci', () => {
  for (const f of ['scripts/test.sh', '.ci/run']) {
    assert.doesNotMatch(code(read(f)), /\bhvigorw\b|\bohpm\b|OHOS_SDK_HOME|OHOS_NDK_HOME/, `${f} runs DevEco's tools or SDK`);
  }
  assert.equal(read5('ohos/build-profile.json5').app.products[0].compatibleSdkVersion, '5.0.0(12)');
});

// "1. build the native libraries: `OHOS_NDK_HOME=<DevEco>/sdk/default/openharmony scripts/build-ohos.sh`"
// (the path is an NDK home build-ohos.sh takes). "(until then building the example stops before its
// `PreBuild` task, naming this command, ...)": ohos_5_example_build_fails_before_prebuild_without_the_native_library_naming_the_command.
test('ohos_1_readme_step_1_deveco_sdk_default_openharmony_is_an_ndk_home_build_ohos_takes', () => {
  const head = header(read('scripts/build-ohos.sh'));
  assert.match(head, /OHOS_NDK_HOME is the SDK directory that holds native\/ \(native\/llvm\/bin\/clang,\n# native\/sysroot\), e\.g\. <DevEco>\/sdk\/default\/openharmony/);
  assert.match(read('ohos/example/hvigorfile.ts'), /OHOS_NDK_HOME=<DevEco>\/sdk\/default\/openharmony scripts\/build-ohos\.sh/);
});

// "2. open `ohos/` (File > Open): a project with the modules `arkagent` (HAR) and `example` (entry HAP)"
// "3. build: Build > Make Module 'arkagent' for the HAR, or from `ohos/`:
//    `hvigorw assembleHar --mode module -p module=arkagent@default -p product=default`;
//    the app: `hvigorw assembleHap --mode module -p module=example@default -p product=default`;"
// (Module names and types are also held by ohos_1_the_devEco_project_is_complete_and_consistent.)
test('ohos_1_readme_steps_2_3_modules_targets_and_product_are_the_ones_the_hvigorw_commands_name', () => {
  const readme = read('README.md');
  const commands = [...readme.matchAll(/`hvigorw (assembleHa[rp]) --mode module -p module=(\w+)@(\w+) -p product=(\w+)`/g)]
    .map((m) => ({ task: m[1], module: m[2], target: m[3], product: m[4] }));
  assert.deepEqual(commands, [
    { task: 'assembleHar', module: 'arkagent', target: 'default', product: 'default' },
    { task: 'assembleHap', module: 'example', target: 'default', product: 'default' },
  ]);
  const profile = read5('ohos/build-profile.json5');
  assert.ok(profile.app.products.some((p) => p.name === 'default'), 'no product default');
  const kind = { har: ['assembleHar', 'harTasks'], entry: ['assembleHap', 'hapTasks'] };
  for (const c of commands) {
    const m = profile.modules.find((x) => x.name === c.module);
    assert.ok(m, `module ${c.module} is not in ohos/build-profile.json5`);
    // The target exists in the module and applies to the product (no `targets` in the root: hvigor's
    // default target, for every product).
    const rootTarget = (m.targets || []).find((t) => t.name === c.target);
    assert.ok(!m.targets || (rootTarget && (rootTarget.applyToProducts || []).includes(c.product)),
      `module ${c.module}: target ${c.target} does not apply to product ${c.product}`);
    const own = read5(path.join('ohos', m.srcPath, 'build-profile.json5'));
    assert.ok((own.targets || []).some((t) => t.name === c.target), `module ${c.module} has no target ${c.target}`);
    const mod = read5(path.join('ohos', m.srcPath, 'src/main/module.json5')).module;
    assert.equal(mod.name, c.module);
    assert.equal(kind[mod.type][0], c.task, `module ${c.module} is a ${mod.type}, built by ${c.task}`);
    assert.match(read(path.join('ohos', m.srcPath, 'hvigorfile.ts')), new RegExp(`system:\\s*${kind[mod.type][1]}\\b`));
  }
  assert.equal(read5('ohos/arkagent/src/main/module.json5').module.type, 'har');
  assert.equal(read5('ohos/example/src/main/module.json5').module.type, 'entry');
});

// "4. run the example: ... pick a phone or the emulator, Run 'example'; enter the endpoint, model and
// API key in the page's settings row. The page streams the reply, lists tool calls (`current_time`),
// `/usage` totals, the episodes after a compression (automatic above 6000 prompt tokens, or the
// Compress button) and the sub-agents (`researcher`, reached by the model's `delegate_task`);"
// (Streaming, tool-call events, /usage, episodes, the 6000 constant, researcher registered:
// ohos_1_the_example_page_streams_shows_tools_usage_episodes_and_sub_agents_and_resumes; signingConfigs
// empty: ohos_1_signing_configs_are_empty_in_the_repository.)
test('ohos_1_readme_step_4_settings_row_current_time_compress_button_threshold_and_delegate_task', () => {
  const page = read('ohos/example/src/main/ets/pages/Index.ets');
  // The settings row: one Row of three inputs, endpoint, model and API key, the key hidden.
  const row = /Row\(\{ space: \d+ \}\) \{\n(\s*TextInput\([\s\S]*?)\n\s{6}\}\n\s*\.width\('100%'\)/.exec(page);
  assert.ok(row, 'no settings row');
  const inputs = [...row[1].matchAll(/TextInput\(\{ text: this\.(\w+), placeholder: '([^']+)' \}\)/g)].map((m) => [m[1], m[2]]);
  assert.deepEqual(inputs, [['baseUrl', 'Base URL'], ['model', 'Model'], ['apiKey', 'API key']]);
  for (const field of ['baseUrl', 'model', 'apiKey']) assert.match(row[1], new RegExp(`this\\.${field} = value;`));
  assert.match(row[1], /placeholder: 'API key' \}\)\n\s*\.type\(InputType\.Password\)/);
  assert.match(page, /new ModelConfig\(this\.baseUrl, this\.apiKey, this\.model\)/, 'the settings make the model');

  // The tool is called current_time.
  assert.match(page, /const CURRENT_TIME: ToolDefinition = new ToolDefinition\('current_time',/);
  // The Compress button compresses now.
  assert.match(page, /Button\('Compress'\)\n\s*\.enabled\(!this\.busy\)\n\s*\.onClick\(\(\) => \{\n\s*this\.compress\(\);/);
  assert.match(page, /private async compress\(\): Promise<void> \{[\s\S]*?this\.ensureRuntime\(\)\.compressNow\(\)/);
  // Automatic: the compressor's prompt-token threshold is 6000.
  assert.match(page, /config\.contextCompressor = new ContextCompressor\(COMPRESSION_THRESHOLD, \d+\);/);
  const dts = read('ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts');
  assert.match(dts, /export class ContextCompressor \{[\s\S]*?constructor\(totalTokenThreshold\?: number,/);
  // The researcher is reached through delegate_task, which a registered worker offers the model.
  assert.match(page, /registerSubAgent\(SubAgentDefinition\.create\('researcher',/);
  assert.match(dts, /the model is offered `delegate_task` once a worker is registered/);
  assert.match(read('src/subagent/names.rs'), /pub const DELEGATE_TASK_TOOL_NAME: &str = "delegate_task";/);
  // A phone ("default" device type), or DevEco's emulator on a PC (the default ABIs include x86_64).
  assert.ok(read5('ohos/example/src/main/module.json5').module.deviceTypes.includes('default'));
});

// "5. the HAR's hypium cases: run `arkagent/src/ohosTest` from DevEco (Run > ohosTest)."
test('ohos_1_readme_step_5_the_har_has_hypium_cases_under_src_ohosTest', () => {
  const dir = path.join(root, 'ohos/arkagent/src/ohosTest');
  const mod = JSON5.parse(fs.readFileSync(path.join(dir, 'module.json5'), 'utf8')).module;
  assert.equal(mod.type, 'feature');
  assert.ok(read5('ohos/arkagent/build-profile.json5').targets.some((t) => t.name === 'ohosTest'), 'no ohosTest target');
  assert.equal(typeof read5('ohos/oh-package.json5').devDependencies['@ohos/hypium'], 'string');
  const testDir = path.join(dir, 'ets/test');
  const cases = fs.readdirSync(testDir).filter((f) => f.endsWith('.test.ets') && f !== 'List.test.ets').sort();
  assert.ok(cases.length >= 3, `${cases}`);
  const list = fs.readFileSync(path.join(testDir, 'List.test.ets'), 'utf8');
  for (const f of cases) {
    const text = fs.readFileSync(path.join(testDir, f), 'utf8');
    assert.match(text, /import \{[^}]*\bdescribe\b[^}]*\bit\b[^}]*\} from '@ohos\/hypium';/, `${f} is not a hypium case`);
    assert.match(text, /\bdescribe\('/, f);
    assert.match(text, /\bit\('/, f);
    // Each case file is in the suite List.test.ets runs.
    const imported = new RegExp(`import (\\w+) from '\\./${esc(f.replace(/\.ets$/, ''))}';`).exec(list);
    assert.ok(imported, `List.test.ets does not import ${f}`);
    assert.match(list, new RegExp(`^\\s*${imported[1]}\\(\\);$`, 'm'), `List.test.ets does not run ${f}`);
  }
});

// ---------------------------------------------------------------------------------------------
// "Without DevEco, `scripts/test.sh` checks what it can: `scripts/lint-arkts.sh` lints ...,
// `tests/arkts/ohos_1.test.js` checks the project files as hvigor reads them, `scripts/ohos-check.sh`
// type-checks the module for the target, and `scripts/ohos-link-check.sh` runs `scripts/build-ohos.sh`"
// (The ohos-check.sh and ohos-link-check.sh steps, and what ohos-check.sh runs:
// napi_5_ci_runs_the_js_tests_the_ohos_compile_check_and_the_aarch64_link_check, tests/it/delivery.rs.)
test('ohos_2_readme_without_deveco_test_sh_runs_the_lint_ohos_1_test_js_the_compile_check_and_the_link_check', () => {
  stepRunning('bash scripts/lint-arkts.sh');
  stepRunning('bash scripts/ohos-check.sh');
  stepRunning('bash scripts/ohos-link-check.sh');
  // Node 20's `node --test DIR` runs the *.test.js files found below DIR: ohos_1.test.js among them.
  stepRunning('node --test tests/arkts/');
  assert.ok(fs.existsSync(path.join(root, 'tests/arkts/ohos_1.test.js')));
  assert.match(read('tests/arkts/ohos_1.test.js'), /JSON5\.parse/, 'ohos_1.test.js reads the project files as hvigor does (JSON5)');
});

// "`scripts/lint-arkts.sh` lints every `.ets` of the project, the example's ArkUI page included,
// against declarations written from the SDK at API 12 (`tests/arkts/stubs`; `OHOS_SDK_JS=<interface_sdk-js
// checkout>` compares them with the SDK; with DevEco, `OHOS_SDK_HOME=<DevEco>/sdk/default
// scripts/lint-arkts.sh` lints against your SDK's own declarations instead — an SDK `ets` folder, an
// OpenHarmony SDK's `<api level>/ets` or `openharmony/ets` (+ `hms/ets`) — skipping only the fixtures
// that check the stubs declare nothing extra"
// (OHOS_SDK_HOME run for real, <api level>/ets and openharmony/ets, the skipped fixtures:
// ohos_2_lint_runs_against_a_real_sdk_folder_skipping_only_the_stubs_minimality_fixtures; the 6.0 and
// 7.0 layouts: ohos_9_lint_finds_the_6_0_and_7_0_sdk_layouts_and_holds_the_project_to_api_12.)
test('ohos_2_readme_lint_arkts_lints_every_ets_of_the_project_against_the_api_12_stubs', () => {
  const lint = read('scripts/lint-arkts.sh');
  const body = code(lint);
  // The whole project directory, with the example page and ability required among the checked files.
  assert.match(body, /--reexports ohos\/arkagent\/Index\.ets=libarkagent\.so ohos >"\$out" 2>&1 \|\| rc=\$\?/);
  assert.match(body, /for want in ohos\/example\/src\/main\/ets\/pages\/Index\.ets ohos\/example\/src\/main\/ets\/entryability\/EntryAbility\.ets; do\n\s*grep -qE "\^\(PASS\|FAIL\) \$want\( \|\\\$\)" "\$out" \|\| fail "\$want was not checked"/);
  // check.js skips only build output directories: no committed .ets sits below one.
  const skip = new Set(JSON.parse(/const SKIP_DIRS = new Set\((\[[^\]]*\])\);/.exec(read('scripts/arkts-lint/check.js'))[1].replace(/'/g, '"')));
  const tracked = spawnSync('git', ['ls-files', 'ohos'], { cwd: root, encoding: 'utf8' }).stdout.split('\n').filter((f) => f.endsWith('.ets'));
  assert.ok(tracked.includes('ohos/example/src/main/ets/pages/Index.ets'));
  for (const f of tracked) {
    assert.ok(!f.split('/').slice(0, -1).some((d) => skip.has(d)), `${f} is under a directory check.js skips`);
  }
  // The default declarations: tests/arkts/stubs, each file written from interface_sdk-js at API 12's tag.
  assert.match(body, /^STUBS="tests\/arkts\/stubs"$/m);
  assert.match(body, /^decl_args=\(--stubs "\$STUBS"\)$/m);
  const stubs = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.d.ts') && !p.includes('/@ohos/hypium/')) stubs.push(p);
    }
  };
  walk(path.join(root, 'tests/arkts/stubs'));
  assert.ok(stubs.length >= 20, `${stubs.length} stubs`);
  for (const f of stubs) {
    assert.match(fs.readFileSync(f, 'utf8'), /Source:\s*interface_sdk-js\s+\S+\s+@\s+OpenHarmony-v5\.0\.0-Release\b/, path.relative(root, f));
  }
  // OHOS_SDK_JS: the stubs compared with an interface_sdk-js checkout.
  assert.match(body, /if \[ -n "\$\{OHOS_SDK_JS:-\}" \]; then sdk_args=\(--sdk "\$OHOS_SDK_JS"\); fi/);
  assert.match(body, /node "\$LINT_DIR\/check-stubs\.js" --stubs "\$STUBS" \$\{sdk_args\[@\]\+"\$\{sdk_args\[@\]\}"\}/);
  // OHOS_SDK_HOME: an ets folder itself, <n>/ets, openharmony/ets plus hms/ets.
  assert.match(body, /if d="\$\(decl_dir "\$home"\)" \|\| d="\$\(decl_dir "\$home\/ets"\)"; then/);
  assert.match(body, /elif d="\$\(decl_dir "\$home\/openharmony\/ets"\)"; then\n\s*sdk_dirs=\("\$d"\)\n\s*if d="\$\(decl_dir "\$home\/hms\/ets"\)"; then sdk_dirs\+=\("\$d"\); fi/);
  assert.match(body, /for e in "\$home"\/\*\/ets; do/);
});

// "against interface_sdk-js at `OpenHarmony-v5.0.0-Release` laid out that way all 17 files pass, 0
// errors, 2026-12-07"
// The files the lint checks now: every .ets under ohos/ (check.js's walk) plus index.d.ts (its
// --module, checked as a .d.ets copy) are as many as the README's measurement counted: a file
// added since fails this until the measurement is made again (OHOS_SDK_HOME=<that checkout,
// laid out as ets/api, ets/kits, ets/arkts, ets/component> scripts/lint-arkts.sh) and the
// sentence updated. (Found stale here: 11 files on 2026-12-01, 17 by then.)
test('ohos_2_readme_lint_against_the_real_sdk_all_the_files_pass', () => {
  const measured = /laid out that way all (\d+) files pass, 0 errors, (\d{4}-\d{2}-\d{2})\)/.exec(read('README.md').replace(/\s+/g, ' '));
  assert.ok(measured, 'the README no longer gives the real-SDK measurement');
  const skip = new Set(JSON.parse(/const SKIP_DIRS = new Set\((\[[^\]]*\])\);/.exec(read('scripts/arkts-lint/check.js'))[1].replace(/'/g, '"')));
  const files = new Set();
  const walk = (d) => {
    for (const e of fs.readdirSync(path.join(root, d), { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        if (!skip.has(e.name)) walk(p);
      } else if (e.isFile() && e.name.endsWith('.ets')) files.add(p);
    }
  };
  walk('ohos');
  const lint = code(read('scripts/lint-arkts.sh'));
  const nativeDts = /^NATIVE_DTS="([^"]+)"$/m.exec(lint)[1];
  for (const m of lint.matchAll(/--module "[^=]+=([^"]+)"/g)) files.add(m[1] === '$NATIVE_DTS' ? nativeDts : m[1]);
  assert.equal(files.size, Number(measured[1]), [...files].sort().join('\n'));
});

// "... runs `scripts/build-ohos.sh` itself — the command above — with `OHOS_NDK_HOME` pointing at a fake
// NDK it generates (musl and stub system libraries; the libraries then go to `<target
// dir>/ohos-link/ohos-fake-ndk-libs/`, never to `ohos/arkagent/libs/`) and inspects the `.har` it packs:
// the module files, the d.ts and `libs/<abi>/libarkagent.so` for arm64-v8a and x86_64."
// (build-ohos.sh's side of the redirect, run: the test above. What the .har carries besides:
// ohos_3_packed_har_has_obfuscation_txt_sdk_fields_license_and_changelog.)
test('ohos_3_readme_link_check_runs_build_ohos_on_its_fake_ndk_keeps_libs_out_of_the_tree_and_inspects_the_har', () => {
  const text = read('scripts/ohos-link-check.sh');
  const body = code(text);
  assert.match(body, /^NDK="\$TARGET_DIR\/ohos-fake-ndk"$/m);
  assert.match(body, /^BUILD_DIR="\$TARGET_DIR\/ohos-link"$/m);
  // musl, and stub system libraries from the published symbol lists.
  assert.match(body, /put "\$MUSL_LIB\/\$f" "\$L\/\$f"/);
  assert.match(body, /build_c "\$stage\/\$lib\.c" "\$L\/\$lib\.z\.so"/);
  assert.match(body, /echo "scripts\/ohos-link-check\.sh" >"\$NDK\/FAKE_NDK"/);
  // The command a user runs, with the fake NDK behind OHOS_NDK_HOME.
  const run = /if ! CARGO_TARGET_DIR="\$BUILD_DIR" OHOS_NDK_HOME="\$NDK" OHOS_ABIS="\$ABIS" OHOS_BUILD_STD=1 \\\n\s*OHOS_HAR_OUT="\$HAR" bash "\$ROOT\/scripts\/build-ohos\.sh"; then\n\s*die/.exec(body);
  assert.ok(run, 'ohos-link-check.sh does not run build-ohos.sh with the fake NDK');
  // Checked: the libraries are under <target dir>/ohos-link/ohos-fake-ndk-libs, not in ohos/arkagent/libs.
  assert.match(body, /^INSTALLED="\$BUILD_DIR\/ohos-fake-ndk-libs"$/m);
  assert.match(body, /\[ -s "\$INSTALLED\/\$abi\/libarkagent\.so" \] \|\| ok=0/);
  assert.match(body, /cmp -s "\$ROOT\/ohos\/arkagent\/libs\/\$abi\/libarkagent\.so" "\$INSTALLED\/\$abi\/libarkagent\.so"; then\n\s*ok=0/);
  // The .har: the module files, the d.ts (byte-equal to the module's) and each ABI's library.
  assert.match(body, /OHOS_LINK_CHECK_X86_64:-1\}" = 1 \]; then\n\s*ABIS="arm64-v8a x86_64"/);
  const entries = /for entry in ([\s\S]*?); do\n\s*grep -qxF "\$entry"/.exec(body);
  assert.ok(entries, 'no .har entry list');
  for (const e of ['package/oh-package.json5', 'package/Index.ets', 'package/src/main/module.json5',
    'package/src/main/ets/NetworkKitTransport.ets', 'package/src/main/cpp/types/libarkagent/index.d.ts']) {
    assert.ok(entries[1].includes(e), `the .har check does not look for ${e}`);
  }
  assert.match(body, /for abi in \$ABIS; do\n\s*grep -qxF "package\/libs\/\$abi\/libarkagent\.so" <<<"\$listing"/);
  assert.match(body, /cmp -s "\$stage\/har\/package\/src\/main\/cpp\/types\/libarkagent\/index\.d\.ts" \\\n\s*"\$ROOT\/ohos\/arkagent\/src\/main\/cpp\/types\/libarkagent\/index\.d\.ts" && ok=1/);
  assert.match(body, /case "\$abi" in arm64-v8a\) machine='ARM aarch64' ;; x86_64\) machine='x86-64' ;; esac/);
});

// "Both builds fail when the library imports a symbol that is neither in the NDK's `libc.so` nor in the
// NDK's published symbol lists for `libace_napi.z.so` and `libhilog_ndk.z.so` at API 12
// (`scripts/ohos-ndk-symbols/`, copied from openharmony/interface_sdk_c at `OpenHarmony-v5.0.0-Release`;
// checked by `scripts/ohos-imports-check.sh`)."
// (The check itself, and the link check running it on both ABIs:
// ohos_4_the_import_check_fails_on_any_import_outside_the_published_lists, tests/it/delivery.rs.)
test('ohos_4_readme_both_builds_fail_on_an_import_outside_libc_and_the_api_12_symbol_lists', () => {
  const build = code(read('scripts/build-ohos.sh'));
  assert.match(build, /bash "\$ROOT\/scripts\/ohos-imports-check\.sh" --libc "\$SYSROOT\/usr\/lib\/\$CLANG_TARGET\/libc\.so" \\\n[^\n]*"\$built" \|\|\n\s*die "\$built imports symbols a device does not provide/);
  const link = code(read('scripts/ohos-link-check.sh'));
  assert.match(link, /check "every import in libc\.so or the NDK symbol lists \(scripts\/ohos-ndk-symbols\)"/);
  assert.deepEqual(fs.readdirSync(path.join(root, 'scripts/ohos-ndk-symbols')).sort(), ['libace_napi.txt', 'libhilog_ndk.txt']);
  for (const list of ['libace_napi.txt', 'libhilog_ndk.txt']) {
    const text = read(`scripts/ohos-ndk-symbols/${list}`);
    assert.match(text, /^# Source: https:\/\/github\.com\/openharmony\/interface_sdk_c \S+\n#\s+tag OpenHarmony-v5\.0\.0-Release \(API 12/m, list);
  }
  assert.match(read('scripts/ohos-imports-check.sh'), /^MIN_API="\$\{OHOS_MIN_API:-12\}"$/m);
});

// ---------------------------------------------------------------------------------------------
// "## The two commands": "scripts/test.sh      # run every test: Rust (with 60 SIGKILLs of a session on
// SQLite), C (also under ASan and valgrind), Node (N-API), ArkTS lint, the NetworkKit transport on a
// netstack simulator, the DevEco project and HAR packaging rules, OHOS compile check and build-ohos.sh on
// a fake NDK (arm64, x86_64, the packed .har), a short fuzz run and Miri (nightly; installed by the
// scripts, SKIPPED loudly where it cannot be)"
// (That both commands are real, executable scripts: dx_1_readme_has_what_and_why_the_two_commands_three_quickstarts_and_a_sketch.)
test('dx_1_readme_test_sh_list_is_the_one_in_the_readme', () => {
  const readme = read('README.md');
  const block = readme.split('## The two commands')[1].split('```sh\n')[1].split('```')[0];
  const said = block.split('\n').filter((l) => !l.startsWith('scripts/demo.sh')).map((l) => l.replace(/^scripts\/test\.sh\s+#|^\s+#/, '').trim()).join(' ').trim();
  assert.equal(said, 'run every test: Rust (with 60 SIGKILLs of a session on SQLite), C (also under ASan and valgrind), ' +
    'Node (N-API), ArkTS lint, the NetworkKit transport on a netstack simulator, the DevEco project and HAR packaging ' +
    'rules, OHOS compile check and build-ohos.sh on a fake NDK (arm64, x86_64, the packed .har), a short fuzz run and ' +
    'Miri (nightly; installed by the scripts, SKIPPED loudly where it cannot be)', 'the list changed: update the tests below');
});

// "Rust (with 60 SIGKILLs of a session on SQLite)"
test('dx_1_readme_test_sh_rust_with_60_sigkills_of_a_session_on_sqlite', () => {
  stepRunning('cargo test --workspace');
  assert.match(read('Cargo.toml'), /^members = \["\.", /m, 'the root package (tests/it) is in the workspace');
  assert.match(read('tests/it/main.rs'), /^mod store_kill;$/m);
  const kill = read('tests/it/store_kill.rs');
  const fn = /#\[test\]\nfn store_3_sigkill_at_random_instants_leaves_the_last_committed_state\(\) \{([\s\S]*?)\n\}/.exec(kill);
  assert.ok(fn, 'no store_3_sigkill test (or it is #[ignore]d)');
  assert.match(fn[1], /std::env::var\("ARKAGENT_KILL_COUNT"\)\.ok\(\)\.and_then\(\|v\| v\.parse\(\)\.ok\(\)\)\.unwrap_or\(60\);/);
  assert.match(fn[1], /for kill in 0\.\.kills \{\n\s*\/\/[^\n]*\n\s*harness\.kill_once\(/);
  assert.match(kill, /SqliteStore::open\(&path\)/);
  assert.match(read('tests/it/kill_loop.rs'), /SIGKILLed at a random instant/);
  // test.sh (and CI) leave the default.
  for (const f of ['scripts/test.sh', '.ci/run']) assert.doesNotMatch(read(f), /ARKAGENT_KILL_COUNT/, f);
});

// "C (also under ASan and valgrind)"
test('dx_1_readme_test_sh_c_also_under_asan_and_valgrind', () => {
  stepRunning('bash scripts/test-c-asan.sh');
  const asan = code(read('scripts/test-c-asan.sh'));
  assert.match(asan, /-fsanitize=address/);
  assert.match(asan, /run "valgrind: tests\/c\/\$p\.c" valgrind --quiet --error-exitcode=99 --leak-check=full/);
});

// "Node (N-API)", "ArkTS lint", "the NetworkKit transport on a netstack simulator", "the DevEco project and
// HAR packaging rules", "OHOS compile check"
test('dx_1_readme_test_sh_node_arkts_lint_netkit_simulator_deveco_and_har_rules_and_ohos_compile_check', () => {
  assert.match(stepRunning('bash scripts/test-js.sh'), /N-API module under Node/);
  assert.match(stepRunning('bash scripts/lint-arkts.sh'), /ArkTS lint/);
  assert.match(stepRunning('node --test tests/arkts/'), /DevEco project and HAR packaging rules/);
  assert.match(stepRunning('bash scripts/ohos-check.sh'), /OHOS compile check/);
  // The transport on the simulator: the ohosTest cases (NetworkKitTransport.ets with @kit.NetworkKit mapped
  // to tests/arkts/netkit-sim) and netkit-sim/transport.test.js (below tests/arkts/).
  stepRunning('node --test scripts/run-ohostest.js');
  assert.match(read('scripts/run-ohostest.js'), /require\(path\.join\(root, 'tests\/arkts\/netkit-sim\/kits\.js'\)\)/);
  assert.match(read('tests/arkts/netkit-sim/kits.js'), /@kit\.NetworkKit/);
  assert.match(read('tests/arkts/netkit-sim/transport.test.js'), /src\/main\/ets\/NetworkKitTransport\.ets[\s\S]*on the netstack simulator/);
  // HAR packaging rules among the tests that step runs.
  assert.ok(fs.existsSync(path.join(root, 'tests/arkts/ohos_5.test.js')) && fs.existsSync(path.join(root, 'tests/arkts/ohos_1.test.js')));
});

// "build-ohos.sh on a fake NDK (arm64, x86_64, the packed .har)"
test('dx_1_readme_test_sh_build_ohos_on_a_fake_ndk_for_arm64_and_x86_64_and_the_packed_har', () => {
  assert.match(stepRunning('bash scripts/ohos-link-check.sh'), /scripts\/build-ohos\.sh on a fake NDK/);
  assert.doesNotMatch(read('scripts/test.sh'), /OHOS_LINK_CHECK_X86_64/, 'test.sh leaves x86_64 out');
  const body = code(read('scripts/ohos-link-check.sh'));
  assert.match(body, /OHOS_LINK_CHECK_X86_64:-1\}" = 1 \]; then\n\s*ABIS="arm64-v8a x86_64"/);
  assert.match(body, /^HAR="\$BUILD_DIR\/arkagent\.har"$/m);
  assert.match(body, /^listing="\$\(tar -tzf "\$HAR" 2>\/dev\/null \|\| true\)"$/m);
});

// "a short fuzz run and Miri (nightly; installed by the scripts, SKIPPED loudly where it cannot be)"
test('dx_1_readme_test_sh_a_short_fuzz_run_and_miri_nightly_installed_or_skipped_loudly', () => {
  assert.match(stepRunning('env FUZZ_BUILD_FLAGS=--dev bash scripts/fuzz.sh 5'), /5 s per target/);
  stepRunning('bash scripts/miri.sh');
  // Each sources nightly-or-skip.sh before its first cargo call; Miri installs its component.
  for (const f of ['scripts/fuzz.sh', 'scripts/miri.sh']) {
    const body = code(read(f));
    const at = body.indexOf('source scripts/nightly-or-skip.sh');
    assert.ok(at >= 0 && at < body.indexOf('cargo +nightly'), `${f} calls cargo before nightly-or-skip.sh`);
  }
  assert.match(code(read('scripts/miri.sh')), /rustup component add miri rust-src --toolchain nightly/);
  assert.match(code(read('scripts/fuzz.sh')), /cargo \+nightly install cargo-fuzz --locked/);
  const install = code(read('scripts/nightly-rust-src.sh'));
  assert.match(install, /rustup toolchain install nightly --profile minimal/);
  assert.match(install, /rustup component add rust-src --toolchain nightly/);

  // Where nightly cannot be had (here: no rustup at all), a loud banner and exit 0 so test.sh goes on.
  const s = scratch();
  try {
    const r = spawnSync(BASH, ['-c', 'check_name=Miri; source scripts/nightly-or-skip.sh; echo REACHED'],
      { cwd: root, env: { PATH: s.bin, HOME: s.dir }, encoding: 'utf8', timeout: 20000 });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /REACHED/);
    assert.match(r.stderr, /^#{80}\n# SKIPPED: Miri — rustup not found; install Rust with rustup to run this check\n#{80}$/m);
  } finally {
    fs.rmSync(s.dir, { recursive: true, force: true });
  }
  // The OHOS checks and the C sanitizer steps say SKIPPED the same way.
  for (const f of ['scripts/ohos-check.sh', 'scripts/ohos-link-check.sh']) {
    assert.match(read(f), /echo "# SKIPPED: ohos-(link-)?check/, f);
    assert.match(read(f), /exit 0\n\}/, f);
  }
  assert.match(read('scripts/test-c-asan.sh'), /banner "SKIPPED: C tests under AddressSanitizer/);
  assert.match(read('scripts/test-c-asan.sh'), /banner "SKIPPED: C tests under valgrind/);
});
