; rootwalk check corpus (statepoint): `--collects`. %a (a ptrtoint) is live across a call of the
; external @my_poll, which the check cannot see into: it is not a call that can collect unless
; the user names it. Expected: no finding; with `--collects my_poll`, one finding,
; integer-across-safepoint in @rw_main: %a across @my_poll.
source_filename = "sp-collects-option"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @my_poll()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %a = ptrtoint i8 addrspace(1)* %o to i64
  call void @my_poll()
  ret i64 %a
}
