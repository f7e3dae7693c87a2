/*
 * TOOL-1..TOOL-3 through the C ABI. A scripted OpenAI-compatible model (checking that
 * every request is paired and never carries the key) calls `pay` (its definition has
 * "requires_approval": true) and `weather` in one turn, then answers:
 * - the run ends "awaiting_approval" with the pending call in the outcome, in
 *   arkagent_runtime_pending_approvals and in an "approval_requested" event; weather ran
 *   at once, pay did not; approve / reject (the model reads tool_rejected) / approve with
 *   edited arguments (the model reads what ran), then arkagent_runtime_resume_run;
 * - a per-call approval callback (arkagent_tools_register_with_approval) and the tool
 *   set's policy callback (allow, deny with a reason, ask; an invalid value denies);
 * - the SQLite store keeps the pause and a decision across a freed runtime (an app
 *   killed with the dialog open), and the call that ran before is not run again;
 * - hostile answers: unknown id, twice, bad edited arguments, NULLs, resume or run while a
 *   call waits — stable codes, nothing changed.
 * Built and run by tests/it/tool_approval_c.rs. Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-approval-c-SECRET-5772156649"

static const char *FINAL =
    "{\"id\":\"c2\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":\"Done.\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":80,\"completion_tokens\":2,\"total_tokens\":82}}";

typedef struct {
  const char *first;   /* the tool-call answer */
  int requests;
  char last[16384];
} Model;

/* The answer calling `calls` (a JSON array of tool calls). */
static char *calls_reply(const char *calls) {
  static char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
           "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":%s},"
           "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5,\"total_tokens\":55}}",
           calls);
  return buf;
}

#define CALL(id, name, args) "{\"id\":\"" id "\",\"type\":\"function\",\"function\":{\"name\":\"" name "\",\"arguments\":\"" args "\"}}"
#define PAY_AND_WEATHER "[" CALL("c_pay", "pay", "{\\\"amount\\\":500}") "," CALL("c_w", "weather", "{}") "]"

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Model *m = userdata;
  CHECK(occurrences(request, API_KEY, 0) == 0, "API key never in a body");
  body_into(request, m->last, sizeof m->last);
  /* Every tool call in the request is answered (a strict provider refuses it otherwise). */
  CHECK(count(m->last, "\"tool_calls\"") == 0 || count(m->last, "\"role\":\"tool\"") >= 1, "paired request");
  const char *body = m->requests++ == 0 ? m->first : FINAL;
  arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body));
}

typedef struct {
  int calls;
  char ran[8][32];
  char args[8][128];
} Tool;

static void tool_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  Tool *t = userdata;
  const char *id = strstr(call_json, "\"call_id\":\"");
  const char *args = strstr(call_json, "\"arguments\":");
  if (t->calls < 8 && id) {
    id += 11;
    size_t n = (size_t)(strchr(id, '"') - id);
    snprintf(t->ran[t->calls], sizeof t->ran[0], "%.*s", (int)n, id);
    snprintf(t->args[t->calls], sizeof t->args[0], "%s", args ? args + 12 : "");
  }
  t->calls++;
  EXPECT(arkagent_tool_complete(completion, "tool done", false), OK);
}

typedef struct {
  char types[2048];
} Events;

static void event_cb(void *userdata, const char *event_json) {
  Events *e = userdata;
  const char *p = strstr(event_json, "\"type\":\"");
  if (p == NULL) return;
  p += 8;
  size_t n = (size_t)(strchr(p, '"') - p);
  if (strlen(e->types) + n + 2 < sizeof e->types) {
    strcat(e->types, ",");
    strncat(e->types, p, n);
  }
}

static const char *PAY_DEF = "{\"name\":\"pay\",\"description\":\"Pays\",\"parameters\":{\"type\":\"object\","
                             "\"properties\":{\"amount\":{\"type\":\"number\"}},\"required\":[\"amount\"]},\"requires_approval\":true}";
static const char *PAY_ASKS_DEF = "{\"name\":\"pay\",\"description\":\"Pays\",\"parameters\":{\"type\":\"object\","
                                  "\"properties\":{\"amount\":{\"type\":\"number\"}},\"required\":[\"amount\"]}}";
static const char *WEATHER_DEF = "{\"name\":\"weather\",\"description\":\"Weather\",\"parameters\":{\"type\":\"object\"}}";

static char config[512];

static const char *config_json(void) {
  snprintf(config, sizeof config,
           "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\"},\"session_id\":\"approvals\"}");
  return config;
}

static ArkAgentRuntime *runtime_with(ArkAgentTools *tools, Model *m) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config_json(), tools, NULL, HTTP(http_cb, m), &rt), OK);
  return rt;
}

static ArkAgentTools *pay_and_weather_tools(Tool *pay, Tool *weather) {
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, PAY_DEF, tool_cb, pay), OK);
  EXPECT(arkagent_tools_register(tools, WEATHER_DEF, tool_cb, weather), OK);
  return tools;
}

/* Runs until the pause; returns the outcome JSON (caller frees). */
static char *run_to_pause(ArkAgentRuntime *rt) {
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "pay the bill", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"awaiting_approval\""), "the run pauses");
  return outcome;
}

static void approve_then_resume(int how) {
  Model m = {calls_reply(PAY_AND_WEATHER), 0, {0}};
  Tool pay = {0}, weather = {0};
  ArkAgentTools *tools = pay_and_weather_tools(&pay, &weather);
  ArkAgentRuntime *rt = runtime_with(tools, &m);
  arkagent_tools_free(tools);
  Events events = {{0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  char *outcome = run_to_pause(rt);
  CHECK(outcome && strstr(outcome, "\"pending_approvals\":[{\"call_id\":\"c_pay\",\"name\":\"pay\""), "pending call in the outcome");
  arkagent_string_free(outcome);
  CHECK(strstr(events.types, "approval_requested,run_finished") != NULL, "approval_requested before run_finished");
  CHECK(weather.calls == 1 && pay.calls == 0, "weather ran at once, pay waits");
  char *pending = NULL;
  EXPECT(arkagent_runtime_pending_approvals(rt, &pending), OK);
  CHECK(pending && strstr(pending, "\"call_id\":\"c_pay\"") && count(pending, "call_id") == 1, "pending_approvals lists the call");
  arkagent_string_free(pending);
  if (how == 0) EXPECT(arkagent_runtime_approve(rt, "c_pay", NULL), OK);
  if (how == 1) EXPECT(arkagent_runtime_reject(rt, "c_pay", "too expensive"), OK);
  if (how == 2) EXPECT(arkagent_runtime_approve(rt, "c_pay", "{\"amount\": 50}"), OK);
  EXPECT(arkagent_runtime_resume_run(rt, &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\"") && strstr(outcome, "Done."), "resumed to the end");
  CHECK(outcome && strstr(outcome, "\"pending_approvals\":[]"), "nothing pending");
  arkagent_string_free(outcome);
  CHECK(weather.calls == 1, "weather never runs twice");
  CHECK(m.requests == 2, "one more model call");
  const char *pay_result = strstr(m.last, "\"tool_call_id\":\"c_pay\"");
  if (how == 0) CHECK(pay.calls == 1 && strstr(m.last, "tool done") != NULL, "approved: pay ran once");
  if (how == 1) CHECK(pay.calls == 0 && strstr(m.last, "tool_rejected") && strstr(m.last, "too expensive"), "rejected: never ran, the model reads why");
  if (how == 2) {
    CHECK(pay.calls == 1 && strstr(pay.args[0], "\"amount\":50") != NULL, "edited arguments ran");
    CHECK(strstr(m.last, "The user changed the arguments") != NULL, "the model reads what ran");
  }
  CHECK(pay_result != NULL, "the pay call is answered");
  CHECK(strstr(events.types, "run_finished,run_started") != NULL, "the resumed run starts again");
  arkagent_runtime_free(rt);
}

static bool above_hundred(void *userdata, const char *call_json) {
  (void)userdata;
  const char *amount = strstr(call_json, "\"amount\":");
  return amount && atoi(amount + 9) > 100;
}

static void per_call_predicate(void) {
  Model m = {calls_reply("[" CALL("small", "pay", "{\\\"amount\\\":5}") "," CALL("big", "pay", "{\\\"amount\\\":900}") "]"), 0, {0}};
  Tool pay = {0};
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register_with_approval(tools, PAY_ASKS_DEF, NULL, above_hundred, &pay), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_tools_register_with_approval(tools, PAY_ASKS_DEF, tool_cb, above_hundred, &pay), OK);
  ArkAgentRuntime *rt = runtime_with(tools, &m);
  arkagent_tools_free(tools);
  char *outcome = run_to_pause(rt);
  CHECK(outcome && strstr(outcome, "\"call_id\":\"big\"") && !strstr(outcome, "\"call_id\":\"small\""), "only the big payment waits");
  arkagent_string_free(outcome);
  CHECK(pay.calls == 1 && strcmp(pay.ran[0], "small") == 0, "the small one ran");
  EXPECT(arkagent_runtime_approve(rt, "big", NULL), OK);
  EXPECT(arkagent_runtime_resume_run(rt, NULL), OK);
  CHECK(pay.calls == 2 && strcmp(pay.ran[1], "big") == 0, "the big one ran after approval");
  arkagent_runtime_free(rt);
}

static int32_t guardrail(void *userdata, const char *call_json, char *reason, size_t cap) {
  int *seen = userdata;
  (*seen)++;
  if (strstr(call_json, "\"name\":\"delete\"")) {
    snprintf(reason, cap, "deleting is not allowed here");
    return ARK_AGENT_POLICY_DENY;
  }
  if (strstr(call_json, "\"name\":\"send\"")) return ARK_AGENT_POLICY_ASK;
  if (strstr(call_json, "\"name\":\"odd\"")) return 7;
  return ARK_AGENT_POLICY_ALLOW;
}

static void policy(void) {
  Model m = {calls_reply("[" CALL("d", "delete", "{}") "," CALL("s", "send", "{}") "," CALL("r", "read", "{}") "," CALL("o", "odd", "{}") "]"), 0, {0}};
  Tool tool = {0};
  int seen = 0;
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  const char *names[] = {"delete", "send", "read", "odd"};
  for (int i = 0; i < 4; i++) {
    char def[256];
    snprintf(def, sizeof def, "{\"name\":\"%s\",\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}", names[i]);
    EXPECT(arkagent_tools_register(tools, def, tool_cb, &tool), OK);
  }
  EXPECT(arkagent_tools_set_policy(NULL, guardrail, &seen), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_tools_set_policy(tools, guardrail, &seen), OK);
  ArkAgentRuntime *rt = runtime_with(tools, &m);
  arkagent_tools_free(tools);
  char *outcome = run_to_pause(rt);
  CHECK(outcome && strstr(outcome, "\"call_id\":\"s\"") && count(outcome, "\"call_id\"") == 1, "the policy asked for send only");
  arkagent_string_free(outcome);
  CHECK(seen == 4, "the policy saw every call");
  CHECK(tool.calls == 1 && strcmp(tool.ran[0], "r") == 0, "allowed ran; denied and asked did not");
  EXPECT(arkagent_runtime_approve(rt, "s", NULL), OK);
  EXPECT(arkagent_runtime_resume_run(rt, NULL), OK);
  CHECK(tool.calls == 2, "send ran once approved");
  CHECK(strstr(m.last, "tool_denied") && strstr(m.last, "deleting is not allowed here"), "the model reads the denial");
  CHECK(strstr(m.last, "no valid decision") != NULL, "an invalid decision denies");
  arkagent_runtime_free(rt);
}

static void restart(void) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/arkagent-approval-c-%d.db", (int)getpid());
  unlink(path);
  Model m = {calls_reply("[" CALL("a", "pay", "{\\\"amount\\\":1}") "," CALL("b", "pay", "{\\\"amount\\\":2}") "," CALL("c_w", "weather", "{}") "]"), 0, {0}};
  Tool pay = {0}, weather = {0};
  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  ArkAgentTools *tools = pay_and_weather_tools(&pay, &weather);
  ArkAgentRuntime *rt = runtime_with(tools, &m);
  EXPECT(arkagent_runtime_attach_store(rt, store, NULL), OK);
  char *outcome = run_to_pause(rt);
  arkagent_string_free(outcome);
  EXPECT(arkagent_runtime_reject(rt, "a", "no"), OK);
  arkagent_runtime_free(rt); /* the app is killed with the dialog for b open */
  rt = runtime_with(tools, &m);
  EXPECT(arkagent_runtime_attach_store(rt, store, NULL), OK);
  char *pending = NULL;
  EXPECT(arkagent_runtime_pending_approvals(rt, &pending), OK);
  CHECK(pending && strstr(pending, "\"call_id\":\"b\"") && count(pending, "call_id") == 1, "the same pending call after the restart");
  arkagent_string_free(pending);
  EXPECT(arkagent_runtime_approve(rt, "b", NULL), OK);
  EXPECT(arkagent_runtime_resume_run(rt, &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "completed after the restart");
  arkagent_string_free(outcome);
  CHECK(weather.calls == 1, "weather ran once, before the kill");
  CHECK(pay.calls == 1 && strcmp(pay.ran[0], "b") == 0, "only b ran");
  CHECK(strstr(m.last, "tool_rejected") != NULL, "the decision on a survived the kill");
  arkagent_runtime_free(rt);
  arkagent_tools_free(tools);
  arkagent_store_free(store);
  unlink(path);
}

static void hostile(void) {
  Model m = {calls_reply(PAY_AND_WEATHER), 0, {0}};
  Tool pay = {0}, weather = {0};
  ArkAgentTools *tools = pay_and_weather_tools(&pay, &weather);
  ArkAgentRuntime *rt = runtime_with(tools, &m);
  arkagent_tools_free(tools);
  EXPECT(arkagent_runtime_approve(rt, "c_pay", NULL), ARK_AGENT_RESULT_APPROVAL_NOT_PENDING);
  EXPECT(arkagent_runtime_resume_run(rt, NULL), ARK_AGENT_RESULT_APPROVAL_NOT_PENDING);
  char *outcome = run_to_pause(rt);
  arkagent_string_free(outcome);
  char *before = NULL, *after = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &before), OK);
  EXPECT(arkagent_runtime_approve(rt, "nope", NULL), ARK_AGENT_RESULT_APPROVAL_UNKNOWN_CALL);
  EXPECT(arkagent_runtime_reject(rt, "c_w", "x"), ARK_AGENT_RESULT_APPROVAL_ALREADY_ANSWERED);
  EXPECT(arkagent_runtime_approve(rt, "c_pay", "not json"), ARK_AGENT_RESULT_TOOL_ARGUMENTS_INVALID);
  EXPECT(arkagent_runtime_approve(rt, "c_pay", "{}"), ARK_AGENT_RESULT_TOOL_ARGUMENTS_INVALID);
  EXPECT(arkagent_runtime_approve(rt, "c_pay", "[500]"), ARK_AGENT_RESULT_TOOL_ARGUMENTS_INVALID);
  EXPECT(arkagent_runtime_approve(rt, NULL, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_reject(rt, "\xff\xfe", NULL), ARK_AGENT_RESULT_INVALID_UTF8);
  EXPECT(arkagent_runtime_approve(NULL, "c_pay", NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_resume_run(rt, NULL), ARK_AGENT_RESULT_APPROVAL_PENDING);
  EXPECT(arkagent_runtime_run(rt, "something else", NULL), ARK_AGENT_RESULT_APPROVAL_PENDING);
  EXPECT(arkagent_runtime_compress_now(rt, NULL), ARK_AGENT_RESULT_APPROVAL_PENDING);
  EXPECT(arkagent_runtime_pending_approvals(rt, NULL), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_export_state(rt, &after), OK);
  CHECK(before && after && strcmp(before, after) == 0, "refused answers changed nothing");
  arkagent_string_free(before);
  arkagent_string_free(after);
  EXPECT(arkagent_runtime_reject(rt, "c_pay", NULL), OK);
  EXPECT(arkagent_runtime_approve(rt, "c_pay", NULL), ARK_AGENT_RESULT_APPROVAL_ALREADY_ANSWERED);
  EXPECT(arkagent_runtime_resume_run(rt, NULL), OK);
  CHECK(strstr(m.last, "the user rejected this call") != NULL, "a NULL reason has a default");
  CHECK(strcmp(arkagent_result_name(ARK_AGENT_RESULT_APPROVAL_PENDING), "approval_pending") == 0, "result name");
  arkagent_runtime_free(rt);
}

/* The person stops: the turn closes without a model call. */
static void cancel_approvals(void) {
  Model m = {calls_reply(PAY_AND_WEATHER), 0, {0}};
  Tool pay = {0}, weather = {0};
  ArkAgentTools *tools = pay_and_weather_tools(&pay, &weather);
  ArkAgentRuntime *rt = runtime_with(tools, &m);
  arkagent_tools_free(tools);
  bool closed = true;
  EXPECT(arkagent_runtime_cancel_approvals(rt, &closed), OK);
  CHECK(!closed, "nothing waited");
  char *outcome = run_to_pause(rt);
  arkagent_string_free(outcome);
  EXPECT(arkagent_runtime_cancel(rt), OK); /* no run is active: the paused turn stays */
  char *pending = NULL;
  EXPECT(arkagent_runtime_pending_approvals(rt, &pending), OK);
  CHECK(pending && count(pending, "call_id") == 1, "cancel leaves a paused turn alone");
  arkagent_string_free(pending);
  EXPECT(arkagent_runtime_cancel_approvals(rt, &closed), OK);
  CHECK(closed, "the turn was closed");
  CHECK(m.requests == 1 && pay.calls == 0, "no model call, pay never ran");
  EXPECT(arkagent_runtime_approve(rt, "c_pay", NULL), ARK_AGENT_RESULT_APPROVAL_NOT_PENDING);
  EXPECT(arkagent_runtime_cancel_approvals(rt, NULL), OK);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages && count(messages, "\"tool_call_id\":\"c_pay\"") == 1 && strstr(messages, "cancelled"), "paired, pay answered cancelled");
  arkagent_string_free(messages);
  EXPECT(arkagent_runtime_run(rt, "next", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\""), "the next run goes on");
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
}

/* Issue 37 item 5: a sub-agent's call waits in flight; the host answers it from the event
   callback, while arkagent_runtime_run is still going. */
typedef struct {
  int requests;
  int child_requests;
} TreeModel;

static const char *DELEGATE_REPLY =
    "{\"id\":\"p1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"message\":{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"d1\",\"type\":\"function\","
    "\"function\":{\"name\":\"delegate_task\",\"arguments\":\"{\\\"assignee\\\":\\\"clone\\\",\\\"task_description\\\":\\\"pay it\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5,\"total_tokens\":55}}";

static void tree_http(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  TreeModel *m = userdata;
  char body[16384];
  body_into(request, body, sizeof body);
  /* The parent is offered delegate_task (a definition, not a call: it has a description). */
  int parent = strstr(body, "\"name\":\"delegate_task\",\"description\"") != NULL;
  const char *reply;
  if (parent) {
    reply = strstr(body, "\"role\":\"tool\"") ? FINAL : DELEGATE_REPLY;
  } else {
    m->child_requests++;
    reply = strstr(body, "\"role\":\"tool\"") ? FINAL : calls_reply("[" CALL("p", "pay", "{\\\"amount\\\":7}") "]");
  }
  m->requests++;
  arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply));
}

typedef struct {
  ArkAgentRuntime *rt;
  int answered;
  char path_seen[512];
} Answerer;

static void answer_in_callback(void *userdata, const char *event_json) {
  Answerer *a = userdata;
  const char *asked = strstr(event_json, "\"type\":\"approval_requested\"");
  if (asked == NULL || a->answered) return;
  const char *id = strstr(asked, "\"call_id\":\"");
  if (id == NULL) return;
  id += 11;
  char call_id[256];
  size_t n = (size_t)(strchr(id, '"') - id);
  snprintf(call_id, sizeof call_id, "%.*s", (int)n, id);
  char *pending = NULL;
  EXPECT(arkagent_runtime_pending_approvals(a->rt, &pending), OK);
  CHECK(pending && strstr(pending, call_id) && strstr(pending, "\"path\":[\""), "the waiting sub-agent call is listed with its path");
  if (pending) snprintf(a->path_seen, sizeof a->path_seen, "%s", pending);
  arkagent_string_free(pending);
  CHECK(strstr(call_id, "/p") != NULL, "the call id names the sub-agent's session");
  EXPECT(arkagent_runtime_approve(a->rt, call_id, "{}"), ARK_AGENT_RESULT_TOOL_ARGUMENTS_INVALID);
  EXPECT(arkagent_runtime_approve(a->rt, call_id, NULL), OK);
  a->answered = 1;
}

static void sub_agent(void) {
  TreeModel m = {0};
  Tool pay = {0};
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, PAY_DEF, tool_cb, &pay), OK);
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\"},"
                              "\"delegation\":{\"allow_clone\":true}}",
                              tools, NULL, HTTP(tree_http, &m), &rt), OK);
  arkagent_tools_free(tools);
  Answerer a = {rt, 0, {0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, answer_in_callback, &a, &sub), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "delegate the payment", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"status\":\"completed\"") && strstr(outcome, "\"pending_approvals\":[]"), "the run completed, nothing paused");
  arkagent_string_free(outcome);
  CHECK(a.answered == 1, "the host answered the sub-agent's call from the event callback");
  CHECK(pay.calls == 1, "the approved sub-agent call ran once");
  CHECK(m.child_requests == 2, "the sub-agent asked the model again only after the answer");
  char *pending = NULL;
  EXPECT(arkagent_runtime_pending_approvals(rt, &pending), OK);
  CHECK(pending && strcmp(pending, "[]") == 0, "nothing waits afterwards");
  arkagent_string_free(pending);
  arkagent_runtime_free(rt);
}

int main(void) {
  approve_then_resume(0);
  approve_then_resume(1);
  approve_then_resume(2);
  per_call_predicate();
  policy();
  restart();
  hostile();
  cancel_approvals();
  sub_agent();
  printf("tool_approval: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
