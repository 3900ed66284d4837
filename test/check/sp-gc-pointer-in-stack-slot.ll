; rootwalk check corpus (statepoint), MISTAKE gc-pointer-in-stack-slot: %keep is an ordinary
; alloca; rewrite-statepoints-for-gc relocates SSA values only, so the pointer stored in %keep
; before gc_collect is read back unrelocated after it.
; Expected: one finding, gc-pointer-in-stack-slot in @rw_main: %keep across @gc_collect.
; Fix: keep %o in an SSA value (or run mem2reg/sroa before rewrite-statepoints-for-gc).
source_filename = "sp-gc-pointer-in-stack-slot"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  %keep = alloca i8 addrspace(1)*, align 8
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  store i8 addrspace(1)* %o, i8 addrspace(1)** %keep, align 8
  call void @gc_collect()
  %again = load i8 addrspace(1)*, i8 addrspace(1)** %keep, align 8
  %w = bitcast i8 addrspace(1)* %again to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %w
  ret i64 %v
}
