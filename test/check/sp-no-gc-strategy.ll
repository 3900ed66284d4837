; rootwalk check corpus (statepoint), MISTAKE no-gc-strategy: @append has no `gc` strategy, so
; rewrite-statepoints-for-gc leaves it alone and no stack map covers its frame; it holds %list (a
; GC pointer) across gc_alloc, which may move the list, then stores the stale %list.
; Expected: one finding, no-gc-strategy in @append: %list across @gc_alloc.
; Fix: `define ... @append(...) gc "statepoint-example"`.
source_filename = "sp-no-gc-strategy"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
@__LLVM_StackMaps = extern_weak global i8

define i8 addrspace(1)* @append(i8 addrspace(1)* %list) {
entry:
  %node = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %slot = bitcast i8 addrspace(1)* %node to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %list, i8 addrspace(1)* addrspace(1)* %slot
  ret i8 addrspace(1)* %node
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %a = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %b = call i8 addrspace(1)* @append(i8 addrspace(1)* %a)
  ret i64 0
}
