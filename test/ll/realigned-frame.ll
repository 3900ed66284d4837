; rootwalk corpus: realigned-frame
; Covers: StackSize UINT64_MAX from stack realignment (an `align 64` alloca): the prologue does
;   `andq $-64, %rsp` and the epilogue `movq %rbp, %rsp`. RS4GC turns both calls into
;   statepoints, so the function has two records; gc pointers stay RSP-relative
;   (`Indirect [R#7 + 56]`), which is valid because RSP is fixed after the realignment.
; Build: opt -passes=rewrite-statepoints-for-gc -S realigned-frame.ll | llc -filetype=obj

declare void @use(i8*)
declare void @callee()

define i64 @realigned_statepoint(i64 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %buf = alloca [4 x i64], align 64
  %p = bitcast [4 x i64]* %buf to i8*
  call void @use(i8* %p)
  call void @callee()
  %v = load i64, i64 addrspace(1)* %obj
  ret i64 %v
}
