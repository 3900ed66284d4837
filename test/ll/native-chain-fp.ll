; rootwalk corpus: native-chain-fp (stopped at a safepoint by test/walker/native/harness.c)
; A real stop at gc_safepoint_poll, 4 managed frames deep (innermost first):
;   rw_fp_f3 -> rw_fp_f2 -> rw_fp_f1 -> rw_chain_entry -> (rw_enter, the boundary)
; Covers: every managed function has "frame-pointer"="all": `push %rbp; mov %rsp,%rbp` prologues,
;   so RBP chains through all managed frames (RA at [RBP+8]); StackSize still includes the RBP
;   push, and statepoint spill slots stay RSP-relative (`Indirect [R#7 + off]`).
; Build: opt -passes=rewrite-statepoints-for-gc | llc -O2 -filetype=obj
; Objects (harness.c): A[k] = 0x100 + k, B[k] = 0x200 + k, C[k] = 0x300 + k, D[k] = 0x400 + k,
; 8 words each. Result: see @rw_expected_result.

declare void @gc_safepoint_poll()

; innermost: p = A, q = C
define i64 @rw_fp_f3(i8 addrspace(1)* %p, i8 addrspace(1)* %q) #0 gc "statepoint-example" {
entry:
  call void @gc_safepoint_poll()
  %pi = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %qi = bitcast i8 addrspace(1)* %q to i64 addrspace(1)*
  %q1 = getelementptr i64, i64 addrspace(1)* %qi, i64 1
  %x = load i64, i64 addrspace(1)* %pi      ; A[0] = 0x100
  %y = load i64, i64 addrspace(1)* %q1      ; C[1] = 0x301
  %s = add i64 %x, %y                       ; 0x401
  ret i64 %s
}

; a = A, c = C, d = D
define i64 @rw_fp_f2(i8 addrspace(1)* %a, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_fp_f3(i8 addrspace(1)* %a, i8 addrspace(1)* %c)
  %di = bitcast i8 addrspace(1)* %d to i64 addrspace(1)*
  %d3 = getelementptr i64, i64 addrspace(1)* %di, i64 3
  %x = load i64, i64 addrspace(1)* %d3      ; D[3] = 0x403
  %s = add i64 %r, %x                       ; 0x804
  ret i64 %s
}

; a = A, b = B, c = C, d = D
define i64 @rw_fp_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_fp_f2(i8 addrspace(1)* %a, i8 addrspace(1)* %c, i8 addrspace(1)* %d)
  %bi = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %b4 = getelementptr i64, i64 addrspace(1)* %bi, i64 4
  %x = load i64, i64 addrspace(1)* %b4      ; B[4] = 0x204
  %s = add i64 %r, %x                       ; 0xa08
  ret i64 %s
}

define i64 @rw_chain_entry(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_fp_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d)
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %c7 = getelementptr i64, i64 addrspace(1)* %ci, i64 7
  %x = load i64, i64 addrspace(1)* %c7      ; C[7] = 0x307
  %s = add i64 %r, %x                       ; 0xd0f
  ret i64 %s
}

@rw_expected_result = constant i64 3343     ; 0xd0f

attributes #0 = { noinline "frame-pointer"="all" }
