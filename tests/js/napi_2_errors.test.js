'use strict';
// NAPI-2: every error the module throws carries a stable, documented `code` (index.d.ts,
// "Refused inputs"), argument-type errors and private constructors included, and numbers
// are range-checked instead of wrapped. The tables below name every class, constructor,
// setter and method of the module; completeness checks fail when one is added without
// an entry here. Also: HttpBodySink.writeBytes takes ArrayBuffer, Uint8Array and Buffer.

const test = require('node:test');
const assert = require('node:assert/strict');

const {
  native, completion, textStream, ScriptedModel, modelConfig, runtimeConfig,
} = require('./support');

const SETTING = 'invalid_config';
const ARGUMENT = 'invalid_argument';

// ---- value kinds: what each accepts (one valid value) and what it must refuse ----------

const U32_MAX = 2 ** 32 - 1;
const SAFE_MAX = Number.MAX_SAFE_INTEGER;
const MISSING = Symbol('missing');
const BAD_NUMBERS = [-1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, -0.5, '5', true, {}, Symbol('n')];

/** An instance of a class other than `name`. */
function otherInstance(name) {
  return name === 'ToolRegistry' ? new native.ToolDefinition('t', 'd', '{}') : new native.ToolRegistry();
}

let mcpNames = 0;
const KINDS = {
  string: { valid: () => 'x', bad: () => [42, null, MISSING, {}, Symbol('s'), true, ['x']] },
  'string?': { valid: () => 'x', bad: () => [42, {}, Symbol('s'), true] },
  // WIRE-1: a protocol name the core knows.
  wireFormat: { valid: () => 'anthropic', bad: () => ['Anthropic', 'x', '', 42, null, MISSING, {}, Symbol('s'), true] },
  bool: { valid: () => true, bad: () => ['true', 1, 0, null, MISSING, {}] },
  // THINK-4: a provider, a thinking setting, a replay policy the core knows; a JSON object.
  'provider?': { valid: () => 'kimi', bad: () => ['Kimi', 'x', '', 42, {}, Symbol('s'), true] },
  'thinking?': {
    valid: () => ({ budgetTokens: 2048 }),
    bad: () => ['yes', 'OFF', 42, true, {}, { effort: 'huge' }, { effort: 'low', budgetTokens: 5 }, { budgetTokens: -1 }, { budgetTokens: 1.5 }, [1]],
  },
  reasoningReplay: { valid: () => 'all', bad: () => ['All', 'x', '', 42, null, MISSING, {}, true] },
  extraBody: { valid: () => ({ enable_search: true, n: [1, 'a', null] }), bad: () => [5, 'x', null, MISSING, true, () => {}, { f: () => {} }, [1, 2], []] },
  extraHeaders: { valid: () => ({ 'anthropic-beta': 'x', 'OpenAI-Organization': 'org-1' }), bad: () => [5, 'x', null, MISSING, true, { a: 1 }, { a: null }, { a: ['x'] }, { a: {} }, ['x']] },
  // IMG-3: an image token rule the core knows, or undefined to clear it.
  'imageTokens?': { valid: () => 'qwen_vl', bad: () => ['Qwen', 'x', '', 42, {}, Symbol('s'), true] },
  // IMG-1: a run's parts, a photo's bytes, type, detail and URL.
  parts: { valid: () => [native.ContentPart.text('x')], bad: () => [5, 'x', [5], ['x'], [{}], {}, null, MISSING] },
  photo: {
    valid: () => Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64')).buffer,
    bad: () => [5, 'x', {}, [1, 2], null, MISSING],
  },
  'mime?': { valid: () => 'image/png', bad: () => [42, {}, Symbol('s'), true] },
  'detail?': { valid: () => 'low', bad: () => ['LOW', 'x', 42, {}, true] },
  url: { valid: () => 'https://example.com/a.png', bad: () => [42, null, MISSING, {}, true] },
  // A count stored in 64 bits: any non-negative safe integer.
  int: { valid: () => SAFE_MAX, bad: () => [...BAD_NUMBERS, null, MISSING] },
  'int?': { valid: () => SAFE_MAX, bad: () => BAD_NUMBERS },
  u32: { valid: () => U32_MAX, bad: () => [...BAD_NUMBERS, 2 ** 32, null, MISSING] },
  'u32?': { valid: () => U32_MAX, bad: () => [...BAD_NUMBERS, 2 ** 32] },
  'finite?': { valid: () => 0.5, bad: () => [NaN, Infinity, -Infinity, 1e39, '0.5', {}] },
  function: { valid: () => () => {}, bad: () => [5, 'f', {}, null, MISSING] },
  'function?': { valid: () => async () => '{"outcome":"skipped"}', bad: () => [5, 'f', {}, true] },
  usages: {
    valid: () => [{ promptTokens: 1, completionTokens: 1, totalTokens: 2 }],
    bad: () => [5, 'x', [5], [{}], [{ promptTokens: -1, completionTokens: 0, totalTokens: 0 }],
      [{ promptTokens: 1.5, completionTokens: 0, totalTokens: 0 }], MISSING, null],
  },
  'string[]|null': { valid: () => ['a'], bad: () => ['a', [1], {}, 5] },
  'string[]': { valid: () => ['a'], bad: () => ['a', [1], {}, 5, null, MISSING] },
  'usage?': {
    valid: () => ({ promptTokens: 1, completionTokens: 1, totalTokens: 2 }),
    bad: () => [5, 'x', {}, { promptTokens: -1, completionTokens: 0, totalTokens: 0 }],
  },
  // COST-2: a ModelPrice, or undefined to clear it.
  'price?': {
    valid: () => ({ currency: 'USD', inputPerMillion: 0.27, cachedInputPerMillion: 0.07, outputPerMillion: 1.1 }),
    bad: () => [5, 'x', {}, { currency: 'USD' },
      { currency: '', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1 },
      { currency: 'USD', inputPerMillion: -1, cachedInputPerMillion: 1, outputPerMillion: 1 },
      { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: NaN, outputPerMillion: 1 },
      { currency: 'USD', inputPerMillion: 1, cachedInputPerMillion: 1, outputPerMillion: 1, cacheWritePerMillion: Infinity }],
  },
  event: {
    valid: () => ({ type: 'run_started', sessionId: 's', runId: 'r', seq: 1, payloadJson: '{}' }),
    bad: () => [5, 'x', {}, null, MISSING],
  },
  // MCP-3: McpServerOptions (a fresh name each time: a name is added once).
  mcpServer: {
    valid: () => ({ name: `m${(mcpNames += 1)}`, url: 'https://mcp.example.test/mcp' }),
    bad: () => [5, 'x', {}, { name: 1, url: 'x' }, { name: 'm', url: 'https://x.test', headers: 5 }, null, MISSING],
  },
  tasks: {
    valid: () => [{ assignee: 'w', taskDescription: 't' }],
    bad: () => [5, 'x', [5], [{}], [{ assignee: 1, taskDescription: 't' }], [{ assignee: 'w' }], MISSING, null],
  },
  response: {
    valid: () => ({ status: 429, headers: [{ name: 'retry-after', value: '1' }], body: '{}' }),
    bad: () => [5, 'x', {}, { status: 'x' }, { status: 429, headers: 5 }, null, MISSING],
  },
  bytes: {
    valid: () => new Uint8Array(0),
    bad: () => ['abc', [1, 2], new Uint16Array(2), new Int8Array(2), new DataView(new ArrayBuffer(2)), {}, 5, null, MISSING],
  },
};

/** A class-instance kind: accepts an instance of `name` (and null/undefined when optional). */
function instanceKind(name, make, optional = false) {
  // Object.create(prototype) passes `instanceof` but wraps no native object.
  const bad = [{}, otherInstance(name), 'x', 5, [], Object.create(native[name].prototype)];
  if (!optional) bad.push(null, MISSING);
  return { valid: make, bad: () => bad };
}

const policy = () => new native.SubAgentPolicy();
const compressor = () => new native.ContextCompressor();

function describe(value) {
  if (value === MISSING) return '<missing>';
  if (typeof value === 'symbol') return value.toString();
  if (typeof value === 'number' || value === null || value === undefined) return String(value);
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  if (typeof value === 'object' && Object.getPrototypeOf(value) !== Object.prototype && !Array.isArray(value)) {
    return `a ${value.constructor.name} object`;
  }
  try { return JSON.stringify(value); } catch { return String(value); }
}

/** Throws unless `fn` throws an Error with `code`. */
function assertCode(fn, code, what) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof Error, `${what}: threw an Error`);
    assert.equal(e.code, code, `${what}: code (message: ${e.message})`);
    return true;
  }, `${what}: refused`);
}

// ---- the tables ----------------------------------------------------------------------

/** Every settable property: its kind. Refusals throw invalid_config. */
const SETTERS = {
  ToolDefinition: {
    make: () => new native.ToolDefinition('t', 'd', '{}'),
    props: { requiresApproval: KINDS.bool },
  },
  ModelConfig: {
    make: modelConfig,
    props: {
      baseUrl: KINDS.string, model: KINDS.string, wireFormat: KINDS.wireFormat, temperature: KINDS['finite?'], maxTokens: KINDS['u32?'],
      stream: KINDS.bool, maxAttempts: KINDS.u32, initialBackoffMs: KINDS.int, maxBackoffMs: KINDS.int,
      requestTimeoutMs: KINDS.int,
      idleTimeoutMs: KINDS.int,
      price: KINDS['price?'],
      imageTokens: KINDS['imageTokens?'], maxImageBytes: KINDS.int, maxImagesPerRequest: KINDS.u32,
      provider: KINDS['provider?'], thinking: KINDS['thinking?'], reasoningReplay: KINDS.reasoningReplay, extraBody: KINDS.extraBody,
      extraHeaders: KINDS.extraHeaders,
    },
  },
  AgentRuntimeConfig: {
    make: () => runtimeConfig(),
    props: {
      subAgentPolicy: instanceKind('SubAgentPolicy', policy), allowClone: KINDS.bool,
      childTokenBudget: KINDS['int?'], contextCompressor: instanceKind('ContextCompressor', compressor, true),
      systemPrompt: KINDS.string, maxIterations: KINDS.u32, maxParallelTools: KINDS.u32, sessionId: KINDS.string,
      toolTimeoutMs: KINDS.u32, keepOriginalImages: KINDS.bool,
    },
  },
  ContextCompressor: {
    make: compressor,
    props: {
      totalTokenThreshold: KINDS.int, keepRecentMessageCount: KINDS.int, summaryPrompt: KINDS.string,
      minMessagesToSummarize: KINDS.int, summarizerMaxInputTokens: KINDS['int?'],
      summarizerModel: instanceKind('ModelConfig', modelConfig, true),
    },
  },
  SubAgentPolicy: {
    make: policy,
    props: {
      maxDepth: KINDS.u32, maxDelegationsPerRun: KINDS.u32, maxConcurrentChildren: KINDS.u32,
      parentContextMessageCount: KINDS.int,
    },
  },
  WorkerConfig: {
    // Filled in by the test from a real factory call.
    make: null,
    props: {
      systemPrompt: KINDS.string, maxIterations: KINDS.u32, maxParallelTools: KINDS.u32,
      toolTimeoutMs: KINDS.u32, model: instanceKind('ModelConfig', modelConfig),
    },
  },
};

/** Public constructors: argument kinds and the refusal code. */
const CONSTRUCTORS = {
  ModelConfig: { code: SETTING, args: [KINDS.string, KINDS.string, KINDS.string] },
  AgentRuntimeConfig: { code: SETTING, args: [instanceKind('ModelConfig', modelConfig)] },
  ContextCompressor: { code: SETTING, args: [KINDS['int?'], KINDS['int?'], KINDS['string?'], KINDS['int?']] },
  SubAgentPolicy: { code: SETTING, args: [KINDS['u32?'], KINDS['u32?'], KINDS['u32?'], KINDS['int?']] },
  ToolDefinition: { code: ARGUMENT, args: [KINDS.string, KINDS.string, KINDS.string, KINDS['u32?']] },
  ToolRegistry: { code: ARGUMENT, args: [] },
  AgentRuntime: {
    code: ARGUMENT,
    args: [
      instanceKind('AgentRuntimeConfig', () => runtimeConfig()), KINDS.function,
      instanceKind('ToolRegistry', () => new native.ToolRegistry()),
      instanceKind('SessionStore', () => native.SessionStore.openMemory(), true),
    ],
  },
};

/** Classes whose instances only the module creates. */
const PRIVATE = [
  'HttpBodySink', 'WorkerConfig', 'SubAgentDefinition', 'DecomposedResult', 'EpisodicMemory',
  'SessionStore', 'EpisodeIdValidation', 'CompressContext', 'CompressOutcome', 'NamespaceStats', 'MemoryNamespace',
  'ToolContext', 'SubAgentChildEvent', 'ContentPart', 'ToolAbortSignal',
];

/** Module functions (PAR-1): argument kinds (refusals throw invalid_argument). */
const FUNCTIONS = {
  computeSafeSplitIndex: [KINDS.string, KINDS.int],
  toolCallsPaired: [KINDS.string],
  validateEpisodicMemoryIds: [KINDS.string],
  allocateIsolatedSessionId: [KINDS.string, KINDS.string, KINDS['string[]'], KINDS.function],
  sumUsages: [KINDS.usages],
  summarizeResult: [KINDS.string],
  estimateImageTokens: [instanceKind('ModelConfig', modelConfig), instanceKind('ContentPart', () => native.ContentPart.image(KINDS.photo.valid()))],
  setDefaultImageCodec: [KINDS['function?']],
};

/** Every method: argument kinds (refusals throw invalid_argument). */
const METHODS = {
  ToolRegistry: {
    register: [instanceKind('ToolDefinition', () => new native.ToolDefinition('t', 'd', '{}')), KINDS.function, KINDS['function?']],
    unregister: [KINDS.string], has: [KINDS.string], names: [],
  },
  AgentRuntimeConfig: {
    registerSubAgent: [instanceKind('SubAgentDefinition', () => native.SubAgentDefinition.create('w', 'd', () => {}))],
    subAgentNames: [], setRoleWhitelist: [KINDS.string, KINDS['string[]|null']], roles: [], roleWhitelist: [KINDS.string],
    setCustomCompressor: [KINDS['function?'], KINDS['int?']], setToolPolicy: [KINDS['function?']], setImageCodec: [KINDS['function?']],
    addMcpServer: [KINDS.mcpServer, KINDS['function?']], mcpServerNames: [],
  },
  AgentRuntime: {
    run: [KINDS.string], compressNow: [], cancel: [], exportState: [], importState: [KINDS.string], historyJson: [],
    episodicMemories: [], listEpisodes: [], findEpisode: [KINDS.string], usages: [], subscribe: [KINDS.function],
    unsubscribe: [KINDS.u32], totalUsage: [], activeChildren: [], subAgents: [], closeSubAgents: [],
    runDecomposed: [KINDS.tasks, KINDS['int?']], memoryStore: [KINDS.string, KINDS.string, KINDS.string],
    memoryRecall: [KINDS.string, KINDS.string], detachStore: [],
    forceCompleteSubAgent: [KINDS.string, KINDS.string], cleanupSubAgents: [KINDS.int], memory: [],
    runParts: [KINDS.parts], image: [KINDS.string],
    pendingApprovals: [], approve: [KINDS.string, KINDS['string?']], reject: [KINDS.string, KINDS['string?']], resumeRun: [], cancelApprovals: [],
    rewind: [KINDS.string], regenerate: [KINDS.string], editAndResend: [KINDS.string, KINDS.string], fork: [KINDS.string, KINDS['string?']],
  },
  MemoryNamespace: {
    store: [KINDS.string, KINDS.string, KINDS.string], recall: [KINDS.string, KINDS.string],
    forget: [KINDS.string, KINDS.string], ids: [KINDS.string], stats: [],
  },
  ToolContext: { listEpisodes: [], findEpisode: [KINDS.string] },
  ToolAbortSignal: { onAbort: [KINDS.function] },
  CompressOutcome: { toJson: [] },
  SessionStore: { list: [], delete: [KINDS.string] },
  HttpBodySink: {
    write: [KINDS.string], writeBytes: [KINDS.bytes], end: [], fail: [KINDS.string, KINDS['string?']],
    failWithResponse: [KINDS.response], onCancel: [KINDS.function],
  },
  WorkerConfig: { setCustomCompressor: [KINDS['function?'], KINDS['int?']] },
};
const STATICS = {
  SubAgentDefinition: { create: [KINDS.string, KINDS.string, KINDS.function] },
  SessionStore: { open: [KINDS.string], openMemory: [] },
  CompressContext: { parse: [KINDS.string] },
  CompressOutcome: {
    skipped: [KINDS['string?']], failed: [KINDS['string?'], KINDS['string?']],
    compressed: [KINDS.int, KINDS.string, KINDS['string?'], KINDS['usage?']],
  },
  SubAgentChildEvent: { from: [KINDS.event] },
  ContentPart: {
    text: [KINDS.string], image: [KINDS.photo, KINDS['mime?'], KINDS['detail?']], imageUrl: [KINDS.url, KINDS['detail?']],
  },
};

// ---- the walkers ---------------------------------------------------------------------

/** Calls `call(args)` with each argument replaced in turn by each refused value. */
function walkArguments(kinds, code, what, call) {
  const valid = () => kinds.map((k) => k.valid());
  for (let i = 0; i < kinds.length; i += 1) {
    for (const bad of kinds[i].bad()) {
      const args = valid();
      if (bad === MISSING) args.length = i; else args[i] = bad;
      assertCode(() => call(args), code, `${what} argument ${i} = ${describe(bad)}`);
    }
  }
}

/** Assigns every refused value to every property of `instance`; the value must not change. */
function walkSetters(className, instance) {
  for (const [prop, kind] of Object.entries(SETTERS[className].props)) {
    const before = instance[prop];
    for (const bad of kind.bad()) {
      if (bad === MISSING) continue; // an assignment always has a value
      assertCode(() => { instance[prop] = bad; }, SETTING, `${className}.${prop} = ${describe(bad)}`);
      assert.deepEqual(instance[prop], before, `${className}.${prop} unchanged after refusing ${describe(bad)}`);
    }
    // The largest valid value is taken as it is (no wrap, no saturation).
    const good = kind.valid();
    instance[prop] = good;
    if (typeof good !== 'object' && typeof good !== 'function') {
      assert.equal(instance[prop], good, `${className}.${prop} keeps ${describe(good)}`);
    }
  }
}

function walkMethods(className, instance) {
  for (const [method, kinds] of Object.entries(METHODS[className])) {
    walkArguments(kinds, ARGUMENT, `${className}.${method}`, (args) => instance[method](...args));
  }
}

function settersOf(proto) {
  return Object.getOwnPropertyNames(proto).filter((k) => typeof Object.getOwnPropertyDescriptor(proto, k).set === 'function');
}

function methodsOf(proto) {
  return Object.getOwnPropertyNames(proto)
    .filter((k) => k !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, k).value === 'function');
}

const classes = Object.entries(native).filter(([name, v]) => typeof v === 'function' && !(name in FUNCTIONS));

// ---- tests ---------------------------------------------------------------------------

test('napi_2_errors_tables_cover_every_class_setter_and_method', () => {
  assert.ok(classes.length >= 15, 'the module exports its classes');
  for (const [name, cls] of classes) {
    assert.ok((name in CONSTRUCTORS) !== PRIVATE.includes(name), `${name}: exactly one of public or private constructor`);
    const setters = settersOf(cls.prototype);
    if (setters.length > 0) {
      assert.ok(SETTERS[name], `${name} has setters and a SETTERS entry`);
      assert.deepEqual([...setters].sort(), Object.keys(SETTERS[name].props).sort(), `${name}: every setter listed`);
    }
    const methods = methodsOf(cls.prototype);
    assert.deepEqual([...methods].sort(), Object.keys(METHODS[name] || {}).sort(), `${name}: every method listed`);
    const builtin = ['length', 'name', 'prototype', 'arguments', 'caller'];
    const statics = Object.getOwnPropertyNames(cls).filter((k) => !builtin.includes(k));
    assert.deepEqual(statics.sort(), Object.keys(STATICS[name] || {}).sort(), `${name}: every static listed`);
  }
});

test('napi_2_errors_private_constructors_throw_private_constructor', async () => {
  for (const name of PRIVATE) {
    assertCode(() => new native[name](), 'private_constructor', `new ${name}()`);
    assertCode(() => new native[name]('x', 1), 'private_constructor', `new ${name}('x', 1)`);
  }
  // index.d.ts declares each of them with a private constructor (ArkTS refuses `new` at
  // compile time instead of a throw at run time).
  const dts = require('node:fs').readFileSync(require('node:path').join(__dirname, '../../ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts'), 'utf8');
  for (const name of PRIVATE) {
    const at = dts.indexOf(`export class ${name} {`);
    assert.ok(at >= 0, `index.d.ts declares ${name}`);
    const body = dts.slice(at, dts.indexOf('\n}', at));
    assert.match(body, /\n {2}private constructor\(\);/, `index.d.ts: ${name}'s constructor is private`);
    assert.doesNotMatch(body, /\n {2}constructor\(/, `index.d.ts: ${name} has no public constructor`);
  }
  // The module still creates instances of them.
  const runtime = new native.AgentRuntime(runtimeConfig(), async () => ({ status: 500 }), new native.ToolRegistry());
  assert.ok(runtime.memory() instanceof native.MemoryNamespace);
  assert.ok(native.SubAgentDefinition.create('w', 'd', () => {}) instanceof native.SubAgentDefinition);
});

test('napi_2_errors_public_constructors_called_without_new_throw_invalid_call', () => {
  const exportsBefore = Object.keys(native).sort();
  for (const [name, { args }] of Object.entries(CONSTRUCTORS)) {
    const valid = args.map((k) => k.valid());
    const cls = native[name];
    // As a method of the module object (`this` is the exports), as a plain function
    // (`this` undefined), and on an existing instance.
    assertCode(() => native[name](...valid), 'invalid_call', `native.${name}(...)`);
    assertCode(() => cls(...valid), 'invalid_call', `${name}(...)`);
    const instance = new cls(...valid);
    assertCode(() => cls.call(instance, ...valid), 'invalid_call', `${name}.call(instance, ...)`);
    // Subclassing and Reflect.construct still build instances.
    const Sub = class extends cls {};
    assert.ok(new Sub(...valid) instanceof cls, `a subclass of ${name} constructs`);
    assert.ok(Reflect.construct(cls, valid) instanceof cls, `Reflect.construct(${name})`);
  }
  assert.deepEqual(Object.keys(native).sort(), exportsBefore, 'the module object was not wrapped or changed');
});

test('napi_2_errors_public_constructors_refuse_wrong_missing_and_out_of_range_arguments', () => {
  for (const [name, { code, args }] of Object.entries(CONSTRUCTORS)) {
    walkArguments(args, code, `new ${name}`, (a) => new native[name](...a));
    assert.ok(new native[name](...args.map((k) => k.valid())) instanceof native[name], `new ${name} with valid arguments`);
  }
  // The case from the issue: -1 is refused, not wrapped to 4294967295.
  assertCode(() => new native.SubAgentPolicy(-1), SETTING, 'new SubAgentPolicy(-1)');
});

test('napi_2_errors_setters_refuse_wrong_types_and_out_of_range_numbers_with_invalid_config', () => {
  for (const [name, { make }] of Object.entries(SETTERS)) {
    if (make) walkSetters(name, make());
  }
  // The case from the issue, spelled out.
  const config = runtimeConfig();
  const before = config.maxIterations;
  assertCode(() => { config.maxIterations = -1; }, SETTING, 'maxIterations = -1');
  assert.equal(config.maxIterations, before, 'not wrapped to 4294967295');
  // Optional numbers can be cleared with undefined.
  const model = modelConfig();
  model.maxTokens = 5;
  model.maxTokens = undefined;
  assert.equal(model.maxTokens, undefined);
});

test('napi_2_errors_methods_refuse_wrong_missing_and_out_of_range_arguments_with_invalid_argument', () => {
  walkMethods('ToolRegistry', new native.ToolRegistry());
  walkMethods('AgentRuntimeConfig', runtimeConfig());
  walkArguments(STATICS.SubAgentDefinition.create, ARGUMENT, 'SubAgentDefinition.create',
    (a) => native.SubAgentDefinition.create(...a));
  walkArguments(STATICS.SessionStore.open, ARGUMENT, 'SessionStore.open', (a) => native.SessionStore.open(...a));
  walkMethods('SessionStore', native.SessionStore.openMemory());
  for (const [name, kinds] of Object.entries(FUNCTIONS)) {
    assert.equal(typeof native[name], 'function', `${name} is exported`);
    walkArguments(kinds, ARGUMENT, name, (a) => native[name](...a));
  }
  for (const cls of ['CompressContext', 'CompressOutcome', 'SubAgentChildEvent']) {
    for (const [method, kinds] of Object.entries(STATICS[cls])) {
      walkArguments(kinds, ARGUMENT, `${cls}.${method}`, (a) => native[cls][method](...a));
    }
  }
  walkMethods('CompressOutcome', native.CompressOutcome.skipped());
  walkMethods('MemoryNamespace', new native.AgentRuntime(runtimeConfig(), async () => ({ status: 500 }), new native.ToolRegistry()).memory());
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('w', 'd', () => {}));
  let calls = 0;
  const runtime = new native.AgentRuntime(config, async () => { calls += 1; return { status: 500 }; }, new native.ToolRegistry());
  // Promise-returning methods throw synchronously; nothing was sent.
  walkMethods('AgentRuntime', runtime);
  assert.equal(calls, 0, 'no refused call reached the transport');
  assert.deepEqual(JSON.parse(runtime.historyJson()), [], 'no refused call changed the history');
  assert.equal(runtime.unsubscribe(U32_MAX), false, 'an unknown id in range is just not found');
  // The caller's own exception, thrown while an argument is read, propagates unchanged.
  const mine = new Error('mine');
  assert.throws(() => runtime.runDecomposed([{ get assignee() { throw mine; }, taskDescription: 't' }]),
    (e) => e === mine);
  assert.equal(calls, 0);
});

test('napi_2_errors_module_created_instances_refuse_bad_arguments_too', async () => {
  // WorkerConfig from a real factory call, HttpBodySink
  // from a streamed transport call.
  let worker;
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('w', 'd', (w) => { worker = w; }));
  const model = new ScriptedModel([() => completion({ content: 'done' })]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  const [result] = await runtime.runDecomposed([{ assignee: 'w', taskDescription: 'task' }]);
  assert.deepEqual(model.problems, []);
  assert.equal(result.isError, false, result.content);
  assert.ok(worker instanceof native.WorkerConfig);
  walkSetters('WorkerConfig', worker);
  walkMethods('WorkerConfig', worker);
  // ToolContext and its ToolAbortSignal, from a real tool call.
  const tools = new native.ToolRegistry();
  let walked = false;
  tools.register(new native.ToolDefinition('probe', 'd', '{"type":"object"}'), async (call, context) => {
    walkMethods('ToolContext', context);
    walkMethods('ToolAbortSignal', context.signal);
    walked = true;
    return { content: 'ok' };
  });
  const toolModel = new ScriptedModel([
    () => completion({ toolCalls: [{ id: 'c1', name: 'probe', arguments: {} }] }),
    () => completion({ content: 'done' }),
  ]);
  const toolRun = await new native.AgentRuntime(runtimeConfig(), toolModel.transport, tools).run('go');
  assert.deepEqual(toolModel.problems, []);
  assert.equal(toolRun.finalText, 'done');
  assert.ok(walked, 'the tool ran');
  // Records (SubAgentContext and the like) are plain objects: no methods to refuse.
  const [context] = runtime.subAgents().history;
  assert.equal(Object.getPrototypeOf(context), Object.prototype);

  const streamed = modelConfig();
  streamed.stream = true;
  let checked;
  const streaming = new ScriptedModel([(body, index, sink) => {
    checked = (async () => {
      // Refusals first: they must not reach the body.
      // Every refused call throws at argument conversion, so end() and fail() never run.
      walkMethods('HttpBodySink', sink);
      for (const chunk of textStream(['clean'])) assert.equal(sink.write(chunk), true);
      sink.end();
    })();
    return { status: 200, streamed: true };
  }]);
  const run = new native.AgentRuntime(runtimeConfig({ model: streamed }), streaming.transport, new native.ToolRegistry());
  const outcome = await run.run('go');
  await checked;
  assert.deepEqual(streaming.problems, []);
  assert.equal(outcome.finalText, 'clean', 'refused writes added nothing to the body');
});

test('napi_2_write_bytes_takes_array_buffer_uint8array_and_buffer_views_at_their_offset', async () => {
  const pieces = ['Hel', 'lo, ', 'wörld ', '世界', '!'];
  const body = Buffer.from(textStream(pieces).join(''), 'utf8');
  // Cut points, some inside multi-byte characters.
  const cuts = [0, 7, 40, 41, body.indexOf(Buffer.from('ö')) + 1, body.indexOf(Buffer.from('世')) + 2, body.length];
  const bounds = [...new Set(cuts)].sort((a, b) => a - b);
  const parts = bounds.slice(1).map((end, i) => body.subarray(bounds[i], end));
  const forms = [
    // An ArrayBuffer of exactly the bytes.
    (p) => p.buffer.slice(p.byteOffset, p.byteOffset + p.length),
    // A Uint8Array over its own buffer.
    (p) => new Uint8Array(p),
    // A Node Buffer (a Uint8Array subclass), from the shared pool: its byteOffset is not 0.
    (p) => Buffer.from(p),
    // A window into a larger buffer, with other bytes on both sides.
    (p) => {
      const big = Buffer.concat([Buffer.from('JUNK-'), p, Buffer.from('-JUNK')]);
      return big.subarray(5, 5 + p.length);
    },
    // A Uint8Array view with an offset into an ArrayBuffer full of other bytes.
    (p) => {
      const buffer = new ArrayBuffer(p.length + 16);
      new Uint8Array(buffer).fill(0x41);
      const view = new Uint8Array(buffer, 8, p.length);
      view.set(p);
      return view;
    },
  ];
  let written;
  const model = new ScriptedModel([(b, index, sink) => {
    written = (async () => {
      parts.forEach((p, i) => {
        const data = forms[i % forms.length](p);
        assert.equal(sink.writeBytes(data), true, `part ${i} as ${data.constructor.name}`);
      });
      sink.end();
    })();
    return { status: 200, streamed: true };
  }]);
  const streamed = modelConfig();
  streamed.stream = true;
  const runtime = new native.AgentRuntime(runtimeConfig({ model: streamed }), model.transport, new native.ToolRegistry());
  const result = await runtime.run('go');
  await written;
  assert.deepEqual(model.problems, []);
  assert.ok(parts.length >= forms.length, 'every form was used');
  assert.equal(result.finalText, pieces.join(''), 'exactly the bytes of each view, in order');
});
