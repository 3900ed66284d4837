; rootwalk check corpus (gcroot, plimmix), MISTAKE unrooted-gc-pointer: @rw_main allocates %o and
; never stores it in a gcroot slot, then collects and reads it: no root covers %o, so the
; collector may free or move its object.
; Expected: one finding, unrooted-gc-pointer in @rw_main: %o across @gc_collect.
; Fix: store %o in a gcroot slot (`call void @llvm.gcroot(i8** %r, i8* null)`) before the call
; and load it from the slot after it.
source_filename = "pl-unrooted-gc-pointer"
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_pl-unrooted-gc-pointer" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  call void @gc_init(i8* @"_GC_MAP_pl-unrooted-gc-pointer")
  %o = call i8* @gc_alloc(i64 0, i64 8)
  call void @gc_collect()
  %w = bitcast i8* %o to i64*
  %v = load i64, i64* %w
  ret i64 %v
}
