# A module with a `_GC_MAP_` v1 blob written by hand in the plimmix plugin's output shape (layout:
# src/stackmap/plimmix-map.ts), so that the ELF side of the plimmix loader (symbols, .rela.data,
# .rela.dyn, .eh_frame) is tested without the plugin. Assembled by test/formats/compile-formats.ts
# with `llvm-mc -filetype=obj -triple=x86_64-pc-linux-gnu plimmix-handwritten.s` in this directory,
# and linked into a shared library with `gcc -shared`.
#
#   static_fn    a 24-byte frame (3 words) with a POINTER root at sp+0 and a TRAIT root at sp+8;
#                three safepoints, the second one after a call with 24 bytes of pushed arguments
#                (the CFI follows the pushes: CFA = rsp + 56 there, the recorded frame is 24)
#   dynamic_fn   a frame-pointer frame with a variable-sized allocation (frame size -1), a POINTER
#                root at rbp-8
#   gc_global    one global root

        .text
        .globl  static_fn
        .type   static_fn,@function
        .p2align 4
static_fn:
        .cfi_startproc
        subq    $24, %rsp
        .cfi_def_cfa_offset 32
        movq    $0, (%rsp)
        movq    $0, 8(%rsp)
        movl    $16, %edi
        callq   alloc@PLT
.Lsafepoint0:
        movq    %rax, (%rsp)
        subq    $8, %rsp
        .cfi_adjust_cfa_offset 8
        pushq   $8
        .cfi_adjust_cfa_offset 8
        pushq   $7
        .cfi_adjust_cfa_offset 8
        movl    $1, %edi
        movl    $2, %esi
        movl    $3, %edx
        movl    $4, %ecx
        movl    $5, %r8d
        movl    $6, %r9d
        callq   many@PLT
.Lsafepoint1:
        addq    $24, %rsp
        .cfi_adjust_cfa_offset -24
        movq    8(%rsp), %rdi
        callq   use@PLT
.Lsafepoint2:
        addq    $24, %rsp
        .cfi_def_cfa_offset 8
        retq
.Lstatic_fn_end:
        .size   static_fn, .Lstatic_fn_end-static_fn
        .cfi_endproc

        .globl  dynamic_fn
        .type   dynamic_fn,@function
        .p2align 4
dynamic_fn:
        .cfi_startproc
        pushq   %rbp
        .cfi_def_cfa_offset 16
        .cfi_offset %rbp, -16
        movq    %rsp, %rbp
        .cfi_def_cfa_register %rbp
        subq    $16, %rsp
        movq    $0, -8(%rbp)
        addq    $15, %rdi
        andq    $-16, %rdi
        subq    %rdi, %rsp
        movq    %rsp, %rdi
        callq   alloc@PLT
.Lsafepoint3:
        movq    %rax, -8(%rbp)
        movq    %rbp, %rsp
        popq    %rbp
        .cfi_def_cfa %rsp, 8
        retq
.Ldynamic_fn_end:
        .size   dynamic_fn, .Ldynamic_fn_end-dynamic_fn
        .cfi_endproc

        .data
        .p2align 3
        .globl  gc_global
        .type   gc_global,@object
        .size   gc_global, 8
gc_global:
        .quad   0

        .globl  _GC_MAP_handwritten.c
        .p2align 3
_GC_MAP_handwritten.c:
        .long   1, 0                    # version (an i64)
        .long   2, 0                    # N = 2, padding
        # static_fn: 3 words, 0 stack arguments, 2 roots, 3 safepoints
        .quad   static_fn
        .long   3, 0, 2, 3
        .quad   .Lsafepoint0, .Lsafepoint1, .Lsafepoint2
        .long   0, 3                    # sp+0 POINTER
        .long   8, 1                    # sp+8 TRAIT
        # dynamic_fn: dynamic (-1), 1 stack argument, 1 root, 1 safepoint
        .quad   dynamic_fn
        .long   -1, 1, 1, 1
        .quad   .Lsafepoint3
        .long   -8, 3                   # rbp-8 POINTER
        # globals
        .long   1, 0
        .quad   gc_global

        .section .note.GNU-stack,"",@progbits
