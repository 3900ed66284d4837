; rootwalk check corpus (statepoint), MISTAKE missing-gc-init: the program allocates but never
; calls gc_init, so the runtime has no stack map (it stops at the first allocation).
; Expected: one finding, missing-gc-init (first allocation in @rw_main).
; Fix: `call void @gc_init(i8* @__LLVM_StackMaps)` first in @rw_main.
source_filename = "sp-missing-gc-init"
declare i8 addrspace(1)* @gc_alloc(i64, i64)

define i64 @rw_main() gc "statepoint-example" {
entry:
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  ret i64 0
}
