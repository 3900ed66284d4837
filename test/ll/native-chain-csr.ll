; rootwalk corpus: native-chain-csr (stopped at a safepoint by test/walker/native/harness.c)
; A real stop at gc_safepoint_poll, 4 managed frames deep (innermost first):
;   rw_csr_f3 -> rw_csr_f2 -> rw_csr_f1 -> rw_chain_entry -> (rw_enter, the boundary)
; Covers: GC pointers kept in callee-saved registers across statepoints (`Register R#3`,
;   R#12..R#15) in every frame, including the OUTER ones: there the root's value is not in the
;   register at the stop but in the save slot of the next inner frame's prologue (or, for
;   rw_csr_f3, in the registers gc_safepoint_poll saved, i.e. the snapshot's `registers`).
; Build: opt -passes=rewrite-statepoints-for-gc |
;        llc -O2 -filetype=obj -max-registers-for-gc-values=4 -fixup-allow-gcptr-in-csr
; Objects (harness.c): A[k] = 0x100 + k, B[k] = 0x200 + k, C[k] = 0x300 + k, D[k] = 0x400 + k,
; 8 words each. Result: see @rw_expected_result.

declare void @gc_safepoint_poll()

; innermost: p = D, q = C
define i64 @rw_csr_f3(i8 addrspace(1)* %p, i8 addrspace(1)* %q) #0 gc "statepoint-example" {
entry:
  call void @gc_safepoint_poll()
  %pi = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %qi = bitcast i8 addrspace(1)* %q to i64 addrspace(1)*
  %p1 = getelementptr i64, i64 addrspace(1)* %pi, i64 1
  %q2 = getelementptr i64, i64 addrspace(1)* %qi, i64 2
  %x = load i64, i64 addrspace(1)* %p1      ; D[1] = 0x401
  %y = load i64, i64 addrspace(1)* %q2      ; C[2] = 0x302
  %s = add i64 %x, %y                       ; 0x703
  ret i64 %s
}

; a = B, b = C, c = D
define i64 @rw_csr_f2(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_csr_f3(i8 addrspace(1)* %c, i8 addrspace(1)* %b)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %bi = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %a3 = getelementptr i64, i64 addrspace(1)* %ai, i64 3
  %x = load i64, i64 addrspace(1)* %a3      ; B[3] = 0x203
  %y = load i64, i64 addrspace(1)* %bi      ; C[0] = 0x300
  %z = load i64, i64 addrspace(1)* %ci      ; D[0] = 0x400
  %s1 = add i64 %r, %x
  %s2 = add i64 %s1, %y
  %s3 = add i64 %s2, %z                     ; 0x703+0x203+0x300+0x400 = 0x1006
  ret i64 %s3
}

; a = A, b = B, c = C, d = D
define i64 @rw_csr_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_csr_f2(i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %bi = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %a4 = getelementptr i64, i64 addrspace(1)* %ai, i64 4
  %b5 = getelementptr i64, i64 addrspace(1)* %bi, i64 5
  %x = load i64, i64 addrspace(1)* %a4      ; A[4] = 0x104
  %y = load i64, i64 addrspace(1)* %b5      ; B[5] = 0x205
  %s1 = add i64 %r, %x
  %s2 = add i64 %s1, %y                     ; 0x1006+0x104+0x205 = 0x130f
  ret i64 %s2
}

define i64 @rw_chain_entry(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_csr_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %bi = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %di = bitcast i8 addrspace(1)* %d to i64 addrspace(1)*
  %a6 = getelementptr i64, i64 addrspace(1)* %ai, i64 6
  %b6 = getelementptr i64, i64 addrspace(1)* %bi, i64 6
  %c6 = getelementptr i64, i64 addrspace(1)* %ci, i64 6
  %d6 = getelementptr i64, i64 addrspace(1)* %di, i64 6
  %x1 = load i64, i64 addrspace(1)* %a6     ; 0x106
  %x2 = load i64, i64 addrspace(1)* %b6     ; 0x206
  %x3 = load i64, i64 addrspace(1)* %c6     ; 0x306
  %x4 = load i64, i64 addrspace(1)* %d6     ; 0x406
  %s1 = add i64 %r, %x1
  %s2 = add i64 %s1, %x2
  %s3 = add i64 %s2, %x3
  %s4 = add i64 %s3, %x4                    ; 0x130f+0xa18 = 0x1d27
  ret i64 %s4
}

@rw_expected_result = constant i64 7463     ; 0x1d27

attributes #0 = { noinline }
