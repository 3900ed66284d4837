; rootwalk corpus: mixed-kinds
; Covers: stackmap, patchpoint and statepoint records in one module, in the order llc emits
;   them (function order; within a function, instruction order), and functions without records.
;   @internal_stackmap: an internal function: its Function Address relocation is against
;                       `.text` + its offset, not against its own symbol. A stackmap with an 8-byte
;                       shadow right after a call: its offset is the call's return address.
;   @no_records, @another_without_records: no record, so no StkSizeRecord: the function table
;                       skips them (@no_records sits between two functions that have records).
;   @patchpoint_caller: a C-convention patchpoint calling @external_target through r11. Its
;                       record offset is the START of the patchpoint sequence (movabsq), not the
;                       return address of its `callq *%r11`: look it up by return address and
;                       you will not find it. Live-outs: rbx, rsp, r14.
;   @statepoint_and_stackmap: statepoint, stackmap, statepoint (with no gc pointer: 3 locations)
;                       in one gc function.
; Build: opt -passes=rewrite-statepoints-for-gc -S mixed-kinds.ll | llc -filetype=obj

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare void @callee(i64)
declare void @external_target()

define internal i64 @internal_stackmap(i64 %a) noinline {
entry:
  call void @callee(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 100, i32 8, i64 %a)
  ret i64 %a
}

define i64 @no_records(i64 %a, i64 %b) {
entry:
  %s = mul i64 %a, %b
  ret i64 %s
}

define i64 @patchpoint_caller(i64 %a, i64 %b) {
entry:
  %r = call i64 @internal_stackmap(i64 %b)
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 101, i32 13, i8* bitcast (void ()* @external_target to i8*), i32 0, i64 %a, i64 %r)
  %s = add i64 %r, %a
  ret i64 %s
}

define i64 @statepoint_and_stackmap(i64 addrspace(1)* %obj, i64 %a) gc "statepoint-example" {
entry:
  call void @callee(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 102, i32 0, i64 %a, i64 addrspace(1)* %obj)
  %v = load i64, i64 addrspace(1)* %obj
  %c = call i64 @no_records(i64 %v, i64 %a)
  ret i64 %c
}

define i64 @another_without_records(i64 %a) {
entry:
  %c = call i64 @no_records(i64 %a, i64 3)
  ret i64 %c
}
