; rootwalk run test program (statepoint), BAD: gc_init is given a corrupted map (version byte 3,
; then absurd counts) instead of @__LLVM_StackMaps.
declare void @gc_init(i8*)
declare void @gc_safepoint()
@junk = global [4 x i64] [i64 3, i64 -1, i64 -1, i64 -1], align 8

define i64 @rw_main() gc "statepoint-example" {
entry:
  %p = bitcast [4 x i64]* @junk to i8*
  call void @gc_init(i8* %p)
  call void @gc_safepoint()
  ret i64 42
}
