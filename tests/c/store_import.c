/*
 * STORE-2/CORE-6 through the C ABI: arkagent_runtime_import_state with a store attached is
 * one transaction. While another process holds the store's write lock (SQLite's WAL write
 * lock, byte 120 of the -shm file) the store write fails (ARK_AGENT_RESULT_STORE_IO after
 * the 5 s busy timeout) and the runtime keeps its old state; once the lock is gone the
 * same import succeeds and is what a restart finds. Issue 28 item 1: the import is invisible
 * until its store write commits — while it waits for the lock, the getters called from
 * another thread (messages, usages, episodes, export) return the old conversation; once the
 * lock is released in time the import succeeds and they return the new one. Built and run
 * by tests/it/store_import.rs.
 * Prints "N passed, M failed". argv[1]: a scratch directory (default: a new one in /tmp).
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arkagent.h"
#include "http_host.h"
#include "check.h"

#define REPLY(text)                                                                                      \
  "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{" \
  "\"role\":\"assistant\",\"content\":\"" text "\"},\"finish_reason\":\"stop\"}],\"usage\":{"           \
  "\"prompt_tokens\":30,\"completion_tokens\":2,\"total_tokens\":32}}"

static void http_cb(void *userdata, const ArkAgentHttpRequest *request, ArkAgentHttpCompletion *completion) {
  (void)userdata;
  (void)request;
  const char *body = REPLY("an answer");
  EXPECT(arkagent_http_complete(completion, 200, NULL, (const uint8_t *)body, strlen(body)), OK);
}

static const char *CONFIG =
    "{\"model\":{\"base_url\":\"http://127.0.0.1:9/v1\",\"api_key\":\"sk-c-import\",\"model\":\"m\","
    "\"retry\":{\"max_attempts\":1}}}";

static ArkAgentRuntime *new_runtime(void) {
  ArkAgentRuntime *rt = NULL;
  EXPECT(arkagent_runtime_new(CONFIG, NULL, NULL, HTTP(http_cb, NULL), &rt), OK);
  return rt;
}

/* Forks a process that holds the WAL write lock of `shm` until `*release` is closed. */
static pid_t hold_write_lock(const char *shm, int *release) {
  int ready[2], hold[2];
  if (pipe(ready) != 0 || pipe(hold) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    close(hold[1]);
    int fd = open(shm, O_RDWR);
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 120; /* WALINDEX_LOCK_OFFSET + WAL_WRITE_LOCK */
    lock.l_len = 1;
    char ok = (fd >= 0 && fcntl(fd, F_SETLKW, &lock) == 0) ? 'L' : 'E';
    if (write(ready[1], &ok, 1) != 1) _exit(3);
    char c;
    while (read(hold[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(ready[1]);
  close(hold[0]);
  char c = 0;
  if (read(ready[0], &c, 1) != 1 || c != 'L') {
    close(ready[0]);
    close(hold[1]);
    return -1;
  }
  close(ready[0]);
  *release = hold[1];
  return pid;
}

/* An import running on its own thread (arkagent_runtime_import_state blocks its caller). */
typedef struct {
  ArkAgentRuntime *rt;
  const char *state;
  ArkAgentResult result;
} Import;

static void *import_thread(void *arg) {
  Import *im = arg;
  im->result = arkagent_runtime_import_state(im->rt, im->state);
  return NULL;
}

/* What a reader on this thread sees: messages, usages, episodes and the export, joined. */
static char *seen(ArkAgentRuntime *rt) {
  char *parts[4] = {NULL, NULL, NULL, NULL};
  bool ok = arkagent_runtime_messages(rt, &parts[0]) == ARK_AGENT_RESULT_OK &&
            arkagent_runtime_usages(rt, &parts[1]) == ARK_AGENT_RESULT_OK &&
            arkagent_runtime_episodes(rt, &parts[2]) == ARK_AGENT_RESULT_OK &&
            arkagent_runtime_export_state(rt, &parts[3]) == ARK_AGENT_RESULT_OK;
  size_t n = 4;
  for (int i = 0; i < 4; i++) n += parts[i] ? strlen(parts[i]) + 1 : 0;
  char *out = ok ? malloc(n) : NULL;
  if (out) {
    out[0] = 0;
    for (int i = 0; i < 4; i++) {
      strcat(out, parts[i]);
      strcat(out, "\n");
    }
  }
  for (int i = 0; i < 4; i++) arkagent_string_free(parts[i]);
  return out;
}

static bool same(const char *a, const char *b) { return a != NULL && b != NULL && strcmp(a, b) == 0; }

int main(int argc, char **argv) {
  char scratch[] = "/tmp/arkagent-c-import-XXXXXX";
  const char *dir = argc > 1 ? argv[1] : mkdtemp(scratch);
  if (dir == NULL) return 2;
  char path[1024], shm[1100];
  snprintf(path, sizeof path, "%s/sessions.db", dir);
  snprintf(shm, sizeof shm, "%s-shm", path);

  /* The state to import: another conversation, from a runtime without a store. */
  ArkAgentRuntime *donor = new_runtime();
  EXPECT(arkagent_runtime_run(donor, "a different conversation", NULL), OK);
  char *imported = NULL;
  EXPECT(arkagent_runtime_export_state(donor, &imported), OK);
  arkagent_runtime_free(donor);

  ArkAgentStore *store = NULL;
  EXPECT(arkagent_store_open(path, &store), OK);
  ArkAgentRuntime *rt = new_runtime();
  EXPECT(arkagent_runtime_attach_store(rt, store, "mine"), OK);
  EXPECT(arkagent_runtime_run(rt, "my own conversation", NULL), OK);
  char *before = NULL;
  EXPECT(arkagent_runtime_export_state(rt, &before), OK);

  char *old_view = seen(rt);
  CHECK(old_view != NULL && strstr(old_view, "my own conversation") != NULL, "the getters work");
  int release = -1;
  pid_t holder = hold_write_lock(shm, &release);
  CHECK(holder > 0, "another process holds the store's write lock");
  if (holder > 0) {
    /* Held past the busy timeout: the old state all along, then the store's code. */
    Import im = {rt, imported, ARK_AGENT_RESULT_OK};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, import_thread, &im) == 0, "the import thread starts");
    sleep_ms(300);
    char *during = seen(rt);
    CHECK(same(old_view, during), "while the write waits, another thread's getters see the old state");
    free(during);
    pthread_join(thread, NULL);
    CHECK(im.result == ARK_AGENT_RESULT_STORE_IO, "the import fails with the store's code");
    char *after = NULL;
    EXPECT(arkagent_runtime_export_state(rt, &after), OK);
    CHECK(before != NULL && after != NULL && strcmp(before, after) == 0, "the failed import kept the old state");
    arkagent_string_free(after);
    char *view = seen(rt);
    CHECK(same(old_view, view), "a failed write changed nothing");
    free(view);
    close(release);
    waitpid(holder, NULL, 0);
  }

  /* Released in time: the old state until the write commits, then the imported one. */
  holder = hold_write_lock(shm, &release);
  CHECK(holder > 0, "another process holds the store's write lock again");
  if (holder > 0) {
    Import im = {rt, imported, ARK_AGENT_RESULT_STORE_IO};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, import_thread, &im) == 0, "the import thread starts");
    sleep_ms(300);
    char *during = seen(rt);
    CHECK(same(old_view, during), "while the write waits, another thread's getters see the old state");
    free(during);
    close(release);
    waitpid(holder, NULL, 0);
    pthread_join(thread, NULL);
    CHECK(im.result == ARK_AGENT_RESULT_OK, "released in time, the import succeeds");
  } else {
    /* The lock is gone: the same import succeeds and is stored. */
    EXPECT(arkagent_runtime_import_state(rt, imported), OK);
  }
  free(old_view);
  char *messages = NULL;
  EXPECT(arkagent_runtime_messages(rt, &messages), OK);
  CHECK(messages != NULL && strstr(messages, "a different conversation") != NULL, "imported");
  arkagent_string_free(messages);
  arkagent_runtime_free(rt);
  ArkAgentRuntime *resumed = new_runtime();
  EXPECT(arkagent_runtime_attach_store(resumed, store, "mine"), OK);
  EXPECT(arkagent_runtime_messages(resumed, &messages), OK);
  CHECK(messages != NULL && strstr(messages, "a different conversation") != NULL &&
            strstr(messages, "my own conversation") == NULL,
        "a restart finds the import");
  arkagent_string_free(messages);
  arkagent_runtime_free(resumed);

  arkagent_string_free(imported);
  arkagent_string_free(before);
  arkagent_store_free(store);
  arkagent_shutdown();
  printf("store_import: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
