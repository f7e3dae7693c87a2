/*
 * CHAT-1..CHAT-3 through the C ABI. A scripted OpenAI-compatible model answers each
 * request "answer to <last user text>" and records every body:
 * - arkagent_runtime_regenerate sends run 2's request again, byte for byte (the prefix the
 *   provider cached), and the history is as before with a new run id;
 * - arkagent_runtime_edit_and_resend puts the new input in place; its request starts with
 *   run 1's request up to the end of run 1's answer;
 * - arkagent_runtime_rewind returns the dropped run ids and input, emits session_rewound
 *   and session_committed, keeps the tokens in arkagent_runtime_total_usage ("discarded");
 * - on a SQLite store the rewind survives a freed runtime; arkagent_runtime_fork writes a
 *   new session another runtime resumes, whose first request extends the source's;
 * - a regenerate or an edit whose run the provider refuses (HTTP 400) puts the session
 *   back as it was, in the store too;
 * - hostile input: unknown run ids, NULLs, an empty fork id, a fork onto an existing id.
 * Built and run by tests/it/chat_c.rs. Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-chat-c-SECRET-1414213562"

typedef struct {
  int requests;
  char bodies[16][8192];
  int down; /* answer 400 to everything */
} Model;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  CHECK(occurrences(request, API_KEY, 0) == 0, "API key never in a body");
  char *body = body_dup(request);
  if (m->requests < 16) snprintf(m->bodies[m->requests], sizeof m->bodies[0], "%s", body);
  m->requests++;
  /* The last user text: the last "content":"task N" in the body. */
  const char *last = NULL;
  for (const char *p = strstr(body, "\"content\":\"task "); p; p = strstr(p + 1, "\"content\":\"task ")) last = p;
  char task[64] = "nothing";
  if (last) {
    last += 11;
    snprintf(task, sizeof task, "%.*s", (int)(strchr(last, '"') - last), last);
  }
  free(body);
  if (m->down) {
    static const char refusal[] = "{\"error\":{\"message\":\"refused\",\"type\":\"invalid_request_error\"}}";
    arkagent_http_complete(completion, 400, NULL, (const uint8_t *)refusal, strlen(refusal));
    return;
  }
  char reply[512];
  snprintf(reply, sizeof reply,
           "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
           "\"message\":{\"role\":\"assistant\",\"content\":\"answer to %s\"},\"finish_reason\":\"stop\"}],"
           "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":3,\"total_tokens\":43}}",
           task);
  arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply));
}

typedef struct {
  char types[2048];
} Events;

static void event_cb(void *userdata, const char *event_json) {
  Events *e = userdata;
  const char *p = strstr(event_json, "\"type\":\"");
  if (p == NULL) return;
  p += 8;
  size_t n = (size_t)(strchr(p, '"') - p);
  if (strlen(e->types) + n + 2 < sizeof e->types) {
    strcat(e->types, ",");
    strncat(e->types, p, n);
  }
}

static ArkAgentRuntime *runtime(Model *m, const char *session) {
  char config[512];
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\"},\"session_id\":\"%s\"}", session);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, NULL, NULL, HTTP(http_cb, m), &rt), OK);
  return rt;
}

/* A runtime on `session`, attached to `store`. */
static ArkAgentRuntime *stored_runtime(Model *m, const char *session, ArkAgentStore *store) {
  ArkAgentRuntime *rt = runtime(m, session);
  EXPECT(arkagent_runtime_attach_store(rt, store, NULL), OK);
  return rt;
}

/* The run id in an outcome JSON, copied into `out`. */
static void run_id_of(const char *outcome, char *out, size_t cap) {
  const char *p = outcome ? strstr(outcome, "\"run_id\":\"") : NULL;
  out[0] = 0;
  if (p == NULL) return;
  p += 10;
  snprintf(out, cap, "%.*s", (int)(strchr(p, '"') - p), p);
}

static void run(ArkAgentRuntime *rt, const char *input, char *run_id) {
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, input, &outcome), OK);
  run_id_of(outcome, run_id, 64);
  arkagent_string_free(outcome);
}

/* The body up to the end of its last message (the messages array's last `}]`). */
static size_t prefix_len(const char *body) {
  const char *end = NULL;
  for (const char *p = strstr(body, "}]"); p; p = strstr(p + 1, "}]")) end = p;
  return end ? (size_t)(end - body) + 1 : 0;
}

static void regenerate_and_edit(void) {
  Model m = {0};
  ArkAgentRuntime *rt = runtime(&m, "gestures");
  char r1[64], r2[64];
  run(rt, "task 1", r1);
  run(rt, "task 2", r2);
  char *before = NULL, *after = NULL;
  EXPECT(arkagent_runtime_messages(rt, &before), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_regenerate(rt, r2, &outcome), OK);
  char r3[64];
  run_id_of(outcome, r3, sizeof r3);
  CHECK(outcome && strstr(outcome, "answer to task 2") && strcmp(r3, r2) != 0, "regenerated with a new run id");
  arkagent_string_free(outcome);
  CHECK(m.requests == 3 && strcmp(m.bodies[1], m.bodies[2]) == 0, "CHAT-3: the same request bytes again");
  EXPECT(arkagent_runtime_messages(rt, &after), OK);
  CHECK(before && after && strcmp(before, after) == 0, "the history is as it was");
  arkagent_string_free(before);
  arkagent_string_free(after);
  EXPECT(arkagent_runtime_regenerate(rt, r2, NULL), ARK_AGENT_RESULT_UNKNOWN_RUN);
  EXPECT(arkagent_runtime_edit_and_resend(rt, r3, "task 9", &outcome), OK);
  CHECK(outcome && strstr(outcome, "answer to task 9"), "the edited input answered");
  arkagent_string_free(outcome);
  size_t n = prefix_len(m.bodies[0]);
  CHECK(n > 0 && strncmp(m.bodies[0], m.bodies[3], n - 1) == 0, "CHAT-3: the edit's request starts with run 1's bytes");
  CHECK(strstr(m.bodies[3], "task 2") == NULL, "the old input is gone");
  arkagent_runtime_free(rt);
}

static void rewind_store_and_fork(const char *path) {
  Model m = {0};
  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  ArkAgentRuntime *rt = stored_runtime(&m, "chat", store);
  Events events = {{0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  char r1[64], r2[64], r3[64];
  run(rt, "task 1", r1);
  run(rt, "task 2", r2);
  run(rt, "task 3", r3);
  events.types[0] = 0;
  char *result = NULL;
  EXPECT(arkagent_runtime_rewind(rt, r2, &result), OK);
  CHECK(result && strstr(result, "\"input_text\":\"task 2\"") && strstr(result, "\"messages_removed\":4"), "what was dropped");
  CHECK(result && strstr(result, r3) != NULL, "the later run dropped too");
  arkagent_string_free(result);
  CHECK(strcmp(events.types, ",session_rewound,session_committed") == 0, "session_rewound, then the commit");
  char *usage = NULL;
  EXPECT(arkagent_runtime_total_usage(rt, &usage), OK);
  CHECK(usage && strstr(usage, "\"discarded\":{\"prompt_tokens\":80,") != NULL, "the dropped calls' tokens stay counted, apart");
  arkagent_string_free(usage);
  char *fork = NULL;
  EXPECT(arkagent_runtime_fork(rt, "chat-fork", r1, &fork), OK);
  CHECK(fork && strstr(fork, "\"session_id\":\"chat-fork\"") && strstr(fork, "answer to task 1"), "the fork's state");
  arkagent_string_free(fork);
  EXPECT(arkagent_runtime_fork(rt, "chat-fork", NULL, NULL), ARK_AGENT_RESULT_SESSION_EXISTS);
  EXPECT(arkagent_runtime_fork(rt, "chat", NULL, NULL), ARK_AGENT_RESULT_SESSION_EXISTS);
  EXPECT(arkagent_runtime_fork(rt, "", NULL, NULL), ARK_AGENT_RESULT_INVALID_CONFIG);
  EXPECT(arkagent_runtime_fork(rt, "x", "no-such-run", NULL), ARK_AGENT_RESULT_UNKNOWN_RUN);
  arkagent_runtime_free(rt);
  /* The rewind survived; the rewound session can be named again after the restart. */
  rt = stored_runtime(&m, "chat", store);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && strstr(messages, "task 1") && !strstr(messages, "task 2") && !strstr(messages, "task 3"), "rewound on disk");
  arkagent_string_free(messages);
  EXPECT(arkagent_runtime_rewind(rt, r1, NULL), OK);
  arkagent_runtime_free(rt);
  /* The fork resumes from the store; its first request extends run 1's. */
  int before = m.requests;
  rt = stored_runtime(&m, "chat-fork", store);
  char r4[64];
  run(rt, "task 4", r4);
  size_t n = prefix_len(m.bodies[0]);
  CHECK(m.requests == before + 1 && n > 0 && strncmp(m.bodies[0], m.bodies[before], n - 1) == 0, "CHAT-3: the fork's request starts with the source's bytes");
  arkagent_runtime_free(rt);
  arkagent_store_free(store);
}

/* arkagent.h: "when the run failed before the model answered …, the session is put back as
 * it was before the call, in the store too (`session_committed`)". */
static void failed_gesture_puts_back(const char *path) {
  Model m = {0};
  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  ArkAgentRuntime *rt = stored_runtime(&m, "put-back", store);
  char r1[64], r2[64];
  run(rt, "task 1", r1);
  run(rt, "task 2", r2);
  char *before = NULL, *after = NULL;
  EXPECT(arkagent_runtime_messages(rt, &before), OK);
  Events events = {{0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  m.down = 1;
  EXPECT(arkagent_runtime_regenerate(rt, r2, NULL), ARK_AGENT_RESULT_LLM_BAD_REQUEST);
  EXPECT(arkagent_runtime_edit_and_resend(rt, r1, "task 9", NULL), ARK_AGENT_RESULT_LLM_BAD_REQUEST);
  EXPECT(arkagent_runtime_messages(rt, &after), OK);
  CHECK(before && after && strcmp(before, after) == 0, "the answers and the inputs are back");
  arkagent_string_free(after);
  const char *tail = strrchr(events.types, ',');
  CHECK(strstr(events.types, "session_rewound") && tail && strcmp(tail, ",session_committed") == 0, "the put-back is committed");
  arkagent_runtime_free(rt);
  m.down = 0;
  rt = stored_runtime(&m, "put-back", store);
  EXPECT(arkagent_runtime_messages(rt, &after), OK);
  CHECK(before && after && strcmp(before, after) == 0, "the store has it too");
  arkagent_string_free(after);
  arkagent_string_free(before);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_regenerate(rt, r2, &outcome), OK);
  CHECK(outcome && strstr(outcome, "answer to task 2"), "the same gesture works once the provider is back");
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
  arkagent_store_free(store);
}

static void hostile(void) {
  Model m = {0};
  ArkAgentRuntime *rt = runtime(&m, "hostile");
  EXPECT(arkagent_runtime_rewind(rt, "nope", NULL), ARK_AGENT_RESULT_UNKNOWN_RUN);
  EXPECT(arkagent_runtime_rewind(rt, NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_rewind(NULL, "x", NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_regenerate(rt, NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_edit_and_resend(rt, "x", NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_edit_and_resend(rt, "x", "y", NULL), ARK_AGENT_RESULT_UNKNOWN_RUN);
  EXPECT(arkagent_runtime_fork(rt, NULL, NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  CHECK(m.requests == 0, "nothing refused reached the model");
  arkagent_runtime_free(rt);
}

int main(void) {
  char path[] = "/tmp/arkagent-chat-c-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  unlink(path);
  regenerate_and_edit();
  rewind_store_and_fork(path);
  failed_gesture_puts_back(path);
  hostile();
  unlink(path);
  printf("chat: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
