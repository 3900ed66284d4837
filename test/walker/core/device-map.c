/* A program with files in its mappings that are not ELF modules: /dev/zero mapped privately (what
 * some allocators do) and the data file RW_MAPPED_FILE names (a sparse file of a GiB), which the
 * core's NT_FILE note names like any file. gdb stops in stop_here and writes the core. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

__attribute__((noinline)) void stop_here(volatile char *zeros) { zeros[0] = 1; }

int main(void) {
  int fd = open("/dev/zero", O_RDONLY);
  char *zeros = mmap(0, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (fd < 0 || zeros == MAP_FAILED) return perror("/dev/zero"), 1;
  const char *data_path = getenv("RW_MAPPED_FILE");
  int data = data_path == NULL ? -1 : open(data_path, O_RDONLY);
  if (data_path != NULL && (data < 0 || mmap(0, 4096, PROT_READ, MAP_PRIVATE, data, 0) == MAP_FAILED)) return perror(data_path), 1;
  stop_here(zeros);
  return 0;
}
