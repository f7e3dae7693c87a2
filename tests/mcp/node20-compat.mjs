// Node 20 compatibility shim for @modelcontextprotocol/conformance@0.1.16.
//
// The conformance CLI's dist/index.js does `import { globSync } from "fs"`,
// which only exists in Node >= 22, so on Node 20 it dies at link time with
// "The requested module 'fs' does not provide an export named 'globSync'".
// globSync is only used by the `tier-check` sub-command (never by `client`
// or `server` runs), so we redirect the conformance package's `fs` import to
// a module that re-exports node:fs plus a stub globSync.
//
// Usage:  node --import ./node20-compat.mjs node_modules/.bin/conformance client ...
//    or:  NODE_OPTIONS="--import $PWD/node20-compat.mjs" npx conformance client ...
import { register } from 'node:module';
import fs from 'node:fs';

if (typeof fs.globSync !== 'function') {
  const shim = [
    "export * from 'node:fs';",
    "export { default } from 'node:fs';",
    "export function globSync() { throw new Error('fs.globSync needs Node >= 22 (only used by tier-check)'); }",
  ].join('\n');
  const shimUrl = 'data:text/javascript,' + encodeURIComponent(shim);
  const hooks = `
    export async function resolve(specifier, context, next) {
      if ((specifier === 'fs' || specifier === 'node:fs') &&
          context.parentURL && context.parentURL.includes('/@modelcontextprotocol/conformance/')) {
        return { url: ${JSON.stringify(shimUrl)}, shortCircuit: true };
      }
      return next(specifier, context);
    }`;
  register('data:text/javascript,' + encodeURIComponent(hooks));
}
