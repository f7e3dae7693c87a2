#!/usr/bin/env node
/*
 * Offline ArkTS checker (SPEC NAPI-3).
 *
 * Runs the checks hvigor's ets-loader runs on .ets sources, without hvigor or the
 * HarmonyOS SDK: the ArkTS compiler from the npm package `ohos-typescript` (pinned in
 * package.json) gives tsc syntactic + semantic diagnostics, then
 * `ArkTSLinter_1_1.runArkTSLinter` applies the arkts-* rules. Only `.ets` / `.d.ets`
 * files get those rules, so a native module's `index.d.ts` is checked as a `.d.ets` copy
 * in a temp dir (diagnostics are reported against the original path).
 *
 * Usage:
 *   node check.js [--stubs DIR] [--module NAME=FILE]... [--reexports FILE=NAME]...
 *                 [--summary] PATH...
 *
 *   PATH              an .ets / .d.ets file, a .d.ts file (checked as .d.ets), or a
 *                     directory (every .ets / .d.ets below it; oh_modules, build skipped)
 *   --sdk DIR         the declarations of a real SDK, laid out as the SDK ships them (DIR
 *                     is its `ets` folder): DIR/api, DIR/kits, DIR/arkts hold the modules
 *                     (`@ohos.net.http.d.ts` -> '@ohos.net.http', `@kit.NetworkKit.d.ts`
 *                     -> '@kit.NetworkKit'), DIR/component ArkUI's globals (as --stubs
 *                     DIR/component). Repeatable (HarmonyOS: openharmony/ets, hms/ets);
 *                     a --stubs DIR given too only adds what the SDK lacks (@ohos/hypium)
 *   --stubs DIR       declaration stubs: DIR/<specifier>.d.ts or DIR/<specifier>/index.d.ts
 *                     resolves `import ... from '<specifier>'` (e.g. @ohos/hypium,
 *                     @kit.NetworkKit); mapped with compilerOptions.paths. DIR/component/
 *                     holds ArkUI's global declarations (components, decorators): added to
 *                     every program, and their components make up ets-loader's `ets` option
 *   --min-api N       the project's compatibleSdkVersion: a use of an SDK declaration whose
 *                     `@since` is above N is an error (arkts-check-since; since.js)
 *   --module N=F      maps module N to declaration file F, as an ohpm `file:` dependency
 *                     would (`libarkagent.so` -> its index.d.ts); F is checked too, a
 *                     .d.ts F as a .d.ets copy so the arkts-* rules apply to it
 *   --reexports F=N   file F must export every name module N exports (an error on F
 *                     names each one missing), so a facade cannot drift from its module
 *   --summary         one `PASS file` / `FAIL file (n errors)` line per checked file
 *
 * Prints `file:line:col: error|warning: message`; exits 1 on any error, 2 on bad usage.
 * With --sdk, a diagnostic inside the SDK's own files (an SDK import this checker cannot
 * resolve, a declaration ets-loader would supply) is printed as a warning marked "(in the
 * SDK)" and does not fail the check: only errors in the checked files count.
 */
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

let ts;
try {
  ts = require('ohos-typescript');
} catch (e) {
  process.stderr.write(
    'arkts-check: ohos-typescript is not installed; run `npm ci` in ' + __dirname + '\n');
  process.exit(2);
}

const { sinceDiagnostics } = require('./since');

const USAGE = 'usage: node check.js [--sdk DIR]... [--stubs DIR] [--min-api N] [--module NAME=FILE]... ' +
  '[--reexports FILE=NAME]... [--summary] PATH...';

class UsageError extends Error {}

function usage(msg) {
  throw new UsageError(msg);
}

function splitPair(option, spec) {
  const eq = spec === undefined ? -1 : spec.indexOf('=');
  if (eq <= 0 || eq === spec.length - 1) usage(option + ' needs A=B, got ' + spec);
  return [spec.slice(0, eq), spec.slice(eq + 1)];
}

function parseArgs(argv) {
  const args = { sdk: [], stubs: [], modules: [], reexports: [], summary: false, paths: [], minApi: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--sdk') {
      if (i + 1 >= argv.length) usage('--sdk needs a directory');
      args.sdk.push(path.resolve(argv[++i]));
    } else if (a === '--stubs') {
      if (i + 1 >= argv.length) usage('--stubs needs a directory');
      args.stubs.push(path.resolve(argv[++i]));
    } else if (a === '--module') {
      const [name, file] = splitPair(a, argv[++i]);
      args.modules.push({ name, file: path.resolve(file) });
    } else if (a === '--reexports') {
      const [file, name] = splitPair(a, argv[++i]);
      args.reexports.push({ file: path.resolve(file), name });
    } else if (a === '--min-api') {
      const n = Number(argv[++i]);
      if (!Number.isInteger(n) || n <= 0) usage('--min-api needs a positive API level');
      args.minApi = n;
    } else if (a === '--summary') {
      args.summary = true;
    } else if (a === '-h' || a === '--help') {
      process.stdout.write(USAGE + '\n');
      process.exit(0);
    } else if (a.startsWith('--')) {
      usage('unknown option ' + a);
    } else {
      args.paths.push(path.resolve(a));
    }
  }
  if (args.paths.length === 0 && args.modules.length === 0) usage('nothing to check');
  return args;
}

const SKIP_DIRS = new Set(['oh_modules', 'node_modules', 'build', '.hvigor', '.preview']);

function isEtsFile(f) {
  return f.endsWith('.ets'); // .d.ets too
}

function walk(dir, out) {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, ent.name);
    if (ent.isDirectory()) {
      if (!SKIP_DIRS.has(ent.name)) walk(p, out);
    } else if (ent.isFile() && isEtsFile(ent.name)) {
      out.push(p);
    }
  }
  return out;
}

/**
 * Stub files below DIR, keyed by the import specifier each stands for. DIR/component/ holds
 * ArkUI's global declarations (the SDK's ets/component/ dir, which ets-loader adds to every
 * .ets program): those are not modules; they go to `globals`.
 */
function collectStubs(dir, into, globals) {
  (function rec(d) {
    for (const ent of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, ent.name);
      if (ent.isDirectory() && d === dir && ent.name === 'component') {
        for (const f of fs.readdirSync(p).sort()) {
          if (/\.d\.e?ts$/.test(f)) globals.push(path.join(p, f));
        }
      } else if (ent.isDirectory()) {
        rec(p);
      } else if (/\.d\.e?ts$/.test(ent.name)) {
        const rel = path.relative(dir, p).split(path.sep).join('/');
        into[rel.replace(/\.d\.e?ts$/, '').replace(/\/index$/, '')] = [p];
      }
    }
  })(dir);
}

/**
 * The declarations of a real SDK's `ets` folder (see --sdk): modules from api/, kits/ and
 * arkts/ keyed by their path below that folder (`api/@ohos.net.http.d.ts` ->
 * '@ohos.net.http', `api/application/Context.d.ts` -> 'application/Context', as the
 * SDK's own imports name them), ArkUI's globals from component/. A key already taken (an
 * earlier --sdk) is kept.
 */
function collectSdk(dir, into, globals, tmp) {
  const found = ['api', 'kits', 'arkts', 'component'].filter((d) => fs.existsSync(path.join(dir, d)));
  if (!found.includes('api') || !(found.includes('kits') || found.includes('component'))) {
    usage('--sdk ' + dir + ': not an SDK ets folder (needs api/ and kits/ or component/)');
  }
  for (const sub of ['api', 'kits', 'arkts']) {
    const base = path.join(dir, sub);
    if (!fs.existsSync(base)) continue;
    (function rec(d) {
      for (const ent of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, ent.name);
        if (ent.isDirectory()) {
          // ArkUI's component declarations are globals (component/), not modules.
          if (!(sub === 'api' && path.relative(base, p) === path.join('@internal', 'component'))) rec(p);
        } else if (/\.d\.e?ts$/.test(ent.name)) {
          const key = path.relative(base, p).split(path.sep).join('/').replace(/\.d\.e?ts$/, '').replace(/\/index$/, '');
          if (!(key in into)) into[key] = [p];
        }
      }
    })(base);
  }
  const component = path.join(dir, 'component');
  if (fs.existsSync(component)) {
    for (const f of fs.readdirSync(component).sort()) {
      if (/\.d\.e?ts$/.test(f)) globals.push(path.join(component, f));
    }
  }
  const global = path.join(dir, 'api', '@internal', 'ets', 'global.d.ts');
  if (fs.existsSync(global)) globals.push(globalCopy(global, tmp));
}

/**
 * The SDK's global functions (setTimeout, console, …): api/@internal/ets/global.d.ts
 * exports them, and ets-loader's declarations make them global by dropping each top-level
 * `export` (developtools_ace_ets2bundle compiler/build_declarations_file.js). The same,
 * into a copy under `tmp`.
 */
function globalCopy(file, tmp) {
  const dir = fs.mkdtempSync(path.join(tmp, 'sdk-global-'));
  const copy = path.join(dir, 'global.d.ts');
  fs.writeFileSync(copy, fs.readFileSync(file, 'utf8').replace(/^export declare /gm, 'declare ')
    .replace(/^export (?=(function|class|const|interface|type|namespace|enum) )/gm, 'declare '));
  sdkFiles.set(copy, file);
  return copy;
}

/** How many diagnostics inside the SDK are printed (the rest are counted). */
const SDK_WARNINGS_SHOWN = 10;

/** Files of an --sdk (and their copies): their diagnostics are the SDK's, reported as warnings. */
const sdkFiles = new Map();
const sdkDirs = [];

function inSdk(file) {
  return sdkFiles.has(file) || sdkDirs.some((dir) => file.startsWith(dir + path.sep));
}

/**
 * ets-loader's `ets` compiler option (its tsconfig.json: what makes ohos-typescript parse
 * `struct`, a component call with a trailing block `Column() { ... }`, @Builder / @Extend /
 * @Styles), with the component list taken from the ArkUI stubs: every
 * `declare const X: XInterface;` is a component, `declare const XInstance: XAttribute;` its
 * attribute class. A component no stub declares is then not even parsed as one: its use is
 * an error (`Cannot find name`), as an undeclared SDK member is.
 */
function etsOptions(globals) {
  // ForEach / LazyForEach are calls whose callbacks build UI (syntaxComponents), not
  // components: parsed as components, their item builders would not be.
  const paramsUICallback = ['ForEach', 'LazyForEach'];
  const components = [];
  const extendComponents = [];
  for (const file of globals) {
    const text = fs.readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^declare const (\w+): (\w+)Interface;/gm)) {
      if (m[1] === m[2] && !paramsUICallback.includes(m[1])) components.push(m[1]);
    }
    for (const m of text.matchAll(/^declare const (\w+)Instance: (\w+Attribute);/gm)) {
      extendComponents.push({ name: m[1], type: m[2], instance: m[1] + 'Instance' });
    }
  }
  return {
    render: { method: ['build', 'pageTransition'], decorator: ['Builder', 'LocalBuilder'] },
    components: components.sort(),
    libs: [],
    extend: { decorator: ['Extend', 'AnimatableExtend'], components: extendComponents },
    styles: {
      decorator: 'Styles',
      component: { name: 'Common', type: 'T', instance: 'CommonInstance' },
      property: 'stateStyles',
    },
    concurrent: { decorator: 'Concurrent' },
    customComponent: 'CustomComponent',
    propertyDecorators: ['Link', 'Prop', 'ObjectLink', 'Consume', 'BuilderParam', 'Param', 'Event']
      .map((name) => ({ name, needInitialization: false })),
    emitDecorators: [],
    syntaxComponents: {
      paramsUICallback,
      attrUICallback: [{ name: 'Repeat', attributes: ['each', 'template'] }],
    },
  };
}

// Compiler options that match ets-loader (see shared/notes/arkts-lint.md).
function compilerOptions(paths, globals) {
  return {
    ...(globals.length ? { ets: etsOptions(globals) } : {}),
    target: ts.ScriptTarget.ES2021,
    lib: ['lib.es2021.d.ts'],
    module: ts.ModuleKind.ES2020,
    moduleResolution: ts.ModuleResolutionKind.NodeJs,
    allowSyntheticDefaultImports: true,
    esModuleInterop: true,
    experimentalDecorators: true,
    alwaysStrict: true,
    noEmit: true,
    types: [],
    baseUrl: '/',
    paths,
    packageManagerType: 'ohpm',
    needDoArkTsLinter: true,
    isCompatibleVersion: false,
  };
}

/** Diagnostics (as plain records) for names module `name` exports but `file` does not. */
function missingReexports(program, reexport, moduleFile) {
  const checker = program.getTypeChecker();
  const exportsOf = (file) => {
    const sf = program.getSourceFile(file);
    const sym = sf && checker.getSymbolAtLocation(sf);
    return sym ? checker.getExportsOfModule(sym).map((s) => s.name) : null;
  };
  const facade = program.getSourceFile(reexport.file);
  const have = exportsOf(reexport.file);
  const want = moduleFile ? exportsOf(moduleFile) : null;
  if (!facade || have === null || want === null) {
    usage('--reexports ' + reexport.file + '=' + reexport.name +
      ': both must be checked modules (pass the file and --module ' + reexport.name + '=...)');
  }
  const missing = want.filter((n) => !have.includes(n));
  return missing.map((n) => ({
    file: facade,
    start: 0,
    category: ts.DiagnosticCategory.Error,
    messageText: 'does not re-export \'' + n + '\' from \'' + reexport.name +
      '\'; add it to the export list (arkts-check-reexports)',
  }));
}

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write('arkts-check: ' + e.message + '\n' + USAGE + '\n');
    return 2;
  }
  const started = Date.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'arkts-check-'));
  const displayName = new Map(); // checked path -> the path to report
  const roots = [];
  const paths = {};
  const globals = [];

  try {
    for (const dir of args.sdk) {
      if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) usage('not a directory: ' + dir);
      sdkDirs.push(fs.realpathSync(dir), dir);
      collectSdk(dir, paths, globals, tmp);
    }
    for (const dir of args.stubs) {
      if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) usage('not a directory: ' + dir);
      if (args.sdk.length > 0) {
        // With an SDK the stubs only fill in what it lacks (ohpm packages: @ohos/hypium).
        const extra = {};
        collectStubs(dir, extra, []);
        for (const [key, file] of Object.entries(extra)) if (!(key in paths)) paths[key] = file;
      } else {
        collectStubs(dir, paths, globals);
      }
    }

    // A .d.ts gets plain tsc checks only; its .d.ets twin gets the arkts-* rules.
    let copies = 0;
    const asDets = (file) => {
      if (!file.endsWith('.d.ts')) return file;
      const dir = path.join(tmp, String(copies++));
      fs.mkdirSync(dir);
      const copy = path.join(dir, path.basename(file).replace(/\.d\.ts$/, '.d.ets'));
      fs.copyFileSync(file, copy);
      displayName.set(copy, file);
      return copy;
    };

    for (const m of args.modules) {
      if (!fs.existsSync(m.file)) usage('no such file: ' + m.file);
      const checked = asDets(m.file);
      paths[m.name] = [checked];
      roots.push(checked);
    }
    for (const p of args.paths) {
      if (!fs.existsSync(p)) usage('no such file or directory: ' + p);
      if (fs.statSync(p).isDirectory()) {
        roots.push(...walk(p, []).sort());
      } else if (isEtsFile(p) || p.endsWith('.d.ts')) {
        roots.push(asDets(p));
      } else {
        usage('not an ArkTS file: ' + p);
      }
    }
    const rootNames = [...new Set(roots)];

    const options = compilerOptions(paths, globals);
    const host = ts.createIncrementalCompilerHost(options);
    const builder = ts.createIncrementalProgramForArkTs({ rootNames: [...globals, ...rootNames], options, host });

    const diagnostics = [
      ...builder.getConfigFileParsingDiagnostics(),
      ...builder.getOptionsDiagnostics(),
      ...builder.getGlobalDiagnostics(),
      ...builder.getSyntacticDiagnostics(),
      ...builder.getSemanticDiagnostics(),
      ...ts.ArkTSLinter_1_1.runArkTSLinter(builder, undefined, undefined, '1.1'),
    ];
    for (const r of args.reexports) {
      const moduleFile = paths[r.name] ? paths[r.name][0] : undefined;
      diagnostics.push(...missingReexports(builder.getProgram(), r, moduleFile));
    }
    if (args.minApi !== null) {
      const ours = new Set(rootNames.map((f) => path.resolve(f)));
      diagnostics.push(...sinceDiagnostics(ts, builder.getProgram(), rootNames, ours, args.minApi));
    }

    // The linter repeats tsc diagnostics it re-derives in strict mode: print each once.
    const seen = new Set();
    const perFile = new Map(rootNames.map((f) => [path.resolve(f), 0]));
    let errors = 0;
    let warnings = 0;
    const lines = [];
    let inside = 0;
    for (const d of diagnostics) {
      const sdkInternal = Boolean(d.file) && inSdk(path.resolve(d.file.fileName));
      const isError = d.category === ts.DiagnosticCategory.Error && !sdkInternal;
      if (!isError && d.category !== ts.DiagnosticCategory.Warning && !sdkInternal) continue;
      const message = (sdkInternal ? '(in the SDK) ' : '') + ts.flattenDiagnosticMessageText(d.messageText, '\n');
      let where = 'arkts-check';
      let abs = null;
      if (d.file) {
        abs = path.resolve(d.file.fileName);
        const { line, character } = d.file.getLineAndCharacterOfPosition(d.start || 0);
        where = path.relative(process.cwd(), displayName.get(abs) || sdkFiles.get(abs) || abs) + ':' +
          (line + 1) + ':' + (character + 1);
      }
      const key = where + '\0' + message;
      if (seen.has(key)) continue;
      seen.add(key);
      if (isError) {
        errors++;
        if (abs !== null && perFile.has(abs)) perFile.set(abs, perFile.get(abs) + 1);
      } else {
        warnings++;
      }
      // Inside the SDK: the first few, then a count (a real SDK may give thousands).
      if (sdkInternal && ++inside > SDK_WARNINGS_SHOWN) continue;
      lines.push(where + ': ' + (isError ? 'error' : 'warning') + ': ' + message);
    }
    if (inside > SDK_WARNINGS_SHOWN) {
      lines.push('arkts-check: warning: ' + (inside - SDK_WARNINGS_SHOWN) + ' more diagnostic(s) inside the SDK not shown');
    }
    if (lines.length) process.stdout.write(lines.join('\n') + '\n');

    if (args.summary) {
      for (const [f, n] of perFile) {
        const shown = path.relative(process.cwd(), displayName.get(f) || f);
        process.stdout.write((n === 0 ? 'PASS ' + shown : 'FAIL ' + shown + ' (' + n + ' errors)') + '\n');
      }
    }
    process.stderr.write('arkts-check: ' + rootNames.length + ' file(s), ' + errors + ' error(s), ' +
      warnings + ' warning(s)' + (inside > 0 ? ' (' + inside + ' inside the SDK)' : '') + ' in ' +
      ((Date.now() - started) / 1000).toFixed(1) + ' s\n');
    return errors === 0 ? 0 : 1;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write('arkts-check: ' + e.message + '\n' + USAGE + '\n');
    return 2;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

process.exitCode = main();
