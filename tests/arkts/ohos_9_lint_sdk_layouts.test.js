// SPEC OHOS-9 (issue 29 item 5): scripts/lint-arkts.sh against a real SDK finds the
// declarations where OpenHarmony 6.0 (ets/ets1.1/) and 7.0 (ets/dynamic/) put them, counts
// only errors in the project's own files (diagnostics inside the SDK are warnings), and
// rejects a use of an API above the project's compatibleSdkVersion (12) — the planted
// `RequestMethod.PATCH` (API 26) fails against a 7.0 SDK as it does against the stubs.
// No SDK can be downloaded here: each SDK is laid out from the stubs plus the real
// declarations the transport uses (tests/arkts/sdk-fixtures/<release>/, excerpts of
// interface_sdk-js with their @since tags; extract.js there writes them).
// Needs scripts/arkts-lint's node_modules (scripts/lint-arkts.sh installs them).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { test } = require('node:test');

const root = path.resolve(__dirname, '../..');
const stubs = path.join(root, 'tests/arkts/stubs');
const fixtures = path.join(root, 'tests/arkts/sdk-fixtures');

function copyTree(from, to, skip = () => false) {
  fs.mkdirSync(to, { recursive: true });
  for (const ent of fs.readdirSync(from, { withFileTypes: true })) {
    if (skip(ent.name)) continue;
    if (ent.isDirectory()) copyTree(path.join(from, ent.name), path.join(to, ent.name));
    else fs.copyFileSync(path.join(from, ent.name), path.join(to, ent.name));
  }
}

/**
 * The declarations folder of an SDK (api/, kits/, component/) at `decl`: the stubs laid out
 * as the SDK ships them, then the release's real excerpts over them (the SDK's http module
 * and its global functions, which live in api/@internal/ets/, not among the components).
 */
function sdkDeclarations(decl, release, edit = () => {}) {
  const api = path.join(decl, 'api');
  const kits = path.join(decl, 'kits');
  copyTree(path.join(stubs, 'api'), api);
  copyTree(path.join(stubs, 'component'), path.join(decl, 'component'), (name) => name === 'global.d.ts');
  fs.mkdirSync(kits, { recursive: true });
  for (const f of fs.readdirSync(stubs)) {
    if (f.startsWith('@ohos.') && f.endsWith('.d.ts')) fs.copyFileSync(path.join(stubs, f), path.join(api, f));
    if (f.startsWith('@kit.') && f.endsWith('.d.ts')) {
      fs.writeFileSync(path.join(kits, f), fs.readFileSync(path.join(stubs, f), 'utf8').replace(/from '\.\/(@ohos\.[^']+)'/g, "from '$1'"));
    }
  }
  copyTree(path.join(fixtures, release), decl);
  edit(decl);
}

/** An ArkTS-static declarations folder beside the dynamic one: broken, so using it would fail. */
function staticDeclarations(dir) {
  fs.mkdirSync(path.join(dir, 'api'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'kits'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'kits', '@kit.NetworkKit.d.ts'), 'export { nothing } from \'@ohos.nothing\';\n');
}

function lint(sdkHome) {
  const run = spawnSync('bash', [path.join(root, 'scripts/lint-arkts.sh')], {
    cwd: root, encoding: 'utf8', env: { ...process.env, OHOS_SDK_HOME: sdkHome, OHOS_SDK_JS: '' },
  });
  return { status: run.status, log: run.stdout + run.stderr };
}

test('ohos_9_lint_finds_the_6_0_and_7_0_sdk_layouts_and_holds_the_project_to_api_12', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ohos9-sdk-'));
  try {
    // DevEco with a 6.0 SDK: sdk/default/openharmony/ets/ets1.1 (ets1.2: ArkTS-static).
    const ets60 = path.join(dir, 'deveco/default/openharmony/ets');
    sdkDeclarations(path.join(ets60, 'ets1.1'), '6.0');
    staticDeclarations(path.join(ets60, 'ets1.2'));
    const six = lint(path.join(dir, 'deveco/default'));
    assert.equal(six.status, 0, six.log);
    assert.match(six.log, /checking against the SDK declarations in \S+\/openharmony\/ets\/ets1\.1 \(6\.0 layout, ets\/ets1\.1\/; OHOS_SDK_HOME\)/);
    assert.match(six.log, /minimum API level 12 \(compatibleSdkVersion/);
    assert.match(six.log, /arkts-check: 1\d file\(s\), 0 error\(s\)/);
    // 6.0 has no PATCH at all.
    assert.match(six.log, /since_above_min_api\.ets:\d+:\d+: error: Property 'PATCH' does not exist/);
    assert.match(six.log, /arkts-lint: \d+ passed, 0 failed/);

    // An OpenHarmony 7.0 SDK: <home>/<api level>/ets/dynamic (static/ beside it).
    const ets70 = path.join(dir, 'openharmony-sdk/26/ets');
    sdkDeclarations(path.join(ets70, 'dynamic'), '7.0');
    staticDeclarations(path.join(ets70, 'static'));
    const seven = lint(path.join(dir, 'openharmony-sdk'));
    assert.equal(seven.status, 0, seven.log);
    assert.match(seven.log, /checking against the SDK declarations in \S+\/26\/ets\/dynamic \(7\.0 layout, ets\/dynamic\/; OHOS_SDK_HOME\)/);
    // The kit the transport imports BusinessError from pulls in 7.0's annotation module,
    // whose static-ArkTS syntax this compiler cannot parse: warnings inside the SDK, not
    // errors of the project.
    assert.match(seven.log, /api\/@ohos\.annotation\.d\.ets:\d+:\d+: warning: \(in the SDK\) /);
    assert.match(seven.log, /arkts-check: 1\d file\(s\), 0 error\(s\)/);
    // The planted PATCH fails by its level, as it fails against the stubs.
    assert.match(seven.log, /since_above_min_api\.ets:\d+:\d+: error: 'PATCH' is @since 26 \(api\/@ohos\.net\.http\.d\.ts\), above the minimum API 12 \(compatibleSdkVersion\) \(arkts-check-since\)/);
    assert.match(seven.log, /arkts-lint: \d+ passed, 0 failed/);

    // A 7.0 SDK where a member the transport calls were newer than API 12: the project fails.
    const newer = path.join(dir, 'newer/ets');
    sdkDeclarations(path.join(newer, 'dynamic'), '7.0', (decl) => {
      const file = path.join(decl, 'api/@ohos.net.http.d.ts');
      const text = fs.readFileSync(file, 'utf8');
      const edited = text.replace(/(\* @since )10 dynamic(\s*\*\/\s*requestInStream\(url: string, options\?: HttpRequestOptions\): Promise<int>;)/, '$113 dynamic$2');
      assert.notEqual(edited, text, 'requestInStream\'s @since tag was not found');
      fs.writeFileSync(file, edited);
    });
    const failing = lint(newer);
    assert.equal(failing.status, 1, failing.log);
    assert.match(failing.log, /NetworkKitTransport\.ets:\d+:\d+: error: 'requestInStream' is @since 13 \(api\/@ohos\.net\.http\.d\.ts\), above the minimum API 12/);
    assert.match(failing.log, /FAILED: ohos\/arkagent\/src\/main\/ets\/NetworkKitTransport\.ets has ArkTS errors/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
