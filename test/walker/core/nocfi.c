/* test/walker/core (deep-core.test.ts): a function without CFI (built with
 * -fno-asynchronous-unwind-tables -fno-unwind-tables): a stop in it cannot be climbed, and
 * `rootwalk roots` still shows it as frame #0 with its symbol. */
__attribute__((noinline)) void rw_stop_nocfi(void) { __asm__ volatile("" ::: "memory"); }
