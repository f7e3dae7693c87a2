/*
 * DX-1 through the C ABI: the README's "## Quickstart: C", transcribed into a program that
 * runs, with a `send` that answers as an OpenAI-compatible server does (a Chat Completions
 * JSON body, or SSE when the request asks for a stream). Each section holds one part of
 * the snippet (its comments included) or of the sentences below it to what it says:
 * - bad_configs: arkagent_runtime_new with a bad config is not OK, writes nothing to `rt`,
 *   and arkagent_last_error_message fills the README's `char msg[256]` (NUL-terminated,
 *   cut at a UTF-8 character boundary, the full length returned); the rest of the snippet
 *   run on that NULL `rt` is refused with a code, never a crash;
 * - quickstart (twice, each time a new runtime and store handle on one file under a
 *   "/…/files/" directory): the first attach starts "chat-1", the second resumes it (its
 *   history before the run, its request carrying run 1's "Hello" and answer); `send` on the
 *   thread of arkagent_runtime_run; method, NUL-terminated URL, the Authorization header
 *   among the headers (the key nowhere else), the body as body/body_len (the JSON to send:
 *   one JSON object, exactly body_len bytes), `stream`; the answer given as pointer +
 *   length (bytes after body_len are not read); arkagent_shutdown stops the library's
 *   threads and the next blocking call starts them again;
 * - answer_later: `done` completed later from another thread; the run blocks until then;
 *   arkagent_shutdown during it is refused (RUN_IN_PROGRESS);
 * - stream_now / stream_done_early: arkagent_http_stream_begin / _chunk / _end; a stream
 *   whose [DONE] came first is no longer needed (cancel called, the late end ignored);
 * - cancelled / timed_out: the cancel callback, called once, on a library thread, then
 *   `done` finished as usual (that call ignored, a second one ALREADY_COMPLETED);
 * - null_cancel: "cancel may be NULL";
 * - compressor: a C compressor through arkagent_runtime_new_with_compressor, answered with
 *   arkagent_compress_complete / _fail, wins over the config's "compression" (still
 *   checked).
 * Built and run by bindings/c/tests/c_abi/readme_quickstart.rs (which also checks that the
 * README's statements appear here as printed). Prints "N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

/* The README's config, as its arkagent_runtime_new call spells it. */
#define README_MODEL                                                                               \
  "{\"model\":{\"base_url\":\"https://api.deepseek.com/v1\","                                    \
  "\"api_key\":\"sk-…\",\"model\":\"deepseek-v4-flash\""
#define README_CONFIG README_MODEL "},\"compression\":{}}"
#define README_KEY "sk-…"
#define README_URL "https://api.deepseek.com/v1/chat/completions"

/* ------------------------------------------------------------------ the host */

enum Mode {
  ANSWER_NOW,   /* complete inside send, from a buffer with bytes after body_len */
  ANSWER_LATER, /* complete 60 ms later from another thread */
  STREAM_NOW,   /* stream the SSE answer inside send: begin, 7-byte chunks, end */
  STREAM_DONE,  /* from a thread: the whole SSE body with [DONE], then wait for the cancel */
  HOLD,         /* keep `done`, answer nothing */
};

/* The README passes NULL userdata: its host keeps its state where its callbacks find it. */
typedef struct {
  pthread_mutex_t lock;
  pthread_cond_t cond;
  enum Mode mode;
  const char *content; /* what the model answers */
  pthread_t run_thread;
  int sends;
  int off_run_thread; /* sends not on the thread running arkagent_runtime_run */
  int ud_not_null;    /* callbacks that got a userdata other than the NULL given */
  /* the last request, copied in send ("copy what you keep") */
  char method[16];
  char url[512];
  char auth[256];
  int auth_headers;
  int key_elsewhere; /* the key in the URL, the body or another header */
  int headers_ok;    /* every header's name and value readable, NUL-terminated */
  int body_one_object;
  int stream;
  char *body;
  size_t body_len;
  /* a request kept open */
  ArkAgentHttpCompletion *held;
  pthread_t worker;
  int has_worker;
  int answered; /* set by the later thread just before it completes */
  int shutdown_during_run;
  /* the cancel callback */
  int cancels;
  ArkAgentHttpCompletion *cancelled;
  int cancel_on_run_thread;
  char cancel_thread[32];
  int cancel_returned;
} Host;

static Host host = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void host_reset(enum Mode mode, const char *content) {
  pthread_mutex_lock(&host.lock);
  free(host.body);
  host.body = NULL;
  host.body_len = 0;
  host.mode = mode;
  host.content = content;
  host.run_thread = pthread_self();
  host.sends = host.off_run_thread = host.ud_not_null = 0;
  host.held = host.cancelled = NULL;
  host.has_worker = host.answered = host.shutdown_during_run = 0;
  host.cancels = host.cancel_on_run_thread = host.cancel_returned = 0;
  host.cancel_thread[0] = 0;
  pthread_mutex_unlock(&host.lock);
}

static void join_worker(void) {
  if (host.has_worker) pthread_join(host.worker, NULL);
  host.has_worker = 0;
}

/* A Chat Completions response as an OpenAI-compatible server sends it. */
static int completion_json(char *out, size_t cap, const char *content) {
  return snprintf(out, cap,
                  "{\"id\":\"chatcmpl-qs1\",\"object\":\"chat.completion\",\"created\":1718000000,"
                  "\"model\":\"deepseek-v4-flash\",\"system_fingerprint\":\"fp_qs\",\"choices\":[{\"index\":0,"
                  "\"message\":{\"role\":\"assistant\",\"content\":\"%s\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],"
                  "\"usage\":{\"prompt_tokens\":21,\"completion_tokens\":6,\"total_tokens\":27}}",
                  content);
}

/* The same answer as an SSE stream, content in two deltas, then [DONE]. */
static int completion_sse(char *out, size_t cap, const char *content) {
  size_t half = strlen(content) / 2;
  return snprintf(out, cap,
                  "data: {\"id\":\"chatcmpl-qs2\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,"
                  "\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
                  "\"finish_reason\":null}]}\n\n"
                  "data: {\"id\":\"chatcmpl-qs2\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,"
                  "\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%.*s\"},"
                  "\"finish_reason\":null}]}\n\n"
                  "data: {\"id\":\"chatcmpl-qs2\",\"object\":\"chat.completion.chunk\",\"created\":1718000000,"
                  "\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},"
                  "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":21,\"completion_tokens\":6,\"total_tokens\":27}}\n\n"
                  "data: [DONE]\n\n",
                  (int)half, content, content + half);
}

/* Whether `len` bytes at `p` are exactly one JSON object: braces balanced outside strings,
 * closing only at the last byte. Reads nothing past `len`. */
static int one_json_object(const uint8_t *p, size_t len) {
  if (len < 2 || p[0] != '{') return 0;
  int depth = 0, in_string = 0;
  for (size_t i = 0; i < len; i++) {
    uint8_t c = p[i];
    if (in_string) {
      if (c == '\\') i++;
      else if (c == '"') in_string = 0;
      continue;
    }
    if (c == '"') in_string = 1;
    else if (c == '{' || c == '[') depth++;
    else if (c == '}' || c == ']') {
      depth--;
      if (depth == 0 && i != len - 1) return 0;
    }
  }
  return depth == 0 && !in_string;
}

/* Whether a NUL-terminated string is at most `max` bytes long (stops looking there). */
static int bounded(const char *s, size_t max) {
  if (s == NULL) return 0;
  for (size_t i = 0; i <= max; i++)
    if (s[i] == 0) return 1;
  return 0;
}

/* Whether `s` is valid UTF-8 (no character cut at its end). */
static int valid_utf8(const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    int n = *p < 0x80 ? 0 : (*p >> 5) == 6 ? 1 : (*p >> 4) == 14 ? 2 : (*p >> 3) == 30 ? 3 : -1;
    if (n < 0) return 0;
    p++;
    for (int i = 0; i < n; i++, p++)
      if ((*p & 0xC0) != 0x80) return 0;
  }
  return 1;
}

/* How many of this process's threads are named "arkagent" (the library's); with
 * `print`, their names go to stderr. */
static int library_threads_print(int print) {
  DIR *dir = opendir("/proc/self/task");
  if (dir == NULL) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[300], name[64] = {0};
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(name, sizeof name, f) != NULL && strcmp(name, "arkagent\n") == 0) {
      n++;
      if (print) fprintf(stderr, "quickstart: thread %s named %s", e->d_name, name);
    }
    fclose(f);
  }
  closedir(dir);
  return n;
}

static int library_threads(void) { return library_threads_print(0); }

static int wait_for_cancel(void) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 5;
  pthread_mutex_lock(&host.lock);
  while (!host.cancel_returned)
    if (pthread_cond_timedwait(&host.cond, &host.lock, &until) != 0) break;
  int came = host.cancel_returned;
  pthread_mutex_unlock(&host.lock);
  return came;
}

static void *answer_later(void *arg) {
  ArkAgentHttpCompletion *done = arg;
  sleep_ms(60);
  /* The copy kept from send is still there; the request itself is gone. */
  pthread_mutex_lock(&host.lock);
  int kept = host.body != NULL && strstr(host.body, "Hello") != NULL;
  pthread_mutex_unlock(&host.lock);
  CHECK(kept, "the body copied in send is what the later thread reads");
  /* "Call arkagent_shutdown() after the last blocking call": during one it stops nothing. */
  host.shutdown_during_run = arkagent_shutdown();
  CHECK(library_threads() >= 1, "the library's threads run on after the refused shutdown");
  char body[1024];
  int body_len = completion_json(body, sizeof body, host.content);
  pthread_mutex_lock(&host.lock);
  host.answered = 1;
  pthread_mutex_unlock(&host.lock);
  EXPECT(arkagent_http_complete(done, 200, "[{\"name\":\"content-type\",\"value\":\"application/json\"}]", (const uint8_t *)body, (size_t)body_len), OK);
  EXPECT(arkagent_http_complete(done, 200, NULL, (const uint8_t *)body, (size_t)body_len), ARK_AGENT_RESULT_ALREADY_COMPLETED);
  return NULL;
}

static void *stream_then_wait(void *arg) {
  ArkAgentHttpCompletion *done = arg;
  char sse[4096];
  int len = completion_sse(sse, sizeof sse, host.content);
  EXPECT(arkagent_http_stream_begin(done, 200, "[{\"name\":\"content-type\",\"value\":\"text/event-stream\"}]"), OK);
  EXPECT(arkagent_http_stream_chunk(done, (const uint8_t *)sse, (size_t)len), OK);
  /* A socket would be read on; the library has its [DONE] and stops wanting the rest. */
  CHECK(wait_for_cancel(), "cancel: the stream's [DONE] came before its end");
  EXPECT(arkagent_http_stream_chunk(done, (const uint8_t *)"data: x\n\n", 9), ARK_AGENT_RESULT_CANCELLED);
  EXPECT(arkagent_http_stream_end(done, NULL), OK);
  EXPECT(arkagent_http_stream_end(done, NULL), ARK_AGENT_RESULT_ALREADY_COMPLETED);
  return NULL;
}

/* request->method, ->url (NUL-terminated), ->headers[0..header_count) (name/value; the
 * Authorization header is one of them), ->body / ->body_len (the JSON to send, as is:
 * not NUL-terminated), ->stream. All valid only during this call: copy what you keep. */
static void send(void *ud, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *done) {
  pthread_mutex_lock(&host.lock);
  host.sends++;
  if (!pthread_equal(pthread_self(), host.run_thread)) host.off_run_thread++;
  if (ud != NULL) host.ud_not_null++;
  CHECK(bounded(request->method, 15) && bounded(request->url, 500), "method and URL NUL-terminated");
  snprintf(host.method, sizeof host.method, "%s", request->method);
  snprintf(host.url, sizeof host.url, "%s", request->url);
  host.auth[0] = 0;
  host.auth_headers = 0;
  host.headers_ok = request->header_count > 0 && request->headers != NULL;
  host.key_elsewhere = strstr(request->url, README_KEY) != NULL || occurrences(request, README_KEY, 0) > 0;
  for (size_t i = 0; host.headers_ok && i < request->header_count; i++) {
    const ArkAgentHttpHeader *h = &request->headers[i];
    if (!bounded(h->name, 200) || !bounded(h->value, 4000)) {
      host.headers_ok = 0;
      break;
    }
    if (ascii_ieq(h->name, "Authorization")) {
      host.auth_headers++;
      snprintf(host.auth, sizeof host.auth, "%s", h->value);
    } else if (strstr(h->value, README_KEY) != NULL || strstr(h->name, README_KEY) != NULL) {
      host.key_elsewhere = 1;
    }
  }
  host.body_one_object = one_json_object(request->body, request->body_len);
  host.stream = request->stream;
  free(host.body);
  host.body = body_dup(request);
  host.body_len = request->body_len;
  enum Mode mode = host.mode;
  pthread_mutex_unlock(&host.lock);

  /* start the request with your client, then (now or later, from any thread): */
  switch (mode) {
    case ANSWER_NOW: {
      /* The answer as pointer + length: the bytes after body_len are not the answer. */
      char buf[1200];
      size_t body_len = (size_t)completion_json(buf, sizeof buf - 16, host.content);
      memcpy(buf + body_len, "}]GARBAGE\"{", 11);
      const char *body = buf;
      EXPECT(arkagent_http_complete(done, 200, NULL, (const uint8_t *)body, body_len), OK);
      break;
    }
    case ANSWER_LATER:
      host.has_worker = pthread_create(&host.worker, NULL, answer_later, done) == 0;
      CHECK(host.has_worker, "the later thread started");
      break;
    case STREAM_NOW: {
      /* or stream: arkagent_http_stream_begin / _chunk / _end */
      char sse[4096];
      size_t len = (size_t)completion_sse(sse, sizeof sse, host.content);
      EXPECT(arkagent_http_stream_begin(done, 200, NULL), OK);
      /* 7-byte chunks: boundaries inside an event, a line and the UTF-8 of "…". */
      for (size_t off = 0; off < len; off += 7)
        EXPECT(arkagent_http_stream_chunk(done, (const uint8_t *)sse + off, len - off < 7 ? len - off : 7), OK);
      EXPECT(arkagent_http_stream_end(done, NULL), OK);
      break;
    }
    case STREAM_DONE:
      host.held = done;
      host.has_worker = pthread_create(&host.worker, NULL, stream_then_wait, done) == 0;
      CHECK(host.has_worker, "the streaming thread started");
      break;
    case HOLD:
      pthread_mutex_lock(&host.lock);
      host.held = done;
      pthread_mutex_unlock(&host.lock);
      break;
  }
}

/* The run was cancelled, the request timed out or is no longer needed: abort the socket.
 * Called once, on a library thread; then finish `done` as usual (that call is ignored). */
static void cancel(void *ud, ArkAgentHttpCompletion *done) {
  pthread_mutex_lock(&host.lock);
  host.cancels++;
  host.cancelled = done;
  if (ud != NULL) host.ud_not_null++;
  host.cancel_on_run_thread = pthread_equal(pthread_self(), host.run_thread);
  prctl(PR_GET_NAME, host.cancel_thread, 0, 0, 0);
  host.cancel_returned = 1;
  pthread_cond_broadcast(&host.cond);
  pthread_mutex_unlock(&host.lock);
}

/* The request the host saw, as the README describes it (stream as given). */
static void check_request(int stream) {
  CHECK(host.off_run_thread == 0, "send runs on the thread of arkagent_runtime_run");
  CHECK(host.ud_not_null == 0, "the NULL userdata given is what the callbacks get");
  CHECK(strcmp(host.method, "POST") == 0, "method POST");
  CHECK(strcmp(host.url, README_URL) == 0, "the URL: base_url + /chat/completions");
  CHECK(host.headers_ok, "every header's name and value readable during the call");
  CHECK(host.auth_headers == 1 && strcmp(host.auth, "Bearer " README_KEY) == 0, "the Authorization header is one of them");
  CHECK(!host.key_elsewhere, "the key in the Authorization header only");
  CHECK(host.body_one_object, "body/body_len: exactly one JSON object, read by length");
  CHECK(host.body != NULL && strstr(host.body, "\"model\":\"deepseek-v4-flash\"") != NULL, "the JSON to send names the model");
  CHECK(host.stream == stream, "->stream as the config asks");
}

/* Whether the outcome's final text is `text` (a writer may escape "…"). */
static int final_text_is(const char *outcome, const char *text, const char *escaped) {
  char want[512], want_escaped[512];
  snprintf(want, sizeof want, "\"final_text\":\"%s\"", text);
  snprintf(want_escaped, sizeof want_escaped, "\"final_text\":\"%s\"", escaped);
  return outcome != NULL && (strstr(outcome, want) != NULL || strstr(outcome, want_escaped) != NULL);
}

/* ------------------------------------------------------------------ the cases */

static void bad_configs(void) {
  char long_key[1024] = "{\"";
  for (int i = 0; i < 150; i++) strcat(long_key, "…");
  strcat(long_key, "\":1,");
  strcat(long_key, README_CONFIG + 1);
  const char *configs[] = {
      "",
      "{",
      "[]",
      README_MODEL "},\"compression\":{},\"no_such_key\":1}",
      README_MODEL ",\"retry\":{\"max_attempts\":\"three\"}},\"compression\":{}}",
      "{\"model\":{\"base_url\":\"https://api.deepseek.com/v1\",\"model\":\"deepseek-v4-flash\"},\"compression\":{}}",
      README_MODEL ",\"wire_format\":\"smoke-signals\"},\"compression\":{}}",
      "{\"model\":{\"base_url\":\"https://api.deepseek.com/v1\",\"api_key\":\"sk-\xff\xfe\",\"model\":\"m\"}}",
      long_key,
  };
  ArkAgentHttp http = {send, cancel, NULL /* userdata */};
  int cut = 0;
  for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
    ArkAgentRuntime *rt = NULL;
    int r = arkagent_runtime_new(configs[i], NULL, NULL, &http, &rt);
    CHECK(r != ARK_AGENT_RESULT_OK, configs[i]);
    CHECK(rt == NULL, "a refused arkagent_runtime_new writes nothing to rt");
    char msg[256];
    memset(msg, 'x', sizeof msg);
    size_t full = arkagent_last_error_message(msg, sizeof msg);
    size_t len = strnlen(msg, sizeof msg);
    CHECK(len < sizeof msg, "msg is NUL-terminated within its 256 bytes");
    CHECK(len > 0 && full >= len, "a message explains the failure; its full length returned");
    CHECK(full < sizeof msg ? full == len : len + 4 > sizeof msg - 1, "cut only when it does not fit, and then as late as a character allows");
    CHECK(valid_utf8(msg), "msg is cut at a UTF-8 character boundary");
    CHECK(arkagent_last_error_message(NULL, 0) == full, "NULL/0 gives only the length");
    if (full >= sizeof msg) cut++;
    fprintf(stderr, "quickstart: config %zu refused with %s: %s%s\n", i, arkagent_result_name(r), msg, full >= sizeof msg ? " [cut]" : "");
    /* The rest of the snippet on that NULL rt: refused, never a crash. */
    ArkAgentStore *store = NULL;
    EXPECT(arkagent_runtime_attach_store(rt, store, "chat-1"), ARK_AGENT_RESULT_NULL_ARGUMENT);
    char *outcome = NULL;
    EXPECT(arkagent_runtime_run(rt, "Hello", &outcome), ARK_AGENT_RESULT_NULL_ARGUMENT);
    CHECK(outcome == NULL, "no outcome for a refused run");
    arkagent_string_free(outcome);
    arkagent_runtime_free(rt);
    arkagent_store_free(store);
  }
  CHECK(host.sends == 0, "nothing refused reached send");
  fprintf(stderr, "quickstart: %d message(s) longer than msg[256]\n", cut);
  /* The message is empty after a successful call. */
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(README_CONFIG, NULL, NULL, &http, &rt), OK);
  char msg[256] = "stale";
  CHECK(arkagent_last_error_message(msg, sizeof msg) == 0 && msg[0] == 0, "no message after a successful call");
  arkagent_runtime_free(rt);
  rt = NULL;
  /* The documented codes of the refusals the header names. */
  EXPECT(arkagent_runtime_new(NULL, NULL, NULL, &http, &rt), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_new(README_CONFIG, NULL, NULL, NULL, &rt), ARK_AGENT_RESULT_NULL_ARGUMENT);
  ArkAgentHttp no_send = {NULL, cancel, NULL};
  EXPECT(arkagent_runtime_new(README_CONFIG, NULL, NULL, &no_send, &rt), ARK_AGENT_RESULT_NULL_ARGUMENT);
  EXPECT(arkagent_runtime_new(README_MODEL "},\"compression\":{},\"no_such_key\":1}", NULL, NULL, &http, &rt), ARK_AGENT_RESULT_INVALID_JSON);
  EXPECT(arkagent_runtime_new(configs[7], NULL, NULL, &http, &rt), ARK_AGENT_RESULT_INVALID_UTF8);
  CHECK(rt == NULL, "still nothing in rt");
}

/* The README's snippet as printed, its store file at `path`; `nth` is 1 or 2. */
static void quickstart(const char *path, int nth) {
  const char *answer = nth == 1 ? "First answer, number one" : "Second answer, number two";
  host_reset(ANSWER_NOW, answer);
  ArkAgentHttp http = {send, cancel, NULL /* userdata */};   /* cancel may be NULL */
  ArkAgentRuntime *rt = NULL;
  if (arkagent_runtime_new("{\"model\":{\"base_url\":\"https://api.deepseek.com/v1\","
                           "\"api_key\":\"sk-…\",\"model\":\"deepseek-v4-flash\"},"
                           "\"compression\":{}}", NULL, NULL, &http, &rt) != ARK_AGENT_RESULT_OK) {
    char msg[256];
    arkagent_last_error_message(msg, sizeof msg);
    CHECK(0, msg);
  }
  ArkAgentStore *store = NULL;                   /* durable sessions (see below) */
  EXPECT(arkagent_store_open(path, &store), OK);
  char *list = NULL;
  EXPECT(arkagent_store_list(store, &list), OK);
  CHECK(list != NULL && (nth == 1 ? strcmp(list, "[]") == 0 : count(list, "\"id\":\"chat-1\"") == 1), "chat-1 exists only after the first run");
  arkagent_string_free(list);
  EXPECT(arkagent_runtime_attach_store(rt, store, "chat-1"), OK);   /* resumes "chat-1" if it exists */
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  if (nth == 1)
    CHECK(messages != NULL && count(messages, "Hello") == 0, "a new chat-1 starts empty");
  else
    CHECK(messages != NULL && count(messages, "Hello") == 1 && strstr(messages, "First answer, number one") != NULL, "chat-1 resumed: run 1's history before the run");
  arkagent_string_free(messages);
  char *outcome = NULL;
  host.run_thread = pthread_self();
  EXPECT(arkagent_runtime_run(rt, "Hello", &outcome), OK);   /* blocks; send runs on this thread */
  CHECK(host.sends == 1, "one request");
  check_request(0);
  CHECK(final_text_is(outcome, answer, answer), "the outcome carries the model's answer");
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"completed\"") != NULL, "the run completed");
  static int hellos_in_run_1 = 0;
  if (nth == 1) {
    hellos_in_run_1 = count(host.body, "Hello");
    CHECK(hellos_in_run_1 >= 1, "the request carries the input");
    CHECK(strstr(host.body, "First answer") == NULL, "nothing of an earlier run in a new session");
  } else {
    CHECK(count(host.body, "Hello") == hellos_in_run_1 + 1, "the resumed request carries run 1's Hello and this one");
    CHECK(strstr(host.body, "First answer, number one") != NULL, "the resumed request carries run 1's answer");
  }
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
  arkagent_store_free(store);
  struct stat st;
  CHECK(stat(path, &st) == 0 && st.st_size > 0, "the store file is at the path given");
  CHECK(library_threads() >= 1, "the blocking call started the library's threads");
  EXPECT(arkagent_shutdown(), OK);   /* before dlclose: stops the library's threads */
  int left = library_threads_print(1);
  CHECK(left == 0, "arkagent_shutdown stopped the library's threads");
  for (int i = 0; left > 0 && i < 30; i++) {
    sleep_ms(100);
    left = library_threads();
    if (left == 0) fprintf(stderr, "quickstart: the threads were gone %d ms after arkagent_shutdown returned\n", (i + 1) * 100);
  }
}

/* The run blocks until `done` is completed later from another thread. */
static void answer_later_case(void) {
  host_reset(ANSWER_LATER, "Later answer");
  ArkAgentHttp http = {send, cancel, NULL};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(README_CONFIG, NULL, NULL, &http, &rt), OK);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Hello", &outcome), OK);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
  pthread_mutex_lock(&host.lock);
  int answered = host.answered;
  pthread_mutex_unlock(&host.lock);
  CHECK(answered && ms >= 50, "arkagent_runtime_run blocked until the later completion");
  CHECK(final_text_is(outcome, "Later answer", "Later answer"), "the later answer is the outcome");
  arkagent_string_free(outcome);
  join_worker();
  check_request(0);
  EXPECT(host.shutdown_during_run, ARK_AGENT_RESULT_RUN_IN_PROGRESS);
  CHECK(host.cancels == 0, "cancel is never called for a request the host finished");
  arkagent_runtime_free(rt);
}

/* ->stream: the answer streamed with begin / chunk / end inside send. */
static void stream_now_case(void) {
  host_reset(STREAM_NOW, "Streamed … answer");
  ArkAgentHttp http = {send, cancel, NULL};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(README_MODEL ",\"stream\":true},\"compression\":{}}", NULL, NULL, &http, &rt), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Hello", &outcome), OK);
  check_request(1);
  CHECK(final_text_is(outcome, "Streamed … answer", "Streamed \\u2026 answer"), "the streamed answer, whole");
  CHECK(host.cancels == 0, "no cancel for a stream the host ended");
  arkagent_string_free(outcome);
  arkagent_runtime_free(rt);
}

/* A stream whose [DONE] came before its end is no longer needed: cancel, then the end is
 * ignored. */
static void stream_done_early_case(void) {
  host_reset(STREAM_DONE, "Done early");
  ArkAgentHttp http = {send, cancel, NULL};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(README_MODEL ",\"stream\":true},\"compression\":{}}", NULL, NULL, &http, &rt), OK);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(rt, "Hello", &outcome), OK);
  CHECK(final_text_is(outcome, "Done early", "Done early"), "the answer, complete at [DONE]");
  arkagent_string_free(outcome);
  join_worker();
  CHECK(host.cancels == 1 && host.cancelled == host.held, "cancel called once, for that request");
  CHECK(!host.cancel_on_run_thread && strcmp(host.cancel_thread, "arkagent") == 0, "on a library thread");
  arkagent_runtime_free(rt);
}

static ArkAgentRuntime *cancel_target;

/* Cancels the run once the host holds its request. */
static void *cancel_when_held(void *arg) {
  int *still_wanted = arg;
  for (int i = 0; i < 500; i++) {
    pthread_mutex_lock(&host.lock);
    int held = host.held != NULL;
    pthread_mutex_unlock(&host.lock);
    if (held) break;
    sleep_ms(10);
  }
  sleep_ms(20);
  *still_wanted = !arkagent_http_is_cancelled(host.held);
  EXPECT(arkagent_runtime_cancel(cancel_target), OK);
  return NULL;
}

/* After the cancel: `done` finished as usual is ignored; then it is finished. */
static void finish_after_cancel(void) {
  char body[1024];
  int len = completion_json(body, sizeof body, "too late");
  EXPECT(arkagent_http_complete(host.held, 200, NULL, (const uint8_t *)body, (size_t)len), OK);
  EXPECT(arkagent_http_complete(host.held, 200, NULL, (const uint8_t *)body, (size_t)len), ARK_AGENT_RESULT_ALREADY_COMPLETED);
}

/* The run was cancelled (with or without a cancel callback). */
static void cancelled_case(int with_cancel) {
  host_reset(HOLD, "never");
  ArkAgentHttp http = {send, with_cancel ? cancel : NULL, NULL};
  EXPECT(arkagent_runtime_new(README_CONFIG, NULL, NULL, &http, &cancel_target), OK);
  int still_wanted = 0;
  pthread_t canceller;
  pthread_create(&canceller, NULL, cancel_when_held, &still_wanted);
  char *outcome = NULL;
  EXPECT(arkagent_runtime_run(cancel_target, "Hello", &outcome), OK);
  pthread_join(canceller, NULL);
  CHECK(outcome != NULL && strstr(outcome, "\"status\":\"cancelled\"") != NULL, "the run ended cancelled");
  arkagent_string_free(outcome);
  CHECK(still_wanted, "before the cancel the request was wanted");
  CHECK(arkagent_http_is_cancelled(host.held), "after it, the request reads as no longer wanted");
  if (with_cancel) {
    CHECK(host.cancels == 1 && host.cancelled == host.held, "cancel called once, for that request");
    CHECK(!host.cancel_on_run_thread && strcmp(host.cancel_thread, "arkagent") == 0, "on a library thread (\"arkagent\")");
  } else {
    CHECK(host.cancels == 0, "no cancel callback given, none called");
  }
  finish_after_cancel();
  arkagent_runtime_free(cancel_target);
}

/* The request timed out: cancel, and the late answer is ignored. */
static void timed_out_case(void) {
  host_reset(HOLD, "never");
  ArkAgentHttp http = {send, cancel, NULL};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(README_MODEL ",\"request_timeout_ms\":100,\"retry\":{\"max_attempts\":1}},\"compression\":{}}", NULL, NULL, &http, &rt), OK);
  EXPECT(arkagent_runtime_run(rt, "Hello", NULL), ARK_AGENT_RESULT_LLM_TIMEOUT);
  CHECK(host.sends == 1, "one attempt");
  CHECK(host.cancels == 1 && host.cancelled == host.held, "cancel called once when the request timed out");
  CHECK(!host.cancel_on_run_thread && strcmp(host.cancel_thread, "arkagent") == 0, "on a library thread (\"arkagent\")");
  finish_after_cancel();
  arkagent_runtime_free(rt);
}

typedef struct {
  int calls;
  int fail;
} Squeeze;

static void compress_cb(void *ud, const char *state_json, const char *context_json, ArkAgentCompressCompletion *completion) {
  Squeeze *s = ud;
  s->calls++;
  CHECK(strstr(state_json, "Hello") != NULL && strstr(context_json, "\"force\"") != NULL, "the compressor gets the state");
  if (s->fail)
    EXPECT(arkagent_compress_fail(completion, "not today"), OK);
  else
    EXPECT(arkagent_compress_complete(completion, "{\"outcome\":\"skipped\"}"), OK);
}

/* A context compressor written in C wins over the config's "compression". */
static void compressor_case(void) {
  host_reset(ANSWER_NOW, "Compressible");
  ArkAgentHttp http = {send, cancel, NULL};
  Squeeze s = {0, 0};
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new_with_compressor(README_MODEL "},\"compression\":{\"no_such_key\":1}}", NULL, NULL, &http, compress_cb, &s,
                                              ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD, &rt),
         ARK_AGENT_RESULT_INVALID_JSON);
  CHECK(rt == NULL, "the config's \"compression\" is still checked");
  /* A summary the default compressor would ask for never comes: the C one decides. */
  EXPECT(arkagent_runtime_new_with_compressor(README_MODEL "},\"compression\":{\"total_token_threshold\":1,\"keep_recent_message_count\":1,"
                                                           "\"min_messages_to_summarize\":1}}",
                                              NULL, NULL, &http, compress_cb, &s, ARKAGENT_DEFAULT_TOTAL_TOKEN_THRESHOLD, &rt),
         OK);
  EXPECT(arkagent_runtime_run(rt, "Hello", NULL), OK);
  EXPECT(arkagent_runtime_run(rt, "Hello again", NULL), OK);
  CHECK(host.sends == 2 && s.calls == 0, "below the C compressor's threshold: never called, no summary request");
  char *result = NULL;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  CHECK(s.calls == 1 && host.sends == 2, "compress_now called the C compressor, not the config's");
  CHECK(result != NULL && strstr(result, "\"outcome\":\"skipped\"") != NULL, "its arkagent_compress_complete answer");
  arkagent_string_free(result);
  s.fail = 1;
  EXPECT(arkagent_runtime_compress_now(rt, &result), OK);
  CHECK(s.calls == 2 && result != NULL && strstr(result, "\"outcome\":\"failed\"") != NULL && strstr(result, "compressor_error") != NULL,
        "its arkagent_compress_fail answer");
  arkagent_string_free(result);
  arkagent_runtime_free(rt);
}

int main(void) {
  char dir[] = "/tmp/arkagent-quickstart-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "a temporary directory");
  char files[512], path[600];
  snprintf(files, sizeof files, "%s/…", dir);
  CHECK(mkdir(files, 0700) == 0, "mkdir …");
  snprintf(files, sizeof files, "%s/…/files", dir);
  CHECK(mkdir(files, 0700) == 0, "mkdir …/files");
  snprintf(path, sizeof path, "%s/sessions.db", files);

  bad_configs();
  quickstart(path, 1);
  quickstart(path, 2);
  /* Both runs are in the file, under one session. */
  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  char *list = NULL;
  EXPECT(arkagent_store_list(store, &list), OK);
  CHECK(list != NULL && count(list, "\"id\":") == 1 && strstr(list, "\"message_count\":4") != NULL, "chat-1 holds both runs");
  arkagent_string_free(list);
  arkagent_store_free(store);

  answer_later_case();
  stream_now_case();
  stream_done_early_case();
  cancelled_case(1);
  cancelled_case(0);
  timed_out_case();
  compressor_case();

  EXPECT(arkagent_shutdown(), OK);
  CHECK(library_threads() == 0, "no library thread after the last shutdown");
  free(host.body);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  CHECK(system(cmd) == 0, "temporary directory removed");
  printf("quickstart: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
