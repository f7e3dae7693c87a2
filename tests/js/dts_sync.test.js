'use strict';
// NAPI-2 / house rule 8: ohos/arkagent/src/main/cpp/types/libarkagent/index.d.ts must match the
// module. Classes, their methods and properties are compared both ways against the loaded
// module; the declared interfaces are compared with the objects the module actually
// hands to JS (transport requests, tool calls, events, run results, usages).

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const { native, completion, ScriptedModel, runtimeConfig, waitFor } = require('./support');

const DTS_PATH = path.join(__dirname, '..', '..', 'ohos', 'arkagent', 'src', 'main', 'cpp', 'types', 'libarkagent', 'index.d.ts');

/** Strips comments, keeping line structure. */
function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
}

/**
 * Parses the top-level `export class` / `export interface` blocks of a .d.ts into
 * { kind, name, members: [{ name, kind: 'method'|'property'|'constructor', optional, readonly, isStatic }] }.
 */
function parseDts(text) {
  const source = stripComments(text);
  const declarations = new Map();
  const header = /export\s+(class|interface)\s+([A-Za-z_$][\w$]*)[^{]*\{/g;
  let match;
  while ((match = header.exec(source)) !== null) {
    let depth = 1;
    let i = header.lastIndex;
    for (; i < source.length && depth > 0; i += 1) {
      if (source[i] === '{') depth += 1;
      else if (source[i] === '}') depth -= 1;
    }
    const body = source.slice(header.lastIndex, i - 1);
    const members = [];
    // Members are separated by ';' at depth 0 of the body (no nested object types in ArkTS).
    for (const raw of body.split(';')) {
      const member = raw.trim();
      if (member === '') continue;
      const m = /^(?:(?:public|private|protected)\s+)?(readonly\s+)?(static\s+)?([A-Za-z_$][\w$]*)(\?)?\s*(\(|:)/.exec(member);
      assert.ok(m, `cannot parse member of ${match[2]}: ${member}`);
      const name = m[3];
      const kind = name === 'constructor' ? 'constructor' : m[5] === '(' ? 'method' : 'property';
      members.push({ name, kind, optional: Boolean(m[4]), readonly: Boolean(m[1]), isStatic: Boolean(m[2]) });
    }
    declarations.set(match[2], { kind: match[1], name: match[2], members });
    header.lastIndex = i;
  }
  // `export const NAME: type;` — module-level constants.
  const constant = /export\s+(?:declare\s+)?const\s+([A-Za-z_$][\w$]*)\s*:\s*([^;=]+);/g;
  while ((match = constant.exec(source)) !== null) {
    declarations.set(match[1], { kind: 'const', name: match[1], type: match[2].trim(), members: [] });
  }
  // `export function name(…): type;` — module-level functions.
  const fn = /export\s+(?:declare\s+)?function\s+([A-Za-z_$][\w$]*)\s*\(/g;
  while ((match = fn.exec(source)) !== null) {
    declarations.set(match[1], { kind: 'function', name: match[1], members: [] });
  }
  return declarations;
}

const declarations = parseDts(fs.readFileSync(DTS_PATH, 'utf8'));
const classes = [...declarations.values()].filter((d) => d.kind === 'class');
const interfaces = new Map([...declarations.values()].filter((d) => d.kind === 'interface').map((d) => [d.name, d]));
const constants = [...declarations.values()].filter((d) => d.kind === 'const');
const functions = [...declarations.values()].filter((d) => d.kind === 'function');

test('dts_sync_parser_sees_the_declarations', () => {
  // Guards the parser itself: a broken regex must not make every check vacuous.
  assert.ok(classes.length >= 5, `found classes: ${classes.map((c) => c.name)}`);
  for (const name of ['HttpRequest', 'HttpResponse', 'ToolCall', 'ToolResult', 'AgentEvent', 'ModelUsage', 'RunResult']) {
    assert.ok(interfaces.has(name), `interface ${name} declared`);
  }
  const runtime = declarations.get('AgentRuntime');
  assert.ok(runtime.members.some((m) => m.name === 'run' && m.kind === 'method'));
  assert.ok(declarations.get('SubAgentDefinition').members.some((m) => m.name === 'create' && m.isStatic));
  assert.ok(runtime.members.some((m) => m.name === 'sessionId' && m.kind === 'property' && m.readonly));
});

test('dts_sync_every_declared_class_member_exists_on_the_module', () => {
  for (const cls of classes) {
    const ctor = native[cls.name];
    assert.equal(typeof ctor, 'function', `class ${cls.name} is exported`);
    for (const member of cls.members) {
      if (member.kind === 'constructor') continue;
      // Static members live on the class itself, the others on its prototype.
      const descriptor = Object.getOwnPropertyDescriptor(member.isStatic ? ctor : ctor.prototype, member.name);
      assert.ok(descriptor, `${cls.name}.${member.isStatic ? 'static ' : ''}${member.name} exists`);
      if (member.kind === 'method') {
        assert.equal(typeof descriptor.value, 'function', `${cls.name}.${member.name} is a method`);
      } else {
        assert.equal(typeof descriptor.get, 'function', `${cls.name}.${member.name} is a property`);
        if (!member.readonly) {
          assert.equal(typeof descriptor.set, 'function', `${cls.name}.${member.name} is writable as declared`);
        }
      }
    }
  }
});

test('dts_sync_declared_constants_exist_with_their_type', () => {
  assert.ok(constants.some((c) => c.name === 'DEFAULT_SUMMARY_PROMPT'), 'the parser sees the constants');
  for (const c of constants) {
    assert.ok(c.name in native, `constant ${c.name} is exported`);
    assert.equal(typeof native[c.name], c.type, `constant ${c.name} is a ${c.type}`);
  }
});

test('dts_sync_declared_functions_exist', () => {
  assert.ok(functions.some((f) => f.name === 'computeSafeSplitIndex'), 'the parser sees the functions');
  for (const f of functions) {
    assert.equal(typeof native[f.name], 'function', `function ${f.name} is exported`);
  }
});

test('dts_sync_every_module_export_and_member_is_declared', () => {
  for (const [name, value] of Object.entries(native)) {
    const declared = declarations.get(name);
    if (declared && declared.kind === 'const') {
      assert.equal(typeof value, declared.type, `export ${name} has the declared type`);
      continue;
    }
    if (declared && declared.kind === 'function') {
      assert.equal(typeof value, 'function', `export ${name} is a function as declared`);
      continue;
    }
    assert.ok(declared && declared.kind === 'class', `export ${name} is declared as a class (or const) in index.d.ts`);
    const members = new Map(declared.members.filter((m) => !m.isStatic).map((m) => [m.name, m]));
    const statics = new Set(declared.members.filter((m) => m.isStatic).map((m) => m.name));
    // Own properties every function has are not module API.
    const builtin = new Set(['length', 'name', 'prototype', 'arguments', 'caller']);
    for (const key of Object.getOwnPropertyNames(value)) {
      if (builtin.has(key)) continue;
      assert.ok(statics.has(key), `static ${name}.${key} is declared in index.d.ts`);
    }
    for (const key of Object.getOwnPropertyNames(value.prototype)) {
      if (key === 'constructor') continue;
      const member = members.get(key);
      assert.ok(member, `${name}.${key} is declared in index.d.ts`);
      const descriptor = Object.getOwnPropertyDescriptor(value.prototype, key);
      if (typeof descriptor.value === 'function') {
        assert.equal(member.kind, 'method', `${name}.${key} is declared as a method`);
      } else {
        assert.equal(member.kind, 'property', `${name}.${key} is declared as a property`);
        if (member.readonly) {
          assert.equal(descriptor.set, undefined, `${name}.${key} is declared readonly but has a setter`);
        }
      }
    }
  }
});

/** Checks a JS object the module produced against a declared interface, both ways. */
function assertMatchesInterface(interfaceName, object) {
  const declared = interfaces.get(interfaceName);
  assert.ok(declared, `interface ${interfaceName} declared`);
  const fields = new Map(declared.members.map((m) => [m.name, m]));
  for (const key of Object.keys(object)) {
    assert.ok(fields.has(key), `${interfaceName}.${key} is declared`);
  }
  for (const field of fields.values()) {
    if (!field.optional) assert.ok(field.name in object, `${interfaceName}.${field.name} is present`);
  }
}

test('dts_sync_objects_handed_to_js_match_the_declared_interfaces', async () => {
  const registry = new native.ToolRegistry();
  const toolCalls = [];
  registry.register(new native.ToolDefinition('echo', 'Echoes', '{"type":"object"}'), async (call) => {
    toolCalls.push(call);
    return { content: call.argumentsJson };
  });
  const model = new ScriptedModel([
    () => completion({
      toolCalls: [{ id: 'c1', name: 'echo', arguments: { x: 1 } }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, prompt_tokens_details: { cached_tokens: 2 } },
    }),
    () => completion({
      content: 'ok',
      usage: { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10, completion_tokens_details: { reasoning_tokens: 1 } },
    }),
  ]);
  const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry);
  const events = [];
  runtime.subscribe((e) => events.push(e));
  const result = await runtime.run('go');
  await waitFor(() => events.some((e) => e.type === 'run_finished'), 'run_finished');

  assert.deepEqual(model.problems, []);
  for (const { request } of model.requests) {
    assertMatchesInterface('HttpRequest', request);
    for (const header of request.headers) assertMatchesInterface('HttpHeader', header);
  }
  assert.equal(toolCalls.length, 1);
  assertMatchesInterface('ToolCall', toolCalls[0]);
  assertMatchesInterface('RunResult', result);
  for (const e of events) assertMatchesInterface('AgentEvent', e);
  const usages = runtime.usages();
  assert.equal(usages.length, 2);
  for (const u of usages) assertMatchesInterface('ModelUsage', u);
  assert.ok('cachedTokens' in usages[0] && 'reasoningTokens' in usages[1], 'optional usage fields appear when reported');
});

test('dts_sync_compress_result_usage_matches_model_usage', async () => {
  const model = new ScriptedModel([], {
    summarizer: () => completion({ content: 'prose, no snapshot', usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } }),
  });
  const compressor = new native.ContextCompressor(10, 1, undefined, 1);
  compressor.summarizerMaxInputTokens = 100000;
  const config = runtimeConfig({ contextCompressor: compressor });
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry());
  runtime.importState(JSON.stringify({
    version: 1,
    session_id: 's-dts',
    history: { messages: [{ role: 'user', content: 'a'.repeat(4000) }, { role: 'assistant', content: 'b' }], episodic_memories: [] },
    usages: [{ prompt_tokens: 100, completion_tokens: 1, total_tokens: 101 }],
  }));
  const result = await runtime.compressNow();
  assert.deepEqual(model.problems, []);
  assert.equal(result.reason, 'malformed_summary');
  assertMatchesInterface('ModelUsage', result.usage);
  assert.equal(result.usage.source, 'context_compression');
});

/**
 * Input interfaces (objects JS hands to the module): every declared field must be read by
 * the module. A field set to a value of the wrong type (a Symbol) must make the conversion
 * fail; a field the module ignores would not.
 */
test('dts_sync_declared_input_interface_fields_are_read_by_the_module', async () => {
  const answer = () => completion({ content: 'ok' });
  const transportWith = (override) => async () => ({ status: 200, headers: [], body: answer(), ...override });
  // Valid as declared: completes.
  const okRuntime = new native.AgentRuntime(runtimeConfig(), transportWith({}), new native.ToolRegistry());
  assert.equal((await okRuntime.run('x')).status, 'completed');
  for (const field of interfaces.get('HttpResponse').members) {
    const runtime = new native.AgentRuntime(runtimeConfig(), transportWith({ [field.name]: Symbol('wrong') }), new native.ToolRegistry());
    await assert.rejects(runtime.run('x'), (e) => e.code === 'llm_transport', `HttpResponse.${field.name} is read`);
  }

  async function toolMessageFor(result) {
    const registry = new native.ToolRegistry();
    registry.register(new native.ToolDefinition('t', 'T', '{"type":"object"}'), async () => result);
    const model = new ScriptedModel([
      () => completion({ toolCalls: [{ id: 'c1', name: 't', arguments: {} }] }),
      () => completion({ content: 'done' }),
    ]);
    const runtime = new native.AgentRuntime(runtimeConfig(), model.transport, registry);
    await runtime.run('x');
    return JSON.parse(runtime.historyJson()).find((m) => m.role === 'tool');
  }
  const valid = await toolMessageFor({ content: 'fine', isError: false });
  assert.equal(valid.is_error, false);
  assert.equal(valid.content, 'fine');
  for (const field of interfaces.get('ToolResult').members) {
    const message = await toolMessageFor({ content: 'fine', isError: false, [field.name]: Symbol('wrong') });
    assert.equal(message.is_error, true, `ToolResult.${field.name} is read`);
  }
});

test('dts_sync_decomposed_task_fields_are_read_by_the_module', async () => {
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('w', 'Worker', () => {}));
  const runtime = new native.AgentRuntime(config, async () => ({ status: 500 }), new native.ToolRegistry());
  const valid = { assignee: 'ghost', taskDescription: 't', role: 'general', context: 'c' };
  const [result] = await runtime.runDecomposed([valid]);
  assert.equal(result.errorCode, 'subagent_unknown_assignee');
  for (const field of interfaces.get('DecomposedTask').members) {
    assert.throws(() => runtime.runDecomposed([{ ...valid, [field.name]: Symbol('wrong') }]),
      (e) => typeof e.code === 'string', `DecomposedTask.${field.name} is read`);
  }
});

test('dts_sync_session_summary_matches_the_declared_interface', async () => {
  const store = native.SessionStore.openMemory();
  const config = runtimeConfig();
  config.sessionId = 's-dts-store';
  const model = new ScriptedModel([() => completion({ content: 'ok', usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } })]);
  const runtime = new native.AgentRuntime(config, model.transport, new native.ToolRegistry(), store);
  await runtime.run('go');
  const list = store.list();
  assert.equal(list.length, 1);
  assertMatchesInterface('SessionSummary', list[0]);
});
