// A module's hvigorfile.ts transpiled as hvigor would run it, with stand-ins for the hvigor
// packages (used by ohos_5.test.js for the HAR and ohos_5_example_build.test.js for the
// example HAP). Needs the pinned ohos-typescript (scripts/arkts-lint).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert/strict');

const root = path.resolve(__dirname, '../..');
const ts = require(path.join(root, 'scripts/arkts-lint/node_modules/ohos-typescript'));

/** Loads `<root>/<relative>`; `system` names the hvigor-ohos-plugin export it uses
 *  (`harTasks`, `hapTasks`). Returns the module's exports and that stand-in. */
function loadHvigorfile(relative, system) {
  const file = path.join(root, relative);
  const out = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2021 },
    fileName: file,
    reportDiagnostics: true,
  });
  assert.deepEqual((out.diagnostics || []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), []);
  const tasks = { name: `${system} stand-in` };
  const modules = { fs, path, '@ohos/hvigor-ohos-plugin': { [system]: tasks }, '@ohos/hvigor': {} };
  const mod = { exports: {} };
  const requireShim = (name) => {
    if (name in modules) return modules[name];
    throw new Error(`hvigorfile.ts imports ${name}`);
  };
  new Function('require', 'module', 'exports', '__filename', '__dirname', out.outputText)(
    requireShim, mod, mod.exports, file, path.dirname(file));
  return { hvigorfile: mod.exports, tasks };
}

/** The tasks `plugin` registers. */
function registeredTasks(plugin) {
  const tasks = [];
  plugin.apply({ registerTask: (t) => tasks.push(t) });
  return tasks;
}

module.exports = { loadHvigorfile, registeredTasks };
