/*
 * CORE-2 / CORE-4 / CORE-6 / LLM-3 / LLM-4 / CMP-1 / CMP-5 / SUB-6 through the C ABI: the
 * runtime-correctness guarantees as a C host sees them, with a scripted OpenAI-compatible
 * model answering JSON bodies through the host HTTP callback and a context compressor
 * written in C. Built and run by bindings/c/tests/c_abi/main.rs and by scripts/test-c-asan.sh (ASan,
 * valgrind). Prints "N passed, M failed" and exits non-zero on any failure.
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

#define API_KEY "sk-c-CORRECT-31415926"


static char *export_of(ArkAgentRuntime *rt) {
  char *state = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &state), OK);
  return state;
}

/* ------------------------------------------------------------- scripted model */

#define MAX_REPLIES 8

typedef struct {
  int status[MAX_REPLIES];
  const char *body[MAX_REPLIES];
  int n_requests;
  char *requests[MAX_REPLIES]; /* copies of the request bodies, freed by model_free */
} Model;

static void model_free(Model *m) {
  for (int i = 0; i < MAX_REPLIES; i++) free(m->requests[i]);
}

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  /* LLM-4: the key is in the Authorization header and nowhere else. */
  CHECK(occurrences(request, API_KEY, 1) == 1 && occurrences(request, API_KEY, 0) == 0, "the key only in the Authorization header");
  int i = m->n_requests++;
  if (i >= MAX_REPLIES || m->body[i] == NULL) {
    EXPECT(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "no scripted reply"), OK);
    return;
  }
  m->requests[i] = body_dup(request);
  int status = m->status[i] ? m->status[i] : 200;
  EXPECT(arkagent_http_complete(completion, (uint16_t)status, NULL, (const uint8_t *)m->body[i], strlen(m->body[i])), OK);
}

#define REPLY(text, tokens)                                                                              \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{"           \
  "\"prompt_tokens\":" tokens ",\"completion_tokens\":2,\"total_tokens\":" tokens "}}"

/* Two probe calls in one turn, with the given argument objects (already escaped). */
#define TWO_CALLS(a, b)                                                                                   \
  "{\"id\":\"t\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":null,\"tool_calls\":["                                             \
  "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"probe\",\"arguments\":\"" a "\"}},"      \
  "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"probe\",\"arguments\":\"" b "\"}}]},"    \
  "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":5,\"total_tokens\":45}}"

static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\","
    "\"retry\":{\"max_attempts\":1}},\"system_prompt\":\"Be brief.\",\"session_id\":\"c-correct\"}";

static const char *PROBE_DEF = "{\"name\":\"probe\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}";

/* The roles of the messages in a request body, in order, one letter each: s(ystem),
 * u(ser), a(ssistant), t(ool). */
static void roles_of(const char *request, char *out, size_t cap) {
  size_t n = 0;
  const char *needle = "\"role\":\"";
  for (const char *p = request; p && (p = strstr(p, needle)) != NULL && n + 1 < cap; p += strlen(needle))
    out[n++] = p[strlen(needle)];
  out[n] = 0;
}

/* ------------------------------------------------------------- (a) CORE-4: failed runs */

static void failed_first_call_changes_nothing(void) {
  Model m = {{0, 500, 400, 0}, {REPLY("fine", "30"), "{\"error\":{\"message\":\"down\"}}",
             "{\"error\":{\"message\":\"This model's maximum context length is 8192 tokens\","
             "\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}",
             REPLY("short answer", "50")},
             0, {0}};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &m), &rt), OK);
  EXPECT(arkagent_runtime_run(rt, "first question", NULL), OK);
  char *before = export_of(rt);
  EXPECT(arkagent_runtime_run(rt, "second question", NULL), ARK_AGENT_RESULT_LLM_SERVER);
  char *after = export_of(rt);
  CHECK(before && after && strcmp(before, after) == 0, "a 500 on the first call leaves the export byte-identical");
  arkagent_string_free(after);
  EXPECT(arkagent_runtime_run(rt, "a huge question", NULL), ARK_AGENT_RESULT_LLM_CONTEXT_OVERFLOW);
  after = export_of(rt);
  CHECK(before && after && strcmp(before, after) == 0, "a context overflow leaves the export byte-identical");
  arkagent_string_free(after);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "a short question", &outcome), OK);
  CHECK(outcome && strstr(outcome, "short answer"), "the session goes on");
  arkagent_string_free(outcome);
  CHECK(m.n_requests == 4, "four requests");
  char roles[64];
  roles_of(m.requests[3], roles, sizeof roles);
  CHECK(strcmp(roles, "suau") == 0, "the next request has no two user messages in a row");
  CHECK(strstr(m.requests[3], "second question") == NULL && strstr(m.requests[3], "a huge question") == NULL,
        "the failed inputs were taken out again");
  arkagent_string_free(before);
  arkagent_runtime_free(rt);
  model_free(&m);
}

/* ------------------------------------------------------------- tools shared by (b)-(d) */

#define MAX_EXPORTS 64

typedef struct {
  ArkAgentRuntime *rt;
  char *exports[MAX_EXPORTS];
  char at[MAX_EXPORTS][32];
  int n_exports;
  int events;
  int events_with_key;
  char types[512];
  char finished[4][256]; /* tool_call_finished events */
  int n_finished;
  char compression[1024]; /* the last compression event */
} Watch;

static void keep_export(Watch *w, const char *at) {
  if (w->rt == NULL || w->n_exports >= MAX_EXPORTS) return;
  char *state = NULL;
  EXPECT(arkagent_runtime_export_state(w->rt, &state), OK);
  w->exports[w->n_exports] = state;
  snprintf(w->at[w->n_exports], sizeof w->at[0], "%s", at);
  w->n_exports++;
}

static void event_cb(void *userdata, const char *event_json) {
  Watch *w = userdata;
  w->events++;
  if (strstr(event_json, API_KEY) != NULL) w->events_with_key++;
  const char *p = strstr(event_json, "\"type\":\"");
  char type[32] = {0};
  if (p != NULL) {
    p += 8;
    const char *end = strchr(p, '"');
    size_t len = end ? (size_t)(end - p) : 0;
    if (len < sizeof type) memcpy(type, p, len);
  }
  if (strstr(w->types, type) == NULL && strlen(w->types) + strlen(type) + 2 < sizeof w->types) {
    if (w->types[0]) strcat(w->types, ",");
    strcat(w->types, type);
  }
  if (strcmp(type, "tool_call_finished") == 0 && w->n_finished < 4)
    snprintf(w->finished[w->n_finished++], sizeof w->finished[0], "%s", event_json);
  if (strcmp(type, "compression") == 0) snprintf(w->compression, sizeof w->compression, "%s", event_json);
  keep_export(w, type);
}

static void probe_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  Watch *w = userdata;
  keep_export(w, "inside a tool");
  if (strstr(call_json, "\"mode\":\"echo\"")) {
    EXPECT(arkagent_tool_complete(completion, "env: OPENAI_API_KEY=" API_KEY, 0), OK);
  } else if (strstr(call_json, "\"mode\":\"leak\"")) {
    EXPECT(arkagent_tool_fail(completion, "auth_failed", "auth failed for key " API_KEY), OK);
  } else {
    EXPECT(arkagent_tool_fail(completion, "db_locked", "database is locked"), OK);
  }
  /* One winner: every later finish is refused. */
  EXPECT(arkagent_tool_fail(completion, "again", "x"), ARK_AGENT_RESULT_ALREADY_COMPLETED);
  EXPECT(arkagent_tool_complete(completion, "again", 0), ARK_AGENT_RESULT_ALREADY_COMPLETED);
}

static ArkAgentRuntime *tool_runtime(Model *m, Watch *w) {
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, PROBE_DEF, probe_cb, w), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, tools, NULL, HTTP(http_cb, m), &rt), OK);
  arkagent_tools_free(tools);
  w->rt = rt;
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, w, &sub), OK);
  return rt;
}

static void watch_free(Watch *w) {
  for (int i = 0; i < w->n_exports; i++) arkagent_string_free(w->exports[i]);
}

/* ------------------------------------------------------------- (b) CORE-6 */

static void export_at_every_event_is_importable(void) {
  Model m = {{0}, {TWO_CALLS("{\\\"mode\\\":\\\"locked\\\"}", "{\\\"mode\\\":\\\"locked\\\"}"), REPLY("done", "60")}, 0, {0}};
  Watch w = {0};
  ArkAgentRuntime *rt = tool_runtime(&m, &w);
  EXPECT(arkagent_runtime_run(rt, "go", NULL), OK);
  const char *want[] = {"run_started", "model_request", "model_response", "tool_call_started", "tool_call_finished",
                        "text_delta", "run_finished", "inside a tool"};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int seen = 0;
    for (int j = 0; j < w.n_exports; j++) seen |= strcmp(w.at[j], want[i]) == 0;
    char what[96];
    snprintf(what, sizeof what, "an export was taken at %s", want[i]);
    CHECK(seen, what);
  }
  CHECK(w.n_exports >= 12, "exports at every event and in both tool calls");
  Model idle = {{0}, {0}, 0, {0}};
  for (int i = 0; i < w.n_exports; i++) {
    ArkAgentRuntime *fresh = NULL;
    EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &idle), &fresh), OK);
    char what[96];
    snprintf(what, sizeof what, "the export taken at %s imports into a fresh runtime", w.at[i]);
    int r = arkagent_runtime_import_state(fresh, w.exports[i]);
    CHECK(r == OK, what);
    arkagent_runtime_free(fresh);
  }
  watch_free(&w);
  arkagent_runtime_free(rt);
  model_free(&m);
  model_free(&idle);
}

/* ------------------------------------------------------------- (c) LLM-4 and (d) CORE-2 */

static void key_never_enters_state_or_events(void) {
  Model m = {{0}, {TWO_CALLS("{\\\"mode\\\":\\\"echo\\\"}", "{\\\"mode\\\":\\\"leak\\\"}"), REPLY("your key is " API_KEY, "60")}, 0, {0}};
  Watch w = {0};
  ArkAgentRuntime *rt = tool_runtime(&m, &w);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "my key is " API_KEY ", keep it safe", &outcome), OK);
  CHECK(outcome && strstr(outcome, API_KEY) == NULL, "no key in the outcome");
  arkagent_string_free(outcome);
  char *state = export_of(rt);
  CHECK(state && strstr(state, API_KEY) == NULL, "no key in the export");
  CHECK(state && count(state, "<redacted>") >= 4, "the input, both tool results and the answer are redacted");
  arkagent_string_free(state);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && strstr(messages, API_KEY) == NULL, "no key in the messages");
  arkagent_string_free(messages);
  CHECK(w.events > 8 && w.events_with_key == 0, "no key in any event JSON");
  for (int i = 0; i < w.n_exports; i++) CHECK(strstr(w.exports[i], API_KEY) == NULL, "no key in any export taken during the run");
  /* arkagent_tool_fail's message reached the model redacted, under its code. */
  CHECK(m.n_requests == 2 && strstr(m.requests[1], "auth_failed") != NULL, "the failed tool's code reached the model");
  watch_free(&w);
  arkagent_runtime_free(rt);
  model_free(&m);
}

static void tool_fail_code_reaches_the_model(void) {
  Model m = {{0}, {TWO_CALLS("{\\\"mode\\\":\\\"locked\\\"}", "{\\\"mode\\\":\\\"echo\\\"}"), REPLY("sorry", "60")}, 0, {0}};
  Watch w = {0};
  ArkAgentRuntime *rt = tool_runtime(&m, &w);
  w.rt = NULL; /* no exports needed here */
  EXPECT(arkagent_runtime_run(rt, "go", NULL), OK);
  /* The tool message's content is JSON inside the body JSON. */
  CHECK(m.n_requests == 2 &&
            strstr(m.requests[1], "{\\\"error\\\":{\\\"code\\\":\\\"db_locked\\\","
                                  "\\\"message\\\":\\\"database is locked\\\"}}") != NULL,
        "the model sees {\"error\":{\"code\":\"db_locked\",\"message\":…}}");
  CHECK(w.n_finished == 2 && strstr(w.finished[0], "\"is_error\":true") && strstr(w.finished[0], "\"error_code\":\"db_locked\""),
        "tool_call_finished carries the code");
  CHECK(strstr(w.finished[1], "\"is_error\":false") != NULL, "the other call succeeded");
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && count(messages, "db_locked") == 1, "the code is kept in the history");
  arkagent_string_free(messages);
  arkagent_runtime_free(rt);
  model_free(&m);
}

/* ------------------------------------------------------------- (e) CMP-5 config checks */

static void compression_config_is_checked(void) {
  Model m = {{0}, {0}, 0, {0}};
  ArkAgentRuntime *rt = NULL;
  static const char *SMALL_WINDOW =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k\",\"model\":\"m\"},"
      "\"compression\":{\"summarizer_max_input_tokens\":100}}";
  static const char *TINY_THRESHOLD =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"k\",\"model\":\"m\"},"
      "\"compression\":{\"total_token_threshold\":10}}";
  EXPECT(arkagent_runtime_new(SMALL_WINDOW, NULL, NULL, HTTP(http_cb, &m), &rt), ARK_AGENT_RESULT_INVALID_CONFIG);
  CHECK(rt == NULL, "nothing created");
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_INVALID_CONFIG), "invalid_config") == 0, "named invalid_config");
  char err[512];
  arkagent_last_error_message(err, sizeof err);
  CHECK(strstr(err, "summarizer_max_input_tokens") != NULL, "the message names the key");
  EXPECT(arkagent_runtime_new(TINY_THRESHOLD, NULL, NULL, HTTP(http_cb, &m), &rt), OK);
  arkagent_runtime_free(rt);
}

/* ------------------------------------------------------------- (f) CMP-1: a C compressor */

typedef struct {
  const char *answer; /* NULL: arkagent_compress_fail */
  int from_thread;    /* answer from another thread after a moment */
  int calls;
  int second_finish;  /* what a second finish got */
  char *state;        /* the last state_json (copy) */
  char context[128];
  ArkAgentCompressCompletion *pending;
  pthread_t thread;
} Squeezer;

static void squeezer_finish(Squeezer *s) {
  if (s->answer != NULL)
    EXPECT(arkagent_compress_complete(s->pending, s->answer), OK);
  else
    EXPECT(arkagent_compress_fail(s->pending, "the C compressor gave up"), OK);
  s->second_finish = arkagent_compress_complete(s->pending, "{\"outcome\":\"skipped\"}");
}

static void *squeeze_later(void *arg) {
  Squeezer *s = arg;
  sleep_ms(20);
  squeezer_finish(s);
  return NULL;
}

static void compress_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  Squeezer *s = userdata;
  s->calls++;
  free(s->state);
  size_t len = strlen(state_json);
  s->state = malloc(len + 1);
  if (s->state != NULL) memcpy(s->state, state_json, len + 1);
  snprintf(s->context, sizeof s->context, "%s", context_json);
  s->pending = completion;
  if (s->from_thread)
    pthread_create(&s->thread, NULL, squeeze_later, s);
  else
    squeezer_finish(s);
}

/* Eight messages, the fourth and fifth a paired tool call. */
static const char *LONG_STATE =
    "{\"version\":1,\"session_id\":\"c-squeeze\",\"usages\":[{\"prompt_tokens\":500,\"completion_tokens\":1,\"total_tokens\":501}],"
    "\"history\":{\"messages\":["
    "{\"role\":\"user\",\"content\":\"Plan a long trip.\"},"
    "{\"role\":\"assistant\",\"content\":\"Sure.\"},"
    "{\"role\":\"user\",\"content\":\"Compare the temperatures.\"},"
    "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"k1\",\"name\":\"get_weather\",\"arguments\":\"{}\"}]},"
    "{\"role\":\"tool\",\"tool_call_id\":\"k1\",\"content\":\"Beijing: sunny.\"},"
    "{\"role\":\"assistant\",\"content\":\"Beijing is hot.\"},"
    "{\"role\":\"user\",\"content\":\"ok\"},"
    "{\"role\":\"assistant\",\"content\":\"done\"}]}}";

/* The config also asks for the default compressor: the C one must win. */
static const char *SQUEEZE_CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},"
    "\"session_id\":\"c-squeeze\",\"compression\":{\"total_token_threshold\":10}}";

static ArkAgentRuntime *squeeze_runtime(Model *m, Squeezer *s) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(SQUEEZE_CONFIG, NULL, NULL, HTTP(http_cb, m), compress_cb, s, 1000, &rt), OK);
  EXPECT(arkagent_runtime_import_state(rt, LONG_STATE), OK);
  return rt;
}

static int count_messages(ArkAgentRuntime *rt) {
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  int n = count(messages, "\"role\":");
  arkagent_string_free(messages);
  return n;
}

static void c_compressor_commits(int from_thread) {
  Model m = {{0}, {0}, 0, {0}};
  Squeezer s = {0};
  s.from_thread = from_thread;
  s.answer = "{\"outcome\":\"compressed\",\"split_index\":6,\"summary\":\"a trip was planned\",\"episode_id\":\"ep-c\","
             "\"usage\":{\"prompt_tokens\":70,\"completion_tokens\":9,\"total_tokens\":79}}";
  ArkAgentRuntime *rt = squeeze_runtime(&m, &s);
  char *before = export_of(rt);
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  if (from_thread) pthread_join(s.thread, NULL);
  CHECK(result && strstr(result, "\"outcome\":\"compressed\"") && strstr(result, "\"episode_id\":\"ep-c\""), "compressed");
  arkagent_string_free(result);
  CHECK(s.calls == 1 && s.state && before && strcmp(s.state, before) == 0, "the compressor got the state as exported");
  CHECK(strcmp(s.context, "{\"estimated_prompt_tokens\":null,\"force\":false}") == 0, "the context JSON");
  EXPECT(s.second_finish, ARK_AGENT_RESULT_ALREADY_COMPLETED);
  CHECK(count_messages(rt) == 2, "messages shrink to the two after the split");
  char *episodes = NULL;
  EXPECT(arkagent_runtime_episodes(rt, &episodes), OK);
  CHECK(episodes && strstr(episodes, "\"id\":\"ep-c\"") && strstr(episodes, "\"message_count\":6") &&
            strstr(episodes, "a trip was planned"),
        "an episode of six messages exists");
  arkagent_string_free(episodes);
  char *usages = NULL;
  EXPECT(arkagent_runtime_usages(rt, &usages), OK);
  CHECK(usages && strstr(usages, "\"total_tokens\":79") && strstr(usages, "\"source\":\"context_compression\""),
        "the compressor's usage is recorded, tagged");
  arkagent_string_free(usages);
  CHECK(m.n_requests == 0, "no model call: the default compressor of the config is not used");
  arkagent_string_free(before);
  free(s.state);
  arkagent_runtime_free(rt);
  model_free(&m);
}

static void c_compressor_failures_change_nothing(void) {
  struct {
    const char *answer;
    const char *reason;
  } cases[] = {
      {"not json at all", "compressor_error"},
      {"{\"outcome\":\"compressed\",\"split_index\":6}", "compressor_error"},
      {"{\"outcome\":\"squashed\"}", "compressor_error"},
      {"{\"outcome\":\"compressed\",\"split_index\":99,\"summary\":\"x\"}", "invalid_split_index"},
      {"{\"outcome\":\"compressed\",\"split_index\":4,\"summary\":\"cuts a tool call from its result\"}", "post_commit_pairing_violation"},
      {NULL, "compressor_error"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (int from_thread = 0; from_thread < 2; from_thread++) {
      Model m = {{0}, {0}, 0, {0}};
      Squeezer s = {0};
      s.answer = cases[i].answer;
      s.from_thread = from_thread;
      ArkAgentRuntime *rt = squeeze_runtime(&m, &s);
      char *before = export_of(rt);
      char *result = NULL;
      EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
      if (from_thread) pthread_join(s.thread, NULL);
      char want[96], what[256];
      snprintf(want, sizeof want, "\"reason\":\"%s\"", cases[i].reason);
      snprintf(what, sizeof what, "answer %s fails with %s", cases[i].answer ? cases[i].answer : "(fail)", cases[i].reason);
      CHECK(result && strstr(result, "\"outcome\":\"failed\"") && strstr(result, want), what);
      arkagent_string_free(result);
      char *after = export_of(rt);
      CHECK(before && after && strcmp(before, after) == 0, "the export is byte-identical after a refused answer");
      EXPECT(s.second_finish, ARK_AGENT_RESULT_ALREADY_COMPLETED);
      arkagent_string_free(before);
      arkagent_string_free(after);
      free(s.state);
      arkagent_runtime_free(rt);
    }
  }
}

static void c_compressor_in_a_run(void) {
  /* The compressor is asked only when the prompt size reaches its threshold (1000): not
   * before the call (a short history), but after the turn whose reported prompt is 3000;
   * "skipped" goes on. */
  Model m = {{0}, {REPLY("answered", "3000")}, 0, {0}};
  Squeezer s = {0};
  /* (below_threshold would be a quiet skip with no event.) */
  s.answer = "{\"outcome\":\"skipped\",\"reason\":\"no_safe_split\"}";
  ArkAgentRuntime *rt = squeeze_runtime(&m, &s);
  Watch w = {0};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &w, &sub), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "hello", &outcome), OK);
  CHECK(outcome && strstr(outcome, "answered"), "the run finished");
  arkagent_string_free(outcome);
  CHECK(s.calls == 1, "asked after the turn only: the pre-flight estimate was below the threshold");
  CHECK(strstr(s.context, "\"estimated_prompt_tokens\":") && strstr(s.context, "null") == NULL, "automatic attempts carry an estimate");
  CHECK(m.n_requests == 1, "only the chat call reached the model");
  CHECK(strstr(w.types, "compression") != NULL, "compression events");
  CHECK(strstr(w.compression, "\"threshold\":1000") && strstr(w.compression, "\"outcome\":\"skipped\"") &&
            strstr(w.compression, "\"reason\":\"no_safe_split\""),
        "the event reports the C compressor's threshold and answer");
  free(s.state);
  arkagent_runtime_free(rt);
  model_free(&m);

  /* Every argument is checked before anything is created. */
  ArkAgentRuntime *none = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(SQUEEZE_CONFIG, NULL, NULL, HTTP(http_cb, &m), NULL, NULL, 0, &none), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_new_with_compressor(SQUEEZE_CONFIG, NULL, NULL, HTTP(NULL, &m), compress_cb, &s, 0, &none), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_new_with_compressor(SQUEEZE_CONFIG, NULL, NULL, HTTP(http_cb, &m), compress_cb, &s, 0, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_new_with_compressor("{\"model\":{\"base_url\":\"http://x/v1\",\"api_key\":\"k\",\"model\":\"m\"},"
                                              "\"compression\":{\"summarizer_max_input_tokens\":100}}",
                                              NULL, NULL, HTTP(http_cb, &m), compress_cb, &s, 0, &none),
         ARK_AGENT_RESULT_INVALID_CONFIG);
  CHECK(none == NULL, "a refused constructor writes nothing");
}

/* ------------------------------------------------------------- (g) SUB-6 */

static void child_usage_summary(void) {
  char *out = NULL;
  EXPECT(arkagent_child_usage_summary("[{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12},"
                                      "{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6,\"raw\":{\"source\":\"x\"}}]",
                                      &out),
         OK);
  CHECK(out && strstr(out, "\"prompt_tokens\":15") && strstr(out, "\"completion_tokens\":3") && strstr(out, "\"total_tokens\":18") &&
            strstr(out, "\"call_count\":2"),
        "sums two usages");
  arkagent_string_free(out);
  out = NULL;
  EXPECT(arkagent_child_usage_summary("[]", &out), OK);
  CHECK(out && strstr(out, "\"call_count\":0") && strstr(out, "\"total_tokens\":0"), "an empty list sums to zero");
  arkagent_string_free(out);
  out = NULL;
  const char *bad[] = {"{", "{}", "[1]", "[{\"prompt_tokens\":-1}]", "null"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) EXPECT(arkagent_child_usage_summary(bad[i], &out), ARK_AGENT_RESULT_INVALID_JSON);
  CHECK(out == NULL, "refused calls write nothing");
}

/* ------------------------------------------------------------- (h) LLM-3 */

static void html_page_is_a_malformed_response(void) {
  Model m = {{0}, {"<!DOCTYPE html><html><body>Please log in to the hotel Wi-Fi</body></html>"}, 0, {0}};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &m), &rt), OK);
  char *before = export_of(rt);
  EXPECT(arkagent_runtime_run(rt, "hi", NULL), ARK_AGENT_RESULT_LLM_MALFORMED_RESPONSE);
  char err[512];
  arkagent_last_error_message(err, sizeof err);
  CHECK(strstr(err, "HTML") != NULL, "the message says it was HTML");
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_LLM_MALFORMED_RESPONSE), "llm_malformed_response") == 0, "named");
  char *after = export_of(rt);
  CHECK(before && after && strcmp(before, after) == 0, "the state is unchanged");
  arkagent_string_free(before);
  arkagent_string_free(after);
  arkagent_runtime_free(rt);
  model_free(&m);
}

int main(void) {
  failed_first_call_changes_nothing();
  export_at_every_event_is_importable();
  key_never_enters_state_or_events();
  tool_fail_code_reaches_the_model();
  compression_config_is_checked();
  c_compressor_commits(0);
  c_compressor_commits(1);
  c_compressor_failures_change_nothing();
  c_compressor_in_a_run();
  child_usage_summary();
  html_page_is_a_malformed_response();
  EXPECT(arkagent_shutdown(), OK);
  printf("correctness: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
