; rootwalk check corpus (gcroot, plimmix), MISTAKE gc-pointer-in-stack-slot: %keep is an alloca
; never given to llvm.gcroot, so the map does not list it; the pointer stored in it before
; gc_collect is read back unrelocated after it.
; Expected: one finding, gc-pointer-in-stack-slot in @rw_main: %keep across @gc_collect.
; Fix: `call void @llvm.gcroot(i8** %keep, i8* null)` (and store null into it first).
source_filename = "pl-gc-pointer-in-stack-slot"
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_pl-gc-pointer-in-stack-slot" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %keep = alloca i8*, align 8
  call void @gc_init(i8* @"_GC_MAP_pl-gc-pointer-in-stack-slot")
  %o = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %o, i8** %keep
  call void @gc_collect()
  %again = load i8*, i8** %keep
  %w = bitcast i8* %again to i64*
  %v = load i64, i64* %w
  ret i64 %v
}
