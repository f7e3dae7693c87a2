/*
 * TOOL-4 through the C ABI: tool deadlines and the abort signal. A scripted
 * OpenAI-compatible model calls `slow` once, then answers; the host tool never answers
 * on its own (or answers late), so only the library's deadline or a cancel ends the call:
 * - a deadline from the definition's "timeout_ms" and one from the config's
 *   "tool_timeout_ms": the run goes on, the model reads a `tool_timeout` error result, the
 *   abort callback hears ARK_AGENT_TOOL_ABORT_TOOL_TIMEOUT before the run returns, polling
 *   gives it after, and a late completion is accepted and ignored;
 * - a cancel from another thread and a free mid-run: ARK_AGENT_TOOL_ABORT_CANCELLED;
 * - a tool answered in time: its abort callback never runs;
 * - a callback that blocks past its deadline: the run waits for it, nothing fires, and
 *   what it finished is its result;
 * - hostile calls: NULL callback, a second callback, NULL, finished and unknown handles.
 * Built and run by tests/it/tool_abort_c.rs. Prints "N passed, M failed" and exits
 * non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-abort-c-SECRET-1618033"

static const char *CALL_REPLY =
    "{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_slow\",\"type\":\"function\",\"function\":{\"name\":\"slow\",\"arguments\":\"{}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5,\"total_tokens\":55}}";

static const char *FINAL_REPLY =
    "{\"id\":\"c2\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":\"Done.\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":80,\"completion_tokens\":2,\"total_tokens\":82}}";

typedef struct {
  int requests;
  char last[8192];
} Model;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  CHECK(occurrences(request, API_KEY, 0) == 0, "API key never in a body");
  body_into(request, m->last, sizeof m->last);
  const char *body = m->requests++ == 0 ? CALL_REPLY : FINAL_REPLY;
  arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body));
}

typedef struct {
  int answer;                         /* 1: answer at once */
  int cancel;                         /* 1: cancel the run from a thread; 2: free it */
  ArkAgentRuntime *runtime;
  ArkAgentToolCompletion *pending;
  atomic_int fired;                   /* abort callbacks run */
  atomic_int reason;                  /* the reason the callback got */
  atomic_int polled_while_waiting;    /* arkagent_tool_abort_reason inside the callback */
  int block_ms;                       /* > 0: block that long inside the callback, then answer */
  atomic_int polled_after_block;      /* arkagent_tool_abort_reason after blocking */
  pthread_t thread;
  int started_thread;
} Tool;

static void on_abort(void *userdata, int32_t reason) {
  Tool *t = userdata;
  atomic_store(&t->reason, reason);
  atomic_fetch_add(&t->fired, 1);
  /* Inside the callback the signal has fired: polling agrees with the callback. */
  CHECK(arkagent_tool_abort_reason(t->pending) == reason, "polling agrees inside the callback");
}

static void *canceller(void *arg) {
  Tool *t = arg;
  sleep_ms(40);
  if (t->cancel == 1) EXPECT(arkagent_runtime_cancel(t->runtime), OK);
  else arkagent_runtime_free(t->runtime);
  return NULL;
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  Tool *t = userdata;
  (void)call_json;
  t->pending = completion;
  atomic_store(&t->polled_while_waiting, arkagent_tool_abort_reason(completion));
  EXPECT(arkagent_tool_on_abort(completion, NULL, t), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_tool_on_abort(completion, on_abort, t), OK);
  EXPECT(arkagent_tool_on_abort(completion, on_abort, t), ARK_AGENT_RESULT_ALREADY_COMPLETED);
  if (t->answer) {
    EXPECT(arkagent_tool_complete(completion, "fast", false), OK);
    /* Finished: nobody waits any more. */
    CHECK(arkagent_tool_abort_reason(completion) == ARK_AGENT_TOOL_ABORT_CLOSED, "finished handle polls CLOSED");
    EXPECT(arkagent_tool_on_abort(completion, on_abort, t), ARK_AGENT_RESULT_ALREADY_COMPLETED);
  } else if (t->block_ms) {
    sleep_ms(t->block_ms);
    atomic_store(&t->polled_after_block, arkagent_tool_abort_reason(completion));
    EXPECT(arkagent_tool_complete(completion, "BLOCKED-BUT-DONE", false), OK);
  } else if (t->cancel) {
    t->started_thread = 1;
    pthread_create(&t->thread, NULL, canceller, t);
  }
}

static const char *SLOW_DEF = "{\"name\":\"slow\",\"description\":\"Never finishes on its own\",\"parameters\":{\"type\":\"object\"}%s}";

static ArkAgentRuntime *make_runtime(Model *m, Tool *t, int def_timeout_ms, int config_timeout_ms) {
  char def[256], config[512], extra[64] = "";
  if (def_timeout_ms >= 0) snprintf(extra, sizeof extra, ",\"timeout_ms\":%d", def_timeout_ms);
  snprintf(def, sizeof def, SLOW_DEF, extra);
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\"},"
           "\"tool_timeout_ms\":%d}", config_timeout_ms);
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, def, tool_cb, t), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, m), &rt), OK);
  arkagent_tools_free(tools);
  t->runtime = rt;
  return rt;
}

/* A deadline ends a call the host never answers; the run goes on to the model. */
static void deadline(const char *what, int def_timeout_ms, int config_timeout_ms) {
  Model m = {0};
  Tool t = {0};
  ArkAgentRuntime *rt = make_runtime(&m, &t, def_timeout_ms, config_timeout_ms);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Do the slow thing", &outcome), OK);
  printf("%s: %s\n", what, outcome ? outcome : "(null)");
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\"") && strstr(outcome, "Done."), "the run goes on past the timeout");
  arkagent_string_free(outcome);
  CHECK(m.requests == 2, "the model was asked again after the timeout");
  CHECK(strstr(m.last, "tool_timeout") != NULL, "the model reads a tool_timeout error result");
  CHECK(atomic_load(&t.polled_while_waiting) == ARK_AGENT_TOOL_ABORT_NONE, "NONE while the library waits");
  CHECK(atomic_load(&t.fired) == 1, "the abort callback ran once, before the run returned");
  CHECK(atomic_load(&t.reason) == ARK_AGENT_TOOL_ABORT_TOOL_TIMEOUT, "callback reason TOOL_TIMEOUT");
  CHECK(arkagent_tool_abort_reason(t.pending) == ARK_AGENT_TOOL_ABORT_TOOL_TIMEOUT, "polling gives TOOL_TIMEOUT after");
  /* The late answer is accepted and ignored. */
  EXPECT(arkagent_tool_complete(t.pending, "LATE-ANSWER", false), OK);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && strstr(messages, "LATE-ANSWER") == NULL, "the late answer is not recorded");
  CHECK(messages && count(messages, "tool_timeout") == 1, "history holds the timeout result");
  arkagent_string_free(messages);
  CHECK(atomic_load(&t.fired) == 1, "no callback after the run returned");
  arkagent_runtime_free(rt);
}

/* A definition's "timeout_ms": 0 beats the config's default: no deadline. */
static void zero_overrides_default(void) {
  Model m = {0};
  Tool t = {0};
  t.cancel = 1;
  ArkAgentRuntime *rt = make_runtime(&m, &t, 0, 10);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Do the slow thing", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"cancelled\""), "only the cancel ended the call (40 ms > 10 ms default)");
  arkagent_string_free(outcome);
  if (t.started_thread) pthread_join(t.thread, NULL);
  CHECK(atomic_load(&t.reason) == ARK_AGENT_TOOL_ABORT_CANCELLED, "timeout_ms 0: no deadline");
  arkagent_runtime_free(rt);
}

/* A cancel (cancel = 1) or a free mid-run (cancel = 2) from another thread. */
static void cancelled(int how) {
  Model m = {0};
  Tool t = {0};
  t.cancel = how;
  ArkAgentRuntime *rt = make_runtime(&m, &t, -1, 0);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Do the slow thing", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"cancelled\""), "status cancelled");
  arkagent_string_free(outcome);
  if (t.started_thread) pthread_join(t.thread, NULL);
  CHECK(atomic_load(&t.fired) == 1, "the abort callback ran once");
  CHECK(atomic_load(&t.reason) == ARK_AGENT_TOOL_ABORT_CANCELLED, "callback reason CANCELLED");
  CHECK(arkagent_tool_abort_reason(t.pending) == ARK_AGENT_TOOL_ABORT_CANCELLED, "polling gives CANCELLED");
  EXPECT(arkagent_tool_complete(t.pending, "late", false), OK);
  if (how == 1) arkagent_runtime_free(rt);
}

/* Answered in time: the callback never runs. */
static void answered(void) {
  Model m = {0};
  Tool t = {0};
  t.answer = 1;
  ArkAgentRuntime *rt = make_runtime(&m, &t, 200, 0);
  EXPECT(arkagent_runtime_run(rt, "Do the slow thing", NULL), OK);
  sleep_ms(250);
  CHECK(atomic_load(&t.fired) == 0, "no abort for a call answered in time");
  CHECK(strstr(m.last, "fast") != NULL, "the model reads the answer");
  arkagent_runtime_free(rt);
}

/* arkagent_tool_abort_reason's doc: the callback runs on the run's thread — one that
   blocks past its deadline holds the run, reads 0 while it blocks, and what it finished
   before returning is its result. */
static void blocking(void) {
  Model m = {0};
  Tool t = {0};
  t.block_ms = 150;
  ArkAgentRuntime *rt = make_runtime(&m, &t, 30, 0);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Do the slow thing", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "the run completes");
  arkagent_string_free(outcome);
  CHECK(atomic_load(&t.polled_after_block) == ARK_AGENT_TOOL_ABORT_NONE, "nothing fires while the callback blocks");
  CHECK(strstr(m.last, "BLOCKED-BUT-DONE") != NULL && strstr(m.last, "tool_timeout") == NULL, "what it finished is its result");
  CHECK(atomic_load(&t.fired) == 0, "no abort callback for a call finished inside its callback");
  arkagent_runtime_free(rt);
}

static void hostile(void) {
  CHECK(arkagent_tool_abort_reason(NULL) == ARK_AGENT_TOOL_ABORT_CLOSED, "NULL polls CLOSED");
  CHECK(arkagent_tool_abort_reason((const ArkAgentToolCompletion *)0x1234) == ARK_AGENT_TOOL_ABORT_CLOSED, "unknown polls CLOSED");
  EXPECT(arkagent_tool_on_abort(NULL, on_abort, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_tool_on_abort((ArkAgentToolCompletion *)0x1234, on_abort, NULL), ARK_AGENT_RESULT_INVALID_HANDLE);
  /* A "timeout_ms" or "tool_timeout_ms" that is not a whole number of ms is bad JSON for
     its shape: INVALID_JSON, nothing registered or created. */
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"t\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":-5}", tool_cb, NULL),
         ARK_AGENT_RESULT_INVALID_JSON);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"t\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":\"soon\"}", tool_cb, NULL),
         ARK_AGENT_RESULT_INVALID_JSON);
  ArkAgentRuntime *rt = NULL;
  Model m = {0};
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"http://x/v1\",\"api_key\":\"k\",\"model\":\"m\"},\"tool_timeout_ms\":-1}", tools, NULL,
                              HTTP(http_cb, &m), &rt),
         ARK_AGENT_RESULT_INVALID_JSON);
  CHECK(rt == NULL, "a refused config creates nothing");
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"t\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"},\"timeout_ms\":5}", tool_cb, NULL), OK);
  arkagent_tools_free(tools);
}

int main(void) {
  deadline("definition timeout_ms", 60, 0);
  deadline("config tool_timeout_ms", -1, 60);
  deadline("definition beats config", 60, 100000);
  zero_overrides_default();
  cancelled(1);
  cancelled(2);
  answered();
  blocking();
  hostile();
  printf("tool_abort: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
