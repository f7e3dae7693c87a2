'use strict';
// NAPI-1 (issue 28 item 13): an N-API crate built with napi-ohos; it builds for the host —
// the module these tests load into Node — and for aarch64-unknown-linux-ohos.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, MODULE_PATH, completion, ScriptedModel, runtimeConfig } = require('./support');

const ROOT = path.join(__dirname, '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** The `[section]` of a Cargo.toml: its lines up to the next section. */
function section(manifest, name) {
  const start = manifest.indexOf(`\n[${name}]\n`);
  assert.ok(start >= 0, `no [${name}]`);
  const rest = manifest.slice(start + name.length + 4);
  return rest.split('\n[')[0];
}

test('NAPI-1 the crate is a napi-ohos cdylib and the host build is the module Node loads', async () => {
  const manifest = read('bindings/napi/Cargo.toml');
  assert.match(section(manifest, 'lib'), /^crate-type = \["cdylib"\]$/m);
  const deps = section(manifest, 'dependencies');
  assert.match(deps, /^napi-ohos = /m);
  assert.match(deps, /^napi-derive-ohos = /m);
  assert.doesNotMatch(deps, /^napi(-derive)? = /m, 'napi-rs itself is not a dependency');
  assert.match(section(manifest, 'build-dependencies'), /^napi-build-ohos = /m);

  // The module Node loaded is a shared object for this machine (ELF e_machine).
  const elf = fs.readFileSync(MODULE_PATH);
  assert.deepEqual([...elf.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], `${MODULE_PATH} is an ELF file`);
  const machine = elf.readUInt16LE(18);
  const expected = { x64: 0x3e, arm64: 0xb7 }[process.arch];
  assert.equal(machine, expected, `built for ${process.arch}`);

  // It registered the API's classes, and a call crosses into Rust and back as a Promise.
  for (const name of ['AgentRuntime', 'AgentRuntimeConfig', 'ModelConfig', 'ToolRegistry', 'ContextCompressor']) {
    assert.equal(typeof native[name], 'function', `${name} is exported`);
  }
  const model = new ScriptedModel([() => completion({ content: 'pong', usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, new native.ToolRegistry());
  const pending = runtime.run('ping');
  assert.ok(pending instanceof Promise);
  const outcome = await pending;
  assert.equal(outcome.finalText, 'pong');
  assert.deepEqual(model.problems, []);
});

test('NAPI-1 the same crate is built for aarch64-unknown-linux-ohos (compile check and the HAR build)', () => {
  for (const script of ['scripts/ohos-check.sh', 'scripts/build-ohos.sh']) {
    const text = read(script);
    assert.match(text, /^CRATE="arkagent-napi"$/m, `${script} builds bindings/napi`);
    assert.match(text, /aarch64-unknown-linux-ohos/, `${script} targets aarch64 OHOS`);
  }
  // The HAR imports the module under the name build-ohos.sh installs it as.
  assert.match(read('ohos/arkagent/src/main/cpp/types/libarkagent/oh-package.json5'), /"name": "libarkagent\.so"/);
});
