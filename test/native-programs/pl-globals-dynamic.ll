; rootwalk native test program: pl-globals-dynamic (plimmix)
; Exercises: gc_add_global in a plimmix program (@g_list, a plain global holding the head of a
;   list reachable only through it) and a plimmix function with a variable-sized alloca (a
;   dynamic frame: frame size -1 in the _GC_MAP_ record, roots RBP-relative). @dyn recurses 12
;   deep; each level fills an alloca of n = 2 + depth words (word j = 100*depth + j), roots a
;   node of its own (1 pointer slot + 24 raw bytes: depth, depth*depth, n), prepends a node to the
;   global list (through the global), polls, recurses (the innermost collects), then checks its
;   buffer and its node. rw_main runs @dyn 8 times, collects, and walks the global list.
; Build: plimmix mode (llc -O2 -load=<plimmix plugin>); map label
;   @"_GC_MAP_pl_globals_dynamic.c".
; Expected result: 8 * D + L where D = sum over d = 0..12 of (sum over j < 2 + d of
;   (100d + j) + d + d*d + 2 + d) and L = sum of the 104 list values (8 copies of d = 0..12,
;   value 1000 + d): D = 81965, L = 104624, result = 760344.
;   Errors: -1 buffer, -2 own node, -3 global list.
source_filename = "pl_globals_dynamic.c"

@"_GC_MAP_pl_globals_dynamic.c" = external global i8
@g_list = global i8* null, align 8

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

declare void @gc_add_global(i8**)

define internal i64 @dyn(i64 %depth) gc "plimmix" {
entry:
  %own = alloca i8*, align 8
  call void @llvm.gcroot(i8** %own, i8* null)
  store i8* null, i8** %own
  %n = add i64 %depth, 2
  %buf = alloca i64, i64 %n, align 8
  br label %fill
fill:
  %j = phi i64 [ 0, %entry ], [ %j1, %fill ]
  %d100 = mul i64 %depth, 100
  %w = add i64 %d100, %j
  %slot = getelementptr i64, i64* %buf, i64 %j
  store i64 %w, i64* %slot, align 8
  %j1 = add i64 %j, 1
  %fdone = icmp eq i64 %j1, %n
  br i1 %fdone, label %alloc, label %fill
alloc:
  %o = call i8* @gc_alloc(i64 1, i64 24)
  store i8* %o, i8** %own
  %dd = mul i64 %depth, %depth
  call void @straw(i8* %o, i64 8, i64 %depth)
  call void @straw(i8* %o, i64 16, i64 %dd)
  call void @straw(i8* %o, i64 24, i64 %n)
  %g = call i8* @gc_alloc(i64 1, i64 8)
  %head = load i8*, i8** @g_list
  call void @st(i8* %g, i64 0, i8* %head)
  %gv = add i64 %depth, 1000
  call void @straw(i8* %g, i64 8, i64 %gv)
  store i8* %g, i8** @g_list
  call void @gc_safepoint()
  %leaf = icmp eq i64 %depth, 0
  br i1 %leaf, label %bottom, label %recurse
bottom:
  call void @gc_collect()
  br label %after
recurse:
  %d1 = sub i64 %depth, 1
  %sub = call i64 @dyn(i64 %d1)
  br label %after
after:
  %r = phi i64 [ 0, %bottom ], [ %sub, %recurse ]
  %rbad = icmp slt i64 %r, 0
  br i1 %rbad, label %propagate, label %check
check:
  %k = phi i64 [ 0, %after ], [ %k1, %check.next ]
  %acc = phi i64 [ 0, %after ], [ %acc1, %check.next ]
  %e = add i64 %d100, %k
  %ks = getelementptr i64, i64* %buf, i64 %k
  %got = load i64, i64* %ks, align 8
  %ok = icmp eq i64 %got, %e
  br i1 %ok, label %check.next, label %bad.buf
check.next:
  %acc1 = add i64 %acc, %got
  %k1 = add i64 %k, 1
  %cdone = icmp eq i64 %k1, %n
  br i1 %cdone, label %node, label %check
node:
  %ov = load i8*, i8** %own
  %v1 = call i64 @ldraw(i8* %ov, i64 8)
  %v2 = call i64 @ldraw(i8* %ov, i64 16)
  %v3 = call i64 @ldraw(i8* %ov, i64 24)
  %ok1 = icmp eq i64 %v1, %depth
  %ok2 = icmp eq i64 %v2, %dd
  %ok3 = icmp eq i64 %v3, %n
  %ok12 = and i1 %ok1, %ok2
  %okn = and i1 %ok12, %ok3
  br i1 %okn, label %good, label %bad.node
good:
  %s1 = add i64 %r, %acc1
  %s2 = add i64 %s1, %v1
  %s3 = add i64 %s2, %v2
  %s4 = add i64 %s3, %v3
  %s5 = add i64 %s4, %depth
  ret i64 %s5
propagate:
  ret i64 %r
bad.buf:
  ret i64 -1
bad.node:
  ret i64 -2
}

define i64 @rw_main() gc "plimmix" {
entry:
  %cur = alloca i8*, align 8
  call void @llvm.gcroot(i8** %cur, i8* null)
  store i8* null, i8** %cur
  call void @gc_init(i8* @"_GC_MAP_pl_globals_dynamic.c")
  call void @gc_add_global(i8** @g_list)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  %r = call i64 @dyn(i64 12)
  %bad = icmp slt i64 %r, 0
  br i1 %bad, label %fail, label %next
next:
  %acc1 = add i64 %acc, %r
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 8
  br i1 %done, label %walk.start, label %loop
walk.start:
  call void @gc_collect()
  %h = load i8*, i8** @g_list
  store i8* %h, i8** %cur
  br label %walk
walk:
  %c = phi i64 [ 0, %walk.start ], [ %c1, %walk.next ]
  %lacc = phi i64 [ 0, %walk.start ], [ %lacc1, %walk.next ]
  call void @gc_safepoint()
  %wn = load i8*, i8** %cur
  %v = call i64 @ldraw(i8* %wn, i64 8)
  %pos = urem i64 %c, 13
  %ev = add i64 %pos, 1000
  %vok = icmp eq i64 %v, %ev
  br i1 %vok, label %walk.next, label %bad.list
walk.next:
  %lacc1 = add i64 %lacc, %v
  %c1 = add i64 %c, 1
  %nx = call i8* @ld(i8* %wn, i64 0)
  store i8* %nx, i8** %cur
  %end = icmp eq i8* %nx, null
  br i1 %end, label %walk.done, label %walk
walk.done:
  %lenok = icmp eq i64 %c1, 104
  br i1 %lenok, label %good, label %bad.list
good:
  %res = add i64 %acc1, %lacc1
  ret i64 %res
fail:
  ret i64 %r
bad.list:
  ret i64 -3
}
