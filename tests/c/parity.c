/*
 * PAR-1 (issue 17, items 10-13): what the seeds give an app, through the C ABI — the
 * helpers a custom compressor needs, a custom compressor asked only when a compression
 * is due and never sent the archive, the MemoryService and memory namespace of a tool,
 * namespace access, per-child force-completion, registry cleanup, the seed's constants.
 * Issue 28: a C compressor's threshold 0 (item 5), its state_json is the export (item 9),
 * the retrieve_memory constants, the three-level summary and the compressor's own model
 * (item 12).
 * Built and run by bindings/c/tests/c_abi/main.rs and by scripts/test-c-asan.sh (ASan, valgrind).
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

#define API_KEY "sk-c-parity-SECRET-7"

#define REPLY(text, tokens)                                                                              \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{"           \
  "\"prompt_tokens\":" tokens ",\"completion_tokens\":2,\"total_tokens\":" tokens "}}"

#define CALL_REPLY(name, args)                                                                          \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"t1\",\"type\":\"function\","       \
  "\"function\":{\"name\":\"" name "\",\"arguments\":\"" args "\"}}]},\"finish_reason\":\"tool_calls\"}]," \
  "\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":2,\"total_tokens\":22}}"

static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},"
    "\"session_id\":\"c-parity\"}";

/* ------------------------------------------------------------- scripted model */

typedef struct {
  const char *replies[8]; /* NULL at index i: request i hangs (its completion is kept) */
  int n_requests;
  char bodies[8][4096];
  ArkAgentHttpCompletion *held;
  volatile int holding;
  char urls[8][128];
} Model;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  CHECK(occurrences(request, API_KEY, 0) == 0, "the key never in a body");
  int i = m->n_requests++;
  if (i < 8) {
    body_into(request, m->bodies[i], sizeof m->bodies[i]);
    snprintf(m->urls[i], sizeof m->urls[i], "%s", request->url);
  }
  const char *reply = i < 8 ? m->replies[i] : REPLY("ok", "40");
  if (reply == NULL) {
    m->held = completion;
    m->holding = 1;
    return;
  }
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
}

/* ------------------------------------------------------------- item 10: helpers */

static int next_counter = 0;

static const char *next_id(void *userdata) {
  static char buf[16];
  int *n = userdata;
  snprintf(buf, sizeof buf, "%d", ++*n);
  return buf;
}

/* Always the same id: every draw collides with an active one. */
static const char *same_id(void *userdata) {
  ++*(int *)userdata;
  return "x";
}

static void helper_checks(void) {
  /* CMP-4: 4 messages, the 2nd and 3rd a paired call: keeping 2 would cut the pair. */
  const char *history =
      "[{\"role\":\"user\",\"content\":\"a\"},"
      "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"k1\",\"name\":\"t\",\"arguments\":\"{}\"}]},"
      "{\"role\":\"tool\",\"tool_call_id\":\"k1\",\"content\":\"ok\"},"
      "{\"role\":\"assistant\",\"content\":\"done\"}]";
  int64_t index = 0;
  EXPECT(arkagent_compute_safe_split_index(history, 2, &index), OK);
  CHECK(index == 1, "keep 2: the split moves before the pair");
  EXPECT(arkagent_compute_safe_split_index(history, 1, &index), OK);
  CHECK(index == 3, "keep 1: after the pair");
  EXPECT(arkagent_compute_safe_split_index(history, 4, &index), OK);
  CHECK(index == -1, "keep all: none (-1)");
  /* CORE-2 */
  int32_t paired = -1;
  EXPECT(arkagent_tool_calls_paired(history, &paired), OK);
  CHECK(paired == 1, "paired");
  EXPECT(arkagent_tool_calls_paired("[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"k1\",\"name\":\"t\",\"arguments\":\"{}\"}]}]", &paired), OK);
  CHECK(paired == 0, "an open call is not paired");
  EXPECT(arkagent_tool_calls_paired("[{\"role\":\"tool\",\"tool_call_id\":\"x\",\"content\":\"\"}]", &paired), OK);
  CHECK(paired == 0, "a result without its call is not paired");
  /* MEM-3 */
  EXPECT(arkagent_validate_episodic_memory_ids("[{\"id\":\"a\",\"summary\":\"s\",\"created_at_ms\":1,\"message_count\":1},"
                                               "{\"id\":\"b\",\"summary\":\"s\",\"created_at_ms\":2,\"message_count\":1}]"),
         OK);
  EXPECT(arkagent_validate_episodic_memory_ids("[{\"id\":\"a\",\"summary\":\"s\",\"created_at_ms\":1,\"message_count\":1},"
                                               "{\"id\":\"a\",\"summary\":\"s\",\"created_at_ms\":2,\"message_count\":1}]"),
         ARK_AGENT_RESULT_INVALID_STATE);
  char err[256];
  arkagent_last_error_message(err, sizeof err);
  CHECK(strstr(err, "\"a\"") != NULL, "the message names the repeated id");
  EXPECT(arkagent_validate_episodic_memory_ids("[{\"id\":\" \",\"summary\":\"s\",\"created_at_ms\":1,\"message_count\":1}]"),
         ARK_AGENT_RESULT_INVALID_STATE);
  EXPECT(arkagent_validate_episodic_memory_ids("[]"), OK);
  /* SUB-9, exactly as the seed. */
  char *id = NULL;
  next_counter = 0;
  EXPECT(arkagent_allocate_isolated_session_id("p", " mine ", "[\"p_w_1\"]", next_id, &next_counter, &id), OK);
  CHECK(id && strcmp(id, "mine") == 0 && next_counter == 0, "a free request is used trimmed, no id drawn");
  arkagent_string_free(id);
  EXPECT(arkagent_allocate_isolated_session_id("p", "p", "[\"p_w_1\"]", next_id, &next_counter, &id), OK);
  CHECK(id && strcmp(id, "p_w_2") == 0, "the parent's id is refused; an active candidate is drawn again");
  arkagent_string_free(id);
  next_counter = 0;
  EXPECT(arkagent_allocate_isolated_session_id("p", "mine", "[\"mine\"]", next_id, &next_counter, &id), OK);
  CHECK(id && strcmp(id, "p_w_1") == 0, "an active request is refused");
  arkagent_string_free(id);
  /* The header's bound: next_id is called at most 17 times, even when every draw collides. */
  static int same_calls = 0;
  same_calls = 0;
  EXPECT(arkagent_allocate_isolated_session_id("p", "", "[\"p_w_x\"]", same_id, &same_calls, &id), OK);
  CHECK(same_calls == 17, "next_id is called at most 17 times");
  arkagent_string_free(id);
}

/* ------------------------------------------------------------- item 12: compressor */

#define MARKER "ARCHIVED-ORIGINAL"

typedef struct {
  int calls;
  size_t last_len;
  int last_has_marker;
  int last_has_archive_key;
  char context[256];
} Squeezer;

static int messages_in(const char *state) {
  const char *messages = strstr(state, "\"messages\":[");
  const char *episodes = strstr(state, "\"episodic_memories\"");
  int n = 0;
  for (const char *p = messages; p && (p = strstr(p, "\"role\":")) != NULL && (episodes == NULL || p < episodes); p += 7) n++;
  return n;
}

static void compress_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  Squeezer *s = userdata;
  int call = s->calls++;
  s->last_len = strlen(state_json);
  s->last_has_marker = strstr(state_json, MARKER) != NULL;
  s->last_has_archive_key = strstr(state_json, "archived_messages") != NULL;
  snprintf(s->context, sizeof s->context, "%s", context_json);
  char answer[256];
  if (call == 0) {
    snprintf(answer, sizeof answer, "{\"outcome\":\"skipped\",\"reason\":\"history_too_short\"}");
  } else if (call == 1) {
    snprintf(answer, sizeof answer, "{\"outcome\":\"compressed\",\"split_index\":%d,\"summary\":\"a long text was discussed\"}",
             messages_in(state_json));
  } else {
    snprintf(answer, sizeof answer, "{\"outcome\":\"skipped\",\"reason\":\"below_threshold\"}");
  }
  EXPECT(arkagent_compress_complete(completion, answer), OK);
}

static void compressor_checks(void) {
  Model m = {0};
  for (int i = 0; i < 8; i++) m.replies[i] = REPLY("ok", "40");
  Squeezer s = {0};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &m), compress_cb, &s, 2000, &rt), OK);
  /* ~16 KB: above the threshold on its own. */
  size_t big_len = strlen(MARKER) + 600 * 27 + 1;
  char *big = malloc(big_len + 1);
  strcpy(big, MARKER " ");
  for (int i = 0; i < 600; i++) strcat(big, "lorem ipsum dolor sit amet ");
  EXPECT(arkagent_runtime_run(rt, big, NULL), OK);
  CHECK(s.calls == 2, "asked before and after the turn that reached the threshold");
  char *episodes = NULL;
  EXPECT(arkagent_runtime_episodes(rt, &episodes), OK);
  CHECK(episodes && strstr(episodes, "a long text was discussed") && strstr(episodes, MARKER), "the exchange was archived");
  arkagent_string_free(episodes);
  /* A long chat under the threshold: the compressor is never asked (it was 2x a turn). */
  for (int i = 0; i < 20; i++) {
    char input[64];
    snprintf(input, sizeof input, "short question %d", i);
    EXPECT(arkagent_runtime_run(rt, input, NULL), OK);
  }
  CHECK(s.calls == 2, "20 turns below the threshold ask nothing");
  CHECK(m.n_requests == 21, "every turn reached the model");
  /* compress_now always asks; the state it gets has no archived originals. */
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  CHECK(result && strstr(result, "\"outcome\":\"skipped\""), "skipped");
  arkagent_string_free(result);
  CHECK(s.calls == 3, "compress_now asks");
  char *exported = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &exported), OK);
  CHECK(exported && strstr(exported, MARKER), "the archive is in the exported state");
  CHECK(!s.last_has_marker && !s.last_has_archive_key, "but not in what the compressor gets");
  CHECK(exported && s.last_len + strlen(big) <= strlen(exported), "the compressor's state is smaller by at least the archive");
  printf("compressor state %zu bytes, exported state %zu bytes\n", s.last_len, exported ? strlen(exported) : 0);
  CHECK(strcmp(s.context, "{\"estimated_prompt_tokens\":null,\"force\":false}") == 0, "the context JSON");
  arkagent_string_free(exported);
  free(big);
  arkagent_runtime_free(rt);
}

/* ------------------------------------------------------------- item 11: a tool's memory */

typedef struct {
  int calls;
  ArkAgentToolCompletion *finished;
} Recall;

static void recall_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  Recall *r = userdata;
  (void)call_json;
  r->calls++;
  char *list = NULL, *found = NULL, *missing = NULL, *recalled = NULL;
  EXPECT(arkagent_tool_episodes(completion, &list), OK);
  CHECK(list && strstr(list, "\"id\":\"ep1\"") && strstr(list, "trip plan"), "the tool lists the runtime's episodes");
  EXPECT(arkagent_tool_find_episode(completion, "ep1", &found), OK);
  CHECK(found && strstr(found, "\"summary\":\"trip plan\"") && strstr(found, "Beijing"), "and finds one, originals included");
  EXPECT(arkagent_tool_find_episode(completion, "nope", &missing), OK);
  CHECK(missing && strcmp(missing, "null") == 0, "an unknown id is null");
  EXPECT(arkagent_tool_memory_store(completion, ARK_AGENT_MEMORY_TIER_WORKING, "note", "{\"v\":1}"), OK);
  EXPECT(arkagent_tool_memory_recall(completion, ARK_AGENT_MEMORY_TIER_WORKING, "note", &recalled), OK);
  CHECK(recalled && strcmp(recalled, "{\"v\":1}") == 0, "the tool reads back its namespace");
  char *ids = NULL, *stats = NULL, *ids_after = NULL;
  int32_t removed = -1, removed_again = -1;
  EXPECT(arkagent_tool_memory_store(completion, ARK_AGENT_MEMORY_TIER_WORKING, "scratch", "2"), OK);
  EXPECT(arkagent_tool_memory_ids(completion, ARK_AGENT_MEMORY_TIER_WORKING, &ids), OK);
  CHECK(ids && strcmp(ids, "[\"note\",\"scratch\"]") == 0, "the tool lists its namespace's ids");
  EXPECT(arkagent_tool_memory_stats(completion, &stats), OK);
  CHECK(stats && strstr(stats, "\"namespace\":\"global\"") && strstr(stats, "\"working\":2"), "and its namespace's stats");
  EXPECT(arkagent_tool_memory_forget(completion, ARK_AGENT_MEMORY_TIER_WORKING, "scratch", &removed), OK);
  EXPECT(arkagent_tool_memory_forget(completion, ARK_AGENT_MEMORY_TIER_WORKING, "scratch", &removed_again), OK);
  CHECK(removed == 1 && removed_again == 0, "the tool forgets an entry once");
  EXPECT(arkagent_tool_memory_ids(completion, ARK_AGENT_MEMORY_TIER_WORKING, &ids_after), OK);
  CHECK(ids_after && strcmp(ids_after, "[\"note\"]") == 0, "a forgotten entry is gone, the others stay");
  arkagent_string_free(ids);
  arkagent_string_free(stats);
  arkagent_string_free(ids_after);
  arkagent_string_free(list);
  arkagent_string_free(found);
  arkagent_string_free(missing);
  arkagent_string_free(recalled);
  EXPECT(arkagent_tool_complete(completion, "recalled", 0), OK);
  r->finished = completion;
}

static const char *EPISODE_STATE =
    "{\"version\":1,\"session_id\":\"c-parity\",\"usages\":[],\"history\":{\"messages\":[],\"episodic_memories\":["
    "{\"id\":\"ep1\",\"summary\":\"trip plan\",\"created_at_ms\":1,\"message_count\":1,"
    "\"archived_messages\":[{\"role\":\"user\",\"content\":\"Beijing in May\"}]}]}}";

static void tool_memory_checks(void) {
  Model m = {{CALL_REPLY("recall", "{}"), REPLY("done", "30")}, 0, {{0}}, NULL, 0, {{0}}};
  Recall r = {0};
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"recall\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", recall_cb, &r), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, tools, NULL, HTTP(http_cb, &m), &rt), OK);
  EXPECT(arkagent_runtime_import_state(rt, EPISODE_STATE), OK);
  EXPECT(arkagent_runtime_run(rt, "what was planned?", NULL), OK);
  CHECK(r.calls == 1, "the tool ran");
  char *out = NULL;
  EXPECT(arkagent_tool_episodes(r.finished, &out), ARK_AGENT_RESULT_ALREADY_COMPLETED);
  CHECK(out == NULL, "a finished call's memory is gone");
  /* MEM-1 find next to list, on the runtime. */
  EXPECT(arkagent_runtime_find_episode(rt, "ep1", &out), OK);
  CHECK(out && strstr(out, "\"summary\":\"trip plan\""), "find on the runtime");
  arkagent_string_free(out);
  EXPECT(arkagent_runtime_find_episode(rt, "nope", &out), OK);
  CHECK(out && strcmp(out, "null") == 0, "null when absent");
  arkagent_string_free(out);
  /* MEM-4: what the tool stored is in the runtime's namespace: ids, stats, forget. */
  EXPECT(arkagent_runtime_memory_recall(rt, ARK_AGENT_MEMORY_TIER_WORKING, "note", &out), OK);
  CHECK(out && strcmp(out, "{\"v\":1}") == 0, "the runtime reads the tool's entry");
  arkagent_string_free(out);
  EXPECT(arkagent_runtime_memory_store(rt, ARK_AGENT_MEMORY_TIER_SHORT_TERM, "fact", "\"x\""), OK);
  EXPECT(arkagent_runtime_memory_ids(rt, ARK_AGENT_MEMORY_TIER_WORKING, &out), OK);
  CHECK(out && strcmp(out, "[\"note\"]") == 0, "working ids");
  arkagent_string_free(out);
  EXPECT(arkagent_runtime_memory_stats(rt, &out), OK);
  CHECK(out && strcmp(out, "{\"namespace\":\"global\",\"short_term\":1,\"working\":1}") == 0, "stats of the global namespace");
  arkagent_string_free(out);
  int32_t removed = -1;
  EXPECT(arkagent_runtime_memory_forget(rt, ARK_AGENT_MEMORY_TIER_WORKING, "note", &removed), OK);
  CHECK(removed == 1, "forgotten");
  EXPECT(arkagent_runtime_memory_forget(rt, ARK_AGENT_MEMORY_TIER_WORKING, "note", &removed), OK);
  CHECK(removed == 0, "already gone");
  EXPECT(arkagent_runtime_memory_ids(rt, ARK_AGENT_MEMORY_TIER_WORKING, &out), OK);
  CHECK(out && strcmp(out, "[]") == 0, "no working ids left");
  arkagent_string_free(out);
  arkagent_runtime_free(rt);
  arkagent_tools_free(tools);
}

/* ------------------------------------------------------------- item 13: sub-agents */

static const char *DELEGATION_CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},"
    "\"session_id\":\"c-parent\",\"delegation\":{\"allow_clone\":true}}";

typedef struct {
  pthread_mutex_t lock;
  char services[512];
} Events;

static void event_cb(void *userdata, const char *event_json) {
  Events *e = userdata;
  if (strstr(event_json, "\"type\":\"tool_call_finished\"") == NULL) return;
  const char *service = strstr(event_json, "\"service\":");
  if (service == NULL) return;
  pthread_mutex_lock(&e->lock);
  strncat(e->services, service, 40);
  pthread_mutex_unlock(&e->lock);
}

static void sub_agent_checks(void) {
  CHECK(strcmp(ARKAGENT_DELEGATE_TASK_TOOL_NAME, "delegate_task") == 0, "DELEGATE_TASK_TOOL_NAME");
  CHECK(strcmp(ARKAGENT_CLONE_ASSIGNEE, "clone") == 0, "CLONE_ASSIGNEE");
  CHECK(strcmp(ARKAGENT_SUB_AGENT_SERVICE_ID, "arkagent.sub_agent") == 0, "SUB_AGENT_SERVICE_ID");
  /* The root delegates to a clone; the clone's model call hangs until it is forced. */
  Model m = {{CALL_REPLY("delegate_task", "{\\\"assignee\\\":\\\"clone\\\",\\\"task_description\\\":\\\"dig\\\"}"), NULL,
              REPLY("the child was stopped", "30")},
             0, {{0}}, NULL, 0, {{0}}};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(DELEGATION_CONFIG, NULL, NULL, HTTP(http_cb, &m), &rt), OK);
  Events events = {PTHREAD_MUTEX_INITIALIZER, {0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  RunArg arg = {rt, "dig into it", -1};
  pthread_t thread;
  pthread_create(&thread, NULL, run_thread, &arg);
  for (int i = 0; i < 500 && !m.holding; i++) sleep_ms(10);
  CHECK(m.holding, "the child's model call is in flight");
  char tool_name[64];
  snprintf(tool_name, sizeof tool_name, "\"name\":\"%s\"", ARKAGENT_DELEGATE_TASK_TOOL_NAME);
  CHECK(strstr(m.bodies[0], tool_name) != NULL, "the model is offered the tool by that name");
  char *agents = NULL;
  EXPECT(arkagent_runtime_sub_agents(rt, &agents), OK);
  char child[128] = {0};
  const char *active = agents ? strstr(agents, "\"active\":[{") : NULL;
  const char *at = active ? strstr(active, "\"id\":\"") : NULL;
  if (at) sscanf(at + strlen("\"id\":\""), "%127[^\"]", child);
  CHECK(child[0] != 0, "the running child is listed");
  if (child[0] == 0) fprintf(stderr, "sub_agents: %s\n", agents ? agents : "(null)");
  CHECK(agents && strstr(agents, "\"assignee\":\"" ARKAGENT_CLONE_ASSIGNEE "\""), "a clone");
  arkagent_string_free(agents);
  int32_t found = -1;
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, child, "user-stopped", &found), OK);
  CHECK(found == 1, "it was running");
  /* The host still finishes the request it holds; the library ignores it. */
  for (int i = 0; i < 500 && m.n_requests < 3; i++) sleep_ms(10);
  int late = arkagent_http_complete(m.held, 200, NULL, (const uint8_t *)"{}", 2);
  CHECK(late == OK || late == ARK_AGENT_RESULT_ALREADY_COMPLETED, "a late completion is harmless");
  pthread_join(thread, NULL);
  EXPECT(arg.result, OK);
  EXPECT(arkagent_runtime_force_complete_sub_agent(rt, child, "user-stopped", &found), OK);
  CHECK(found == 0, "no longer running");
  EXPECT(arkagent_runtime_sub_agents(rt, &agents), OK);
  CHECK(agents && strstr(agents, "\"forced_reason\":\"user-stopped\"") && strstr(agents, "\"active\":[]"),
        "ended with the reason given");
  arkagent_string_free(agents);
  pthread_mutex_lock(&events.lock);
  CHECK(strstr(events.services, "\"service\":\"" ARKAGENT_SUB_AGENT_SERVICE_ID "\"") != NULL, "the delegate result names the service id");
  pthread_mutex_unlock(&events.lock);
  /* ISO-4 cleanup(maxAgeMs): a long max age keeps the record, 0 drops it once it is older. */
  size_t cleaned = 7;
  EXPECT(arkagent_runtime_cleanup_sub_agents(rt, 3600000, &cleaned), OK);
  CHECK(cleaned == 0, "nothing an hour old");
  sleep_ms(5);
  EXPECT(arkagent_runtime_cleanup_sub_agents(rt, 0, &cleaned), OK);
  CHECK(cleaned == 1, "the ended child is dropped");
  EXPECT(arkagent_runtime_sub_agents(rt, &agents), OK);
  CHECK(agents && strstr(agents, "\"history\":[]"), "the history is empty");
  arkagent_string_free(agents);
  arkagent_runtime_free(rt);
}


/* ------------------------------------------------------------- issue 28 item 5: threshold 0 */

typedef struct {
  int calls;
  char *state; /* the last state_json, copied */
} Asked;

static void asked_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  (void)context_json;
  Asked *a = userdata;
  a->calls++;
  free(a->state);
  a->state = strdup(state_json);
  EXPECT(arkagent_compress_complete(completion, "{\"outcome\":\"skipped\",\"reason\":\"below_threshold\"}"), OK);
}

/* CMP-1: threshold 0 means on every surface what it means in the core: nothing is below
   it, so the compressor is asked before the first model call and after the turn; the
   default threshold (ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD) is not reached by a short
   turn. (0 used to stand for 64000 here only.) */
static void threshold_checks(void) {
  CHECK(ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD == 64000, "DEFAULT_TOTAL_TOKEN_THRESHOLD");
  uint64_t thresholds[2] = {0, ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD};
  int expected[2] = {2, 0};
  for (int t = 0; t < 2; t++) {
    Model m = {0};
    for (int i = 0; i < 8; i++) m.replies[i] = REPLY("ok", "40");
    Asked a = {0, NULL};
    ArkAgentRuntime *rt = NULL;
    EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &m), asked_cb, &a, thresholds[t], &rt), OK);
    EXPECT(arkagent_runtime_run(rt, "hello", NULL), OK);
    if (t == 0) {
      CHECK(a.calls == expected[t], "threshold 0: asked before the first model call and after the turn");
    } else {
      CHECK(a.calls == expected[t], "the default threshold: a short turn asks nothing");
    }
    if (a.calls != expected[t]) fprintf(stderr, "threshold %llu: %d calls\n", (unsigned long long)thresholds[t], a.calls);
    free(a.state);
    arkagent_runtime_free(rt);
  }
}

/* Compresses everything on its first call, then skips. */
static void compressing_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  (void)context_json;
  Asked *a = userdata;
  char answer[256];
  if (a->calls++ == 0) {
    snprintf(answer, sizeof answer,
             "{\"outcome\":\"compressed\",\"split_index\":%d,\"summary\":\"s\","
             "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":1,\"total_tokens\":6}}",
             messages_in(state_json));
  } else {
    snprintf(answer, sizeof answer, "{\"outcome\":\"skipped\",\"reason\":\"below_threshold\"}");
  }
  free(a->state);
  a->state = strdup(state_json);
  EXPECT(arkagent_compress_complete(completion, answer), OK);
}

/* CMP-7 with threshold 0: right after a compression the loop guard answers itself — the
   next run's pre-flight is not asked, the attempt after its turn is. */
static void threshold_loop_guard_checks(void) {
  Model m = {0};
  for (int i = 0; i < 8; i++) m.replies[i] = REPLY("ok", "40");
  Asked a = {0, NULL};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &m), compressing_cb, &a, 0, &rt), OK);
  EXPECT(arkagent_runtime_import_state(rt, "{\"version\":1,\"session_id\":\"c-parity\",\"usages\":[{\"prompt_tokens\":12,"
                                           "\"completion_tokens\":2,\"total_tokens\":14}],\"history\":{\"messages\":["
                                           "{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"hello\"}]}}"),
         OK);
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  CHECK(result && strstr(result, "\"outcome\":\"compressed\""), "compressed");
  arkagent_string_free(result);
  EXPECT(arkagent_runtime_run(rt, "next", NULL), OK);
  CHECK(a.calls == 2 && a.state && strstr(a.state, "\"content\":\"next\""), "compress_now, then only the attempt after the turn");
  free(a.state);
  arkagent_runtime_free(rt);
}

/* ------------------------------------------------------------- issue 28 item 9: state_json */

/* Removes every `,"archived_messages":[…]` (a JSON array, strings inside skipped). */
static void strip_archives(char *json) {
  const char *key = ",\"archived_messages\":";
  char *at;
  while ((at = strstr(json, key)) != NULL) {
    char *p = at + strlen(key);
    int depth = 0, in_string = 0;
    for (; *p; p++) {
      if (in_string) {
        if (*p == '\\') p++;
        else if (*p == '"') in_string = 0;
      } else if (*p == '"') {
        in_string = 1;
      } else if (*p == '[' || *p == '{') {
        depth++;
      } else if ((*p == ']' || *p == '}') && --depth == 0) {
        p++;
        break;
      }
    }
    memmove(at, p, strlen(p) + 1);
  }
}

static const char *FULL_STATE =
    "{\"version\":1,\"session_id\":\"c-parity\",\"usages\":[{\"prompt_tokens\":12,\"completion_tokens\":2,\"total_tokens\":14}],"
    "\"history\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"hello [x] {y}\"}],"
    "\"episodic_memories\":[{\"id\":\"ep1\",\"summary\":\"earlier\",\"created_at_ms\":7,\"message_count\":1,"
    "\"archived_messages\":[{\"role\":\"user\",\"content\":\"ARCHIVED ] \\\" [\"}]}]},"
    "\"token_calibration\":{\"m\":{\"ascii\":0.5,\"digits\":1.0,\"cjk\":1.0,\"other\":1.0,\"images\":1.0,\"observations\":1}}}";

/* CMP-1: the state a C compressor gets is arkagent_runtime_export_state's, byte for
   byte, each episode without its archived_messages — the calibration included. */
static void state_json_checks(void) {
  Model m = {0};
  Asked a = {0, NULL};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(CONFIG, NULL, NULL, HTTP(http_cb, &m), asked_cb, &a,
                                              ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD, &rt),
         OK);
  EXPECT(arkagent_runtime_import_state(rt, FULL_STATE), OK);
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  arkagent_string_free(result);
  char *exported = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &exported), OK);
  CHECK(exported && strstr(exported, "\"token_calibration\":{\"m\":") && strstr(exported, "ARCHIVED"), "the export has both");
  char *expected = exported ? strdup(exported) : NULL;
  if (expected) strip_archives(expected);
  CHECK(a.calls == 1 && a.state && expected && strcmp(a.state, expected) == 0, "state_json is the export without archived_messages");
  if (a.state && expected && strcmp(a.state, expected) != 0) fprintf(stderr, "state_json: %s\nexpected:   %s\n", a.state, expected);
  free(expected);
  free(a.state);
  arkagent_string_free(exported);
  arkagent_runtime_free(rt);
}

/* ------------------------------------------------------------- issue 28 item 12: seed names */

#define STR_(x) #x
#define STR(x) STR_(x)

static const char *MEMORY_CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},"
    "\"session_id\":\"c-parity\",\"compression\":{}}";

/* MEM-2: the retrieve_memory tool by its header names — offered under
   ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME, a page of ARKAGENT_DEFAULT_MEMORY_LIMIT messages when
   the model gives no limit, ARKAGENT_MAX_MEMORY_LIMIT accepted, one more refused. */
static void memory_constant_checks(void) {
  CHECK(strcmp(ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME, "retrieve_memory") == 0, "RETRIEVE_MEMORY_TOOL_NAME");
  CHECK(ARKAGENT_DEFAULT_MEMORY_LIMIT == 20 && ARKAGENT_MAX_MEMORY_LIMIT == 100, "DEFAULT_MEMORY_LIMIT, MAX_MEMORY_LIMIT");
  /* One episode of 25 archived messages. */
  char state[4096];
  int n = snprintf(state, sizeof state,
                   "{\"version\":1,\"session_id\":\"c-parity\",\"usages\":[],\"history\":{\"messages\":[],\"episodic_memories\":["
                   "{\"id\":\"ep1\",\"summary\":\"s\",\"created_at_ms\":1,\"message_count\":25,\"archived_messages\":[");
  for (int i = 0; i < 25; i++) n += snprintf(state + n, sizeof state - n, "%s{\"role\":\"user\",\"content\":\"m%d\"}", i ? "," : "", i);
  snprintf(state + n, sizeof state - n, "]}]}}");
  char calls[1024];
  snprintf(calls, sizeof calls,
           "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{"
           "\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
           "{\"id\":\"t1\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"snapshot_id\\\":\\\"ep1\\\"}\"}},"
           "{\"id\":\"t2\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"snapshot_id\\\":\\\"ep1\\\",\\\"limit\\\":%d}\"}},"
           "{\"id\":\"t3\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"{\\\"snapshot_id\\\":\\\"ep1\\\",\\\"limit\\\":%d}\"}}"
           "]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":20,\"completion_tokens\":2,\"total_tokens\":22}}",
           ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME, ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME, ARKAGENT_MAX_MEMORY_LIMIT,
           ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME, ARKAGENT_MAX_MEMORY_LIMIT + 1);
  Model m = {{calls, REPLY("read", "30")}, 0, {{0}}, NULL, 0, {{0}}};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(MEMORY_CONFIG, NULL, NULL, HTTP(http_cb, &m), &rt), OK);
  EXPECT(arkagent_runtime_import_state(rt, state), OK);
  EXPECT(arkagent_runtime_run(rt, "what was said?", NULL), OK);
  CHECK(strstr(m.bodies[0], "\"name\":\"" ARKAGENT_RETRIEVE_MEMORY_TOOL_NAME "\"") != NULL, "offered by that name");
  CHECK(strstr(m.bodies[0], "\"maximum\":" STR(ARKAGENT_MAX_MEMORY_LIMIT)) != NULL, "its limit's maximum");
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  /* t1: no limit → 20 of 25, the next page at 20; t2: the maximum → all 25; t3: refused. */
  CHECK(count(messages, "\\\"next_offset\\\":" STR(ARKAGENT_DEFAULT_MEMORY_LIMIT) ",") == 1, "a default page of DEFAULT_MEMORY_LIMIT");
  CHECK(count(messages, "\\\"content\\\":\\\"m19\\\"") == 2 && count(messages, "\\\"content\\\":\\\"m24\\\"") == 1,
        "m19 on both pages, m24 only on the page of MAX_MEMORY_LIMIT");
  CHECK(count(messages, "\\\"next_offset\\\":null") == 1, "the page of MAX_MEMORY_LIMIT is the last");
  CHECK(count(messages, "\\\"code\\\":\\\"invalid_limit\\\"") == 1, "MAX_MEMORY_LIMIT + 1 is refused");
  arkagent_string_free(messages);
  arkagent_runtime_free(rt);
}

/* ISO-3, the seed's SubAgentContext.summarize(content): the three-level summary. */
static void summarize_checks(void) {
  char *out = NULL;
  EXPECT(arkagent_summarize_result("short", &out), OK);
  CHECK(out && strcmp(out, "short") == 0, "<= 500 characters: as is");
  arkagent_string_free(out);
  char long_text[2048];
  memset(long_text, 'x', 600);
  snprintf(long_text + 600, sizeof long_text - 600, "\n## Summary\n结论：可行。\n## Details\nmore");
  EXPECT(arkagent_summarize_result(long_text, &out), OK);
  CHECK(out && strcmp(out, "## Summary\n结论：可行。") == 0, "the ## Summary section");
  arkagent_string_free(out);
  snprintf(long_text + 600, sizeof long_text - 600, "\n## Result\nok\n");
  EXPECT(arkagent_summarize_result(long_text, &out), OK);
  CHECK(out && strcmp(out, "## Result\nok") == 0, "else the ## Result section");
  arkagent_string_free(out);
  /* 600 CJK characters (1800 bytes): cut after 500 characters, never inside one. */
  char cjk[2048] = {0};
  for (int i = 0; i < 600; i++) strcat(cjk, "字");
  EXPECT(arkagent_summarize_result(cjk, &out), OK);
  char expected[2048] = {0};
  for (int i = 0; i < 500; i++) strcat(expected, "字");
  strcat(expected, "[truncated, 600 chars]");
  CHECK(out && strcmp(out, expected) == 0, "else the first 500 characters and [truncated, N chars]");
  arkagent_string_free(out);
  out = NULL;
  EXPECT(arkagent_summarize_result(NULL, &out), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_summarize_result("x", NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_summarize_result("\xff", &out), ARK_AGENT_RESULT_INVALID_UTF8);
  CHECK(out == NULL, "refused calls write nothing");
}

#define SNAPSHOT_REPLY                                                                                             \
  "{\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"<state_snapshot><overall_goal>g</overall_goal>" \
  "<key_knowledge>k</key_knowledge><file_system_state>none</file_system_state><recent_actions>a</recent_actions>"   \
  "<current_plan>p</current_plan></state_snapshot>\"},\"finish_reason\":\"stop\"}],"                               \
  "\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":30,\"total_tokens\":70}}"

/* The seed's modelConfig of the compressor: "compression":{"summarizer_model":{…}} is where
   the summary request goes (its base URL and model), through the same http client. */
static void summarizer_model_checks(void) {
  const char *config =
      "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\",\"retry\":{\"max_attempts\":1}},"
      "\"session_id\":\"c-parity\",\"compression\":{\"total_token_threshold\":100,\"keep_recent_message_count\":2,"
      "\"summarizer_model\":{\"base_url\":\"http://summarizer.test/v2\",\"api_key\":\"sk-summarizer\",\"model\":\"summary-model\"}}}";
  const char *state =
      "{\"version\":1,\"session_id\":\"c-parity\",\"usages\":[{\"prompt_tokens\":500,\"completion_tokens\":1,\"total_tokens\":501}],"
      "\"history\":{\"messages\":["
      "{\"role\":\"user\",\"content\":\"Plan a long trip through many cities and check the weather in each, in detail.\"},"
      "{\"role\":\"assistant\",\"content\":\"Sure, starting with Beijing and then going south through many cities.\"},"
      "{\"role\":\"user\",\"content\":\"Also compare the average temperatures of each city in July and in January.\"},"
      "{\"role\":\"assistant\",\"content\":\"Beijing is hot in summer and cold in winter; next I will look at Shanghai.\"},"
      "{\"role\":\"user\",\"content\":\"ok\"},{\"role\":\"assistant\",\"content\":\"done\"}]}}";
  Model m = {{SNAPSHOT_REPLY}, 0, {{0}}, NULL, 0, {{0}}};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, NULL, NULL, HTTP(http_cb, &m), &rt), OK);
  EXPECT(arkagent_runtime_import_state(rt, state), OK);
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  CHECK(result && strstr(result, "\"outcome\":\"compressed\""), "compressed");
  arkagent_string_free(result);
  CHECK(m.n_requests == 1 && strcmp(m.urls[0], "http://summarizer.test/v2/chat/completions") == 0, "the summary request goes to the summarizer's URL");
  CHECK(strstr(m.bodies[0], "\"model\":\"summary-model\"") != NULL && strstr(m.bodies[0], "state_snapshot") != NULL,
        "asking the summarizer's model for the snapshot");
  if (m.n_requests > 0) fprintf(stderr, "summarizer url: %s\n", m.urls[0]);
  /* A summarizer_model that is not a model config is refused. */
  ArkAgentRuntime *bad = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"http://h/v1\",\"api_key\":\"k\",\"model\":\"m\"},"
                              "\"compression\":{\"summarizer_model\":{\"model\":\"m\"}}}",
                              NULL, NULL, HTTP(http_cb, &m), &bad),
         ARK_AGENT_RESULT_INVALID_JSON);
  CHECK(bad == NULL, "nothing created");
  arkagent_runtime_free(rt);
}

int main(void) {
  helper_checks();
  compressor_checks();
  tool_memory_checks();
  sub_agent_checks();
  threshold_checks();
  threshold_loop_guard_checks();
  state_json_checks();
  memory_constant_checks();
  summarize_checks();
  summarizer_model_checks();
  printf("parity: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
