; rootwalk run test program (plimmix), issue 17 item 3 (c): a gcroot program that writes through
; a stale pointer after the object moved. %stale (not a gcroot) keeps the object's address across
; gc_collect; the program stores 100 through it, then returns the field read through the root:
; 100 without collections, 5 (the write lost in the old copy) once the object moved. Under
; --stress the old copy is quarantined and protected: the write must fault.
source_filename = "rw_stale_write_moved.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_rw_stale_write_moved.c" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %box = alloca i8*, align 8
  %stale = alloca i8*, align 8
  call void @llvm.gcroot(i8** %box, i8* null)
  store i8* null, i8** %box
  call void @gc_init(i8* @"_GC_MAP_rw_stale_write_moved.c")
  %obj = call i8* @gc_alloc(i64 0, i64 8)
  %raw = bitcast i8* %obj to i64*
  store i64 5, i64* %raw
  store i8* %obj, i8** %box
  store volatile i8* %obj, i8** %stale
  call void @gc_collect()
  %p = load volatile i8*, i8** %stale
  %praw = bitcast i8* %p to i64*
  store volatile i64 100, i64* %praw
  %q = load i8*, i8** %box
  %qraw = bitcast i8* %q to i64*
  %v = load volatile i64, i64* %qraw
  ret i64 %v
}
