; rootwalk check corpus (gcroot, plimmix), MISTAKE gc-pointer-in-plain-global: the object is
; rooted in %r, and a copy is also kept in @last, a plain global that no gc_add_global call
; registers; after gc_collect @rw_main reads @last, which still holds the old address.
; Expected: one finding, gc-pointer-in-plain-global in @rw_main: @last across @gc_collect.
; Fix: `call void @gc_add_global(i8** @last)` before the store (or reload from %r instead).
source_filename = "pl-gc-pointer-in-plain-global"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_pl-gc-pointer-in-plain-global" = external global i8
@last = global i8* null, align 8

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-gc-pointer-in-plain-global")
  %o = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %o, i8** %r
  %o2 = load i8*, i8** %r
  store i8* %o2, i8** @last, align 8
  call void @gc_collect()
  %again = load i8*, i8** @last, align 8
  %w = bitcast i8* %again to i64*
  %v = load i64, i64* %w
  ret i64 %v
}
