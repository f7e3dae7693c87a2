'use strict';
/*
 * The API-level check of check.js (--min-api N, SPEC OHOS-9): every name our files use that
 * resolves to an SDK declaration whose `@since` is above N (the project's
 * compatibleSdkVersion) is an error — the build would pass against a newer SDK and the app
 * crash on a device at API N. E.g. `http.RequestMethod.PATCH`, `@since 26.0.0 dynamic`.
 *
 * `@since` as the SDK writes it: one JSDoc block per variant, each with its own tag
 * (`@since 6`, then `@crossplatform @since 10`, …: API 12 – 6.0), or one block with a tag
 * per language (`@since 6 dynamic`, `@since 23 static`, `@since 26.0.0 dynamic`: 6.1 on).
 * A declaration exists since the smallest level of its tags that is not for static ArkTS
 * only; a declaration without a tag (the project's stubs, TypeScript's own lib) is not
 * checked.
 */

/** The text of a JSDoc tag's comment (a string, or a list of parts). */
function tagText(comment) {
  if (typeof comment === 'string') return comment;
  return (comment || []).map((part) => part.text || '').join('');
}

/** The API level `decl` exists since in dynamic ArkTS, or null when it carries no `@since`. */
function sinceOf(decl) {
  let min = null;
  for (const doc of decl.jsDoc || []) {
    for (const tag of doc.tags || []) {
      if (tag.tagName.text !== 'since') continue;
      const text = tagText(tag.comment).trim();
      if (/\bstatic(only)?\b/.test(text) && !/\bdynamic\b/.test(text)) continue;
      const level = parseInt(text, 10);
      if (!Number.isNaN(level) && (min === null || level < min)) min = level;
    }
  }
  return min;
}

/** The declarations a use of `node` stands for: the resolved overload of a call, else the symbol's. */
function declarationsOf(ts, checker, node) {
  const parent = node.parent;
  const callee = parent && ((ts.isCallExpression(parent) && parent.expression === node) ||
    (ts.isPropertyAccessExpression(parent) && parent.name === node && parent.parent &&
      ts.isCallExpression(parent.parent) && parent.parent.expression === parent));
  if (callee) {
    const call = ts.isCallExpression(parent) ? parent : parent.parent;
    const signature = checker.getResolvedSignature(call);
    if (signature && signature.declaration && !ts.isJSDocSignature(signature.declaration)) {
      return [signature.declaration];
    }
  }
  // A property of an object literal: the member of the literal's contextual type.
  if (parent && ts.isPropertyAssignment(parent) && parent.name === node && ts.isObjectLiteralExpression(parent.parent)) {
    const type = checker.getContextualType(parent.parent);
    const member = type && type.getProperty(node.text);
    return member ? member.declarations || [] : [];
  }
  let symbol = checker.getSymbolAtLocation(node);
  if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
  return symbol ? symbol.declarations || [] : [];
}

/**
 * Diagnostics (check.js's plain records) for each use, in `files`, of a declaration from
 * outside `ours` whose `@since` is above `minApi`.
 */
function sinceDiagnostics(ts, program, files, ours, minApi) {
  const checker = program.getTypeChecker();
  const out = [];
  for (const file of files) {
    const sf = program.getSourceFile(file);
    if (!sf) continue;
    const visit = (node) => {
      if (ts.isIdentifier(node)) {
        let level = null;
        let where = '';
        for (const decl of declarationsOf(ts, checker, node)) {
          const home = decl.getSourceFile().fileName;
          if (ours.has(home)) continue;
          const since = sinceOf(decl);
          if (since !== null && (level === null || since < level)) {
            level = since;
            where = home;
          }
        }
        if (level !== null && level > minApi) {
          out.push({
            file: sf,
            start: node.getStart(sf),
            category: ts.DiagnosticCategory.Error,
            messageText: '\'' + node.text + '\' is @since ' + level + ' (' + where.split('/').slice(-2).join('/') +
              '), above the minimum API ' + minApi + ' (compatibleSdkVersion) (arkts-check-since)',
          });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return out;
}

module.exports = { sinceOf, sinceDiagnostics };
