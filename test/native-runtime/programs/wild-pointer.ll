; A program that corrupts its own heap: it stores a wild pointer (0x1234, not an object in the
; heap) into a pointer slot of a live object and then forces a collection. The collector meets the
; wild pointer while tracing and throws; the run must end with that message and a nonzero exit,
; never continue with half-relocated roots. (statepoint mode)
source_filename = "wild-pointer"

declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %slot = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* inttoptr (i64 4660 to i8 addrspace(1)*), i8 addrspace(1)* addrspace(1)* %slot
  call void @gc_collect()
  %v = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %i = ptrtoint i8 addrspace(1)* %v to i64
  ret i64 %i
}
