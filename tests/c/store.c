/*
 * STORE-6 through the C ABI: open a session store, attach it to a runtime, run (each
 * commit announced by a "session_committed" event), free the runtime, resume the session
 * in a new runtime, list, the session lock, delete, and bad files and arguments. Built
 * and run by tests/it/store.rs and by scripts/test-c-asan.sh (ASan, valgrind). Prints
 * "N passed, M failed" and exits non-zero on any failure. argv[1]: a scratch directory
 * (default: a new one under /tmp).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-c-STORE-27182818"


#define REPLY(text)                                                                                      \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{"           \
  "\"prompt_tokens\":30,\"completion_tokens\":2,\"total_tokens\":32}}"

/* When set, the model call tries to attach a store to its own runtime: during a run. */
static ArkAgentRuntime *attach_rt;
static ArkAgentStore *attach_store;
static int attach_result = -1;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)request;
  if (attach_rt != NULL) attach_result = arkagent_runtime_attach_store(attach_rt, attach_store, "during-run");
  const char *body = REPLY("stored answer");
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body)), OK);
}

typedef struct {
  int committed;
  char last[256];
} Events;

static void on_event(void *userdata, const char *event_json) {
  Events *e = userdata;
  if (strstr(event_json, "\"type\":\"session_committed\"") != NULL) {
    e->committed++;
    snprintf(e->last, sizeof e->last, "%s", event_json);
  }
}

static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\","
    "\"retry\":{\"max_attempts\":1}},\"session_id\":\"c-store\"}";

static ArkAgentRuntime *new_runtime(void) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, NULL), &rt), OK);
  return rt;
}

int main(int argc, char **argv) {
  char scratch[] = "/tmp/arkagent-c-store-XXXXXX";
  const char *dir = argc > 1 ? argv[1] : mkdtemp(scratch);
  if (dir == NULL) {
    fprintf(stderr, "no scratch directory\n");
    return 2;
  }
  char path[1024], junk[1024];
  snprintf(path, sizeof path, "%s/sessions.db", dir);
  snprintf(junk, sizeof junk, "%s/junk.db", dir);

  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  CHECK(store != NULL, "a store handle");

  /* A runtime with the store: two runs, each commit announced. */
  ArkAgentRuntime *rt = new_runtime();
  Events events = {0, {0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, on_event, &events, &sub), OK);
  EXPECT(arkagent_runtime_attach_store(rt, store, NULL), OK);
  EXPECT(arkagent_runtime_attach_store(rt, store, NULL), ARK_AGENT_RESULT_INVALID_CONFIG);
  EXPECT(arkagent_runtime_run(rt, "Remember the C store\nsecond line", NULL), OK);
  EXPECT(arkagent_runtime_run(rt, "and again", NULL), OK);
  CHECK(events.committed == 4, "one session_committed per commit: run start and answer, twice");
  CHECK(strstr(events.last, "\"commit_seq\":4") != NULL, "the event carries the commit's sequence number");
  CHECK(strstr(events.last, "\"message_count\":4") != NULL, "and the committed message count");

  /* The same session in a second runtime: locked. Delete: locked too. */
  ArkAgentRuntime *second = new_runtime();
  EXPECT(arkagent_runtime_attach_store(second, store, "c-store"), ARK_AGENT_RESULT_SESSION_LOCKED);
  bool deleted = true;
  EXPECT(arkagent_store_delete(store, "c-store", &deleted), ARK_AGENT_RESULT_SESSION_LOCKED);
  arkagent_runtime_free(rt);

  /* Resume after the first runtime is gone (a restart: a new store handle too). */
  arkagent_store_free(store);
  store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  EXPECT(arkagent_runtime_attach_store(second, store, "c-store"), OK);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(second, &messages), OK);
  CHECK(count(messages, "\"role\":\"user\"") == 2 && count(messages, "stored answer") == 2, "the session resumed");
  arkagent_string_free(messages);
  /* The store handle freed while attached: the runtime keeps the file open and commits. */
  arkagent_store_free(store);
  store = NULL;
  EXPECT(arkagent_runtime_run(second, "third", NULL), OK);
  EXPECT(arkagent_store_open(path, &store), OK);

  char *list = NULL;
  EXPECT(arkagent_store_list(store, &list), OK);
  CHECK(list != NULL && strstr(list, "\"id\":\"c-store\"") != NULL, "listed");
  CHECK(list != NULL && strstr(list, "\"title\":\"Remember the C store\"") != NULL, "titled by the first user text");
  CHECK(list != NULL && strstr(list, "\"message_count\":6") != NULL, "message count");
  CHECK(list != NULL && strstr(list, "\"total_tokens\":96") != NULL, "total tokens");
  CHECK(count(list, API_KEY) == 0, "no key in the list");
  arkagent_string_free(list);
  arkagent_runtime_free(second);

  /* Attaching during a run (from the run's own model call) is refused. */
  ArkAgentRuntime *busy = new_runtime();
  attach_rt = busy;
  attach_store = store;
  EXPECT(arkagent_runtime_run(busy, "busy", NULL), OK);
  attach_rt = NULL;
  EXPECT(attach_result, ARK_AGENT_RESULT_RUN_IN_PROGRESS);
  arkagent_runtime_free(busy);

  EXPECT(arkagent_store_delete(store, "c-store", &deleted), OK);
  CHECK(deleted, "deleted");
  EXPECT(arkagent_store_delete(store, "c-store", NULL), OK);
  EXPECT(arkagent_store_list(store, &list), OK);
  CHECK(list != NULL && strcmp(list, "[]") == 0, "nothing left");
  arkagent_string_free(list);

  /* Bad files and arguments. */
  FILE *f = fopen(junk, "w");
  if (f != NULL) {
    for (int i = 0; i < 64; i++) fputs("not a database, just text that is long enough to fill a header\n", f);
    fclose(f);
  }
  ArkAgentStore *bad = NULL;
  EXPECT(arkagent_store_open(junk, &bad), ARK_AGENT_RESULT_STORE_CORRUPT);
  CHECK(bad == NULL, "no handle on failure");
  EXPECT(arkagent_store_open(NULL, &bad), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_store_open(path, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_store_list(NULL, &list), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_store_list(store, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_store_delete(store, NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_attach_store(NULL, store, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_SESSION_LOCKED), "session_locked") == 0, "code names");
  arkagent_store_free(store);
  EXPECT(arkagent_store_list(store, &list), ARK_AGENT_RESULT_INVALID_HANDLE);
  arkagent_store_free(store); /* freed twice: ignored */
  arkagent_store_free(NULL);
  arkagent_shutdown();

  printf("store: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
