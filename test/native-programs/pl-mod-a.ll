; rootwalk native test program: pl-two-modules, module A (linked with pl-mod-b.ll)
; Exercises: two plimmix modules, each with its own map (@"_GC_MAP_pl_mod_a.c" registered here,
;   @"_GC_MAP_pl_mod_b.c" by B's @b_init: gc_init is called twice), managed frames of both
;   modules on the stack at B's safepoints, an 8-argument call (two gc pointers as stack
;   arguments) across modules, and an array of pointers: rw_main makes 300 pairs (two boxes
;   holding i and 2i, rooted across the call to B's @b_make_pair, which polls and allocates),
;   stores pair i in slot i % 64 of a 64-slot array (poll every 4), collects, then checks the 64
;   surviving pairs with B's @b_check_pair.
; Build: plimmix mode (llc -O2 -load=<plimmix plugin>) for both modules.
; Expected result: sum over j < 64 of (4 i_j + 15), i_j = j < 44 ? 256 + j : 192 + j:
;   4 * 17120 + 960 = 69440. Errors: -1 a pair check failed.
source_filename = "pl_mod_a.c"

@"_GC_MAP_pl_mod_a.c" = external global i8

declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()

; Field helpers (no gc strategy, no calls inside: no collection can happen in them).
define internal i8* @ld(i8* %o, i64 %i) {
  %s = bitcast i8* %o to i8**
  %a = getelementptr i8*, i8** %s, i64 %i
  %v = load i8*, i8** %a, align 8
  ret i8* %v
}
define internal void @st(i8* %o, i64 %i, i8* %v) {
  %s = bitcast i8* %o to i8**
  %a = getelementptr i8*, i8** %s, i64 %i
  store i8* %v, i8** %a, align 8
  ret void
}
define internal i64 @ldraw(i8* %o, i64 %off) {
  %b = getelementptr i8, i8* %o, i64 %off
  %p = bitcast i8* %b to i64*
  %v = load i64, i64* %p, align 8
  ret i64 %v
}
define internal void @straw(i8* %o, i64 %off, i64 %v) {
  %b = getelementptr i8, i8* %o, i64 %off
  %p = bitcast i8* %b to i64*
  store i64 %v, i64* %p, align 8
  ret void
}

declare void @b_init()
declare i8* @b_make_pair(i64, i64, i64, i64, i64, i64, i8*, i8*)
declare i64 @b_check_pair(i8*, i64)

define internal i8* @box(i64 %v) gc "plimmix" {
entry:
  %b = call i8* @gc_alloc(i64 0, i64 8)
  call void @straw(i8* %b, i64 0, i64 %v)
  ret i8* %b
}

define i64 @rw_main() gc "plimmix" {
entry:
  %arr = alloca i8*, align 8
  %x = alloca i8*, align 8
  %y = alloca i8*, align 8
  call void @llvm.gcroot(i8** %arr, i8* null)
  call void @llvm.gcroot(i8** %x, i8* null)
  call void @llvm.gcroot(i8** %y, i8* null)
  store i8* null, i8** %arr
  store i8* null, i8** %x
  store i8* null, i8** %y
  call void @gc_init(i8* @"_GC_MAP_pl_mod_a.c")
  call void @b_init()
  %a = call i8* @gc_alloc(i64 64, i64 0)
  store i8* %a, i8** %arr
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %bx = call i8* @box(i64 %i)
  store i8* %bx, i8** %x
  %i2 = shl i64 %i, 1
  %by = call i8* @box(i64 %i2)
  store i8* %by, i8** %y
  %xv = load i8*, i8** %x
  %yv = load i8*, i8** %y
  %p = call i8* @b_make_pair(i64 %i, i64 1, i64 2, i64 3, i64 4, i64 5, i8* %xv, i8* %yv)
  %av = load i8*, i8** %arr
  %slot = and i64 %i, 63
  call void @st(i8* %av, i64 %slot, i8* %p)
  store i8* null, i8** %x
  store i8* null, i8** %y
  %m4 = and i64 %i, 3
  %c4 = icmp eq i64 %m4, 0
  br i1 %c4, label %poll, label %next
poll:
  call void @gc_safepoint()
  br label %next
next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 300
  br i1 %done, label %check, label %loop
check:
  call void @gc_collect()
  br label %cloop
cloop:
  %j = phi i64 [ 0, %check ], [ %j1, %cnext ]
  %acc = phi i64 [ 0, %check ], [ %acc1, %cnext ]
  %av2 = load i8*, i8** %arr
  %pj = call i8* @ld(i8* %av2, i64 %j)
  %low = icmp ult i64 %j, 44
  %base = select i1 %low, i64 256, i64 192
  %ij = add i64 %base, %j
  %r = call i64 @b_check_pair(i8* %pj, i64 %ij)
  %bad = icmp slt i64 %r, 0
  br i1 %bad, label %fail, label %cnext
cnext:
  %acc1 = add i64 %acc, %r
  %j1 = add i64 %j, 1
  %cdone = icmp eq i64 %j1, 64
  br i1 %cdone, label %good, label %cloop
good:
  ret i64 %acc1
fail:
  ret i64 -1
}
