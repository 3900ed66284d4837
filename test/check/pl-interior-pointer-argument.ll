; rootwalk check corpus (gcroot, plimmix), MISTAKE interior-pointer-argument: @rw_main passes
; %mid, 8 bytes into an object, to @read_later, which roots it and polls: the root then holds an
; address inside an object, which the collector takes for an object's address.
; Expected: one finding, interior-pointer-argument in @rw_main: %mid passed to @read_later.
; Fix: pass the object and the offset 8; make the interior pointer in @read_later after the poll.
source_filename = "pl-interior-pointer-argument"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@"_GC_MAP_pl-interior-pointer-argument" = external global i8

define i64 @read_later(i8* %p) gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %p, i8** %r
  call void @gc_safepoint()
  %p2 = load i8*, i8** %r
  %w = bitcast i8* %p2 to i64*
  %v = load i64, i64* %w
  ret i64 %v
}

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-interior-pointer-argument")
  %o = call i8* @gc_alloc(i64 0, i64 16)
  store i8* %o, i8** %r
  %o2 = load i8*, i8** %r
  %mid = getelementptr i8, i8* %o2, i64 8
  %v = call i64 @read_later(i8* %mid)
  ret i64 %v
}
