/*
 * PERF-8 / OHOS-7 through the C ABI: the HTTP request as a C host receives it (method,
 * URL, a header array, the body as pointer + length) and cancellation reaching the host
 * (the ArkAgentHttp cancel callback, arkagent_http_is_cancelled).
 *
 * `transport <case> [dir]` runs one case; with no case it runs them all. The `body` case
 * writes every request it receives to <dir>/req-N.meta (method, URL, stream flag, one
 * header per line) and <dir>/req-N.body (the body bytes exactly as received), which
 * bindings/c/tests/c_abi/main.rs parses. Built and run by bindings/c/tests/c_abi/main.rs and by
 * scripts/test-c-asan.sh (ASan, valgrind). Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define API_KEY "sk-c-TRANSPORT-27182818"

#define DONE ARK_AGENT_RESULT_ALREADY_COMPLETED

/* ------------------------------------------------------------- scripted replies */

static const char *TOOL_REPLY =
    "{\"id\":\"t\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{"
    "\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
    "{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"probe\",\"arguments\":\"{\\\"city\\\":\\\"Beijing\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":40,\"completion_tokens\":5,\"total_tokens\":45}}";

static const char *FINAL_REPLY =
    "{\"id\":\"f\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{"
    "\"role\":\"assistant\",\"content\":\"Sunny.\"},\"finish_reason\":\"stop\"}],"
    "\"usage\":{\"prompt_tokens\":60,\"completion_tokens\":2,\"total_tokens\":62}}";

static const char *SSE_FIRST =
    "data: {\"id\":\"s\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"finish_reason\":null}]}\n\n";
static const char *SSE_REST =
    "data: {\"id\":\"s\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,"
    "\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n"
    "data: [DONE]\n\n";

#define BASE_CONFIG "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"" API_KEY "\",\"model\":\"m\","
static const char *CONFIG = BASE_CONFIG "\"retry\":{\"max_attempts\":1}},\"system_prompt\":\"Be brief.\"}";
static const char *STREAM_CONFIG = BASE_CONFIG "\"stream\":true,\"retry\":{\"max_attempts\":1}}}";
static const char *TIMEOUT_CONFIG = BASE_CONFIG "\"retry\":{\"max_attempts\":1},\"request_timeout_ms\":100}}";
static const char *RETRY_CONFIG = BASE_CONFIG "\"retry\":{\"max_attempts\":2,\"initial_backoff_ms\":1,\"max_backoff_ms\":1}}}";

/* ------------------------------------------------------------- the host */

enum Mode {
  ANSWER,       /* complete each request inside send, from the scripted replies */
  RETRY,        /* answer the first request 503, the second from the replies */
  ANSWER_LATER, /* complete it 30 ms later from another thread */
  STREAM_NOW,   /* stream the whole body inside send (begin, chunks, end) */
  HOLD,         /* keep the completion, answer nothing */
  STREAM_HOLD,  /* from a thread: begin, one chunk, then wait for the cancel */
  STREAM_DONE,  /* from a thread: the whole SSE body including [DONE], no end; wait */
};

typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  enum Mode mode;
  const char *replies[4];
  const char *dir; /* where the body case writes requests (NULL: nowhere) */
  ArkAgentRuntime *rt;
  int sends;
  ArkAgentHttpCompletion *pending;
  pthread_t worker;
  int has_worker;
  /* what the cancel callback saw */
  int cancels;
  ArkAgentHttpCompletion *cancelled;
  int cancel_on_send_thread;
  char cancel_thread_name[32];
  const uint8_t *bodies[4]; /* where each request's body was lent */
  size_t body_lens[4];
  int chunks_sent;
  int chunks_at_cancel;
  int sends_finished; /* requests the host finished itself, before any cancel */
  int finish_inside_cancel;
  int finish_inside_cancel_result;
  int cancel_returned;
  pthread_t send_thread;
  int delta_seen;
} Host;

static void host_init(Host *h, enum Mode mode) {
  memset(h, 0, sizeof *h);
  pthread_mutex_init(&h->lock, NULL);
  pthread_cond_init(&h->cond, NULL);
  h->mode = mode;
}

static void host_destroy(Host *h) {
  pthread_mutex_destroy(&h->lock);
  pthread_cond_destroy(&h->cond);
}

static void on_cancel(void *userdata, ArkAgentHttpCompletion *completion) {
  Host *h = userdata;
  pthread_mutex_lock(&h->lock);
  h->cancels++;
  h->cancelled = completion;
  h->cancel_on_send_thread = pthread_equal(pthread_self(), h->send_thread);
  prctl(PR_GET_NAME, h->cancel_thread_name, 0, 0, 0);
  h->chunks_at_cancel = h->chunks_sent;
  int finish = h->finish_inside_cancel;
  pthread_mutex_unlock(&h->lock);
  CHECK(arkagent_http_is_cancelled(completion), "inside cancel the request reads as cancelled");
  /* A real host aborts its socket here; the abort path may finish the request at once. */
  if (finish) h->finish_inside_cancel_result = arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted");
  /* A slow abort: the blocking call that caused the cancel must still wait for it. */
  sleep_ms(20);
  pthread_mutex_lock(&h->lock);
  h->cancel_returned = 1;
  pthread_cond_broadcast(&h->cond);
  pthread_mutex_unlock(&h->lock);
}

/* Waits up to 5 s for the cancel callback; returns whether it came. */
static int wait_for_cancel(Host *h) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&h->lock);
  while (!h->cancel_returned) {
    if (pthread_cond_timedwait(&h->cond, &h->lock, &until) != 0) break;
  }
  int came = h->cancel_returned;
  pthread_mutex_unlock(&h->lock);
  return came;
}

static void set_pending(Host *h, ArkAgentHttpCompletion *completion) {
  pthread_mutex_lock(&h->lock);
  h->pending = completion;
  pthread_mutex_unlock(&h->lock);
}

static int has_pending(Host *h) {
  pthread_mutex_lock(&h->lock);
  int has = h->pending != NULL;
  pthread_mutex_unlock(&h->lock);
  return has;
}

static void write_request(const Host *h, int n, const ArkAgentHttpRequest *r) {
  if (h->dir == NULL) return;
  char path[1024];
  snprintf(path, sizeof path, "%s/req-%d.meta", h->dir, n);
  FILE *meta = fopen(path, "w");
  CHECK(meta != NULL, "meta file");
  if (meta == NULL) return;
  fprintf(meta, "method %s\nurl %s\nstream %d\n", r->method, r->url, r->stream ? 1 : 0);
  for (size_t i = 0; i < r->header_count; i++) fprintf(meta, "header %s: %s\n", r->headers[i].name, r->headers[i].value);
  fclose(meta);
  snprintf(path, sizeof path, "%s/req-%d.body", h->dir, n);
  FILE *body = fopen(path, "wb");
  CHECK(body != NULL, "body file");
  if (body == NULL) return;
  /* The bytes as the library lent them: no copy, no unescaping. */
  CHECK(fwrite(r->body, 1, r->body_len, body) == r->body_len, "body written");
  fclose(body);
}

static void stream_all(ArkAgentHttpCompletion *c, const char *body) {
  EXPECT(arkagent_http_stream_begin(c, 200, "[[\"content-type\",\"text/event-stream\"]]"), OK);
  size_t len = strlen(body);
  for (size_t off = 0; off < len; off += 16) {
    size_t n = len - off < 16 ? len - off : 16;
    EXPECT(arkagent_http_stream_chunk(c, (const uint8_t *)body + off, n), OK);
  }
}

static void *answer_later(void *arg) {
  Host *h = arg;
  sleep_ms(30);
  EXPECT(arkagent_http_complete(h->pending, 200, NULL, (const uint8_t *)FINAL_REPLY, strlen(FINAL_REPLY)), OK);
  pthread_mutex_lock(&h->lock);
  h->sends_finished++;
  pthread_mutex_unlock(&h->lock);
  return NULL;
}

static void *stream_then_wait(void *arg) {
  Host *h = arg;
  ArkAgentHttpCompletion *c = h->pending;
  EXPECT(arkagent_http_stream_begin(c, 200, NULL), OK);
  if (h->mode == STREAM_HOLD) {
    EXPECT(arkagent_http_stream_chunk(c, (const uint8_t *)SSE_FIRST, strlen(SSE_FIRST)), OK);
  } else {
    char all[2048];
    snprintf(all, sizeof all, "%s%s", SSE_FIRST, SSE_REST);
    EXPECT(arkagent_http_stream_chunk(c, (const uint8_t *)all, strlen(all)), OK);
  }
  pthread_mutex_lock(&h->lock);
  h->chunks_sent = 1;
  pthread_mutex_unlock(&h->lock);
  /* The next chunk would be read from the socket now: wait for the cancel instead. */
  CHECK(wait_for_cancel(h), "the cancel callback came while the host held the stream open");
  /* After the cancel: chunks are refused, the end is accepted and ignored. */
  EXPECT(arkagent_http_stream_chunk(c, (const uint8_t *)"data: x\n\n", 9), ARK_AGENT_RESULT_CANCELLED);
  EXPECT(arkagent_http_stream_end(c, NULL), OK);
  EXPECT(arkagent_http_stream_end(c, NULL), DONE);
  return NULL;
}

static void on_send(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  Host *h = userdata;
  pthread_mutex_lock(&h->lock);
  int i = h->sends++;
  h->send_thread = pthread_self();
  pthread_mutex_unlock(&h->lock);
  /* PERF-8: the request as fields; the key only in the Authorization header. */
  CHECK(strcmp(request->method, "POST") == 0, "method POST");
  CHECK(strcmp(request->url, "http://127.0.0.1:9/v1/chat/completions") == 0, "the URL");
  const char *auth = header_value(request, "Authorization");
  CHECK(auth != NULL && strcmp(auth, "Bearer " API_KEY) == 0, "the Authorization header");
  CHECK(occurrences(request, API_KEY, 0) == 0, "no API key in the body");
  CHECK(request->body_len > 2 && request->body[0] == '{' && request->body[request->body_len - 1] == '}', "the body is the JSON object");
  CHECK(!arkagent_http_is_cancelled(completion), "a fresh request is wanted");
  write_request(h, i, request);
  if (i < 4) {
    h->bodies[i] = request->body;
    h->body_lens[i] = request->body_len;
  }
  const char *reply = i < 4 ? h->replies[i] : NULL;
  switch (h->mode) {
    case ANSWER:
      if (reply == NULL) {
        EXPECT(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "no scripted reply"), OK);
      } else {
        EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)reply, strlen(reply)), OK);
      }
      h->sends_finished++;
      break;
    case RETRY:
      if (i == 0)
        EXPECT(arkagent_http_complete(completion, 503, NULL, (const uint8_t *)"{}", 2), OK);
      else
        EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)FINAL_REPLY, strlen(FINAL_REPLY)), OK);
      h->sends_finished++;
      break;
    case ANSWER_LATER:
      set_pending(h, completion);
      pthread_create(&h->worker, NULL, answer_later, h);
      h->has_worker = 1;
      break;
    case STREAM_NOW: {
      char all[2048];
      snprintf(all, sizeof all, "%s%s", SSE_FIRST, SSE_REST);
      stream_all(completion, all);
      EXPECT(arkagent_http_stream_end(completion, NULL), OK);
      h->sends_finished++;
      break;
    }
    case HOLD:
      set_pending(h, completion);
      break;
    case STREAM_HOLD:
    case STREAM_DONE:
      CHECK(request->stream, "a stream was asked for");
      set_pending(h, completion);
      pthread_create(&h->worker, NULL, stream_then_wait, h);
      h->has_worker = 1;
      break;
  }
}

static void join_worker(Host *h) {
  if (h->has_worker) pthread_join(h->worker, NULL);
  h->has_worker = 0;
}

static ArkAgentRuntime *runtime_for(Host *h, const char *config, int with_cancel) {
  ArkAgentHttp http = {on_send, with_cancel ? on_cancel : NULL, h};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(config, NULL, NULL, &http, &rt), OK);
  h->rt = rt;
  return rt;
}

/* Cancels the run from another thread once the host holds a request. */
static void *cancel_when_pending(void *arg) {
  Host *h = arg;
  for (int i = 0; i < 500; i++) {
    pthread_mutex_lock(&h->lock);
    int ready = h->pending != NULL && (h->mode == HOLD || h->delta_seen);
    pthread_mutex_unlock(&h->lock);
    if (ready) break;
    sleep_ms(10);
  }
  sleep_ms(20);
  EXPECT(arkagent_runtime_cancel(h->rt), OK);
  return NULL;
}

static void on_event(void *userdata, const char *event_json) {
  Host *h = userdata;
  if (strstr(event_json, "\"type\":\"text_delta\"") != NULL) {
    pthread_mutex_lock(&h->lock);
    h->delta_seen = 1;
    pthread_mutex_unlock(&h->lock);
  }
}

/* ------------------------------------------------------------- cases */

static void probe_cb(void *userdata, const char *call_json, ArkAgentToolCompletion *completion) {
  (void)userdata;
  CHECK(strstr(call_json, "Beijing") != NULL, "the tool got its arguments");
  EXPECT(arkagent_tool_complete(completion, "sunny, 31 C", 0), OK);
}

/* PERF-8: a tool call and the final answer; the bodies go to `dir` for the Rust side. */
static void case_body(const char *dir) {
  Host h;
  host_init(&h, ANSWER);
  h.replies[0] = TOOL_REPLY;
  h.replies[1] = FINAL_REPLY;
  h.dir = dir;
  ArkAgentTools *tools = NULL;
  EXPECT(arkagent_tools_new(&tools), OK);
  EXPECT(arkagent_tools_register(tools, "{\"name\":\"probe\",\"description\":\"weather\",\"parameters\":{\"type\":\"object\"}}", probe_cb, NULL), OK);
  ArkAgentHttp http = {on_send, on_cancel, &h};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, tools, NULL, &http, &rt), OK);
  arkagent_tools_free(tools);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Weather in Beijing? my key is " API_KEY, &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "Sunny.") != NULL, "the run finished");
  arkagent_string_free(outcome);
  CHECK(h.sends == 2, "two requests");
  CHECK(pthread_equal(h.send_thread, pthread_self()), "send ran on the thread running arkagent_runtime_run");
  CHECK(h.cancels == 0, "no cancel for answered requests");
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

/* OHOS-7: the run is cancelled while a stream is open and the host waits for more. */
static void case_cancel_stream(void) {
  Host h;
  host_init(&h, STREAM_HOLD);
  ArkAgentRuntime *rt = runtime_for(&h, STREAM_CONFIG, 1);
  uint64_t sub = 0;
  EXPECT(arkagent_runtime_subscribe(rt, on_event, &h, &sub), OK);
  pthread_t canceller;
  pthread_create(&canceller, NULL, cancel_when_pending, &h);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "stream please", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"cancelled\"") != NULL, "the run ended cancelled");
  arkagent_string_free(outcome);
  /* The blocking call returned only after the cancel callback had returned. */
  pthread_mutex_lock(&h.lock);
  int returned = h.cancel_returned, cancels = h.cancels;
  pthread_mutex_unlock(&h.lock);
  CHECK(returned && cancels == 1, "cancel called once, before the run returned");
  CHECK(h.cancelled == h.pending, "for the open request");
  CHECK(h.chunks_at_cancel == 1, "before any further chunk was requested");
  CHECK(!h.cancel_on_send_thread && strcmp(h.cancel_thread_name, "arkagent") == 0, "on a library thread");
  pthread_join(canceller, NULL);
  join_worker(&h);
  CHECK(h.cancels == 1, "exactly once");
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

/* PERF-8: a retry lends the very same body bytes again (shared, not re-encoded or copied). */
static void case_retry(void) {
  Host h;
  host_init(&h, RETRY);
  ArkAgentRuntime *rt = runtime_for(&h, RETRY_CONFIG, 1);
  EXPECT(arkagent_runtime_run(rt, "hi", NULL), OK);
  CHECK(h.sends == 2, "the 503 was retried");
  CHECK(h.bodies[0] != NULL && h.bodies[0] == h.bodies[1] && h.body_lens[0] == h.body_lens[1], "the same body pointer and length");
  CHECK(h.cancels == 0, "no cancel for answered requests");
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

/* OHOS-7: cancelled before the host answered: a non-streamed request, which the host
 * finishes from inside its cancel callback, and a stream that has not begun, which the
 * host begins and ends afterwards. */
static void case_cancel_waiting(int stream) {
  Host h;
  host_init(&h, HOLD);
  h.finish_inside_cancel = !stream;
  ArkAgentRuntime *rt = runtime_for(&h, stream ? STREAM_CONFIG : CONFIG, 1);
  pthread_t canceller;
  pthread_create(&canceller, NULL, cancel_when_pending, &h);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "never answered", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"cancelled\"") != NULL, "the run ended cancelled");
  arkagent_string_free(outcome);
  pthread_join(canceller, NULL);
  CHECK(h.cancels == 1 && h.cancel_returned, "cancel called once before the run returned");
  CHECK(h.cancelled == h.pending, "for the held request");
  CHECK(strcmp(h.cancel_thread_name, "arkagent") == 0, "on a library thread");
  if (stream) {
    /* Begun after the cancel: accepted, chunks refused, the end accepted and ignored. */
    EXPECT(arkagent_http_stream_begin(h.pending, 200, NULL), OK);
    EXPECT(arkagent_http_stream_chunk(h.pending, (const uint8_t *)SSE_FIRST, strlen(SSE_FIRST)), ARK_AGENT_RESULT_CANCELLED);
    EXPECT(arkagent_http_stream_end(h.pending, NULL), OK);
  } else {
    EXPECT(h.finish_inside_cancel_result, OK);
  }
  /* Finished: every later call is refused as already completed. */
  EXPECT(arkagent_http_complete(h.pending, 200, NULL, NULL, 0), DONE);
  arkagent_runtime_free(rt);
  EXPECT(arkagent_shutdown(), OK);
  CHECK(h.cancels == 1, "still once");
  host_destroy(&h);
}

/* OHOS-7: a request the host never answers times out; cancel reaches the host; a late
 * answer is accepted and ignored. */
static void case_timeout(void) {
  Host h;
  host_init(&h, HOLD);
  ArkAgentRuntime *rt = runtime_for(&h, TIMEOUT_CONFIG, 1);
  EXPECT(arkagent_runtime_run(rt, "slow", NULL), ARK_AGENT_RESULT_LLM_TIMEOUT);
  CHECK(h.cancels == 1 && h.cancel_returned, "the timeout called cancel before the run returned");
  CHECK(h.cancelled == h.pending && h.pending != NULL, "for the held request");
  CHECK(arkagent_http_is_cancelled(h.pending), "it reads as cancelled");
  EXPECT(arkagent_http_complete(h.pending, 200, NULL, (const uint8_t *)FINAL_REPLY, strlen(FINAL_REPLY)), OK);
  EXPECT(arkagent_http_complete(h.pending, 200, NULL, NULL, 0), DONE);
  arkagent_runtime_free(rt);
  CHECK(h.cancels == 1, "once");
  host_destroy(&h);
}

/* OHOS-7: requests the host finished — inside send, later from a thread, streamed to the
 * end — never get a cancel, not even when the runtime is freed or the library shut down. */
static void case_normal(void) {
  enum Mode modes[] = {ANSWER, ANSWER_LATER, STREAM_NOW};
  for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
    Host h;
    host_init(&h, modes[m]);
    h.replies[0] = FINAL_REPLY;
    h.replies[1] = FINAL_REPLY;
    ArkAgentRuntime *rt = runtime_for(&h, modes[m] == STREAM_NOW ? STREAM_CONFIG : CONFIG, 1);
    for (int run = 0; run < 2; run++) {
      EXPECT(arkagent_runtime_run(rt, "hi", NULL), OK);
      join_worker(&h);
    }
    arkagent_runtime_free(rt);
    EXPECT(arkagent_shutdown(), OK);
    char what[96];
    snprintf(what, sizeof what, "no cancel for finished requests (mode %d)", (int)modes[m]);
    CHECK(h.sends == 2 && h.sends_finished == 2 && h.cancels == 0, what);
    host_destroy(&h);
  }
}

/* OHOS-7: no cancel callback (NULL) is allowed; a polling host sees the cancel. */
static void case_null_cancel(void) {
  Host h;
  host_init(&h, HOLD);
  ArkAgentRuntime *rt = runtime_for(&h, CONFIG, 0);
  pthread_t canceller;
  pthread_create(&canceller, NULL, cancel_when_pending, &h);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "never answered", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"cancelled\"") != NULL, "the run ended cancelled");
  arkagent_string_free(outcome);
  pthread_join(canceller, NULL);
  CHECK(h.cancels == 0, "no callback to call");
  CHECK(arkagent_http_is_cancelled(h.pending), "polling sees the cancel by the time the run returned");
  EXPECT(arkagent_http_fail(h.pending, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted"), OK);
  EXPECT(arkagent_http_fail(h.pending, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted"), DONE);
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

/* OHOS-7: the stream delivered [DONE] but the host has not ended it: the body is no
 * longer needed, so cancel tells the host to drop the connection. */
static void case_done_early(void) {
  Host h;
  host_init(&h, STREAM_DONE);
  ArkAgentRuntime *rt = runtime_for(&h, STREAM_CONFIG, 1);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "stream please", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "\"final_text\":\"Hello\"") != NULL, "the answer is complete");
  arkagent_string_free(outcome);
  CHECK(h.cancels == 1 && h.cancel_returned, "cancel after [DONE], before the run returned");
  join_worker(&h);
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

/* OHOS-7: the summarizer's request times out inside arkagent_runtime_compress_now, which
 * returns only after the cancel callback has returned. */
static void case_compress_timeout(void) {
  static const char *COMPRESS_CONFIG =
      BASE_CONFIG "\"retry\":{\"max_attempts\":1},\"request_timeout_ms\":100},"
      "\"compression\":{\"total_token_threshold\":100,\"keep_recent_message_count\":2,\"summarizer_max_input_tokens\":8000}}";
  static const char *LONG_STATE =
      "{\"version\":1,\"session_id\":\"c-transport\","
      "\"usages\":[{\"prompt_tokens\":500,\"completion_tokens\":1,\"total_tokens\":501}],"
      "\"history\":{\"messages\":["
      "{\"role\":\"user\",\"content\":\"Plan a long trip.\"},{\"role\":\"assistant\",\"content\":\"Sure.\"},"
      "{\"role\":\"user\",\"content\":\"Compare the temperatures.\"},{\"role\":\"assistant\",\"content\":\"Hot.\"},"
      "{\"role\":\"user\",\"content\":\"ok\"},{\"role\":\"assistant\",\"content\":\"done\"}]}}";
  Host h;
  host_init(&h, HOLD);
  ArkAgentRuntime *rt = runtime_for(&h, COMPRESS_CONFIG, 1);
  EXPECT(arkagent_runtime_import_state(rt, LONG_STATE), OK);
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  CHECK(result != NULL && strstr(result, "\"outcome\":\"failed\"") != NULL, "the compression failed");
  arkagent_string_free(result);
  CHECK(h.sends == 1, "the summarizer asked the model");
  CHECK(h.cancels == 1 && h.cancel_returned, "cancel called before compress_now returned");
  EXPECT(arkagent_http_fail(h.pending, ARK_AGENT_TRANSPORT_ERROR_TIMEOUT, NULL), OK);
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

static int32_t plain_worker(void *userdata, const char *worker_name, ArkAgentWorkerBuilder *builder) {
  (void)userdata;
  (void)worker_name;
  (void)builder;
  return OK;
}

/* OHOS-7: a worker's request times out inside arkagent_runtime_run_decomposed, which
 * returns only after the cancel callback has returned. */
static void case_decomposed_timeout(void) {
  Host h;
  host_init(&h, HOLD);
  ArkAgentWorkers *workers = NULL;
  EXPECT(arkagent_workers_new(&workers), OK);
  EXPECT(arkagent_workers_add(workers, "w", "a worker", plain_worker, NULL), OK);
  ArkAgentHttp http = {on_send, on_cancel, &h};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(TIMEOUT_CONFIG, NULL, workers, &http, &rt), OK);
  arkagent_workers_free(workers);
  h.rt = rt;
  char *results = NULL;
  EXPECT(arkagent_runtime_run_decomposed(rt, "[{\"assignee\":\"w\",\"task_description\":\"slow\"}]", 1, &results), OK);
  CHECK(results != NULL && strstr(results, "\"is_error\":true") != NULL, "the task failed");
  arkagent_string_free(results);
  CHECK(h.sends == 1, "the worker asked the model");
  CHECK(h.cancels == 1 && h.cancel_returned, "cancel called before run_decomposed returned");
  EXPECT(arkagent_http_fail(h.pending, ARK_AGENT_TRANSPORT_ERROR_TIMEOUT, NULL), OK);
  arkagent_runtime_free(rt);
  host_destroy(&h);
}

/* OHOS-7: freeing the runtime during a held request cancels it. */
static void *free_later(void *arg) {
  Host *h = arg;
  for (int i = 0; i < 500 && !has_pending(h); i++) sleep_ms(10);
  sleep_ms(20);
  arkagent_runtime_free(h->rt);
  return NULL;
}

static void case_free(void) {
  Host h;
  host_init(&h, HOLD);
  ArkAgentRuntime *rt = runtime_for(&h, CONFIG, 1);
  pthread_t freer;
  pthread_create(&freer, NULL, free_later, &h);
  char *outcome = NULL;
  int r = arkagent_runtime_run(rt, "wait", &outcome);
  CHECK(r == OK || r == ARK_AGENT_RESULT_CANCELLED, "the freed runtime's run ends");
  arkagent_string_free(outcome);
  pthread_join(freer, NULL);
  CHECK(h.cancels == 1 && h.cancel_returned, "freeing the runtime called cancel before the run returned");
  EXPECT(arkagent_http_complete(h.pending, 200, NULL, NULL, 0), OK);
  EXPECT(arkagent_http_complete(h.pending, 200, NULL, NULL, 0), DONE);
  host_destroy(&h);
}

/* OHOS-7: a blocking call waits for the cancel callbacks it caused, not for another
 * call's: while runtime B's cancel callback (its request timed out on another thread) is
 * still running, a run on runtime A returns. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int cancel_started, release, cancel_returned;
} slow = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void slow_send(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)request;
  (void)completion; /* held: answered only from the cancel callback */
}

static void slow_cancel(void *userdata, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&slow.lock);
  slow.cancel_started = 1;
  pthread_cond_broadcast(&slow.cond);
  while (!slow.release) {
    if (pthread_cond_timedwait(&slow.cond, &slow.lock, &until) != 0) break;
  }
  slow.cancel_returned = 1;
  pthread_mutex_unlock(&slow.lock);
  EXPECT(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted"), OK);
}

static void *run_slow(void *arg) {
  EXPECT(arkagent_runtime_run(arg, "slow", NULL), ARK_AGENT_RESULT_LLM_TIMEOUT);
  return NULL;
}

static void case_independent(void) {
  ArkAgentHttp http = {slow_send, slow_cancel, NULL};
  ArkAgentRuntime *b = NULL;
  EXPECT(arkagent_runtime_new(TIMEOUT_CONFIG, NULL, NULL, &http, &b), OK);
  pthread_t runner;
  pthread_create(&runner, NULL, run_slow, b);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&slow.lock);
  while (!slow.cancel_started) {
    if (pthread_cond_timedwait(&slow.cond, &slow.lock, &until) != 0) break;
  }
  CHECK(slow.cancel_started, "runtime B's timeout called its cancel callback");
  pthread_mutex_unlock(&slow.lock);

  Host h;
  host_init(&h, ANSWER);
  h.replies[0] = FINAL_REPLY;
  ArkAgentRuntime *a = runtime_for(&h, CONFIG, 1);
  EXPECT(arkagent_runtime_run(a, "hi", NULL), OK);
  pthread_mutex_lock(&slow.lock);
  CHECK(!slow.cancel_returned, "runtime A's run returned while B's cancel callback still ran");
  slow.release = 1;
  pthread_cond_broadcast(&slow.cond);
  pthread_mutex_unlock(&slow.lock);
  pthread_join(runner, NULL);
  CHECK(slow.cancel_returned, "B's run returned after its cancel callback");
  arkagent_runtime_free(a);
  arkagent_runtime_free(b);
  host_destroy(&h);
}

/* OHOS-7: the cancel callback may run while `send` for the same request is still running
 * (on another thread): a run cancelled during send reaches the host at once. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int in_send, cancel_called, cancel_while_in_send;
  ArkAgentRuntime *rt;
} during = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, NULL};

static void during_send(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)request;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&during.lock);
  during.in_send = 1;
  pthread_cond_broadcast(&during.cond);
  while (!during.cancel_called) {
    if (pthread_cond_timedwait(&during.cond, &during.lock, &until) != 0) break;
  }
  during.in_send = 0;
  pthread_mutex_unlock(&during.lock);
  /* The abort path finishes it; ignored after the cancel, and releases the handle. */
  EXPECT(arkagent_http_fail(completion, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted"), OK);
}

static void during_cancel(void *userdata, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)completion;
  pthread_mutex_lock(&during.lock);
  during.cancel_called++;
  during.cancel_while_in_send = during.in_send;
  pthread_cond_broadcast(&during.cond);
  pthread_mutex_unlock(&during.lock);
}

static void *cancel_in_send(void *arg) {
  (void)arg;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&during.lock);
  while (!during.in_send) {
    if (pthread_cond_timedwait(&during.cond, &during.lock, &until) != 0) break;
  }
  pthread_mutex_unlock(&during.lock);
  EXPECT(arkagent_runtime_cancel(during.rt), OK);
  return NULL;
}

static void case_cancel_in_send(void) {
  ArkAgentHttp http = {during_send, during_cancel, NULL};
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, &http, &during.rt), OK);
  pthread_t canceller;
  pthread_create(&canceller, NULL, cancel_in_send, NULL);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(during.rt, "cancel me while sending", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"cancelled\"") != NULL, "the run ended cancelled");
  arkagent_string_free(outcome);
  pthread_join(canceller, NULL);
  CHECK(during.cancel_called == 1, "cancel called once");
  CHECK(during.cancel_while_in_send, "cancel came while send was still running");
  arkagent_runtime_free(during.rt);
}

/* OHOS-7's one exception (ArkAgentHttpCancelCallback): a timeout is noticed on the
 * blocking call's thread, so a send that blocks past request_timeout_ms until its response
 * arrives is not cut off — what it finished is used, and cancel is never called. */
static void blocking_send(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)request;
  sleep_ms(250);
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)FINAL_REPLY, strlen(FINAL_REPLY)), OK);
}

static void blocking_cancel(void *userdata, ArkAgentHttpCompletion *completion) {
  (void)completion;
  (*(int *)userdata)++;
}

static void case_blocking_send(void) {
  int cancels = 0;
  ArkAgentHttp http = {blocking_send, blocking_cancel, &cancels};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(TIMEOUT_CONFIG, NULL, NULL, &http, &rt), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "block in send", &outcome), OK);
  CHECK(outcome != NULL && strstr(outcome, "Sunny.") != NULL, "what the blocking send finished is used");
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
  CHECK(cancels == 0, "cancel never called for it");
}

/* OHOS-7: a finishing call made inside a cancel callback never waits for another
 * request's running cancel callback: two callbacks that finish each other's requests at
 * the same time do not deadlock. */
static struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  ArkAgentHttpCompletion *pending[2];
  int in_cancel;
  int both_in_cancel[2];
  int other_result[2];
} cross = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {NULL, NULL}, 0, {0, 0}, {-1, -1}};

static void cross_send(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)request;
  int i = *(int *)userdata;
  pthread_mutex_lock(&cross.lock);
  cross.pending[i] = completion; /* never answered: the request times out */
  pthread_mutex_unlock(&cross.lock);
}

static void cross_cancel(void *userdata, ArkAgentHttpCompletion *completion) {
  (void)completion;
  int i = *(int *)userdata;
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&cross.lock);
  cross.in_cancel++;
  pthread_cond_broadcast(&cross.cond);
  while (cross.in_cancel < 2) {
    if (pthread_cond_timedwait(&cross.cond, &cross.lock, &until) != 0) break;
  }
  cross.both_in_cancel[i] = cross.in_cancel == 2;
  ArkAgentHttpCompletion *other = cross.pending[1 - i];
  pthread_mutex_unlock(&cross.lock);
  /* The other request's cancel callback is running right now: this must not wait for it. */
  cross.other_result[i] = (int)arkagent_http_fail(other, ARK_AGENT_TRANSPORT_ERROR_NETWORK, "aborted by the other");
}

static void *run_cross(void *arg) {
  EXPECT(arkagent_runtime_run(arg, "cross", NULL), ARK_AGENT_RESULT_LLM_TIMEOUT);
  return NULL;
}

static void case_cross_finish(void) {
  static int ids[2] = {0, 1};
  ArkAgentRuntime *rt[2] = {NULL, NULL};
  pthread_t runner[2];
  alarm(60); /* a deadlock kills the program (and fails the test) instead of hanging it */
  for (int i = 0; i < 2; i++) {
    ArkAgentHttp http = {cross_send, cross_cancel, &ids[i]};
    EXPECT(arkagent_runtime_new(TIMEOUT_CONFIG, NULL, NULL, &http, &rt[i]), OK);
  }
  for (int i = 0; i < 2; i++) pthread_create(&runner[i], NULL, run_cross, rt[i]);
  for (int i = 0; i < 2; i++) pthread_join(runner[i], NULL);
  CHECK(cross.both_in_cancel[0] && cross.both_in_cancel[1], "both cancel callbacks ran at the same time");
  for (int i = 0; i < 2; i++) {
    /* The other request was cancelled and not finished yet: OK (ignored, handle released). */
    CHECK(cross.other_result[i] == ARK_AGENT_RESULT_OK, "finishing the other request inside a cancel callback gave OK");
  }
  for (int i = 0; i < 2; i++) arkagent_runtime_free(rt[i]);
  alarm(0);
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "all";
  int all = strcmp(which, "all") == 0, ran = 0;
#define CASE(name, call)                         \
  if (all || strcmp(which, name) == 0) {         \
    call;                                        \
    ran++;                                       \
  }
  CASE("body", case_body(argc > 2 ? argv[2] : NULL));
  CASE("cancel_stream", case_cancel_stream());
  CASE("cancel_waiting", case_cancel_waiting(0));
  CASE("cancel_not_begun", case_cancel_waiting(1));
  CASE("retry", case_retry());
  CASE("timeout", case_timeout());
  CASE("normal", case_normal());
  CASE("null_cancel", case_null_cancel());
  CASE("done_early", case_done_early());
  CASE("free", case_free());
  CASE("compress_timeout", case_compress_timeout());
  CASE("decomposed_timeout", case_decomposed_timeout());
  CASE("independent", case_independent());
  CASE("cancel_in_send", case_cancel_in_send());
  CASE("cross_finish", case_cross_finish());
  CASE("blocking_send", case_blocking_send());
  CHECK(ran > 0, "a known case");
  EXPECT(arkagent_shutdown(), OK);
  printf("transport %s: %d passed, %d failed\n", which, passed, failed);
  return failed == 0 ? 0 : 1;
}
