; rootwalk run test program (statepoint): rw_main keeps a 64-bit value above 2^53
; (0x123456789abcdef1, from a call the optimiser cannot see through, so it is not rematerialised)
; live across a collection; a callee-saved register holds it (or a frame's save slot of one).
; Result 0 when the value survived the collection unchanged, else 1.
declare void @gc_init(i8*)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @wide() noinline "gc-leaf-function" {
  ret i64 1311768467463790321
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %v = call i64 @wide()
  call void @gc_collect()
  %same = icmp eq i64 %v, 1311768467463790321
  %r = select i1 %same, i64 0, i64 1
  ret i64 %r
}
