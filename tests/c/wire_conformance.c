/*
 * BND-3: one turn with a tool call through the C ABI, over whichever wire format argv
 * names. Knows no protocol: tests/it/wire.rs runs it once per registered protocol
 * (`arkagent::llm::wire_format_names()`), hands it that protocol's scripted answers as
 * files, and checks the requests it dumps the way a strict server of that protocol would.
 *
 *   wire_conformance <wire_format> <dir>
 *
 * <dir> holds `reply-1` (a whole answer calling get_weather), `reply-2` (a streamed
 * answer: SSE, fed in 7-byte chunks), `final` (that answer's text) and `key` (the API
 * key). Each request is dumped as `request-N.url`, `request-N.headers` (name: value lines)
 * and `request-N.body`. Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "check.h"
#include "http_host.h"

static const char *dir;

/* The contents of <dir>/<name>, NUL-terminated; the caller frees it. */
static char *slurp(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)len + 1);
  size_t got = text ? fread(text, 1, (size_t)len, f) : 0;
  fclose(f);
  if (text) text[got] = 0;
  return text;
}

static void dump(int n, const char *suffix, const char *bytes, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/request-%d.%s", dir, n, suffix);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL, "a request dump opens");
  if (f == NULL) return;
  if (len) fwrite(bytes, 1, len, f);
  fclose(f);
}

typedef struct {
  int requests;
  const char *key;
} Host;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Host *host = userdata;
  int n = ++host->requests;
  dump(n, "url", request->url, strlen(request->url));
  size_t cap = 4096, len = 0;
  char *headers = malloc(cap);
  for (size_t i = 0; headers && i < request->header_count; i++) {
    int w = snprintf(headers + len, cap - len, "%s: %s\n", request->headers[i].name, request->headers[i].value);
    if (w > 0 && (size_t)w < cap - len) len += (size_t)w;
  }
  dump(n, "headers", headers ? headers : "", len);
  free(headers);
  dump(n, "body", (const char *)request->body, request->body_len);
  CHECK(occurrences(request, host->key, 0) == 0, "the key is not in the body");
  CHECK(occurrences(request, host->key, 1) == 1, "the key is in exactly one header");

  char name[16];
  snprintf(name, sizeof name, "reply-%d", n);
  char *reply = slurp(name);
  if (reply == NULL) {
    CHECK(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "no scripted reply") == OK, "fail");
    return;
  }
  size_t reply_len = strlen(reply);
  if (reply[0] == '{') {
    CHECK(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, reply_len) == OK, "complete");
  } else {
    CHECK(arkagent_http_stream_begin(completion, 200, "[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]") == OK,
          "stream begins");
    for (size_t off = 0; off < reply_len; off += 7) {
      size_t piece = reply_len - off < 7 ? reply_len - off : 7;
      CHECK(arkagent_http_stream_chunk(completion, (const uint8_t *)reply + off, piece) == OK, "chunk");
    }
    CHECK(arkagent_http_stream_end(completion, NULL) == OK, "stream ends");
  }
  free(reply);
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  int *calls = userdata;
  (*calls)++;
  CHECK(strstr(call_json, "Beijing") != NULL, "the tool gets the model's arguments");
  CHECK(arkagent_tool_complete(completion, "sunny, 21C", false) == OK, "tool completes");
}

typedef struct {
  int events;
  int leaked;
  const char *key;
} Watch;

static void event_cb(void *userdata, const char *event_json) {
  Watch *w = userdata;
  w->events++;
  if (strstr(event_json, w->key) != NULL) w->leaked++;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <wire_format> <dir>\n", argv[0]);
    return 2;
  }
  dir = argv[2];
  char *key = slurp("key");
  char *final_text = slurp("final");
  CHECK(key != NULL && final_text != NULL, "the harness wrote the key and the final text");
  if (key == NULL || final_text == NULL) return 1;

  ArkAgentTools *tools = NULL;
  int calls = 0;
  CHECK(arkagent_tools_new(&tools) == OK, "tools_new");
  CHECK(arkagent_tools_register(tools,
                                "{\"name\":\"get_weather\",\"description\":\"Weather for a city\",\"parameters\":"
                                "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}",
                                tool_cb, &calls) == OK,
        "register");
  char config[1024];
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"%s\",\"model\":\"test-model\","
           "\"wire_format\":\"%s\",\"stream\":true},\"system_prompt\":\"You are a weather bot.\"}",
           key, argv[1]);
  Host host = {0, key};
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, &host), &rt) == OK, "runtime_new");
  arkagent_tools_free(tools);
  if (rt == NULL) return 1;
  Watch watch = {0, 0, key};
  uint64_t sub = 0;
  CHECK(arkagent_runtime_subscribe(rt, event_cb, &watch, &sub) == OK, "subscribe");

  char *outcome = NULL;
  CHECK(arkagent_runtime_run(rt, "Weather in Beijing?", &outcome) == OK, "run");
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"completed\"") != NULL, "completed");
  char expected[512];
  snprintf(expected, sizeof expected, "\"final_text\":\"%s\"", final_text);
  CHECK(outcome != NULL && strstr(outcome, expected) != NULL, "the streamed answer is the final text");
  CHECK(calls == 1 && host.requests == 2, "one tool call, two model calls");
  char *usages = NULL;
  CHECK(arkagent_runtime_usages(rt, &usages) == OK, "usages");
  CHECK(count(usages, "\"prompt_tokens\"") == 2, "one usage per model call");
  CHECK(watch.events > 6 && watch.leaked == 0, "events came, none with the key");
  arkagent_string_free(usages);
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
  free(key);
  free(final_text);
  printf("wire_conformance %s: %d passed, %d failed\n", argv[1], passed, failed);
  return failed == 0 ? 0 : 1;
}
