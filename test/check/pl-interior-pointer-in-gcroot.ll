; rootwalk check corpus (gcroot, plimmix), MISTAKE interior-pointer-in-gcroot: @rw_main roots
; %tail, 8 bytes into the object, in the gcroot slot %r: the collector takes every root for an
; object's start, so it marks or moves an "object" at the wrong address (`run --plimmix --stress
; --verify`: "not an object start").
; Expected: one finding, interior-pointer-in-gcroot in @rw_main: %tail stored into %r.
; Fix: root %o itself; after each load from %r make the interior pointer with getelementptr.
source_filename = "pl-interior-pointer-in-gcroot"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_pl-interior-pointer-in-gcroot" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %r0 = alloca i8*, align 8
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r0, i8* null)
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r0
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-interior-pointer-in-gcroot")
  %o = call i8* @gc_alloc(i64 0, i64 16)
  store i8* %o, i8** %r0
  %tail = getelementptr i8, i8* %o, i64 8
  %t = bitcast i8* %tail to i64*
  store i64 42, i64* %t
  store i8* %tail, i8** %r
  call void @gc_collect()
  %again = load i8*, i8** %r
  %w = bitcast i8* %again to i64*
  %v = load i64, i64* %w
  %obj = load i8*, i8** %r0
  %w0 = bitcast i8* %obj to i64*
  %first = load i64, i64* %w0
  %s = add i64 %v, %first
  ret i64 %s
}
