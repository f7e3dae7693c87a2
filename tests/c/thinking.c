/*
 * THINK-1..THINK-5 through the C ABI: tool loops against strict thinking providers
 * answering through the host HTTP callback as DeepSeek V4 and Claude do with thinking on,
 * whole and streamed:
 * - DeepSeek (Chat Completions): every assistant message with tool calls must carry the
 *   reasoning_content the provider gave it, exactly ("" included), else HTTP 400 with
 *   DeepSeek's error body;
 * - Anthropic: in the current tool cycle (a request whose last turn is only tool results),
 *   the answer it continues must start with its thinking and redacted_thinking blocks
 *   exactly as given, else 400 "Expected `thinking`…".
 * Each run calls `weather` twice, then answers. Also: export/import continuing an open tool
 * cycle, "thinking":"off", the thinking codes at runtime_new, reasoning tokens in usages
 * and reasoning_delta events. Built and run by tests/it/thinking_c.rs. Prints
 * "N passed, M failed" and exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  int hang_at;                 /* request index (1-based) that stops mid-reasoning; 0: none */
  int requests;
  int summaries;               /* summarizer requests answered */
  int chunked_with_reasoning;  /* chunked transcripts carrying the reasoning (THINK-3) */
  int prefix_with_reasoning;   /* summarizer requests on the conversation's bytes with it */
} Provider;

#define SNAPSHOT "<state_snapshot><overall_goal>weather</overall_goal><key_knowledge>k</key_knowledge>" \
  "<file_system_state>none</file_system_state><recent_actions>a</recent_actions><current_plan>p</current_plan></state_snapshot>"

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

/* `in` as the inside of a JSON string (quotes and backslashes escaped). */
static void escape(const char *in, char *out, size_t cap) {
  size_t w = 0;
  for (; in && *in && w + 2 < cap; in++) {
    if (*in == '"' || *in == '\\') out[w++] = '\\';
    out[w++] = *in;
  }
  out[w] = 0;
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

/* The id of the tool call the request's last turn answers, when that turn is only tool
   results (the current tool cycle), in `id`; 0 when the request ends otherwise. */
static int current_cycle(const char *body, char *id, size_t cap) {
  const char *last = NULL;
  for (const char *q = body; (q = strstr(q, "{\"role\":\"user\"")) != NULL; q++) last = q;
  if (!last || strstr(last, "\"type\":\"text\"") || !strstr(last, "\"tool_use_id\":\"")) return 0;
  const char *at = strstr(last, "\"tool_use_id\":\"") + strlen("\"tool_use_id\":\"");
  size_t n = strcspn(at, "\"");
  if (n + 1 > cap) return 0;
  memcpy(id, at, n);
  id[n] = 0;
  return 1;
}

/* NULL when the body passes the provider's rule, else its error message. */
static const char *check(Provider *p, const char *body) {
  char cycle[32] = "";
  int open = p->anthropic && current_cycle(body, cycle, sizeof cycle);
  for (int k = 0; k < p->n; k++) {
    if (!p->calls[k] || !p->gave[k]) continue;
    char id[32], want[512];
    snprintf(id, sizeof id, "\"id\":\"call_%d\"", k);
    if (!strstr(body, id)) continue;
    if (p->anthropic) {
      /* Anthropic: the current tool cycle's answer starts with its blocks, as given. */
      char call[16];
      snprintf(call, sizeof call, "call_%d", k);
      if (!open || strcmp(call, cycle) != 0) continue;
      char blocks[384];
      blocks_of(k, blocks, sizeof blocks);
      snprintf(want, sizeof want, "{\"role\":\"assistant\",\"content\":[%s,{\"type\":\"tool_use\",\"id\":\"call_%d\"", blocks, k);
      if (!strstr(body, want)) return "messages.N.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`";
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
static void anthropic_events(char *out, size_t cap, const char *text, const char *tool, const char *args, const char *reasoning, int n, int prompt) {
  int call = tool != NULL;
  char escaped[256];
  escape(args, escaped, sizeof escaped);
  int w = snprintf(out, cap, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg\",\"role\":\"assistant\",\"content\":[],"
                   "\"usage\":{\"input_tokens\":%d,\"output_tokens\":1}}}\n\n", prompt);
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
    EV("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_%d\",\"name\":\"%s\",\"input\":{}}}\n\n", index, n, tool);
    EV("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"%s\"}}\n\n", index, escaped);
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

static void respond(Provider *p, ArkAgentHttpCompletion *completion, const char *text, const char *tool, const char *args, const char *reasoning, int n) {
  char out[8192];
  int r_tokens = reasoning ? 7 : 0;
  int call = tool != NULL;
  /* The prompt grows as a conversation does (the compression trigger reads it). */
  int prompt = 100 + 60 * (n % 8);
  char escaped[256];
  escape(args, escaped, sizeof escaped);
  if (!p->anthropic) {
    char msg[1024];
    int w = snprintf(msg, sizeof msg, "{\"role\":\"assistant\"");
    if (reasoning) w += snprintf(msg + w, sizeof msg - (size_t)w, ",\"reasoning_content\":\"%s\"", reasoning);
    if (call)
      snprintf(msg + w, sizeof msg - (size_t)w, ",\"content\":null,\"tool_calls\":[{%s\"id\":\"call_%d\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"%s\"}}]}",
               p->stream ? "\"index\":0," : "", n, tool, escaped);
    else snprintf(msg + w, sizeof msg - (size_t)w, ",\"content\":\"%s\"}", text);
    if (!p->stream) {
      snprintf(out, sizeof out, "{\"choices\":[{\"index\":0,\"message\":%s,\"finish_reason\":\"%s\"}],"
               "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":20,\"total_tokens\":%d,\"completion_tokens_details\":{\"reasoning_tokens\":%d}}}",
               msg, call ? "tool_calls" : "stop", prompt, prompt + 20, r_tokens);
    } else {
      /* The message as one delta, then the finish and usage chunks. */
      snprintf(out, sizeof out, "data: {\"choices\":[{\"index\":0,\"delta\":%s,\"finish_reason\":null}]}\n\n"
               "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"%s\"}]}\n\n"
               "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":20,\"total_tokens\":%d,\"completion_tokens_details\":{\"reasoning_tokens\":%d}}}\n\n"
               "data: [DONE]\n\n", msg, call ? "tool_calls" : "stop", prompt, prompt + 20, r_tokens);
    }
  } else if (p->stream) {
    anthropic_events(out, sizeof out, text, tool, args, reasoning, n, prompt);
  } else {
    char blocks[384] = "";
    if (reasoning) blocks_of(n, blocks, sizeof blocks);
    char content[1024];
    int w = snprintf(content, sizeof content, "%s", blocks);
    if (call) snprintf(content + w, sizeof content - (size_t)w, "%s{\"type\":\"tool_use\",\"id\":\"call_%d\",\"name\":\"%s\",\"input\":%s}", w ? "," : "", n, tool, args);
    else snprintf(content + w, sizeof content - (size_t)w, "%s{\"type\":\"text\",\"text\":\"%s\"}", w ? "," : "", text);
    snprintf(out, sizeof out, "{\"id\":\"msg\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[%s],\"stop_reason\":\"%s\","
             "\"usage\":{\"input_tokens\":%d,\"output_tokens\":20,\"output_tokens_details\":{\"thinking_tokens\":%d}}}",
             content, call ? "tool_use" : "end_turn", prompt, r_tokens);
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

/* Waits for the library to give up the request, then aborts it (a host without a cancel
   callback polls). */
static void *abort_when_cancelled(void *arg) {
  ArkAgentHttpCompletion *completion = arg;
  for (int i = 0; i < 1000 && !arkagent_http_is_cancelled(completion); i++) sleep_ms(5);
  CHECK(arkagent_http_is_cancelled(completion), "the library cancelled the request");
  arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted");
  return NULL;
}

/* Streams the first piece of answer n's reasoning, then holds the stream open. */
static void hang(Provider *p, ArkAgentHttpCompletion *completion, const char *reasoning, int n) {
  char first[1024];
  if (p->anthropic) {
    snprintf(first, sizeof first, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[],\"usage\":{\"input_tokens\":9}}}\n\n"
             "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
             "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"%s (%d)\"}}\n\n", reasoning, n);
  } else {
    snprintf(first, sizeof first, "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"%s (%d)\"},\"finish_reason\":null}]}\n\n", reasoning, n);
  }
  CHECK(arkagent_http_stream_begin(completion, 200, "[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]") == OK, "begin");
  CHECK(arkagent_http_stream_chunk(completion, (const uint8_t *)first, strlen(first)) == OK, "the first reasoning piece");
  pthread_t t;
  pthread_create(&t, NULL, abort_when_cancelled, completion);
  pthread_detach(t);
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
  p->requests++;
  int prefix = strstr(body, "[Context compression: this message") != NULL;
  int chunked = strstr(body, "<conversation>") != NULL;
  char reasoning[128];
  reasoning_of(n, reasoning, sizeof reasoning);
  char text[32];
  snprintf(text, sizeof text, "done %d", n);
  if (prefix || chunked) {
    p->summaries++;
    if (chunked && strstr(body, "[assistant reasoning] Step")) p->chunked_with_reasoning++;
    if (prefix && strstr(body, p->anthropic ? "\"type\":\"thinking\"" : "\"reasoning_content\"")) p->prefix_with_reasoning++;
    respond(p, completion, SNAPSHOT, NULL, NULL, off ? NULL : reasoning, n);
    free(body);
    return;
  }
  const char *tool = NULL, *args = NULL;
  int rounds = rounds_in(p, body);
  if (strstr(body, "\"name\":\"delegate_task\"") && rounds == 0) {
    tool = "delegate_task", args = "{\"assignee\":\"clone\",\"task_description\":\"find the weather in Paris\"}";
  } else if (rounds < p->rounds) {
    tool = "weather", args = "{\"city\":\"Paris\"}";
  }
  if (n < MAX_ANSWERS) p->calls[n] = tool != NULL, p->gave[n] = !off;
  if (p->requests == p->hang_at) {
    hang(p, completion, reasoning, n);
  } else {
    respond(p, completion, text, tool, args, off ? NULL : reasoning, n);
  }
  free(body);
}

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  CHECK(strstr(call_json, "Paris") != NULL, "the arguments reach the tool");
  CHECK(arkagent_tool_complete(completion, "sunny", false) == OK, "tool complete");
}

static int reasoning_events = 0;
static int redacted_events = 0;
static int second_call_reasoning = 0;

static void on_event(void *userdata, const char *event_json) {
  (void)userdata;
  if (strstr(event_json, "\"type\":\"reasoning_delta\"") && strstr(event_json, "\"iteration\":2")) {
    __atomic_store_n(&second_call_reasoning, 1, __ATOMIC_SEQ_CST);
  }
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

static void store_resume_continues_an_open_cycle(int anthropic) {
  char path[128];
  snprintf(path, sizeof path, "/tmp/arkagent-think-c-%d-%d.db", (int)getpid(), anthropic);
  remove(path);
  Provider p = {.anthropic = anthropic, .stream = 1, .rounds = 2};
  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  ArkAgentRuntime *rt = runtime(&p, "", ",\"max_iterations\":1,\"session_id\":\"s\"");
  EXPECT(arkagent_runtime_attach_store(rt, store, NULL), OK);
  EXPECT(arkagent_runtime_run(rt, "the weather?", NULL), OK);
  char *before = NULL;
  CHECK(arkagent_runtime_messages(rt, &before) == OK, "messages");
  arkagent_runtime_free(rt);
  arkagent_store_free(store);
  /* A new runtime on a new handle of the file: the reasoning is read back exactly. */
  EXPECT(arkagent_store_open(path, &store), OK);
  ArkAgentRuntime *resumed = runtime(&p, "", ",\"session_id\":\"s\"");
  EXPECT(arkagent_runtime_attach_store(resumed, store, NULL), OK);
  char *after = NULL;
  CHECK(arkagent_runtime_messages(resumed, &after) == OK, "messages");
  CHECK(before && after && strcmp(before, after) == 0, "THINK-1: the store keeps the reasoning as received");
  EXPECT(arkagent_runtime_run(resumed, "go on", NULL), OK);
  CHECK(p.refused == 0, p.last_error);
  arkagent_string_free(before);
  arkagent_string_free(after);
  arkagent_runtime_free(resumed);
  arkagent_store_free(store);
  remove(path);
}

static void compression_both_paths_carry_the_reasoning(int anthropic, int chunked) {
  Provider p = {.anthropic = anthropic, .stream = 1, .rounds = 3};
  char compression[512];
  snprintf(compression, sizeof compression,
           ",\"compression\":{\"total_token_threshold\":300,\"keep_recent_message_count\":2,\"min_messages_to_summarize\":2%s}",
           chunked ? (anthropic ? ",\"summarizer_model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"claude-haiku-summarizer\",\"wire_format\":\"anthropic\",\"stream\":true}"
                            : ",\"summarizer_model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"deepseek-v4-summarizer\",\"stream\":true}")
                   : "");
  ArkAgentRuntime *rt = runtime(&p, "", compression);
  EXPECT(arkagent_runtime_run(rt, "run 0", NULL), OK);
  EXPECT(arkagent_runtime_run(rt, "run 1", NULL), OK);
  char *episodes = NULL;
  CHECK(arkagent_runtime_episodes(rt, &episodes) == OK && episodes && strstr(episodes, "\"id\""), "a compression was committed");
  arkagent_string_free(episodes);
  CHECK(p.summaries > 0, "the summarizer was asked");
  if (chunked) CHECK(p.chunked_with_reasoning > 0, "THINK-3: the transcript carries the reasoning");
  else CHECK(p.prefix_with_reasoning == p.summaries, "THINK-3: the conversation's bytes carry the reasoning");
  CHECK(p.refused == 0, p.last_error);
  arkagent_runtime_free(rt);
}

static void a_clone_child_completes_its_tool_loop(int anthropic) {
  Provider p = {.anthropic = anthropic, .stream = 1, .rounds = 2};
  ArkAgentRuntime *rt = runtime(&p, "", ",\"delegation\":{\"allow_clone\":true}");
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "ask a helper", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "completed");
  arkagent_string_free(outcome);
  char *total = NULL;
  CHECK(arkagent_runtime_total_usage(rt, &total) == OK, "total usage");
  /* The children's part only: the object ends where "total" begins. */
  char *children = total ? strstr(total, "\"children\":{") : NULL;
  char *children_end = children ? strstr(children, "\"total\":{") : NULL;
  if (children_end) *children_end = 0;
  CHECK(children && children_end && !strstr(children, "\"reasoning_tokens\":0,"), "the child's reasoning tokens count");
  arkagent_string_free(total);
  CHECK(p.refused == 0, p.last_error);
  arkagent_runtime_free(rt);
}

static void cancel_mid_reasoning(int anthropic) {
  Provider p = {.anthropic = anthropic, .stream = 1, .rounds = 2, .hang_at = 2};
  ArkAgentRuntime *rt = runtime(&p, "", "");
  uint64_t sub = 0;
  CHECK(arkagent_runtime_subscribe(rt, on_event, NULL, &sub) == OK, "subscribe");
  __atomic_store_n(&second_call_reasoning, 0, __ATOMIC_SEQ_CST);
  RunArg arg = {rt, "the weather?", -1};
  pthread_t t;
  pthread_create(&t, NULL, run_thread, &arg);
  for (int i = 0; i < 1000 && !__atomic_load_n(&second_call_reasoning, __ATOMIC_SEQ_CST); i++) sleep_ms(5);
  CHECK(__atomic_load_n(&second_call_reasoning, __ATOMIC_SEQ_CST), "the second call's reasoning arrived");
  EXPECT(arkagent_runtime_cancel(rt), OK);
  pthread_join(t, NULL);
  EXPECT(arg.result, OK);
  char *messages = NULL;
  CHECK(arkagent_runtime_messages(rt, &messages) == OK, "messages");
  CHECK(count(messages, "\"role\":") == 3, "user, the tool call and its result: the half answer is not kept");
  arkagent_string_free(messages);
  EXPECT(arkagent_runtime_run(rt, "again", NULL), OK);
  CHECK(p.refused == 0, p.last_error);
  arkagent_runtime_free(rt);
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
    store_resume_continues_an_open_cycle(anthropic);
    compression_both_paths_carry_the_reasoning(anthropic, 0);
    compression_both_paths_carry_the_reasoning(anthropic, 1);
    a_clone_child_completes_its_tool_loop(anthropic);
    cancel_mid_reasoning(anthropic);
  }
  thinking_off_and_the_codes();
  printf("thinking: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
