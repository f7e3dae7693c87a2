#!/usr/bin/env node
/*
 * Checks the declaration stubs of tests/arkts/stubs against the real OpenHarmony SDK
 * (SPEC OHOS-2). Two parts:
 *
 * 1. Always: every stub file names where it comes from, in a header line
 *      Source: interface_sdk-js <path in that repo> @ <tag>
 *    (`Source: ohpm @ohos/hypium <version> ...` for the hypium stub, which is not in the
 *    SDK), and the tag is the minimum API level's (OpenHarmony-v5.0.0-Release = API 12).
 *
 * 2. With --sdk DIR (a checkout of openharmony/interface_sdk-js at that tag, or a directory
 *    holding the files at the same relative paths): every declaration in each stub must be
 *    in the SDK file, at the same place (namespace / interface / class / enum), with the
 *    same signature text (comments and whitespace aside; an overload must match one of the
 *    SDK's overloads), and no member may be `@since` a later API level than --max-api
 *    (default 12). Kit files: every name a stub kit exports must be exported by the real
 *    kit, imported from the same module.
 *
 *   node check-stubs.js --stubs tests/arkts/stubs [--sdk DIR] [--max-api 12]
 *
 * Prints one line per problem and exits 1 when there is any; exits 2 on bad usage.
 * Needs the pinned ohos-typescript (npm ci in this directory).
 */
'use strict';

const fs = require('fs');
const path = require('path');
const ts = require('ohos-typescript');

const MIN_API_TAG = 'OpenHarmony-v5.0.0-Release';

function parseArgs(argv) {
  const args = { stubs: null, sdk: null, maxApi: 12 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--stubs') args.stubs = argv[++i];
    else if (a === '--sdk') args.sdk = argv[++i];
    else if (a === '--max-api') args.maxApi = Number(argv[++i]);
    else throw new Error('unknown argument ' + a);
  }
  if (!args.stubs || (args.sdk === undefined) || !Number.isInteger(args.maxApi)) {
    throw new Error('usage: node check-stubs.js --stubs DIR [--sdk DIR] [--max-api N]');
  }
  return args;
}

function stubFiles(dir) {
  const out = [];
  (function rec(d) {
    for (const ent of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, ent.name);
      if (ent.isDirectory()) rec(p);
      else if (/\.d\.e?ts$/.test(ent.name)) out.push(p);
    }
  })(dir);
  return out.sort();
}

/** The source named in a stub's header: { repo, file, tag } or null. */
function sourceOf(text) {
  const m = /Source:\s*interface_sdk-js\s+(\S+)\s+@\s+(\S+)/.exec(text);
  if (m) return { repo: 'interface_sdk-js', file: m[1], tag: m[2] };
  const h = /Source:\s*ohpm\s+(@ohos\/hypium)\s+(\S+)/.exec(text);
  if (h) return { repo: 'ohpm', file: h[1], tag: h[2] };
  return null;
}

const norm = (s) => s.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '')
  .replace(/'([^'"\\]*)'/g, '"$1"')
  .replace(/\s+/g, ' ').replace(/\s*([(){}<>,;:?=|&[\]])\s*/g, '$1').replace(/[;,]$/, '').trim();

function nameText(node) {
  if (!node.name) {
    if (ts.isConstructorDeclaration(node) || ts.isConstructSignatureDeclaration(node)) return 'constructor';
    if (ts.isCallSignatureDeclaration(node)) return '()';
    if (ts.isIndexSignatureDeclaration(node)) return '[]';
    return null;
  }
  return node.name.getText();
}

/** Text of a declaration without its body / members and without export/declare modifiers. */
function signature(node, sf) {
  let end = node.end;
  if (ts.isModuleDeclaration(node) || ts.isInterfaceDeclaration(node) ||
    ts.isClassDeclaration(node) || ts.isEnumDeclaration(node)) {
    const brace = sf.text.indexOf('{', node.name ? node.name.end : node.pos);
    end = brace >= 0 ? brace : node.end;
  }
  const text = sf.text.slice(node.getStart(sf), end);
  return norm(text.replace(/\b(export|declare|default)\s+/g, ''));
}

/** min @since of every JSDoc block on the node (the SDK repeats a block per variant). */
function since(node) {
  let min = null;
  for (const doc of node.jsDoc || []) {
    for (const tag of doc.tags || []) {
      if (tag.tagName.text !== 'since') continue;
      const c = typeof tag.comment === 'string' ? tag.comment : (tag.comment || []).map((x) => x.text).join('');
      const v = parseInt(c, 10);
      if (!Number.isNaN(v) && (min === null || v < min)) min = v;
    }
  }
  return min;
}

/** Map "a.b.c" -> [{ sig, since }] for every declaration in the file. */
function declarations(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2021, true, ts.ScriptKind.TS);
  const decls = new Map();
  const add = (key, node) => {
    if (!decls.has(key)) decls.set(key, []);
    decls.get(key).push({ sig: signature(node, sf), since: since(node) });
  };
  const members = (node, prefix) => {
    const list = node.members || (node.body && node.body.statements) || [];
    for (const m of list) visit(m, prefix);
  };
  function visit(node, prefix) {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isExportAssignment(node)) return;
    if (ts.isVariableStatement(node)) {
      for (const d of node.declarationList.declarations) add(prefix + d.name.getText(), d);
      return;
    }
    const name = nameText(node);
    if (name === null) return;
    const key = prefix + name;
    add(key, node);
    if (ts.isModuleDeclaration(node) || ts.isInterfaceDeclaration(node) ||
      ts.isClassDeclaration(node) || ts.isEnumDeclaration(node)) {
      members(node, key + '.');
    }
  }
  for (const s of sf.statements) visit(s, '');
  return { decls, sf };
}

/** name -> module specifier for every name a kit file imports and re-exports. */
function kitExports(sf) {
  const from = new Map();
  for (const s of sf.statements) {
    if (!ts.isImportDeclaration(s) || !s.importClause) continue;
    const mod = s.moduleSpecifier.text.replace(/^\.\//, '');
    const c = s.importClause;
    if (c.name) from.set(c.name.text, mod);
    if (c.namedBindings && ts.isNamedImports(c.namedBindings)) {
      for (const el of c.namedBindings.elements) from.set(el.name.text, mod);
    }
  }
  const out = new Map();
  for (const s of sf.statements) {
    if (ts.isExportDeclaration(s) && s.exportClause && ts.isNamedExports(s.exportClause)) {
      for (const el of s.exportClause.elements) out.set(el.name.text, from.get(el.name.text) || null);
    }
  }
  return out;
}

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write('check-stubs: ' + e.message + '\n');
    return 2;
  }
  const problems = [];
  let compared = 0;
  for (const file of stubFiles(args.stubs)) {
    const rel = path.relative(process.cwd(), file);
    const text = fs.readFileSync(file, 'utf8');
    const src = sourceOf(text);
    if (!src) {
      problems.push(rel + ': no `Source: interface_sdk-js <file> @ <tag>` line in the header');
      continue;
    }
    if (src.repo !== 'interface_sdk-js') continue; // hypium: from ohpm, not the SDK
    if (src.tag !== MIN_API_TAG) {
      problems.push(rel + ': written from ' + src.tag + ', expected the minimum API level\'s ' + MIN_API_TAG);
    }
    if (!args.sdk) continue;
    const real = path.join(args.sdk, src.file);
    if (!fs.existsSync(real)) {
      problems.push(rel + ': ' + src.file + ' not found under ' + args.sdk);
      continue;
    }
    const stub = declarations(file, text);
    const sdk = declarations(real, fs.readFileSync(real, 'utf8'));
    if (src.file.startsWith('kits/')) {
      const want = kitExports(stub.sf);
      const have = kitExports(sdk.sf);
      for (const [name, mod] of want) {
        compared++;
        const stubMod = (mod || '').replace(/^\.\//, '');
        if (!have.has(name)) problems.push(rel + ': ' + name + ' is not exported by ' + src.file);
        else if (have.get(name) !== stubMod) {
          problems.push(rel + ': ' + name + ' comes from ' + have.get(name) + ' in ' + src.file + ', not ' + stubMod);
        }
      }
      continue;
    }
    for (const [key, list] of stub.decls) {
      const theirs = sdk.decls.get(key);
      for (const d of list) {
        compared++;
        if (!theirs) {
          problems.push(rel + ': ' + key + ' is not declared in ' + src.file);
          continue;
        }
        const match = theirs.find((t) => t.sig === d.sig);
        if (!match) {
          problems.push(rel + ': ' + key + ': `' + d.sig + '` differs from the SDK: ' +
            theirs.map((t) => '`' + t.sig + '`').join(' | '));
        } else if (match.since !== null && match.since > args.maxApi) {
          problems.push(rel + ': ' + key + ' is @since ' + match.since + ', above the minimum API ' + args.maxApi);
        }
      }
    }
  }
  for (const p of problems) process.stdout.write(p + '\n');
  process.stderr.write('check-stubs: ' + (args.sdk ? compared + ' declarations compared with ' + args.sdk + ', ' : '') +
    problems.length + ' problem(s)\n');
  return problems.length === 0 ? 0 : 1;
}

process.exitCode = main();
