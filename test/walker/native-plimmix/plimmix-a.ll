; rootwalk native plimmix stop: module A (linked with plimmix-b.ll, harness.c, ../native/trampoline.S)
;
; The managed chain at the stop, innermost first (A and B alternate across the two modules):
;
;   pb_leaf (B) -> gc_safepoint_poll        frame 0
;   pa_deep (A)                             frame 1   (8 IR arguments: 2 incoming on the stack)
;   pb_mid  (B)                             frame 2   (calls pa_deep with 8 arguments; TRAIT root)
;   pa_entry (A)                            frame 3   (entered from rw_enter)
;
; Every frame's gcroot slots get their values before its call and are checked after it (through
; @rw_check in harness.c: a mismatch makes the program exit non-zero). Objects are the harness's
; fake objects, fetched with @rw_object(k) (object k) or passed in. ATOMIC roots hold the marker
; 0xA7000000 + frame index: not pointers, so the walker must not report them.
;
; Each module registers its own map: plimmix_a_init calls gc_init with the label
; @"_GC_MAP_plimmix_a.c", declared here as an external global (the plimmix printer defines it).
;
; Check ids passed to @rw_check: frame * 16 + root index (in gcroot order).
; Build: llc -O2 -filetype=obj -load=<plimmix plugin> plimmix-a.ll (compilePlimmix)
source_filename = "plimmix_a.c"

declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @rw_object(i64)
declare void @rw_check(i64, i8*, i8*)
declare i64 @pb_mid(i8*, i8*)
declare i64 @pb_leaf(i8*)

@"_GC_MAP_plimmix_a.c" = external global i8
@ATOMIC_meta = internal constant i8 0
@POINTER_meta = internal constant i8 0

; Registers this module's map with the runtime (main calls it at start; twice, see harness.c).
define void @plimmix_a_init() {
entry:
  call void @gc_init(i8* @"_GC_MAP_plimmix_a.c")
  ret void
}

; Frame 3: pa_entry(O0, O2, T, unused), called by rw_enter. Roots: O0 (POINTER, null metadata),
; O1 (POINTER), ATOMIC marker. Returns pb_mid(...) + 1000.
define i64 @pa_entry(i8* %o0, i8* %o2, i8* %trait, i8* %unused) gc "plimmix" {
entry:
  %p0 = alloca i8*, align 8
  %p1 = alloca i8*, align 8
  %at = alloca i8*, align 8
  call void @llvm.gcroot(i8** %p0, i8* null)
  call void @llvm.gcroot(i8** %p1, i8* @POINTER_meta)
  call void @llvm.gcroot(i8** %at, i8* @ATOMIC_meta)
  store i8* %o0, i8** %p0
  store i8* inttoptr (i64 2801795075 to i8*), i8** %at      ; 0xA7000003
  %o1 = call i8* @rw_object(i64 1)
  store i8* %o1, i8** %p1
  %r = call i64 @pb_mid(i8* %o2, i8* %trait)
  %v0 = load i8*, i8** %p0
  call void @rw_check(i64 48, i8* %v0, i8* %o0)
  %v1 = load i8*, i8** %p1
  call void @rw_check(i64 49, i8* %v1, i8* %o1)
  %va = load i8*, i8** %at
  call void @rw_check(i64 50, i8* %va, i8* inttoptr (i64 2801795075 to i8*))
  %result = add i64 %r, 1000
  ret i64 %result
}

; Frame 1: pa_deep(1, 2, 3, 4, 5, 6, O4, O5): the two objects arrive on the stack (in pb_mid's
; reserved call frame). Roots: O4 (POINTER, null metadata), O5 (POINTER), ATOMIC marker.
; Returns pb_leaf(O6) + (a + b + c + d + e + f).
define i64 @pa_deep(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i8* %o4, i8* %o5) gc "plimmix" {
entry:
  %p0 = alloca i8*, align 8
  %p1 = alloca i8*, align 8
  %at = alloca i8*, align 8
  call void @llvm.gcroot(i8** %p0, i8* null)
  call void @llvm.gcroot(i8** %p1, i8* @POINTER_meta)
  call void @llvm.gcroot(i8** %at, i8* @ATOMIC_meta)
  store i8* %o4, i8** %p0
  store i8* %o5, i8** %p1
  store i8* inttoptr (i64 2801795073 to i8*), i8** %at      ; 0xA7000001
  %o6 = call i8* @rw_object(i64 6)
  %r = call i64 @pb_leaf(i8* %o6)
  %v0 = load i8*, i8** %p0
  call void @rw_check(i64 16, i8* %v0, i8* %o4)
  %v1 = load i8*, i8** %p1
  call void @rw_check(i64 17, i8* %v1, i8* %o5)
  %va = load i8*, i8** %at
  call void @rw_check(i64 18, i8* %va, i8* inttoptr (i64 2801795073 to i8*))
  %s1 = add i64 %a, %b
  %s2 = add i64 %s1, %c
  %s3 = add i64 %s2, %d
  %s4 = add i64 %s3, %e
  %s5 = add i64 %s4, %f
  %result = add i64 %r, %s5
  ret i64 %result
}
