/*
 * WIRE-1 through the C ABI: a config with "wire_format":"anthropic" runs a turn with a
 * tool call against a scripted Anthropic Messages model answering through the host HTTP
 * callback (a whole JSON tool_use answer, then a streamed text answer), and an unknown
 * wire_format is refused with ARK_AGENT_RESULT_INVALID_CONFIG. Built and run by
 * tests/it/wire.rs against include/arkagent.h and the freshly built libarkagent_c.so.
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-ant-c-SECRET-31415926"

static const char *TOOL_USE_REPLY =
    "{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-c\",\"content\":["
    "{\"type\":\"text\",\"text\":\"Checking.\"},"
    "{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"get_weather\",\"input\":{\"city\":\"Beijing\"}}],"
    "\"stop_reason\":\"tool_use\",\"usage\":{\"input_tokens\":40,\"cache_creation_input_tokens\":900,"
    "\"cache_read_input_tokens\":0,\"output_tokens\":9}}";

static const char *TEXT_STREAM =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"role\":\"assistant\","
    "\"content\":[],\"usage\":{\"input_tokens\":30,\"cache_read_input_tokens\":900,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Beijing is \"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"sunny.\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

typedef struct {
  int n_requests;
  char bodies[2][8192];
} Model;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  /* Like a strict Anthropic server: the key in x-api-key only, the version header, the
     Messages endpoint, no Bearer header. */
  const char *key = header_value(request, "x-api-key");
  CHECK(key != NULL && strcmp(key, API_KEY) == 0, "x-api-key carries the key");
  CHECK(occurrences(request, API_KEY, 0) == 0, "the key is not in the body");
  const char *version = header_value(request, "anthropic-version");
  CHECK(version != NULL && strcmp(version, "2023-06-01") == 0, "anthropic-version header");
  CHECK(header_value(request, "Authorization") == NULL, "no Authorization header");
  CHECK(strcmp(request->method, "POST") == 0, "POST");
  CHECK(strcmp(request->url, "http://127.0.0.1:9/v1/messages") == 0, "the Messages endpoint");
  int i = m->n_requests++;
  if (i < 2) body_into(request, m->bodies[i], sizeof m->bodies[i]);
  if (i == 0) {
    CHECK(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)TOOL_USE_REPLY, strlen(TOOL_USE_REPLY)) == OK, "complete");
  } else if (i == 1) {
    CHECK(arkagent_http_stream_begin(completion, 200, "[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]") == OK, "begin");
    size_t len = strlen(TEXT_STREAM);
    for (size_t off = 0; off < len; off += 11) {
      size_t n = len - off < 11 ? len - off : 11;
      CHECK(arkagent_http_stream_chunk(completion, (const uint8_t *)TEXT_STREAM + off, n) == OK, "chunk");
    }
    CHECK(arkagent_http_stream_end(completion, NULL) == OK, "end");
  } else {
    CHECK(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "no scripted reply") == OK, "fail");
  }
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  int *calls = userdata;
  (*calls)++;
  CHECK(strstr(call_json, "\"call_id\":\"toolu_a\"") != NULL, "the tool_use id reaches the tool");
  CHECK(strstr(call_json, "Beijing") != NULL, "the tool_use input reaches the tool");
  CHECK(arkagent_tool_complete(completion, "sunny, 21C", false) == OK, "tool complete");
}

static const char *WEATHER_DEF =
    "{\"name\":\"get_weather\",\"description\":\"Weather for a city\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}";

static void turn_with_a_tool_call(void) {
  Model model = {0};
  int calls = 0;
  ArkAgentTools *tools = NULL;
  CHECK(arkagent_tools_new(&tools) == OK, "tools_new");
  CHECK(arkagent_tools_register(tools, WEATHER_DEF, tool_cb, &calls) == OK, "register");
  const char *config =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"claude-c\","
      "\"wire_format\":\"anthropic\",\"stream\":true},\"system_prompt\":\"You are a weather bot.\"}";
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, &model), &rt) == OK, "runtime_new");
  arkagent_tools_free(tools);

  char *outcome = NULL;
  CHECK(arkagent_runtime_run(rt, "Weather in Beijing?", &outcome) == OK, "run");
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "completed");
  CHECK(outcome && strstr(outcome, "\"final_text\":\"Beijing is sunny.\""), "final text from the stream");
  arkagent_string_free(outcome);
  CHECK(calls == 1 && model.n_requests == 2, "one tool call, two model calls");

  /* The first request: Messages fields, the default max_tokens, the three breakpoints. */
  const char *first = model.bodies[0];
  CHECK(strstr(first, "\"max_tokens\":4096") != NULL, "max_tokens defaults to 4096");
  CHECK(strstr(first, "\"system\":[{\"type\":\"text\",\"text\":\"You are a weather bot.") != NULL, "top-level system block");
  CHECK(strstr(first, "\"input_schema\":{") != NULL, "tools carry input_schema");
  CHECK(count(first, "\"cache_control\":{\"type\":\"ephemeral\"}") == 3, "system, last tool, latest block");
  CHECK(strstr(first, "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Weather in Beijing?\","
                      "\"cache_control\":{\"type\":\"ephemeral\"}}]}]}") != NULL, "the user turn, the body ends with messages");
  /* The second: the tool_use answered by a tool_result in the next user turn, which now
     holds the moving breakpoint; the earlier turns are the first request's bytes. */
  const char *second = model.bodies[1];
  CHECK(strstr(second, "{\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"Checking.\"},"
                       "{\"type\":\"tool_use\",\"id\":\"toolu_a\",\"name\":\"get_weather\",\"input\":{\"city\":\"Beijing\"}}]},"
                       "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_a\","
                       "\"content\":\"sunny, 21C\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}") != NULL,
        "tool_result in the next user turn");
  CHECK(count(second, "\"cache_control\"") == 3, "still three breakpoints");
  size_t open = strlen(first) - strlen(",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}");
  CHECK(strncmp(first, second, open) == 0 && second[open] == '}', "the next request starts with the previous one's bytes");

  char *usages = NULL;
  CHECK(arkagent_runtime_usages(rt, &usages) == OK, "usages");
  /* prompt_tokens is the whole prompt: input + cache read + cache creation. */
  CHECK(usages && strstr(usages, "\"prompt_tokens\":940") && strstr(usages, "\"prompt_tokens\":930"), "whole prompts");
  CHECK(usages && strstr(usages, "\"cached_tokens\":900"), "cache read");
  CHECK(usages && strstr(usages, "\"cache_write_tokens\":900"), "cache creation kept as cache_write_tokens");
  arkagent_string_free(usages);
  arkagent_runtime_free(rt);
}

static void unknown_wire_format_is_invalid_config(void) {
  Model model = {0};
  ArkAgentRuntime *rt = NULL;
  const char *config =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k\",\"model\":\"m\",\"wire_format\":\"claude\"}}";
  EXPECT(arkagent_runtime_new(config, NULL, NULL, HTTP(http_cb, &model), &rt), ARK_AGENT_RESULT_INVALID_CONFIG);
  CHECK(rt == NULL, "no runtime");
  char err[256];
  arkagent_last_error_message(err, sizeof err);
  CHECK(strstr(err, "wire_format") != NULL, "the message names wire_format");
  CHECK(model.n_requests == 0, "nothing sent");
}

int main(void) {
  turn_with_a_tool_call();
  unknown_wire_format_is_invalid_config();
  printf("wire_anthropic: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
