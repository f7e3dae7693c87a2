#!/usr/bin/env node
// Runs the HAR's ohosTest cases (ohos/arkagent/src/ohosTest/ets/test/*.test.ets) under Node against
// the host build of the native module: each .ets file is transpiled with the pinned
// ohos-typescript (the same compiler the ArkTS lint uses), '@ohos/hypium' is mapped to
// node:test, and the HAR's Index to the native module plus the HAR's own .ets helpers —
// NetworkKitTransport.ets included, with '@kit.NetworkKit' mapped to the netstack
// simulator (tests/arkts/netkit-sim, OHOS-8) and ImageKitCodec.ets with '@kit.ImageKit' mapped
// to tests/arkts/imagekit-sim (jpeg-js). Files that import other device APIs are
// skipped and listed. Exits non-zero on failure. `load` and `harIndex` are exported for
// tests/arkts/netkit-sim/transport.test.js.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert/strict');
const { test } = require('node:test');

const root = path.resolve(__dirname, '..');
const ts = require(path.join(root, 'scripts/arkts-lint/node_modules/ohos-typescript'));
// Where scripts/test-js.sh puts the host build: $CARGO_TARGET_DIR (default target/).
const nativePath = () => process.env.ARKAGENT_NODE
  || path.join(path.resolve(root, process.env.CARGO_TARGET_DIR || 'target'), 'arkagent.node');
const kits = require(path.join(root, 'tests/arkts/netkit-sim/kits.js'));

function load(file, modules) {
  const source = fs.readFileSync(file, 'utf8');
  const out = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2021 },
    fileName: file.replace(/\.ets$/, '.ts'),
  }).outputText;
  const mod = { exports: {} };
  const requireShim = (name) => {
    if (name in modules) return modules[name];
    throw new Error(`${path.basename(file)} imports ${name}, which needs the device`);
  };
  new Function('require', 'module', 'exports', out)(requireShim, mod, mod.exports);
  return mod.exports;
}

// hypium's matchers used by the cases; `not()` negates the next one.
function matchers(actual, negate) {
  const check = (ok, message) => assert.ok(negate ? !ok : ok, (negate ? 'not: ' : '') + message);
  return {
    not: () => matchers(actual, !negate),
    assertEqual: (expected) => check(Object.is(actual, expected), `${JSON.stringify(actual)} === ${JSON.stringify(expected)}`),
    assertTrue: () => check(actual === true, `${actual} is true`),
    assertFalse: () => check(actual === false, `${actual} is false`),
    assertContain: (part) => check(actual.includes(part), `${JSON.stringify(actual)} contains ${JSON.stringify(part)}`),
    assertLarger: (than) => check(actual > than, `${actual} > ${than}`),
    assertLargerOrEqual: (than) => check(actual >= than, `${actual} >= ${than}`),
    assertLessOrEqual: (than) => check(actual <= than, `${actual} <= ${than}`),
    assertUndefined: () => check(actual === undefined, `${actual} is undefined`),
  };
}

// hypium → node:test.
const cases = [];
const hypium = {
  Level: { LEVEL0: 0, LEVEL1: 1, LEVEL2: 2, LEVEL3: 3, LEVEL4: 4 },
  describe: (suite, body) => body(suite),
  it: (name, _level, body) => cases.push({ name, body }),
  expect: (actual) => matchers(actual, false),
};

const ets = path.join(root, 'ohos/arkagent/src/main/ets');

/**
 * What the HAR's Index exports under Node: the native module, ArkAgentError,
 * NetworkKitTransport (on the netstack simulator) and ImageKitCodec (on the ImageKit
 * simulator; loading it registers it as the default codec, as the HAR does).
 */
function harIndex(native = require(nativePath())) {
  const errorModule = load(path.join(ets, 'ArkAgentError.ets'), {});
  const transportModule = load(path.join(ets, 'NetworkKitTransport.ets'), { ...kits, './ArkAgentError': errorModule });
  const codecModule = load(path.join(ets, 'ImageKitCodec.ets'), { ...kits, 'libarkagent.so': native });
  return { ...native, ...errorModule, ...transportModule, ...codecModule };
}

module.exports = { load, harIndex, kits };

if (require.main === module) {
  const index = harIndex();
  const testDir = path.join(root, 'ohos/arkagent/src/ohosTest/ets/test');
  const skipped = [];
  for (const file of fs.readdirSync(testDir).filter((f) => f.endsWith('.test.ets') && f !== 'List.test.ets').sort()) {
    const full = path.join(testDir, file);
    // Device APIs other than the simulated ones cannot run here.
    const imports = [...fs.readFileSync(full, 'utf8').matchAll(/from '(@(?:kit|ohos)\.[^']+)'/g)].map((m) => m[1]);
    if (imports.some((name) => !(name in kits))) {
      skipped.push(file);
      continue;
    }
    const suite = load(full, { ...kits, '@ohos/hypium': hypium, '../../../../Index': index });
    const before = cases.length;
    suite.default();
    for (const c of cases.slice(before)) {
      test(`${file}: ${c.name}`, () => c.body());
    }
  }
  if (skipped.length) console.log(`# skipped (need the device): ${skipped.join(', ')}`);
}
