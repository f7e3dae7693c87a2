'use strict';
// IMG-6..IMG-9 through the N-API surface: the header reader's verdicts (traps refused with
// stable codes, a portrait phone photo reported by its displayed size), an estimate in one
// call (estimateImageTokens: the family from the model's name, the tokens and the size the
// provider resizes to), and a codec (a pure-JS JPEG codec, jpeg-js, written for this test)
// that prepares photos: a 12 MP HEIC reaches an OpenAI-format model as a JPEG of exactly
// the size the provider would use, a turned JPEG arrives upright; a failing codec writes
// nothing; setDefaultImageCodec registers one for every config that sets none.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

const { native, API_KEY, runtimeConfig } = require('./support');

const jpegjs = require(path.join(__dirname, '..', 'images', 'node_modules', 'jpeg-js'));

// A 4032 × 3024 HEIC: ftyp heic, meta with its primary item's ispe, a small mdat.
const HEIC_B64 = 'AAAAGGZ0eXBoZWljAAAAAG1pZjFoZWljAAAAUm1ldGEAAAAAAAAADnBpdG0AAAAAAAEAAAA4aXBycAAAABxpcGNvAAAAFGlzcGUAAAAAAAAPwAAAC9AAAAAUaXBtYQAAAAAAAAABAAEBgQAAABhtZGF0WlpaWlpaWlpaWlpaWlpaWg==';
const HEIC_ID = 'a4b4dd7f8bdd19c636331c4e1e0e2ccd68fa24077c7248710fd487b8e8361c03';

/** A real JPEG of w × h (a gradient), encoded by jpeg-js. */
function encodeJpeg(width, height, pixel = (x, y) => [x % 256, y % 256, 128]) {
  const data = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y);
      data.set([r, g, b, 255], (y * width + x) * 4);
    }
  }
  return new Uint8Array(jpegjs.encode({ data, width, height }, 85).data);
}

/** `jpeg` with an EXIF APP1 stating `orientation` right after its SOI. */
function withOrientation(jpeg, orientation) {
  const app1 = Buffer.from([0xFF, 0xE1, 0, 34, 0x45, 0x78, 0x69, 0x66, 0, 0, 0x49, 0x49, 42, 0, 8, 0, 0, 0, 1, 0,
    0x12, 0x01, 3, 0, 1, 0, 0, 0, orientation, 0, 0, 0, 0, 0, 0, 0]);
  return new Uint8Array(Buffer.concat([Buffer.from(jpeg.subarray(0, 2)), app1, Buffer.from(jpeg.subarray(2))]));
}

/**
 * The test's codec: decodes a JPEG with jpeg-js (a HEIC, which no JS library here decodes,
 * becomes a gradient), turns it by the EXIF orientation, scales it (nearest pixel) to
 * exactly width × height and encodes a JPEG.
 */
function testCodec(calls) {
  return async (request) => {
    calls.push({ mimeType: request.mimeType, targetMimeType: request.targetMimeType, width: request.width, height: request.height, orientation: request.orientation, bytes: request.bytes.length });
    if (request.mimeType !== 'image/jpeg') return encodeJpeg(request.width, request.height);
    const src = jpegjs.decode(Buffer.from(request.bytes), { useTArray: true });
    const turned = request.orientation >= 5;
    const [dw, dh] = turned ? [src.height, src.width] : [src.width, src.height];
    return encodeJpeg(request.width, request.height, (x, y) => {
      // The displayed pixel (x, y) of the dw × dh upright image, scaled.
      const ux = Math.floor(x * dw / request.width);
      const uy = Math.floor(y * dh / request.height);
      // EXIF 6: the stored image is the upright one turned 90° anticlockwise.
      const [sx, sy] = request.orientation === 6 ? [uy, src.height - 1 - ux] : [ux, uy];
      const i = (sy * src.width + sx) * 4;
      return [src.data[i], src.data[i + 1], src.data[i + 2]];
    });
  };
}

function reply() {
  return { choices: [{ index: 0, message: { role: 'assistant', content: 'a fern' }, finish_reason: 'stop' }], usage: { prompt_tokens: 900, completion_tokens: 2, total_tokens: 902 } };
}

function runtime(modelName, setup = () => {}) {
  const model = new native.ModelConfig('http://127.0.0.1:9/v1', API_KEY, modelName);
  const config = runtimeConfig({ model });
  setup(config);
  const bodies = [];
  const rt = new native.AgentRuntime(config, async (request) => {
    bodies.push(JSON.parse(request.body));
    return { status: 200, body: JSON.stringify(reply()) };
  }, new native.ToolRegistry());
  return { rt, bodies };
}

function imageOf(body) {
  const part = body.messages.at(-1).content.find((p) => p.type === 'image_url');
  const [, mime, data] = /^data:([^;]+);base64,(.*)$/.exec(part.image_url.url);
  return { mime, bytes: Buffer.from(data, 'base64') };
}

test('img_7_a_portrait_phone_photo_reports_its_displayed_size', () => {
  const photo = native.ContentPart.image(withOrientation(encodeJpeg(64, 48), 6));
  assert.deepEqual([photo.width, photo.height, photo.storedWidth, photo.storedHeight, photo.orientation], [48, 64, 64, 48, 6]);
  const heic = native.ContentPart.image(Buffer.from(HEIC_B64, 'base64'));
  assert.deepEqual([heic.mimeType, heic.width, heic.height, heic.orientation], ['image/heic', 4032, 3024, 1]);
});

test('img_6_traps_get_their_stable_codes', () => {
  const good = encodeJpeg(32, 32);
  // Fill bytes (0xFF) before a marker are legal (ITU T.81 B.1.1.2).
  const filled = new Uint8Array([...good.subarray(0, 2), 0xFF, 0xFF, ...good.subarray(2)]);
  assert.deepEqual([native.ContentPart.image(filled).width, native.ContentPart.image(filled).height], [32, 32]);
  const code = (bytes) => { try { native.ContentPart.image(bytes); return 'accepted'; } catch (e) { return e.code; } };
  // A JPEG cut after its scan header; a segment length past the end.
  const sos = Buffer.from(good).indexOf(Buffer.from([0xFF, 0xDA]));
  assert.equal(code(good.subarray(0, sos + 14)), 'image_invalid');
  assert.equal(code(good.subarray(0, 30)), 'image_invalid');
  // A JPEG behind the 4 bytes \x89PNG; GIF8 and anything.
  assert.equal(code(new Uint8Array([0x89, 0x50, 0x4E, 0x47, ...good])), 'image_invalid');
  assert.equal(code(new Uint8Array([...Buffer.from('GIF8'), ...new Array(40).fill(0xAA)])), 'image_invalid');
  // A WebP whose RIFF size exceeds the file, a VP7X first chunk.
  // A lossless WebP of 64 × 48: RIFF, WEBP, a VP8L chunk (signature, 14-bit sides).
  const vp8l = Buffer.alloc(10); vp8l[0] = 0x2F; vp8l.writeUInt32LE(63 | (47 << 14), 1);
  const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.from([22, 0, 0, 0]), Buffer.from('WEBPVP8L'), Buffer.from([10, 0, 0, 0]), vp8l]);
  assert.equal(native.ContentPart.image(webp).width, 64);
  const over = Buffer.from(webp); over[4] += 100;
  assert.equal(code(over), 'image_invalid');
  const vp7x = Buffer.from(webp); vp7x.write('VP7X', 12);
  assert.equal(code(vp7x), 'image_invalid');
  // AVIF and a plain MP4 are not ours.
  const heic = Buffer.from(HEIC_B64, 'base64');
  const avif = Buffer.from(heic); avif.write('avif', 8); avif.write('avif', 20);
  assert.equal(code(avif), 'image_unsupported_type');
  const mp4 = Buffer.from(heic); mp4.write('isom', 8); mp4.write('mp41', 16); mp4.write('isom', 20);
  assert.equal(code(mp4), 'image_unsupported_type');
});

test('img_8_an_estimate_in_one_call_from_the_model_name', () => {
  const portrait = native.ContentPart.image(withOrientation(encodeJpeg(400, 300), 6));
  const gpt5 = new native.ModelConfig('https://api.openai.com/v1', API_KEY, 'gpt-5');
  assert.deepEqual(native.estimateImageTokens(gpt5, portrait), { rule: 'openai_gpt5_tiles', tokens: 70 + 140, width: 300, height: 400 });
  // "a request's bounds, maxImageBytes and maxImagesPerRequest, are the run's: not checked here".
  gpt5.maxImageBytes = 10;
  assert.equal(native.estimateImageTokens(gpt5, portrait).tokens, 70 + 140);
  const heic = native.ContentPart.image(Buffer.from(HEIC_B64, 'base64'));
  const gemini = new native.ModelConfig('https://h/v1', API_KEY, 'gemini-2.5-flash');
  assert.deepEqual(native.estimateImageTokens(gemini, heic), { rule: 'gemini', tokens: 258 * 6 * 4, width: 4032, height: 3024 });
  // The host's imageTokens wins over the name; a family that does not take HEIC refuses it.
  gemini.imageTokens = 'qwen3_vl';
  assert.equal(native.estimateImageTokens(gemini, heic).rule, 'qwen3_vl');
  const mini = new native.ModelConfig('https://h/v1', API_KEY, 'gpt-4o-mini');
  assert.throws(() => native.estimateImageTokens(mini, heic), (e) => e.code === 'image_unsupported_type');
  assert.deepEqual(native.estimateImageTokens(mini, native.ContentPart.image(encodeJpeg(64, 48), undefined, 'low')),
    { rule: 'openai_4o_mini_tiles', tokens: 2833, width: 64, height: 48 });
  const claude = new native.ModelConfig('https://h/v1', API_KEY, 'claude-sonnet-4-5');
  const wide = native.ContentPart.image(encodeJpeg(10000, 16));
  assert.throws(() => native.estimateImageTokens(claude, wide), (e) => e.code === 'image_dimensions_unsupported' && e.message.includes('8000'));
  const qwen = new native.ModelConfig('https://h/v1', API_KEY, 'qwen3-vl-plus');
  assert.equal(native.estimateImageTokens(qwen, native.ContentPart.image(encodeJpeg(64, 48))).rule, 'qwen3_vl');
  assert.throws(() => native.estimateImageTokens(claude, native.ContentPart.text('hi')), (e) => e.code === 'invalid_argument');
  // An image by URL, of unknown size, counts as 8000 × 8000 (GPT-4o: resized to 768 × 768, 4 tiles).
  const byUrl = native.ContentPart.imageUrl('https://example.test/plant.jpg');
  assert.deepEqual(native.estimateImageTokens(new native.ModelConfig('https://h/v1', API_KEY, 'gpt-4o'), byUrl),
    { rule: 'openai_tiles', tokens: 85 + 4 * 170, width: 768, height: 768 });
});

test('img_9_a_12_mp_heic_reaches_an_openai_model_as_the_jpeg_it_would_use', async () => {
  const calls = [];
  const { rt, bodies } = runtime('gpt-4o', (config) => {
    config.setImageCodec(testCodec(calls));
    config.keepOriginalImages = true;
  });
  await rt.runParts([native.ContentPart.text('what is this?'), native.ContentPart.image(Buffer.from(HEIC_B64, 'base64'))]);
  assert.deepEqual(calls.map(({ bytes, ...c }) => c), [{ mimeType: 'image/heic', targetMimeType: 'image/jpeg', width: 1024, height: 768, orientation: 1 }]);
  const sent = imageOf(bodies[0]);
  assert.equal(sent.mime, 'image/jpeg');
  const decoded = jpegjs.decode(sent.bytes);
  assert.deepEqual([decoded.width, decoded.height], [1024, 768]);
  // The original, kept on request, reads back by its own id.
  assert.deepEqual([rt.image(HEIC_ID).mimeType, rt.image(HEIC_ID).width], ['image/heic', 4032]);
});

test('img_9_a_turned_photo_arrives_upright_and_an_upright_small_one_untouched', async () => {
  const calls = [];
  const { rt, bodies } = runtime('gpt-5', (config) => config.setImageCodec(testCodec(calls)));
  const stored = encodeJpeg(400, 300, (x) => (x < 200 ? [255, 0, 0] : [0, 0, 255]));
  await rt.runParts([native.ContentPart.image(withOrientation(stored, 6))]);
  assert.deepEqual(calls.map(({ bytes, ...c }) => c), [{ mimeType: 'image/jpeg', targetMimeType: 'image/jpeg', width: 300, height: 400, orientation: 6 }]);
  const upright = jpegjs.decode(imageOf(bodies[0]).bytes);
  assert.deepEqual([upright.width, upright.height], [300, 400]);
  // EXIF 6 turns the stored left half (red) to the top.
  assert.ok(upright.data[0] > 200 && upright.data[2] < 60, `top-left is red: ${upright.data.subarray(0, 3)}`);
  const small = encodeJpeg(64, 48);
  await rt.runParts([native.ContentPart.image(small)]);
  assert.equal(calls.length, 1, 'no codec call for a photo the provider takes as it is');
  assert.deepEqual(imageOf(bodies[1]).bytes, Buffer.from(small));
});

test('img_9_a_failing_codec_fails_the_run_with_image_codec_failed_and_writes_nothing', async () => {
  for (const codec of [async () => { throw new Error('no decoder'); }, async (r) => encodeJpeg(r.width + 1, r.height), async () => new Uint8Array([1, 2, 3])]) {
    const { rt, bodies } = runtime('gpt-4o', (config) => config.setImageCodec(codec));
    await assert.rejects(rt.runParts([native.ContentPart.image(Buffer.from(HEIC_B64, 'base64'))]), (e) => e.code === 'image_codec_failed');
    assert.equal(bodies.length, 0);
    assert.deepEqual(JSON.parse(rt.historyJson()), []);
    assert.equal(rt.image(HEIC_ID), undefined, 'not kept unless asked');
  }
});

test('img_9_set_default_image_codec_serves_every_config_that_sets_none', async () => {
  const calls = [];
  native.setDefaultImageCodec(testCodec(calls));
  try {
    const { rt, bodies } = runtime('gpt-4o');
    await rt.runParts([native.ContentPart.image(Buffer.from(HEIC_B64, 'base64'))]);
    assert.equal(calls.length, 1);
    assert.equal(imageOf(bodies[0]).mime, 'image/jpeg');
  } finally {
    native.setDefaultImageCodec(undefined);
  }
  const { rt } = runtime('gpt-4o');
  await assert.rejects(rt.runParts([native.ContentPart.image(Buffer.from(HEIC_B64, 'base64'))]), (e) => e.code === 'image_unsupported_type');
});
