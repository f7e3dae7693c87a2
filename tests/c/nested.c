/*
 * SUB-3/ISO-4 through the C ABI, nested delegation: with the default concurrency cap (2,
 * counted per depth of the tree) a chain root → child → grandchild → great-grandchild
 * reaches "max_depth":3; and with "max_depth":2 the registry's stats count each model
 * call once ("total_tokens" 800: the child's 400 plus the grandchild's 400, though the
 * child's own record covers its subtree); a worker rejected after its factory succeeded
 * consumes no delegation. Built and run by tests/it/sub_nested.rs.
 * Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define TEXT(text, total)                                                                               \
  "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" text "\"},"            \
  "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":" #total ",\"completion_tokens\":0,"        \
  "\"total_tokens\":" #total "}}"

#define DELEGATE(task, total)                                                                             \
  "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"     \
  "\"id\":\"d\",\"type\":\"function\",\"function\":{\"name\":\"delegate_task\",\"arguments\":"           \
  "\"{\\\"assignee\\\":\\\"clone\\\",\\\"task_description\\\":\\\"" task "\\\"}\"}}]},"                  \
  "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":" #total ",\"completion_tokens\":0,"   \
  "\"total_tokens\":" #total "}}"

static char body[262144];

/* Each level's own task is a user message of its request (deeper levels see the
 * shallower ones' too, in their context slice): the deepest one decides. */
static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  body_into(request, body, sizeof body);
  int first = strstr(body, "\"role\":\"tool\"") == NULL;
  const char *reply;
  if (strstr(body, "\"content\":\"level three") != NULL) {
    reply = TEXT("three done", 500);
  } else if (strstr(body, "\"content\":\"level two") != NULL) {
    reply = first ? DELEGATE("level three", 200) : TEXT("two done", 200);
  } else if (strstr(body, "\"content\":\"level one") != NULL) {
    reply = first ? DELEGATE("level two", 200) : TEXT("one done", 200);
  } else {
    reply = first ? DELEGATE("level one", 5) : TEXT("root done", 5);
  }
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
}

/* SUB-3: the root delegates to "clashing" (rejected after its factory succeeded), then to
 * "clone"; the clone child answers its task. */
static void budget_http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  body_into(request, body, sizeof body);
  int results = count(body, "\"role\":\"tool\"");
  const char *reply;
  if (strstr(body, "\"content\":\"real work") != NULL) {
    reply = TEXT("result of real work", 10);
  } else if (results == 0) {
    reply = "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"
            "\"id\":\"d1\",\"type\":\"function\",\"function\":{\"name\":\"delegate_task\",\"arguments\":"
            "\"{\\\"assignee\\\":\\\"clashing\\\",\\\"task_description\\\":\\\"t\\\"}\"}}]},"
            "\"finish_reason\":\"tool_calls\"}]}";
  } else if (results == 1) {
    reply = DELEGATE("real work", 10);
  } else {
    reply = TEXT("root done", 5);
  }
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
}

static void unused_tool(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  (void)call_json;
  arkagent_tool_complete(completion, "unused", 0);
}

/* Registers its own retrieve_memory: with compression on, the worker cannot be built. */
static int32_t clashing_factory(void *userdata, const char *name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)name;
  return arkagent_worker_register_tool(
      builder, "{\"name\":\"retrieve_memory\",\"description\":\"mine\",\"parameters\":{\"type\":\"object\"}}",
      unused_tool, NULL);
}

static char *run_tree(const char *config) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, NULL, NULL, HTTP(http_cb, NULL), &rt), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "go", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "root done") != NULL, "the root finished");
  arkagent_string_free(outcome);
  char *sub_agents = NULL;
  EXPECT(arkagent_runtime_sub_agents(rt, &sub_agents), OK);
  arkagent_runtime_free(rt);
  return sub_agents;
}

int main(void) {
  /* max_depth 3 with the default concurrency cap: every level runs. */
  char *deep = run_tree("{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-nested\",\"model\":\"m\"},"
                        "\"delegation\":{\"allow_clone\":true,\"policy\":{\"max_depth\":3}}}");
  CHECK(deep != NULL && count(deep, "\"status\":\"completed\"") == 3, "three levels of sub-agents completed");
  CHECK(deep != NULL && strstr(deep, "subagent_concurrent_budget_exceeded") == NULL, "none refused for concurrency");
  arkagent_string_free(deep);

  /* max_depth 2: the grandchild is a worker; its delegate_task call is refused, so the
   * child's calls cost 200 + 200 and the grandchild's 200 + 200: 800 calls' worth, once. */
  char *tree = run_tree("{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-nested\",\"model\":\"m\"},"
                        "\"delegation\":{\"allow_clone\":true,\"policy\":{\"max_depth\":2}}}");
  CHECK(tree != NULL && strstr(tree, "\"total_tokens\":800}") != NULL, "stats count each call once");
  if (tree != NULL) printf("%s\n", strstr(tree, "\"stats\""));
  arkagent_string_free(tree);

  /* A worker rejected after its factory succeeded consumes no delegation. */
  ArkAgentWorkers *workers = NULL;
  EXPECT(arkagent_workers_new(&workers), OK);
  EXPECT(arkagent_workers_add(workers, "clashing", "registers retrieve_memory", clashing_factory, NULL), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-nested\",\"model\":\"m\"},"
                              "\"compression\":{},\"delegation\":{\"allow_clone\":true,\"policy\":{\"max_delegations_per_run\":1}}}",
                              NULL, workers, HTTP(budget_http_cb, NULL), &rt),
         OK);
  EXPECT(arkagent_runtime_run(rt, "go", NULL), OK);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages != NULL && strstr(messages, "tool_name_duplicate") != NULL, "the clashing worker was rejected");
  CHECK(messages != NULL && strstr(messages, "result of real work") != NULL, "the run's one delegation was still available");
  arkagent_string_free(messages);
  arkagent_runtime_free(rt);
  arkagent_workers_free(workers);
  arkagent_shutdown();
  printf("nested: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
