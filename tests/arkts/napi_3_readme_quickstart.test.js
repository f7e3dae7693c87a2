// SPEC NAPI-3 / STORE-6: the README's ArkTS quickstart type-checks as ArkTS against the HAR
// (ohos/arkagent/Index.ets and the native index.d.ts) and the SDK stubs, with the same
// checker as scripts/lint-arkts.sh. The snippet is printed as a fragment: its import goes
// to the top of a generated .ets file, the rest into an async method of an ArkUI component
// (so that `this.getUIContext()` and `await` have a home, as in a page), `apiKey` its
// parameter.
// Needs scripts/arkts-lint's node_modules (scripts/lint-arkts.sh installs them).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { spawnSync } = require('node:child_process');

const root = path.resolve(__dirname, '../..');
const IMPORT_END = "from '@arkagent/arkagent';";

/** The README's ArkTS quickstart as an .ets file. */
function quickstartEts(readme, pattern = /## Quickstart: ArkTS[\s\S]*?```typescript\n([\s\S]*?)```/) {
  const m = pattern.exec(readme);
  assert.ok(m, 'the README has an ArkTS quickstart block');
  const code = m[1];
  const cut = code.indexOf(IMPORT_END);
  assert.ok(cut > 0, 'the quickstart imports from @arkagent/arkagent');
  const imports = code.slice(0, cut + IMPORT_END.length);
  const body = code.slice(cut + IMPORT_END.length).replace(/^/gm, '    ');
  return `${imports}\n\n@Component\nexport struct Quickstart {\n  build() {\n    Column() {\n    }\n  }\n\n  async start(apiKey: string): Promise<void> {\n${body}\n  }\n}\n`;
}

function check(source) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'arkagent-quickstart-'));
  try {
    const file = path.join(dir, 'Quickstart.ets');
    fs.writeFileSync(file, source);
    return spawnSync(process.execPath, [
      path.join(root, 'scripts/arkts-lint/check.js'), '--stubs', 'tests/arkts/stubs',
      '--module', 'libarkagent.so=ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts',
      '--module', '@arkagent/arkagent=ohos/arkagent/Index.ets', file,
    ], { cwd: root, encoding: 'utf8' });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('napi_3_readme_arkts_quickstart_type_checks_against_the_har', () => {
  const source = quickstartEts(fs.readFileSync(path.join(root, 'README.md'), 'utf8'));
  assert.match(source, /this\.getUIContext\(\)\.getHostContext\(\)[\s\S]*SessionStore\.open\(context\.filesDir/, 'the quickstart opens a store in the ability\'s filesDir');
  // getContext(this) is deprecated from API 18.
  assert.doesNotMatch(source, /\bgetContext\(/);
  const ok = check(source);
  assert.equal(ok.status, 0, `the README's ArkTS quickstart has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
  // The same check rejects the snippet with a member the HAR does not have.
  const bad = check(source.replace('SessionStore.open(', 'SessionStore.openFile('));
  assert.equal(bad.status, 1, `${bad.stdout}${bad.stderr}`);
  assert.match(bad.stdout + bad.stderr, /Property 'openFile' does not exist/);
});

test('napi_3_har_readme_arkts_snippet_type_checks_against_the_har', () => {
  const readme = fs.readFileSync(path.join(root, 'ohos/arkagent/README.md'), 'utf8');
  const source = quickstartEts(readme, /```ts\n([\s\S]*?)```/);
  const ok = check(source);
  assert.equal(ok.status, 0, `ohos/arkagent/README.md's snippet has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
});

test('tool_4_readme_arkts_tool_abort_snippet_type_checks_against_the_har', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const source = quickstartEts(readme, /## Tool deadlines and abort[\s\S]*?```typescript\n([\s\S]*?)```/);
  assert.match(source, /context\.signal\.onAbort\(/);
  const ok = check(source);
  assert.equal(ok.status, 0, `the README's tool-abort snippet has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
  const bad = check(source.replace('context.signal.onAbort(', 'context.signal.addEventListener('));
  assert.equal(bad.status, 1, `${bad.stdout}${bad.stderr}`);
});

test('tool_1_readme_arkts_asking_the_user_first_type_checks_against_the_har', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const m = /## Asking the user first[\s\S]*?```typescript\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, 'the README has the approval example');
  // A module of its own: its functions are top-level, as in an app's file.
  const source = m[1];
  assert.match(source, /runtime\.approve\(call\.callId\)[\s\S]*runtime\.reject\([\s\S]*runtime\.resumeRun\(\)/);
  const ok = check(source);
  assert.equal(ok.status, 0, `the README's approval example has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
  const bad = check(source.replace('runtime.resumeRun()', 'runtime.resume()'));
  assert.equal(bad.status, 1, `${bad.stdout}${bad.stderr}`);
});

test('chat_1_readme_arkts_regenerate_and_edit_buttons_type_check_against_the_har', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const m = /## Regenerate, edit, fork[\s\S]*?```typescript\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, 'the README has the gestures example');
  const source = m[1];
  assert.match(source, /Button\('Regenerate'\)[\s\S]*runtime\.regenerate\([\s\S]*runtime\.editAndResend\(/);
  const ok = check(source);
  assert.equal(ok.status, 0, `the README's gestures example has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
  const bad = check(source.replace('this.runtime.regenerate(', 'this.runtime.regenerateRun('));
  assert.equal(bad.status, 1, `${bad.stdout}${bad.stderr}`);
});

test('mcp_3_readme_arkts_mcp_server_snippet_type_checks_against_the_har', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const m = /## Tools from MCP servers[\s\S]*?```typescript\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, 'the README has the MCP example');
  const source = m[1];
  assert.match(source, /config\.addMcpServer\(\{ name: 'maps'[\s\S]*McpAuthRequest[\s\S]*'mcp_server'/);
  const ok = check(source);
  assert.equal(ok.status, 0, `the README's MCP example has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
  const bad = check(source.replace('config.addMcpServer(', 'config.addServer('));
  assert.equal(bad.status, 1, `${bad.stdout}${bad.stderr}`);
});

test('img_8_readme_arkts_photo_snippet_type_checks_against_the_har', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const m = /## Photos in the conversation[\s\S]*?```typescript\n([\s\S]*?)```/.exec(readme);
  assert.ok(m, 'the README has the photo example');
  const source = m[1];
  assert.match(source, /estimateImageTokens\(model, photo\)[\s\S]*runtime\.runParts\(/);
  const ok = check(source);
  assert.equal(ok.status, 0, `the README's photo example has ArkTS errors:\n${ok.stdout}${ok.stderr}\n${source}`);
  const bad = check(source.replace('estimateImageTokens(model, photo)', 'estimateImageTokens(photo)'));
  assert.equal(bad.status, 1, `${bad.stdout}${bad.stderr}`);
});
