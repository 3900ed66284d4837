/* A program with a device in its mappings: /dev/zero mapped privately (what some allocators do),
 * which the core's NT_FILE note names like any file. gdb stops in stop_here and writes the core. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>

__attribute__((noinline)) void stop_here(volatile char *zeros) { zeros[0] = 1; }

int main(void) {
  int fd = open("/dev/zero", O_RDONLY);
  char *zeros = mmap(0, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (fd < 0 || zeros == MAP_FAILED) return perror("/dev/zero"), 1;
  stop_here(zeros);
  return 0;
}
