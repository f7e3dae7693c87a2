/*
 * IMG-6..IMG-9 through the C ABI: arkagent_estimate_image_tokens gives the family's tokens
 * and the provider's resized size in one call (a portrait phone photo by its displayed
 * size) and refuses what the provider refuses with stable codes; a codec registered with
 * arkagent_tools_set_image_codec turns a 12 MP HEIC photo into a JPEG of exactly the size
 * an OpenAI-format provider would use, which is what the model receives; a failing codec
 * or one that answers with the wrong size fails the run with IMAGE_CODEC_FAILED and
 * writes nothing. Built and run by tests/it/image_codec_c.rs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

/* A 4032 × 3024 HEIC (ftyp heic, meta with pitm, ispe; a tiny mdat). */
#define HEIC_ID "a4b4dd7f8bdd19c636331c4e1e0e2ccd68fa24077c7248710fd487b8e8361c03"
#define HEIC_B64 "AAAAGGZ0eXBoZWljAAAAAG1pZjFoZWljAAAAUm1ldGEAAAAAAAAADnBpdG0AAAAAAAEAAAA4aXBycAAAABxpcGNvAAAAFGlzcGUAAAAAAAAPwAAAC9AAAAAUaXBtYQAAAAAAAAABAAEBgQAAABhtZGF0WlpaWlpaWlpaWlpaWlpaWg=="

static const char *REPLY =
    "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":\"a fern\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":900,\"completion_tokens\":2,\"total_tokens\":902}}";

/* A baseline JPEG of w × h, with an EXIF orientation when `orientation` > 0: SOI,
 * [APP1], SOF0, SOS, a few entropy-coded bytes, EOI. Returns its length. */
static size_t jpeg(unsigned char *out, unsigned w, unsigned h, int orientation) {
  size_t n = 0;
  out[n++] = 0xFF, out[n++] = 0xD8;
  if (orientation > 0) {
    static const unsigned char app1[] = {0xFF, 0xE1, 0, 34, 'E', 'x', 'i', 'f', 0, 0, 'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0,
                                         0x12, 0x01, 3, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    memcpy(out + n, app1, sizeof app1);
    out[n + 28] = (unsigned char)orientation;
    n += sizeof app1;
  }
  unsigned char sof[] = {0xFF, 0xC0, 0, 17, 8, (unsigned char)(h >> 8), (unsigned char)h, (unsigned char)(w >> 8), (unsigned char)w,
                         3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1};
  memcpy(out + n, sof, sizeof sof);
  n += sizeof sof;
  static const unsigned char sos[] = {0xFF, 0xDA, 0, 12, 3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0, 0x12, 0x34, 0xFF, 0x00, 0x56, 0xFF, 0xD9};
  memcpy(out + n, sos, sizeof sos);
  return n + sizeof sos;
}

static void b64(const unsigned char *in, size_t len, char *out) {
  static const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    unsigned v = (unsigned)in[i] << 16 | (i + 1 < len ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < len ? in[i + 2] : 0);
    out[o++] = abc[v >> 18 & 63];
    out[o++] = abc[v >> 12 & 63];
    out[o++] = i + 1 < len ? abc[v >> 6 & 63] : '=';
    out[o++] = i + 2 < len ? abc[v & 63] : '=';
  }
  out[o] = 0;
}

static void estimates(void) {
  unsigned char photo[256];
  size_t len = jpeg(photo, 4032, 3024, 6);
  char *out = NULL;
  /* A portrait phone photo (EXIF 6): displayed 3024 × 4032; GPT-5: 70 + 140 a tile. */
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"gpt-5\"}", photo, len, NULL, &out), OK);
  CHECK(out && strcmp(out, "{\"rule\":\"openai_gpt5_tiles\",\"tokens\":630,\"width\":768,\"height\":1024}") == 0, out ? out : "no estimate");
  arkagent_string_free(out);
  out = NULL;
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"gpt-4o-mini\"}", photo, len, "low", &out), OK);
  CHECK(out && strstr(out, "\"rule\":\"openai_4o_mini_tiles\",\"tokens\":2833,") != NULL, out ? out : "no estimate");
  arkagent_string_free(out);
  out = NULL;
  /* The host's image_tokens wins over the name. */
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"gpt-5\",\"image_tokens\":\"gemini\"}", photo, len, NULL,
                                        &out),
         OK);
  CHECK(out && strcmp(out, "{\"rule\":\"gemini\",\"tokens\":6192,\"width\":3024,\"height\":4032}") == 0, out ? out : "no estimate");
  arkagent_string_free(out);
  /* What the provider refuses. */
  len = jpeg(photo, 10000, 1000, 0);
  out = NULL;
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"claude-sonnet-4-5\"}", photo, len, NULL, &out),
         ARK_AGENT_RESULT_IMAGE_DIMENSIONS_UNSUPPORTED);
  CHECK(out == NULL, "no output on an error");
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\"}", photo, 40, NULL, &out),
         ARK_AGENT_RESULT_IMAGE_INVALID);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\"}", (const uint8_t *)"hello", 5, NULL, &out),
         ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\"}", photo, len, "ultra", &out),
         ARK_AGENT_RESULT_INVALID_CONFIG);
  EXPECT(arkagent_estimate_image_tokens("{not json", photo, len, NULL, &out), ARK_AGENT_RESULT_INVALID_JSON);
  /* "The same checks as a run without an image codec (a HEIC for an OpenAI model is refused
   * here, though a runtime with arkagent_tools_set_image_codec would prepare it ...)". */
  static const uint8_t heic[] = {
    0, 0, 0, 24, 102, 116, 121, 112, 104, 101, 105, 99, 0, 0, 0, 0, 109, 105, 102, 49, 104, 101, 105, 99,
    0, 0, 0, 82, 109, 101, 116, 97, 0, 0, 0, 0, 0, 0, 0, 14, 112, 105, 116, 109, 0, 0, 0, 0,
    0, 1, 0, 0, 0, 56, 105, 112, 114, 112, 0, 0, 0, 28, 105, 112, 99, 111, 0, 0, 0, 20, 105, 115,
    112, 101, 0, 0, 0, 0, 0, 0, 15, 192, 0, 0, 11, 208, 0, 0, 0, 20, 105, 112, 109, 97, 0, 0,
    0, 0, 0, 0, 0, 1, 0, 1, 1, 129, 0, 0, 0, 24, 109, 100, 97, 116, 90, 90, 90, 90, 90, 90,
    90, 90, 90, 90, 90, 90, 90, 90, 90, 90,
  };
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"gpt-4o\"}", heic, sizeof heic, NULL, &out),
         ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"qwen-vl-max\"}", heic, sizeof heic, NULL, &out), OK);
  arkagent_string_free(out);
  out = NULL;
  EXPECT(arkagent_estimate_image_tokens(NULL, photo, len, NULL, &out), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\"}", NULL, 10, NULL, &out),
         ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\"}", photo, len, NULL, NULL),
         ARK_AGENT_RESULT_NULL_ARGUMENT);
}

typedef struct {
  int mode; /* 0: answer as asked, 1: fail, 2: the wrong size, 3: no output */
  int calls;
  unsigned width, height;
  char mime[32], target[32];
  int orientation;
  unsigned char answer[256];
  size_t answer_len;
} Codec;

static int32_t codec_cb(void *userdata, const ArkAgentImageCodecRequest *request, ArkAgentImageCodecOutput *output) {
  Codec *c = userdata;
  c->calls++;
  c->width = request->width, c->height = request->height, c->orientation = request->orientation;
  snprintf(c->mime, sizeof c->mime, "%s", request->mime_type);
  snprintf(c->target, sizeof c->target, "%s", request->target_mime_type);
  CHECK(request->bytes != NULL && request->len > 50, "the codec gets the photo's bytes");
  if (c->mode == 1) return 7;
  if (c->mode == 3) return 0;
  c->answer_len = jpeg(c->answer, c->mode == 2 ? request->width + 1 : request->width, request->height, 0);
  EXPECT(arkagent_image_codec_output_set(output, c->answer, c->answer_len), OK);
  return 0;
}

typedef struct {
  int n_requests;
  char *body;
} Model;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  m->n_requests++;
  free(m->body);
  m->body = body_dup(request);
  CHECK(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)REPLY, strlen(REPLY)) == OK, "complete");
}

static ArkAgentRuntime *runtime(Model *model, Codec *codec, int keep) {
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_set_image_codec(tools, codec_cb, codec), OK);
  char config[512];
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k\",\"model\":\"gpt-4o\"},\"keep_original_images\":%s}",
           keep ? "true" : "false");
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, model), &rt), OK);
  arkagent_tools_free(tools);
  return rt;
}

static const char *HEIC_PARTS = "[{\"type\":\"text\",\"text\":\"what is this?\"},{\"type\":\"image\",\"mime_type\":\"image/heic\",\"data\":\"" HEIC_B64 "\"}]";

static void a_heic_photo_reaches_an_openai_model_as_the_jpeg_it_would_use(void) {
  Model model = {0, NULL};
  Codec codec;
  memset(&codec, 0, sizeof codec);
  ArkAgentRuntime *rt = runtime(&model, &codec, 1);
  EXPECT(arkagent_runtime_run_parts(rt, HEIC_PARTS, NULL), OK);
  CHECK(codec.calls == 1, "the codec is asked once");
  CHECK(strcmp(codec.mime, "image/heic") == 0 && strcmp(codec.target, "image/jpeg") == 0, "HEIC to JPEG");
  CHECK(codec.width == 1024 && codec.height == 768 && codec.orientation == 1, "the size GPT-4o's resize gives 4032 × 3024");
  char expected[512] = "data:image/jpeg;base64,";
  b64(codec.answer, codec.answer_len, expected + strlen(expected));
  CHECK(model.body && strstr(model.body, expected) != NULL, "the model receives the codec's JPEG");
  CHECK(model.body && strstr(model.body, "image/heic") == NULL, "and not the HEIC");
  /* The original, kept on request, is readable by its id. */
  char *image = NULL;
  EXPECT(arkagent_runtime_image(rt, HEIC_ID, &image), OK);
  CHECK(image && strstr(image, "\"mime_type\":\"image/heic\"") && strstr(image, "\"width\":4032"), image ? image : "no original");
  CHECK(image && strstr(image, "\"stored_width\":4032") && strstr(image, "\"stored_height\":3024") && strstr(image, "\"orientation\":1"),
        image ? image : "no original");
  arkagent_string_free(image);
  /* A portrait phone photo (EXIF 6, stored 4032 × 3024): asked upright at GPT-4o's size. */
  unsigned char turned[256];
  size_t turned_len = jpeg(turned, 4032, 3024, 6);
  char parts[1024] = "[{\"type\":\"image\",\"mime_type\":\"image/jpeg\",\"data\":\"";
  b64(turned, turned_len, parts + strlen(parts));
  strcat(parts, "\"}]");
  EXPECT(arkagent_runtime_run_parts(rt, parts, NULL), OK);
  CHECK(codec.calls == 2 && codec.width == 768 && codec.height == 1024 && codec.orientation == 6, "turned: 768 × 1024, orientation 6");
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && strstr(messages, "\"mime_type\":\"image/jpeg\"") != NULL, "the history holds the prepared photo");
  arkagent_string_free(messages);
  free(model.body);
  arkagent_runtime_free(rt);
}

static void a_failing_codec_writes_nothing(int mode) {
  Model model = {0, NULL};
  Codec codec;
  memset(&codec, 0, sizeof codec);
  codec.mode = mode;
  ArkAgentRuntime *rt = runtime(&model, &codec, 0);
  EXPECT(arkagent_runtime_run_parts(rt, HEIC_PARTS, NULL), ARK_AGENT_RESULT_IMAGE_CODEC_FAILED);
  CHECK(codec.calls == 1 && model.n_requests == 0, "nothing sent");
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && strcmp(messages, "[]") == 0, "nothing written");
  arkagent_string_free(messages);
  /* Not kept: the original is not readable. */
  char *image = NULL;
  EXPECT(arkagent_runtime_image(rt, HEIC_ID, &image), ARK_AGENT_RESULT_IMAGE_NOT_FOUND);
  arkagent_runtime_free(rt);
}

int main(void) {
  estimates();
  a_heic_photo_reaches_an_openai_model_as_the_jpeg_it_would_use();
  for (int mode = 1; mode <= 3; mode++) a_failing_codec_writes_nothing(mode);
  EXPECT(arkagent_tools_set_image_codec(NULL, codec_cb, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_image_codec_output_set(NULL, (const uint8_t *)"x", 1), ARK_AGENT_RESULT_NULL_ARGUMENT);
  printf("image_codec: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
