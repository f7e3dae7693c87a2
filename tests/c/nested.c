/*
 * SUB-3/ISO-4 through the C ABI, nested delegation: with the default concurrency cap (2,
 * counted per depth of the tree) a chain root → child → grandchild → great-grandchild
 * reaches "max_depth":3; and with "max_depth":2 the registry's stats count each model
 * call once ("total_tokens" 800: the child's 400 plus the grandchild's 400, though the
 * child's own record covers its subtree). Built and run by tests/it/sub_nested.rs.
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
  arkagent_shutdown();
  printf("nested: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
