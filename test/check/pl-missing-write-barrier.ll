; rootwalk check corpus (gcroot, plimmix), MISTAKE missing-write-barrier (check --generational
; only): @rw_main keeps a table of 8 pointer slots in the gcroot slot %t for the whole run and fills
; it with young items, one allocation per iteration (each rooted in %r while it is initialised);
; the store of the item into the table (reloaded from %t as %tab) has no gc_write_barrier after
; it. Once a nursery collection has promoted the table (old: marked), the next nursery collection
; never rescans it and frees the young item it points to.
; Expected (with --generational): one finding, missing-write-barrier in @rw_main, %loop: %tab,
; first reaching the call of @gc_alloc (the next iteration's allocation). Without it: nothing.
; Fix: `call void @gc_write_barrier(i8* %tab)` right after the store.
source_filename = "pl-missing-write-barrier"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_pl-missing-write-barrier" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %t = alloca i8*, align 8
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %t, i8* null)
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %t
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-missing-write-barrier")
  %table = call i8* @gc_alloc(i64 8, i64 0)
  store i8* %table, i8** %t
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %item = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %item, i8** %r
  %raw = bitcast i8* %item to i64*
  store i64 %i, i64* %raw, align 8
  %tab = load i8*, i8** %t
  %slots = bitcast i8* %tab to i8**
  %slot = getelementptr i8*, i8** %slots, i64 %i
  %young = load i8*, i8** %r
  store i8* %young, i8** %slot, align 8
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 8
  br i1 %done, label %read, label %loop
read:
  call void @gc_collect()
  %tab2 = load i8*, i8** %t
  %slots2 = bitcast i8* %tab2 to i8**
  %last = getelementptr i8*, i8** %slots2, i64 7
  %kept = load i8*, i8** %last, align 8
  %w = bitcast i8* %kept to i64*
  %v = load i64, i64* %w, align 8
  ret i64 %v
}
