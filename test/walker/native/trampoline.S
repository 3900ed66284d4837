/*
 * rootwalk native stop: the two assembly entry points of the harness (x86-64 SysV, AT&T).
 *
 * gc_safepoint_poll: the safepoint the managed code calls (through a statepoint). It records
 *   the managed caller's state as the CPU left it at the call:
 *     sp  = the SP right after the call returns = entry %rsp + 8   (lea 8(%rsp) at entry)
 *     ra  = the return address                 = (%rsp) at entry
 *     rbx, rbp, r12, r13, r14, r15 as they are at entry (pushed before anything else runs)
 *   and calls rw_safepoint_handler(sp, ra, saved) with saved = {rbx, rbp, r12, r13, r14, r15}.
 *   Everything it touched is restored before it returns normally to the managed code.
 *
 * rw_enter(fn, a, b, c, d): calls fn(a, b, c, d) through a register. The global label
 *   rw_enter_return is the return address of that call: the "boundary" where managed code was
 *   entered from native code (a walker stops when it reaches it).
 *
 * Both carry CFI so that gdb (and any .eh_frame unwinder) can unwind through them.
 */
        .text

        .globl  gc_safepoint_poll
        .type   gc_safepoint_poll, @function
        .p2align 4
gc_safepoint_poll:
        .cfi_startproc
        /* CFA = entry %rsp + 8 = the managed caller's SP after the return. */
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
        /* (%rsp) = {rbx, rbp, r12, r13, r14, r15}, 48(%rsp) = return address. */
        leaq    56(%rsp), %rdi          /* sp: entry %rsp + 8 */
        movq    48(%rsp), %rsi          /* ra */
        movq    %rsp, %rdx              /* saved registers */
        subq    $8, %rsp                /* entry %rsp = 8 mod 16, 6 pushes: realign to 16 */
        .cfi_def_cfa_offset 64
        call    rw_safepoint_handler
        addq    $8, %rsp
        .cfi_def_cfa_offset 56
        popq    %rbx
        .cfi_def_cfa_offset 48
        .cfi_restore %rbx
        popq    %rbp
        .cfi_def_cfa_offset 40
        .cfi_restore %rbp
        popq    %r12
        .cfi_def_cfa_offset 32
        .cfi_restore %r12
        popq    %r13
        .cfi_def_cfa_offset 24
        .cfi_restore %r13
        popq    %r14
        .cfi_def_cfa_offset 16
        .cfi_restore %r14
        popq    %r15
        .cfi_def_cfa_offset 8
        .cfi_restore %r15
        ret
        .cfi_endproc
        .size   gc_safepoint_poll, .-gc_safepoint_poll

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
