// SPEC OHOS-5 (issue 18 item 6): pressing Run on the example app before
// scripts/build-ohos.sh must fail the build early, naming the command to run, instead of
// giving an app that fails when it loads the native module. hvigor compiles the local HAR
// module into the HAP without packing it, so the HAR's own check (before PackageHar) does
// not run: ohos/example/hvigorfile.ts checks ../arkagent/libs before PreBuild.
// Needs the pinned ohos-typescript (scripts/arkts-lint; scripts/lint-arkts.sh installs it).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { loadHvigorfile, registeredTasks } = require('./hvigor-loader');

const root = path.resolve(__dirname, '../..');

function loadExampleHvigorfile() {
  const { hvigorfile, tasks } = loadHvigorfile('ohos/example/hvigorfile.ts', 'hapTasks');
  return { hvigorfile, hapTasks: tasks };
}

test('ohos_5_example_build_fails_before_prebuild_without_the_native_library_naming_the_command', () => {
  const { hvigorfile, hapTasks } = loadExampleHvigorfile();
  const config = hvigorfile.default;
  assert.equal(config.system, hapTasks);
  assert.equal(config.plugins.length, 1, 'the example registers the native library check');
  const tasks = registeredTasks(config.plugins[0]);
  assert.deepEqual(tasks.map((t) => [t.name, t.postDependencies]),
    [['default@ArkagentCheckHarNativeLib', ['default@PreBuild']]]);
  // The default export checks ohos/arkagent, the HAR module the example depends on.
  const harDir = path.join(root, 'ohos/arkagent');
  const has = ['arm64-v8a', 'armeabi-v7a', 'x86_64'].some((abi) => {
    const lib = path.join(harDir, 'libs', abi, 'libarkagent.so');
    return fs.existsSync(lib) && fs.statSync(lib).size > 0;
  });
  if (has) tasks[0].run();
  else assert.throws(() => tasks[0].run(), new RegExp(harDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ohos5-example-'));
  try {
    const run = () => registeredTasks(hvigorfile.harNativeLibCheckPlugin(dir))[0].run();
    const command = /Build it first, from the repository root: OHOS_NDK_HOME=<DevEco>\/sdk\/default\/openharmony scripts\/build-ohos\.sh/;
    // No libs/, an empty file, an unknown ABI: the build stops with the command to run.
    assert.throws(run, command);
    fs.mkdirSync(path.join(dir, 'libs/arm64-v8a'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'libs/arm64-v8a/libarkagent.so'), '');
    assert.throws(run, command);
    fs.mkdirSync(path.join(dir, 'libs/riscv64'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'libs/riscv64/libarkagent.so'), '\x7fELF');
    assert.throws(run, /the app would fail when it loads the native module/);
    // One ABI is enough.
    fs.writeFileSync(path.join(dir, 'libs/arm64-v8a/libarkagent.so'), '\x7fELF');
    run();
    assert.deepEqual(hvigorfile.checkHarNativeLib(dir), ['arm64-v8a']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
