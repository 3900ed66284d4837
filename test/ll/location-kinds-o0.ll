; rootwalk corpus: location-kinds-o0
; Covers: code built at -O0: a frame-pointer prologue (push %rbp; mov %rsp,%rbp; sub $48,%rsp),
;   a stackmap whose record offset is the first instruction of the epilogue, values reloaded into
;   registers (Register), an alloca (Direct R#6 + -8), a sign-extended constant (-5 prints as
;   4294967291), a pool constant; and a statepoint compiled at -O0 (FastISel falls back to
;   SelectionDAG for it) with its gc pointer spilled RSP-relative.
; Build: opt -passes=rewrite-statepoints-for-gc -S location-kinds-o0.ll | llc -O0 -filetype=obj

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @callee(i64)

define i64 @at_o0(i64 %a, i64 %b, i64* %p) {
entry:
  %slot = alloca i64
  store i64 %a, i64* %slot
  %c = add i64 %a, %b
  call void @callee(i64 %c)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 20, i32 0, i64 %a, i64 %b, i64 %c, i64* %slot, i64 -5, i64 81985529216486895, i64* %p)
  ret i64 %c
}

define i64 @statepoint_at_o0(i64 addrspace(1)* %obj, i64 %n) gc "statepoint-example" {
entry:
  %d = getelementptr i64, i64 addrspace(1)* %obj, i64 %n
  call void @callee(i64 %n)
  %v = load i64, i64 addrspace(1)* %d
  %w = load i64, i64 addrspace(1)* %obj
  %s = add i64 %v, %w
  ret i64 %s
}
