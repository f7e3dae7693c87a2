'use strict';
/**
 * BND-2: the declarations of the N-API crate's own JS API — its classes, functions,
 * constants and the objects it takes or hands over (`#[napi(object)]`) — generated from
 * the crate itself. napi-derive writes one JSON line per `#[napi]` item while the crate
 * compiles with NAPI_TYPE_DEF_TMP_FOLDER set (scripts/test-js.sh and scripts/regen.sh do):
 * its signature as napi-derive types it (with the crate's `ts_type`, `ts_args_type` and
 * `ts_return_type` attributes) and its Rust doc comment, which is therefore the JS doc.
 * A ts-block line
 *
 *     // declare: AgentRuntime
 *
 * becomes the declaration of that item (scripts/gen-dts.js). Rules:
 * - a class: the struct's doc; its members in source order (every `#[napi] impl` block of
 *   it, in the crate's module order); a getter with its setter is a property, without one
 *   a `readonly` property, an `Optional<T>` getter an optional one (`name?: T`); a
 *   constructor whose doc begins "Instances come from" is `private constructor();` (its
 *   Rust body throws `private_constructor`); a factory or a function without `self` is
 *   `static`;
 * - a parameter `Option<T>` is optional (`name?: T`); `Arg<T>` and `Setting<T>` are `T`;
 *   `Array<T>` is `T[]` (scripts/dts-signatures.js's canonical spelling);
 * - docs are the Rust ones, rustdoc links reduced to their text.
 */

const sig = require('./dts-signatures');

const MARKER = /^\/\/ declare: ([A-Za-z_$][\w$]*)$/;

/** Rustdoc to JS doc text: `[`x`](path)` and `[x](path)` keep their text. */
function docLines(jsDoc) {
  const body = (jsDoc || '').trim().replace(/^\/\*\*/, '').replace(/\*\/$/, '');
  if (!body.includes('\n')) return body.trim() === '' ? [] : [body.trim()].map(unlink);
  const lines = body.split('\n').map((l) => l.replace(/^\s*\* ?/, '').replace(/\s+$/, ''));
  while (lines.length > 0 && lines[0].trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1].trim() === '') lines.pop();
  return lines.map(unlink);
}

function unlink(line) {
  return line.replace(/\[(`[^`]+`)\]\([^)]*\)/g, '$1').replace(/\[([^\]]+)\]\((?:crate|super|self)::[^)]*\)/g, '$1');
}

/** A doc comment at `indent` (empty when there is no doc). */
function renderDoc(lines, indent) {
  if (lines.length === 0) return [];
  if (lines.length === 1 && lines[0].length + indent.length + 7 <= 100) return [`${indent}/** ${lines[0]} */`];
  return [`${indent}/**`, ...lines.map((l) => (l === '' ? `${indent} *` : `${indent} * ${l}`)), `${indent} */`];
}

/** A member of a type-def `def`: its doc and its signature, split at the literal `\n`s. */
function membersOf(def) {
  return def.split('\\n').map((raw) => {
    const doc = /\/\*\*[\s\S]*?\*\//.exec(raw);
    return { doc: doc ? docLines(doc[0]) : [], line: raw.replace(/\/\*[\s\S]*?\*\//g, '').trim() };
  }).filter((m) => m.line !== '');
}

/** A canonical type as written for a reader: `null` and `undefined` last in a union. */
function display(type) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < type.length; i += 1) {
    const c = type[i];
    if ('([{<'.includes(c)) depth += 1;
    else if (')]}'.includes(c) || (c === '>' && type[i - 1] !== '=')) depth -= 1;
    else if (c === '|' && depth === 0) {
      parts.push(type.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(type.slice(start).trim());
  const empty = (x) => x === 'null' || x === 'undefined';
  return [...parts.filter((x) => !empty(x)), ...parts.filter(empty)].join(' | ');
}

const params = (text, aliases) => sig.parseParams(text, aliases).map((p) => sig.paramText({ ...p, type: display(p.type) })).join(', ');

/** The lines of a class's members, from its impl blocks in order. */
function classMembers(impls, aliases, owner) {
  const out = [];
  const setters = new Set();
  const all = impls.flatMap((def) => membersOf(def));
  for (const m of all) {
    const set = /^set ([\w$]+)\(/.exec(m.line);
    if (set) setters.add(set[1]);
  }
  const docOfSetter = new Map(all.filter((m) => /^set /.test(m.line)).map((m) => [/^set ([\w$]+)/.exec(m.line)[1], m.doc]));
  for (const m of all) {
    let match = /^constructor\(([\s\S]*)\)$/.exec(m.line);
    if (match) {
      const privateOne = m.doc.length > 0 && /^Instances come from/.test(m.doc[0]) && match[1].trim() === '';
      out.push(...renderDoc(m.doc, '  '), privateOne ? '  private constructor();' : `  constructor(${params(match[1], aliases)});`);
      continue;
    }
    match = /^get ([\w$]+)\(\)\s*:\s*([\s\S]+)$/.exec(m.line);
    if (match) {
      const parts = sig.canonicalParts(match[2], aliases);
      const doc = m.doc.length > 0 ? m.doc : docOfSetter.get(match[1]) || [];
      const mods = setters.has(match[1]) ? '' : 'readonly ';
      out.push(...renderDoc(doc, '  '), `  ${mods}${match[1]}${parts.undefinedOk ? '?' : ''}: ${display(sig.withNull(parts))};`);
      continue;
    }
    if (/^set /.test(m.line)) continue;
    match = /^(static )?([\w$]+)\(([\s\S]*)\)\s*:\s*([\s\S]+)$/.exec(m.line);
    if (!match) throw new Error(`gen-declarations: cannot read "${m.line}" of ${owner}`);
    out.push(...renderDoc(m.doc, '  '), `  ${match[1] || ''}${match[2]}(${params(match[3], aliases)}): ${display(sig.canonical(match[4], aliases))};`);
  }
  return out;
}

/** The fields of a `#[napi(object)]`. */
function interfaceFields(def, aliases, owner) {
  return membersOf(def).flatMap((m) => {
    const match = /^(readonly )?([\w$]+)(\?)?\s*:\s*([\s\S]+)$/.exec(m.line);
    if (!match) throw new Error(`gen-declarations: cannot read the field "${m.line}" of ${owner}`);
    const parts = sig.canonicalParts(match[4], aliases);
    const optional = Boolean(match[3]) || (parts.undefinedOk && parts.nullOk);
    const type = optional ? parts.type : sig.canonical(match[4], aliases);
    return [...renderDoc(m.doc, '  '), `  ${match[1] || ''}${match[2]}${optional ? '?' : ''}: ${display(type)};`];
  });
}

/**
 * Map name → declaration text of every item of the type definitions (JSON lines, as
 * napi-derive writes them).
 */
function declarations(typeDefText) {
  const entries = typeDefText.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  const aliases = new Map();
  for (const e of entries) {
    if (e.original_name && e.original_name !== e.name && (e.kind === 'interface' || e.kind === 'struct')) aliases.set(e.original_name, e.name);
  }
  const classOf = new Map(entries.filter((e) => e.kind === 'struct').map((e) => [e.original_name || e.name, e.name]));
  const impls = new Map();
  for (const e of entries.filter((x) => x.kind === 'impl')) {
    const name = classOf.get(e.name) || e.name;
    impls.set(name, [...(impls.get(name) || []), e.def]);
  }
  const out = new Map();
  for (const e of entries) {
    const doc = docLines(e.js_doc);
    if (e.kind === 'struct') {
      out.set(e.name, [...renderDoc(doc, ''), `export class ${e.name} {`, ...classMembers(impls.get(e.name) || [], aliases, e.name), '}'].join('\n'));
    } else if (e.kind === 'interface') {
      out.set(e.name, [...renderDoc(doc, ''), `export interface ${e.name} {`, ...interfaceFields(e.def, aliases, e.name), '}'].join('\n'));
    } else if (e.kind === 'fn') {
      const m = /^(?:export )?(?:declare )?function ([\w$]+)\(([\s\S]*)\)\s*:\s*([\s\S]+)$/.exec(e.def.replace(/\/\*[\s\S]*?\*\//g, '').trim());
      if (!m) throw new Error(`gen-declarations: cannot read the function "${e.def}"`);
      out.set(m[1], [...renderDoc(doc, ''), `export function ${m[1]}(${params(m[2], aliases)}): ${display(sig.canonical(m[3], aliases))};`].join('\n'));
    } else if (e.kind === 'const') {
      const m = /^(?:export )?(?:declare )?const ([\w$]+)\s*:\s*([\s\S]+)$/.exec(e.def.trim());
      if (!m) throw new Error(`gen-declarations: cannot read the constant "${e.def}"`);
      out.set(m[1], [...renderDoc(doc, ''), `export const ${m[1]}: ${sig.canonical(m[2], aliases)};`].join('\n'));
    }
  }
  return out;
}

/**
 * Replaces every `// declare: Name` line of `text` by Name's declaration. Throws for a
 * name the crate does not have, or one declared twice.
 */
function expandDeclarations(text, typeDefText) {
  const decls = declarations(typeDefText);
  const seen = new Set();
  return text.split('\n').map((line) => {
    const m = MARKER.exec(line);
    if (!m) return line;
    if (!decls.has(m[1])) throw new Error(`gen-declarations: "${line}" names no #[napi] item of the crate`);
    if (seen.has(m[1])) throw new Error(`gen-declarations: ${m[1]} is declared twice`);
    seen.add(m[1]);
    return decls.get(m[1]);
  }).join('\n');
}

module.exports = { declarations, expandDeclarations, docLines, MARKER };
