/*
 * MCP-1..MCP-3 through the C ABI. One C HTTP callback is both the scripted model and an
 * MCP server (Streamable HTTP, JSON answers, a session id, 202 for notifications) that
 * refuses a request without the bearer token the tool set's auth callback supplies:
 * - the config's "mcp_servers" offers "maps__search" from the first run, connected at that
 *   run's start (an "mcp_server" event, "connected"); the model calls it, the server gets
 *   "tools/call" with its own name, the model reads the server's text;
 * - the token reaches the MCP server only: never a model request, an event or the export;
 * - a second server that cannot be reached fails only itself ("mcp_unreachable");
 * - refusals: a bad server name (ARK_AGENT_RESULT_INVALID_CONFIG), a NULL tool set.
 * Built and run by tests/it/mcp_c.rs. Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-mcp-c-SECRET-2718281828"
#define TOKEN "mcp-c-token-1618033988"
#define MAPS "https://maps.example.test/mcp"
#define DOWN "https://down.example.test/mcp"

typedef struct {
  int model_requests, mcp_requests, calls, auth_asked;
  char model_bodies[4][8192];
  char call_body[2048];
  int token_in_model;
} Host;

static void answer(ArkAgentHttpCompletion *c, int status, const char *headers, const char *body) {
  arkagent_http_complete(c, status, headers, (const uint8_t *)body, strlen(body));
}

#define JSON_HEADERS "[{\"name\":\"Content-Type\",\"value\":\"application/json\"}]"

static void mcp(Host *h, const ArkAgentHttpRequest *r, ArkAgentHttpCompletion *c) {
  h->mcp_requests++;
  const char *auth = header_value(r, "Authorization");
  if (auth == NULL || strcmp(auth, "Bearer " TOKEN) != 0) return answer(c, 401, NULL, "");
  char body[2048];
  body_into(r, body, sizeof body);
  /* The id of the request: a number after "id": */
  const char *idp = strstr(body, "\"id\":");
  long id = idp ? strtol(idp + 5, NULL, 10) : -1;
  char reply[1024];
  if (strstr(body, "\"method\":\"initialize\"")) {
    snprintf(reply, sizeof reply,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{\"tools\":{}},"
             "\"serverInfo\":{\"name\":\"c\",\"version\":\"1\"}}}", id);
    return answer(c, 200, "[{\"name\":\"Content-Type\",\"value\":\"application/json\"},{\"name\":\"Mcp-Session-Id\",\"value\":\"s-1\"}]", reply);
  }
  const char *session = header_value(r, "Mcp-Session-Id");
  const char *version = header_value(r, "MCP-Protocol-Version");
  CHECK(session && strcmp(session, "s-1") == 0 && version && strcmp(version, "2025-06-18") == 0, "session id and version sent back");
  if (idp == NULL) return answer(c, 202, NULL, "");
  if (strstr(body, "\"method\":\"tools/list\"")) {
    snprintf(reply, sizeof reply,
             "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"tools\":[{\"name\":\"search\",\"description\":\"Finds places\","
             "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}}]}}", id);
    return answer(c, 200, JSON_HEADERS, reply);
  }
  h->calls++;
  snprintf(h->call_body, sizeof h->call_body, "%s", body);
  snprintf(reply, sizeof reply, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"found 3 cafes\"}]}}", id);
  answer(c, 200, JSON_HEADERS, reply);
}

static void http_cb(void *userdata, const ArkAgentHttpRequest *r, ArkAgentHttpCompletion *c) {
  Host *h = userdata;
  if (strcmp(r->url, MAPS) == 0) return mcp(h, r, c);
  if (strcmp(r->url, DOWN) == 0) {
    arkagent_http_fail(c, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "connection refused");
    return;
  }
  if (occurrences(r, TOKEN, 1) > 0) h->token_in_model++;
  int n = h->model_requests++;
  if (n < 4) body_into(r, h->model_bodies[n], sizeof h->model_bodies[0]);
  const char *reply = n == 0
    ? "{\"id\":\"c1\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
      "\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"maps__search\","
      "\"arguments\":\"{\\\"q\\\":\\\"cafe\\\"}\"}}]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":5,\"total_tokens\":55}}"
    : "{\"id\":\"c2\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
      "\"content\":\"3 cafes\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":80,\"completion_tokens\":2,\"total_tokens\":82}}";
  answer(c, 200, NULL, reply);
}

static int32_t auth_cb(void *userdata, const char *server, bool refresh, char *headers_json, size_t cap) {
  Host *h = userdata;
  h->auth_asked++;
  CHECK(strcmp(server, "maps") == 0 || strcmp(server, "down") == 0, "the server's name");
  (void)refresh;
  snprintf(headers_json, cap, "{\"Authorization\":\"Bearer " TOKEN "\"}");
  return 0;
}

/* Refuses: any value but 0 fails the server with mcp_auth. */
static int32_t refusing_auth_cb(void *userdata, const char *server, bool refresh, char *headers_json, size_t cap) {
  (void)userdata; (void)server; (void)refresh; (void)headers_json; (void)cap;
  return 1;
}

/* Writes text that is not headers JSON. */
static int32_t garbled_auth_cb(void *userdata, const char *server, bool refresh, char *headers_json, size_t cap) {
  (void)userdata; (void)server; (void)refresh;
  snprintf(headers_json, cap, "not json");
  return 0;
}

typedef struct {
  char all[16384];
} Events;

static void event_cb(void *userdata, const char *event_json) {
  Events *e = userdata;
  if (strlen(e->all) + strlen(event_json) + 2 < sizeof e->all) {
    strcat(e->all, event_json);
    strcat(e->all, "\n");
  }
}

#define MODEL "\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\"}"

static void tools_from_a_server(void) {
  Host h = {0};
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_set_mcp_auth(tools, auth_cb, &h), OK);
  const char *config = "{" MODEL ",\"session_id\":\"mcp-c\",\"mcp_servers\":["
                       "{\"name\":\"maps\",\"url\":\"" MAPS "\"},{\"name\":\"down\",\"url\":\"" DOWN "\"}]}";
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, tools, NULL, HTTP(http_cb, &h), &rt), OK);
  CHECK(h.mcp_requests == 0, "nothing sent before the first run");
  Events events = {{0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "cafes nearby?", &outcome), OK);
  CHECK(outcome && strstr(outcome, "\"final_text\":\"3 cafes\""), "the run completed");
  arkagent_string_free(outcome);
  CHECK(h.calls == 1 && strstr(h.call_body, "\"name\":\"search\"") && strstr(h.call_body, "\"q\":\"cafe\""), "tools/call with the server's name");
  CHECK(strstr(h.model_bodies[0], "\"name\":\"maps__search\"") != NULL, "offered as maps__search");
  CHECK(strstr(h.model_bodies[1], "found 3 cafes") != NULL, "the model reads the server's text");
  CHECK(strstr(events.all, "\"type\":\"mcp_server\",\"server\":\"maps\",\"state\":\"connected\"") != NULL, "connected event");
  CHECK(strstr(events.all, "\"server\":\"down\",\"state\":\"failed\"") && strstr(events.all, "\"error_code\":\"mcp_unreachable\""), "down fails only itself");
  CHECK(h.token_in_model == 0 && strstr(events.all, TOKEN) == NULL, "the token reaches the MCP server only");
  char *state = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &state), OK);
  CHECK(state && strstr(state, TOKEN) == NULL, "not in the export");
  arkagent_string_free(state);
  arkagent_runtime_free(rt);
  arkagent_tools_free(tools);
}

static void refusals(void) {
  Host h = {0};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new("{" MODEL ",\"mcp_servers\":[{\"name\":\"a_b\",\"url\":\"" MAPS "\"}]}", NULL, NULL, HTTP(http_cb, &h), &rt),
         ARK_AGENT_RESULT_INVALID_CONFIG);
  CHECK(rt == NULL, "nothing written on refusal");
  EXPECT(arkagent_runtime_new("{" MODEL ",\"mcp_servers\":[{\"name\":\"a\"}]}", NULL, NULL, HTTP(http_cb, &h), &rt), ARK_AGENT_RESULT_INVALID_JSON);
  EXPECT(arkagent_tools_set_mcp_auth(NULL, auth_cb, &h), ARK_AGENT_RESULT_NULL_ARGUMENT);
  /* Without the callback the server answers 401: the run goes on, the server fails with mcp_auth. */
  Events events = {{0}};
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_new("{" MODEL ",\"mcp_servers\":[{\"name\":\"maps\",\"url\":\"" MAPS "\"}]}", NULL, NULL, HTTP(http_cb, &h), &rt), OK);
  EXPECT(arkagent_runtime_subscribe(rt, event_cb, &events, &sub), OK);
  h.model_requests = 1; /* the model answers with text at once */
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "hi", &outcome), OK);
  arkagent_string_free(outcome);
  CHECK(strstr(events.all, "\"error_code\":\"mcp_auth\"") != NULL, "401 without a callback: mcp_auth");
  arkagent_runtime_free(rt);
  /* A callback returning non-zero, or writing text that does not parse: mcp_auth, nothing sent. */
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  ArkAgentMcpAuthCallback callbacks[2] = {refusing_auth_cb, garbled_auth_cb};
  for (int i = 0; i < 2; i++) {
    Events refused = {{0}};
    int before = h.mcp_requests;
    EXPECT(arkagent_tools_set_mcp_auth(tools, callbacks[i], &h), OK);
    EXPECT(arkagent_runtime_new("{" MODEL ",\"mcp_servers\":[{\"name\":\"maps\",\"url\":\"" MAPS "\"}]}", tools, NULL, HTTP(http_cb, &h), &rt), OK);
    EXPECT(arkagent_runtime_subscribe(rt, event_cb, &refused, &sub), OK);
    h.model_requests = 1;
    EXPECT(arkagent_runtime_run(rt, "hi", &outcome), OK);
    arkagent_string_free(outcome);
    CHECK(strstr(refused.all, "\"error_code\":\"mcp_auth\"") != NULL && h.mcp_requests == before, "a refusing callback: mcp_auth, no request");
    arkagent_runtime_free(rt);
  }
  arkagent_tools_free(tools);
}

int main(void) {
  tools_from_a_server();
  refusals();
  printf("mcp: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
