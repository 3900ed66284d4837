; rootwalk native plimmix stop: module B (linked with plimmix-a.ll; see there for the chain)
;
;   pb_mid  (B), frame 2: roots O2 (POINTER, null metadata), O3 (POINTER), T (TRAIT: T is the
;                harness's two-word cell, whose word at +8 holds O8), ATOMIC marker; calls
;                pa_deep with 8 arguments (the last two, O4 and O5, on the stack).
;   pb_leaf (B), frame 0: roots O6 (POINTER, null metadata), null (POINTER), O7 (POINTER),
;                ATOMIC marker; stores O7 into the global root @pb_global_root; calls
;                gc_safepoint_poll (the stop).
;
; plimmix_b_init passes @"_GC_MAP_plimmix_b.c" to gc_init.
; Check ids passed to @rw_check: frame * 16 + root index (in gcroot order).
; Build: llc -O2 -filetype=obj -load=<plimmix plugin> plimmix-b.ll (compilePlimmix)
source_filename = "plimmix_b.c"

declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare void @gc_safepoint_poll()
declare i8* @rw_object(i64)
declare void @rw_check(i64, i8*, i8*)
declare i64 @pa_deep(i64, i64, i64, i64, i64, i64, i8*, i8*)

@"_GC_MAP_plimmix_b.c" = external global i8
@ATOMIC_meta = internal constant i8 0
@TRAIT_meta = internal constant i8 0
@POINTER_meta = internal constant i8 0

@pb_global_root = global i8* null, align 8, !plimmix.root !0

define void @plimmix_b_init() {
entry:
  call void @gc_init(i8* @"_GC_MAP_plimmix_b.c")
  ret void
}

; Frame 2. Returns pa_deep(...) + 100.
define i64 @pb_mid(i8* %o2, i8* %trait) gc "plimmix" {
entry:
  %p0 = alloca i8*, align 8
  %p1 = alloca i8*, align 8
  %tr = alloca i8*, align 8
  %at = alloca i8*, align 8
  call void @llvm.gcroot(i8** %p0, i8* null)
  call void @llvm.gcroot(i8** %p1, i8* @POINTER_meta)
  call void @llvm.gcroot(i8** %tr, i8* @TRAIT_meta)
  call void @llvm.gcroot(i8** %at, i8* @ATOMIC_meta)
  store i8* %o2, i8** %p0
  store i8* %trait, i8** %tr
  store i8* inttoptr (i64 2801795074 to i8*), i8** %at      ; 0xA7000002
  %o3 = call i8* @rw_object(i64 3)
  store i8* %o3, i8** %p1
  %o4 = call i8* @rw_object(i64 4)
  %o5 = call i8* @rw_object(i64 5)
  %r = call i64 @pa_deep(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i8* %o4, i8* %o5)
  %v0 = load i8*, i8** %p0
  call void @rw_check(i64 32, i8* %v0, i8* %o2)
  %v1 = load i8*, i8** %p1
  call void @rw_check(i64 33, i8* %v1, i8* %o3)
  %vt = load i8*, i8** %tr
  call void @rw_check(i64 34, i8* %vt, i8* %trait)
  %va = load i8*, i8** %at
  call void @rw_check(i64 35, i8* %va, i8* inttoptr (i64 2801795074 to i8*))
  %result = add i64 %r, 100
  ret i64 %result
}

; Frame 0 (innermost). Returns 1.
define i64 @pb_leaf(i8* %o6) gc "plimmix" {
entry:
  %p0 = alloca i8*, align 8
  %pn = alloca i8*, align 8
  %p2 = alloca i8*, align 8
  %at = alloca i8*, align 8
  call void @llvm.gcroot(i8** %p0, i8* null)
  call void @llvm.gcroot(i8** %pn, i8* @POINTER_meta)
  call void @llvm.gcroot(i8** %p2, i8* @POINTER_meta)
  call void @llvm.gcroot(i8** %at, i8* @ATOMIC_meta)
  store i8* %o6, i8** %p0
  store i8* null, i8** %pn
  store i8* inttoptr (i64 2801795072 to i8*), i8** %at      ; 0xA7000000
  %o7 = call i8* @rw_object(i64 7)
  store i8* %o7, i8** %p2
  store i8* %o7, i8** @pb_global_root
  call void @gc_safepoint_poll()
  %v0 = load i8*, i8** %p0
  call void @rw_check(i64 0, i8* %v0, i8* %o6)
  %vn = load i8*, i8** %pn
  call void @rw_check(i64 1, i8* %vn, i8* null)
  %v2 = load i8*, i8** %p2
  call void @rw_check(i64 2, i8* %v2, i8* %o7)
  %va = load i8*, i8** %at
  call void @rw_check(i64 3, i8* %va, i8* inttoptr (i64 2801795072 to i8*))
  ret i64 1
}

!0 = !{}
