/*
 * The checks every C test program uses: CHECK and EXPECT count passes and failures
 * (thread-safe: callbacks check from library threads), a failure prints the library's
 * last error message. Each program prints "N passed, M failed" from `passed`/`failed`.
 * Included by the programs in tests/c/ (one translation unit each).
 */
#ifndef ARKAGENT_TEST_CHECK_H
#define ARKAGENT_TEST_CHECK_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "arkagent.h"

static int passed = 0, failed = 0;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond, what)                                                                          \
  do {                                                                                             \
    int ok_ = (cond);                                                                              \
    pthread_mutex_lock(&count_lock);                                                               \
    if (ok_) {                                                                                     \
      passed++;                                                                                    \
    } else {                                                                                       \
      failed++;                                                                                    \
      char err_[512];                                                                              \
      arkagent_last_error_message(err_, sizeof err_);                                              \
      fprintf(stderr, "FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, what, err_);        \
    }                                                                                              \
    pthread_mutex_unlock(&count_lock);                                                             \
  } while (0)

/* `call` must give `code`; prints both names otherwise. */
#define EXPECT(call, code)                                                                         \
  do {                                                                                             \
    int got_ = (int)(call);                                                                        \
    if (got_ != (int)(code)) {                                                                     \
      char what_[512];                                                                             \
      snprintf(what_, sizeof what_, "%s gave %s, expected %s", #call, arkagent_result_name(got_),  \
               arkagent_result_name((int)(code)));                                                 \
      CHECK(0, what_);                                                                             \
    } else {                                                                                       \
      CHECK(1, #call);                                                                             \
    }                                                                                              \
  } while (0)

#define OK ARK_AGENT_RESULT_OK

/* How many times `needle` occurs in `haystack`; -1 for a NULL haystack. */
static inline int count(const char *haystack, const char *needle) {
  int n = 0;
  if (haystack == NULL) return -1;
  for (const char *p = haystack; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

static inline void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* A run on its own thread: `pthread_create(&t, NULL, run_thread, &arg)` runs
 * `arkagent_runtime_run(arg.rt, arg.input, NULL)` and leaves its result in `arg.result`. */
typedef struct {
  ArkAgentRuntime *rt;
  const char *input;
  int result;
} RunArg;

static inline void *run_thread(void *arg) {
  RunArg *a = arg;
  a->result = arkagent_runtime_run(a->rt, a->input, NULL);
  return NULL;
}

#endif
