; rootwalk run test program (plimmix): a gcroot program with a bug the collector cannot see.
; It keeps a copy of a pointer in a stack slot that is NOT a gcroot (@rw_main's %stale) across
; gc_collect, then follows it: parent -> child -> the child's raw word (42). The collection moves
; both objects and relocates the root %box, not %stale. Without poisoning the read goes through
; the intact old copies and still finds 42 (the bug hides); with poisoning (--poison, implied by
; --stress) the old parent's slot holds 0xdeadbeecdeadbeec and following it faults.
source_filename = "rw_stale_pointer.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_rw_stale_pointer.c" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %box = alloca i8*, align 8
  %stale = alloca i8*, align 8
  call void @llvm.gcroot(i8** %box, i8* null)
  store i8* null, i8** %box
  call void @gc_init(i8* @"_GC_MAP_rw_stale_pointer.c")
  %child = call i8* @gc_alloc(i64 0, i64 8)
  %craw = bitcast i8* %child to i64*
  store i64 42, i64* %craw
  store i8* %child, i8** %box
  %parent = call i8* @gc_alloc(i64 1, i64 0)
  %c = load i8*, i8** %box
  %pslot = bitcast i8* %parent to i8**
  store i8* %c, i8** %pslot
  store i8* %parent, i8** %box
  store volatile i8* %parent, i8** %stale
  call void @gc_collect()
  %p = load volatile i8*, i8** %stale
  %slot = bitcast i8* %p to i8**
  %k = load volatile i8*, i8** %slot
  %raw = bitcast i8* %k to i64*
  %v = load volatile i64, i64* %raw
  ret i64 %v
}
