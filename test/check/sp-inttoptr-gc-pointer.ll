; rootwalk check corpus (statepoint), MISTAKE inttoptr-gc-pointer: @rw_main computes the address
; of the object's second word as an integer and makes %field with inttoptr before gc_collect,
; then reads through it after: rewrite-statepoints-for-gc takes %field for its own base, and the
; collector takes that base (8 bytes into the object) for an object's start (`run --stress
; --verify`: "not an object start", and a wrong result instead of 42).
; Expected: one finding, inttoptr-gc-pointer in @rw_main: %field across @gc_collect.
; Fix: `%field = getelementptr i8, i8 addrspace(1)* %o, i64 8` (relocated with %o).
source_filename = "sp-inttoptr-gc-pointer"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %a = ptrtoint i8 addrspace(1)* %o to i64
  %b = add i64 %a, 8
  %field = inttoptr i64 %b to i64 addrspace(1)*
  store i64 42, i64 addrspace(1)* %field, align 8
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %field, align 8
  %w = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  %first = load i64, i64 addrspace(1)* %w, align 8
  %s = add i64 %v, %first
  ret i64 %s
}
