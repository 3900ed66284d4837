; rootwalk native test program: pl-two-modules, module B (see pl-mod-a.ll for the program)
; Its own map, @"_GC_MAP_pl_mod_b.c", is registered by @b_init (called from module A's
; rw_main). @b_make_pair takes 8 arguments: the two gc pointers arrive on the stack (pushed by
; module A's caller at -O2) and are rooted in this frame before it polls and allocates.
; Build: plimmix mode (llc -O2 -load=<plimmix plugin>).
source_filename = "pl_mod_b.c"

@"_GC_MAP_pl_mod_b.c" = external global i8

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

define void @b_init() {
entry:
  call void @gc_init(i8* @"_GC_MAP_pl_mod_b.c")
  ret void
}

; A pair (2 pointer slots + 8 raw bytes: a1 + ... + a6) of x and y.
define i8* @b_make_pair(i64 %a1, i64 %a2, i64 %a3, i64 %a4, i64 %a5, i64 %a6, i8* %x, i8* %y) gc "plimmix" {
entry:
  %rx = alloca i8*, align 8
  %ry = alloca i8*, align 8
  call void @llvm.gcroot(i8** %rx, i8* null)
  call void @llvm.gcroot(i8** %ry, i8* null)
  store i8* %x, i8** %rx
  store i8* %y, i8** %ry
  call void @gc_safepoint()
  %junk = call i8* @gc_alloc(i64 1, i64 40)
  %p = call i8* @gc_alloc(i64 2, i64 8)
  %x2 = load i8*, i8** %rx
  %y2 = load i8*, i8** %ry
  call void @st(i8* %p, i64 0, i8* %x2)
  call void @st(i8* %p, i64 1, i8* %y2)
  %s1 = add i64 %a1, %a2
  %s2 = add i64 %s1, %a3
  %s3 = add i64 %s2, %a4
  %s4 = add i64 %s3, %a5
  %s5 = add i64 %s4, %a6
  call void @straw(i8* %p, i64 16, i64 %s5)
  ret i8* %p
}

; Checks a pair made for index %i: x holds i, y holds 2i, the sum is i + 15.
; Returns x + y + sum, or -1.
define i64 @b_check_pair(i8* %p, i64 %i) gc "plimmix" {
entry:
  %rp = alloca i8*, align 8
  call void @llvm.gcroot(i8** %rp, i8* null)
  store i8* %p, i8** %rp
  call void @gc_safepoint()
  %p2 = load i8*, i8** %rp
  %x = call i8* @ld(i8* %p2, i64 0)
  %y = call i8* @ld(i8* %p2, i64 1)
  %xv = call i64 @ldraw(i8* %x, i64 0)
  %yv = call i64 @ldraw(i8* %y, i64 0)
  %sv = call i64 @ldraw(i8* %p2, i64 16)
  %ey = shl i64 %i, 1
  %es = add i64 %i, 15
  %okx = icmp eq i64 %xv, %i
  %oky = icmp eq i64 %yv, %ey
  %oks = icmp eq i64 %sv, %es
  %ok1 = and i1 %okx, %oky
  %ok = and i1 %ok1, %oks
  %t1 = add i64 %xv, %yv
  %t2 = add i64 %t1, %sv
  %r = select i1 %ok, i64 %t2, i64 -1
  ret i64 %r
}
