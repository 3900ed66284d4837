/* test/walker/core (deep-core.test.ts): main -> mgd_hold (managed, its root in a callee-saved
 * register) -> c_descend, a C recursion DEPTH frames deep (argv[1]) that saves no callee-saved
 * register, so the root stays in the thread's register all the way down -> rw_core_stop, then
 * rw_stop_nocfi (nocfi.c: no CFI). Then mgd_leaf -> rw_leaf_stop (and c_descend(-1), which returns). gdb breaks at one of them and
 * writes the core. With argv[2] = "big", a 2.5 GiB anonymous mapping of which a few pages are
 * touched is made first, and rw_core_stop aborts: the kernel's core is then over 2 GiB (sparse
 * on disk: the untouched pages are holes). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

long mgd_hold(long *p, long depth);
long mgd_leaf(long *p);
void rw_stop_nocfi(void);
long object[8] = {0x5eed, 1, 2, 3, 4, 5, 6, 7};
static int abort_at_stop;

__attribute__((noinline)) void rw_core_stop(void) {
  if (abort_at_stop) abort();
  __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void rw_leaf_stop(void) { __asm__ volatile("" ::: "memory"); }

/* No callee-saved register is used: n lives in rdi only until the call. The asm after the call
 * keeps it from becoming a tail call or a loop. */
__attribute__((noinline)) void c_descend(long n) {
  if (n > 0) {
    c_descend(n - 1);
  } else if (n == 0) {
    rw_core_stop();
    rw_stop_nocfi();
  }
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
  long depth = argc > 1 ? atol(argv[1]) : 0;
  if (argc > 2 && strcmp(argv[2], "big") == 0) {
    size_t size = (size_t)5 << 29; /* 2.5 GiB */
    char *big = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (big == MAP_FAILED) return 2;
    for (size_t at = 0; at < size; at += size / 4) big[at] = 1;
    abort_at_stop = 1;
  }
  long r = mgd_hold(object, depth) + mgd_leaf(object);
  return r == 2 * 0x5eed ? 0 : 1;
}
