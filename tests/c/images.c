/*
 * IMG-1, IMG-2, IMG-4, IMG-5 through the C ABI: a turn of text and a photo
 * (arkagent_runtime_run_parts, base64 in JSON) reaches a scripted model in both wire
 * formats bit for bit; the messages JSON carries the photo; arkagent_runtime_image reads
 * it back by id; refused images give their codes and write nothing. Built and run by
 * tests/it/images_c.rs. Prints "N passed, M failed"; exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define PNG_B64 "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
#define PNG_ID "c414cd0e204de974f73753c7e28d7638e7b3691bb8b1a2bab6b25bb7fed7ce77"
#define HEIC_B64 "AAAAGGZ0eXBoZWljAAAAAG1pZjFoZWljAAAAUm1ldGEAAAAAAAAADnBpdG0AAAAAAAEAAAA4aXBycAAAABxpcGNvAAAAFGlzcGUAAAAAAAAPwAAAC9AAAAAUaXBtYQAAAAAAAAABAAEBgQAAABhtZGF0WlpaWlpaWlpaWlpaWlpaWg=="

static const char *OPENAI_REPLY =
    "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":\"a pixel\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":90,\"completion_tokens\":2,\"total_tokens\":92}}";
static const char *ANTHROPIC_REPLY =
    "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"a pixel\"}],"
    "\"stop_reason\":\"end_turn\",\"usage\":{\"input_tokens\":90,\"output_tokens\":2}}";

static const char *OPENAI_CALL =
    "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
    "\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"camera\",\"arguments\":\"{}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":90,\"completion_tokens\":2,\"total_tokens\":92}}";
static const char *ANTHROPIC_CALL =
    "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"m\",\"content\":[{\"type\":\"tool_use\",\"id\":\"call_1\","
    "\"name\":\"camera\",\"input\":{}}],\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":90,\"output_tokens\":2}}";

typedef struct {
  int anthropic;
  int n_requests;
  char *body;
  int call_first;
} Model;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  m->n_requests++;
  free(m->body);
  m->body = body_dup(request);
  const char *reply = m->anthropic ? ANTHROPIC_REPLY : OPENAI_REPLY;
  if (m->call_first && m->n_requests == 1) reply = m->anthropic ? ANTHROPIC_CALL : OPENAI_CALL;
  CHECK(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)) == OK, "complete");
}

static ArkAgentRuntime *runtime(Model *model, const char *model_extra) {
  char config[1024];
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k-c-SECRET-1234\",\"model\":\"m\","
           "\"wire_format\":\"%s\"%s}}",
           model->anthropic ? "anthropic" : "openai", model_extra);
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(config, NULL, NULL, HTTP(http_cb, model), &rt) == OK, "runtime_new");
  return rt;
}

static int message_count(ArkAgentRuntime *rt) {
  char *json = NULL;
  CHECK(arkagent_runtime_messages(rt, &json) == OK, "messages");
  int n = 0;
  for (const char *p = json; p && (p = strstr(p, "\"role\":")) != NULL; p++) n++;
  arkagent_string_free(json);
  return n;
}

static void a_photo_reaches_the_model(int anthropic) {
  Model model = {anthropic, 0, NULL, 0};
  ArkAgentRuntime *rt = runtime(&model, "");
  char *outcome = NULL;
  const char *parts = "[{\"type\":\"text\",\"text\":\"what is this?\"},"
                      "{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"" PNG_B64 "\",\"detail\":\"low\"}]";
  CHECK(arkagent_runtime_run_parts(rt, parts, &outcome) == OK, "run_parts");
  CHECK(outcome && strstr(outcome, "\"final_text\":\"a pixel\""), "answered");
  arkagent_string_free(outcome);
  CHECK(model.n_requests == 1 && model.body != NULL, "one request");
  if (anthropic) {
    CHECK(strstr(model.body, "{\"type\":\"text\",\"text\":\"what is this?\"},{\"type\":\"image\",\"source\":{\"type\":\"base64\","
                             "\"media_type\":\"image/png\",\"data\":\"" PNG_B64 "\"}") != NULL,
          "an Anthropic image block with the exact bytes");
  } else {
    CHECK(strstr(model.body, "\"content\":[{\"type\":\"text\",\"text\":\"what is this?\"},{\"type\":\"image_url\",\"image_url\":"
                             "{\"url\":\"data:image/png;base64," PNG_B64 "\",\"detail\":\"low\"}}]") != NULL,
          "an image_url data URL with the exact bytes");
  }
  char *messages = NULL;
  CHECK(arkagent_runtime_messages(rt, &messages) == OK, "messages");
  CHECK(messages && strstr(messages, "{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"" PNG_B64 "\",\"detail\":\"low\"}"),
        "the messages JSON carries the photo");
  arkagent_string_free(messages);
  char *image = NULL;
  CHECK(arkagent_runtime_image(rt, PNG_ID, &image) == OK, "image by id");
  CHECK(image && strstr(image, "\"data\":\"" PNG_B64 "\"") && strstr(image, "\"mime_type\":\"image/png\"") &&
            strstr(image, "\"width\":1") && strstr(image, "\"id\":\"" PNG_ID "\""),
        "the bytes read back");
  arkagent_string_free(image);
  image = NULL;
  EXPECT(arkagent_runtime_image(rt, "0000", &image), ARK_AGENT_RESULT_IMAGE_NOT_FOUND);
  CHECK(image == NULL, "nothing written for an unknown id");
  free(model.body);
  arkagent_runtime_free(rt);
}

static void refused_images_write_nothing(void) {
  Model model = {0, 0, NULL, 0};
  ArkAgentRuntime *rt = runtime(&model, "");
  EXPECT(arkagent_runtime_run_parts(rt, "[{\"type\":\"image\",\"mime_type\":\"image/heic\",\"data\":\"" HEIC_B64 "\"}]", NULL),
         ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE);
  char err[512];
  arkagent_last_error_message(err, sizeof err);
  CHECK(strstr(err, "pack the photo as JPEG first") != NULL, "the HEIC message says what to do");
  EXPECT(arkagent_runtime_run_parts(rt, "[{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"@@@\"}]", NULL),
         ARK_AGENT_RESULT_IMAGE_INVALID);
  EXPECT(arkagent_runtime_run_parts(rt, "[{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"/9j/4AAQ\"}]", NULL),
         ARK_AGENT_RESULT_IMAGE_INVALID);
  EXPECT(arkagent_runtime_run_parts(rt, "[{\"type\":\"image\",\"url\":\"http://example.com/a.png\"}]", NULL),
         ARK_AGENT_RESULT_IMAGE_INVALID);
  EXPECT(arkagent_runtime_run_parts(rt, "[{\"type\":\"video\"}]", NULL), ARK_AGENT_RESULT_INVALID_JSON);
  EXPECT(arkagent_runtime_run_parts(rt, "not json", NULL), ARK_AGENT_RESULT_INVALID_JSON);
  EXPECT(arkagent_runtime_run_parts(rt, NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_run_parts(NULL, "[]", NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  CHECK(message_count(rt) == 0 && model.n_requests == 0, "nothing written, nothing sent");
  arkagent_runtime_free(rt);
  /* The model's bounds: a byte cap below the photo, one image per request. */
  Model small = {0, 0, NULL, 0};
  rt = runtime(&small, ",\"max_image_bytes\":50,\"max_images_per_request\":1");
  const char *photo = "[{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"" PNG_B64 "\"}]";
  EXPECT(arkagent_runtime_run_parts(rt, photo, NULL), ARK_AGENT_RESULT_IMAGE_TOO_LARGE);
  arkagent_runtime_free(rt);
  Model one = {0, 0, NULL, 0};
  rt = runtime(&one, ",\"max_images_per_request\":1,\"image_tokens\":\"anthropic\"");
  CHECK(arkagent_runtime_run_parts(rt, photo, NULL) == OK, "one photo");
  EXPECT(arkagent_runtime_run_parts(rt, photo, NULL), ARK_AGENT_RESULT_TOO_MANY_IMAGES);
  {
    char advice[512];
    arkagent_last_error_message(advice, sizeof advice);
    CHECK(strstr(advice, "rewind") != NULL, "the too_many_images advice names a rewind");
  }
  CHECK(message_count(rt) == 2 && one.n_requests == 1, "the second photo wrote nothing");
  /* Issue 40 item 2: an import's photos pass this model's bounds too, else nothing changes;
   * the advice of too_many_images names what frees room. */
  char *exported = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &exported), OK);
  Model tiny = {0, 0, NULL, 0};
  ArkAgentRuntime *importer = runtime(&tiny, ",\"max_image_bytes\":10");
  EXPECT(arkagent_runtime_import_state(importer, exported), ARK_AGENT_RESULT_IMAGE_TOO_LARGE);
  CHECK(message_count(importer) == 0, "a refused import changes nothing");
  arkagent_runtime_free(importer);
  arkagent_string_free(exported);
  free(one.body);
  arkagent_runtime_free(rt);
  ArkAgentRuntime *bad = NULL;
  Model none = {0, 0, NULL, 0};
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\",\"image_tokens\":\"claude\"}}",
                              NULL, NULL, HTTP(http_cb, &none), &bad),
         ARK_AGENT_RESULT_INVALID_JSON);
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_TOO_MANY_IMAGES), "too_many_images") == 0, "result names");
}

static void camera_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  (void)call_json;
  EXPECT(arkagent_tool_complete_parts(completion, "[{\"type\":\"image\",\"mime_type\":\"image/bmp\",\"data\":\"Qk0=\"}]", 0),
         ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE);
  CHECK(arkagent_tool_complete_parts(completion, "[{\"type\":\"text\",\"text\":\"a shot\"},{\"type\":\"image\",\"mime_type\":\"image/png\","
                                                 "\"data\":\"" PNG_B64 "\"}]", 0) == OK,
        "the call stays open after a refusal and completes with parts");
}

static void a_tool_returns_a_photo(int anthropic) {
  Model model = {anthropic, 0, NULL, 1};
  ArkAgentTools *tools = NULL;
  CHECK(arkagent_tools_new(&tools) == OK, "tools_new");
  CHECK(arkagent_tools_register(tools, "{\"name\":\"camera\",\"description\":\"Takes a photo\",\"parameters\":{\"type\":\"object\"}}",
                                camera_cb, NULL) == OK, "register");
  char config[512];
  snprintf(config, sizeof config, "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k\",\"model\":\"m\",\"wire_format\":\"%s\"}}",
           anthropic ? "anthropic" : "openai");
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, &model), &rt) == OK, "runtime_new");
  arkagent_tools_free(tools);
  CHECK(arkagent_runtime_run(rt, "take a photo", NULL) == OK, "run");
  CHECK(model.n_requests == 2, "two model calls");
  if (anthropic) {
    CHECK(strstr(model.body, "{\"type\":\"tool_result\",\"tool_use_id\":\"call_1\",\"content\":[{\"type\":\"text\",\"text\":\"a shot\"},"
                             "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"" PNG_B64 "\"}}") != NULL,
          "the photo inside the tool_result");
  } else {
    CHECK(strstr(model.body, "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"a shot\\n[1 image(s) from this tool result "
                             "follow in the next user message.]\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Images returned by "
                             "tool call call_1:\"},{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64," PNG_B64 "\"}}]}") != NULL,
          "the photo in a user message after the tool message");
  }
  free(model.body);
  arkagent_runtime_free(rt);
}

int main(void) {
  a_tool_returns_a_photo(0);
  a_tool_returns_a_photo(1);
  a_photo_reaches_the_model(0);
  a_photo_reaches_the_model(1);
  refused_images_write_nothing();
  printf("images: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
