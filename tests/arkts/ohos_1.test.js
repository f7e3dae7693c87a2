// SPEC OHOS-1: ohos/ is a DevEco project hvigor can load. Reads the project files as hvigor
// does (JSON5, with the pinned `json5` package of scripts/arkts-lint) and checks what hvigor
// and the bundle tools resolve: the app, the products (API 12, HarmonyOS), every module of the
// root build-profile.json5 with its module.json5 of the right type, the example app's file
// dependency on the HAR, its pages, the $string/$media/$color/$profile resources the config
// files name, the ability's source, and the INTERNET permission. The same checks run on
// broken copies of the project, so each one is shown to fail when its rule is broken.
// Needs scripts/arkts-lint's node_modules (scripts/lint-arkts.sh installs them).
'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert/strict');
const { test } = require('node:test');

const root = path.resolve(__dirname, '../..');
const JSON5 = require(path.join(root, 'scripts/arkts-lint/node_modules/json5'));
const PROJECT = path.join(root, 'ohos');

const HAR_NAME = '@arkagent/arkagent';
const MODULE_TYPES = { arkagent: 'har', example: 'entry' };
const MIN_SDK = '5.0.0(12)';

function read5(file) {
  return JSON5.parse(fs.readFileSync(file, 'utf8'));
}

/** `$kind:name` references anywhere in a parsed config value. */
function resourceRefs(value, out = []) {
  if (typeof value === 'string') {
    const m = /^\$(string|media|color|profile):(\w+)$/.exec(value);
    if (m) out.push({ kind: m[1], name: m[2] });
  } else if (Array.isArray(value)) {
    for (const v of value) resourceRefs(v, out);
  } else if (value && typeof value === 'object') {
    for (const v of Object.values(value)) resourceRefs(v, out);
  }
  return out;
}

/** Problems with resource `ref` under resources dir `res` (only base/ is used here). */
function missingResource(res, ref) {
  const base = path.join(res, 'base');
  if (ref.kind === 'string' || ref.kind === 'color') {
    const file = path.join(base, 'element', ref.kind + '.json');
    if (!fs.existsSync(file)) return `${ref.kind} ${ref.name}: no ${path.relative(PROJECT, file)}`;
    const list = read5(file)[ref.kind] || [];
    return list.some((e) => e.name === ref.name) ? null : `$${ref.kind}:${ref.name} not in ${path.relative(PROJECT, file)}`;
  }
  if (ref.kind === 'media') {
    const dir = path.join(base, 'media');
    const found = fs.existsSync(dir) && fs.readdirSync(dir).some((f) => path.parse(f).name === ref.name &&
      fs.statSync(path.join(dir, f)).size > 0);
    return found ? null : `$media:${ref.name} not in ${path.relative(PROJECT, dir)}`;
  }
  const file = path.join(base, 'profile', ref.name + '.json');
  return fs.existsSync(file) ? null : `$profile:${ref.name}: no ${path.relative(PROJECT, file)}`;
}

/** Every problem hvigor / the bundle tools would hit in the project at `dir`. */
function checkProject(dir) {
  const problems = [];
  const need = (ok, msg) => {
    if (!ok) problems.push(msg);
    return ok;
  };
  const exists = (rel) => fs.existsSync(path.join(dir, rel));
  for (const f of ['AppScope/app.json5', 'build-profile.json5', 'hvigor/hvigor-config.json5', 'oh-package.json5',
    'hvigorfile.ts']) {
    need(exists(f), `missing ${f}`);
  }
  if (problems.length) return problems;

  // AppScope/app.json5
  const app = read5(path.join(dir, 'AppScope/app.json5')).app || {};
  need(/^[a-zA-Z][\w]*(\.[a-zA-Z][\w]*){2,}$/.test(app.bundleName || '') && app.bundleName.length <= 128,
    `app.bundleName ${app.bundleName} is not a reverse-domain name of 3+ parts`);
  need(Number.isInteger(app.versionCode) && app.versionCode > 0, `app.versionCode ${app.versionCode} is not a positive integer`);
  need(typeof app.versionName === 'string' && app.versionName.length > 0, 'app.versionName missing');
  need(typeof app.icon === 'string' && typeof app.label === 'string', 'app.icon / app.label missing');
  for (const ref of resourceRefs(app)) {
    const miss = missingResource(path.join(dir, 'AppScope/resources'), ref);
    need(miss === null, 'AppScope: ' + miss);
  }

  // Root build-profile.json5: products and modules.
  const profile = read5(path.join(dir, 'build-profile.json5'));
  const products = (profile.app && profile.app.products) || [];
  const names = products.map((p) => p.name);
  need(names.includes('default'), 'no product named default');
  for (const p of products) {
    need(p.compatibleSdkVersion === MIN_SDK, `product ${p.name}: compatibleSdkVersion ${p.compatibleSdkVersion}, expected ${MIN_SDK} (API 12)`);
    need(p.runtimeOS === 'HarmonyOS', `product ${p.name}: runtimeOS ${p.runtimeOS}, expected HarmonyOS`);
    need(p.signingConfig === undefined ||
      (profile.app.signingConfigs || []).some((s) => s.name === p.signingConfig),
    `product ${p.name}: signingConfig ${p.signingConfig} is not in app.signingConfigs`);
  }
  need(Array.isArray(profile.app && profile.app.signingConfigs), 'app.signingConfigs is not a list');
  const modules = profile.modules || [];
  need(JSON.stringify(modules.map((m) => m.name).sort()) === JSON.stringify(Object.keys(MODULE_TYPES).sort()),
    `modules ${modules.map((m) => m.name).join(', ')}, expected ${Object.keys(MODULE_TYPES).join(', ')}`);
  const moduleDirs = {};
  for (const m of modules) {
    const mdir = path.resolve(dir, m.srcPath || '');
    moduleDirs[m.name] = mdir;
    if (!need(typeof m.srcPath === 'string' && fs.existsSync(mdir), `module ${m.name}: srcPath ${m.srcPath} does not exist`)) continue;
    for (const t of m.targets || []) {
      for (const p of t.applyToProducts || []) need(names.includes(p), `module ${m.name}: target ${t.name} applies to unknown product ${p}`);
    }
    for (const f of ['oh-package.json5', 'build-profile.json5', 'hvigorfile.ts', 'src/main/module.json5']) {
      need(fs.existsSync(path.join(mdir, f)), `module ${m.name}: missing ${f}`);
    }
    if (!fs.existsSync(path.join(mdir, 'src/main/module.json5'))) continue;
    const mod = read5(path.join(mdir, 'src/main/module.json5')).module || {};
    need(mod.name === m.name, `module ${m.name}: module.json5 names it ${mod.name}`);
    need(mod.type === MODULE_TYPES[m.name], `module ${m.name}: type ${mod.type}, expected ${MODULE_TYPES[m.name]}`);
    const tasks = { har: 'harTasks', entry: 'hapTasks' }[mod.type];
    if (tasks && fs.existsSync(path.join(mdir, 'hvigorfile.ts'))) {
      need(new RegExp(`system:\\s*${tasks}\\b`).test(fs.readFileSync(path.join(mdir, 'hvigorfile.ts'), 'utf8')),
        `module ${m.name}: hvigorfile.ts does not use ${tasks}`);
    }
    for (const ref of resourceRefs(mod)) {
      const miss = missingResource(path.join(mdir, 'src/main/resources'), ref);
      need(miss === null, `module ${m.name}: ` + miss);
    }
    if (mod.type === 'entry') {
      // Pages: main_pages.json names .ets files that exist and hold an @Entry component.
      const pagesRef = /^\$profile:(\w+)$/.exec(mod.pages || '');
      if (need(pagesRef, `module ${m.name}: pages is not a $profile: reference`)) {
        const pf = path.join(mdir, 'src/main/resources/base/profile', pagesRef[1] + '.json');
        const pages = fs.existsSync(pf) ? read5(pf).src || [] : [];
        need(pages.length > 0, `module ${m.name}: no pages in ${pagesRef[1]}.json`);
        for (const page of pages) {
          const file = path.join(mdir, 'src/main/ets', page + '.ets');
          need(fs.existsSync(file) && /@Entry\b/.test(fs.readFileSync(file, 'utf8')),
            `module ${m.name}: page ${page} has no src/main/ets/${page}.ets with an @Entry component`);
        }
      }
      // Abilities: the main element exists, its source exists and default-exports it.
      const abilities = mod.abilities || [];
      need(abilities.some((a) => a.name === mod.mainElement), `module ${m.name}: mainElement ${mod.mainElement} is not an ability`);
      for (const a of abilities) {
        const src = path.join(mdir, 'src/main', a.srcEntry || '');
        need(fs.existsSync(src) && new RegExp(`export default class ${a.name}\\b`).test(fs.readFileSync(src, 'utf8')),
          `module ${m.name}: ability ${a.name}: ${a.srcEntry} does not default-export class ${a.name}`);
      }
      const home = abilities.some((a) => (a.skills || []).some((s) => (s.entities || []).includes('entity.system.home') &&
        (s.actions || []).includes('ohos.want.action.home')));
      need(home, `module ${m.name}: no ability with the launcher skill (entity.system.home / ohos.want.action.home)`);
      const perms = (mod.requestPermissions || []).map((p) => p.name);
      need(perms.includes('ohos.permission.INTERNET'), `module ${m.name}: requestPermissions lacks ohos.permission.INTERNET`);
    }
  }

  // The app runs on no device type the HAR does not declare.
  const devices = (name) => {
    const f = moduleDirs[name] && path.join(moduleDirs[name], 'src/main/module.json5');
    return f && fs.existsSync(f) ? (read5(f).module || {}).deviceTypes || [] : [];
  };
  for (const d of devices('example')) {
    need(devices('arkagent').includes(d), `example: deviceType ${d} is not among the HAR's (${devices('arkagent').join(', ')})`);
  }

  // The example depends on the HAR module by file path, under the HAR's package name.
  if (moduleDirs.arkagent && moduleDirs.example && fs.existsSync(path.join(moduleDirs.example, 'oh-package.json5')) &&
    fs.existsSync(path.join(moduleDirs.arkagent, 'oh-package.json5'))) {
    const har = read5(path.join(moduleDirs.arkagent, 'oh-package.json5'));
    const deps = read5(path.join(moduleDirs.example, 'oh-package.json5')).dependencies || {};
    need(har.name === HAR_NAME, `the HAR's package name is ${har.name}, expected ${HAR_NAME}`);
    const spec = deps[har.name];
    need(typeof spec === 'string' && spec.startsWith('file:') &&
      path.resolve(moduleDirs.example, spec.slice(5)) === moduleDirs.arkagent,
    `example: dependency ${har.name} is ${spec}, expected file: of the HAR module`);
  }

  // Root oh-package.json5 and hvigor: one modelVersion; the ohosTest's hypium and hamock.
  const pkg = read5(path.join(dir, 'oh-package.json5'));
  const hvigor = read5(path.join(dir, 'hvigor/hvigor-config.json5'));
  need(typeof pkg.modelVersion === 'string' && pkg.modelVersion === hvigor.modelVersion,
    `oh-package.json5 modelVersion ${pkg.modelVersion} and hvigor-config.json5 modelVersion ${hvigor.modelVersion} differ`);
  for (const dev of ['@ohos/hypium', '@ohos/hamock']) {
    need(pkg.devDependencies && typeof pkg.devDependencies[dev] === 'string', `oh-package.json5: no devDependency ${dev}`);
  }
  need(/system:\s*appTasks\b/.test(fs.readFileSync(path.join(dir, 'hvigorfile.ts'), 'utf8')), 'hvigorfile.ts does not use appTasks');
  return problems;
}

/** A scratch copy of the project (no build outputs), changed by `mutate`, checked. */
function checkMutated(mutate) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ohos1-'));
  try {
    fs.cpSync(PROJECT, tmp, {
      recursive: true,
      filter: (src) => !/(^|\/)(oh_modules|node_modules|build|\.hvigor|libs)(\/|$)/.test(path.relative(PROJECT, src)),
    });
    mutate(tmp);
    return checkProject(tmp);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

function edit5(file, change) {
  const value = read5(file);
  change(value);
  fs.writeFileSync(file, JSON.stringify(value, null, 2));
}

test('ohos_1_the_devEco_project_is_complete_and_consistent', () => {
  assert.deepEqual(checkProject(PROJECT), []);
  const app = read5(path.join(PROJECT, 'AppScope/app.json5')).app;
  assert.equal(app.bundleName, 'dev.arkagent.example');
  assert.equal(app.versionCode, 1000000);
});

test('ohos_1_the_project_check_fails_when_a_rule_is_broken', () => {
  const cases = [
    [(d) => fs.rmSync(path.join(d, 'example/src/main/ets/pages/Index.ets')), /page pages\/Index has no/],
    [(d) => fs.rmSync(path.join(d, 'AppScope/resources/base/media/app_icon.png')), /\$media:app_icon not in/],
    [(d) => edit5(path.join(d, 'example/src/main/resources/base/element/string.json'), (v) => {
      v.string = v.string.filter((s) => s.name !== 'EntryAbility_label');
    }), /\$string:EntryAbility_label not in/],
    [(d) => edit5(path.join(d, 'example/src/main/module.json5'), (v) => {
      v.module.requestPermissions = [];
    }), /lacks ohos.permission.INTERNET/],
    [(d) => edit5(path.join(d, 'arkagent/src/main/module.json5'), (v) => {
      v.module.type = 'shared';
    }), /module arkagent: type shared, expected har/],
    [(d) => edit5(path.join(d, 'example/oh-package.json5'), (v) => {
      v.dependencies['@arkagent/arkagent'] = 'file:../elsewhere';
    }), /dependency @arkagent\/arkagent is file:\.\.\/elsewhere/],
    [(d) => edit5(path.join(d, 'build-profile.json5'), (v) => {
      v.app.products[0].compatibleSdkVersion = '4.1.0(11)';
    }), /compatibleSdkVersion 4\.1\.0\(11\), expected 5\.0\.0\(12\)/],
    [(d) => edit5(path.join(d, 'build-profile.json5'), (v) => {
      v.modules[0].srcPath = './nowhere';
    }), /srcPath \.\/nowhere does not exist/],
    [(d) => edit5(path.join(d, 'example/src/main/module.json5'), (v) => {
      v.module.deviceTypes.push('wearable');
    }), /deviceType wearable is not among the HAR's/],
    [(d) => edit5(path.join(d, 'AppScope/app.json5'), (v) => {
      v.app.versionCode = '1';
    }), /versionCode 1 is not a positive integer/],
  ];
  for (const [mutate, want] of cases) {
    const problems = checkMutated(mutate);
    assert.ok(problems.some((p) => want.test(p)), `expected ${want} among: ${problems.join(' | ') || '(none)'}`);
  }
});

// What README.md promises the example page does, against its source (the lint proves it
// type-checks against the HAR's API; this ties each promised feature to the call making it).
test('ohos_1_the_example_page_streams_shows_tools_usage_episodes_and_sub_agents_and_resumes', () => {
  const page = fs.readFileSync(path.join(PROJECT, 'example/src/main/ets/pages/Index.ets'), 'utf8');
  const imports = [...page.matchAll(/from '([^']+)'/g)].map((m) => m[1]);
  assert.deepEqual([...new Set(imports)], [HAR_NAME], 'the page imports only the HAR');
  const promised = {
    'streaming on': /model\.stream = true;/,
    'the HAR transport': /new NetworkKitTransport\(\)\.asTransport\(\)/,
    'text deltas': /event\.type === 'text_delta'/,
    'tool calls shown': /event\.type === 'tool_call_started'[\s\S]*event\.type === 'tool_call_finished'/,
    'a small tool registered': /tools\.register\(CURRENT_TIME, currentTime\)/,
    '/usage command': /text === '\/usage'\) \{\s*this\.refreshPanels\(\);\s*this\.add\('info', this\.usage\)/,
    'usage totals of the run tree': /runtime\.totalUsage\(\)/,
    'episodes after a compression': /runtime\.listEpisodes\(\)/,
    'compression (automatic and manual)': /new ContextCompressor\(COMPRESSION_THRESHOLD[\s\S]*compressNow\(\)/,
    'sub-agents registered and listed': /registerSubAgent\(SubAgentDefinition\.create\('researcher'[\s\S]*runtime\.subAgents\(\)/,
    'the resume spot': /RESUME-HOOK \(OHOS-1\)/,
    // STORE-6: the chat resumes after a restart.
    'a session store in filesDir, opened at the resume spot':
      /RESUME-HOOK \(OHOS-1\)[\s\S]*this\.getUIContext\(\)\.getHostContext\(\)[\s\S]*SessionStore\.open\(context\.filesDir \+ '\/sessions\.db'\)[\s\S]*aboutToDisappear/,
    'a saved session found by its fixed id, then the runtime built and its messages shown':
      /this\.store\.list\(\)\.find\([\s\S]*s\.id === CHAT_SESSION_ID[\s\S]*this\.showHistory\(this\.ensureRuntime\(\)\.historyJson\(\)\)/,
    'the runtime constructed with the store and the fixed session id':
      /config\.sessionId = CHAT_SESSION_ID;[\s\S]*new AgentRuntime\(config, new NetworkKitTransport\(\)\.asTransport\(\), tools, store\)/,
    'a settings change hands the session over (detach, then resume)': /previous\.detachStore\(\);\s*\}\s*runtime = new AgentRuntime\(/,
    'restored user and assistant texts shown': /private showHistory\(historyJson: string\)[\s\S]*this\.add\(message\.role, message\.content/,
  };
  for (const [what, re] of Object.entries(promised)) assert.match(page, re, what);
  // getContext(this) is deprecated from API 18 (a warning on every current SDK).
  assert.doesNotMatch(page.replace(/\/\/.*$/gm, ''), /\bgetContext\(/, 'the page uses the deprecated getContext()');
  assert.match(page, /const COMPRESSION_THRESHOLD: number = 6000;/, 'README says: automatic above 6000 prompt tokens');
  assert.doesNotMatch(page, /console\.|hilog/, 'the page logs nothing (the API key is never logged)');
});

// The project's and the example's hvigorfile.ts, transpiled and run as hvigor loads them (with
// a stand-in for @ohos/hvigor-ohos-plugin): each exports hvigor's built-in tasks of its kind.
test('ohos_1_hvigorfiles_load_with_their_builtin_tasks', () => {
  const ts = require(path.join(root, 'scripts/arkts-lint/node_modules/ohos-typescript'));
  const plugin = { appTasks: { kind: 'app' }, hapTasks: { kind: 'hap' }, harTasks: { kind: 'har' } };
  const load = (rel) => {
    const file = path.join(PROJECT, rel);
    const out = ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2021 },
      fileName: file,
      reportDiagnostics: true,
    });
    assert.deepEqual((out.diagnostics || []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')), [], rel);
    const mod = { exports: {} };
    const req = (name) => {
      if (name === '@ohos/hvigor-ohos-plugin') return plugin;
      // example/hvigorfile.ts checks the HAR's libraries (ohos_5_example_build.test.js).
      if (name === 'fs' || name === 'path') return require(name);
      if (name === '@ohos/hvigor') return {};
      throw new Error(`${rel} imports ${name}`);
    };
    new Function('require', 'module', 'exports', '__filename', '__dirname', out.outputText)(
      req, mod, mod.exports, file, path.dirname(file));
    return mod.exports.default;
  };
  assert.equal(load('hvigorfile.ts').system, plugin.appTasks);
  assert.deepEqual(load('hvigorfile.ts').plugins, []);
  assert.equal(load('example/hvigorfile.ts').system, plugin.hapTasks);
});

// README (Building for HarmonyOS, step 4): "`signingConfigs` is empty in the repository"
// (DevEco generates the signature; no signing material is committed).
test('ohos_1_signing_configs_are_empty_in_the_repository', () => {
  const profile = read5(path.join(PROJECT, 'build-profile.json5'));
  assert.deepEqual(profile.app.signingConfigs, []);
  for (const p of profile.app.products) assert.equal(p.signingConfig, undefined, `product ${p.name} names a signing config`);
});
