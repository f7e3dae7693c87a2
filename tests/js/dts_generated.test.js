'use strict';
// NAPI-2 / issue 19 item 4: index.d.ts is generated from the N-API crate (scripts/gen-dts.js
// assembles the `ts` blocks beside the Rust code of bindings/napi/src, and the closed-set
// unions that scripts/closed-sets prints from the Rust enums). These checks need no built
// module: the committed index.d.ts must be exactly what the generator writes (a hand edit,
// a block edited without regenerating, or an enum variant added, fails), and every `#[napi]` item of
// the crate — class, method, property, object field, function, constant — must be
// declared in it (a Rust API change without its declaration fails). dts_sync.test.js
// compares the declarations with the built module, both ways.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
const gen = require(path.join(ROOT, 'scripts', 'gen-dts.js'));

const committed = fs.readFileSync(path.join(ROOT, gen.DTS), 'utf8');

test('dts_generated_committed_file_is_what_the_generator_writes', () => {
  const generated = gen.generate();
  assert.ok(generated === committed,
    `${gen.DTS} differs from the ts blocks of ${gen.SRC}: edit the blocks and run scripts/gen-dts.sh ` +
    `(first difference at ${gen.firstDifference(generated, committed)})`);
});

test('dts_generated_check_mode_fails_on_a_hand_edit', () => {
  // The generator's own check, as scripts/gen-dts.sh --check runs it, against a copy.
  const { execFileSync } = require('node:child_process');
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'gen-dts.js'), '--check'], { cwd: ROOT });
  const edited = committed.replace('export class AgentRuntime {', 'export class AgentRuntime {\n  extra(): void;');
  assert.notEqual(edited, committed);
  assert.notEqual(gen.firstDifference(gen.generate(), edited), 'no difference');
});

test('dts_generated_blocks_must_be_closed', () => {
  assert.deepEqual(gen.blocksOf('x\n/* ts\na\nb\n*/\ny\n/* ts\nc\n*/\n', 'f.rs'), [['a', 'b'], ['c']]);
  assert.throws(() => gen.blocksOf('/* ts\na\n', 'f.rs'), /not closed/);
});

/** JS name of a Rust snake_case name, as napi-derive converts it. */
function camel(name) {
  return name.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/** Strips comments, keeping line structure. */
function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
}

/** Top-level declarations of the d.ts: name → Set of member names ('' for non-class kinds). */
function declared(text) {
  const source = stripComments(text);
  const names = new Map();
  const header = /export\s+(?:declare\s+)?(class|interface)\s+([A-Za-z_$][\w$]*)[^{]*\{/g;
  let match;
  while ((match = header.exec(source)) !== null) {
    let depth = 1;
    let i = header.lastIndex;
    for (; i < source.length && depth > 0; i += 1) {
      if (source[i] === '{') depth += 1;
      else if (source[i] === '}') depth -= 1;
    }
    const members = new Set();
    for (const raw of source.slice(header.lastIndex, i - 1).split(';')) {
      const m = /^\s*(?:readonly\s+)?(?:static\s+)?([A-Za-z_$][\w$]*)\??\s*[:(]/.exec(raw);
      if (m) members.add(m[1]);
    }
    names.set(match[2], members);
    header.lastIndex = i;
  }
  for (const m of source.matchAll(/export\s+(?:declare\s+)?(?:const|function|type)\s+([A-Za-z_$][\w$]*)/g)) {
    names.set(m[1], new Set());
  }
  return names;
}

/** A Rust source without its `ts` blocks (they nest comments, which stripComments does not know). */
function withoutTsBlocks(source) {
  const out = [];
  let inBlock = false;
  for (const line of source.split('\n')) {
    if (!inBlock && /^\/\* ts\s*$/.test(line)) inBlock = true;
    else if (inBlock && line === '*/') inBlock = false;
    out.push(inBlock || line === '*/' ? '' : line);
  }
  return out.join('\n');
}

/**
 * The JS API the crate's `#[napi]` items define: [{ owner, name }] (owner undefined for a
 * module-level export). Reads the attribute before each item; `js_name` wins.
 */
function napiItems() {
  const dir = path.join(ROOT, gen.SRC);
  const items = [];
  const classNames = new Map(); // Rust struct name → JS name
  const sources = fs.readdirSync(dir).filter((f) => f.endsWith('.rs')).sort()
    .map((f) => ({ f, lines: stripComments(withoutTsBlocks(fs.readFileSync(path.join(dir, f), 'utf8'))).split('\n') }));
  // Pass 1: classes and objects (their JS names are needed for impl blocks in any file).
  for (const { lines } of sources) {
    let attr = null;
    let object = null;
    lines.forEach((line) => {
      const a = /^\s*#\[napi(?:\((.*)\))?\]\s*$/.exec(line);
      if (a) { attr = a[1] || ''; return; }
      if (/^\s*#\[/.test(line)) return;
      const s = /^pub struct (\w+)/.exec(line);
      if (s && attr !== null) {
        const jsName = (/js_name\s*=\s*"([^"]+)"/.exec(attr) || [])[1] || s[1];
        classNames.set(s[1], jsName);
        items.push({ owner: undefined, name: jsName });
        object = /\bobject\b/.test(attr) ? jsName : null;
      } else if (object && /^\s*pub (\w+):/.test(line)) {
        const field = /^\s*pub (\w+):/.exec(line)[1];
        items.push({ owner: object, name: (/js_name\s*=\s*"([^"]+)"/.exec(attr || '') || [])[1] || camel(field) });
      } else if (/^}/.test(line)) {
        object = null;
      }
      if (line.trim() !== '') attr = null;
    });
  }
  // Pass 2: methods, properties, functions, constants.
  for (const { lines } of sources) {
    let attr = null;
    let owner = null; // JS class of the #[napi] impl block we are in
    lines.forEach((line) => {
      const a = /^\s*#\[napi(?:\(([\s\S]*?)\))?\]\s*$/.exec(line) || /^\s*#\[napi\($/.exec(line);
      if (a) { attr = a[1] || ''; return; }
      if (attr !== null && /^\s*(ts_|constructor|getter|setter|js_name|factory|\))/.test(line.trim())) {
        attr += ` ${line.trim()}`;
        return;
      }
      if (/^\s*#\[/.test(line)) return;
      const impl = /^impl (\w+) \{/.exec(line);
      if (impl) { owner = attr !== null ? classNames.get(impl[1]) : null; attr = null; return; }
      if (/^}/.test(line)) owner = null;
      const fn = /^\s*pub fn (\w+)/.exec(line);
      const constant = /^pub const (\w+)/.exec(line);
      if (attr !== null && fn && !/\bconstructor\b/.test(attr)) {
        const rustName = /\bsetter\b/.test(attr) ? fn[1].replace(/^set_/, '') : fn[1];
        const name = (/js_name\s*=\s*"([^"]+)"/.exec(attr) || [])[1] || camel(rustName);
        items.push({ owner: /^pub fn/.test(line) ? undefined : owner, name });
      } else if (attr !== null && constant) {
        items.push({ owner: undefined, name: constant[1] });
      }
      if (line.trim() !== '') attr = null;
    });
  }
  return items;
}

test('dts_generated_every_napi_item_of_the_crate_is_declared', () => {
  const declarations = declared(committed);
  const items = napiItems();
  // Guards the parser: a broken regex must not make the check vacuous.
  for (const [owner, name] of [['AgentRuntime', 'run'], ['AgentRuntime', 'sessionId'], ['AgentRuntime', 'runDecomposed'],
    ['ModelConfig', 'maxTokens'], ['AgentEvent', 'type'], [undefined, 'computeSafeSplitIndex'],
    [undefined, 'DEFAULT_SUMMARY_PROMPT'], [undefined, 'sumUsages'], ['SubAgentDefinition', 'create']]) {
    assert.ok(items.some((i) => i.owner === owner && i.name === name), `the parser sees ${owner ?? '(module)'}.${name}`);
  }
  assert.ok(items.length > 150, `found ${items.length} items`);
  for (const { owner, name } of items) {
    if (owner === undefined) {
      assert.ok(declarations.has(name), `${name} (a #[napi] item of ${gen.SRC}) is declared in index.d.ts`);
    } else {
      assert.ok(declarations.has(owner), `${owner} is declared in index.d.ts`);
      assert.ok(declarations.get(owner).has(name), `${owner}.${name} (a #[napi] item of ${gen.SRC}) is declared in index.d.ts`);
    }
  }
});

/**
 * BND-2: the interfaces and classes still written by hand in the crate's ts blocks — each
 * with why no Rust type declares it. Everything else is generated: the records from the
 * core's types, the module's classes, functions, constants and objects from its #[napi]
 * items with their Rust docs (`// declare: Name`).
 */
const HOST_SHAPES = {
  NativeError: 'a JS Error with a `code`: what the engine throws, no value the crate builds',
  HttpRequest: 'built by hand for the host transport (its body an ArrayBuffer over the library\'s bytes)',
};

/** The hand-written lines of the crate's ts blocks (markers and blank lines left out). */
function handLines() {
  const lines = [];
  for (const module of gen.MODULES) {
    const file = path.join(ROOT, gen.SRC, `${module}.rs`);
    for (const block of gen.blocksOf(fs.readFileSync(file, 'utf8'), file)) {
      lines.push(...block.filter((l) => l.trim() !== '' && !/^\/\/ declare: /.test(l) && l !== gen.RECORDS_MARKER && l !== gen.CLOSED_SETS_MARKER));
    }
  }
  return lines;
}

test('bnd_2 hand TypeScript in the N-API crate is at most 700 lines, and every hand interface or class is a host shape', () => {
  const hand = handLines();
  assert.ok(hand.length <= 700, `${hand.length} hand-written TypeScript lines`);
  assert.ok(hand.length > 50, 'the count sees the blocks');
  const declared = hand.map((l) => /^export (?:declare )?(?:interface|class) ([A-Za-z_$][\w$]*)/.exec(l)).filter(Boolean).map((m) => m[1]);
  assert.deepEqual(declared.sort(), Object.keys(HOST_SHAPES).sort(),
    'an interface or class written by hand that is no host shape: declare it in Rust (a core record, or a #[napi] item with `// declare: Name`)');
});

test('bnd_2 every exported interface and class of index.d.ts is generated or a host shape', () => {
  const generatedNames = new Set();
  for (const m of committed.matchAll(/^export (?:interface|class) ([A-Za-z_$][\w$]*)/gm)) generatedNames.add(m[1]);
  const hand = new Set(handLines().map((l) => /^export (?:interface|class) ([A-Za-z_$][\w$]*)/.exec(l)).filter(Boolean).map((m) => m[1]));
  for (const name of generatedNames) {
    assert.ok(!hand.has(name) || name in HOST_SHAPES, `${name} is written by hand`);
  }
  // The done-when of issue 36: one declaration of ModelUsage in index.d.ts.
  assert.equal([...committed.matchAll(/^export interface ModelUsage \{/gm)].length, 1);
  assert.ok(!/UsagePayload|CostPayload/.test(committed), 'no second copy of the usage records');
});

test('bnd_2 a class is declared from its #[napi] items with their Rust docs, and a doc change reaches the d.ts', () => {
  const defs = fs.readFileSync(require(path.join(ROOT, 'scripts', 'dts-signatures.js')).defaultTypeDefFile(), 'utf8');
  const decl = require(path.join(ROOT, 'scripts', 'gen-declarations.js'));
  const model = decl.declarations(defs).get('ModelConfig');
  assert.match(model, /^export class ModelConfig \{/m);
  assert.ok(committed.includes(model), 'index.d.ts holds the generated ModelConfig');
  // A doc edited in Rust (here: in the type definitions napi-derive writes from it) changes the declaration.
  const edited = defs.replace('The provider protocol (default', 'The wire protocol (default');
  assert.notEqual(edited, defs);
  assert.match(decl.declarations(edited).get('ModelConfig'), /The wire protocol \(default/);
  // A private constructor (documented "Instances come from …") stays private.
  assert.match(decl.declarations(defs).get('SubAgentChildEvent'), /\n {2}private constructor\(\);/);
  assert.throws(() => decl.expandDeclarations('// declare: NoSuchItem', defs), /names no #\[napi\] item/);
});
