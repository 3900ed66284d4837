/*
 * An LD_PRELOAD library for AArch64 programs under qemu-user with `-p 65536` (64 KiB pages):
 * mprotect as a kernel with that page size checks it. qemu-aarch64 7.2 then reports 64 KiB pages
 * (getpagesize, sysconf, AT_PAGESZ) yet still accepts an mprotect at a 4 KiB boundary, which such
 * a kernel refuses with EINVAL; with this library the refusal happens as it would there.
 * test/support/large-pages.ts builds it with the cross gcc.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

int mprotect(void *address, size_t bytes, int protection) {
  static int (*next)(void *, size_t, int);
  if (next == NULL) next = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "mprotect");
  if (((uintptr_t)address & ((uintptr_t)getpagesize() - 1)) != 0) {
    errno = EINVAL;
    return -1;
  }
  return next(address, bytes, protection);
}
