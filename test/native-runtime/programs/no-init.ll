; rootwalk run test program (statepoint), BAD: allocates without ever calling gc_init.
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()

define i64 @rw_main() gc "statepoint-example" {
entry:
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @gc_safepoint()
  %p = bitcast i8 addrspace(1)* %n to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p
  ret i64 %v
}
