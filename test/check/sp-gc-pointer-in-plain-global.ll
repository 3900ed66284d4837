; rootwalk check corpus (statepoint), MISTAKE gc-pointer-in-plain-global: @remember keeps the last
; node in @cache, a plain global that no gc_add_global call registers; @rw_main collects, then
; @recall reads @cache: the collector moved (or freed) the node and never updated @cache.
; Expected: one finding, gc-pointer-in-plain-global in @rw_main: @cache across @gc_collect.
; Fix: `call void @gc_add_global(i8 addrspace(1)** @cache)` in @rw_main, before @remember.
source_filename = "sp-gc-pointer-in-plain-global"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8
@cache = global i8 addrspace(1)* null, align 8

define void @remember(i8 addrspace(1)* %node) gc "statepoint-example" {
entry:
  store i8 addrspace(1)* %node, i8 addrspace(1)** @cache, align 8
  ret void
}

define i64 @recall() gc "statepoint-example" {
entry:
  %node = load i8 addrspace(1)*, i8 addrspace(1)** @cache, align 8
  %w = bitcast i8 addrspace(1)* %node to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %w, align 8
  ret i64 %v
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  call void @remember(i8 addrspace(1)* %o)
  call void @gc_collect()
  %v = call i64 @recall()
  ret i64 %v
}
