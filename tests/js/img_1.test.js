'use strict';
// IMG-1, IMG-2, IMG-4, IMG-5 through the N-API surface: a photo given as the ArrayBuffer an
// app gets from the photo picker or an image packer reaches the scripted model bit for bit
// in both wire formats; the history and exportState() keep it; image(id) reads it back;
// refused images reject with their codes and write nothing.

const test = require('node:test');
const assert = require('node:assert/strict');

const { native, API_KEY, runtimeConfig } = require('./support');

// A 1×1 PNG and its SHA-256.
const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const PNG_ID = 'c414cd0e204de974f73753c7e28d7638e7b3691bb8b1a2bab6b25bb7fed7ce77';
// A HEIC header of 4032 × 3024 (what phone cameras write).
const HEIC_B64 = 'AAAAGGZ0eXBoZWljAAAAAG1pZjFoZWljAAAAUm1ldGEAAAAAAAAADnBpdG0AAAAAAAEAAAA4aXBycAAAABxpcGNvAAAAFGlzcGUAAAAAAAAPwAAAC9AAAAAUaXBtYQAAAAAAAAABAAEBgQAAABhtZGF0WlpaWlpaWlpaWlpaWlpaWg==';

/** The file's bytes as the ArrayBuffer the picker or packer gives (not a Node Buffer). */
function arrayBuffer(b64) {
  const bytes = Buffer.from(b64, 'base64');
  const out = new ArrayBuffer(bytes.length);
  new Uint8Array(out).set(bytes);
  return out;
}

function reply(format) {
  if (format === 'anthropic') {
    return { id: 'm', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'a pixel' }], stop_reason: 'end_turn', usage: { input_tokens: 9, output_tokens: 2 } };
  }
  return { choices: [{ index: 0, message: { role: 'assistant', content: 'a pixel' }, finish_reason: 'stop' }], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } };
}

function runtime(format, tweak = () => {}) {
  const model = new native.ModelConfig('http://127.0.0.1:9/v1', API_KEY, 'm');
  model.wireFormat = format;
  tweak(model);
  const bodies = [];
  const rt = new native.AgentRuntime(runtimeConfig({ model }), async (request) => {
    bodies.push(JSON.parse(request.body));
    return { status: 200, body: JSON.stringify(reply(format)) };
  }, new native.ToolRegistry());
  return { rt, bodies };
}

for (const format of ['openai', 'anthropic']) {
  test(`img_1_img_2_a_photo_from_an_array_buffer_reaches_the_model_bit_for_bit (${format})`, async () => {
    const { rt, bodies } = runtime(format);
    const photo = native.ContentPart.image(arrayBuffer(PNG_B64), 'image/png', 'low');
    assert.equal(photo.kind, 'image');
    assert.deepEqual([photo.mimeType, photo.width, photo.height, photo.byteLength, photo.imageId], ['image/png', 1, 1, 70, PNG_ID]);
    const result = await rt.runParts([native.ContentPart.text('what is this?'), photo]);
    assert.equal(result.finalText, 'a pixel');
    const user = bodies[0].messages.find((m) => m.role === 'user');
    if (format === 'openai') {
      assert.deepEqual(user.content, [
        { type: 'text', text: 'what is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}`, detail: 'low' } },
      ]);
    } else {
      assert.deepEqual(user.content[0], { type: 'text', text: 'what is this?' });
      assert.deepEqual(user.content[1].source, { type: 'base64', media_type: 'image/png', data: PNG_B64 });
    }
    // The history and the export keep the photo; image(id) reads the bytes back.
    const history = JSON.parse(rt.historyJson());
    assert.deepEqual(history[0].content[1], { type: 'image', mime_type: 'image/png', data: PNG_B64, detail: 'low' });
    assert.deepEqual(JSON.parse(rt.exportState()).history.messages[0], history[0]);
    const info = rt.image(PNG_ID);
    assert.deepEqual([info.id, info.mimeType, info.width, info.height], [PNG_ID, 'image/png', 1, 1]);
    assert.equal(Buffer.from(info.bytes).toString('base64'), PNG_B64);
    assert.equal(rt.image('0'.repeat(64)), undefined);
  });
}

test('img_5_refused_images_throw_or_reject_with_their_codes_and_write_nothing', async () => {
  assert.throws(() => native.ContentPart.image(arrayBuffer('AAAA')), (e) => e.code === 'image_unsupported_type');
  assert.throws(() => native.ContentPart.image(arrayBuffer(PNG_B64), 'image/jpeg'), (e) => e.code === 'image_invalid');
  assert.throws(() => native.ContentPart.image(arrayBuffer(PNG_B64.slice(0, 20))), (e) => e.code === 'image_invalid');
  assert.throws(() => native.ContentPart.imageUrl('http://example.com/a.png'), (e) => e.code === 'image_invalid');
  assert.throws(() => native.ContentPart.image('not bytes'), (e) => e.code === 'invalid_argument');
  assert.throws(() => new native.ContentPart(), (e) => e.code === 'private_constructor');
  assert.equal(native.ContentPart.imageUrl('https://example.com/a.png').url, 'https://example.com/a.png');
  // A HEIC photo: refused by an OpenAI-compatible model with advice, taken by Gemini's family.
  const heic = native.ContentPart.image(arrayBuffer(HEIC_B64));
  assert.deepEqual([heic.mimeType, heic.width, heic.height], ['image/heic', 4032, 3024]);
  const { rt, bodies } = runtime('openai');
  await assert.rejects(rt.runParts([heic]), (e) => e.code === 'image_unsupported_type' && e.message.includes('JPEG first'));
  assert.deepEqual(JSON.parse(rt.historyJson()), []);
  assert.equal(bodies.length, 0);
  const gemini = runtime('openai', (m) => { m.imageTokens = 'gemini'; });
  await gemini.rt.runParts([heic]);
  assert.equal(gemini.bodies.length, 1);
  // The model's bounds.
  const small = runtime('openai', (m) => { m.maxImageBytes = 50; });
  await assert.rejects(small.rt.runParts([native.ContentPart.image(arrayBuffer(PNG_B64))]), (e) => e.code === 'image_too_large');
  const one = runtime('openai', (m) => { m.maxImagesPerRequest = 1; });
  const photo = native.ContentPart.image(arrayBuffer(PNG_B64));
  await one.rt.runParts([photo]);
  await assert.rejects(one.rt.runParts([photo]), (e) => e.code === 'too_many_images' && /rewind/.test(e.message) && /threshold/.test(e.message));
  assert.equal(JSON.parse(one.rt.historyJson()).length, 2);
  // Issue 40 item 2: an import checks its photos against this model's bounds.
  const exported = one.rt.exportState();
  const tiny = runtime('openai', (m) => { m.maxImageBytes = 10; });
  await assert.rejects(tiny.rt.importState(exported), (e) => e.code === 'image_too_large');
  assert.deepEqual(JSON.parse(tiny.rt.historyJson()), [], 'nothing changed');
});

test('img_3_model_config_image_settings', () => {
  const model = new native.ModelConfig('http://h/v1', 'k', 'm');
  assert.equal(model.imageTokens, undefined);
  assert.equal(model.maxImageBytes, 20 * 1024 * 1024);
  assert.equal(model.maxImagesPerRequest, 100);
  model.imageTokens = 'qwen_vl';
  assert.equal(model.imageTokens, 'qwen_vl');
  model.imageTokens = undefined;
  assert.equal(model.imageTokens, undefined);
  assert.throws(() => { model.imageTokens = 'Qwen'; }, (e) => e.code === 'invalid_config');
  assert.throws(() => { model.maxImagesPerRequest = -1; }, (e) => e.code === 'invalid_config');
});

for (const format of ['openai', 'anthropic']) {
  test(`img_1_img_2_a_js_tool_answers_with_a_photo (${format})`, async () => {
    const model = new native.ModelConfig('http://127.0.0.1:9/v1', API_KEY, 'm');
    model.wireFormat = format;
    const bodies = [];
    const call = format === 'anthropic'
      ? { id: 'm1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'tool_use', id: 'call_1', name: 'camera', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 9, output_tokens: 2 } }
      : { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'camera', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] };
    const tools = new native.ToolRegistry();
    tools.register(new native.ToolDefinition('camera', 'Takes a photo', '{"type":"object"}'),
      async () => ({ content: 'a shot', images: [new Uint8Array(arrayBuffer(PNG_B64))] }));
    const rt = new native.AgentRuntime(runtimeConfig({ model }), async (request) => {
      bodies.push(JSON.parse(request.body));
      return { status: 200, body: JSON.stringify(bodies.length === 1 ? call : reply(format)) };
    }, tools);
    await rt.run('take a photo');
    const messages = bodies[1].messages;
    if (format === 'openai') {
      const tool = messages.findIndex((m) => m.role === 'tool');
      assert.equal(messages[tool].content, 'a shot\n[1 image(s) from this tool result follow in the next user message.]');
      assert.deepEqual(messages[tool + 1], { role: 'user', content: [
        { type: 'text', text: 'Images returned by tool call call_1:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
      ] });
    } else {
      const result = messages[2].content[0];
      assert.equal(result.type, 'tool_result');
      assert.deepEqual(result.content[0], { type: 'text', text: 'a shot' });
      assert.deepEqual(result.content[1].source, { type: 'base64', media_type: 'image/png', data: PNG_B64 });
    }
  });
}

test('img_5_a_js_tool_image_that_is_refused_is_a_tool_error', async () => {
  const bodies = [];
  const tools = new native.ToolRegistry();
  tools.register(new native.ToolDefinition('camera', 'Takes a photo', '{"type":"object"}'),
    async () => ({ content: 'a shot', images: [new Uint8Array([1, 2, 3])] }));
  const call = { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'camera', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] };
  const rt = new native.AgentRuntime(runtimeConfig(), async (request) => {
    bodies.push(JSON.parse(request.body));
    return { status: 200, body: JSON.stringify(bodies.length === 1 ? call : reply('openai')) };
  }, tools);
  await rt.run('take a photo');
  const tool = JSON.parse(rt.historyJson()).find((m) => m.role === 'tool');
  assert.equal(tool.is_error, true);
  assert.match(tool.content, /image_unsupported_type/);
});

// Issue 40 item 14: a JS tool's images take what C tool parts take — bytes, a URL, a detail.
test('img_1_a_js_tool_image_may_be_a_url_or_bytes_with_a_detail', async () => {
  const call = { choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'camera', arguments: '{}' } }] }, finish_reason: 'tool_calls' }] };
  const results = [
    [{ url: 'https://example.test/cat.jpg', detail: 'high' }, new Uint8Array(arrayBuffer(PNG_B64))],
    [{ data: new Uint8Array(arrayBuffer(PNG_B64)), detail: 'low' }],
    [{ url: 'ftp://example.test/cat.jpg' }],
    [{}],
    [{ url: 'https://example.test/a.jpg', data: new Uint8Array(arrayBuffer(PNG_B64)) }],
    [{ url: 'https://example.test/a.jpg', detail: 'ultra' }],
  ];
  const seen = [];
  for (const images of results) {
    const bodies = [];
    const tools = new native.ToolRegistry();
    tools.register(new native.ToolDefinition('camera', 'Takes a photo', '{"type":"object"}'), async () => ({ content: 'a shot', images }));
    const rt = new native.AgentRuntime(runtimeConfig(), async (request) => {
      bodies.push(JSON.parse(request.body));
      return { status: 200, body: JSON.stringify(bodies.length === 1 ? call : reply('openai')) };
    }, tools);
    await rt.run('take a photo');
    const messages = bodies[1].messages;
    const tool = messages.findIndex((m) => m.role === 'tool');
    seen.push({ tool: messages[tool], next: messages[tool + 1] });
  }
  assert.deepEqual(seen[0].next.content.slice(1), [
    { type: 'image_url', image_url: { url: 'https://example.test/cat.jpg', detail: 'high' } },
    { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}` } },
  ]);
  assert.deepEqual(seen[1].next.content[1], { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_B64}`, detail: 'low' } });
  for (const refused of seen.slice(2)) {
    assert.match(refused.tool.content, /image_invalid/, JSON.stringify(refused.tool));
  }
});

// Issue 40 item 2: a sub-agent sees the parent's photos as their lines, never the pixels.
test('sub_5_img_4_js_a_sub_agent_sees_the_parents_photo_as_its_line', async () => {
  const { RoutedModel, offeredTools, completion: done } = require('./support');
  const config = runtimeConfig();
  config.registerSubAgent(native.SubAgentDefinition.create('describer', 'Describes', (w) => { w.systemPrompt = 'You describe.'; }));
  const isParent = (body) => offeredTools(body).includes('delegate_task');
  const routed = new RoutedModel([
    { name: 'parent', match: isParent, turns: [
      () => done({ toolCalls: [{ id: 'd1', name: 'delegate_task', arguments: { assignee: 'describer', task_description: 'Describe the photo.' } }] }),
      () => done({ content: 'done' }),
    ] },
    { name: 'worker', match: (body) => !isParent(body), turns: [() => done({ content: 'a small square' })] },
  ]);
  const rt = new native.AgentRuntime(config, routed.transport, new native.ToolRegistry());
  await rt.runParts([native.ContentPart.text('what is this? ask the describer'), native.ContentPart.image(arrayBuffer(PNG_B64))]);
  assert.deepEqual(routed.problems, []);
  const [workerBody] = routed.byRoute.worker;
  const text = JSON.stringify(workerBody);
  assert.ok(!text.includes('data:image') && !text.includes('image_url'), text);
  assert.ok(text.includes('[image image/png'), text);
});
