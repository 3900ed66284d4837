; rootwalk run test program (plimmix), issue 17 item 3 (a): a gcroot program that keeps a copy of
; a pointer in a stack slot that is NOT a gcroot (%stale) across gc_collect and reads an integer
; field through it. Without stress, gc_collect marks in place: the object does not move and the
; stale read finds the right value (41 + 1 = 42), the bug hidden. Under --stress every movable
; object is evacuated, its block quarantined and protected: the read must fault.
source_filename = "rw_stale_read_unmoved.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_rw_stale_read_unmoved.c" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %box = alloca i8*, align 8
  %stale = alloca i8*, align 8
  call void @llvm.gcroot(i8** %box, i8* null)
  store i8* null, i8** %box
  call void @gc_init(i8* @"_GC_MAP_rw_stale_read_unmoved.c")
  %obj = call i8* @gc_alloc(i64 0, i64 16)
  %raw = bitcast i8* %obj to i64*
  %second = getelementptr i64, i64* %raw, i64 1
  store i64 41, i64* %second
  store i8* %obj, i8** %box
  store volatile i8* %obj, i8** %stale
  call void @gc_collect()
  %p = load volatile i8*, i8** %stale
  %praw = bitcast i8* %p to i64*
  %psecond = getelementptr i64, i64* %praw, i64 1
  %v = load volatile i64, i64* %psecond
  %r = add i64 %v, 1
  ret i64 %r
}
