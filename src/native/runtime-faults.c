/*
 * Faults: a SIGSEGV or SIGBUS on a thread the runtime started (managed code, or the runtime on
 * its behalf) ends the process with exit 3 and one message naming the thread and the faulting
 * instruction (with poisoning on, say why a stale pointer is the likely cause; in a stack's guard,
 * a stack overflow), instead of a bare crash. Each such thread has an alternate signal stack, so a
 * stack overflow is reported too. Faults on other threads (Node's own) go to the handler that was
 * there before. The handler allocates nothing and takes no lock.
 */
#include "runtime.h"

#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define RW_ALT_STACK_BYTES (64 * 1024)

int poison_on;
static struct sigaction previous_segv, previous_bus;

static void fault_handler(int sig, siginfo_t *info, void *context) {
  rw_thread *t = self;
  if (t == NULL) {
    /* Not a runtime thread: hand the fault to whoever handled it before us. */
    const struct sigaction *old = sig == SIGBUS ? &previous_bus : &previous_segv;
    if ((old->sa_flags & SA_SIGINFO) != 0 && old->sa_sigaction != NULL) {
      old->sa_sigaction(sig, info, context);
      return;
    }
    if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
      old->sa_handler(sig);
      return;
    }
    signal(sig, SIG_DFL); /* returning re-executes the faulting instruction: the default action */
    return;
  }
  const ucontext_t *uc = context;
  uint64_t pc = (uint64_t)uc->RW_FAULT_PC_FIELD;
  Dl_info where;
  memset(&where, 0, sizeof where);
  char at[256];
  if (dladdr((void *)(uintptr_t)pc, &where) != 0 && where.dli_sname != NULL) {
    snprintf(at, sizeof at, "%s+0x%llx", where.dli_sname, (unsigned long long)(pc - (uint64_t)(uintptr_t)where.dli_saddr));
  } else {
    snprintf(at, sizeof at, "0x%llx", (unsigned long long)pc);
  }
  char message[1024];
  uint64_t fault = (uint64_t)(uintptr_t)info->si_addr;
  /* Under --stress the blocks a collection freed are protected while quarantined (gc/quarantine.ts). */
  int guard = guard_holding(fault);
  char overflow[256];
  if (guard >= 0) {
    snprintf(overflow, sizeof overflow, "  the fault address is in the guard below %s stack (%llu bytes, --%s): a stack overflow\n",
             guard == 0 ? "rw_main's" : "a gc_thread_start thread's", (unsigned long long)guarded_stack_bytes(guard),
             guard == 0 ? "stack" : "thread-stack");
  }
  const char *why = guard >= 0 ? overflow
                    : !poison_on ? ""
                    : fault >= heap_start && fault < heap_end
                        ? "  poisoning is on (--poison, implied by --stress): the fault address is in the heap, in memory a collection evacuated or freed,\n"
                          "  quarantined and protected under --stress: a read or write through a stale pointer, one the program kept across a collection without a root\n"
                        : "  poisoning is on (--poison, implied by --stress): a read through a stale pointer, one the program kept across a collection\n"
                          "  without a root, finds the pattern 0xdeadbeecdeadbeec, which faults when used as an address\n";
  int n = snprintf(message, sizeof message, "rootwalk run: %s in thread #%d at %s (fault address 0x%llx)\n%s",
                   sig == SIGBUS ? "bus error" : "segmentation fault", (int)(t - rw_threads), at, (unsigned long long)fault, why);
  if (n > 0) {
    ssize_t ignored = write(2, message, (size_t)n < sizeof message ? (size_t)n : sizeof message - 1);
    (void)ignored;
  }
  json_failure(message + strlen("rootwalk run: "));
  _exit(3);
}

void install_fault_handlers(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = fault_handler;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &previous_segv);
  sigaction(SIGBUS, &action, &previous_bus);
}

/* An alternate signal stack for the calling thread (kept until the process ends). */
void give_alternate_signal_stack(void) {
  void *stack = mmap(NULL, RW_ALT_STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED) return; /* faults are still reported, unless the stack overflowed */
  stack_t alt = {.ss_sp = stack, .ss_size = RW_ALT_STACK_BYTES, .ss_flags = 0};
  sigaltstack(&alt, NULL);
}

