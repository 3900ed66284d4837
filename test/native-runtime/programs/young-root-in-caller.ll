; rootwalk run test program (plimmix gcroot style, for --generational --verify and the return
; barriers' documented limitation): rw_main's gcroot slot is passed down 200 frames; at the bottom,
; after nursery collections armed return barriers over every frame above it, a young object (42)
; is stored into that slot: a callee writing into its caller's stack, in a frame that has not run
; since the last collection. The next nursery collections skip rw_main's frame, so only --verify
; (which also walks the skipped frames) sees the root; without it the object is freed while the
; slot still points to it. rw_main returns the value it reads through the slot: 42 unless freed.
source_filename = "rw_young_root_in_caller.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
@"_GC_MAP_rw_young_root_in_caller.c" = external global i8

; k objects of 40 bytes, all garbage at once: nursery collections with a small --nursery.
define void @junk(i64 %k) gc "plimmix" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %j = call i8* @gc_alloc(i64 0, i64 40)
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %k
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define void @bottom(i8** %slot) gc "plimmix" {
entry:
  call void @junk(i64 20000)
  %y = call i8* @gc_alloc(i64 0, i64 8)
  %yi = bitcast i8* %y to i64*
  store i64 42, i64* %yi
  store i8* %y, i8** %slot ; CALLER-SLOT: the caller's gcroot slot, in a frame below the barriers
  call void @junk(i64 20000)
  ret void
}

define void @deep(i64 %n, i8** %slot) gc "plimmix" {
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  call void @bottom(i8** %slot)
  ret void
rec:
  %n1 = sub i64 %n, 1
  call void @deep(i64 %n1, i8** %slot)
  ret void
}

define i64 @rw_main() gc "plimmix" {
entry:
  %root = alloca i8*, align 8
  call void @llvm.gcroot(i8** %root, i8* null)
  call void @gc_init(i8* @"_GC_MAP_rw_young_root_in_caller.c")
  call void @deep(i64 200, i8** %root)
  %y = load i8*, i8** %root
  %yi = bitcast i8* %y to i64*
  %v = load i64, i64* %yi
  ret i64 %v
}
