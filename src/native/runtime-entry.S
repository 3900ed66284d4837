/*
 * rootwalk native runtime: the assembly entry points, for x86-64 (SysV, AT&T syntax) and AArch64
 * (AAPCS64), chosen by the compiler's target (__x86_64__, __aarch64__).
 *
 * Every runtime function managed code may call (gc_init, gc_alloc, gc_safepoint, gc_collect,
 * gc_thread_start, gc_thread_join, thread_stuck_start, thread_stuck_end, no_gc_thread,
 * gc_add_global) enters through a stub that saves the callee-saved registers and calls the C
 * implementation rw_impl_<name>(arg0, arg1, frame) with, for N callee-saved registers,
 *
 *     frame[0..N-1] = the callee-saved registers as the managed caller left them, in the
 *                     architecture's order (src/arch/x86-64.ts: rbx, rbp, r12-r15, N = 6;
 *                     src/arch/aarch64.ts: x19-x28, x29, x30, N = 12).
 *                     test/native-runtime/runtime-layout.test.ts reads this file's CFI and fails
 *                     when the order differs from the TypeScript description
 *     frame[N]      = the return address into the managed caller       (RW_FRAME_RA_BYTES = 8N)
 *     frame + 8(N+1) = the managed caller's SP after the call returns  (RW_FRAME_SP_BYTES)
 *
 * The C side copies them into the calling thread's record and, before returning, writes the
 * record's (possibly relocated) register values back into frame[0..N-1]; the stub restores them,
 * so GC pointers the collector moved while the thread was stopped come back relocated. The
 * result register (rax, x0) is not touched after the call.
 *
 * x86-64: the call pushed the return address; the stub pushes r15 first and rbx last, so frame is
 * its final SP. AArch64: `bl` left the return address in x30 and pushed nothing; the stub reserves
 * 112 bytes (SP stays 16-byte aligned) and frame is SP + 8, so that frame + 104 is the caller's SP.
 * x30 is stored twice: frame[11] is the register as the caller sees it right after the call
 * returns (the return address, since `bl` wrote it), frame[12] the return address.
 *
 * rw_call_managed(fn, arg) calls fn(arg) through a register; rw_managed_return is the return
 * address of that call: the boundary where managed code was entered (the walk ends there).
 *
 * The test harnesses use the same safepoint stub: with RW_ENTRY_MACRO_ONLY defined, including
 * this file defines only the RW_ENTRY macro and the frame offsets (test/walker/native/trampoline.S).
 */
#if defined(__x86_64__)
#define RW_FRAME_RA_BYTES 48
#define RW_FRAME_SP_BYTES 56
#elif defined(__aarch64__)
#define RW_FRAME_RA_BYTES 96
#define RW_FRAME_SP_BYTES 104
#else
#error "the rootwalk runtime is built for x86-64 or AArch64 Linux only"
#endif

#if defined(__x86_64__)
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

#endif /* __x86_64__ */

#if defined(__aarch64__)
        .text

.macro RW_ENTRY name
        .globl  \name
        .type   \name, %function
        .p2align 4
\name:
        .cfi_startproc
        sub     sp, sp, #112
        .cfi_def_cfa_offset 112
        stp     x19, x20, [sp, #8]
        stp     x21, x22, [sp, #24]
        stp     x23, x24, [sp, #40]
        stp     x25, x26, [sp, #56]
        stp     x27, x28, [sp, #72]
        stp     x29, x30, [sp, #88]
        str     x30, [sp, #104]         /* frame[12]: the return address */
        .cfi_offset x19, -104
        .cfi_offset x20, -96
        .cfi_offset x21, -88
        .cfi_offset x22, -80
        .cfi_offset x23, -72
        .cfi_offset x24, -64
        .cfi_offset x25, -56
        .cfi_offset x26, -48
        .cfi_offset x27, -40
        .cfi_offset x28, -32
        .cfi_offset x29, -24
        .cfi_offset x30, -16
        add     x2, sp, #8              /* frame */
        bl      rw_impl_\name
        ldp     x19, x20, [sp, #8]
        ldp     x21, x22, [sp, #24]
        ldp     x23, x24, [sp, #40]
        ldp     x25, x26, [sp, #56]
        ldp     x27, x28, [sp, #72]
        ldp     x29, x30, [sp, #88]
        add     sp, sp, #112
        .cfi_def_cfa_offset 0
        ret
        .cfi_endproc
        .size   \name, .-\name
.endm

#endif /* __aarch64__ */

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

#if defined(__x86_64__)
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
#elif defined(__aarch64__)
        .globl  rw_call_managed
        .globl  rw_managed_return
        .type   rw_call_managed, %function
        .p2align 4
rw_call_managed:
        .cfi_startproc
        stp     x29, x30, [sp, #-16]!
        .cfi_def_cfa_offset 16
        .cfi_offset x29, -16
        .cfi_offset x30, -8
        mov     x29, sp
        mov     x9, x0
        mov     x0, x1
        blr     x9
rw_managed_return:
        ldp     x29, x30, [sp], #16
        .cfi_def_cfa_offset 0
        .cfi_restore x29
        .cfi_restore x30
        ret
        .cfi_endproc
        .size   rw_call_managed, .-rw_call_managed
#endif


/*
 * rw_return_barrier_trampoline: what an armed return-address slot holds (runtime-return-barrier.c).
 * It is reached by a `ret` of a managed function whose caller's frame has not run since the last
 * collection. It keeps every return-value register (x86-64 rax, rdx, xmm0, xmm1; AArch64 x0-x8,
 * q0-q7) and, through the C call, every callee-saved one; it stores them in the dead callee frame
 * below SP, aligned for the call; rw_return_barrier_hit(SP after the ret) pops the thread's
 * innermost barrier and returns the original return address, to which the trampoline jumps
 * (x86-64 r11, AArch64 x16: scratch registers no return value uses). Its CFI makes the frame a
 * named one whose caller is unknown (gdb: "rw_return_barrier_trampoline", then "Backtrace
 * stopped"); a label one instruction in, so that an unwinder's lookup of (return address - 1)
 * for a frame whose slot holds the trampoline finds this function.
 */
#if defined(__x86_64__)
        .globl  rw_return_barrier_trampoline
        .type   rw_return_barrier_trampoline, @function
        .p2align 4
rw_return_barrier_trampoline_start:
        .cfi_startproc
        .cfi_def_cfa %rsp, 0
        .cfi_undefined %rip
        nop
rw_return_barrier_trampoline:
        movq    %rsp, %r11
        .cfi_def_cfa_register %r11
        andq    $-16, %rsp
        subq    $64, %rsp
        movq    %r11, 48(%rsp)
        .cfi_escape 0x0f, 0x03, 0x77, 0x30, 0x06 /* DW_CFA_def_cfa_expression: *(rsp + 48) */
        movdqa  %xmm0, 0(%rsp)
        movdqa  %xmm1, 16(%rsp)
        movq    %rax, 32(%rsp)
        movq    %rdx, 40(%rsp)
        movq    %r11, %rdi
        call    rw_return_barrier_hit
        movq    %rax, %r11
        movdqa  0(%rsp), %xmm0
        movdqa  16(%rsp), %xmm1
        movq    32(%rsp), %rax
        movq    40(%rsp), %rdx
        movq    48(%rsp), %rsp
        .cfi_def_cfa %rsp, 0
        jmp     *%r11
        .cfi_endproc
        .size   rw_return_barrier_trampoline, .-rw_return_barrier_trampoline
#elif defined(__aarch64__)
        .globl  rw_return_barrier_trampoline
        .type   rw_return_barrier_trampoline, %function
        .p2align 4
rw_return_barrier_trampoline_start:
        .cfi_startproc
        .cfi_def_cfa sp, 0
        .cfi_undefined x30
        nop
rw_return_barrier_trampoline:
        sub     sp, sp, #224
        .cfi_def_cfa_offset 224
        stp     x29, x30, [sp]
        stp     x0, x1, [sp, #16]
        stp     x2, x3, [sp, #32]
        stp     x4, x5, [sp, #48]
        stp     x6, x7, [sp, #64]
        str     x8, [sp, #80]
        stp     q0, q1, [sp, #96]
        stp     q2, q3, [sp, #128]
        stp     q4, q5, [sp, #160]
        stp     q6, q7, [sp, #192]
        add     x0, sp, #224
        bl      rw_return_barrier_hit
        mov     x16, x0
        ldp     x0, x1, [sp, #16]
        ldp     x2, x3, [sp, #32]
        ldp     x4, x5, [sp, #48]
        ldp     x6, x7, [sp, #64]
        ldr     x8, [sp, #80]
        ldp     q0, q1, [sp, #96]
        ldp     q2, q3, [sp, #128]
        ldp     q4, q5, [sp, #160]
        ldp     q6, q7, [sp, #192]
        ldp     x29, x30, [sp]
        add     sp, sp, #224
        .cfi_def_cfa_offset 0
        br      x16
        .cfi_endproc
        .size   rw_return_barrier_trampoline, .-rw_return_barrier_trampoline
#endif

        .section .note.GNU-stack,"",%progbits
#endif
