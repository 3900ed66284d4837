/* The init (pid 1) of the arm64 Linux that test/support/aarch64-kernel.ts boots under
 * qemu-system-aarch64 to get cores the Linux kernel writes. Statically linked: the initramfs
 * holds only this, the programs (/progs/NAME, in name order) and the libraries they load (/lib).
 * For each program: core_pattern = /cores/NAME.core, RLIMIT_CORE unlimited, run it to its crash,
 * then print its core on the console (stdout):
 *   RW-RAN NAME status S          the wait status (a core was dumped when bit 0x80 is set)
 *   RW-CORE NAME BYTES FNV        the core's size and FNV-1a 32-bit hash (the reader checks both:
 *   base64 lines, RW-ZEROS N      the console is the only way out and the kernel may print into it)
 *   RW-END NAME
 * and RW-DONE after the last, then powers the machine off. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char BASE64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
enum { BASE64_LINE_BYTES = 57, BASE64_LINE_CHARS = 76 };

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY);
  if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) printf("RW-ERROR cannot write %s\n", path);
  if (fd >= 0) close(fd);
}

/* The whole file at `path` (malloc'd), its size in *size; NULL when it cannot be read. */
static unsigned char *read_file(const char *path, size_t *size) {
  int fd = open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) return NULL;
  unsigned char *bytes = malloc(st.st_size + 1);
  size_t got = 0;
  while (bytes != NULL && got < (size_t)st.st_size) {
    ssize_t n = read(fd, bytes + got, st.st_size - got);
    if (n <= 0) break;
    got += n;
  }
  close(fd);
  *size = got;
  return bytes;
}

/* One line per 57 bytes (76 base64 characters, no padding but on the last), a run of zero bytes as
 * one RW-ZEROS line: the console is slow (about 100 KB/s under emulation) and cores are mostly
 * zeros (a thread's whole stack mapping is dumped). */
static void print_base64(const unsigned char *bytes, size_t size) {
  char line[BASE64_LINE_CHARS + 1];
  size_t zeros = 0;
  for (size_t start = 0; start < size; start += BASE64_LINE_BYTES) {
    size_t end = start + BASE64_LINE_BYTES < size ? start + BASE64_LINE_BYTES : size;
    size_t i = start;
    while (i < end && bytes[i] == 0) i++;
    if (i == end) {
      zeros += end - start;
      continue;
    }
    if (zeros > 0) printf("RW-ZEROS %zu\n", zeros);
    zeros = 0;
    int at = 0;
    for (i = start; i < end; i += 3) {
      unsigned v = bytes[i] << 16 | (i + 1 < end ? bytes[i + 1] << 8 : 0) | (i + 2 < end ? bytes[i + 2] : 0);
      line[at++] = BASE64[v >> 18 & 63];
      line[at++] = BASE64[v >> 12 & 63];
      line[at++] = i + 1 < end ? BASE64[v >> 6 & 63] : '=';
      line[at++] = i + 2 < end ? BASE64[v & 63] : '=';
    }
    line[at] = 0;
    printf("%s\n", line);
  }
  if (zeros > 0) printf("RW-ZEROS %zu\n", zeros);
}

static void print_core(const char *name, const char *path) {
  size_t size = 0;
  unsigned char *bytes = read_file(path, &size);
  if (bytes == NULL) {
    printf("RW-ERROR no core at %s\n", path);
    return;
  }
  unsigned hash = 2166136261u;
  for (size_t i = 0; i < size; i++) hash = (hash ^ bytes[i]) * 16777619u;
  printf("RW-CORE %s %zu %08x\n", name, size, hash);
  print_base64(bytes, size);
  printf("RW-END %s\n", name);
  free(bytes);
}

static void crash(const char *name) {
  char program[300], core[300];
  snprintf(program, sizeof program, "/progs/%s", name);
  snprintf(core, sizeof core, "/cores/%s.core", name);
  write_file("/proc/sys/kernel/core_pattern", core);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    char *argv[] = {program, NULL};
    char *envp[] = {"LD_LIBRARY_PATH=/lib", NULL};
    execve(program, argv, envp);
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("RW-RAN %s status %d\n", name, status);
  print_core(name, core);
}

int main(void) {
  static char out[1 << 16];
  setvbuf(stdout, out, _IOFBF, sizeof out);
  mkdir("/proc", 0755);
  mkdir("/cores", 0755);
  if (mount("proc", "/proc", "proc", 0, NULL) != 0) printf("RW-ERROR cannot mount /proc\n");
  struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(RLIMIT_CORE, &unlimited);
  struct dirent **names;
  int n = scandir("/progs", &names, NULL, alphasort);
  for (int i = 0; i < n; i++)
    if (names[i]->d_name[0] != '.') crash(names[i]->d_name);
  printf("RW-DONE\n");
  fflush(stdout);
  sync();
  reboot(RB_POWER_OFF);
  return 1;
}
