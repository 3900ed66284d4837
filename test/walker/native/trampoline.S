/*
 * rootwalk native stop: the two assembly entry points of the harness (x86-64 SysV, AT&T).
 *
 * gc_safepoint_poll: the safepoint the managed code calls (through a statepoint). It is the native
 *   runtime's own safepoint stub (RW_ENTRY in src/native/runtime-entry.S, included below, so the
 *   harnesses stop exactly as the runtime does): it pushes the callee-saved registers as the CPU
 *   left them at the call, in the architecture's order, and calls rw_impl_gc_safepoint_poll with
 *   that frame; everything it touched is restored before it returns to the managed code.
 *   rw_impl_gc_safepoint_poll (below) tail-calls the harness's
 *     rw_safepoint_handler(sp, ra, saved)
 *   with sp = the managed caller's SP after the return, ra = the return address, saved = the
 *   frame's callee-saved registers.
 *
 * rw_enter(fn, a, b, c, d): calls fn(a, b, c, d) through a register. The global label
 *   rw_enter_return is the return address of that call: the "boundary" where managed code was
 *   entered from native code (a walker stops when it reaches it).
 *
 * Both carry CFI so that gdb (and any .eh_frame unwinder) can unwind through them. Assembled with
 * -I src/native (test/walker/native/native-stop.ts, ../native-plimmix/plimmix-stop.ts).
 */
#define RW_ENTRY_MACRO_ONLY
#include "runtime-entry.S"

        .text

        RW_ENTRY gc_safepoint_poll

        .globl  rw_impl_gc_safepoint_poll
        .type   rw_impl_gc_safepoint_poll, @function
        .p2align 4
rw_impl_gc_safepoint_poll:
        .cfi_startproc
        leaq    RW_FRAME_SP_BYTES(%rdx), %rdi   /* sp */
        movq    RW_FRAME_RA_BYTES(%rdx), %rsi   /* ra */
        jmp     rw_safepoint_handler            /* saved = frame, already in %rdx */
        .cfi_endproc
        .size   rw_impl_gc_safepoint_poll, .-rw_impl_gc_safepoint_poll

        .globl  rw_enter
        .globl  rw_enter_return
        .type   rw_enter, @function
        .p2align 4
rw_enter:
        .cfi_startproc
        subq    $8, %rsp                /* align the call to 16 */
        .cfi_def_cfa_offset 16
        movq    %rdi, %rax
        movq    %rsi, %rdi
        movq    %rdx, %rsi
        movq    %rcx, %rdx
        movq    %r8, %rcx
        call    *%rax
rw_enter_return:
        addq    $8, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   rw_enter, .-rw_enter

        .section .note.GNU-stack,"",@progbits
