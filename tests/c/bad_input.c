/*
 * FFI-5 / REL-3: every export in include/arkagent.h fed bad input — NULL for each pointer,
 * invalid UTF-8, invalid JSON, out-of-range integers, freed, forged and wrong-kind
 * handles, racing completions from many threads, completion after free — must answer
 * with its documented result code and never crash, leak or act before refusing.
 * Built and run by bindings/c/tests/c_abi/main.rs (which also checks that every export in the header
 * is named here) and by scripts/test-c-asan.sh under AddressSanitizer and valgrind.
 * Prints "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define NULL_ARG ARK_AGENT_RESULT_NULL_ARGUMENT
#define BAD_UTF8 ARK_AGENT_RESULT_INVALID_UTF8
#define BAD_JSON ARK_AGENT_RESULT_INVALID_JSON
#define BAD_HANDLE ARK_AGENT_RESULT_INVALID_HANDLE
#define BAD_ARG ARK_AGENT_RESULT_INVALID_ARGUMENT
#define DONE ARK_AGENT_RESULT_ALREADY_COMPLETED

static const char BAD_UTF8_STR[] = {'a', (char)0xff, (char)0xfe, 'b', 0};
static const char *NOT_JSON = "{not json";

/* Numbers that were never handed out, and one that is not even aligned. */
#define FORGED(T) ((T *)(uintptr_t)0xdeadbeef0)
#define FORGED2(T) ((T *)(uintptr_t)0x10)
#define FORGED3(T) ((T *)(uintptr_t)UINTPTR_MAX)

static const int32_t BAD_ENUMS[] = {-1, 2, 7, 9, 42, INT32_MAX, INT32_MIN};
#define N_BAD_ENUMS (sizeof BAD_ENUMS / sizeof BAD_ENUMS[0])

/* Threads of this process named "arkagent" (the library's executor). */
static int executor_threads(void) {
  DIR *dir = opendir("/proc/self/task");
  if (dir == NULL) return -1;
  int n = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (entry->d_name[0] == '.') continue;
    char path[300], name[64] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", entry->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    /* Exactly "arkagent": this program's own name also starts with it. */
    if (fgets(name, sizeof name, f) != NULL && strcmp(name, "arkagent\n") == 0) n++;
    fclose(f);
  }
  closedir(dir);
  return n;
}

/* Waits up to 3 s for the executor thread count to be zero (`want_zero`) or not: a new
 * thread takes its name a moment after it starts, and a busy machine stretches that. */
static int executor_threads_settle(int want_zero) {
  for (int i = 0; i < 300; i++) {
    int n = executor_threads();
    if (want_zero ? n == 0 : n > 0) return n;
    sleep_ms(10);
  }
  return executor_threads();
}

/* ------------------------------------------------------------- the scripted model */

#define API_KEY "sk-bad-input-1234"
static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\","
    "\"retry\":{\"max_attempts\":1,\"initial_backoff_ms\":1,\"max_backoff_ms\":1},\"request_timeout_ms\":20000},"
    "\"delegation\":{\"allow_clone\":true}}";

static const char *FINAL_REPLY =
    "{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":\"Fine.\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}";

static const char *TOOL_REPLY =
    "{\"id\":\"c2\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"probe\",\"arguments\":\"{}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"total_tokens\":12}}";

static const char *PROBE_DEF = "{\"name\":\"probe\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}";

enum Mode {
  ANSWER,        /* complete at once with FINAL_REPLY */
  ABUSE,         /* every bad completion call first, then a good one */
  RACE,          /* 8 threads race complete/fail */
  HOLD,          /* keep the completion; a thread frees the runtime, then completes late */
  TOOL_ONCE,     /* first request asks for the probe tool, later ones answer */
};

typedef struct {
  enum Mode mode;
  int requests;
  ArkAgentRuntime *runtime;
  ArkAgentHttpCompletion *held;
  int race_winner_failed; /* RACE: 1 when a fail won */
} Model;

static void good_complete(ArkAgentHttpCompletion *c, const char *body) {
  EXPECT(arkagent_http_complete(c, 200, NULL, (const uint8_t *)body, strlen(body)), OK);
}

/* Every bad call on a live HTTP completion; none may finish it. */
static void abuse_http_completion(ArkAgentHttpCompletion *c) {
  const uint8_t *body = (const uint8_t *)FINAL_REPLY;
  size_t len = strlen(FINAL_REPLY);
  EXPECT(arkagent_http_complete(NULL, 200, NULL, body, len), NULL_ARG);
  EXPECT(arkagent_http_complete(FORGED(ArkAgentHttpCompletion), 200, NULL, body, len), BAD_HANDLE);
  EXPECT(arkagent_http_complete(FORGED2(ArkAgentHttpCompletion), 200, NULL, body, len), BAD_HANDLE);
  EXPECT(arkagent_http_complete(FORGED3(ArkAgentHttpCompletion), 200, NULL, body, len), BAD_HANDLE);
  EXPECT(arkagent_http_complete(c, 0, NULL, body, len), BAD_ARG);
  EXPECT(arkagent_http_complete(c, 99, NULL, body, len), BAD_ARG);
  EXPECT(arkagent_http_complete(c, 600, NULL, body, len), BAD_ARG);
  EXPECT(arkagent_http_complete(c, UINT16_MAX, NULL, body, len), BAD_ARG);
  EXPECT(arkagent_http_complete(c, 200, NOT_JSON, body, len), BAD_JSON);
  EXPECT(arkagent_http_complete(c, 200, "{\"name\":1}", body, len), BAD_JSON);
  EXPECT(arkagent_http_complete(c, 200, BAD_UTF8_STR, body, len), BAD_UTF8);
  EXPECT(arkagent_http_complete(c, 200, NULL, NULL, 5), NULL_ARG);
  EXPECT(arkagent_http_stream_begin(NULL, 200, NULL), NULL_ARG);
  EXPECT(arkagent_http_stream_begin(c, 0, NULL), BAD_ARG);
  EXPECT(arkagent_http_stream_begin(c, 200, NOT_JSON), BAD_JSON);
  EXPECT(arkagent_http_stream_begin(c, 200, BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_http_stream_begin(FORGED(ArkAgentHttpCompletion), 200, NULL), BAD_HANDLE);
  EXPECT(arkagent_http_stream_chunk(c, body, 3), ARK_AGENT_RESULT_STREAM_NOT_STARTED);
  EXPECT(arkagent_http_stream_chunk(NULL, body, 3), NULL_ARG);
  EXPECT(arkagent_http_stream_chunk(c, NULL, 3), NULL_ARG);
  EXPECT(arkagent_http_stream_chunk(FORGED(ArkAgentHttpCompletion), body, 3), BAD_HANDLE);
  EXPECT(arkagent_http_stream_end(c, NULL), ARK_AGENT_RESULT_STREAM_NOT_STARTED);
  EXPECT(arkagent_http_stream_end(NULL, NULL), NULL_ARG);
  EXPECT(arkagent_http_stream_end(c, BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_http_stream_end(FORGED(ArkAgentHttpCompletion), NULL), BAD_HANDLE);
  for (size_t i = 0; i < N_BAD_ENUMS; i++) EXPECT(arkagent_http_fail(c, BAD_ENUMS[i], "x"), BAD_ARG);
  EXPECT(arkagent_http_fail(NULL, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "x"), NULL_ARG);
  EXPECT(arkagent_http_fail(c, ARK_AGENT_TRANSPORT_ERROR_NETWORK, BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_http_fail(FORGED(ArkAgentHttpCompletion), ARK_AGENT_TRANSPORT_ERROR_NETWORK, "x"), BAD_HANDLE);
  /* OHOS-7: a live request is wanted; NULL and forged handles read as "stop". */
  CHECK(!arkagent_http_is_cancelled(c), "a live request is not cancelled");
  CHECK(arkagent_http_is_cancelled(NULL), "NULL reads as cancelled");
  CHECK(arkagent_http_is_cancelled(FORGED(ArkAgentHttpCompletion)), "a forged handle reads as cancelled");
  CHECK(arkagent_http_is_cancelled(FORGED2(ArkAgentHttpCompletion)), "another forged handle reads as cancelled");
  /* Wrong kind: an HTTP completion is not a tool completion. */
  EXPECT(arkagent_tool_complete((ArkAgentToolCompletion *)c, "x", 0), BAD_HANDLE);
  /* From inside a callback, blocking calls are refused. */
  EXPECT(arkagent_shutdown(), ARK_AGENT_RESULT_REENTRANT);
}

typedef struct {
  ArkAgentHttpCompletion *http;
  ArkAgentToolCompletion *tool;
  int index;
  pthread_barrier_t *start;
  int result;
} Racer;

static void *race_one(void *arg) {
  Racer *r = arg;
  pthread_barrier_wait(r->start);
  if (r->http != NULL) {
    if (r->index % 2 == 0)
      r->result = arkagent_http_complete(r->http, 200, NULL, (const uint8_t *)FINAL_REPLY, strlen(FINAL_REPLY));
    else
      r->result = arkagent_http_fail(r->http, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "racer");
  } else {
    if (r->index % 3 == 2)
      r->result = arkagent_tool_fail(r->tool, "racer_code", "racer");
    else
      r->result = arkagent_tool_complete(r->tool, "racer", r->index % 2);
  }
  return NULL;
}

#define RACERS 8
/* Races RACERS threads on one completion; returns the index of the only winner (-1 if none or many). */
static int race(ArkAgentHttpCompletion *http, ArkAgentToolCompletion *tool) {
  pthread_t threads[RACERS];
  Racer racers[RACERS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, RACERS);
  for (int i = 0; i < RACERS; i++) {
    racers[i] = (Racer){http, tool, i, &start, -1};
    pthread_create(&threads[i], NULL, race_one, &racers[i]);
  }
  int winner = -1, wins = 0;
  for (int i = 0; i < RACERS; i++) {
    pthread_join(threads[i], NULL);
    if (racers[i].result == OK) {
      winner = i;
      wins++;
    } else {
      CHECK(racers[i].result == DONE, "a racing loser gets ALREADY_COMPLETED");
    }
  }
  pthread_barrier_destroy(&start);
  CHECK(wins == 1, "exactly one racing completion wins");
  return wins == 1 ? winner : -1;
}

static void *free_runtime_later(void *arg) {
  Model *m = arg;
  sleep_ms(30);
  /* A blocking call is running (the run waits for the held request). */
  EXPECT(arkagent_shutdown(), ARK_AGENT_RESULT_RUN_IN_PROGRESS);
  arkagent_runtime_free(m->runtime);
  return NULL;
}

static pthread_t freer;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  int i = m->requests++;
  CHECK(request != NULL && strstr(request->url, "/chat/completions") != NULL && request->body_len > 0, "request");
  switch (m->mode) {
    case ANSWER:
      good_complete(completion, FINAL_REPLY);
      break;
    case ABUSE:
      abuse_http_completion(completion);
      good_complete(completion, FINAL_REPLY);
      EXPECT(arkagent_http_complete(completion, 200, NULL, NULL, 0), DONE);
      EXPECT(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_TIMEOUT, NULL), DONE);
      EXPECT(arkagent_http_stream_begin(completion, 200, NULL), DONE);
      EXPECT(arkagent_http_stream_chunk(completion, (const uint8_t *)"x", 1), DONE);
      EXPECT(arkagent_http_stream_end(completion, NULL), DONE);
      CHECK(arkagent_http_is_cancelled(completion), "a finished request reads as cancelled (stop)");
      break;
    case RACE: {
      int winner = race(completion, NULL);
      m->race_winner_failed = winner >= 0 && winner % 2 == 1;
      EXPECT(arkagent_http_complete(completion, 200, NULL, NULL, 0), DONE);
      break;
    }
    case HOLD:
      m->held = completion;
      pthread_create(&freer, NULL, free_runtime_later, m);
      break;
    case TOOL_ONCE:
      good_complete(completion, i == 0 ? TOOL_REPLY : FINAL_REPLY);
      break;
  }
}

/* Never called: the runtimes it is given to are refused. */
static void cancel_cb(void *userdata, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)completion;
  CHECK(0, "cancel called for a refused runtime");
}

/* ------------------------------------------------------------- tools */

typedef struct {
  int calls;
  int race;
} Probe;

static bool probe_approval(void *userdata, const char *call_json) {
  (void)userdata;
  (void)call_json;
  CHECK(0, "an approval callback of a refused registration ran");
  return false;
}

static int32_t probe_policy(void *userdata, const char *call_json, char *reason, size_t cap) {
  (void)userdata;
  (void)call_json;
  (void)reason;
  (void)cap;
  CHECK(0, "a removed policy ran");
  return ARK_AGENT_POLICY_ALLOW;
}

static void probe_abort(void *userdata, int32_t reason) {
  (void)userdata;
  (void)reason;
  CHECK(0, "an abort callback that was refused ran");
}

static void probe_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  Probe *p = userdata;
  p->calls++;
  CHECK(call_json != NULL && strstr(call_json, "\"name\":\"probe\"") != NULL, "tool call JSON");
  EXPECT(arkagent_tool_complete(NULL, "x", 0), NULL_ARG);
  EXPECT(arkagent_tool_complete(completion, NULL, 0), NULL_ARG);
  EXPECT(arkagent_tool_complete(completion, BAD_UTF8_STR, 0), BAD_UTF8);
  EXPECT(arkagent_tool_complete(completion, "x", 2), BAD_ARG);
  EXPECT(arkagent_tool_complete(completion, "x", -1), BAD_ARG);
  EXPECT(arkagent_tool_complete(FORGED(ArkAgentToolCompletion), "x", 0), BAD_HANDLE);
  EXPECT(arkagent_tool_complete_parts(NULL, "[]", 0), NULL_ARG);
  EXPECT(arkagent_tool_complete_parts(completion, NULL, 0), NULL_ARG);
  EXPECT(arkagent_tool_complete_parts(completion, BAD_UTF8_STR, 0), BAD_UTF8);
  EXPECT(arkagent_tool_complete_parts(completion, NOT_JSON, 0), BAD_JSON);
  EXPECT(arkagent_tool_complete_parts(completion, "[]", 2), BAD_ARG);
  EXPECT(arkagent_tool_complete_parts(FORGED(ArkAgentToolCompletion), "[]", 0), BAD_HANDLE);
  EXPECT(arkagent_http_complete((ArkAgentHttpCompletion *)completion, 200, NULL, NULL, 0), BAD_HANDLE);
  EXPECT(arkagent_tool_fail(NULL, "code", "m"), NULL_ARG);
  EXPECT(arkagent_tool_fail(completion, NULL, "m"), NULL_ARG);
  EXPECT(arkagent_tool_fail(completion, BAD_UTF8_STR, "m"), BAD_UTF8);
  EXPECT(arkagent_tool_fail(completion, "code", BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_tool_fail(completion, "", "m"), BAD_ARG);
  EXPECT(arkagent_tool_fail(completion, " \t", "m"), BAD_ARG);
  EXPECT(arkagent_tool_fail(FORGED(ArkAgentToolCompletion), "code", "m"), BAD_HANDLE);
  EXPECT(arkagent_tool_fail(FORGED2(ArkAgentToolCompletion), "code", "m"), BAD_HANDLE);
  EXPECT(arkagent_compress_complete((ArkAgentCompressCompletion *)completion, "{}"), BAD_HANDLE);
  /* TOOL-4: the abort signal of an open call, and of NULL and forged handles. */
  CHECK(arkagent_tool_abort_reason(completion) == ARK_AGENT_TOOL_ABORT_NONE, "open call not aborted");
  CHECK(arkagent_tool_abort_reason(NULL) == ARK_AGENT_TOOL_ABORT_CLOSED, "NULL call polls CLOSED");
  CHECK(arkagent_tool_abort_reason(FORGED(ArkAgentToolCompletion)) == ARK_AGENT_TOOL_ABORT_CLOSED, "forged call polls CLOSED");
  EXPECT(arkagent_tool_on_abort(completion, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_tool_on_abort(NULL, probe_abort, NULL), NULL_ARG);
  EXPECT(arkagent_tool_on_abort(FORGED(ArkAgentToolCompletion), probe_abort, NULL), BAD_HANDLE);
  EXPECT(arkagent_tool_on_abort((ArkAgentToolCompletion *)(void *)p, probe_abort, NULL), BAD_HANDLE);
  /* PAR-1: the tool's MemoryService and namespace, through its own open completion. */
  char *mem = NULL;
  EXPECT(arkagent_tool_episodes(NULL, &mem), NULL_ARG);
  EXPECT(arkagent_tool_episodes(completion, NULL), NULL_ARG);
  EXPECT(arkagent_tool_episodes(FORGED(ArkAgentToolCompletion), &mem), BAD_HANDLE);
  EXPECT(arkagent_tool_find_episode(completion, NULL, &mem), NULL_ARG);
  EXPECT(arkagent_tool_find_episode(completion, "e", NULL), NULL_ARG);
  EXPECT(arkagent_tool_find_episode(completion, BAD_UTF8_STR, &mem), BAD_UTF8);
  EXPECT(arkagent_tool_find_episode((ArkAgentToolCompletion *)FORGED2(ArkAgentHttpCompletion), "e", &mem), BAD_HANDLE);
  EXPECT(arkagent_tool_memory_store(completion, ARK_AGENT_MEMORY_TIER_WORKING, NULL, "1"), NULL_ARG);
  EXPECT(arkagent_tool_memory_store(completion, ARK_AGENT_MEMORY_TIER_WORKING, "k", NOT_JSON), BAD_JSON);
  EXPECT(arkagent_tool_memory_store(FORGED(ArkAgentToolCompletion), ARK_AGENT_MEMORY_TIER_WORKING, "k", "1"), BAD_HANDLE);
  EXPECT(arkagent_tool_memory_recall(completion, ARK_AGENT_MEMORY_TIER_WORKING, "k", NULL), NULL_ARG);
  EXPECT(arkagent_tool_memory_recall(completion, ARK_AGENT_MEMORY_TIER_WORKING, BAD_UTF8_STR, &mem), BAD_UTF8);
  for (size_t i = 0; i < N_BAD_ENUMS; i++) {
    EXPECT(arkagent_tool_memory_store(completion, BAD_ENUMS[i], "k", "1"), BAD_ARG);
    EXPECT(arkagent_tool_memory_recall(completion, BAD_ENUMS[i], "k", &mem), BAD_ARG);
    EXPECT(arkagent_tool_memory_forget(completion, BAD_ENUMS[i], "k", NULL), BAD_ARG);
    EXPECT(arkagent_tool_memory_ids(completion, BAD_ENUMS[i], &mem), BAD_ARG);
  }
  EXPECT(arkagent_tool_memory_forget(completion, ARK_AGENT_MEMORY_TIER_WORKING, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_tool_memory_forget(completion, ARK_AGENT_MEMORY_TIER_WORKING, BAD_UTF8_STR, NULL), BAD_UTF8);
  EXPECT(arkagent_tool_memory_forget(FORGED(ArkAgentToolCompletion), ARK_AGENT_MEMORY_TIER_WORKING, "k", NULL), BAD_HANDLE);
  EXPECT(arkagent_tool_memory_ids(completion, ARK_AGENT_MEMORY_TIER_WORKING, NULL), NULL_ARG);
  EXPECT(arkagent_tool_memory_ids(FORGED(ArkAgentToolCompletion), ARK_AGENT_MEMORY_TIER_WORKING, &mem), BAD_HANDLE);
  EXPECT(arkagent_tool_memory_stats(completion, NULL), NULL_ARG);
  EXPECT(arkagent_tool_memory_stats(NULL, &mem), NULL_ARG);
  CHECK(mem == NULL, "refused tool-context calls write no output");
  if (p->race) {
    race(NULL, completion);
  } else {
    EXPECT(arkagent_tool_complete(completion, "probed", 0), OK);
  }
  EXPECT(arkagent_tool_complete(completion, "again", 0), DONE);
  EXPECT(arkagent_tool_fail(completion, "again", NULL), DONE);
  EXPECT(arkagent_tool_episodes(completion, &mem), DONE);
  EXPECT(arkagent_tool_memory_store(completion, ARK_AGENT_MEMORY_TIER_WORKING, "k", "1"), DONE);
  EXPECT(arkagent_tool_memory_forget(completion, ARK_AGENT_MEMORY_TIER_WORKING, "k", NULL), DONE);
  EXPECT(arkagent_tool_memory_ids(completion, ARK_AGENT_MEMORY_TIER_WORKING, &mem), DONE);
  EXPECT(arkagent_tool_memory_stats(completion, &mem), DONE);
  CHECK(mem == NULL, "a finished call reaches no memory");
}

#define NAME16 "Ab_9-Ab_9-Ab_9-x"
#define NAME64 NAME16 NAME16 NAME16 NAME16

static void tools_checks(void) {
  ArkAgentTools *tools = NULL, *freed = NULL;
  Probe probe = {0, 0};
  EXPECT(arkagent_tools_new(NULL), NULL_ARG);
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_new(&freed), OK);
  arkagent_tools_free(freed);
  EXPECT(arkagent_tools_register(NULL, PROBE_DEF, probe_cb, &probe), NULL_ARG);
  EXPECT(arkagent_tools_register(tools, NULL, probe_cb, &probe), NULL_ARG);
  EXPECT(arkagent_tools_register(tools, PROBE_DEF, NULL, &probe), NULL_ARG);
  EXPECT(arkagent_tools_register(tools, BAD_UTF8_STR, probe_cb, &probe), BAD_UTF8);
  EXPECT(arkagent_tools_register(tools, NOT_JSON, probe_cb, &probe), BAD_JSON);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"x\"}", probe_cb, &probe), BAD_JSON);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"bad name!\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", probe_cb, &probe),
         ARK_AGENT_RESULT_INVALID_TOOL);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"p\",\"description\":\"d\",\"parameters\":[1]}", probe_cb, &probe),
         ARK_AGENT_RESULT_INVALID_TOOL);
  /* Names: 1–64 ASCII letters, digits, '_' and '-'. */
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", probe_cb, &probe),
         ARK_AGENT_RESULT_INVALID_TOOL);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"" NAME64 "x\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", probe_cb, &probe),
         ARK_AGENT_RESULT_INVALID_TOOL);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"" NAME64 "\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", probe_cb, &probe), OK);
  EXPECT(arkagent_tools_register(freed, PROBE_DEF, probe_cb, &probe), BAD_HANDLE);
  EXPECT(arkagent_tools_register(FORGED(ArkAgentTools), PROBE_DEF, probe_cb, &probe), BAD_HANDLE);
  EXPECT(arkagent_tools_register(FORGED2(ArkAgentTools), PROBE_DEF, probe_cb, &probe), BAD_HANDLE);
  ArkAgentWorkers *workers = NULL;
  EXPECT(arkagent_workers_new(&workers), OK);
  EXPECT(arkagent_tools_register((ArkAgentTools *)workers, PROBE_DEF, probe_cb, &probe), BAD_HANDLE);
  arkagent_workers_free(workers);
  EXPECT(arkagent_tools_register(tools, PROBE_DEF, probe_cb, &probe), OK);
  /* The refused registrations left nothing behind: the name is free the first time only. */
  EXPECT(arkagent_tools_register(tools, PROBE_DEF, probe_cb, &probe), ARK_AGENT_RESULT_INVALID_TOOL);
  /* TOOL-1, TOOL-3: a per-call approval callback and the policy callback. */
  EXPECT(arkagent_tools_register_with_approval(NULL, PROBE_DEF, probe_cb, probe_approval, &probe), NULL_ARG);
  EXPECT(arkagent_tools_register_with_approval(tools, NULL, probe_cb, probe_approval, &probe), NULL_ARG);
  EXPECT(arkagent_tools_register_with_approval(tools, PROBE_DEF, NULL, probe_approval, &probe), NULL_ARG);
  EXPECT(arkagent_tools_register_with_approval(tools, BAD_UTF8_STR, probe_cb, probe_approval, &probe), BAD_UTF8);
  EXPECT(arkagent_tools_register_with_approval(tools, NOT_JSON, probe_cb, probe_approval, &probe), BAD_JSON);
  EXPECT(arkagent_tools_register_with_approval(tools, PROBE_DEF, probe_cb, probe_approval, &probe), ARK_AGENT_RESULT_INVALID_TOOL);
  EXPECT(arkagent_tools_register_with_approval(freed, PROBE_DEF, probe_cb, NULL, &probe), BAD_HANDLE);
  EXPECT(arkagent_tools_register_with_approval(FORGED(ArkAgentTools), PROBE_DEF, probe_cb, NULL, &probe), BAD_HANDLE);
  EXPECT(arkagent_tools_set_policy(NULL, probe_policy, &probe), NULL_ARG);
  EXPECT(arkagent_tools_set_policy(freed, probe_policy, &probe), BAD_HANDLE);
  EXPECT(arkagent_tools_set_policy(FORGED2(ArkAgentTools), probe_policy, &probe), BAD_HANDLE);
  EXPECT(arkagent_tools_set_policy(tools, probe_policy, &probe), OK);
  EXPECT(arkagent_tools_set_policy(tools, NULL, NULL), OK); /* removed again */
  EXPECT(arkagent_tools_set_mcp_auth(NULL, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_tools_set_mcp_auth(freed, NULL, NULL), BAD_HANDLE);
  EXPECT(arkagent_tools_set_mcp_auth(FORGED2(ArkAgentTools), NULL, NULL), BAD_HANDLE);
  EXPECT(arkagent_tools_set_mcp_auth(tools, NULL, NULL), OK); /* none */
  EXPECT(arkagent_tools_set_image_codec(NULL, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_tools_set_image_codec(freed, NULL, NULL), BAD_HANDLE);
  EXPECT(arkagent_tools_set_image_codec(FORGED2(ArkAgentTools), NULL, NULL), BAD_HANDLE);
  EXPECT(arkagent_tools_set_image_codec(tools, NULL, NULL), OK); /* none */
  EXPECT(arkagent_image_codec_output_set(NULL, NULL, 0), NULL_ARG);
  arkagent_tools_free(tools);
  arkagent_tools_free(tools); /* freed twice: ignored */
  arkagent_tools_free(NULL);
  arkagent_tools_free(FORGED(ArkAgentTools));
  arkagent_tools_free(FORGED3(ArkAgentTools));
}

/* ------------------------------------------------------------- workers */

static ArkAgentWorkerBuilder *stale_builder = NULL;

/* Never called: the checks below only refuse it or leave it unused. */
static void unused_compress_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  (void)userdata;
  (void)state_json;
  (void)context_json;
  EXPECT(arkagent_compress_complete(completion, "{\"outcome\":\"skipped\"}"), OK);
}

static int32_t checking_factory(void *userdata, const char *worker_name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  CHECK(worker_name != NULL && strcmp(worker_name, "w") == 0, "factory gets the worker name");
  stale_builder = builder;
  EXPECT(arkagent_worker_configure(NULL, "{}"), NULL_ARG);
  EXPECT(arkagent_worker_configure(builder, NULL), NULL_ARG);
  EXPECT(arkagent_worker_configure(builder, BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_worker_configure(builder, NOT_JSON), BAD_JSON);
  EXPECT(arkagent_worker_configure(builder, "{\"max_iterations\":0}"), ARK_AGENT_RESULT_INVALID_CONFIG);
  EXPECT(arkagent_worker_configure(FORGED(ArkAgentWorkerBuilder), "{}"), BAD_HANDLE);
  EXPECT(arkagent_worker_register_tool(NULL, PROBE_DEF, probe_cb, NULL), NULL_ARG);
  EXPECT(arkagent_worker_register_tool(builder, NULL, probe_cb, NULL), NULL_ARG);
  EXPECT(arkagent_worker_register_tool(builder, PROBE_DEF, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_worker_register_tool(builder, BAD_UTF8_STR, probe_cb, NULL), BAD_UTF8);
  EXPECT(arkagent_worker_register_tool(builder, NOT_JSON, probe_cb, NULL), BAD_JSON);
  EXPECT(arkagent_worker_register_tool(FORGED(ArkAgentWorkerBuilder), PROBE_DEF, probe_cb, NULL), BAD_HANDLE);
  EXPECT(arkagent_worker_set_compressor(NULL, unused_compress_cb, NULL, 0), NULL_ARG);
  EXPECT(arkagent_worker_set_compressor(builder, NULL, NULL, 0), NULL_ARG);
  EXPECT(arkagent_worker_set_compressor(FORGED(ArkAgentWorkerBuilder), unused_compress_cb, NULL, 0), BAD_HANDLE);
  EXPECT(arkagent_worker_configure(builder, "{\"system_prompt\":\"You check.\"}"), OK);
  return OK;
}

/* Returns a number that is no result code at all: the delegation fails, nothing crashes. */
static int32_t garbage_factory(void *userdata, const char *worker_name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)worker_name;
  (void)builder;
  return 12345;
}

static void workers_checks(void) {
  ArkAgentWorkers *workers = NULL, *freed = NULL;
  EXPECT(arkagent_workers_new(NULL), NULL_ARG);
  EXPECT(arkagent_workers_new(&workers), OK);
  EXPECT(arkagent_workers_new(&freed), OK);
  arkagent_workers_free(freed);
  EXPECT(arkagent_workers_add(NULL, "w", "d", checking_factory, NULL), NULL_ARG);
  EXPECT(arkagent_workers_add(workers, NULL, "d", checking_factory, NULL), NULL_ARG);
  EXPECT(arkagent_workers_add(workers, "w", NULL, checking_factory, NULL), NULL_ARG);
  EXPECT(arkagent_workers_add(workers, "w", "d", NULL, NULL), NULL_ARG);
  EXPECT(arkagent_workers_add(workers, BAD_UTF8_STR, "d", checking_factory, NULL), BAD_UTF8);
  EXPECT(arkagent_workers_add(workers, "w", BAD_UTF8_STR, checking_factory, NULL), BAD_UTF8);
  EXPECT(arkagent_workers_add(workers, "", "d", checking_factory, NULL), ARK_AGENT_RESULT_SUBAGENT_NAME_EMPTY);
  EXPECT(arkagent_workers_add(workers, "CLONE", "d", checking_factory, NULL), ARK_AGENT_RESULT_SUBAGENT_NAME_RESERVED);
  EXPECT(arkagent_workers_add(freed, "w", "d", checking_factory, NULL), BAD_HANDLE);
  EXPECT(arkagent_workers_add(FORGED(ArkAgentWorkers), "w", "d", checking_factory, NULL), BAD_HANDLE);
  EXPECT(arkagent_workers_add(workers, "w", "d", checking_factory, NULL), OK);
  EXPECT(arkagent_workers_add(workers, "w", "d", checking_factory, NULL), ARK_AGENT_RESULT_SUBAGENT_NAME_DUPLICATE);
  EXPECT(arkagent_workers_add(workers, "junk", "d", garbage_factory, NULL), OK);

  /* Runtime construction: every argument refused before anything is built. */
  Model model = {ANSWER, 0, NULL, NULL, 0};
  ArkAgentRuntime *const sentinel = FORGED(ArkAgentRuntime);
  ArkAgentRuntime *rt = sentinel;
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_runtime_new(NULL, NULL, NULL, HTTP(http_cb, &model), &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(NULL, &model), &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, NULL, &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, (&(ArkAgentHttp){NULL, cancel_cb, &model}), &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), NULL), NULL_ARG);
  EXPECT(arkagent_runtime_new(BAD_UTF8_STR, NULL, NULL, HTTP(http_cb, &model), &rt), BAD_UTF8);
  EXPECT(arkagent_runtime_new(NOT_JSON, NULL, NULL, HTTP(http_cb, &model), &rt), BAD_JSON);
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"u\",\"api_key\":\"k\",\"model\":\"m\",\"retry\":{\"max_attempts\":-1}}}", NULL, NULL, HTTP(http_cb, &model), &rt), BAD_JSON);
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"u\",\"api_key\":\"k\",\"model\":\"m\",\"request_timeout_ms\":\"soon\"}}", NULL, NULL, HTTP(http_cb, &model), &rt), BAD_JSON);
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"\",\"api_key\":\"k\",\"model\":\"m\"}}", NULL, NULL, HTTP(http_cb, &model), &rt), ARK_AGENT_RESULT_INVALID_CONFIG);
  EXPECT(arkagent_runtime_new(CONFIG, FORGED(ArkAgentTools), NULL, HTTP(http_cb, &model), &rt), BAD_HANDLE);
  EXPECT(arkagent_runtime_new(CONFIG, (ArkAgentTools *)workers, NULL, HTTP(http_cb, &model), &rt), BAD_HANDLE);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, FORGED(ArkAgentWorkers), HTTP(http_cb, &model), &rt), BAD_HANDLE);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, (ArkAgentWorkers *)tools, HTTP(http_cb, &model), &rt), BAD_HANDLE);
  EXPECT(arkagent_runtime_new(CONFIG, NULL, freed, HTTP(http_cb, &model), &rt), BAD_HANDLE);
  /* The library's own tool names held by the app's tools: refused where the runtime uses them. */
  ArkAgentTools *mine = NULL;
  EXPECT(arkagent_tools_new(&mine), OK);
  EXPECT(arkagent_tools_register(mine, "{\"name\":\"" ARKAGENT_DELEGATE_TASK_TOOL_NAME "\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", probe_cb, NULL), OK);
  EXPECT(arkagent_runtime_new(CONFIG, mine, NULL, HTTP(http_cb, &model), &rt), ARK_AGENT_RESULT_INVALID_TOOL);
  arkagent_tools_free(mine);
  EXPECT(arkagent_tools_new(&mine), OK);
  EXPECT(arkagent_tools_register(mine, "{\"name\":\"" ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME "\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", probe_cb, NULL), OK);
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"u\",\"api_key\":\"k\",\"model\":\"m\"},\"compression\":{}}", mine, NULL, HTTP(http_cb, &model), &rt),
         ARK_AGENT_RESULT_INVALID_TOOL);
  CHECK(rt == sentinel, "a refused runtime_new leaves *out alone");
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"u\",\"api_key\":\"k\",\"model\":\"m\"}}", mine, NULL, HTTP(http_cb, &model), &rt), OK);
  arkagent_runtime_free(rt); /* without compression the name is the app's */
  rt = sentinel;
  arkagent_tools_free(mine);

  EXPECT(arkagent_runtime_new(CONFIG, tools, workers, HTTP(http_cb, &model), &rt), OK);
  arkagent_workers_free(workers); /* the runtime keeps its own copy */
  arkagent_tools_free(tools);
  char *out = NULL;
  EXPECT(arkagent_runtime_run_decomposed(rt, "[{\"assignee\":\"w\",\"task_description\":\"check\"},"
                                             "{\"assignee\":\"junk\",\"task_description\":\"fail\"}]", 2, &out), OK);
  CHECK(out != NULL && strstr(out, "subagent_factory_failed") != NULL, "a garbage factory result fails that delegation");
  CHECK(out != NULL && strstr(out, "Fine.") != NULL, "the checked worker ran");
  arkagent_string_free(out);
  /* The builder is valid only during the factory call. */
  EXPECT(arkagent_worker_configure(stale_builder, "{}"), BAD_HANDLE);
  EXPECT(arkagent_worker_register_tool(stale_builder, PROBE_DEF, probe_cb, NULL), BAD_HANDLE);
  EXPECT(arkagent_worker_set_compressor(stale_builder, unused_compress_cb, NULL, 0), BAD_HANDLE);
  arkagent_runtime_free(rt);
  arkagent_workers_free(workers); /* freed twice: ignored */
  arkagent_workers_free(NULL);
  arkagent_workers_free(FORGED(ArkAgentWorkers));
}

/* ------------------------------------------------------------- runtime exports */

static void event_cb(void *userdata, const char *event_json) {
  (void)userdata;
  (void)event_json;
}

/* Every runtime export with a handle that is NULL, forged, freed or of the wrong kind. */
static void bad_runtime_handle(ArkAgentRuntime *rt, int code) {
  char *out = NULL;
  size_t count = 0;
  uint64_t id = 0;
  EXPECT(arkagent_runtime_run(rt, "hi", &out), code);
  EXPECT(arkagent_runtime_run_parts(rt, "[]", &out), code);
  EXPECT(arkagent_runtime_image(rt, "id", &out), code);
  EXPECT(arkagent_runtime_compress_now(rt, &out), code);
  EXPECT(arkagent_runtime_episodes(rt, &out), code);
  EXPECT(arkagent_runtime_total_usage(rt, &out), code);
  EXPECT(arkagent_runtime_sub_agents(rt, &out), code);
  EXPECT(arkagent_runtime_close_sub_agents(rt, &count), code);
  EXPECT(arkagent_runtime_run_decomposed(rt, "[]", 1, &out), code);
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", "1"), code);
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", &out), code);
  EXPECT(arkagent_runtime_cancel(rt), code);
  EXPECT(arkagent_runtime_export_state(rt, &out), code);
  EXPECT(arkagent_runtime_import_state(rt, "{}"), code);
  EXPECT(arkagent_runtime_messages(rt, &out), code);
  EXPECT(arkagent_runtime_usages(rt, &out), code);
  EXPECT(arkagent_runtime_session_id(rt, &out), code);
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, NULL, &id), code);
  EXPECT(arkagent_runtime_unsubscribe(rt, 1), code);
  int32_t flag = 7;
  EXPECT(arkagent_runtime_find_episode(rt, "e", &out), code);
  EXPECT(arkagent_runtime_memory_forget(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", &flag), code);
  EXPECT(arkagent_runtime_memory_ids(rt, ARK_AGENT_MEMORY_TIER_WORKING, &out), code);
  EXPECT(arkagent_runtime_memory_stats(rt, &out), code);
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, "c", "stop", &flag), code);
  EXPECT(arkagent_runtime_cleanup_sub_agents(rt, 0, &count), code);
  /* TOOL-1: the approval calls on a bad handle. */
  EXPECT(arkagent_runtime_pending_approvals(rt, &out), code);
  EXPECT(arkagent_runtime_approve(rt, "c", NULL), code);
  EXPECT(arkagent_runtime_approve(rt, "c", "{}"), code);
  EXPECT(arkagent_runtime_reject(rt, "c", "r"), code);
  EXPECT(arkagent_runtime_resume_run(rt, &out), code);
  bool closed = false;
  EXPECT(arkagent_runtime_cancel_approvals(rt, &closed), code);
  CHECK(!closed, "a refused cancel_approvals writes nothing");
  /* The seed's DEFAULT_SUMMARY_PROMPT: static, never NULL, whatever the caller did. */
  CHECK(arkagent_default_summary_prompt() != NULL && strlen(arkagent_default_summary_prompt()) > 100, "default summary prompt");
  /* CHAT-1, CHAT-2: the gestures on a bad handle. */
  EXPECT(arkagent_runtime_rewind(rt, "r", &out), code);
  EXPECT(arkagent_runtime_regenerate(rt, "r", &out), code);
  EXPECT(arkagent_runtime_edit_and_resend(rt, "r", "hi", &out), code);
  EXPECT(arkagent_runtime_fork(rt, "f", NULL, &out), code);
  CHECK(out == NULL && count == 0 && id == 0 && flag == 7, "refused calls write no output");
  arkagent_runtime_free(rt); /* ignored */
}

static void runtime_checks(void) {
  Model model = {ANSWER, 0, NULL, NULL, 0};
  ArkAgentRuntime *rt = NULL, *freed = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), &freed), OK);
  arkagent_runtime_free(freed);
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  bad_runtime_handle(NULL, NULL_ARG);
  bad_runtime_handle(FORGED(ArkAgentRuntime), BAD_HANDLE);
  bad_runtime_handle(FORGED2(ArkAgentRuntime), BAD_HANDLE);
  bad_runtime_handle(FORGED3(ArkAgentRuntime), BAD_HANDLE);
  bad_runtime_handle(freed, BAD_HANDLE);
  bad_runtime_handle((ArkAgentRuntime *)tools, BAD_HANDLE);
  arkagent_tools_free(tools);

  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), &rt), OK);
  /* NULL for each required pointer. */
  EXPECT(arkagent_runtime_run(rt, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_episodes(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_total_usage(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_sub_agents(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_run_decomposed(rt, NULL, 1, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_run_decomposed(rt, "[{\"assignee\":\"clone\",\"task_description\":\"t\"}]", 1, NULL), NULL_ARG);
  CHECK(model.requests == 0, "a refused run_decomposed sends no request");
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, NULL, "1"), NULL_ARG);
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", NULL), NULL_ARG);
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, NULL, NULL), NULL_ARG);
  char *out = NULL;
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, NULL, &out), NULL_ARG);
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", NULL), NULL_ARG);
  EXPECT(arkagent_runtime_export_state(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_import_state(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_messages(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_usages(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_session_id(rt, NULL), NULL_ARG);
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, NULL, NULL, &sub), NULL_ARG);
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_run_parts(rt, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_image(rt, NULL, &out), NULL_ARG);
  EXPECT(arkagent_runtime_image(rt, "id", NULL), NULL_ARG);
  /* Invalid UTF-8 and JSON. */
  EXPECT(arkagent_runtime_run(rt, BAD_UTF8_STR, NULL), BAD_UTF8);
  EXPECT(arkagent_runtime_run_parts(rt, BAD_UTF8_STR, NULL), BAD_UTF8);
  EXPECT(arkagent_runtime_run_parts(rt, NOT_JSON, NULL), BAD_JSON);
  EXPECT(arkagent_runtime_run_parts(rt, "[{\"type\":\"image\",\"mime_type\":\"image/png\",\"data\":\"AAAA\"}]", NULL),
         ARK_AGENT_RESULT_IMAGE_INVALID);
  EXPECT(arkagent_runtime_image(rt, BAD_UTF8_STR, &out), BAD_UTF8);
  EXPECT(arkagent_runtime_image(rt, "0", &out), ARK_AGENT_RESULT_IMAGE_NOT_FOUND);
  EXPECT(arkagent_estimate_image_tokens(BAD_UTF8_STR, (const uint8_t *)"x", 1, NULL, &out), BAD_UTF8);
  EXPECT(arkagent_estimate_image_tokens(NOT_JSON, (const uint8_t *)"x", 1, NULL, &out), BAD_JSON);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"h\",\"api_key\":\"k\",\"model\":\"m\"}", (const uint8_t *)"x", 1, BAD_UTF8_STR, &out), BAD_UTF8);
  EXPECT(arkagent_estimate_image_tokens("{\"base_url\":\"h\",\"api_key\":\"k\",\"model\":\"m\"}", NULL, 0, NULL, &out), ARK_AGENT_RESULT_IMAGE_UNSUPPORTED_TYPE);
  EXPECT(arkagent_runtime_run_decomposed(rt, BAD_UTF8_STR, 1, &out), BAD_UTF8);
  EXPECT(arkagent_runtime_run_decomposed(rt, NOT_JSON, 1, &out), BAD_JSON);
  EXPECT(arkagent_runtime_run_decomposed(rt, "{\"assignee\":1}", 1, &out), BAD_JSON);
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, BAD_UTF8_STR, "1"), BAD_UTF8);
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", NOT_JSON), BAD_JSON);
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, BAD_UTF8_STR, &out), BAD_UTF8);
  EXPECT(arkagent_runtime_import_state(rt, BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_runtime_import_state(rt, NOT_JSON), BAD_JSON);
  EXPECT(arkagent_runtime_import_state(rt, "{\"version\":1,\"session_id\":\"s\",\"usages\":[],\"history\":{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"\"}]}}"),
         ARK_AGENT_RESULT_INVALID_STATE);
  /* PAR-1 exports: NULL, bad UTF-8, a blank reason. */
  EXPECT(arkagent_runtime_find_episode(rt, NULL, &out), NULL_ARG);
  EXPECT(arkagent_runtime_find_episode(rt, "e", NULL), NULL_ARG);
  EXPECT(arkagent_runtime_find_episode(rt, BAD_UTF8_STR, &out), BAD_UTF8);
  EXPECT(arkagent_runtime_memory_forget(rt, ARK_AGENT_MEMORY_TIER_WORKING, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_memory_forget(rt, ARK_AGENT_MEMORY_TIER_WORKING, BAD_UTF8_STR, NULL), BAD_UTF8);
  EXPECT(arkagent_runtime_memory_ids(rt, ARK_AGENT_MEMORY_TIER_WORKING, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_memory_stats(rt, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, NULL, "stop", NULL), NULL_ARG);
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, "c", NULL, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, BAD_UTF8_STR, "stop", NULL), BAD_UTF8);
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, "c", " ", NULL), BAD_ARG);
  int32_t found = 7;
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, "c", "stop", &found), OK);
  CHECK(found == 0, "no such child");
  size_t cleaned = 7;
  EXPECT(arkagent_runtime_cleanup_sub_agents(rt, UINT64_MAX, &cleaned), OK);
  EXPECT(arkagent_runtime_cleanup_sub_agents(rt, 0, NULL), OK);
  CHECK(cleaned == 0, "nothing to clean up without delegation");
  /* Out-of-range enumerations. */
  for (size_t i = 0; i < N_BAD_ENUMS; i++) {
    EXPECT(arkagent_runtime_memory_store(rt, BAD_ENUMS[i], "k", "1"), BAD_ARG);
    EXPECT(arkagent_runtime_memory_recall(rt, BAD_ENUMS[i], "k", &out), BAD_ARG);
    EXPECT(arkagent_runtime_memory_forget(rt, BAD_ENUMS[i], "k", NULL), BAD_ARG);
    EXPECT(arkagent_runtime_memory_ids(rt, BAD_ENUMS[i], &out), BAD_ARG);
  }
  CHECK(out == NULL, "refused calls write no output");
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_SHORT_TERM, "k", "\"v\""), OK);
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, "k", &out), OK);
  CHECK(out != NULL && strcmp(out, "null") == 0, "tiers stay apart");
  arkagent_string_free(out);
  out = NULL;
  /* Unknown subscriptions, extreme integers. */
  EXPECT(arkagent_runtime_unsubscribe(rt, 0), BAD_HANDLE);
  EXPECT(arkagent_runtime_unsubscribe(rt, UINT64_MAX), BAD_HANDLE);
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, NULL, &sub), OK);
  EXPECT(arkagent_runtime_unsubscribe(rt, sub), OK);
  EXPECT(arkagent_runtime_unsubscribe(rt, sub), BAD_HANDLE);
  EXPECT(arkagent_runtime_run_decomposed(rt, "[]", SIZE_MAX, &out), OK);
  CHECK(out != NULL && strcmp(out, "[]") == 0, "no tasks, no results");
  arkagent_string_free(out);
  out = NULL;
  size_t closed = 7;
  EXPECT(arkagent_runtime_close_sub_agents(rt, NULL), OK);
  EXPECT(arkagent_runtime_close_sub_agents(rt, &closed), OK);
  CHECK(closed == 0, "nothing to close");
  EXPECT(arkagent_runtime_compress_now(rt, NULL), OK);
  /* Optional outputs may be NULL; a run with a well-behaved host works after all that. */
  EXPECT(arkagent_runtime_run(rt, "hello", NULL), OK);
  CHECK(model.requests == 1, "one request for one turn");
  arkagent_runtime_free(rt);
  bad_runtime_handle(rt, BAD_HANDLE);
}

static void completion_checks(void) {
  /* Every bad completion call, from inside the callback. */
  Model model = {ABUSE, 0, NULL, NULL, 0};
  ArkAgentRuntime *rt = NULL;
  char *out = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), &rt), OK);
  EXPECT(arkagent_runtime_run(rt, "hi", &out), OK);
  CHECK(out != NULL && strstr(out, "Fine.") != NULL, "the good completion after the bad ones is used");
  arkagent_string_free(out);
  out = NULL;

  /* Racing HTTP completions from 8 threads: exactly one wins and the run gets its answer. */
  model.mode = RACE;
  for (int i = 0; i < 40; i++) {
    int r = arkagent_runtime_run(rt, "race", &out);
    if (model.race_winner_failed) {
      CHECK(r == ARK_AGENT_RESULT_LLM_TRANSPORT, "a winning fail ends the run with LLM_TRANSPORT");
    } else {
      CHECK(r == OK && out != NULL && strstr(out, "Fine.") != NULL, "a winning complete answers the run");
    }
    arkagent_string_free(out);
    out = NULL;
  }
  arkagent_runtime_free(rt);

  /* Tool completions: bad calls, then 8 racing threads. */
  ArkAgentTools *tools = NULL;
  Probe probe = {0, 0};
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, PROBE_DEF, probe_cb, &probe), OK);
  for (int race_mode = 0; race_mode < 2; race_mode++) {
    Model tool_model = {TOOL_ONCE, 0, NULL, NULL, 0};
    probe.race = race_mode;
    EXPECT(arkagent_runtime_new(CONFIG, tools, NULL, HTTP(http_cb, &tool_model), &rt), OK);
    for (int i = 0; i < (race_mode ? 20 : 1); i++) {
      tool_model.requests = 0;
      EXPECT(arkagent_runtime_run(rt, "probe it", &out), OK);
      CHECK(out != NULL && strstr(out, "Fine.") != NULL, "the run finished after the tool");
      arkagent_string_free(out);
      out = NULL;
    }
    arkagent_runtime_free(rt);
  }
  CHECK(probe.calls == 21, "the probe ran once per run");
  arkagent_tools_free(tools);

  /* Completion after free: the runtime is freed while its request is outstanding. */
  Model held = {HOLD, 0, NULL, NULL, 0};
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &held), &rt), OK);
  held.runtime = rt;
  int r = arkagent_runtime_run(rt, "wait", &out);
  CHECK(r == OK || r == ARK_AGENT_RESULT_CANCELLED, "a freed runtime's run ends cancelled");
  arkagent_string_free(out);
  out = NULL;
  pthread_join(freer, NULL);
  CHECK(held.held != NULL, "the request was held");
  CHECK(arkagent_http_is_cancelled(held.held), "OHOS-7: the freed runtime's request reads as cancelled");
  good_complete(held.held, FINAL_REPLY); /* late answer: accepted and ignored */
  EXPECT(arkagent_http_complete(held.held, 200, NULL, NULL, 0), DONE);
  EXPECT(arkagent_http_fail(held.held, ARK_AGENT_TRANSPORT_ERROR_NETWORK, NULL), DONE);
  bad_runtime_handle(rt, BAD_HANDLE);
}

/* ------------------------------------------------------------- a C compressor (CMP-1) */

typedef struct {
  int mode; /* 0: abuse, then answer; 1: race; 2: cancel the run and hold the completion */
  int calls;
  ArkAgentRuntime *runtime;
  ArkAgentCompressCompletion *held;
} Squeeze;

typedef struct {
  ArkAgentCompressCompletion *completion;
  int index;
  pthread_barrier_t *start;
  int result;
} CompressRacer;

static void *compress_race_one(void *arg) {
  CompressRacer *r = arg;
  pthread_barrier_wait(r->start);
  r->result = r->index % 2 ? arkagent_compress_fail(r->completion, "racer")
                           : arkagent_compress_complete(r->completion, "{\"outcome\":\"skipped\"}");
  return NULL;
}

static void compress_race(ArkAgentCompressCompletion *completion) {
  pthread_t threads[RACERS];
  CompressRacer racers[RACERS];
  pthread_barrier_t start;
  pthread_barrier_init(&start, NULL, RACERS);
  for (int i = 0; i < RACERS; i++) {
    racers[i] = (CompressRacer){completion, i, &start, -1};
    pthread_create(&threads[i], NULL, compress_race_one, &racers[i]);
  }
  int wins = 0;
  for (int i = 0; i < RACERS; i++) {
    pthread_join(threads[i], NULL);
    if (racers[i].result == OK)
      wins++;
    else
      CHECK(racers[i].result == DONE, "a racing compress loser gets ALREADY_COMPLETED");
  }
  pthread_barrier_destroy(&start);
  CHECK(wins == 1, "exactly one racing compress completion wins");
}

static void squeeze_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  Squeeze *q = userdata;
  q->calls++;
  CHECK(state_json != NULL && strstr(state_json, "\"history\"") != NULL, "state JSON");
  CHECK(context_json != NULL && strstr(context_json, "\"force\"") != NULL, "context JSON");
  switch (q->mode) {
    case 0:
      EXPECT(arkagent_compress_complete(NULL, "{}"), NULL_ARG);
      EXPECT(arkagent_compress_complete(completion, NULL), NULL_ARG);
      EXPECT(arkagent_compress_complete(completion, BAD_UTF8_STR), BAD_UTF8);
      EXPECT(arkagent_compress_complete(FORGED(ArkAgentCompressCompletion), "{}"), BAD_HANDLE);
      EXPECT(arkagent_compress_complete(FORGED2(ArkAgentCompressCompletion), "{}"), BAD_HANDLE);
      EXPECT(arkagent_compress_complete(FORGED3(ArkAgentCompressCompletion), "{}"), BAD_HANDLE);
      EXPECT(arkagent_compress_fail(NULL, "m"), NULL_ARG);
      EXPECT(arkagent_compress_fail(completion, BAD_UTF8_STR), BAD_UTF8);
      EXPECT(arkagent_compress_fail(FORGED(ArkAgentCompressCompletion), NULL), BAD_HANDLE);
      /* Wrong kind both ways. */
      EXPECT(arkagent_tool_complete((ArkAgentToolCompletion *)completion, "x", 0), BAD_HANDLE);
      EXPECT(arkagent_tool_fail((ArkAgentToolCompletion *)completion, "x", NULL), BAD_HANDLE);
      EXPECT(arkagent_http_fail((ArkAgentHttpCompletion *)completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, NULL), BAD_HANDLE);
      EXPECT(arkagent_runtime_compress_now(q->runtime, NULL), ARK_AGENT_RESULT_REENTRANT);
      EXPECT(arkagent_compress_complete(completion, "{\"outcome\":\"skipped\"}"), OK);
      break;
    case 1:
      compress_race(completion);
      break;
    default:
      q->held = completion;
      EXPECT(arkagent_runtime_cancel(q->runtime), OK);
      return;
  }
  EXPECT(arkagent_compress_complete(completion, "{}"), DONE);
  EXPECT(arkagent_compress_fail(completion, NULL), DONE);
}

static void compressor_checks(void) {
  Model model = {ANSWER, 0, NULL, NULL, 0};
  Squeeze q = {0, 0, NULL, NULL};
  ArkAgentRuntime *rt = NULL;
  ArkAgentTools *freed_tools = NULL;
  EXPECT(arkagent_tools_new(&freed_tools), OK);
  arkagent_tools_free(freed_tools);
  /* Every argument is checked before anything is created. */
  EXPECT(arkagent_runtime_new_with_compressor(NULL, NULL, NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(NULL, &model), squeeze_cb, &q, 0, &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, NULL, squeeze_cb, &q, 0, &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &model), NULL, &q, 0, &rt), NULL_ARG);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, NULL), NULL_ARG);
  EXPECT(arkagent_runtime_new_with_compressor(BAD_UTF8_STR, NULL, NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), BAD_UTF8);
  EXPECT(arkagent_runtime_new_with_compressor(NOT_JSON, NULL, NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), BAD_JSON);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, FORGED(ArkAgentTools), NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), BAD_HANDLE);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, freed_tools, NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), BAD_HANDLE);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, FORGED(ArkAgentWorkers), HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), BAD_HANDLE);
  CHECK(rt == NULL && q.calls == 0 && model.requests == 0, "refused constructors create and call nothing");
  /* Threshold extremes are fine. */
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &model), squeeze_cb, &q, UINT64_MAX, &rt), OK);
  arkagent_runtime_free(rt);
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &model), squeeze_cb, &q, 0, &rt), OK);
  q.runtime = rt;
  char *out = NULL;
  /* Bad completion calls from inside the callback, then a good one. */
  EXPECT(arkagent_runtime_compress_now(rt, &out), OK);
  CHECK(out != NULL && strstr(out, "\"outcome\":\"skipped\"") != NULL, "the good answer after the bad calls is used");
  arkagent_string_free(out);
  out = NULL;
  /* Racing finishes from 8 threads. */
  q.mode = 1;
  for (int i = 0; i < 20; i++) {
    EXPECT(arkagent_runtime_compress_now(rt, &out), OK);
    CHECK(out != NULL && (strstr(out, "\"outcome\":\"skipped\"") || strstr(out, "\"reason\":\"compressor_error\"")), "the winner's answer");
    arkagent_string_free(out);
    out = NULL;
  }
  /* A completion held past a cancelled attempt: finishing late is accepted and ignored. */
  q.mode = 2;
  EXPECT(arkagent_runtime_compress_now(rt, &out), OK);
  CHECK(out != NULL && strstr(out, "\"reason\":\"cancelled\"") != NULL, "the attempt ends cancelled");
  arkagent_string_free(out);
  out = NULL;
  arkagent_runtime_free(rt);
  CHECK(q.held != NULL, "the completion was held");
  EXPECT(arkagent_compress_complete(q.held, "{\"outcome\":\"skipped\"}"), OK);
  EXPECT(arkagent_compress_complete(q.held, "{\"outcome\":\"skipped\"}"), DONE);
  EXPECT(arkagent_compress_fail(q.held, NULL), DONE);
  CHECK(q.calls == 22, "one call per attempt");
  bad_runtime_handle(rt, BAD_HANDLE);

  /* The usage summary needs no runtime. */
  EXPECT(arkagent_child_usage_summary(NULL, &out), NULL_ARG);
  EXPECT(arkagent_child_usage_summary("[]", NULL), NULL_ARG);
  EXPECT(arkagent_child_usage_summary(BAD_UTF8_STR, &out), BAD_UTF8);
  EXPECT(arkagent_child_usage_summary(NOT_JSON, &out), BAD_JSON);
  EXPECT(arkagent_child_usage_summary("{\"prompt_tokens\":1}", &out), BAD_JSON);
  CHECK(out == NULL, "refused calls write no output");
  EXPECT(arkagent_child_usage_summary("[{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}]", &out), OK);
  CHECK(out != NULL && strstr(out, "\"call_count\":1") != NULL, "one call summed");
  arkagent_string_free(out);
  /* "A count an object leaves out reads 0 (each object is one call); anything but an array
     of objects, or a count that is not a whole number, gives INVALID_JSON". */
  out = NULL;
  EXPECT(arkagent_child_usage_summary("[{}]", &out), OK);
  CHECK(out != NULL && strstr(out, "\"call_count\":1") && strstr(out, "\"total_tokens\":0"), "an empty object: one call, 0 tokens");
  arkagent_string_free(out);
  out = NULL;
  EXPECT(arkagent_child_usage_summary("[1]", &out), BAD_JSON);
  EXPECT(arkagent_child_usage_summary("[{\"total_tokens\":1.5}]", &out), BAD_JSON);
  EXPECT(arkagent_child_usage_summary("[{\"total_tokens\":-1}]", &out), BAD_JSON);
  CHECK(out == NULL, "refused: nothing written");
}

/* ------------------------------------------------------------- plain functions */

static const char *next_id_cb(void *userdata) {
  (void)userdata;
  return "1";
}

static const char *null_id_cb(void *userdata) {
  (void)userdata;
  return NULL;
}

static const char *bad_id_cb(void *userdata) {
  (void)userdata;
  return BAD_UTF8_STR;
}

static void plain_checks(void) {
  const char *version = arkagent_version();
  CHECK(version != NULL && strlen(version) > 0, "version");
  static const int32_t odd[] = {-1, 1, 99, 112, 999, 100000, INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
    CHECK(strcmp(arkagent_result_name(odd[i]), "unknown") == 0, "unknown result numbers are named unknown");
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_INVALID_ARGUMENT), "invalid_argument") == 0, "result name");
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_DELEGATION_NOT_CONFIGURED), "delegation_not_configured") == 0,
        "delegation_not_configured has its own code");
  arkagent_string_free(NULL);
  CHECK(arkagent_log_to_hilog(5) == false, "log level 5 refused");
  CHECK(arkagent_log_to_hilog(UINT32_MAX) == false, "log level UINT32_MAX refused");
  /* The last error, into buffers of every awkward size. */
  EXPECT(arkagent_runtime_run(NULL, "x", NULL), NULL_ARG);
  size_t len = arkagent_last_error_message(NULL, 0);
  CHECK(len > 0, "an error leaves a message");
  CHECK(arkagent_last_error_message(NULL, 100) == len, "NULL buffer: only the length");
  char one[1] = {'x'};
  CHECK(arkagent_last_error_message(one, 0) == len && one[0] == 'x', "zero length: nothing written");
  CHECK(arkagent_last_error_message(one, 1) == len && one[0] == 0, "one byte: just the NUL");
  char small[5];
  CHECK(arkagent_last_error_message(small, sizeof small) == len && strlen(small) == 4, "cut to fit");
  /* "the _free functions ignore NULL (and freed handles): the last error message stays" —
     the usual cleanup after a failed call keeps its explanation. */
  arkagent_store_free(NULL);
  arkagent_runtime_free(NULL);
  arkagent_tools_free(NULL);
  arkagent_workers_free(NULL);
  arkagent_store_free(FORGED(ArkAgentStore));
  CHECK(arkagent_last_error_message(NULL, 0) == len, "freeing NULL or a forged handle keeps the last error");
  /* PAR-1 helpers: NULL, bad UTF-8, bad JSON. */
  int64_t index = 7;
  int32_t paired = 7;
  char *id = NULL;
  EXPECT(arkagent_compute_safe_split_index(NULL, 1, &index), NULL_ARG);
  EXPECT(arkagent_compute_safe_split_index("[]", 1, NULL), NULL_ARG);
  EXPECT(arkagent_compute_safe_split_index(BAD_UTF8_STR, 1, &index), BAD_UTF8);
  EXPECT(arkagent_compute_safe_split_index(NOT_JSON, 1, &index), BAD_JSON);
  EXPECT(arkagent_compute_safe_split_index("[{\"role\":\"nobody\"}]", 0, &index), BAD_JSON);
  EXPECT(arkagent_tool_calls_paired(NULL, &paired), NULL_ARG);
  EXPECT(arkagent_tool_calls_paired("[]", NULL), NULL_ARG);
  EXPECT(arkagent_tool_calls_paired(BAD_UTF8_STR, &paired), BAD_UTF8);
  EXPECT(arkagent_tool_calls_paired("{}", &paired), BAD_JSON);
  CHECK(index == 7 && paired == 7, "refused helpers write nothing");
  EXPECT(arkagent_compute_safe_split_index("[]", SIZE_MAX, &index), OK);
  CHECK(index == -1, "no split in an empty history");
  EXPECT(arkagent_validate_episodic_memory_ids(NULL), NULL_ARG);
  EXPECT(arkagent_validate_episodic_memory_ids(BAD_UTF8_STR), BAD_UTF8);
  EXPECT(arkagent_validate_episodic_memory_ids(NOT_JSON), BAD_JSON);
  EXPECT(arkagent_allocate_isolated_session_id(NULL, "r", "[]", next_id_cb, NULL, &id), NULL_ARG);
  EXPECT(arkagent_allocate_isolated_session_id("p", NULL, "[]", next_id_cb, NULL, &id), NULL_ARG);
  EXPECT(arkagent_allocate_isolated_session_id("p", "r", NULL, next_id_cb, NULL, &id), NULL_ARG);
  EXPECT(arkagent_allocate_isolated_session_id("p", "r", "[]", NULL, NULL, &id), NULL_ARG);
  EXPECT(arkagent_allocate_isolated_session_id("p", "r", "[]", next_id_cb, NULL, NULL), NULL_ARG);
  EXPECT(arkagent_allocate_isolated_session_id(BAD_UTF8_STR, "r", "[]", next_id_cb, NULL, &id), BAD_UTF8);
  EXPECT(arkagent_allocate_isolated_session_id("p", "r", "[1]", next_id_cb, NULL, &id), BAD_JSON);
  EXPECT(arkagent_allocate_isolated_session_id("p", "", "[]", null_id_cb, NULL, &id), BAD_ARG);
  EXPECT(arkagent_allocate_isolated_session_id("p", "", "[]", bad_id_cb, NULL, &id), BAD_UTF8);
  CHECK(id == NULL, "a refused allocation writes nothing");
  char *summary = NULL;
  EXPECT(arkagent_summarize_result(NULL, &summary), NULL_ARG);
  EXPECT(arkagent_summarize_result("x", NULL), NULL_ARG);
  EXPECT(arkagent_summarize_result(BAD_UTF8_STR, &summary), BAD_UTF8);
  CHECK(summary == NULL, "a refused summary writes nothing");
  /* Shutdown with nothing running is fine, and idempotent. */
  EXPECT(arkagent_shutdown(), OK);
  EXPECT(arkagent_shutdown(), OK);
}

static void shutdown_checks(void) {
  Model model = {ANSWER, 0, NULL, NULL, 0};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), &rt), OK);
  EXPECT(arkagent_runtime_run(rt, "hi", NULL), OK);
  CHECK(executor_threads_settle(0) > 0, "the executor threads run after a blocking call");
  EXPECT(arkagent_shutdown(), OK);
  CHECK(executor_threads_settle(1) == 0, "arkagent_shutdown stops every executor thread");
  /* The runtime survives; the next blocking call starts the threads again. */
  EXPECT(arkagent_runtime_run(rt, "again", NULL), OK);
  CHECK(executor_threads_settle(0) > 0, "threads restarted on demand");
  arkagent_runtime_free(rt);
  EXPECT(arkagent_shutdown(), OK);
  CHECK(executor_threads_settle(1) == 0, "stopped again");
}

/* STORE-6: the store exports with NULL, forged, freed and wrong-kind handles. */
static void store_checks(void) {
  char dir[] = "/tmp/arkagent-c-bad-store-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "a scratch directory");
  char path[128];
  snprintf(path, sizeof path, "%s/s.db", dir);
  ArkAgentStore *store = NULL;
  char *out = NULL;
  EXPECT(arkagent_store_open(NULL, &store), NULL_ARG);
  EXPECT(arkagent_store_open(path, NULL), NULL_ARG);
  EXPECT(arkagent_store_open(BAD_UTF8_STR, &store), BAD_UTF8);
  EXPECT(arkagent_store_open(dir, &store), ARK_AGENT_RESULT_STORE_IO);
  CHECK(store == NULL, "no handle after a refused open");
  EXPECT(arkagent_store_open(path, &store), OK);
  EXPECT(arkagent_store_list(FORGED(ArkAgentStore), &out), BAD_HANDLE);
  EXPECT(arkagent_store_list(store, NULL), NULL_ARG);
  EXPECT(arkagent_store_delete(store, BAD_UTF8_STR, NULL), BAD_UTF8);
  EXPECT(arkagent_store_delete(FORGED2(ArkAgentStore), "s", NULL), BAD_HANDLE);
  EXPECT(arkagent_runtime_attach_store(FORGED(ArkAgentRuntime), store, NULL), BAD_HANDLE);
  EXPECT(arkagent_runtime_attach_store((ArkAgentRuntime *)store, store, NULL), BAD_HANDLE);
  ArkAgentRuntime *rt = NULL;
  Model model = {ANSWER, 0, NULL, NULL, 0};
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, &model), &rt), OK);
  EXPECT(arkagent_runtime_attach_store(rt, (ArkAgentStore *)rt, NULL), BAD_HANDLE);
  EXPECT(arkagent_runtime_attach_store(rt, store, ""), ARK_AGENT_RESULT_INVALID_CONFIG);
  EXPECT(arkagent_runtime_attach_store(rt, store, BAD_UTF8_STR), BAD_UTF8);
  arkagent_runtime_free(rt);
  arkagent_store_free(store);
  EXPECT(arkagent_store_list(store, &out), BAD_HANDLE);
  arkagent_store_free(store);
  arkagent_store_free(NULL);
  arkagent_store_free(FORGED3(ArkAgentStore));
}

int main(void) {
  plain_checks();
  store_checks();
  tools_checks();
  workers_checks();
  runtime_checks();
  completion_checks();
  compressor_checks();
  shutdown_checks();
  printf("bad input: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
