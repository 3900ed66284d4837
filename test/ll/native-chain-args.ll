; rootwalk corpus: native-chain-args (stopped at a safepoint by test/walker/native/harness.c)
; A real stop at gc_safepoint_poll, 4 managed frames deep (innermost first):
;   rw_args_f3 -> rw_args_f2 -> rw_args_f1 -> rw_chain_entry -> (rw_enter, the boundary)
; Covers: (each item below)
;   - rw_args_f1 calls rw_args_f2 with 9 integer-class arguments: llc (X86CallFrameOptimization,
;     on by default at -O2) does `subq $8` (alignment) and PUSHES the last three (x6, x7 and the
;     GC pointer D) right before the call, so at the stop rw_args_f1 is an OUTER frame with 32
;     bytes below its fixed frame: its record's offsets include them ([R#7 + 64] etc.), its
;     StackSize (40) does not (only .eh_frame does).
;   - rw_args_f1 keeps a derived pointer %der = B + 8*(A[3] & 7) (variable-offset GEP) live
;     across that call: a (base B, derived B+24) pair (needs -spp-rematerialization-threshold=0).
; Build: opt -passes=rewrite-statepoints-for-gc -spp-rematerialization-threshold=0 |
;        llc -O2 -filetype=obj   (default options otherwise)
; Objects (harness.c): A[k] = 0x100 + k, B[k] = 0x200 + k, C[k] = 0x300 + k, D[k] = 0x400 + k,
; 8 words each. Result: see @rw_expected_result.

declare void @gc_safepoint_poll()

; innermost: p = C, q = D
define i64 @rw_args_f3(i8 addrspace(1)* %p, i8 addrspace(1)* %q) #0 gc "statepoint-example" {
entry:
  call void @gc_safepoint_poll()
  %pi = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %qi = bitcast i8 addrspace(1)* %q to i64 addrspace(1)*
  %q1 = getelementptr i64, i64 addrspace(1)* %qi, i64 1
  %x = load i64, i64 addrspace(1)* %pi      ; C[0] = 0x300
  %y = load i64, i64 addrspace(1)* %q1      ; D[1] = 0x401
  %s = add i64 %x, %y                       ; 0x701
  ret i64 %s
}

; p = C, x1..x7 = 1, 2, 3, 4, 5, A[2] = 0x102, 7
define i64 @rw_args_f2(i8 addrspace(1)* %p, i64 %x1, i64 %x2, i64 %x3, i64 %x4, i64 %x5, i64 %x6, i64 %x7, i8 addrspace(1)* %q) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_args_f3(i8 addrspace(1)* %p, i8 addrspace(1)* %q)
  %pi = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %p2 = getelementptr i64, i64 addrspace(1)* %pi, i64 2
  %v = load i64, i64 addrspace(1)* %p2      ; C[2] = 0x302
  %s1 = add i64 %x1, %x2
  %s2 = add i64 %s1, %x3
  %s3 = add i64 %s2, %x4
  %s4 = add i64 %s3, %x5
  %s5 = add i64 %s4, %x6
  %s6 = add i64 %s5, %x7                    ; 1+2+3+4+5+0x102+7 = 0x118
  %t = add i64 %s6, %v                      ; 0x41a
  %u = add i64 %t, %r                       ; 0xb1b
  ret i64 %u
}

; a = A, b = B, c = C, d = D
define i64 @rw_args_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %a3 = getelementptr i64, i64 addrspace(1)* %ai, i64 3
  %w = load i64, i64 addrspace(1)* %a3      ; A[3] = 0x103
  %i = and i64 %w, 7                        ; 3
  %off = shl i64 %i, 3                      ; 24
  %der = getelementptr i8, i8 addrspace(1)* %b, i64 %off   ; B + 24
  %a2 = getelementptr i64, i64 addrspace(1)* %ai, i64 2
  %x6 = load i64, i64 addrspace(1)* %a2     ; A[2] = 0x102
  %r = call i64 @rw_args_f2(i8 addrspace(1)* %c, i64 1, i64 2, i64 3, i64 4, i64 5, i64 %x6, i64 7, i8 addrspace(1)* %d)
  %deri = bitcast i8 addrspace(1)* %der to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %deri    ; B[3] = 0x203
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %c4 = getelementptr i64, i64 addrspace(1)* %ci, i64 4
  %z = load i64, i64 addrspace(1)* %c4      ; C[4] = 0x304
  %s = add i64 %r, %v                       ; 0xd1e
  %t = add i64 %s, %z                       ; 0x1022
  ret i64 %t
}

define i64 @rw_chain_entry(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) #0 gc "statepoint-example" {
entry:
  %r = call i64 @rw_args_f1(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %di = bitcast i8 addrspace(1)* %d to i64 addrspace(1)*
  %d5 = getelementptr i64, i64 addrspace(1)* %di, i64 5
  %x = load i64, i64 addrspace(1)* %ai      ; A[0] = 0x100
  %y = load i64, i64 addrspace(1)* %d5      ; D[5] = 0x405
  %s = add i64 %r, %x                       ; 0x1122
  %t = add i64 %s, %y                       ; 0x1527
  ret i64 %t
}

@rw_expected_result = constant i64 5415     ; 0x1527

attributes #0 = { noinline }
