/*
 * COST-4 through the C ABI: runs sessions and writes every request body the HTTP callback
 * receives, byte for byte, to a record file that tests/it/cost_c.rs checks with the one
 * prefix comparison (tests/it/prefix.rs). Records, one per line: "B <body>" (a main
 * request; a JSON body has no raw newline), "S <body>" (a summarizer request: the
 * conversation's bytes plus the compression instruction, COST-3, or a transcript chunk),
 * "C" (a compression was committed), "R <n>" (run n starts), "L <label>". Modes:
 *   prefix session <file>                      24 runs, compression on
 *   prefix import  <file> <k>                  runs 0..k, export; run k (label reference);
 *                                              a new runtime imports the export, run k
 *                                              (label imported)
 *   prefix store   <file> <db> <from> <to> [hang]  runs from..to on the store; with hang,
 *                                              prints READY and waits to be killed
 *   prefix plain   <file> <n>                  runs 0..n, no store
 * The model answers from the request alone: "task N" gets the tool call w-N, then a text.
 * Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

static FILE *records;

static void record(const char *kind, const char *text, size_t len) {
  fputs(kind, records);
  if (text != NULL) {
    fputc(' ', records);
    fwrite(text, 1, len, records);
  }
  fputc('\n', records);
  fflush(records);
}

/* Reports a quarter of the request's bytes as its prompt tokens. */
static void reply(ArkAgentHttpCompletion *completion, const char *message, size_t request_len) {
  char body[4096];
  unsigned prompt = (unsigned)(request_len / 4);
  snprintf(body, sizeof body,
           "{\"choices\":[{\"index\":0,\"message\":%s,\"finish_reason\":\"stop\"}],"
           "\"usage\":{\"prompt_tokens\":%u,\"completion_tokens\":9,\"total_tokens\":%u}}",
           message, prompt, prompt + 9);
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body)), OK);
}

/* The first line of the instruction a summarizer request on the conversation's bytes ends with. */
#define COMPRESSION_MARK "[Context compression: this message is not part of the conversation.]"

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  char *body = body_dup(request);
  int summary = strstr(body, "<conversation>") != NULL || strstr(body, COMPRESSION_MARK) != NULL;
  record(summary ? "S" : "B", body, request->body_len);
  char message[1024];
  if (summary) {
    reply(completion,
          "{\"role\":\"assistant\",\"content\":\"<state_snapshot><overall_goal>weather</overall_goal><key_knowledge>k</key_knowledge>"
          "<file_system_state>none</file_system_state><recent_actions>looked up</recent_actions><current_plan>go on</current_plan>"
          "</state_snapshot>\"}",
          request->body_len);
    free(body);
    return;
  }
  const char *needle = "\"role\":\"user\",\"content\":\"task ";
  char *last = NULL;
  for (char *p = strstr(body, needle); p != NULL; p = strstr(p + 1, needle)) last = p;
  int n = last ? atoi(last + strlen(needle)) : -1;
  if (last && strstr(last, "\"role\":\"tool\"") == NULL) {
    snprintf(message, sizeof message,
             "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"w-%d\",\"type\":\"function\","
             "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"city %d\\\"}\"}}]}",
             n, n);
  } else {
    snprintf(message, sizeof message, "{\"role\":\"assistant\",\"content\":\"In city %d it is sunny, 21 degrees, light wind.\"}", n);
  }
  reply(completion, message, request->body_len);
  free(body);
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  (void)call_json;
  EXPECT(arkagent_tool_complete(completion, "sunny", 0), OK);
}

static void on_event(void *userdata, const char *event_json) {
  (void)userdata;
  if (strstr(event_json, "\"type\":\"compression\"") && strstr(event_json, "\"outcome\":\"compressed\"")) record("C", NULL, 0);
}

static ArkAgentRuntime *runtime(int compress) {
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools,
                                 "{\"name\":\"get_weather\",\"description\":\"Weather for a city\",\"parameters\":{\"type\":\"object\","
                                 "\"properties\":{\"city\":{\"type\":\"string\"}}}}",
                                 tool_cb, NULL),
         OK);
  const char *config = compress
      ? "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-prefix\",\"model\":\"prefix-model\"},"
        "\"system_prompt\":\"You are a weather assistant. Answer briefly.\",\"session_id\":\"prefix\","
        "\"compression\":{\"total_token_threshold\":900,\"keep_recent_message_count\":4,\"min_messages_to_summarize\":2}}"
      : "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-prefix\",\"model\":\"prefix-model\"},"
        "\"system_prompt\":\"You are a weather assistant. Answer briefly.\",\"session_id\":\"prefix\"}";
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, NULL), &rt), OK);
  arkagent_tools_free(tools);
  uint64_t id = 0;
  EXPECT(arkagent_runtime_subscribe(rt, on_event, NULL, &id), OK);
  return rt;
}

static void run(ArkAgentRuntime *rt, int n) {
  char text[32];
  snprintf(text, sizeof text, "%d", n);
  record("R", text, strlen(text));
  snprintf(text, sizeof text, "task %d", n);
  EXPECT(arkagent_runtime_run(rt, text, NULL), OK);
}

static void import_mode(int k) {
  ArkAgentRuntime *a = runtime(0);
  for (int i = 0; i < k; i++) run(a, i);
  char *exported = NULL;
  EXPECT(arkagent_runtime_export_state(a, &exported), OK);
  record("L", "reference", strlen("reference"));
  run(a, k);
  ArkAgentRuntime *b = runtime(0);
  EXPECT(arkagent_runtime_import_state(b, exported), OK);
  record("L", "imported", strlen("imported"));
  run(b, k);
  arkagent_string_free(exported);
  arkagent_runtime_free(a);
  arkagent_runtime_free(b);
}

static void store_mode(const char *db, int from, int to, int hang) {
  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(db, &store), OK);
  ArkAgentRuntime *rt = runtime(0);
  EXPECT(arkagent_runtime_attach_store(rt, store, "prefix"), OK);
  for (int i = from; i < to; i++) run(rt, i);
  if (hang) {
    printf("READY\n");
    fflush(stdout);
    sleep(600); /* SIGKILLed by the test */
  }
  arkagent_runtime_free(rt);
  arkagent_store_free(store);
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  records = fopen(argv[2], "w");
  if (records == NULL) return 2;
  if (strcmp(argv[1], "session") == 0) {
    ArkAgentRuntime *rt = runtime(1);
    for (int i = 0; i < 24; i++) run(rt, i);
    arkagent_runtime_free(rt);
  } else if (strcmp(argv[1], "import") == 0 && argc == 4) {
    import_mode(atoi(argv[3]));
  } else if (strcmp(argv[1], "store") == 0 && argc >= 6) {
    store_mode(argv[3], atoi(argv[4]), atoi(argv[5]), argc == 7);
  } else if (strcmp(argv[1], "plain") == 0 && argc == 4) {
    ArkAgentRuntime *rt = runtime(0);
    for (int i = 0; i < atoi(argv[3]); i++) run(rt, i);
    arkagent_runtime_free(rt);
  } else {
    return 2;
  }
  fclose(records);
  arkagent_shutdown();
  printf("prefix: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
