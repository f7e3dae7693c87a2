#!/usr/bin/env node
'use strict';
/*
 * Writes the fixture SDK declarations of tests/arkts/sdk-fixtures/<release>/ (SPEC OHOS-9)
 * from an openharmony/interface_sdk-js checkout: each file keeps, verbatim with its JSDoc
 * blocks (the `@since` tags the lint's API-level check reads), only the declarations
 * NetworkKitTransport.ets uses, inside their namespaces, interfaces and enums, plus the
 * file's imports. Nothing is rewritten: an excerpt, not a stub.
 *
 *   node tests/arkts/sdk-fixtures/extract.js <interface_sdk-js checkout> <release dir>
 *   e.g. (a checkout at OpenHarmony-v7.0-Release)  ... /src/interface_sdk-js tests/arkts/sdk-fixtures/7.0
 *
 * Needs the pinned ohos-typescript (scripts/arkts-lint; npm ci there).
 */
const fs = require('node:fs');
const path = require('node:path');

const ts = require(path.join(__dirname, '../../../scripts/arkts-lint/node_modules/ohos-typescript'));

/** Per file: the dotted paths kept (`a.b` keeps member b of a; `a.*` every member of a). */
const KEEP = {
  'api/@ohos.net.http.d.ts': [
    'http', 'http.createHttp',
    'http.HttpRequestOptions', 'http.HttpRequestOptions.method', 'http.HttpRequestOptions.extraData',
    'http.HttpRequestOptions.expectDataType', 'http.HttpRequestOptions.usingCache', 'http.HttpRequestOptions.header',
    'http.HttpRequestOptions.readTimeout', 'http.HttpRequestOptions.connectTimeout',
    'http.HttpRequest', 'http.HttpRequest.requestInStream', 'http.HttpRequest.destroy', 'http.HttpRequest.on',
    'http.HttpRequest.off',
    'http.RequestMethod', 'http.RequestMethod.*', 'http.HttpDataType', 'http.HttpDataType.*',
  ],
  'api/@internal/ets/global.d.ts': ['setTimeout', 'clearTimeout'],
};

/**
 * Kits whose imports go beyond what the stubs model, with the names kept per imported
 * module: 7.0's BasicServicesKit (where BusinessError comes from) also imports the
 * annotation module, whose static-ArkTS syntax (`export @interface`) this compiler cannot
 * parse — the kind of SDK-internal diagnostic the lint reports as a warning. Written only
 * when the release has the annotation module; it is then copied whole.
 */
const KITS = {
  'kits/@kit.BasicServicesKit.d.ts': {
    when: 'api/@ohos.annotation.d.ets',
    imports: { '@ohos.base': ['AsyncCallback', 'BusinessError', 'Callback', 'ErrorCallback'],
      '@ohos.annotation': ['Available', 'SuppressWarnings', 'SuppressWarningsType'] },
  },
};
const WHOLE = ['api/@ohos.annotation.d.ets'];

/** A kit's import lines for the kept modules (names filtered) and its export list of them. */
function kitExcerpt(file, text, imports) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2021, true, ts.ScriptKind.TS);
  const out = [];
  const names = [];
  for (const statement of sf.statements) {
    if (/\/\*\*\* if arkts static/.test(sf.text.slice(statement.getFullStart(), statement.getStart(sf)))) break;
    if (!ts.isImportDeclaration(statement) || !(statement.moduleSpecifier.text in imports)) continue;
    const kept = imports[statement.moduleSpecifier.text];
    const bindings = statement.importClause.namedBindings.elements.map((e) => e.name.text).filter((n) => kept.includes(n));
    names.push(...bindings);
    out.push('import { ' + bindings.join(', ') + ' } from \'' + statement.moduleSpecifier.text + '\';');
  }
  return out.join('\n') + '\nexport {\n  ' + names.join(', ') + '\n};\n';
}

/** Events of `on`/`off` kept: the ones the transport listens to. */
const EVENTS = ['headersReceive', 'dataReceive', 'dataEnd'];

function nameOf(node) {
  return node.name && ts.isIdentifier(node.name) ? node.name.text : undefined;
}

function keeps(keep, dotted) {
  return keep.includes(dotted) || keep.includes(dotted.slice(0, dotted.lastIndexOf('.') + 1) + '*');
}

/** `on(type: 'dataEnd', …)`: only the kept events' overloads (and no promise-less callbacks). */
function eventKept(node) {
  const first = node.parameters && node.parameters[0];
  if (!first || !first.type || !ts.isLiteralTypeNode(first.type)) return true;
  return EVENTS.includes(first.type.literal.text);
}

/** The overload of requestInStream that returns a Promise. */
function overloadKept(node, dotted) {
  if (dotted !== 'http.HttpRequest.requestInStream') return true;
  return node.type && /^Promise</.test(node.type.getText());
}

function emit(sf, node, prefix, keep, out) {
  const dotted = prefix ? prefix + '.' + nameOf(node) : nameOf(node);
  if (!dotted || !keeps(keep, dotted)) return;
  if ((ts.isMethodSignature(node) && (!eventKept(node) || !overloadKept(node, dotted)))) return;
  const body = node.body && ts.isModuleBlock(node.body) ? node.body.statements : node.members;
  const text = sf.text.slice(node.getFullStart(), node.end).replace(/\/\*\*\* (if|endif)[^\n]*\n/g, '');
  if (!body) {
    out.push(text.replace(/^\n+/, ''));
    return;
  }
  const open = sf.text.indexOf('{', node.name.end);
  out.push(sf.text.slice(node.getFullStart(), open + 1).replace(/^\n+/, ''));
  const inner = [];
  for (const member of body) emit(sf, member, dotted, keep, inner);
  out.push(inner.join(ts.isEnumDeclaration(node) ? ',\n' : '\n'));
  // The closing brace as the source indents it.
  out.push(sf.text.slice(sf.text.lastIndexOf('\n', node.end - 1) + 1, node.end));
}

function excerpt(file, text, keep) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2021, true, ts.ScriptKind.TS);
  const out = [];
  for (const statement of sf.statements) {
    // Static ArkTS only (`/*** if arkts static */ … /*** endif */`): not in a dynamic SDK.
    if (/\/\*\*\* if arkts static/.test(sf.text.slice(statement.getFullStart(), statement.getStart(sf)))) continue;
    if (ts.isImportDeclaration(statement)) {
      out.push(sf.text.slice(statement.getStart(sf), statement.end));
    } else if (ts.isExportAssignment(statement)) {
      out.push('\n' + sf.text.slice(statement.getStart(sf), statement.end));
    } else {
      emit(sf, statement, '', keep, out);
    }
  }
  return out.join('\n') + '\n';
}

function main() {
  const [checkout, release] = process.argv.slice(2);
  if (!checkout || !release) {
    process.stderr.write('usage: node extract.js <interface_sdk-js checkout> <release dir>\n');
    return 2;
  }
  const write = (rel, text, how) => {
    const head = '// ' + how + ' interface_sdk-js ' + rel + ' (' + path.basename(release) +
      '), written by tests/arkts/sdk-fixtures/extract.js.\n';
    const target = path.join(release, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, head + text);
    process.stderr.write('extract: wrote ' + target + '\n');
  };
  const read = (rel) => fs.readFileSync(path.join(checkout, rel), 'utf8');
  for (const [rel, keep] of Object.entries(KEEP)) {
    write(rel, excerpt(rel, read(rel), keep), 'Excerpt (declarations verbatim, the others left out) of');
  }
  for (const [rel, kit] of Object.entries(KITS)) {
    if (fs.existsSync(path.join(checkout, kit.when))) {
      write(rel, kitExcerpt(rel, read(rel), kit.imports), 'Excerpt (the imports named, their exports) of');
    }
  }
  for (const rel of WHOLE) {
    if (fs.existsSync(path.join(checkout, rel))) write(rel, read(rel), 'Verbatim');
  }
  return 0;
}

process.exitCode = main();
