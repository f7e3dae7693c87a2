/*
 * THINK-1..THINK-5 through the C ABI: tool loops against strict thinking providers
 * answering through the host HTTP callback as DeepSeek V4 and Claude do with thinking on,
 * whole and streamed:
 * - DeepSeek (Chat Completions): every assistant message with tool calls must carry the
 *   reasoning_content the provider gave it, exactly ("" included), else HTTP 400 with
 *   DeepSeek's error body;
 * - Anthropic: the latest assistant turn with tool_use must start with its thinking and
 *   redacted_thinking blocks exactly as given, else 400 "Expected `thinking`…".
 * Each run calls `weather` twice, then answers. Also: export/import continuing an open tool
 * cycle, "thinking":"off", the thinking codes at runtime_new, reasoning tokens in usages
 * and reasoning_delta events. Built and run by tests/it/thinking_c.rs. Prints
 * "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-think-c-SECRET-2718281828"
#define MAX_ANSWERS 64

typedef struct {
  int anthropic;
  int stream;
  int rounds;
  int thinking_off_seen;
  int n;                       /* answers given */
  int calls[MAX_ANSWERS];      /* answer n called a tool */
  int gave[MAX_ANSWERS];       /* answer n carried reasoning (thinking was on) */
  int refused;
  int reasoning_in_bodies;     /* bodies that carried reasoning back */
  char last_error[256];
} Provider;

static void reasoning_of(int n, char *out, size_t cap) {
  if (n % 3 == 2) out[0] = 0;
  else snprintf(out, cap, "Step %d: the user wants the weather, call the tool.", n);
}

/* The JSON of answer n's Anthropic reasoning blocks, as sent back. */
static void blocks_of(int n, char *out, size_t cap) {
  char r[128];
  reasoning_of(n, r, sizeof r);
  int w = snprintf(out, cap, "{\"type\":\"thinking\",\"thinking\":\"%s\",\"signature\":\"EqQB-c-%d+sig==\"}", r, n);
  if (n % 2 == 1) snprintf(out + w, cap - (size_t)w, ",{\"type\":\"redacted_thinking\",\"data\":\"EmwK-c-%d==\"}", n);
}

/* Counts the assistant tool-call answers since the last user text. */
static int rounds_in(const Provider *p, const char *body) {
  const char *user = NULL;
  const char *at = body;
  const char *needle = p->anthropic ? "{\"type\":\"text\",\"text\":\"" : "{\"role\":\"user\"";
  /* Anthropic: a user text block (the assistant's own text blocks come after tool_use or
     before it in its turn; ours has none); Chat: a user message. */
  while ((at = strstr(at, needle)) != NULL) user = at++;
  int rounds = 0;
  for (const char *q = user ? user : body; (q = strstr(q, "\"id\":\"call_")) != NULL; q++) rounds++;
  return rounds;
}

/* NULL when the body passes the provider's rule, else its error message. */
static const char *check(Provider *p, const char *body) {
  static char message[256];
  int last_call = -1;
  for (int k = 0; k < p->n; k++) {
    char id[32];
    snprintf(id, sizeof id, "\"id\":\"call_%d\"", k);
    if (p->calls[k] && strstr(body, id)) last_call = k;
  }
  for (int k = 0; k < p->n; k++) {
    if (!p->calls[k] || !p->gave[k]) continue;
    char id[32], want[512];
    snprintf(id, sizeof id, "\"id\":\"call_%d\"", k);
    if (!strstr(body, id)) continue;
    if (p->anthropic) {
      char blocks[384];
      blocks_of(k, blocks, sizeof blocks);
      snprintf(want, sizeof want, "%s,{\"type\":\"tool_use\",\"id\":\"call_%d\"", blocks, k);
      if (k == last_call && !strstr(body, want)) {
        snprintf(message, sizeof message, "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`");
        return message;
      }
    } else {
      char r[128];
      reasoning_of(k, r, sizeof r);
      snprintf(want, sizeof want, "\"reasoning_content\":\"%s\",\"tool_calls\":[{\"id\":\"call_%d\"", r, k);
      if (!strstr(body, want)) return "The reasoning_content in the thinking mode must be passed back to the API.";
    }
  }
  return NULL;
}

/* Anthropic's events of answer n, one content block after the other. */
static void anthropic_events(char *out, size_t cap, const char *text, int call, const char *reasoning, int n) {
  int w = snprintf(out, cap, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg\",\"role\":\"assistant\",\"content\":[],"
                   "\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n");
  int index = 0;
#define EV(...) w += snprintf(out + w, cap - (size_t)w, __VA_ARGS__)
  if (reasoning) {
    EV("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n", index);
    if (reasoning[0]) EV("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"%s\"}}\n\n", index, reasoning);
    EV("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQB-c-%d+sig==\"}}\n\n", index, n);
    EV("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", index);
    index++;
    if (n % 2 == 1) {
      EV("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwK-c-%d==\"}}\n\n", index, n);
      EV("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", index);
      index++;
    }
  }
  if (call) {
    EV("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_%d\",\"name\":\"weather\",\"input\":{}}}\n\n", index, n);
    EV("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\"}}\n\n", index);
    EV("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}}\n\n", index);
  } else {
    EV("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n", index);
    EV("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"text_delta\",\"text\":\"%s\"}}\n\n", index, text);
  }
  EV("event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d}\n\n", index);
  EV("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\"},\"usage\":{\"output_tokens\":20,"
     "\"output_tokens_details\":{\"thinking_tokens\":%d}}}\n\n", call ? "tool_use" : "end_turn", reasoning ? 7 : 0);
  EV("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
#undef EV
}

static void respond(Provider *p, ArkAgentHttpCompletion *completion, const char *text, int call, const char *reasoning, int n) {
  char out[8192];
  int r_tokens = reasoning ? 7 : 0;
  if (!p->anthropic) {
    char msg[1024];
    int w = snprintf(msg, sizeof msg, "{\"role\":\"assistant\"");
    if (reasoning) w += snprintf(msg + w, sizeof msg - (size_t)w, ",\"reasoning_content\":\"%s\"", reasoning);
    if (call)
      snprintf(msg + w, sizeof msg - (size_t)w, ",\"content\":null,\"tool_calls\":[{%s\"id\":\"call_%d\",\"type\":\"function\",\"function\":{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]}",
               p->stream ? "\"index\":0," : "", n);
    else snprintf(msg + w, sizeof msg - (size_t)w, ",\"content\":\"%s\"}", text);
    if (!p->stream) {
      snprintf(out, sizeof out, "{\"choices\":[{\"index\":0,\"message\":%s,\"finish_reason\":\"%s\"}],"
               "\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120,\"completion_tokens_details\":{\"reasoning_tokens\":%d}}}",
               msg, call ? "tool_calls" : "stop", r_tokens);
    } else {
      /* The message as one delta, then the finish and usage chunks. */
      snprintf(out, sizeof out, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n"
               "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}]}\n\n"
               "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":20,\"total_tokens\":120,\"completion_tokens_details\":{\"reasoning_tokens\":%d}}}\n\n"
               "data: [DONE]\n\n", msg, call ? "tool_calls" : "stop", r_tokens);
    }
  } else if (p->stream) {
    anthropic_events(out, sizeof out, text, call, reasoning, n);
  } else {
    char blocks[384] = "";
    if (reasoning) blocks_of(n, blocks, sizeof blocks);
    char content[1024];
    int w = snprintf(content, sizeof content, "%s", blocks);
    if (call) snprintf(content + w, sizeof content - (size_t)w, "%s{\"type\":\"tool_use\",\"id\":\"call_%d\",\"name\":\"weather\",\"input\":{\"city\":\"Paris\"}}", w ? "," : "", n);
    else snprintf(content + w, sizeof content - (size_t)w, "%s{\"type\":\"text\",\"text\":\"%s\"}", w ? "," : "", text);
    snprintf(out, sizeof out, "{\"id\":\"msg\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[%s],\"stop_reason\":\"%s\","
             "\"usage\":{\"input_tokens\":100,\"output_tokens\":20,\"output_tokens_details\":{\"thinking_tokens\":%d}}}",
             content, call ? "tool_use" : "end_turn", r_tokens);
  }
  if (p->stream) {
    CHECK(arkagent_http_stream_begin(completion, 200, "[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]") == OK, "begin");
    size_t len = strlen(out);
    for (size_t off = 0; off < len; off += 13) {
      size_t k = len - off < 13 ? len - off : 13;
      CHECK(arkagent_http_stream_chunk(completion, (const uint8_t *)out + off, k) == OK, "chunk");
    }
    CHECK(arkagent_http_stream_end(completion, NULL) == OK, "end");
  } else {
    CHECK(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)out, strlen(out)) == OK, "complete");
  }
}

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Provider *p = userdata;
  CHECK(occurrences(request, API_KEY, 0) == 0, "the key is not in the body");
  char *body = body_dup(request);
  if (strstr(body, "\"reasoning_content\"") || strstr(body, "\"type\":\"thinking\"")) p->reasoning_in_bodies++;
  int off = strstr(body, "\"thinking\":{\"type\":\"disabled\"}") != NULL;
  p->thinking_off_seen += off;
  const char *problem = check(p, body);
  if (problem) {
    p->refused++;
    snprintf(p->last_error, sizeof p->last_error, "%s", problem);
    char err[512];
    if (p->anthropic) snprintf(err, sizeof err, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"%s\"}}", problem);
    else snprintf(err, sizeof err, "{\"error\":{\"message\":\"%s\",\"type\":\"invalid_request_error\",\"code\":\"invalid_request_error\"}}", problem);
    CHECK(arkagent_http_complete(completion, 400, NULL, (const uint8_t *)err, strlen(err)) == OK, "refuse");
    free(body);
    return;
  }
  int n = p->n++;
  int call = rounds_in(p, body) < p->rounds;
  if (n < MAX_ANSWERS) p->calls[n] = call, p->gave[n] = !off;
  char reasoning[128];
  reasoning_of(n, reasoning, sizeof reasoning);
  char text[32];
  snprintf(text, sizeof text, "done %d", n);
  respond(p, completion, text, call, off ? NULL : reasoning, n);
  free(body);
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  CHECK(strstr(call_json, "Paris") != NULL, "the arguments reach the tool");
  CHECK(arkagent_tool_complete(completion, "sunny", false) == OK, "tool complete");
}

static int reasoning_events = 0;
static int redacted_events = 0;

static void on_event(void *userdata, const char *event_json) {
  (void)userdata;
  if (strstr(event_json, "\"type\":\"reasoning_delta\"")) {
    __atomic_add_fetch(&reasoning_events, 1, __ATOMIC_SEQ_CST);
    if (strstr(event_json, "\"redacted\":true")) __atomic_add_fetch(&redacted_events, 1, __ATOMIC_SEQ_CST);
  }
}

static ArkAgentRuntime *runtime(Provider *p, const char *extra_model, const char *extra_config) {
  ArkAgentTools *tools = NULL;
  CHECK(arkagent_tools_new(&tools) == OK, "tools_new");
  CHECK(arkagent_tools_register(tools, "{\"name\":\"weather\",\"description\":\"Weather\",\"parameters\":{\"type\":\"object\"}}", tool_cb, NULL) == OK, "register");
  char config[1024];
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"%s\","
           "\"wire_format\":\"%s\",\"stream\":%s%s},\"system_prompt\":\"You are a weather bot.\"%s}",
           p->anthropic ? "claude-sonnet-4-5" : "deepseek-v4-flash", p->anthropic ? "anthropic" : "openai",
           p->stream ? "true" : "false", extra_model, extra_config);
  ArkAgentRuntime *rt = NULL;
  int rc = arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, p), &rt);
  arkagent_tools_free(tools);
  CHECK(rc == OK, "runtime_new");
  return rt;
}

static void tool_loops(int anthropic, int stream) {
  Provider p = {.anthropic = anthropic, .stream = stream, .rounds = 2};
  ArkAgentRuntime *rt = runtime(&p, "", "");
  uint64_t sub = 0;
  CHECK(arkagent_runtime_subscribe(rt, on_event, NULL, &sub) == OK, "subscribe");
  reasoning_events = redacted_events = 0;
  for (int run = 0; run < 2; run++) {
    char *outcome = NULL;
    EXPECT(arkagent_runtime_run(rt, "the weather?", &outcome), OK);
    CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "completed");
    arkagent_string_free(outcome);
  }
  CHECK(p.refused == 0, p.last_error);
  CHECK(p.n == 6, "three calls per run");
  char *usages = NULL;
  CHECK(arkagent_runtime_usages(rt, &usages) == OK, "usages");
  CHECK(count(usages, "\"reasoning_tokens\":7") == 6, "THINK-5: reasoning tokens in every usage");
  arkagent_string_free(usages);
  char *messages = NULL;
  CHECK(arkagent_runtime_messages(rt, &messages) == OK, "messages");
  if (anthropic) {
    CHECK(count(messages, "\"signature\":\"EqQB-c-") == 6, "THINK-1: every thinking block with its signature");
    CHECK(count(messages, "\"type\":\"redacted_thinking\"") == 3, "and every redacted block");
  } else {
    CHECK(count(messages, "\"reasoning\":\"Step") == 4 && count(messages, "\"reasoning\":\"\"") == 2, "THINK-1: reasoning as received, empty included");
  }
  arkagent_string_free(messages);
  sleep_ms(20);
  CHECK(reasoning_events >= 4, "THINK-5: reasoning_delta events");
  CHECK(!anthropic || redacted_events == 3, "redacted blocks are marked");
  arkagent_runtime_free(rt);
}

static void dropping_the_reasoning_is_refused(int anthropic) {
  Provider p = {.anthropic = anthropic, .stream = 0, .rounds = 2};
  ArkAgentRuntime *rt = runtime(&p, ",\"reasoning_replay\":\"none\"", "");
  EXPECT(arkagent_runtime_run(rt, "the weather?", NULL), ARK_AGENT_RESULT_LLM_BAD_REQUEST);
  CHECK(p.refused == 1, "the strict provider refused the second call");
  arkagent_runtime_free(rt);
}

static void export_import_continue_an_open_cycle(int anthropic) {
  Provider p = {.anthropic = anthropic, .stream = 1, .rounds = 2};
  ArkAgentRuntime *rt = runtime(&p, "", ",\"max_iterations\":1");
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "the weather?", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"max_iterations\""), "stopped inside the tool cycle");
  arkagent_string_free(outcome);
  char *state = NULL;
  CHECK(arkagent_runtime_export_state(rt, &state) == OK, "export");
  arkagent_runtime_free(rt);
  ArkAgentRuntime *next = runtime(&p, "", "");
  EXPECT(arkagent_runtime_import_state(next, state), OK);
  arkagent_string_free(state);
  EXPECT(arkagent_runtime_run(next, "go on", NULL), OK);
  CHECK(p.refused == 0, p.last_error);
  arkagent_runtime_free(next);
}

static void thinking_off_and_the_codes(void) {
  for (int anthropic = 0; anthropic < 2; anthropic++) {
    Provider p = {.anthropic = anthropic, .stream = 0, .rounds = 1};
    ArkAgentRuntime *rt = runtime(&p, ",\"thinking\":\"off\",\"extra_body\":{\"user_id\":\"u-1\"}", "");
    EXPECT(arkagent_runtime_run(rt, "the weather?", NULL), OK);
    CHECK(p.thinking_off_seen == 2 && p.reasoning_in_bodies == 0, "off is sent, and no reasoning comes back");
    arkagent_runtime_free(rt);
  }
  struct { const char *model; int code; } cases[] = {
      {"\"base_url\":\"https://api.deepseek.com\",\"model\":\"deepseek-v4-flash\",\"thinking\":{\"budget_tokens\":2048}", ARK_AGENT_RESULT_THINKING_UNSUPPORTED},
      {"\"base_url\":\"https://api.deepseek.com\",\"model\":\"deepseek-v4-flash\",\"extra_body\":{\"stream\":true}", ARK_AGENT_RESULT_EXTRA_BODY_CONFLICT},
      {"\"base_url\":\"https://api.anthropic.com/v1\",\"model\":\"claude-opus-5-5\",\"wire_format\":\"anthropic\",\"temperature\":0.3", ARK_AGENT_RESULT_THINKING_CONFLICT},
      {"\"base_url\":\"https://api.deepseek.com\",\"model\":\"deepseek-v4-flash\",\"thinking\":{\"effort\":\"huge\"}", ARK_AGENT_RESULT_INVALID_JSON},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char config[512];
    snprintf(config, sizeof config, "{\"model\":{\"api_key\":\"k\",%s}}", cases[i].model);
    Provider p = {0};
    ArkAgentRuntime *rt = NULL;
    EXPECT(arkagent_runtime_new(config, NULL, NULL, HTTP(http_cb, &p), &rt), cases[i].code);
    CHECK(rt == NULL && p.n == 0, "no runtime, nothing sent");
  }
}

int main(void) {
  for (int anthropic = 0; anthropic < 2; anthropic++) {
    for (int stream = 0; stream < 2; stream++) tool_loops(anthropic, stream);
    dropping_the_reasoning_is_refused(anthropic);
    export_import_continue_an_open_cycle(anthropic);
  }
  thinking_off_and_the_codes();
  printf("thinking: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
