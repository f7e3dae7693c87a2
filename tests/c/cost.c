/*
 * COST-1 / COST-2 through the C ABI: a "price" in the model config prices every usage
 * once, by the model that made the call (a worker by its own "price"; a worker on
 * another model without one is unpriced); the run outcome, arkagent_runtime_total_usage,
 * arkagent_child_usage_summary, the sub-agent stats and the events carry cached and
 * reasoning tokens and per-currency costs that are exact sums; without a price there is
 * no "cost" anywhere; invalid prices give ARK_AGENT_RESULT_INVALID_CONFIG. Built and run
 * by tests/it/cost_c.rs. Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define MODEL(extra) "{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-cost\",\"model\":\"chat-model\"" extra "}"
#define USD_PRICE ",\"price\":{\"currency\":\"USD\",\"input_per_million\":0.27,\"cached_input_per_million\":0.07,\"output_per_million\":1.10}"

static char events[1 << 17];

static void on_event(void *userdata, const char *event_json) {
  (void)userdata;
  if (strlen(events) + strlen(event_json) + 2 < sizeof events) {
    strcat(events, event_json);
    strcat(events, "\n");
  }
}

static void reply(ArkAgentHttpCompletion *completion, const char *message, unsigned prompt, unsigned cached, unsigned completion_tokens) {
  char body[2048];
  snprintf(body, sizeof body,
           "{\"choices\":[{\"index\":0,\"message\":%s,\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":%u,"
           "\"completion_tokens\":%u,\"total_tokens\":%u,\"prompt_tokens_details\":{\"cached_tokens\":%u},"
           "\"completion_tokens_details\":{\"reasoning_tokens\":5}}}",
           message, prompt, completion_tokens, prompt + completion_tokens, cached);
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body)), OK);
}

/* The parent ("chat-model") delegates "delegate" to both workers, then answers; the
 * workers answer by model name; anything else gets a plain answer. */
static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  const char *text = "{\"role\":\"assistant\",\"content\":\"done\"}";
  if (occurrences(request, "\"model\":\"worker-model\"", 0)) {
    reply(completion, text, 300, 100, 40);
  } else if (occurrences(request, "\"model\":\"other-model\"", 0)) {
    /* Issue 40 item 7: a worker given a whole model config talks to its own endpoint. */
    CHECK(strstr(request->url, "/other/v1/chat/completions") != NULL, "the other worker's own base URL");
    reply(completion, text, 100, 0, 10);
  } else if (occurrences(request, "\"content\":\"delegate\"", 0) && !occurrences(request, "\"role\":\"tool\"", 0)) {
    reply(completion,
          "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
          "{\"id\":\"d1\",\"type\":\"function\",\"function\":{\"name\":\"delegate_task\",\"arguments\":\"{\\\"assignee\\\":\\\"researcher\\\",\\\"task_description\\\":\\\"find it\\\"}\"}},"
          "{\"id\":\"d2\",\"type\":\"function\",\"function\":{\"name\":\"delegate_task\",\"arguments\":\"{\\\"assignee\\\":\\\"other\\\",\\\"task_description\\\":\\\"check it\\\"}\"}}]}",
          1000, 600, 50);
  } else if (occurrences(request, "\"role\":\"tool\"", 0)) {
    reply(completion, text, 1200, 1000, 30);
  } else {
    reply(completion, text, 1000, 600, 50);
  }
}

static int32_t researcher(void *userdata, const char *name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)name;
  /* An invalid price is refused and leaves the worker as it was. */
  EXPECT(arkagent_worker_configure(builder, "{\"price\":{\"currency\":\"CNY\",\"input_per_million\":-2,\"cached_input_per_million\":0.5,\"output_per_million\":8}}"),
         ARK_AGENT_RESULT_INVALID_CONFIG);
  return arkagent_worker_configure(builder,
                                   "{\"model\":\"worker-model\",\"price\":{\"currency\":\"CNY\",\"input_per_million\":2,"
                                   "\"cached_input_per_million\":0.5,\"output_per_million\":8}}");
}

static int32_t other(void *userdata, const char *name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)name;
  /* A whole model config (as ArkTS's WorkerConfig.model): its own base URL, key and wire
   * format, and no price since it gives none; a bad one is refused, the worker unchanged. */
  EXPECT(arkagent_worker_configure(builder, "{\"model\":{\"base_url\":\"http://127.0.0.1:9/other/v1\",\"api_key\":\"sk-c-other\","
                                            "\"model\":\"other-model\",\"wire_format\":\"antropic\"}}"),
         ARK_AGENT_RESULT_INVALID_CONFIG);
  return arkagent_worker_configure(builder, "{\"model\":{\"base_url\":\"http://127.0.0.1:9/other/v1\",\"api_key\":\"sk-c-other\","
                                            "\"model\":\"other-model\",\"wire_format\":\"openai\",\"max_images_per_request\":2}}");
}

static char *take(ArkAgentResult (*getter)(ArkAgentRuntime *, char **), ArkAgentRuntime *rt) {
  char *out = NULL;
  EXPECT(getter(rt, &out), OK);
  return out;
}

static void priced_single_model(void) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":" MODEL(USD_PRICE) "}", NULL, NULL, HTTP(http_cb, NULL), &rt), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "one", &outcome), OK);
  /* 400 × 270 + 600 × 70 + 50 × 1100 nanos. */
  CHECK(outcome && strstr(outcome, "\"usage\":{\"prompt_tokens\":1000,\"completion_tokens\":50,\"total_tokens\":1050,\"cached_tokens\":600,"
                                   "\"reasoning_tokens\":5,\"call_count\":1,\"priced_call_count\":1,\"costs\":[{\"currency\":\"USD\",\"nanos\":205000}]}"),
        "the run outcome carries its usage and cost");
  arkagent_string_free(outcome);
  EXPECT(arkagent_runtime_run(rt, "two", NULL), OK);
  char *usages = take(arkagent_runtime_usages, rt);
  CHECK(count(usages, "\"cost\":{\"currency\":\"USD\",\"nanos\":205000}") == 2, "each usage is priced once");
  char *summed = NULL;
  EXPECT(arkagent_child_usage_summary(usages, &summed), OK);
  char *totals = take(arkagent_runtime_total_usage, rt);
  CHECK(totals && strstr(totals, "\"parent\":{\"prompt_tokens\":2000,\"completion_tokens\":100,\"total_tokens\":2100,\"cached_tokens\":1200,"
                                 "\"reasoning_tokens\":10,\"call_count\":2,\"priced_call_count\":2,\"costs\":[{\"currency\":\"USD\",\"nanos\":410000}]}"),
        "the total is the exact sum of the usages");
  CHECK(summed && totals && strstr(totals, summed), "summing the usages gives the parent total, byte for byte");
  arkagent_string_free(summed);
  arkagent_string_free(totals);
  arkagent_string_free(usages);
  arkagent_runtime_free(rt);
}

static void delegation_with_two_prices(void) {
  ArkAgentWorkers *workers = NULL;
  EXPECT(arkagent_workers_new(&workers), OK);
  EXPECT(arkagent_workers_add(workers, "researcher", "priced in CNY", researcher, NULL), OK);
  EXPECT(arkagent_workers_add(workers, "other", "another model, no price", other, NULL), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":" MODEL(USD_PRICE) ",\"max_parallel_tools\":1}", NULL, workers, HTTP(http_cb, NULL), &rt), OK);
  arkagent_workers_free(workers);
  uint64_t id = 0;
  events[0] = 0;
  EXPECT(arkagent_runtime_subscribe(rt, on_event, NULL, &id), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "delegate", &outcome), OK);
  /* Parent: 205000 + 200 × 270 + 1000 × 70 + 30 × 1100 = 362000 USD. Researcher in CNY:
   * 200 × 2000 + 100 × 500 + 40 × 8000 = 770000. The other worker: unpriced. */
  const char *both = "\"costs\":[{\"currency\":\"CNY\",\"nanos\":770000},{\"currency\":\"USD\",\"nanos\":362000}]";
  CHECK(outcome && strstr(outcome, both) && strstr(outcome, "\"call_count\":4,\"priced_call_count\":3"), "the run's costs, one sum per currency");
  char *totals = take(arkagent_runtime_total_usage, rt);
  CHECK(totals && strstr(totals, "\"children\":{\"prompt_tokens\":400,\"completion_tokens\":50,\"total_tokens\":450,\"cached_tokens\":100,"
                                 "\"reasoning_tokens\":10,\"call_count\":2,\"priced_call_count\":1,\"costs\":[{\"currency\":\"CNY\",\"nanos\":770000}]}"),
        "children: the researcher at its own price, the other worker unpriced (never the parent's price)");
  CHECK(totals && strstr(totals, both), "the total keeps one exact sum per currency");
  char *agents = take(arkagent_runtime_sub_agents, rt);
  /* This getter's objects list their keys in alphabetical order. */
  CHECK(agents && strstr(agents, "\"priced_call_count\":1,\"prompt_tokens\":400,") && count(agents, "{\"currency\":\"CNY\",\"nanos\":770000}") == 2,
        "registry stats and the researcher's result carry the usage and cost");
  CHECK(strstr(events, "\"type\":\"model_response\"") && strstr(events, "\"cost\":{\"currency\":\"USD\",\"nanos\":205000}"),
        "model_response carries the call's cost");
  CHECK(strstr(events, "\"cost\":{\"currency\":\"CNY\",\"nanos\":770000}") != NULL, "the worker's model_response is priced at its own price");
  const char *finished = strstr(events, "\"type\":\"run_finished\",\"status\":\"completed\"");
  CHECK(finished && strstr(finished, both), "run_finished carries the run's usage");
  arkagent_string_free(agents);
  arkagent_string_free(totals);
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
}

static void no_price_no_cost(void) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":" MODEL("") "}", NULL, NULL, HTTP(http_cb, NULL), &rt), OK);
  uint64_t id = 0;
  events[0] = 0;
  EXPECT(arkagent_runtime_subscribe(rt, on_event, NULL, &id), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "one", &outcome), OK);
  char *usages = take(arkagent_runtime_usages, rt);
  char *totals = take(arkagent_runtime_total_usage, rt);
  CHECK(outcome && !strstr(outcome, "cost") && strstr(outcome, "\"cached_tokens\":600,\"reasoning_tokens\":5"), "no price: no cost in the outcome, tokens all the same");
  CHECK(usages && !strstr(usages, "cost"), "no price: no cost on the usages (never 0)");
  CHECK(totals && !strstr(totals, "cost") && strstr(totals, "\"priced_call_count\":0"), "no price: no costs in the totals");
  CHECK(!strstr(events, "cost"), "no price: no cost in any event");
  arkagent_string_free(totals);
  arkagent_string_free(usages);
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
}

static void invalid_prices(void) {
  const char *bad[] = {
      "{\"model\":" MODEL(",\"price\":{\"currency\":\"\",\"input_per_million\":1,\"cached_input_per_million\":1,\"output_per_million\":1}") "}",
      "{\"model\":" MODEL(",\"price\":{\"currency\":\"U S D\",\"input_per_million\":1,\"cached_input_per_million\":1,\"output_per_million\":1}") "}",
      "{\"model\":" MODEL(",\"price\":{\"currency\":\"ABCDEFGHIJKLMNOPQ\",\"input_per_million\":1,\"cached_input_per_million\":1,\"output_per_million\":1}") "}",
      "{\"model\":" MODEL(",\"price\":{\"currency\":\"USD\",\"input_per_million\":-1,\"cached_input_per_million\":1,\"output_per_million\":1}") "}",
      "{\"model\":" MODEL(",\"price\":{\"currency\":\"USD\",\"input_per_million\":1,\"cached_input_per_million\":1,\"output_per_million\":2e9}") "}",
      "{\"model\":" MODEL(",\"price\":{\"currency\":\"USD\",\"input_per_million\":1,\"cached_input_per_million\":1,\"output_per_million\":1,\"cache_write_per_million\":-1}") "}",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ArkAgentRuntime *rt = NULL;
    EXPECT(arkagent_runtime_new(bad[i], NULL, NULL, HTTP(http_cb, NULL), &rt), ARK_AGENT_RESULT_INVALID_CONFIG);
    CHECK(rt == NULL, "no runtime for an invalid price");
  }
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":" MODEL(",\"price\":{\"currency\":\"USD\",\"input\":1}") "}", NULL, NULL, HTTP(http_cb, NULL), &rt),
         ARK_AGENT_RESULT_INVALID_JSON);
}

static void summing_usages_by_currency(void) {
  const char *usages =
      "[{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11,\"cached_tokens\":4,\"cost\":{\"currency\":\"USD\",\"nanos\":5}},"
      "{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11,\"cost\":{\"currency\":\"CNY\",\"nanos\":7}},"
      "{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11,\"reasoning_tokens\":1,\"cost\":{\"currency\":\"USD\",\"nanos\":6}},"
      "{\"prompt_tokens\":10,\"completion_tokens\":1,\"total_tokens\":11}]";
  char *out = NULL;
  EXPECT(arkagent_child_usage_summary(usages, &out), OK);
  CHECK(out && strcmp(out, "{\"prompt_tokens\":40,\"completion_tokens\":4,\"total_tokens\":44,\"cached_tokens\":4,\"reasoning_tokens\":1,"
                           "\"call_count\":4,\"priced_call_count\":3,\"costs\":[{\"currency\":\"CNY\",\"nanos\":7},{\"currency\":\"USD\",\"nanos\":11}]}") == 0,
        "costs summed per currency, sorted, never added across currencies");
  if (out) printf("summed: %s\n", out);
  arkagent_string_free(out);
}

int main(void) {
  priced_single_model();
  delegation_with_two_prices();
  no_price_no_cost();
  invalid_prices();
  summing_usages_by_currency();
  arkagent_shutdown();
  printf("cost: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
