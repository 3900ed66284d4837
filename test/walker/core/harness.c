/* test/walker/core: 3 threads each run mgd_outer(A[t], B[t], t) -> apply_cb -> mgd_cb ->
 * stop_here. Thread 1 then sleeps in nanosleep (libc, a syscall); thread 2 raises SIGUSR1 and
 * sleeps in the handler (so its stack crosses the signal trampoline __restore_rt); thread 0
 * (main) waits until both are there and calls rw_core_stop, where gdb breaks and writes the
 * core. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

long mgd_outer(void *a, void *b, long k);
static long objects[3][2][8] __attribute__((aligned(64)));
static atomic_int arrived;
static volatile int done;

#ifdef RW_CORE_ABORT
#include <stdlib.h>
/* The kernel's core instead of gdb's (kernel-core.test.ts): abort, with the other two threads
 * where they wait. */
__attribute__((noinline)) void rw_core_stop(void) { abort(); }
#else
__attribute__((noinline)) void rw_core_stop(void) { __asm__ volatile("" ::: "memory"); }
#endif

static void sleep_until_done(void) {
  atomic_fetch_add(&arrived, 1);
  while (!done) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
}

static void on_usr1(int sig) {
  (void)sig;
  sleep_until_done();
}

void stop_here(long k) {
  if (k == 5) { /* thread 2 */
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    return;
  }
  if (k != 1) { /* thread 1 */
    atomic_fetch_add(&arrived, 1);
    while (!done) {
      struct timespec ts = {0, 1000000};
      nanosleep(&ts, NULL);
    }
    return;
  }
  while (atomic_load(&arrived) < 2) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  rw_core_stop();
  done = 1;
}

static void *worker(void *p) {
  long t = (long)p;
  return (void *)mgd_outer(objects[t][0], objects[t][1], t);
}

int main(void) {
  for (int t = 0; t < 3; t++)
    for (int i = 0; i < 8; i++) objects[t][0][i] = 0x100 * (t + 1) + i, objects[t][1][i] = 0x1000 * (t + 1) + i;
  pthread_t th[3];
  for (long t = 1; t < 3; t++) pthread_create(&th[t], NULL, worker, (void *)t);
  long r = mgd_outer(objects[0][0], objects[0][1], 0);
  for (int t = 1; t < 3; t++) pthread_join(th[t], NULL);
  printf("%ld\n", r);
  return 0;
}
