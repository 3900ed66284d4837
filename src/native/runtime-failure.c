/*
 * A failure ends the process: a message on stderr and exit code 3, never continuing with stale
 * roots (a JavaScript callback that threw, an allocation by a stuck thread, a runtime call before
 * gc_init, a fault, a safepoint timeout).
 *
 * `rootwalk run --json`: stdout carries the JSON alone. While the program runs, fd 1 is a copy of
 * fd 2 (rw_stdout_to_stderr): whatever the program prints (printf, puts, write(1, ...)) goes to
 * stderr. A failure that ends the process here writes one JSON object on the real stdout
 * (json_fd) first, with the same fields as the failures run-command.ts reports itself:
 * {"error","exitCode","message","collections"}.
 */
#include "runtime.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int json_fd = -1;
static uint64_t collections_so_far; /* told by JavaScript after each collection */
char failure_message[1024];         /* a JavaScript failure's line (rw_set_failure) */

/* The failure object on json_fd: `message` up to its first newline, JSON-escaped. No allocation,
 * no stdio: the fault handler calls it. */
void json_failure(const char *message) {
  if (json_fd < 0) return;
  char out[2048];
  static const char head[] = "{\"error\":\"runtime-failure\",\"exitCode\":3,\"message\":\"";
  size_t n = 0;
  for (const char *c = head; *c != 0; c++) out[n++] = *c;
  for (const char *c = message; *c != 0 && *c != '\n' && n < sizeof out - 64; c++) {
    unsigned char b = (unsigned char)*c;
    if (b == '"' || b == '\\') {
      out[n++] = '\\';
      out[n++] = (char)b;
    } else if (b < 0x20) {
      static const char hexdigits[] = "0123456789abcdef";
      const char esc[6] = {'\\', 'u', '0', '0', hexdigits[b >> 4], hexdigits[b & 15]};
      for (int k = 0; k < 6; k++) out[n++] = esc[k];
    } else {
      out[n++] = (char)b;
    }
  }
  static const char tail[] = "\",\"collections\":";
  for (const char *c = tail; *c != 0; c++) out[n++] = *c;
  char digits[24];
  int d = 0;
  uint64_t v = collections_so_far;
  do digits[d++] = (char)('0' + v % 10); while ((v /= 10) != 0 && d < 24);
  while (d > 0) out[n++] = digits[--d];
  out[n++] = '}';
  out[n++] = '\n';
  ssize_t ignored = write(json_fd, out, n);
  (void)ignored;
}

/* Ends the process at once (JavaScript's exit when its output's reader closed, src/process-exit.ts):
 * process.exit() would join a pool thread that waits for the program's threads. */
RW_EXPORT void rw_exit_now(int code) {
  fflush(NULL);
  _exit(code);
}

/* Points fd 1 at stderr and keeps the real stdout for the JSON; returns it (-1: failed). */
RW_EXPORT int rw_stdout_to_stderr(void) {
  fflush(stdout);
  int saved = dup(1);
  if (saved < 0) return -1;
  if (dup2(2, 1) < 0) {
    close(saved);
    return -1;
  }
  json_fd = saved;
  return saved;
}

/* Flushes what the program printf'd (to stderr, where fd 1 points) and gives fd 1 back. */
RW_EXPORT void rw_stdout_restore(void) {
  fflush(stdout);
  if (json_fd < 0) return;
  dup2(json_fd, 1);
  close(json_fd);
  json_fd = -1;
}

RW_EXPORT void rw_set_collections(uint64_t n) { collections_so_far = n; }
RW_EXPORT void rw_set_failure(const char *line) { snprintf(failure_message, sizeof failure_message, "%s", line); }

void fatal(const char *format, ...) {
  char message[1024];
  va_list ap;
  va_start(ap, format);
  vsnprintf(message, sizeof message, format, ap);
  va_end(ap);
  fflush(stdout);
  fprintf(stderr, "rootwalk run: %s\n", message);
  fflush(stderr);
  json_failure(message);
  _exit(3);
}
