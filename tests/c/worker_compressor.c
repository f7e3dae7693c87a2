/*
 * CMP-1/SUB-1 through the C ABI: a C custom compressor (arkagent_runtime_new_with_compressor)
 * is inherited by a delegated "clone" child, never by a named worker (the header's
 * promise). The root delegates to the named worker "w" and to "clone"; the compressor
 * records whose state it was called with. Built and run by tests/it/sub_nested.rs. Prints
 * "N passed, M failed".
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
  } else if (strstr(body, "\"name\":\"delegate_task\",\"description\"") == NULL) {
    reply = TEXT("clone done"); /* a worker: not offered delegate_task */
  } else if (results == 0) {
    reply = DELEGATE("d1", "w", "task of the named worker");
  } else if (results == 1) {
    reply = DELEGATE("d2", "clone", "task of the clone");
  } else {
    reply = TEXT("root done");
  }
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
}

typedef struct {
  int root, named, clone;
} Calls;

static void compress_cb(void *userdata, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  (void)context_json;
  Calls *calls = userdata;
  /* A child's own task is its user message; the root only has it in call arguments. */
  if (strstr(state_json, "\"content\":\"task of the named worker") != NULL) {
    calls->named++;
  } else if (strstr(state_json, "\"content\":\"task of the clone") != NULL) {
    calls->clone++;
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

int main(void) {
  ArkAgentWorkers *workers = NULL;
  EXPECT(arkagent_workers_new(&workers), OK);
  EXPECT(arkagent_workers_add(workers, "w", "a named worker", factory, NULL), OK);
  Calls calls = {0, 0, 0};
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
  CHECK(messages != NULL && strstr(messages, "named done") != NULL && strstr(messages, "clone done") != NULL,
        "both children answered");
  arkagent_string_free(messages);
  CHECK(calls.root > 0, "the root's compressor was asked");
  CHECK(calls.clone > 0, "a clone child inherits the C compressor");
  CHECK(calls.named == 0, "a named worker does not inherit the C compressor");
  printf("calls: root %d, clone %d, named %d\n", calls.root, calls.clone, calls.named);
  arkagent_runtime_free(rt);
  arkagent_workers_free(workers);
  arkagent_shutdown();
  printf("worker_compressor: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
