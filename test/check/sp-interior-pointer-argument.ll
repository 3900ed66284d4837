; rootwalk check corpus (statepoint), MISTAKE interior-pointer-argument: @rw_main passes %mid, 8
; bytes into an object, to @read_later, which polls: in @read_later the argument is a base, and
; the collector takes every base for an object's address (it has no interior-pointer lookup).
; Expected: one finding, interior-pointer-argument in @rw_main: %mid passed to @read_later.
; Fix: pass %o and the offset 8; make the interior pointer in @read_later after the poll.
source_filename = "sp-interior-pointer-argument"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@__LLVM_StackMaps = extern_weak global i8

define i64 @read_later(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  call void @gc_safepoint()
  %w = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %w
  ret i64 %v
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %mid = getelementptr i8, i8 addrspace(1)* %o, i64 8
  %v = call i64 @read_later(i8 addrspace(1)* %mid)
  ret i64 %v
}
