/*
 * rootwalk native runtime: the assembly entry points (x86-64 SysV, AT&T).
 *
 * Every runtime function managed code may call (gc_init, gc_alloc, gc_safepoint, gc_collect,
 * gc_thread_start, gc_thread_join, thread_stuck_start, thread_stuck_end, no_gc_thread,
 * gc_add_global) enters through a stub that pushes the callee-saved registers and calls the C
 * implementation rw_impl_<name>(arg0, arg1, frame) with
 *
 *     frame[0..5] = rbx, rbp, r12, r13, r14, r15   (as the managed caller left them: the
 *                   architecture's callee-saved order, src/arch/x86-64.ts; the pushes below are
 *                   in the reverse order. test/native-runtime/runtime-layout.test.ts reads this
 *                   file's CFI and fails when the order differs from the TypeScript description)
 *     frame[6]    = the return address into the managed caller      (RW_FRAME_RA_BYTES)
 *     frame + 56  = the managed caller's SP after the call returns  (RW_FRAME_SP_BYTES)
 *
 * The C side copies them into the calling thread's record and, before returning, writes the
 * record's (possibly relocated) register values back into frame[0..5]; the stub pops them, so
 * GC pointers the collector moved while the thread was stopped come back relocated. rax (the
 * result) is not touched after the call.
 *
 * rw_call_managed(fn, arg) calls fn(arg) through a register; rw_managed_return is the return
 * address of that call: the boundary where managed code was entered (the walk ends there).
 *
 * The test harnesses use the same safepoint stub: with RW_ENTRY_MACRO_ONLY defined, including
 * this file defines only the RW_ENTRY macro and the frame offsets (test/walker/native/trampoline.S).
 */
#define RW_FRAME_RA_BYTES 48
#define RW_FRAME_SP_BYTES 56

        .text

.macro RW_ENTRY name
        .globl  \name
        .type   \name, @function
        .p2align 4
\name:
        .cfi_startproc
        pushq   %r15
        .cfi_def_cfa_offset 16
        .cfi_offset %r15, -16
        pushq   %r14
        .cfi_def_cfa_offset 24
        .cfi_offset %r14, -24
        pushq   %r13
        .cfi_def_cfa_offset 32
        .cfi_offset %r13, -32
        pushq   %r12
        .cfi_def_cfa_offset 40
        .cfi_offset %r12, -40
        pushq   %rbp
        .cfi_def_cfa_offset 48
        .cfi_offset %rbp, -48
        pushq   %rbx
        .cfi_def_cfa_offset 56
        .cfi_offset %rbx, -56
        movq    %rsp, %rdx              /* frame */
        subq    $8, %rsp                /* 16-byte alignment for the call */
        .cfi_def_cfa_offset 64
        call    rw_impl_\name@PLT
        addq    $8, %rsp
        .cfi_def_cfa_offset 56
        popq    %rbx
        .cfi_def_cfa_offset 48
        popq    %rbp
        .cfi_def_cfa_offset 40
        popq    %r12
        .cfi_def_cfa_offset 32
        popq    %r13
        .cfi_def_cfa_offset 24
        popq    %r14
        .cfi_def_cfa_offset 16
        popq    %r15
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   \name, .-\name
.endm

#ifndef RW_ENTRY_MACRO_ONLY
        RW_ENTRY gc_init
        RW_ENTRY gc_alloc
        RW_ENTRY gc_safepoint
        RW_ENTRY gc_collect
        RW_ENTRY gc_thread_start
        RW_ENTRY gc_thread_join
        RW_ENTRY thread_stuck_start
        RW_ENTRY thread_stuck_end
        RW_ENTRY no_gc_thread
        RW_ENTRY gc_add_global

        .globl  rw_call_managed
        .globl  rw_managed_return
        .type   rw_call_managed, @function
        .p2align 4
rw_call_managed:
        .cfi_startproc
        subq    $8, %rsp
        .cfi_def_cfa_offset 16
        movq    %rdi, %rax
        movq    %rsi, %rdi
        call    *%rax
rw_managed_return:
        addq    $8, %rsp
        .cfi_def_cfa_offset 8
        ret
        .cfi_endproc
        .size   rw_call_managed, .-rw_call_managed

        .section .note.GNU-stack,"",@progbits
#endif
