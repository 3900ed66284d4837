; rootwalk corpus: dynamic-frame
; Covers: StackSize UINT64_MAX (18446744073709551615) from variable-sized allocas.
;   @dynamic_stackmap:   `alloca i8, i64 %n` + a stackmap; rsp is set from a register
;                        (`movq %rbx, %rsp`) and restored with `leaq -24(%rbp), %rsp`.
;   @dynamic_statepoint: the same in a gc function: the statepoint's gc pointer is spilled
;                        RBP-relative (`Indirect [R#6 + -24]`) because RSP moves at run time.
; Build: opt -passes=rewrite-statepoints-for-gc -S dynamic-frame.ll | llc -filetype=obj

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @use(i8*)
declare void @callee()

define void @dynamic_stackmap(i64 %n, i64 %a) {
entry:
  %buf = alloca i8, i64 %n
  call void @use(i8* %buf)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 5, i32 0, i64 %a, i8* %buf, i64 %n)
  call void @use(i8* %buf)
  ret void
}

define i64 @dynamic_statepoint(i64 addrspace(1)* %obj, i64 %n) gc "statepoint-example" {
entry:
  %buf = alloca i64, i64 %n
  store i64 1, i64* %buf
  call void @callee()
  %v = load i64, i64 addrspace(1)* %obj
  %w = load i64, i64* %buf
  %s = add i64 %v, %w
  ret i64 %s
}
