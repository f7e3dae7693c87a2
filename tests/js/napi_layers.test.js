'use strict';
// Issue 19 item 2 (house rule 12): the N-API crate has no import circle. Its modules sit
// on the layers listed in bindings/napi/src/lib.rs's docs, and every `crate::x` path of a
// module (a `use`, an inline path or a doc link) points to a module of a lower layer. The
// `ts` blocks (index.d.ts declarations) are not Rust and are left out.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const SRC = path.join(__dirname, '..', '..', 'bindings', 'napi', 'src');

/** Module name → layer number, from the numbered list in lib.rs's module docs. */
function layers() {
  const table = new Map();
  for (const line of fs.readFileSync(path.join(SRC, 'lib.rs'), 'utf8').split('\n')) {
    const m = /^\/\/! (\d+)\. (.*)$/.exec(line);
    if (!m) continue;
    // The module names are the backticked names before the first '(' of the line.
    for (const name of m[2].split('(')[0].matchAll(/`([a-z_]+)`/g)) table.set(name[1], Number(m[1]));
  }
  return table;
}

/** The modules a Rust source names through `crate::`, outside its ts blocks. */
function arrows(source) {
  let inBlock = false;
  const code = source.split('\n').filter((line) => {
    if (!inBlock && /^\/\* ts\s*$/.test(line)) { inBlock = true; return false; }
    if (inBlock) { if (line === '*/') inBlock = false; return false; }
    return true;
  }).join('\n');
  return new Set([...code.matchAll(/\bcrate::([a-z_][a-z0-9_]*)/g)].map((m) => m[1]));
}

test('napi_layers_every_module_is_on_a_layer', () => {
  const table = layers();
  assert.ok(table.size >= 15, `lib.rs lists ${table.size} modules`);
  const modules = fs.readdirSync(SRC).filter((f) => f.endsWith('.rs') && f !== 'lib.rs').map((f) => f.slice(0, -3));
  for (const m of modules) assert.ok(table.has(m), `${m}.rs is on a layer in lib.rs's list`);
  for (const m of table.keys()) assert.ok(modules.includes(m), `${m} (listed in lib.rs) exists`);
});

test('napi_layers_every_arrow_points_down', () => {
  const table = layers();
  let seen = 0;
  for (const f of fs.readdirSync(SRC).filter((name) => name.endsWith('.rs') && name !== 'lib.rs')) {
    const from = f.slice(0, -3);
    for (const to of arrows(fs.readFileSync(path.join(SRC, f), 'utf8'))) {
      if (to === from) continue;
      seen += 1;
      assert.ok(table.has(to), `${from} → ${to}: ${to} is on a layer`);
      assert.ok(table.get(to) < table.get(from),
        `${from} (layer ${table.get(from)}) → ${to} (layer ${table.get(to)}) points up or sideways`);
    }
  }
  assert.ok(seen > 40, `found ${seen} arrows`);
});

test('napi_layers_the_check_sees_an_upward_arrow', () => {
  // Guards the extraction: a doc link counts, a ts block does not.
  assert.deepEqual([...arrows('//! see [`crate::runtime`]\nuse crate::error::Thrown;\n/* ts\ncrate::x\n*/\n')].sort(),
    ['error', 'runtime']);
});
