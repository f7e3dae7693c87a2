/*
 * Issue 28 items 2 and 7 through the C ABI (ISO-1, ISO-4, SUB-6; CORE-5, ISO-7).
 *
 * Item 2: however a sub-agent ends — a failure, arkagent_runtime_force_complete_sub_agent,
 * arkagent_runtime_close_sub_agents, stale arkagent_runtime_cleanup_sub_agents, the
 * parent's arkagent_runtime_cancel — its record in arkagent_runtime_sub_agents holds what
 * it really spent (token_count, usage with cached tokens, costs and calls, tools_used,
 * its messages so far), and the registry's stats ("total_tokens", "usage") equal the
 * "children" of arkagent_runtime_total_usage.
 *
 * Item 7: arkagent_runtime_run_decomposed is framed by "run_started" and "run_finished".
 *
 * Built and run by tests/it/c_abi.rs and by scripts/test-c-asan.sh (ASan, valgrind).
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-c-endings-SECRET-3"

static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"retry\":{\"max_attempts\":1},"
    "\"price\":{\"currency\":\"USD\",\"input_per_million\":0.27,\"cached_input_per_million\":0.07,\"output_per_million\":1.1}},"
    "\"session_id\":\"c-endings\",\"delegation\":{\"allow_clone\":true}}";

/* The parent delegates "fetch it", then answers. */
static const char *DELEGATE =
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"d1\","
    "\"type\":\"function\",\"function\":{\"name\":\"delegate_task\",\"arguments\":"
    "\"{\\\"assignee\\\":\\\"clone\\\",\\\"task_description\\\":\\\"fetch it\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}]}";
static const char *PARENT_DONE =
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"parent done\"},\"finish_reason\":\"stop\"}]}";
/* The child's first call: 47 tokens (10 of them cached), asking for get_weather. */
static const char *WEATHER_CALL =
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"w1\","
    "\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}],"
    "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":7,\"total_tokens\":47,\"prompt_tokens_details\":{\"cached_tokens\":10}}}";
static const char *CHILD_ANSWER =
    "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"child answer\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":6,\"total_tokens\":46}}";

typedef enum { FAILED, BY_ID, CLOSED, STALE, CANCELLED } Ending;

typedef struct {
  Ending ending;
  volatile int tool_started;
  ArkAgentToolCompletion *held; /* the get_weather call the host never finishes in time */
  pthread_mutex_t lock;
} Scenario;

/* Parent (offered delegate_task): delegates, then answers. Child: get_weather, then a 400;
   with `userdata` non-NULL (a decomposed job's children) the child answers at once. */
static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  CHECK(occurrences(request, API_KEY, 0) == 0, "the key never in a body");
  int parent = occurrences(request, "\"name\":\"delegate_task\"", 0) > 0;
  int answered = occurrences(request, "\"role\":\"tool\"", 0) > 0;
  if (!parent && userdata != NULL) {
    EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)CHILD_ANSWER, strlen(CHILD_ANSWER)), OK);
    return;
  }
  if (!parent && answered) {
    const char *error = "{\"error\":{\"message\":\"no\"}}";
    EXPECT(arkagent_http_complete(completion, 400, NULL, (const uint8_t *)error, strlen(error)), OK);
    return;
  }
  const char *reply = parent ? (answered ? PARENT_DONE : DELEGATE) : WEATHER_CALL;
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
}

/* get_weather: answers at once for FAILED; otherwise keeps the call open (it waits). */
static void weather_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)call_json;
  Scenario *s = userdata;
  if (s->ending == FAILED) {
    EXPECT(arkagent_tool_complete(completion, "sunny", 0), OK);
  } else {
    pthread_mutex_lock(&s->lock);
    s->held = completion;
    pthread_mutex_unlock(&s->lock);
  }
  s->tool_started = 1;
}

/* Copies the JSON object that follows `"key":` in `json` into `out`; "" when absent. */
static void object_after(const char *json, const char *key, char *out, size_t cap) {
  out[0] = 0;
  char pattern[64];
  snprintf(pattern, sizeof pattern, "\"%s\":{", key);
  const char *at = json ? strstr(json, pattern) : NULL;
  if (at == NULL) return;
  at += strlen(pattern) - 1;
  int depth = 0;
  size_t n = 0;
  for (const char *p = at; *p && n + 1 < cap; p++) {
    out[n++] = *p;
    if (*p == '{') depth++;
    if (*p == '}' && --depth == 0) break;
  }
  out[n] = 0;
}

/* True when two usage summaries (as JSON objects, keys in any order) have the same
   numbers and the same "costs". */
static int same_usage(const char *a, const char *b) {
  static const char *keys[] = {"prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens",
                               "reasoning_tokens", "call_count", "priced_call_count"};
  if (a[0] == 0 || b[0] == 0) return 0;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    char pattern[64], field[96];
    snprintf(pattern, sizeof pattern, "\"%s\":", keys[i]);
    const char *at = strstr(a, pattern);
    if (at == NULL) return 0;
    size_t n = strlen(pattern) + strspn(at + strlen(pattern), "0123456789");
    if (n >= sizeof field) return 0;
    memcpy(field, at, n);
    field[n] = 0;
    /* followed by ',' or '}' in b, so 47 does not match 470 */
    const char *in_b = strstr(b, field);
    if (in_b == NULL || (in_b[n] != ',' && in_b[n] != '}')) return 0;
  }
  const char *costs_a = strstr(a, "\"costs\":[");
  const char *costs_b = strstr(b, "\"costs\":[");
  if ((costs_a == NULL) != (costs_b == NULL)) return 0;
  if (costs_a == NULL) return 1;
  size_t len = strcspn(costs_a, "]");
  return strncmp(costs_a, costs_b, len + 1) == 0;
}

static char *take_sub_agents(ArkAgentRuntime *rt) {
  char *out = NULL;
  EXPECT(arkagent_runtime_sub_agents(rt, &out), OK);
  return out;
}

/* The record and the totals of a child that made its one call (47 tokens) and ran get_weather. */
static void check_spending(ArkAgentRuntime *rt, const char *reason, const char *what) {
  char *agents = take_sub_agents(rt);
  char *total = NULL;
  EXPECT(arkagent_runtime_total_usage(rt, &total), OK);
  const char *history = agents ? strstr(agents, "\"history\":[{") : NULL;
  CHECK(history != NULL && strstr(agents, "\"active\":[]") != NULL, what);
  char want[96];
  snprintf(want, sizeof want, "\"forced_reason\":%s%s%s", reason ? "\"" : "", reason ? reason : "null", reason ? "\"" : "");
  CHECK(history && strstr(history, want), what);
  CHECK(history && strstr(history, "\"token_count\":47"), "the record's token_count is what the child spent");
  CHECK(history && strstr(history, "\"tools_used\":[\"get_weather\"]"), "the record names the tool the child ran");
  CHECK(history && strstr(history, "\"id\":\"w1\""), "the record keeps the child's messages so far");
  char record_usage[512], stats_usage[512], children[512];
  object_after(history, "usage", record_usage, sizeof record_usage);
  object_after(agents ? strstr(agents, "\"stats\":") : NULL, "usage", stats_usage, sizeof stats_usage);
  object_after(total, "children", children, sizeof children);
  CHECK(strstr(children, "\"total_tokens\":47") && strstr(children, "\"cached_tokens\":10") && strstr(children, "\"call_count\":1")
            && strstr(children, "\"priced_call_count\":1") && strstr(children, "\"currency\":\"USD\""),
        "the parent recorded the child's call, priced");
  CHECK(same_usage(record_usage, children), "the record's usage is the children part of the total usage");
  CHECK(same_usage(stats_usage, children), "stats.usage equals the children part of the total usage");
  char stats[1024];
  object_after(agents, "stats", stats, sizeof stats);
  CHECK(strstr(stats, "\"total_tokens\":47,\"usage\":") != NULL, "stats.total_tokens equals the children's total_tokens");
  if (failed) fprintf(stderr, "%s:\n  sub_agents %s\n  total_usage %s\n", what, agents ? agents : "(null)", total ? total : "(null)");
  arkagent_string_free(agents);
  arkagent_string_free(total);
}

static void ending_checks(Ending ending, const char *reason, const char *what) {
  Scenario s = {ending, 0, NULL, PTHREAD_MUTEX_INITIALIZER};
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"get_weather\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", weather_cb, &s), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, tools, NULL, HTTP(http_cb, NULL), &rt), OK);
  if (ending == FAILED) {
    EXPECT(arkagent_runtime_run(rt, "go", NULL), OK);
    check_spending(rt, NULL, what);
  } else {
    RunArg arg = {rt, "go", -1};
    pthread_t thread;
    pthread_create(&thread, NULL, run_thread, &arg);
    for (int i = 0; i < 500 && !s.tool_started; i++) sleep_ms(10);
    CHECK(s.tool_started, "the child runs get_weather");
    char *agents = take_sub_agents(rt);
    char child[128] = {0};
    const char *active = agents ? strstr(agents, "\"active\":[{") : NULL;
    const char *at = active ? strstr(active, "\"id\":\"") : NULL;
    if (at) sscanf(at + strlen("\"id\":\""), "%127[^\"]", child);
    arkagent_string_free(agents);
    CHECK(child[0] != 0, "the running child is listed");
    int32_t found = -1;
    size_t count = 0;
    switch (ending) {
      case BY_ID:
        EXPECT(arkagent_runtime_force_complete_sub_agent(rt, child, "user-stopped", &found), OK);
        CHECK(found == 1, "it was running");
        break;
      case CLOSED:
        EXPECT(arkagent_runtime_close_sub_agents(rt, &count), OK);
        CHECK(count == 1, "one child closed");
        break;
      case STALE:
        sleep_ms(5);
        EXPECT(arkagent_runtime_cleanup_sub_agents(rt, 1, &count), OK);
        CHECK(count == 1, "the running child is stale");
        break;
      default:
        EXPECT(arkagent_runtime_cancel(rt), OK);
        break;
    }
    if (ending != CANCELLED) {
      /* At once: the registry archived what the child spent. */
      agents = take_sub_agents(rt);
      const char *history = agents ? strstr(agents, "\"history\":[{") : NULL;
      CHECK(history && strstr(history, "\"token_count\":47") && strstr(history, "\"tools_used\":[\"get_weather\"]"),
            "the record holds the child's spending the moment it ended");
      arkagent_string_free(agents);
    }
    pthread_join(thread, NULL);
    EXPECT(arg.result, OK);
    check_spending(rt, reason, what);
    if (ending != CANCELLED) {
      /* SUB-8: the parent's delegate_task answer names the ending the record holds (a
       * host's own reason is outside the closed set: force-completed). In the messages
       * JSON the answer is a string of JSON, its quotes escaped. */
      char needle[96];
      snprintf(needle, sizeof needle, "\\\"code\\\":\\\"%s\\\"", ending == BY_ID ? "force-completed" : reason);
      char *messages = NULL;
      EXPECT(arkagent_runtime_messages(rt, &messages), OK);
      CHECK(messages && strstr(messages, needle), what);
      arkagent_string_free(messages);
    }
    pthread_mutex_lock(&s.lock);
    ArkAgentToolCompletion *held = s.held;
    pthread_mutex_unlock(&s.lock);
    if (ending == CANCELLED) {
      /* SUB-7, TOOL-4: the child wound down with its parent's cancel, so its tool heard a
       * cancel (the header's CANCELLED after arkagent_runtime_cancel), not CLOSED. */
      CHECK(held && arkagent_tool_abort_reason(held) == ARK_AGENT_TOOL_ABORT_CANCELLED, "the child's tool hears CANCELLED");
    }
    if (held) {
      int late = arkagent_tool_complete(held, "too late", 0);
      CHECK(late == OK || late == ARK_AGENT_RESULT_ALREADY_COMPLETED, "a late tool completion is harmless");
    }
  }
  arkagent_runtime_free(rt);
  arkagent_tools_free(tools);
}

/* ------------------------------------------------------------- item 7 */

typedef struct {
  pthread_mutex_t lock;
  char own[64][128]; /* each of the runtime's own events from its "type" on (cut) */
  int n;
  char last[2048];
} Events;

static void event_cb(void *userdata, const char *event_json) {
  Events *e = userdata;
  if (strstr(event_json, "{\"session_id\":\"c-endings\"") != event_json) return; /* only its own (children come wrapped) */
  pthread_mutex_lock(&e->lock);
  const char *type = strstr(event_json, "\"type\":\"");
  if (e->n < 64 && type) snprintf(e->own[e->n++], sizeof e->own[0], "%s", type + strlen("\"type\":\""));
  snprintf(e->last, sizeof e->last, "%s", event_json);
  pthread_mutex_unlock(&e->lock);
}

static void decomposed_checks(void) {
  ArkAgentRuntime *rt = NULL;
  static int decomposed = 1;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &decomposed), &rt), OK);
  Events events = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0, {0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  char *results = NULL;
  EXPECT(arkagent_runtime_run_decomposed(rt, "[{\"assignee\":\"clone\",\"task_description\":\"task A\"},"
                                             "{\"assignee\":\"clone\",\"task_description\":\"task B\"}]", 1, &results), OK);
  CHECK(results && count(results, "\"is_error\":false") == 2, "both tasks answered");
  arkagent_string_free(results);
  pthread_mutex_lock(&events.lock);
  CHECK(events.n >= 2, "the job emitted its own events");
  CHECK(strncmp(events.own[0], "run_started\"", strlen("run_started\"")) == 0, "run_started first");
  CHECK(strstr(events.own[0], "\"input\":\"task A\\ntask B\"") != NULL, "its input: the task descriptions, one per line");
  CHECK(events.n >= 2 && events.n < 64 && strncmp(events.own[events.n - 1], "run_finished\"", strlen("run_finished\"")) == 0, "run_finished last");
  for (int i = 1; i + 1 < events.n; i++) CHECK(strncmp(events.own[i], "sub_agent\"", strlen("sub_agent\"")) == 0, "children in between");
  CHECK(strstr(events.last, "\"status\":\"completed\"") && strstr(events.last, "\"iterations\":0"), "completed, no model call of its own");
  char usage[512], children[512];
  object_after(events.last, "usage", usage, sizeof usage);
  char *total = NULL;
  EXPECT(arkagent_runtime_total_usage(rt, &total), OK);
  object_after(total, "children", children, sizeof children);
  CHECK(same_usage(usage, children), "its usage: its children's");
  CHECK(strstr(children, "\"call_count\":2") != NULL, "two child calls");
  pthread_mutex_unlock(&events.lock);
  arkagent_string_free(total);
  arkagent_runtime_free(rt);
}

int main(void) {
  ending_checks(FAILED, NULL, "failed");
  ending_checks(BY_ID, "user-stopped", "force-completed by id");
  ending_checks(CLOSED, "session-closed", "session closed");
  ending_checks(STALE, "stale", "stale cleanup");
  ending_checks(CANCELLED, "cancelled", "the parent's run cancelled");
  decomposed_checks();
  printf("sub_endings: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
