// SPEC OHOS-5: a HAR cannot ship without its native library, and the ArkGuard keep rules
// (ohos/arkagent/consumer-rules.txt) cover every name of the native API (index.d.ts).
// Needs the pinned ohos-typescript (scripts/arkts-lint; scripts/lint-arkts.sh installs it).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { test } = require('node:test');
const { loadHvigorfile, registeredTasks } = require('./hvigor-loader');

const root = path.resolve(__dirname, '../..');
const ts = require(path.join(root, 'scripts/arkts-lint/node_modules/ohos-typescript'));
const gen = require(path.join(root, 'scripts/gen-consumer-rules.js'));

const dtsPath = path.join(root, gen.DTS);
const rulesPath = path.join(root, gen.RULES);

/** The names listed under each ArkGuard option of a rules file. */
function parseRules(text) {
  const sections = new Map();
  let current = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    if (line.startsWith('-')) {
      current = line;
      if (!sections.has(current)) sections.set(current, new Set());
    } else {
      assert.ok(current, `name ${line} before any option`);
      sections.get(current).add(line);
    }
  }
  return sections;
}

/**
 * Every name of index.d.ts found through the type checker (independently of the generator's
 * syntax walk): each export, and for each exported class / interface the members of its
 * instance type and of its constructor (statics).
 */
function apiNames() {
  const options = { noEmit: true, target: ts.ScriptTarget.ES2021, types: [], lib: ['lib.es2021.d.ts'] };
  const program = ts.createProgram([dtsPath], options);
  const checker = program.getTypeChecker();
  const sf = program.getSourceFile(dtsPath);
  const exportsOf = checker.getExportsOfModule(checker.getSymbolAtLocation(sf));
  const globals = new Set();
  const members = new Set();
  for (const sym of exportsOf) {
    globals.add(sym.name);
    if (sym.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Interface)) {
      for (const p of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(sym))) members.add(p.name);
    }
    if (sym.flags & ts.SymbolFlags.Class) {
      const ctorType = checker.getTypeOfSymbolAtLocation(sym, sym.valueDeclaration);
      for (const p of checker.getPropertiesOfType(ctorType)) {
        if (p.name !== 'prototype') members.add(p.name);
      }
    }
  }
  return { globals, members };
}

test('ohos_5_consumer_rules_are_generated_from_index_dts', () => {
  const committed = fs.readFileSync(rulesPath, 'utf8');
  const generated = gen.generate(fs.readFileSync(dtsPath, 'utf8'));
  assert.equal(committed, generated,
    `${gen.RULES} is stale: run \`node scripts/gen-consumer-rules.js --write\``);
});

test('ohos_5_consumer_rules_keep_every_exported_class_method_and_property', () => {
  const rules = parseRules(fs.readFileSync(rulesPath, 'utf8'));
  const globals = rules.get('-keep-global-name') || new Set();
  const props = rules.get('-keep-property-name') || new Set();
  const api = apiNames();
  assert.ok(api.globals.size >= 20 && api.members.size >= 50,
    `the checker found too few names (${api.globals.size} exports, ${api.members.size} members)`);
  for (const n of ['AgentRuntime', 'HttpResponse', 'ToolResult', 'DEFAULT_SUMMARY_PROMPT', 'sumUsages']) {
    assert.ok(api.globals.has(n), `export ${n} not found by the checker`);
  }
  // openMemory: a static method only (SessionStore.openMemory), so the statics are walked too.
  for (const n of ['status', 'headers', 'body', 'content', 'isError', 'run', 'openMemory']) {
    assert.ok(api.members.has(n), `member ${n} not found by the checker`);
  }
  const missingGlobal = [...api.globals].filter((n) => !globals.has(n));
  const missingProp = [...api.globals, ...api.members].filter((n) => !props.has(n));
  assert.deepEqual(missingGlobal, [], 'exports not under -keep-global-name');
  assert.deepEqual(missingProp, [], 'names not under -keep-property-name');
});

test('ohos_5_rules_go_stale_when_index_dts_grows', () => {
  const source = fs.readFileSync(dtsPath, 'utf8') +
    '\nexport class Ohos5Probe {\n  probeMethod(): void;\n  readonly probeField: string;\n}\n' +
    'export interface Ohos5Shape { shapeProp: number }\nexport function ohos5Fn(): void;\n';
  const grown = parseRules(gen.generate(source));
  for (const n of ['Ohos5Probe', 'Ohos5Shape', 'ohos5Fn']) {
    assert.ok(grown.get('-keep-global-name').has(n), `${n} not kept as a global`);
  }
  for (const n of ['Ohos5Probe', 'probeMethod', 'probeField', 'shapeProp', 'ohos5Fn']) {
    assert.ok(grown.get('-keep-property-name').has(n), `${n} not kept as a property`);
  }
  assert.notEqual(gen.generate(source), fs.readFileSync(rulesPath, 'utf8'));
});

function loadHarHvigorfile() {
  const { hvigorfile, tasks } = loadHvigorfile('ohos/arkagent/hvigorfile.ts', 'harTasks');
  return { hvigorfile, harTasks: tasks };
}

test('ohos_5_har_without_native_library_fails_the_build', () => {
  const { hvigorfile, harTasks } = loadHarHvigorfile();
  const config = hvigorfile.default;
  assert.equal(config.system, harTasks);
  assert.equal(config.plugins.length, 1);
  assert.equal(config.plugins[0].pluginId, 'arkagentNativeLibCheck');
  // The default export checks the module's own directory (that of hvigorfile.ts).
  const seen = [];
  const realCheck = hvigorfile.checkNativeLib;
  assert.equal(typeof realCheck, 'function');
  const ohosDir = path.join(root, 'ohos/arkagent');
  const abis = fs.existsSync(path.join(ohosDir, 'libs')) ? hvigorfile.abisWithNativeLib(ohosDir) : [];
  const defaultTask = registeredTasks(config.plugins[0])[0];
  try {
    defaultTask.run();
    seen.push('ran');
  } catch (e) {
    assert.match(e.message, new RegExp('in ' + ohosDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') + ' '));
    seen.push('threw');
  }
  assert.deepEqual(seen, [abis.length > 0 ? 'ran' : 'threw']);

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ohos5-'));
  try {
    const tasks = registeredTasks(hvigorfile.nativeLibCheckPlugin(dir));
    assert.deepEqual(tasks.map((t) => [t.name, t.postDependencies]),
      [['default@ArkagentCheckNativeLib', ['default@PackageHar']]]);
    const run = () => tasks[0].run();

    // No libs/ at all, an empty ABI dir, an empty file, an unknown ABI: all fail.
    assert.throws(run, /no libs\/<abi>\/libarkagent\.so/);
    fs.mkdirSync(path.join(dir, 'libs/arm64-v8a'), { recursive: true });
    assert.throws(run, /no libs\/<abi>\/libarkagent\.so/);
    fs.writeFileSync(path.join(dir, 'libs/arm64-v8a/libarkagent.so'), '');
    assert.throws(run, /no libs\/<abi>\/libarkagent\.so/);
    fs.mkdirSync(path.join(dir, 'libs/riscv64'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'libs/riscv64/libarkagent.so'), '\x7fELF');
    assert.throws(run, /no libs\/<abi>\/libarkagent\.so/);

    // A library for one ABI is enough; every ABI present is reported.
    fs.mkdirSync(path.join(dir, 'libs/x86_64'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'libs/x86_64/libarkagent.so'), '\x7fELF');
    assert.deepEqual(hvigorfile.checkNativeLib(dir), ['x86_64']);
    run();
    fs.writeFileSync(path.join(dir, 'libs/arm64-v8a/libarkagent.so'), '\x7fELF');
    assert.deepEqual(hvigorfile.checkNativeLib(dir), ['arm64-v8a', 'x86_64']);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
