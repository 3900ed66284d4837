; rootwalk check corpus (statepoint), MISTAKE gc-pointer-in-aggregate: @rw_main packs the object
; and its length into a { i8 addrspace(1)*, i64 } value and keeps the pair across gc_collect;
; rewrite-statepoints-for-gc relocates pointer values, not aggregates, so %pair still holds the
; old address after the call.
; Expected: one finding, gc-pointer-in-aggregate in @rw_main: %pair across @gc_collect.
; Fix: extractvalue the pointer before the call and keep it as its own value across it.
source_filename = "sp-gc-pointer-in-aggregate"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %p0 = insertvalue { i8 addrspace(1)*, i64 } undef, i8 addrspace(1)* %o, 0
  %pair = insertvalue { i8 addrspace(1)*, i64 } %p0, i64 16, 1
  call void @gc_collect()
  %obj = extractvalue { i8 addrspace(1)*, i64 } %pair, 0
  %w = bitcast i8 addrspace(1)* %obj to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %w, align 8
  ret i64 %v
}
