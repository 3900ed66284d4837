/* test/walker/core (vDSO): main calls clock_gettime, which glibc sends into the vDSO
 * (__vdso_clock_gettime). gdb breaks there (gdb-core.py with RW_BREAK, after starti so the
 * vDSO's symbols are loaded) and writes the core: the thread's innermost frame is in code that
 * no file on disk holds; its CFI is in the vDSO image the core keeps in memory. */
#include <stdio.h>
#include <time.h>

__attribute__((noinline)) static long sample(int n) {
  long sum = 0;
  for (int i = 0; i < n; i++) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    sum += ts.tv_nsec & 1;
  }
  return sum;
}

int main(void) {
  printf("%ld\n", sample(3));
  return 0;
}
