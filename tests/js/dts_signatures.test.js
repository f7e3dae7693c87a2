'use strict';
// NAPI-2 / ARCH-2: the argument and return types of index.d.ts are those of the crate.
// napi-derive-ohos writes a type definition of every #[napi] item while it expands
// bindings/napi (scripts/test-js.sh has it write $CARGO_TARGET_DIR/napi-type-def/arkagent-napi
// during its build); scripts/dts-signatures.js compares them with the d.ts, member by
// member, through an explicit mapping of the spellings ArkTS forces. These tests run it on
// the committed d.ts, and prove that it catches a wrong type planted in a ts block.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const gen = require(path.join(ROOT, 'scripts', 'gen-dts.js'));
const sig = require(path.join(ROOT, 'scripts', 'dts-signatures.js'));

const TYPE_DEF_FILE = sig.defaultTypeDefFile();

function typeDefs() {
  assert.ok(fs.existsSync(TYPE_DEF_FILE),
    `${TYPE_DEF_FILE} is missing: run scripts/test-js.sh (its build has napi-derive write the type definitions)`);
  return fs.readFileSync(TYPE_DEF_FILE, 'utf8');
}

const committed = () => fs.readFileSync(path.join(ROOT, gen.DTS), 'utf8');

test('NAPI-2 the type definitions cover the whole crate (the check is not vacuous)', () => {
  const { declarations } = sig.napiDeclarations(typeDefs());
  const member = (owner, key) => declarations.get(owner) && declarations.get(owner).members.get(key);
  assert.ok(declarations.size >= 40, `${declarations.size} #[napi] items`);
  assert.equal(member('AgentRuntime', 'run').type, 'Promise<RunResult>');
  assert.deepEqual(member('AgentRuntime', 'run').params, [{ name: 'input', optional: false, type: 'string' }]);
  assert.equal(member('AgentRuntime', 'sessionId').readonly, true);
  assert.equal(member('ModelConfig', 'maxTokens').optional, true, 'Optional<number> getter: an optional property');
  assert.equal(member('ModelConfig', 'maxTokens').readonly, false, 'with a setter: writable');
  assert.equal(member('AgentRuntime', 'usages').type, 'ModelUsage[]', 'a record, from ts_return_type');
  assert.deepEqual(member('sumUsages', 'call').params, [{ name: 'usages', optional: false, type: 'ModelUsage[]' }], 'a record argument, from ts_arg_type');
  assert.equal(member('SubAgentDefinition', 'static create').isStatic, true);
  assert.equal(member('DecomposedResult', 'status').type, 'ChildStatus', 'the closed set, from ts_return_type');
  assert.equal(member('AgentEvent', 'type').type, 'EventType', 'the closed set, from ts_type');
  assert.equal(member('computeSafeSplitIndex', 'call').type, 'number');
});

test('NAPI-2 every #[napi] signature\'s argument and return types equal the d.ts declaration', () => {
  assert.deepEqual(sig.compare(typeDefs(), committed()), []);
});

test('ARCH-2 the signature check spells napi-derive\'s types as the d.ts does (the explicit mapping)', () => {
  const none = new Map();
  const aliases = new Map([['JsModelUsage', 'ModelUsage']]);
  assert.equal(sig.canonical('Arg<string>', none), 'string');
  assert.equal(sig.canonical('Setting<Array<string>>', none), 'string[]');
  assert.equal(sig.canonical('Optional<JsModelUsage>', aliases), 'ModelUsage | undefined');
  assert.equal(sig.canonical('Promise<Array<DecomposedResult>>', none), 'Promise<DecomposedResult[]>');
  assert.equal(sig.canonical('Uint8Array | ArrayBuffer', none), sig.canonical('ArrayBuffer | Uint8Array', none));
  assert.equal(sig.canonical('(event: Arg<AgentEvent>) => void', none), '(event: AgentEvent) => void');
  assert.notEqual(sig.canonical('string', none), sig.canonical('number', none));
  assert.notEqual(sig.canonical('string[] | null', none), sig.canonical('string[]', none));
});

/** A copy of the crate's sources with `edit(file text)` applied to `file`. */
function plantedRoot(edits) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dts-planted-'));
  const src = path.join(root, gen.SRC);
  fs.mkdirSync(src, { recursive: true });
  for (const f of fs.readdirSync(path.join(ROOT, gen.SRC))) {
    let text = fs.readFileSync(path.join(ROOT, gen.SRC, f), 'utf8');
    for (const [file, from, to] of edits) {
      if (file === f) {
        assert.ok(text.includes(from), `${f} holds ${from}`);
        text = text.replace(from, to);
      }
    }
    fs.writeFileSync(path.join(src, f), text);
  }
  return root;
}

/**
 * The generated declaration of `name` in the committed d.ts, with `edits` applied: what a
 * hand-written copy of it that drifted from the crate would say.
 */
function drifted(name, edits) {
  const found = new RegExp(`^export ${name}[ (]`, 'm').exec(committed());
  assert.ok(found, `index.d.ts declares ${name}`);
  const start = found.index;
  const docStart = committed().lastIndexOf('/**', start);
  const end = name.startsWith('function') ? committed().indexOf(';', start) + 1 : committed().indexOf('\n}\n', start) + 2;
  let text = committed().slice(committed().slice(docStart, start).includes('*/\n') ? docStart : start, end);
  for (const [from, to] of edits) {
    assert.ok(text.includes(from), `${name} holds ${from}`);
    text = text.replace(from, to);
  }
  return text;
}

test('ARCH-2 a wrong type planted in a ts block fails the signature check', () => {
  const sets = gen.closedSets();
  // Hand copies of generated declarations put back in the blocks, each drifted: a wrong
  // argument type, a wrong return type, a closed set widened back to string, a required
  // parameter made optional, and a property made writable.
  const root = plantedRoot([
    ['runtime.rs', '// declare: AgentRuntime', drifted('class AgentRuntime', [
      ['  run(input: string): Promise<RunResult>;', '  run(input: number): Promise<RunResult>;'],
      ['  historyJson(): string;', '  historyJson(): string[];'],
    ])],
    ['sub_agents.rs', '// declare: DecomposedResult', drifted('class DecomposedResult', [['  readonly status?: ChildStatus;', '  readonly status?: string;']])],
    ['seed_helpers.rs', '// declare: toolCallsPaired', drifted('function toolCallsPaired', [['toolCallsPaired(messagesJson: string)', 'toolCallsPaired(messagesJson?: string)']])],
    ['events.rs', '// declare: SubAgentChildEvent', drifted('class SubAgentChildEvent', [['  readonly depth: number;', '  depth: number;']])],
  ]);
  try {
    const planted = gen.generate(root, sets);
    const problems = sig.compare(typeDefs(), planted);
    const about = (prefix) => problems.filter((p) => p.startsWith(prefix));
    assert.equal(about('AgentRuntime.run:').length, 1, problems.join('\n'));
    assert.match(about('AgentRuntime.run:')[0], /run\(input: number\).*the crate has `run\(input: string\)/);
    assert.equal(about('AgentRuntime.historyJson:').length, 1, problems.join('\n'));
    assert.equal(about('DecomposedResult.status:').length, 1, problems.join('\n'));
    assert.match(about('DecomposedResult.status:')[0], /readonly status\?: ChildStatus/);
    assert.equal(about('toolCallsPaired:').length, 1, problems.join('\n'));
    assert.equal(about('SubAgentChildEvent.depth:').length, 1, problems.join('\n'));
    assert.equal(problems.length, 5, problems.join('\n'));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  // Unplanted, the same copy agrees.
  const clean = plantedRoot([]);
  try {
    assert.deepEqual(sig.compare(typeDefs(), gen.generate(clean, sets)), []);
  } finally {
    fs.rmSync(clean, { recursive: true, force: true });
  }
});

test('NAPI-2 a member on one side only fails the signature check, both ways', () => {
  const dts = committed();
  const extra = dts.replace('  cancel(): void;\n', '  cancel(): void;\n  pause(): void;\n');
  assert.notEqual(extra, dts);
  assert.deepEqual(sig.compare(typeDefs(), extra), ['AgentRuntime.pause: declared in index.d.ts (pause(): void), not in the crate']);
  const missing = dts.replace('  cancel(): void;\n', '');
  assert.notEqual(missing, dts);
  assert.deepEqual(sig.compare(typeDefs(), missing), ['AgentRuntime.cancel: in the crate (cancel(): void), not declared in index.d.ts']);
  const ghost = `${dts}\nexport function ghost(): void;\n`;
  assert.deepEqual(sig.compare(typeDefs(), ghost), ['ghost: a function of index.d.ts that is no #[napi] item of the crate']);
});
