#!/usr/bin/env node
'use strict';
/**
 * Checks the argument and return types of index.d.ts against the N-API crate itself
 * (NAPI-2, ARCH-2): napi-derive-ohos writes a type definition of every `#[napi]` item
 * while it expands the crate (its `type-def` feature, on by default: one JSON line per
 * item into $NAPI_TYPE_DEF_TMP_FOLDER/arkagent-napi; scripts/test-js.sh sets the folder
 * to $CARGO_TARGET_DIR/napi-type-def for its build). Every class (constructor, methods,
 * static methods, getters and setters as properties), object interface, function and
 * constant found there must be declared in the d.ts with the same parameters (names,
 * optionality, types), return type, property type, optionality and readonly-ness; and
 * every member the d.ts declares for such an item must exist in the crate.
 *
 * Where ArkTS (or our house style) spells a type differently from napi-derive, the
 * mapping is explicit (see `canonical` and `NAPI_WRAPPERS`):
 *   - `Arg<T>`, `Setting<T>` (the crate's refusal wrappers, bindings/napi/src/args.rs)
 *     are `T`; `Array<T>` is `T[]`; a union's order does not matter;
 *   - `Optional<T>` (bindings/napi/src/convert.rs) returned by a method is `T | undefined`;
 *     returned by a getter it is an optional property `name?: T`;
 *   - a parameter `T | undefined | null` (a Rust `Option<T>`) is an optional parameter
 *     `name?: T`, and so is a setter's value for an optional property;
 *   - Rust struct names are the JS names they were given (`JsModelUsage` is `ModelUsage`);
 *   - a constructor declared `private constructor()` in the d.ts is napi's `constructor()`
 *     (the module's own classes: it throws "private_constructor").
 * A member whose Rust signature cannot say the type (a JS callback, a Promise, a closed
 * set) carries napi-derive's `ts_args_type` / `ts_return_type` / `ts_type` attribute,
 * which is then compared like any other type.
 *
 * Declarations that are not `#[napi]` items (type aliases such as the closed-set unions,
 * callback types, event payload interfaces, HttpRequest) are not compared here; a class,
 * function or constant of the d.ts must be one.
 *
 *   node scripts/dts-signatures.js [TYPE_DEF_FILE]   prints each mismatch; exit 1 if any
 */

const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const DTS = 'ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts';

/** Where scripts/test-js.sh has napi-derive write the type definitions. */
function defaultTypeDefFile() {
  if (process.env.ARKAGENT_NAPI_TYPE_DEF) return process.env.ARKAGENT_NAPI_TYPE_DEF;
  const target = path.resolve(ROOT, process.env.CARGO_TARGET_DIR || 'target');
  return path.join(target, 'napi-type-def', 'arkagent-napi');
}

/** The crate's type wrappers that stand for their argument in JS. */
const NAPI_WRAPPERS = ['Arg', 'Setting'];

// ---------------------------------------------------------------------------------------
// Types as text: splitting at the top level, and one canonical spelling.

/** Splits `text` at `sep` characters outside (), <>, [], {} (an arrow's `>` is no bracket). */
function splitTop(text, sep) {
  const parts = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '(' || c === '[' || c === '{' || c === '<') depth += 1;
    else if (c === ')' || c === ']' || c === '}' || (c === '>' && text[i - 1] !== '=')) depth -= 1;
    else if (c === sep && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p, i, all) => p !== '' || all.length === 1);
}

/** `Name<inner>` → [Name, inner] when the whole text is one generic application. */
function generic(text) {
  const m = /^([A-Za-z_$][\w$]*)<([\s\S]*)>$/.exec(text);
  if (!m) return null;
  // The closing `>` must match the first `<`.
  return splitTop(`${m[2]}`, ',').length >= 1 && balanced(m[2]) ? [m[1], m[2]] : null;
}

function balanced(text) {
  let depth = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '<' || c === '(' || c === '[') depth += 1;
    else if (c === ')' || c === ']' || (c === '>' && text[i - 1] !== '=')) depth -= 1;
    if (depth < 0) return false;
  }
  return depth === 0;
}

/** Strips one level of parentheses around a whole type. */
function unparen(text) {
  const t = text.trim();
  if (t.startsWith('(') && t.endsWith(')') && balanced(t.slice(1, -1)) && !/=>/.test(t.slice(t.lastIndexOf(')')))) {
    // `(a: T) => U` is a function type, not a parenthesized one.
    const inner = t.slice(1, -1);
    if (splitTop(inner, ',').length === 1 && !/^\s*[\w$]+\??\s*:/.test(inner)) return unparen(inner);
  }
  return t;
}

/**
 * The canonical spelling of a type: wrappers removed, `Array<T>` as `T[]`, aliases
 * renamed, union members sorted, whitespace normalized. Returns { type, undefinedOk, nullOk }
 * with `undefined` and `null` taken out of a top-level union.
 */
function canonicalParts(text, aliases) {
  const members = splitTop(unparen(text), '|').flatMap((m) => {
    let t = unparen(m);
    let g = generic(t);
    while (g && NAPI_WRAPPERS.includes(g[0])) {
      t = unparen(g[1]);
      g = generic(t);
    }
    if (g && g[0] === 'Optional') return [...splitTop(g[1], '|'), 'undefined'];
    return splitTop(t, '|').length > 1 ? splitTop(t, '|') : [t];
  });
  let undefinedOk = false;
  let nullOk = false;
  const rest = [];
  for (const m of members) {
    const c = canonical(m, aliases);
    if (c === 'undefined') undefinedOk = true;
    else if (c === 'null') nullOk = true;
    else rest.push(c);
  }
  return { type: [...new Set(rest)].sort().join(' | '), undefinedOk, nullOk };
}

/** The canonical spelling of one type (see canonicalParts). */
function canonical(text, aliases) {
  let t = unparen(text.replace(/\s+/g, ' ').trim());
  const union = splitTop(t, '|');
  if (union.length > 1) return joinUnion(canonicalParts(t, aliases));
  const g = generic(t);
  if (g) {
    const [name, inner] = g;
    if (NAPI_WRAPPERS.includes(name)) return canonical(inner, aliases);
    if (name === 'Optional') return canonical(`${inner} | undefined`, aliases);
    if (name === 'Array') return arrayOf(canonical(inner, aliases));
    return `${aliases.get(name) || name}<${splitTop(inner, ',').map((a) => canonical(a, aliases)).join(', ')}>`;
  }
  if (t.endsWith('[]') && balanced(t.slice(0, -2))) return arrayOf(canonical(t.slice(0, -2), aliases));
  const fn = /^\(([\s\S]*)\)\s*=>\s*([\s\S]+)$/.exec(t);
  if (fn && balanced(fn[1])) {
    const params = parseParams(fn[1], aliases).map(paramText).join(', ');
    return `(${params}) => ${canonical(fn[2], aliases)}`;
  }
  if (/^[A-Za-z_$][\w$]*$/.test(t)) return aliases.get(t) || t;
  return t;
}

/** canonicalParts' result as one union type, members sorted. */
function joinUnion(parts) {
  const members = parts.type === '' ? [] : splitTop(parts.type, '|');
  if (parts.undefinedOk) members.push('undefined');
  if (parts.nullOk) members.push('null');
  return members.sort().join(' | ');
}

function arrayOf(element) {
  return /[ |]/.test(element) ? `(${element})[]` : `${element}[]`;
}

/** Parameters `a: T, b?: U` → [{ name, optional, type }] (type canonical). */
function parseParams(text, aliases) {
  if (text.trim() === '') return [];
  return splitTop(text, ',').map((raw) => {
    const m = /^([A-Za-z_$][\w$]*)(\?)?\s*:\s*([\s\S]+)$/.exec(raw.trim());
    if (!m) throw new Error(`cannot parse the parameter "${raw.trim()}"`);
    const parts = canonicalParts(m[3], aliases);
    // napi's Option<T> parameter: `T | undefined | null`; the d.ts spelling: `name?: T`.
    if (m[2] || (parts.undefinedOk && parts.nullOk)) {
      return { name: m[1], optional: true, type: parts.type };
    }
    return { name: m[1], optional: false, type: canonical(m[3], aliases) };
  });
}

function paramText(p) {
  return `${p.name}${p.optional ? '?' : ''}: ${p.type}`;
}

/** A member as one comparable line. */
function memberText(m) {
  switch (m.kind) {
    case 'constructor':
      return `constructor(${m.params.map(paramText).join(', ')})`;
    case 'method':
      return `${m.isStatic ? 'static ' : ''}${m.name}(${m.params.map(paramText).join(', ')}): ${m.type}`;
    default:
      return `${m.readonly ? 'readonly ' : ''}${m.name}${m.optional ? '?' : ''}: ${m.type}`;
  }
}

// ---------------------------------------------------------------------------------------
// The crate's side: napi-derive's type definitions.

/** Removes `/** … *\/` docs from a type-def line. */
function stripDocs(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').trim();
}

/**
 * Parses the type-def file (JSON lines) into Map name → { kind, members: Map key → member }
 * with kinds 'class', 'interface', 'function', 'const'.
 */
function napiDeclarations(typeDefText) {
  const entries = typeDefText.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
  const aliases = new Map();
  for (const e of entries) {
    if (e.original_name && e.original_name !== e.name && (e.kind === 'interface' || e.kind === 'struct')) {
      aliases.set(e.original_name, e.name);
    }
  }
  const out = new Map();
  const entity = (name, kind) => {
    if (!out.has(name)) out.set(name, { name, kind, members: new Map() });
    const d = out.get(name);
    if (d.kind !== kind) throw new Error(`${name} is both a ${d.kind} and a ${kind} in the type definitions`);
    return d;
  };
  const classOf = new Map(entries.filter((e) => e.kind === 'struct').map((e) => [e.original_name || e.name, e.name]));
  for (const e of entries) {
    if (e.kind === 'struct') entity(e.name, 'class');
    else if (e.kind === 'impl') addImpl(entity(classOf.get(e.name) || e.name, 'class'), e.def, aliases);
    else if (e.kind === 'interface') addInterface(entity(e.name, 'interface'), e.def, aliases);
    else if (e.kind === 'fn') addFunction(out, e.def, aliases);
    else if (e.kind === 'const') addConst(out, e.def, aliases);
    else throw new Error(`type definition of kind ${e.kind} (${e.name}) is not handled by scripts/dts-signatures.js`);
  }
  return { declarations: out, aliases };
}

function addImpl(cls, def, aliases) {
  const getters = new Map();
  const setters = new Map();
  for (const raw of def.split('\\n')) {
    const line = stripDocs(raw);
    if (line === '') continue;
    let m = /^constructor\(([\s\S]*)\)$/.exec(line);
    if (m) {
      cls.members.set('constructor', { kind: 'constructor', name: 'constructor', params: parseParams(m[1], aliases) });
      continue;
    }
    m = /^get ([\w$]+)\(\)\s*:\s*([\s\S]+)$/.exec(line);
    if (m) {
      getters.set(m[1], canonicalParts(m[2], aliases));
      continue;
    }
    m = /^set ([\w$]+)\(([\s\S]*)\)$/.exec(line);
    if (m) {
      setters.set(m[1], parseParams(m[2], aliases)[0]);
      continue;
    }
    m = /^(static )?([\w$]+)\(([\s\S]*)\)\s*:\s*([\s\S]+)$/.exec(line);
    if (!m) throw new Error(`cannot parse the type definition "${line}" of ${cls.name}`);
    cls.members.set(`${m[1] ? 'static ' : ''}${m[2]}`, {
      kind: 'method', name: m[2], isStatic: Boolean(m[1]), params: parseParams(m[3], aliases), type: canonical(m[4], aliases),
    });
  }
  for (const [name, got] of getters) {
    const set = setters.get(name);
    const property = { kind: 'property', name, readonly: !set, optional: got.undefinedOk, type: withNull(got) };
    if (set && (set.type !== withNull(got) && set.type !== got.type)) {
      property.problem = `its setter takes ${set.type}, its getter returns ${withNull(got)}`;
    }
    cls.members.set(name, property);
  }
  for (const name of setters.keys()) {
    if (!getters.has(name)) cls.members.set(name, { kind: 'property', name, problem: 'a setter without a getter' });
  }
}

function withNull(parts) {
  return joinUnion({ ...parts, undefinedOk: false });
}

function addInterface(iface, def, aliases) {
  for (const raw of def.split('\\n')) {
    const line = stripDocs(raw);
    if (line === '') continue;
    const m = /^(readonly )?([\w$]+)(\?)?\s*:\s*([\s\S]+)$/.exec(line);
    if (!m) throw new Error(`cannot parse the field "${line}" of ${iface.name}`);
    iface.members.set(m[2], { kind: 'property', name: m[2], readonly: Boolean(m[1]), optional: Boolean(m[3]), type: canonical(m[4], aliases) });
  }
}

function addFunction(out, def, aliases) {
  const m = /^(?:export )?(?:declare )?function ([\w$]+)\(([\s\S]*)\)\s*:\s*([\s\S]+)$/.exec(stripDocs(def));
  if (!m) throw new Error(`cannot parse the function "${def}"`);
  out.set(m[1], { name: m[1], kind: 'function', members: new Map([['call', { kind: 'method', name: m[1], params: parseParams(m[2], aliases), type: canonical(m[3], aliases) }]]) });
}

function addConst(out, def, aliases) {
  const m = /^(?:export )?(?:declare )?const ([\w$]+)\s*:\s*([\s\S]+)$/.exec(stripDocs(def));
  if (!m) throw new Error(`cannot parse the constant "${def}"`);
  out.set(m[1], { name: m[1], kind: 'const', members: new Map([['value', { kind: 'property', name: m[1], readonly: true, optional: false, type: canonical(m[2], aliases) }]]) });
}

// ---------------------------------------------------------------------------------------
// The d.ts side.

/** Comments blanked out (strings in the d.ts hold no comment markers). */
function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
}

/** The body of the `{` at `open`, and the index after its `}`. */
function braced(source, open) {
  let depth = 0;
  for (let i = open; i < source.length; i += 1) {
    if (source[i] === '{') depth += 1;
    else if (source[i] === '}') {
      depth -= 1;
      if (depth === 0) return { body: source.slice(open + 1, i), end: i + 1 };
    }
  }
  throw new Error('unbalanced braces in the d.ts');
}

/** One class or interface member of the d.ts. */
function parseMember(raw, owner, aliases) {
  const text = raw.replace(/\s+/g, ' ').trim();
  let m = /^(?:(private|public|protected) )?constructor\(([\s\S]*)\)$/.exec(text);
  if (m) return { kind: 'constructor', name: 'constructor', params: parseParams(m[2], aliases), isPrivate: m[1] === 'private' };
  m = /^(readonly )?(static )?([\w$]+)(\?)?\s*\(([\s\S]*)\)\s*:\s*([\s\S]+)$/.exec(text);
  if (m && !/^\s*\(/.test(text.slice(text.indexOf(':')))) {
    // A method: `name(params): T` (a property of function type is `name: (…) => T`).
    const close = matchingParen(text, text.indexOf('('));
    if (close !== -1 && /^\s*:/.test(text.slice(close + 1))) {
      return {
        kind: 'method', name: m[3], isStatic: Boolean(m[2]),
        params: parseParams(text.slice(text.indexOf('(') + 1, close), aliases),
        type: canonical(text.slice(close + 1).replace(/^\s*:/, ''), aliases),
      };
    }
  }
  m = /^(readonly )?(static )?([\w$]+)(\?)?\s*:\s*([\s\S]+)$/.exec(text);
  if (!m) throw new Error(`cannot parse the member "${text}" of ${owner}`);
  return { kind: 'property', name: m[3], isStatic: Boolean(m[2]), readonly: Boolean(m[1]), optional: Boolean(m[4]), type: canonical(m[5], aliases) };
}

function matchingParen(text, open) {
  let depth = 0;
  for (let i = open; i < text.length; i += 1) {
    if (text[i] === '(') depth += 1;
    else if (text[i] === ')') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** The d.ts declarations: Map name → { kind, members } ('type' for aliases). */
function dtsDeclarations(text, aliases = new Map()) {
  const source = stripComments(text);
  const out = new Map();
  const header = /export\s+(?:declare\s+)?(class|interface)\s+([A-Za-z_$][\w$]*)\s*(?:extends\s+([\w$]+)\s*)?\{/g;
  let match;
  while ((match = header.exec(source)) !== null) {
    const { body, end } = braced(source, header.lastIndex - 1);
    const members = new Map();
    for (const raw of splitTop(body, ';')) {
      if (raw.trim() === '') continue;
      const member = parseMember(raw, match[2], aliases);
      members.set(member.kind === 'method' && member.isStatic ? `static ${member.name}` : member.name, member);
    }
    out.set(match[2], { name: match[2], kind: match[1], members, extends: match[3] });
    header.lastIndex = end;
  }
  for (const m of source.matchAll(/export\s+(?:declare\s+)?function\s+([\w$]+)\s*\(/g)) {
    const open = m.index + m[0].length - 1;
    const close = matchingParen(source, open);
    const ret = /^\s*:\s*([^;]+);/.exec(source.slice(close + 1));
    out.set(m[1], { name: m[1], kind: 'function', members: new Map([['call', { kind: 'method', name: m[1], params: parseParams(source.slice(open + 1, close), aliases), type: canonical(ret[1], aliases) }]]) });
  }
  for (const m of source.matchAll(/export\s+(?:declare\s+)?const\s+([\w$]+)\s*:\s*([^;=]+);/g)) {
    out.set(m[1], { name: m[1], kind: 'const', members: new Map([['value', { kind: 'property', name: m[1], readonly: true, optional: false, type: canonical(m[2], aliases) }]]) });
  }
  for (const m of source.matchAll(/export\s+(?:declare\s+)?type\s+([\w$]+)\s*=/g)) {
    out.set(m[1], { name: m[1], kind: 'type', members: new Map() });
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The comparison.

function sameMember(napi, dts) {
  if (napi.kind !== dts.kind) return false;
  if (napi.kind === 'constructor') return memberText(napi) === memberText(dts);
  if (napi.kind === 'method') return memberText(napi) === memberText({ ...dts, isStatic: dts.isStatic });
  return napi.type === dts.type && napi.optional === dts.optional && napi.readonly === dts.readonly;
}

function describe(owner, key) {
  return owner.kind === 'function' || owner.kind === 'const' ? owner.name : `${owner.name}.${key}`;
}

/**
 * Compares napi-derive's type definitions with the d.ts. Returns the mismatches, one
 * readable line each (empty when they agree).
 */
function compare(typeDefText, dtsText) {
  const { declarations: napi, aliases } = napiDeclarations(typeDefText);
  const dts = dtsDeclarations(dtsText, aliases);
  const problems = [];
  for (const item of napi.values()) {
    const declared = dts.get(item.name);
    if (!declared) {
      problems.push(`${item.name}: a #[napi] ${item.kind} that index.d.ts does not declare`);
      continue;
    }
    if (declared.kind !== item.kind) {
      problems.push(`${item.name}: a #[napi] ${item.kind}, declared as a ${declared.kind} in index.d.ts`);
      continue;
    }
    for (const [key, member] of item.members) {
      const where = describe(item, key);
      if (member.problem) {
        problems.push(`${where}: ${member.problem}`);
        continue;
      }
      const other = declared.members.get(key);
      if (!other) {
        problems.push(`${where}: in the crate (${memberText(member)}), not declared in index.d.ts`);
      } else if (!sameMember(member, other)) {
        problems.push(`${where}: index.d.ts declares \`${memberText(other)}\`, the crate has \`${memberText(member)}\``);
      }
    }
    for (const [key, member] of declared.members) {
      if (!item.members.has(key)) {
        problems.push(`${describe(item, key)}: declared in index.d.ts (${memberText(member)}), not in the crate`);
      }
    }
  }
  for (const d of dts.values()) {
    if ((d.kind === 'class' || d.kind === 'function' || d.kind === 'const') && !napi.has(d.name)) {
      problems.push(`${d.name}: a ${d.kind} of index.d.ts that is no #[napi] item of the crate`);
    }
  }
  return problems;
}

function main(argv) {
  const file = argv[0] || defaultTypeDefFile();
  if (!fs.existsSync(file)) {
    console.error(`dts-signatures: ${file} does not exist: build the module with scripts/test-js.sh ` +
      '(it sets NAPI_TYPE_DEF_TMP_FOLDER so that napi-derive writes it)');
    return 1;
  }
  const problems = compare(fs.readFileSync(file, 'utf8'), fs.readFileSync(path.join(ROOT, DTS), 'utf8'));
  for (const p of problems) console.error(`dts-signatures: ${p}`);
  if (problems.length > 0) {
    console.error(`dts-signatures: ${problems.length} declaration(s) of ${DTS} differ from bindings/napi/src`);
    return 1;
  }
  return 0;
}

module.exports = {
  compare, napiDeclarations, dtsDeclarations, canonical, canonicalParts, parseParams, paramText, withNull, defaultTypeDefFile, DTS,
};

if (require.main === module) {
  process.exitCode = main(process.argv.slice(2));
}
