; rootwalk corpus: native-chain-dynamic (stopped at a safepoint by test/walker/native/harness.c)
; A real stop at gc_safepoint_poll, 4 managed frames deep (innermost first):
;   rw_dyn_f3 -> rw_dyn_f2 -> rw_dyn_f1 -> rw_chain_entry -> (rw_enter, the boundary)
; Covers: a MIDDLE frame (rw_dyn_f2) with a variable-sized alloca (`alloca i64, i64 %n`, %n a
;   function argument): its StackSize is 18446744073709551615 (UINT64_MAX), it keeps a frame
;   pointer (RA at [RBP+8], caller SP = RBP+16) and its gc pointers are spilled RBP-relative
;   (`Indirect [R#6 + off]`). At the stop it is an outer frame, so its RBP is the value the inner
;   frame rw_dyn_f3 saved (or, if rw_dyn_f3 does not touch RBP, still the live RBP).
; Build: opt -passes=rewrite-statepoints-for-gc | llc -O2 -filetype=obj
; Objects (harness.c): A[k] = 0x100 + k, B[k] = 0x200 + k, C[k] = 0x300 + k, D[k] = 0x400 + k,
; 8 words each. Result: see @rw_expected_result.

declare void @gc_safepoint_poll()

; innermost: p = B, q = D
define i64 @rw_dyn_f3(i8 addrspace(1)* %p, i8 addrspace(1)* %q) #0 gc "statepoint-example" {
entry:
  call void @gc_safepoint_poll()
  %pi = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %qi = bitcast i8 addrspace(1)* %q to i64 addrspace(1)*
  %p7 = getelementptr i64, i64 addrspace(1)* %pi, i64 7
  %x = load i64, i64 addrspace(1)* %p7      ; B[7] = 0x207
  %y = load i64, i64 addrspace(1)* %qi      ; D[0] = 0x400
  %s = add i64 %x, %y                       ; 0x607
  ret i64 %s
}

; a = A, b = B, d = D, n = 5
define i64 @rw_dyn_f2(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %d, i64 %n) #0 gc "statepoint-example" {
entry:
  %buf = alloca i64, i64 %n
  %last = add i64 %n, -1
  %slot = getelementptr i64, i64* %buf, i64 %last
  store i64 4096, i64* %buf
  store i64 %n, i64* %slot
  %r = call i64 @rw_dyn_f3(i8 addrspace(1)* %b, i8 addrspace(1)* %d)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %a1 = getelementptr i64, i64 addrspace(1)* %ai, i64 1
  %x = load i64, i64 addrspace(1)* %a1      ; A[1] = 0x101
  %w0 = load i64, i64* %buf                 ; 0x1000
  %w1 = load i64, i64* %slot                ; 5
  %s1 = add i64 %r, %x
  %s2 = add i64 %s1, %w0
  %s3 = add i64 %s2, %w1                    ; 0x607+0x101+0x1000+5 = 0x170d
  ret i64 %s3
}

; a = A, b = B, c = C, d = D
define i64 @rw_dyn_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_dyn_f2(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %d, i64 5)
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %c3 = getelementptr i64, i64 addrspace(1)* %ci, i64 3
  %x = load i64, i64 addrspace(1)* %c3      ; C[3] = 0x303
  %s = add i64 %r, %x                       ; 0x1a10
  ret i64 %s
}

define i64 @rw_chain_entry(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_dyn_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d)
  %di = bitcast i8 addrspace(1)* %d to i64 addrspace(1)*
  %d2 = getelementptr i64, i64 addrspace(1)* %di, i64 2
  %x = load i64, i64 addrspace(1)* %d2      ; D[2] = 0x402
  %s = add i64 %r, %x                       ; 0x1e12
  ret i64 %s
}

@rw_expected_result = constant i64 7698     ; 0x1e12

attributes #0 = { noinline }
