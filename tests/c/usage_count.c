/*
 * SUB-6 through the C ABI: a model call whose provider reported no usage is a call made:
 * arkagent_runtime_total_usage counts it ("call_count"), the usages hold it as a zero
 * usage with source "unreported", and arkagent_child_usage_summary over those usages
 * agrees. Built and run by tests/it/sub_nested.rs (linked statically by bindings/c/tests/c_abi/main.rs). Prints
 * "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

static int calls = 0;

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)request;
  calls++;
  const char *body = calls == 1
      ? "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"counted\"},\"finish_reason\":\"stop\"}],"
        "\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":2,\"total_tokens\":32}}"
      : "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"no usage\"},\"finish_reason\":\"stop\"}]}";
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body)), OK);
}

int main(void) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-usage\",\"model\":\"m\"}}",
                              NULL, NULL, HTTP(http_cb, NULL), &rt),
         OK);
  EXPECT(arkagent_runtime_run(rt, "one", NULL), OK);
  EXPECT(arkagent_runtime_run(rt, "two", NULL), OK);
  char *totals = NULL;
  EXPECT(arkagent_runtime_total_usage(rt, &totals), OK);
  CHECK(totals != NULL && strstr(totals, "\"parent\":{\"prompt_tokens\":30,\"completion_tokens\":2,\"total_tokens\":32,\"cached_tokens\":0,\"reasoning_tokens\":0,\"call_count\":2,\"priced_call_count\":0}") != NULL,
        "both calls are counted, tokens as reported");
  if (totals != NULL) printf("totals: %s\n", totals);
  char *usages = NULL;
  EXPECT(arkagent_runtime_usages(rt, &usages), OK);
  CHECK(usages != NULL && count(usages, "\"source\":\"unreported\"") == 1, "the silent call is recorded as unreported");
  char *summed = NULL;
  EXPECT(arkagent_child_usage_summary(usages, &summed), OK);
  CHECK(summed != NULL && strstr(summed, "\"call_count\":2") != NULL, "summing the usages agrees");
  arkagent_string_free(summed);
  arkagent_string_free(usages);
  arkagent_string_free(totals);
  arkagent_runtime_free(rt);
  arkagent_shutdown();
  printf("usage_count: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
