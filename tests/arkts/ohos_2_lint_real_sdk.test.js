// SPEC OHOS-2 (issue 18 item 9): scripts/lint-arkts.sh runs against a real SDK's
// declarations when OHOS_SDK_HOME names one, so a DevEco user can lint this project with
// their own SDK. No SDK can be downloaded here: the test lays out a small SDK the way the
// SDK ships it (ets/api, ets/kits, ets/component) from the stubs, plus a kit and a
// component the stubs leave out on purpose (@kit.MediaKit, Image), as a real SDK has them.
// Checked: the lint passes against it and says so, skipping only the stubs-minimality
// fixtures (which that SDK declares); it really uses the SDK (one member removed from the
// SDK fails the transport, naming it); a folder without declarations is refused.
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

function copyTree(from, to) {
  fs.mkdirSync(to, { recursive: true });
  for (const ent of fs.readdirSync(from, { withFileTypes: true })) {
    if (ent.isDirectory()) copyTree(path.join(from, ent.name), path.join(to, ent.name));
    else fs.copyFileSync(path.join(from, ent.name), path.join(to, ent.name));
  }
}

/** An SDK `ets` folder at `ets`: api/, kits/ (bare specifiers, as the SDK's kits import), component/. */
function fakeSdk(ets, edit = () => {}) {
  const api = path.join(ets, 'api');
  const kits = path.join(ets, 'kits');
  copyTree(path.join(stubs, 'api'), api);
  copyTree(path.join(stubs, 'component'), path.join(ets, 'component'));
  fs.mkdirSync(kits, { recursive: true });
  for (const f of fs.readdirSync(stubs)) {
    if (f.startsWith('@ohos.') && f.endsWith('.d.ts')) fs.copyFileSync(path.join(stubs, f), path.join(api, f));
    if (f.startsWith('@kit.') && f.endsWith('.d.ts')) {
      fs.writeFileSync(path.join(kits, f), fs.readFileSync(path.join(stubs, f), 'utf8').replace(/from '\.\/(@ohos\.[^']+)'/g, "from '$1'"));
    }
  }
  // What a real SDK has and the stubs leave out (undeclared_sdk.ets / undeclared_arkui.ets use them).
  fs.writeFileSync(path.join(api, '@ohos.multimedia.media.d.ts'),
    'declare namespace media {\n  function createAVPlayer(): Promise<void>;\n}\nexport default media;\n');
  fs.writeFileSync(path.join(kits, '@kit.MediaKit.d.ts'), "import media from '@ohos.multimedia.media';\nexport { media };\n");
  fs.writeFileSync(path.join(ets, 'component', 'image.d.ts'),
    'interface ImageInterface {\n  (src: string): ImageAttribute;\n}\n' +
    'declare class ImageAttribute extends CommonMethod<ImageAttribute> {}\n' +
    'declare const Image: ImageInterface;\ndeclare const ImageInstance: ImageAttribute;\n');
  edit(ets);
}

function lint(sdkHome) {
  return spawnSync('bash', [path.join(root, 'scripts/lint-arkts.sh')], {
    cwd: root, encoding: 'utf8', env: { ...process.env, OHOS_SDK_HOME: sdkHome, OHOS_SDK_JS: '' },
  });
}

test('ohos_2_lint_runs_against_a_real_sdk_folder_skipping_only_the_stubs_minimality_fixtures', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ohos2-sdk-'));
  try {
    // An OpenHarmony SDK: <home>/<api level>/ets; the highest level is taken.
    fakeSdk(path.join(dir, 'openharmony-sdk/12/ets'));
    fs.mkdirSync(path.join(dir, 'openharmony-sdk/9/ets'), { recursive: true }); // no api/: not taken
    const ok = lint(path.join(dir, 'openharmony-sdk'));
    const log = ok.stdout + ok.stderr;
    assert.equal(ok.status, 0, log);
    assert.match(log, new RegExp(`checking against the SDK declarations in ${path.join(dir, 'openharmony-sdk/12/ets').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(log, /skipped \(stubs-minimality fixtures, declared by a real SDK\): tests\/arkts\/bad\/undeclared_sdk\.ets tests\/arkts\/bad\/undeclared_arkui\.ets/);
    assert.match(log, /arkts-lint: \d+ passed, 0 failed/);
    // The known-bad fixture still runs (and fails as it must): its rules are counted.
    assert.doesNotMatch(log, /bad\.ets: checker exited/);
    // Every file of the project (the example page included, or the script fails) checked.
    assert.match(log, /arkts-check: 1\d file\(s\), 0 error\(s\)/);

    // DevEco's layout (sdk/default/openharmony/ets), with one member the transport uses
    // missing from the SDK: the lint fails and names it (the stubs are not used).
    fakeSdk(path.join(dir, 'deveco/default/openharmony/ets'), (ets) => {
      const file = path.join(ets, 'api/@ohos.net.http.d.ts');
      const text = fs.readFileSync(file, 'utf8');
      assert.match(text, /function createHttp\(\): HttpRequest;/);
      fs.writeFileSync(file, text.replace(/function createHttp\(\): HttpRequest;/, ''));
    });
    const broken = lint(path.join(dir, 'deveco/default'));
    const brokenLog = broken.stdout + broken.stderr;
    assert.notEqual(broken.status, 0, brokenLog);
    assert.match(brokenLog, /NetworkKitTransport\.ets:\d+:\d+: error: Property 'createHttp' does not exist/);
    assert.match(brokenLog, /FAILED: ohos\/arkagent\/src\/main\/ets\/NetworkKitTransport\.ets has ArkTS errors/);

    // A folder without declarations is refused, not silently replaced by the stubs.
    const none = lint(path.join(dir, 'nothing-here'));
    assert.equal(none.status, 1);
    assert.match(none.stderr, /holds no SDK declarations/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
