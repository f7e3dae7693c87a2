/*
 * What every C test host needs to read an ArkAgentHttpRequest (PERF-8): the body as
 * pointer + length (not NUL-terminated), the headers as an array. Included by the
 * programs in tests/c/.
 */
#ifndef ARKAGENT_TEST_HTTP_HOST_H
#define ARKAGENT_TEST_HTTP_HOST_H

#include <stdlib.h>
#include <string.h>

#include "arkagent.h"

/* An ArkAgentHttp with no cancel callback, for the constructors (copied by them). */
#define HTTP(send, userdata) (&(ArkAgentHttp){(send), NULL, (userdata)})

static inline int ascii_ieq(const char *a, const char *b) {
  for (; *a && *b; a++, b++) {
    char x = (*a >= 'A' && *a <= 'Z') ? (char)(*a + 32) : *a;
    char y = (*b >= 'A' && *b <= 'Z') ? (char)(*b + 32) : *b;
    if (x != y) return 0;
  }
  return *a == *b;
}

/* The value of the first header named `name` (case-insensitive), or NULL. */
static inline const char *header_value(const ArkAgentHttpRequest *r, const char *name) {
  for (size_t i = 0; i < r->header_count; i++)
    if (ascii_ieq(r->headers[i].name, name)) return r->headers[i].value;
  return NULL;
}

/* The body as a NUL-terminated copy; the caller frees it. */
static inline char *body_dup(const ArkAgentHttpRequest *r) {
  char *copy = malloc(r->body_len + 1);
  if (copy == NULL) return NULL;
  if (r->body_len) memcpy(copy, r->body, r->body_len);
  copy[r->body_len] = 0;
  return copy;
}

/* The body copied into `buf` (truncated to `cap` - 1 bytes), NUL-terminated. */
static inline void body_into(const ArkAgentHttpRequest *r, char *buf, size_t cap) {
  size_t n = r->body_len < cap - 1 ? r->body_len : cap - 1;
  if (n) memcpy(buf, r->body, n);
  buf[n] = 0;
}

/* How many times `needle` occurs in the body or in any header value. */
static inline int occurrences(const ArkAgentHttpRequest *r, const char *needle, int in_headers) {
  int n = 0;
  size_t len = strlen(needle);
  for (size_t i = 0; len && i + len <= r->body_len; i++)
    if (memcmp(r->body + i, needle, len) == 0) n++;
  if (in_headers)
    for (size_t i = 0; i < r->header_count; i++)
      for (const char *p = r->headers[i].value; (p = strstr(p, needle)) != NULL; p += len) n++;
  return n;
}

#endif
