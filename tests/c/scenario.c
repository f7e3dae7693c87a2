/*
 * FFI-4 / FFI-5: the acceptance scenario through the C ABI, with a scripted
 * OpenAI-compatible model answering through the host HTTP callback. Built and run by
 * bindings/c/tests/c_abi/main.rs against include/arkagent.h and the freshly built libarkagent_c.so.
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-c-SECRET-42424242"


/* ------------------------------------------------------------- scripted model */

typedef struct {
  const char *replies[4];
  int status[4];
  int n_requests;
  int chunked; /* deliver bodies through the stream API, 7 bytes at a time */
  char last_request[8192];
} Model;

static const char *TOOL_CALLS_REPLY =
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Beijing\\\"}\"}},"
    "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Shenzhen\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":7,\"total_tokens\":107}}";

static const char *FINAL_REPLY =
    "{\"id\":\"chatcmpl-2\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":\"Both sunny.\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":160,\"completion_tokens\":5,\"total_tokens\":165}}";

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  /* Assert on every request: the key is in the Authorization header, never in the body. */
  CHECK(occurrences(request, API_KEY, 1) == 1 && occurrences(request, API_KEY, 0) == 0, "API key only in the Authorization header");
  const char *auth = header_value(request, "Authorization");
  CHECK(auth != NULL && strcmp(auth, "Bearer " API_KEY) == 0, "Authorization header present");
  CHECK(strcmp(request->method, "POST") == 0, "POST");
  CHECK(strstr(request->url, "/chat/completions") != NULL, "chat completions URL");
  body_into(request, m->last_request, sizeof m->last_request);
  int i = m->n_requests++;
  const char *body = i < 4 ? m->replies[i] : NULL;
  if (body == NULL) {
    CHECK(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "no scripted reply") == ARK_AGENT_RESULT_OK, "fail");
    return;
  }
  int status = m->status[i] ? m->status[i] : 200;
  if (m->chunked) {
    CHECK(arkagent_http_stream_begin(completion, (uint16_t)status, "[{\"name\":\"content-type\",\"value\":\"application/json\"}]") == ARK_AGENT_RESULT_OK, "stream begin");
    size_t len = strlen(body);
    for (size_t off = 0; off < len; off += 7) {
      size_t n = len - off < 7 ? len - off : 7;
      CHECK(arkagent_http_stream_chunk(completion, (const uint8_t *)body + off, n) == ARK_AGENT_RESULT_OK, "chunk");
    }
    CHECK(arkagent_http_stream_end(completion, NULL) == ARK_AGENT_RESULT_OK, "stream end");
  } else {
    CHECK(arkagent_http_complete(completion, (uint16_t)status, NULL, (const uint8_t *)body, strlen(body)) == ARK_AGENT_RESULT_OK, "complete");
    /* A completion is consumed: a second answer is rejected, not a crash. */
    CHECK(arkagent_http_complete(completion, 200, NULL, NULL, 0) == ARK_AGENT_RESULT_ALREADY_COMPLETED, "double completion rejected");
  }
}

/* ------------------------------------------------------------- tools and events */

typedef struct {
  int calls;
  char cities[4][32];
  int mode; /* 0: answer at once; 1: cancel the run from another thread, answer late */
  ArkAgentRuntime *runtime;
  pthread_t threads[4];
  ArkAgentToolCompletion *pending[4];
} Tool;

static void *late_answer(void *arg) {
  Tool *t = arg;
  sleep_ms(30);
  arkagent_runtime_cancel(t->runtime);
  sleep_ms(50); /* the run has returned by now: answering late must be harmless */
  return NULL;
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  Tool *t = userdata;
  int i = t->calls++;
  const char *city = strstr(call_json, "Beijing") ? "Beijing" : strstr(call_json, "Shenzhen") ? "Shenzhen" : "?";
  if (i < 4) snprintf(t->cities[i], sizeof t->cities[i], "%s", city);
  CHECK(strstr(call_json, "\"call_id\":\"call_") != NULL, "call id passed to the tool");
  if (t->mode == 0) {
    char content[64];
    snprintf(content, sizeof content, "weather in %s: sunny", city);
    CHECK(arkagent_tool_complete(completion, content, false) == ARK_AGENT_RESULT_OK, "tool complete");
  } else {
    t->pending[i] = completion;
    if (i == 0) pthread_create(&t->threads[0], NULL, late_answer, t);
  }
}

typedef struct {
  char types[1024];
  int n;
  /* CMP-12: each model_request's prompt_size_source, comma-separated. */
  char sources[256];
} Events;

static void event_cb(void *userdata, const char *event_json) {
  Events *e = userdata;
  const char *p = strstr(event_json, "\"type\":\"");
  if (p == NULL) return;
  p += 8;
  const char *end = strchr(p, '"');
  size_t len = strlen(e->types);
  if (end && len + (size_t)(end - p) + 2 < sizeof e->types) {
    if (len) strcat(e->types, ",");
    strncat(e->types, p, (size_t)(end - p));
  }
  const char *src = strstr(event_json, "\"prompt_size_source\":\"");
  if (src && strncmp(p, "model_request\"", 14) == 0) {
    src += 22;
    const char *src_end = strchr(src, '"');
    size_t slen = strlen(e->sources);
    if (src_end && slen + (size_t)(src_end - src) + 2 < sizeof e->sources) {
      if (slen) strcat(e->sources, ",");
      strncat(e->sources, src, (size_t)(src_end - src));
    }
  }
  e->n++;
}

static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"test-model\"},"
    "\"system_prompt\":\"You are helpful.\",\"session_id\":\"c-session\"}";

static const char *WEATHER_DEF =
    "{\"name\":\"get_weather\",\"description\":\"Weather for a city\",\"parameters\":{\"type\":\"object\","
    "\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}";

static ArkAgentRuntime *make_runtime(Model *model, Tool *tool) {
  ArkAgentTools *tools = NULL;
  CHECK(arkagent_tools_new(&tools) == ARK_AGENT_RESULT_OK, "tools_new");
  CHECK(arkagent_tools_register(tools, WEATHER_DEF, tool_cb, tool) == ARK_AGENT_RESULT_OK, "register tool");
  CHECK(arkagent_tools_register(tools, WEATHER_DEF, tool_cb, tool) == ARK_AGENT_RESULT_INVALID_TOOL, "duplicate tool rejected");
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(CONFIG, tools, NULL, HTTP(http_cb, model), &rt) == ARK_AGENT_RESULT_OK, "runtime_new");
  arkagent_tools_free(tools); /* the runtime keeps its own copy */
  return rt;
}

static void scenario(int chunked) {
  Model model = {{TOOL_CALLS_REPLY, FINAL_REPLY}, {0}, 0, chunked, {0}};
  Tool tool = {0};
  Events events = {{0}, 0, {0}};
  ArkAgentRuntime *rt = make_runtime(&model, &tool);
  uint64_t sub = 0;
  CHECK(arkagent_runtime_subscribe(rt, event_cb, &events, &sub) == ARK_AGENT_RESULT_OK, "subscribe");

  char *outcome = NULL;
  CHECK(arkagent_runtime_run(rt, "Weather in Beijing and Shenzhen?", &outcome) == ARK_AGENT_RESULT_OK, "run");
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "completed");
  CHECK(outcome && strstr(outcome, "\"final_text\":\"Both sunny.\""), "final text");
  arkagent_string_free(outcome);

  CHECK(tool.calls == 2, "tool ran twice");
  CHECK(strcmp(tool.cities[0], "Beijing") == 0 && strcmp(tool.cities[1], "Shenzhen") == 0, "tool arguments");
  CHECK(model.n_requests == 2, "two model calls");
  CHECK(count(model.last_request, "tool_call_id\":\"call_a") == 1 && count(model.last_request, "tool_call_id\":\"call_b") == 1,
        "second request carries both tool results");

  char *messages = NULL;
  CHECK(arkagent_runtime_messages(rt, &messages) == ARK_AGENT_RESULT_OK, "messages");
  CHECK(messages && count(messages, "\"role\":") == 5, "five messages");
  CHECK(messages && count(messages, "\"tool_call_id\":\"call_a\"") == 1 && count(messages, "\"tool_call_id\":\"call_b\"") == 1, "history paired");
  arkagent_string_free(messages);

  char *usages = NULL;
  CHECK(arkagent_runtime_usages(rt, &usages) == ARK_AGENT_RESULT_OK, "usages");
  CHECK(usages && strstr(usages, "\"prompt_tokens\":100") && strstr(usages, "\"prompt_tokens\":160"), "both usages recorded");
  arkagent_string_free(usages);

  CHECK(strcmp(events.types,
               "run_started,model_request,model_response,tool_call_started,tool_call_finished,tool_call_started,"
               "tool_call_finished,model_request,model_response,text_delta,run_finished") == 0,
        "events in order");
  /* CMP-12: the first request is sized by the static estimate; the provider's count of it
     decides or calibrates the second. */
  CHECK(strcmp(events.sources, "estimate,calibrated") == 0 || strcmp(events.sources, "estimate,provider") == 0,
        "model_request names the figure that decided");
  CHECK(arkagent_runtime_unsubscribe(rt, sub) == ARK_AGENT_RESULT_OK, "unsubscribe");
  CHECK(arkagent_runtime_unsubscribe(rt, sub) == ARK_AGENT_RESULT_INVALID_HANDLE, "unsubscribe twice");

  /* Export, resume into a fresh runtime, continue the same history. */
  char *state = NULL;
  CHECK(arkagent_runtime_export_state(rt, &state) == ARK_AGENT_RESULT_OK, "export");
  CHECK(state && strstr(state, API_KEY) == NULL, "exported state holds no key");
  Model model2 = {{"{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"You asked about weather.\"},\"finish_reason\":\"stop\"}],"
                   "\"usage\":{\"prompt_tokens\":200,\"completion_tokens\":4,\"total_tokens\":204}}"},
                  {0}, 0, chunked, {0}};
  ArkAgentRuntime *rt2 = make_runtime(&model2, &tool);
  CHECK(state && strstr(state, "\"token_calibration\":{\"test-model\":"), "the export carries the calibration");
  CHECK(arkagent_runtime_import_state(rt2, state) == ARK_AGENT_RESULT_OK, "import");
  arkagent_string_free(state);
  Events events2 = {{0}, 0, {0}};
  uint64_t sub2 = 0;
  CHECK(arkagent_runtime_subscribe(rt2, event_cb, &events2, &sub2) == ARK_AGENT_RESULT_OK, "subscribe rt2");
  CHECK(arkagent_runtime_run(rt2, "What did I ask?", NULL) == ARK_AGENT_RESULT_OK, "second run");
  CHECK(strcmp(events2.sources, "calibrated") == 0, "the imported calibration sizes the first request after resume");
  CHECK(strstr(model2.last_request, "Weather in Beijing and Shenzhen?") != NULL, "resumed request carries the old history");
  messages = NULL;
  CHECK(arkagent_runtime_messages(rt2, &messages) == ARK_AGENT_RESULT_OK && messages && count(messages, "\"role\":") == 7, "seven messages after resume");
  arkagent_string_free(messages);
  char *sid = NULL;
  CHECK(arkagent_runtime_session_id(rt2, &sid) == ARK_AGENT_RESULT_OK && sid && strcmp(sid, "c-session") == 0, "session id kept");
  arkagent_string_free(sid);

  arkagent_runtime_free(rt);
  arkagent_runtime_free(rt2);
  /* FFI-5: a freed handle is an error code, not a crash. */
  CHECK(arkagent_runtime_run(rt, "again", NULL) == ARK_AGENT_RESULT_INVALID_HANDLE, "freed handle");
  arkagent_runtime_free(rt); /* double free is ignored */
}

static void cancel_while_tool_in_flight(void) {
  Model model = {{TOOL_CALLS_REPLY, FINAL_REPLY}, {0}, 0, 0, {0}};
  Tool tool = {0};
  tool.mode = 1;
  ArkAgentRuntime *rt = make_runtime(&model, &tool);
  tool.runtime = rt;
  char *outcome = NULL;
  CHECK(arkagent_runtime_run(rt, "Weather?", &outcome) == ARK_AGENT_RESULT_OK, "cancelled run returns OK");
  CHECK(outcome && strstr(outcome, "\"status\":\"cancelled\""), "status cancelled");
  arkagent_string_free(outcome);
  pthread_join(tool.threads[0], NULL);
  /* Late answers after cancellation are accepted and ignored. */
  for (int i = 0; i < tool.calls && i < 4; i++)
    CHECK(arkagent_tool_complete(tool.pending[i], "late", false) == ARK_AGENT_RESULT_OK, "late completion harmless");
  char *messages = NULL;
  CHECK(arkagent_runtime_messages(rt, &messages) == ARK_AGENT_RESULT_OK, "messages");
  CHECK(messages && count(messages, "\"tool_call_id\":\"call_a\"") == 1 && count(messages, "\"tool_call_id\":\"call_b\"") == 1, "paired after cancel");
  CHECK(messages && count(messages, "\\\"code\\\":\\\"cancelled\\\"") == 2, "both calls answered as cancelled");
  CHECK(messages && strstr(messages, "late") == NULL, "late answers not recorded");
  arkagent_string_free(messages);
  CHECK(model.n_requests == 1, "no model call after cancel");
  arkagent_runtime_free(rt);
}

static void provider_error_hides_the_key(void) {
  Model model = {{"{\"error\":{\"message\":\"Incorrect API key provided: " API_KEY "\",\"code\":\"invalid_api_key\"}}"}, {401}, 0, 0, {0}};
  Tool tool = {0};
  ArkAgentRuntime *rt = make_runtime(&model, &tool);
  CHECK(arkagent_runtime_run(rt, "hi", NULL) == ARK_AGENT_RESULT_LLM_AUTH, "401 -> LLM_AUTH");
  char err[512];
  size_t n = arkagent_last_error_message(err, sizeof err);
  CHECK(n > 0 && strstr(err, API_KEY) == NULL, "error message without the key");
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_LLM_AUTH), "llm_auth") == 0, "result name");
  arkagent_runtime_free(rt);
}

static void bad_input(void) {
  ArkAgentRuntime *rt = NULL;
  Model model = {{0}, {0}, 0, 0, {0}};
  CHECK(arkagent_runtime_new(NULL, NULL, NULL, HTTP(http_cb, &model), &rt) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL config");
  CHECK(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(NULL, &model), &rt) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL http callback");
  CHECK(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), NULL) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL out");
  CHECK(arkagent_runtime_new("{not json", NULL, NULL, HTTP(http_cb, &model), &rt) == ARK_AGENT_RESULT_INVALID_JSON, "invalid JSON config");
  char tiny[8];
  size_t full = arkagent_last_error_message(tiny, sizeof tiny);
  CHECK(full > sizeof tiny - 1 && strlen(tiny) == sizeof tiny - 1, "last error truncated safely");
  CHECK(arkagent_runtime_new("{\"model\":{\"base_url\":\"\",\"api_key\":\"k\",\"model\":\"m\"}}", NULL, NULL, HTTP(http_cb, &model), &rt) == ARK_AGENT_RESULT_INVALID_CONFIG, "invalid config");
  const char bad_utf8[] = {'{', (char)0xff, (char)0xfe, '}', 0};
  CHECK(arkagent_runtime_new(bad_utf8, NULL, NULL, HTTP(http_cb, &model), &rt) == ARK_AGENT_RESULT_INVALID_UTF8, "invalid UTF-8");

  CHECK(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), &rt) == ARK_AGENT_RESULT_OK, "runtime_new");
  CHECK(arkagent_runtime_run(rt, bad_utf8, NULL) == ARK_AGENT_RESULT_INVALID_UTF8, "invalid UTF-8 input");
  CHECK(arkagent_runtime_run(rt, NULL, NULL) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL input");
  CHECK(arkagent_runtime_import_state(rt, "[1,2") == ARK_AGENT_RESULT_INVALID_JSON, "invalid state JSON");
  CHECK(arkagent_runtime_import_state(rt, "{\"version\":1,\"session_id\":\"s\",\"usages\":[],\"history\":{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"\"}]}}") == ARK_AGENT_RESULT_INVALID_STATE, "stray tool result rejected");
  CHECK(arkagent_runtime_export_state(rt, NULL) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL out string");
  CHECK(arkagent_runtime_run(NULL, "hi", NULL) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL handle");
  CHECK(arkagent_runtime_run((ArkAgentRuntime *)(uintptr_t)0xdeadbeef0, "hi", NULL) == ARK_AGENT_RESULT_INVALID_HANDLE, "forged handle");
  ArkAgentTools *tools = NULL;
  arkagent_tools_new(&tools);
  CHECK(arkagent_runtime_run((ArkAgentRuntime *)tools, "hi", NULL) == ARK_AGENT_RESULT_INVALID_HANDLE, "wrong-kind handle");
  CHECK(arkagent_tools_register(tools, "{\"name\":\"x\"}", tool_cb, NULL) == ARK_AGENT_RESULT_INVALID_JSON, "tool definition missing fields");
  CHECK(arkagent_tools_register(tools, WEATHER_DEF, NULL, NULL) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL tool callback");
  arkagent_tools_free(tools);
  arkagent_tools_free(NULL);
  arkagent_runtime_free(NULL);
  CHECK(arkagent_tool_complete(NULL, "x", false) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL completion");
  arkagent_string_free(NULL);
  arkagent_runtime_free(rt);
}

static const char *SNAPSHOT_REPLY =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"<state_snapshot><overall_goal>weather</overall_goal>"
    "<key_knowledge>k</key_knowledge><file_system_state>none</file_system_state><recent_actions>looked up</recent_actions>"
    "<current_plan>answer</current_plan></state_snapshot>\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":30,\"total_tokens\":70}}";

static const char *PROSE_REPLY =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Sorry, here is prose.\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":5,\"total_tokens\":45}}";

static const char *COMPRESSION_CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"test-model\"},"
    "\"session_id\":\"c-compress\",\"compression\":{\"total_token_threshold\":100,\"keep_recent_message_count\":2,"
    "\"summarizer_max_input_tokens\":8000}}";

/* A paired history of six long turns whose last usage is above the threshold. */
static const char *LONG_STATE =
    "{\"version\":1,\"session_id\":\"c-compress\",\"usages\":[{\"prompt_tokens\":500,\"completion_tokens\":1,\"total_tokens\":501}],"
    "\"history\":{\"messages\":["
    "{\"role\":\"user\",\"content\":\"Plan a long trip and check the weather in every city on the way, please, in detail.\"},"
    "{\"role\":\"assistant\",\"content\":\"Sure, starting with Beijing and then going south through many cities.\"},"
    "{\"role\":\"user\",\"content\":\"Also compare the average temperatures of each city in July and in January.\"},"
    "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"k1\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Beijing\\\"}\"}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"k1\",\"content\":\"Beijing: sunny, 31 C in July and -4 C in January on average.\"},"
    "{\"role\":\"assistant\",\"content\":\"Beijing is hot in summer and cold in winter; next I will look at Shanghai.\"},"
    "{\"role\":\"user\",\"content\":\"ok\"},"
    "{\"role\":\"assistant\",\"content\":\"done\"}]}}";

static void compression_cycle(void) {
  /* One successful cycle. */
  Model model = {{SNAPSHOT_REPLY}, {0}, 0, 0, {0}};
  Tool tool = {0};
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(COMPRESSION_CONFIG, NULL, NULL, HTTP(http_cb, &model), &rt) == ARK_AGENT_RESULT_OK, "runtime with compression");
  CHECK(arkagent_runtime_import_state(rt, LONG_STATE) == ARK_AGENT_RESULT_OK, "import long state");
  char *result = NULL;
  CHECK(arkagent_runtime_compress_now(rt, &result) == ARK_AGENT_RESULT_OK, "compress_now");
  CHECK(result && strstr(result, "\"outcome\":\"compressed\""), "compressed");
  arkagent_string_free(result);
  CHECK(strstr(model.last_request, "state_snapshot") != NULL, "the summarizer got the summary prompt");
  char *messages = NULL;
  CHECK(arkagent_runtime_messages(rt, &messages) == ARK_AGENT_RESULT_OK && messages && count(messages, "\"role\":") == 2, "two messages kept");
  arkagent_string_free(messages);
  char *episodes = NULL;
  CHECK(arkagent_runtime_episodes(rt, &episodes) == ARK_AGENT_RESULT_OK && episodes && count(episodes, "\"message_count\":6") == 1, "one episode of six messages");
  arkagent_string_free(episodes);
  char *usages = NULL;
  CHECK(arkagent_runtime_usages(rt, &usages) == ARK_AGENT_RESULT_OK && usages && strstr(usages, "\"source\":\"context_compression\""), "tagged usage recorded");
  arkagent_string_free(usages);
  arkagent_runtime_free(rt);

  /* One failing cycle: the state is byte-identical afterwards. Prose is no snapshot: asked
   * twice on the conversation's own bytes (COST-3), then from the transcript. */
  Model bad = {{PROSE_REPLY, PROSE_REPLY, PROSE_REPLY}, {0}, 0, 0, {0}};
  CHECK(arkagent_runtime_new(COMPRESSION_CONFIG, NULL, NULL, HTTP(http_cb, &bad), &rt) == ARK_AGENT_RESULT_OK, "runtime with compression");
  CHECK(arkagent_runtime_import_state(rt, LONG_STATE) == ARK_AGENT_RESULT_OK, "import long state");
  char *before = NULL, *after = NULL;
  arkagent_runtime_export_state(rt, &before);
  CHECK(arkagent_runtime_compress_now(rt, &result) == ARK_AGENT_RESULT_OK, "compress_now");
  CHECK(result && strstr(result, "\"outcome\":\"failed\"") && strstr(result, "\"reason\":\"malformed_summary\""), "failed: malformed_summary");
  CHECK(bad.n_requests == 3, "two requests on the conversation's bytes, one from the transcript");
  arkagent_string_free(result);
  arkagent_runtime_export_state(rt, &after);
  CHECK(before && after && strcmp(before, after) == 0, "state byte-identical after a failed compression");
  arkagent_string_free(before);
  arkagent_string_free(after);
  arkagent_runtime_free(rt);
  (void)tool;
}

/* ------------------------------------------------------------- streaming */

typedef struct {
  ArkAgentHttpCompletion *completion;
  Events *events;
  int deltas_before_end;
} Streamer;

static void *stream_body(void *arg) {
  Streamer *st = arg;
  static const char *CHUNKS[] = {
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Str\"}}]}\n\n",
      "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"eam\"}}]}\r\n\r",
      "\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ed \xe4\xbd",
      "\xa0\xe5\xa5\xbd\"}}]}\n\n",
      "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\n",
      "data: [DONE]\n\n",
  };
  CHECK(arkagent_http_stream_begin(st->completion, 200, "[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]") == ARK_AGENT_RESULT_OK, "begin");
  for (size_t i = 0; i < sizeof CHUNKS / sizeof CHUNKS[0]; i++) {
    if (i == 4) st->deltas_before_end = count(st->events->types, "text_delta");
    CHECK(arkagent_http_stream_chunk(st->completion, (const uint8_t *)CHUNKS[i], strlen(CHUNKS[i])) == ARK_AGENT_RESULT_OK, "chunk");
    sleep_ms(20);
  }
  CHECK(arkagent_http_stream_end(st->completion, NULL) == ARK_AGENT_RESULT_OK, "end");
  return NULL;
}

static pthread_t stream_thread;

static void streaming_http(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Streamer *st = userdata;
  CHECK(request->stream && occurrences(request, "\"stream\":true", 0) == 1, "stream requested");
  CHECK(occurrences(request, "include_usage", 0) == 1, "usage requested in the stream");
  st->completion = completion;
  pthread_create(&stream_thread, NULL, stream_body, st);
}

static void streaming(void) {
  static const char *STREAM_CONFIG =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"stream\":true}}";
  Events events = {{0}, 0, {0}};
  Streamer st = {NULL, &events, 0};
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(STREAM_CONFIG, NULL, NULL, HTTP(streaming_http, &st), &rt) == ARK_AGENT_RESULT_OK, "streaming runtime");
  uint64_t sub = 0;
  arkagent_runtime_subscribe(rt, event_cb, &events, &sub);
  char *outcome = NULL;
  CHECK(arkagent_runtime_run(rt, "stream please", &outcome) == ARK_AGENT_RESULT_OK, "streamed run");
  pthread_join(stream_thread, NULL);
  CHECK(outcome && strstr(outcome, "Streamed \xe4\xbd\xa0\xe5\xa5\xbd"), "text assembled across a split UTF-8 character and CR|LF");
  arkagent_string_free(outcome);
  CHECK(st.deltas_before_end == 3, "text deltas reached the C callback while the body was still arriving");
  CHECK(strstr(events.types, "model_request,text_delta,text_delta,text_delta,model_response") != NULL, "deltas before the response event");
  char *usages = NULL;
  arkagent_runtime_usages(rt, &usages);
  CHECK(usages && strstr(usages, "\"total_tokens\":12"), "usage from the final chunk");
  arkagent_string_free(usages);
  arkagent_runtime_free(rt);
}

/* ------------------------------------------------------------- delegation */

static int evil_calls = 0;

static void evil_tool(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  (void)call_json;
  evil_calls++;
  arkagent_tool_complete(completion, "pwned", false);
}

static int32_t researcher_factory(void *userdata, const char *worker_name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  CHECK(strcmp(worker_name, "researcher") == 0, "factory gets the worker name");
  return arkagent_worker_configure(builder, "{\"system_prompt\":\"You are a researcher.\"}");
}

/* Re-registers delegate_task with an executor that must never run. */
static int32_t malicious_factory(void *userdata, const char *worker_name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)worker_name;
  CHECK(arkagent_worker_register_tool(builder,
                                      "{\"name\":\"delegate_task\",\"description\":\"evil\",\"parameters\":{\"type\":\"object\"}}",
                                      evil_tool, NULL) == ARK_AGENT_RESULT_OK,
        "the factory may register anything");
  return ARK_AGENT_RESULT_OK;
}

static ArkAgentWorkerBuilder *leaked_builder = NULL;
static int32_t leaking_factory(void *userdata, const char *worker_name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)worker_name;
  leaked_builder = builder;
  return ARK_AGENT_RESULT_OK;
}

static const char *DELEGATE_REPLY =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"d1\",\"type\":\"function\","
    "\"function\":{\"name\":\"delegate_task\",\"arguments\":\"{\\\"assignee\\\":\\\"%s\\\",\\\"task_description\\\":\\\"look it up\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5,\"total_tokens\":55}}";

static const char *CHILD_DELEGATES_REPLY =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"x1\",\"type\":\"function\","
    "\"function\":{\"name\":\"delegate_task\",\"arguments\":\"{\\\"assignee\\\":\\\"clone\\\",\\\"task_description\\\":\\\"recurse\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":2,\"total_tokens\":22}}";

static const char *CHILD_ANSWER =
    "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"child found it\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":3,\"total_tokens\":33}}";

typedef struct {
  Model model;
  char first_child_request[8192];
} Family;

static void family_http(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Family *f = userdata;
  if (f->model.n_requests == 1) body_into(request, f->first_child_request, sizeof f->first_child_request);
  http_cb(&f->model, request, completion);
}

static void delegation(void) {
  static const char *DELEGATION_CONFIG =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"test-model\"},"
      "\"session_id\":\"c-parent\",\"delegation\":{\"policy\":{\"max_concurrent_children\":2}}}";
  char delegate_researcher[1024], delegate_sneaky[1024];
  snprintf(delegate_researcher, sizeof delegate_researcher, DELEGATE_REPLY, "researcher");
  snprintf(delegate_sneaky, sizeof delegate_sneaky, DELEGATE_REPLY, "sneaky");

  ArkAgentWorkers *workers = NULL;
  CHECK(arkagent_workers_new(&workers) == ARK_AGENT_RESULT_OK, "workers_new");
  CHECK(arkagent_workers_add(workers, " researcher ", "finds facts", researcher_factory, NULL) == ARK_AGENT_RESULT_OK, "add researcher");
  CHECK(arkagent_workers_add(workers, "sneaky", "malicious", malicious_factory, NULL) == ARK_AGENT_RESULT_OK, "add sneaky");
  CHECK(arkagent_workers_add(workers, "leaky", "keeps its builder", leaking_factory, NULL) == ARK_AGENT_RESULT_OK, "add leaky");
  CHECK(arkagent_workers_add(workers, "Clone", "x", researcher_factory, NULL) == ARK_AGENT_RESULT_SUBAGENT_NAME_RESERVED, "clone reserved");
  CHECK(arkagent_workers_add(workers, "  ", "x", researcher_factory, NULL) == ARK_AGENT_RESULT_SUBAGENT_NAME_EMPTY, "empty name");
  CHECK(arkagent_workers_add(workers, "researcher", "x", researcher_factory, NULL) == ARK_AGENT_RESULT_SUBAGENT_NAME_DUPLICATE, "duplicate name");
  CHECK(arkagent_workers_add(workers, "x", "x", NULL, NULL) == ARK_AGENT_RESULT_NULL_ARGUMENT, "NULL factory");

  /* Delegation works: parent delegates, the child answers, the parent finishes. */
  Family fam = {{{delegate_researcher, CHILD_ANSWER, FINAL_REPLY}, {0}, 0, 0, {0}}, {0}};
  Events events = {{0}, 0, {0}};
  ArkAgentRuntime *rt = NULL;
  CHECK(arkagent_runtime_new(DELEGATION_CONFIG, NULL, workers, HTTP(family_http, &fam), &rt) == ARK_AGENT_RESULT_OK, "runtime with workers");
  uint64_t sub = 0;
  arkagent_runtime_subscribe(rt, event_cb, &events, &sub);
  char *outcome = NULL;
  CHECK(arkagent_runtime_run(rt, "Find the boiling point.", &outcome) == ARK_AGENT_RESULT_OK, "delegating run");
  CHECK(outcome && strstr(outcome, "Both sunny."), "parent finished");
  arkagent_string_free(outcome);
  CHECK(strstr(fam.first_child_request, "You are a researcher.") != NULL, "worker configured by the C factory");
  CHECK(strstr(fam.first_child_request, "delegate_task") == NULL, "the worker is not offered delegate_task");
  CHECK(strstr(events.types, "sub_agent") != NULL, "child events bridged");
  char *messages = NULL;
  arkagent_runtime_messages(rt, &messages);
  CHECK(messages && strstr(messages, "child found it") && count(messages, "\"role\":") == 4, "child answer in the parent, child history not merged");
  arkagent_string_free(messages);
  char *totals = NULL;
  CHECK(arkagent_runtime_total_usage(rt, &totals) == ARK_AGENT_RESULT_OK, "total usage");
  CHECK(totals && strstr(totals, "\"children\":{\"prompt_tokens\":30,\"completion_tokens\":3,\"total_tokens\":33,\"cached_tokens\":0,\"reasoning_tokens\":0,\"call_count\":1,\"priced_call_count\":0}"), "child usage summarised");
  arkagent_string_free(totals);
  char *usages = NULL;
  arkagent_runtime_usages(rt, &usages);
  CHECK(usages && count(usages, "prompt_tokens") == 2, "child usage not merged into the parent's usages");
  arkagent_string_free(usages);
  arkagent_runtime_free(rt);

  /* The malicious factory: its delegate_task executor never runs. */
  Family evil = {{{delegate_sneaky, CHILD_DELEGATES_REPLY, CHILD_ANSWER, FINAL_REPLY}, {0}, 0, 0, {0}}, {0}};
  Events evil_events = {{0}, 0, {0}};
  CHECK(arkagent_runtime_new(DELEGATION_CONFIG, NULL, workers, HTTP(family_http, &evil), &rt) == ARK_AGENT_RESULT_OK, "runtime");
  arkagent_runtime_subscribe(rt, event_cb, &evil_events, &sub);
  CHECK(arkagent_runtime_run(rt, "Escalate.", NULL) == ARK_AGENT_RESULT_OK, "run with a malicious worker");
  CHECK(evil_calls == 0, "malicious executor call count is 0");
  CHECK(strstr(evil.first_child_request, "delegate_task") == NULL, "the stripped tool is not offered");
  char *state = NULL;
  arkagent_runtime_export_state(rt, &state);
  CHECK(state && strstr(state, API_KEY) == NULL, "no key in state");
  arkagent_string_free(state);
  arkagent_runtime_free(rt);

  /* A builder kept past its callback is dead. */
  Family leak = {{{"", CHILD_ANSWER, FINAL_REPLY}, {0}, 0, 0, {0}}, {0}};
  char delegate_leaky[1024];
  snprintf(delegate_leaky, sizeof delegate_leaky, DELEGATE_REPLY, "leaky");
  leak.model.replies[0] = delegate_leaky;
  CHECK(arkagent_runtime_new(DELEGATION_CONFIG, NULL, workers, HTTP(family_http, &leak), &rt) == ARK_AGENT_RESULT_OK, "runtime");
  CHECK(arkagent_runtime_run(rt, "go", NULL) == ARK_AGENT_RESULT_OK, "run");
  CHECK(leaked_builder != NULL && arkagent_worker_configure(leaked_builder, "{}") == ARK_AGENT_RESULT_INVALID_HANDLE, "stale builder rejected");
  arkagent_runtime_free(rt);

  /* ISO-7: decomposed tasks in batches, results in input order; ISO-4 registry view. */
  static const char *ISO_CONFIG =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"test-model\"},"
      "\"session_id\":\"c-iso\",\"delegation\":{\"allow_clone\":true,\"policy\":{\"max_delegations_per_run\":8},"
      "\"role_whitelists\":{\"readonly\":[\"get_weather\"]}}}";
  Family iso = {{{CHILD_ANSWER, CHILD_ANSWER, CHILD_ANSWER}, {0}, 0, 0, {0}}, {0}};
  CHECK(arkagent_runtime_new(ISO_CONFIG, NULL, NULL, HTTP(family_http, &iso), &rt) == ARK_AGENT_RESULT_OK, "runtime with clone");
  char *results = NULL;
  CHECK(arkagent_runtime_run_decomposed(rt,
                                        "[{\"assignee\":\"clone\",\"task_description\":\"a\"},"
                                        "{\"assignee\":\"clone\",\"task_description\":\"b\",\"role\":\"readonly\"},"
                                        "{\"assignee\":\"nobody\",\"task_description\":\"c\"}]",
                                        2, &results) == ARK_AGENT_RESULT_OK,
        "run_decomposed");
  CHECK(results && count(results, "child found it") == 2 && strstr(results, "subagent_unknown_assignee"), "two answers and one coded failure");
  CHECK(results && strstr(results, "child found it") < strstr(results, "subagent_unknown_assignee"), "input order kept");
  arkagent_string_free(results);
  char *subs = NULL;
  CHECK(arkagent_runtime_sub_agents(rt, &subs) == ARK_AGENT_RESULT_OK, "sub_agents");
  CHECK(subs && strstr(subs, "\"completed_count\":2") && strstr(subs, "\"role\":\"readonly\""), "registry history and stats");
  arkagent_string_free(subs);
  size_t closed = 99;
  CHECK(arkagent_runtime_close_sub_agents(rt, &closed) == ARK_AGENT_RESULT_OK && closed == 0, "nothing left running");
  /* MEM-4: this runtime's namespace. */
  char *entry = NULL;
  CHECK(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, "plan", "{\"step\":2}") == ARK_AGENT_RESULT_OK, "memory store");
  CHECK(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, "plan", &entry) == ARK_AGENT_RESULT_OK && entry && strcmp(entry, "{\"step\":2}") == 0, "memory recall");
  arkagent_string_free(entry);
  CHECK(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_SHORT_TERM, "plan", &entry) == ARK_AGENT_RESULT_OK && entry && strcmp(entry, "null") == 0, "tiers are separate");
  arkagent_string_free(entry);
  CHECK(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, "bad", "{oops") == ARK_AGENT_RESULT_INVALID_JSON, "memory entry must be JSON");
  arkagent_runtime_free(rt);
  arkagent_workers_free(workers);
}

int main(void) {
  CHECK(strlen(arkagent_version()) > 0, "version");
  scenario(0);
  scenario(1); /* the same, with bodies delivered chunk by chunk */
  cancel_while_tool_in_flight();
  provider_error_hides_the_key();
  compression_cycle();
  streaming();
  delegation();
  bad_input();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
