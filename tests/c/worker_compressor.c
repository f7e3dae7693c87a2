/*
 * CMP-1/SUB-1 through the C ABI: a C custom compressor (arkagent_runtime_new_with_compressor)
 * is inherited by a delegated "clone" child; a named worker has one only when its
 * definition gives it one (issue 28 item 6: its factory calls
 * arkagent_worker_set_compressor). The root delegates to the named workers "w" (given
 * none) and "v" (given its own) and to "clone"; each compressor records whose state it
 * was called with. Built and run by tests/it/sub_nested.rs. Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define TEXT(text)                                                                                      \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{"           \
  "\"prompt_tokens\":30,\"completion_tokens\":2,\"total_tokens\":32}}"

#define DELEGATE(id, who, task)                                                                            \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{"   \
  "\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"" id "\",\"type\":\"function\","      \
  "\"function\":{\"name\":\"delegate_task\",\"arguments\":\"{\\\"assignee\\\":\\\"" who "\\\","            \
  "\\\"task_description\\\":\\\"" task "\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{"        \
  "\"prompt_tokens\":30,\"completion_tokens\":2,\"total_tokens\":32}}"

static char body[65536];

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  body_into(request, body, sizeof body);
  const char *reply;
  int results = count(body, "\"role\":\"tool\"");
  if (strstr(body, "You are the named worker.") != NULL) {
    reply = TEXT("named done");
  } else if (strstr(body, "You are the worker with a compressor.") != NULL) {
    reply = TEXT("own done");
  } else if (strstr(body, "\"name\":\"delegate_task\",\"description\"") == NULL) {
    reply = TEXT("clone done"); /* a worker: not offered delegate_task */
  } else if (results == 0) {
    reply = DELEGATE("d1", "w", "task of the named worker");
  } else if (results == 1) {
    reply = DELEGATE("d2", "clone", "task of the clone");
  } else if (results == 2) {
    reply = DELEGATE("d3", "v", "task of the worker with a compressor");
  } else {
    reply = TEXT("root done");
  }
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
}

typedef struct {
  int root, named, clone, own;
} Calls;

static void compress_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  (void)context_json;
  Calls *calls = userdata;
  /* A child's own task is its user message; the root only has it in call arguments. */
  if (strstr(state_json, "\"content\":\"task of the named worker") != NULL) {
    calls->named++;
  } else if (strstr(state_json, "\"content\":\"task of the clone") != NULL) {
    calls->clone++;
  } else if (strstr(state_json, "\"content\":\"task of the worker with a compressor") != NULL) {
    calls->own++;
  } else {
    calls->root++;
  }
  EXPECT(arkagent_compress_complete(completion, "{\"outcome\":\"skipped\",\"reason\":\"below_threshold\"}"), OK);
}

static int32_t factory(void *userdata, const char *name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)name;
  return arkagent_worker_configure(builder, "{\"system_prompt\":\"You are the named worker.\"}");
}

static ArkAgentWorkerBuilder *kept_builder = NULL;

/* The definition of "v" gives its worker its own compressor (threshold 0: asked on every
   attempt), counted in `userdata`. */
static int32_t factory_with_compressor(void *userdata, const char *name, ArkAgentWorkerBuilder *builder) {
  (void)name;
  EXPECT(arkagent_worker_set_compressor(builder, NULL, userdata, 0), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_worker_set_compressor(NULL, compress_cb, userdata, 0), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_worker_set_compressor(builder, compress_cb, userdata, 0), OK);
  kept_builder = builder;
  return arkagent_worker_configure(builder, "{\"system_prompt\":\"You are the worker with a compressor.\"}");
}

int main(void) {
  ArkAgentWorkers *workers = NULL;
  EXPECT(arkagent_workers_new(&workers), OK);
  Calls calls = {0, 0, 0, 0};
  Calls worker_calls = {0, 0, 0, 0};
  EXPECT(arkagent_workers_add(workers, "w", "a named worker", factory, NULL), OK);
  EXPECT(arkagent_workers_add(workers, "v", "a named worker with its own compressor", factory_with_compressor, &worker_calls), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(
             "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-wc\",\"model\":\"m\"},"
             "\"delegation\":{\"allow_clone\":true}}",
             /* threshold 1: a compression is always due, so every runtime that has the
                compressor is asked (it is asked only when due, PERF-3). */
             NULL, workers, HTTP(http_cb, NULL), compress_cb, &calls, 1, &rt),
         OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "start", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "root done") != NULL, "the run finished");
  arkagent_string_free(outcome);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages != NULL && strstr(messages, "named done") != NULL && strstr(messages, "clone done") != NULL &&
            strstr(messages, "own done") != NULL,
        "every child answered");
  arkagent_string_free(messages);
  CHECK(calls.root > 0, "the root's compressor was asked");
  CHECK(calls.clone > 0, "a clone child inherits the C compressor");
  CHECK(calls.named == 0, "a named worker does not inherit the C compressor");
  CHECK(calls.own == 0, "nor does one with its own");
  CHECK(worker_calls.own > 0, "a named worker's own compressor is asked with its state");
  CHECK(worker_calls.root + worker_calls.named + worker_calls.clone == 0, "and only by that worker");
  EXPECT(arkagent_worker_set_compressor(kept_builder, compress_cb, &worker_calls, 0), ARK_AGENT_RESULT_INVALID_HANDLE);
  printf("calls: root %d, clone %d, named %d; the worker's own: %d\n", calls.root, calls.clone, calls.named, worker_calls.own);
  arkagent_runtime_free(rt);
  arkagent_workers_free(workers);
  arkagent_shutdown();
  printf("worker_compressor: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
