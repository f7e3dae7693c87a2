#!/usr/bin/env node
'use strict';
/**
 * Generates ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts (the type declarations
 * of the N-API module, NAPI-2) from the N-API crate: each module of bindings/napi/src
 * declares its own JS API, with the docs, in `ts` comment blocks beside its Rust code —
 *
 *     // index.d.ts: …
 *     /* ts
 *     export class Foo { … }
 *     *\/            (a line holding only the comment's end)
 *
 * — and this script concatenates the blocks, module by module in MODULES order, block by
 * block in file order. Usage:
 *
 *   node scripts/gen-dts.js            writes index.d.ts (scripts/gen-dts.sh does this)
 *   node scripts/gen-dts.js --check    exits 1 when index.d.ts differs from what it would
 *                                      write (tests/js/dts_generated.test.js does this)
 *
 * A module with a block that is not in MODULES, or a listed module without a file, is an
 * error: no declaration is dropped silently.
 */

const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const SRC = 'bindings/napi/src';
const DTS = 'ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts';

/** The order of the modules' declarations in index.d.ts: the file header first. */
const MODULES = [
  'lib',
  'transport',
  'tools',
  'memory',
  'events',
  'usage',
  'model_config',
  'compression',
  'config',
  'delegation',
  'sub_agents',
  'parity',
  'store',
  'runtime',
  'runtime_delegation',
];

const BLOCK_START = /^\/\* ts\s*$/;
const BLOCK_END = '*/';

/** The `ts` blocks of one Rust source, in order, each as its lines. Throws on an unclosed block. */
function blocksOf(source, file) {
  const blocks = [];
  let current = null;
  source.split('\n').forEach((line, i) => {
    if (current === null) {
      if (BLOCK_START.test(line)) current = [];
    } else if (line === BLOCK_END) {
      blocks.push(current);
      current = null;
    } else {
      if (BLOCK_START.test(line)) throw new Error(`${file}:${i + 1}: a ts block inside a ts block`);
      current.push(line);
    }
  });
  if (current !== null) throw new Error(`${file}: a ts block is not closed by a line "${BLOCK_END}"`);
  return blocks;
}

/** The text of index.d.ts as the crate's blocks give it. */
function generate(root = ROOT) {
  const dir = path.join(root, SRC);
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.rs')).sort();
  for (const f of files) {
    const module = f.slice(0, -3);
    if (!MODULES.includes(module) && blocksOf(fs.readFileSync(path.join(dir, f), 'utf8'), f).length > 0) {
      throw new Error(`${SRC}/${f} has ts blocks but is not listed in MODULES of scripts/gen-dts.js`);
    }
  }
  const parts = [];
  for (const module of MODULES) {
    const file = path.join(dir, `${module}.rs`);
    if (!fs.existsSync(file)) throw new Error(`${SRC}/${module}.rs (listed in MODULES) does not exist`);
    for (const block of blocksOf(fs.readFileSync(file, 'utf8'), `${SRC}/${module}.rs`)) {
      const text = block.join('\n').replace(/^\n+|\n+$/g, '');
      if (text !== '') parts.push(text);
    }
  }
  return `${parts.join('\n\n')}\n`;
}

/** The first line where the two texts differ, for a readable failure. */
function firstDifference(expected, actual) {
  const a = expected.split('\n');
  const b = actual.split('\n');
  for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
    if (a[i] !== b[i]) {
      return `line ${i + 1}:\n  generated: ${JSON.stringify(a[i])}\n  committed: ${JSON.stringify(b[i])}`;
    }
  }
  return 'no difference';
}

function main(argv) {
  const generated = generate();
  const target = path.join(ROOT, DTS);
  if (argv.includes('--check')) {
    const committed = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
    if (committed !== generated) {
      console.error(`${DTS} is stale or was edited by hand; edit the ts blocks in ${SRC} and run ` +
        `scripts/gen-dts.sh.\nFirst difference at ${firstDifference(generated, committed)}`);
      return 1;
    }
    return 0;
  }
  fs.writeFileSync(target, generated);
  return 0;
}

module.exports = { generate, blocksOf, firstDifference, MODULES, DTS, SRC };

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
