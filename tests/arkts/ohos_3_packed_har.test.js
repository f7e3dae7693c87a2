// SPEC OHOS-3 / OHOS-5: what scripts/pack-har.sh puts in the .har beyond the module's own
// files, as hvigor's HAR packing does and ohpm publishing needs (issue 18 item 5):
// obfuscation.txt (the consumer keep rules, which ArkGuard reads from an installed HAR),
// compatibleSdkVersion / compatibleSdkType in the packed oh-package.json5, LICENSE and
// CHANGELOG.md. Packs with a stand-in library (pack-har.sh only checks it is non-empty);
// scripts/ohos-link-check.sh inspects the .har built from the real libraries.
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const { test } = require('node:test');

const root = path.resolve(__dirname, '../..');
const JSON5 = require(path.join(root, 'scripts/arkts-lint/node_modules/json5'));

function packed() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ohos3-har-'));
  const lib = path.join(dir, 'libarkagent.so');
  fs.writeFileSync(lib, '\x7fELF stand-in');
  const har = path.join(dir, 'arkagent.har');
  execFileSync('bash', [path.join(root, 'scripts/pack-har.sh'), '--lib', `x86_64=${lib}`, '--out', har], { stdio: 'pipe' });
  const out = path.join(dir, 'x');
  fs.mkdirSync(out);
  execFileSync('tar', ['-xzf', har, '-C', out]);
  return { dir, pkg: path.join(out, 'package') };
}

test('ohos_3_packed_har_has_obfuscation_txt_sdk_fields_license_and_changelog', () => {
  const { dir, pkg } = packed();
  try {
    // ArkGuard's file in a HAR: the module's consumer rules, every keep rule included.
    const rules = fs.readFileSync(path.join(root, 'ohos/arkagent/consumer-rules.txt'), 'utf8');
    assert.ok(fs.existsSync(path.join(pkg, 'obfuscation.txt')), 'package/obfuscation.txt');
    assert.equal(fs.readFileSync(path.join(pkg, 'obfuscation.txt'), 'utf8'), rules);
    assert.match(rules, /^-keep-global-name$/m);
    assert.match(rules, /^-keep-property-name$/m);

    // The packed oh-package.json5: the module's fields, plus hvigor's SDK fields, taken
    // from the project (compatibleSdkVersion "5.0.0(12)", runtimeOS HarmonyOS).
    const source = JSON5.parse(fs.readFileSync(path.join(root, 'ohos/arkagent/oh-package.json5'), 'utf8'));
    const manifest = JSON5.parse(fs.readFileSync(path.join(pkg, 'oh-package.json5'), 'utf8'));
    for (const key of Object.keys(source)) assert.deepEqual(manifest[key], source[key], key);
    const profile = JSON5.parse(fs.readFileSync(path.join(root, 'ohos/build-profile.json5'), 'utf8'));
    const product = profile.app.products[0];
    assert.equal(product.compatibleSdkVersion, '5.0.0(12)');
    assert.equal(manifest.compatibleSdkVersion, 12);
    assert.equal(manifest.compatibleSdkType, product.runtimeOS);
    assert.equal(manifest.compatibleSdkType, 'HarmonyOS');
    assert.equal(manifest.obfuscated, false);
    assert.deepEqual(manifest.nativeComponents, [{ name: 'libarkagent.so', compatibleSdkVersion: 12, compatibleSdkType: 'HarmonyOS' }]);

    // ohpm publishing: LICENSE (the package's license) and CHANGELOG.md naming the version.
    assert.equal(manifest.license, 'Apache-2.0');
    assert.match(fs.readFileSync(path.join(pkg, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/);
    assert.match(fs.readFileSync(path.join(pkg, 'CHANGELOG.md'), 'utf8'), new RegExp(`^## ${manifest.version.replace(/\./g, '\\.')}$`, 'm'));
    assert.ok(fs.existsSync(path.join(pkg, 'README.md')));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
