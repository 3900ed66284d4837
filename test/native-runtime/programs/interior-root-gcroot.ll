; rootwalk run test program (plimmix, --plimmix): a getelementptr to byte 16 of a 32-byte object
; stored into an llvm.gcroot slot across gc_collect and read through afterwards (issue 29, item
; 1). The slot is a root that holds no object's address. Words 2 and 3 hold 7 and 9: --no-gc
; prints 16. The collector must refuse the root, never move a fake object "starting" there.
source_filename = "rw_interior_gcroot.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_rw_interior_gcroot.c" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_rw_interior_gcroot.c")
  %obj = call i8* @gc_alloc(i64 0, i64 32)
  %w = bitcast i8* %obj to i64*
  %w2 = getelementptr i64, i64* %w, i64 2
  store i64 7, i64* %w2
  %w3 = getelementptr i64, i64* %w, i64 3
  store i64 9, i64* %w3
  %mid = getelementptr i8, i8* %obj, i64 16
  store i8* %mid, i8** %r
  call void @gc_collect()
  %m = load i8*, i8** %r
  %mi = bitcast i8* %m to i64*
  %x = load i64, i64* %mi
  %m1 = getelementptr i64, i64* %mi, i64 1
  %y = load i64, i64* %m1
  %s = add i64 %x, %y
  ret i64 %s
}
