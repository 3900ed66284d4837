; rootwalk native test program: pl-list-tree (plimmix)
; Exercises: the plimmix (gcroot) discipline: every gc pointer live across a call sits in an
;   llvm.gcroot alloca (stored null first) and is reloaded after each call. rw_main builds a
;   1,000-node linked list (1 pointer slot + 8 raw bytes, value 3i + 1) with a garbage object
;   per node and a poll every 8 nodes, then a recursive binary tree of depth 8 (511 nodes:
;   2 pointer slots + 8 raw bytes holding the heap-order id) whose left subtree is rooted while
;   the right one is built; gc_collect; then both are checked (the tree recursively, polling at
;   depth-2 nodes) and the list again after a second gc_collect.
; Build: plimmix mode (llc -O2 -load=<plimmix plugin>); map label @"_GC_MAP_pl_list_tree.c".
; Expected result: 2 * sum over i < 1000 of (3i + 1) + sum of ids 1..511
;   = 2 * 1499500 + 130816 = 3129816. Errors: -1 list, -2 tree.
source_filename = "pl_list_tree.c"

@"_GC_MAP_pl_list_tree.c" = external global i8

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

define internal i8* @make_tree(i64 %depth, i64 %id) gc "plimmix" {
entry:
  %l = alloca i8*, align 8
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %l, i8* null)
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %l
  store i8* null, i8** %r
  %leaf = icmp eq i64 %depth, 0
  br i1 %leaf, label %make.leaf, label %make.node
make.leaf:
  %x = call i8* @gc_alloc(i64 2, i64 8)
  call void @straw(i8* %x, i64 16, i64 %id)
  ret i8* %x
make.node:
  %d1 = sub i64 %depth, 1
  %lid = shl i64 %id, 1
  %rid = add i64 %lid, 1
  %lt = call i8* @make_tree(i64 %d1, i64 %lid)
  store i8* %lt, i8** %l
  call void @gc_safepoint()
  %rt = call i8* @make_tree(i64 %d1, i64 %rid)
  store i8* %rt, i8** %r
  %n = call i8* @gc_alloc(i64 2, i64 8)
  %l2 = load i8*, i8** %l
  %r2 = load i8*, i8** %r
  call void @st(i8* %n, i64 0, i8* %l2)
  call void @st(i8* %n, i64 1, i8* %r2)
  call void @straw(i8* %n, i64 16, i64 %id)
  ret i8* %n
}

define internal i64 @check_tree(i8* %node, i64 %depth, i64 %id) gc "plimmix" {
entry:
  %self = alloca i8*, align 8
  call void @llvm.gcroot(i8** %self, i8* null)
  store i8* %node, i8** %self
  %v = call i64 @ldraw(i8* %node, i64 16)
  %ok = icmp eq i64 %v, %id
  br i1 %ok, label %idok, label %bad
idok:
  %leaf = icmp eq i64 %depth, 0
  br i1 %leaf, label %leafcheck, label %inner
leafcheck:
  %lc = call i8* @ld(i8* %node, i64 0)
  %rc = call i8* @ld(i8* %node, i64 1)
  %ln = icmp eq i8* %lc, null
  %rn = icmp eq i8* %rc, null
  %both = and i1 %ln, %rn
  br i1 %both, label %leafok, label %bad
leafok:
  ret i64 %id
inner:
  %pollhere = icmp eq i64 %depth, 2
  br i1 %pollhere, label %poll, label %rec
poll:
  call void @gc_safepoint()
  br label %rec
rec:
  %d1 = sub i64 %depth, 1
  %lid = shl i64 %id, 1
  %rid = add i64 %lid, 1
  %n1 = load i8*, i8** %self
  %lt = call i8* @ld(i8* %n1, i64 0)
  %ls = call i64 @check_tree(i8* %lt, i64 %d1, i64 %lid)
  %n2 = load i8*, i8** %self
  %rt = call i8* @ld(i8* %n2, i64 1)
  %rs = call i64 @check_tree(i8* %rt, i64 %d1, i64 %rid)
  %lbad = icmp slt i64 %ls, 0
  %rbad = icmp slt i64 %rs, 0
  %anybad = or i1 %lbad, %rbad
  br i1 %anybad, label %bad, label %sum
sum:
  %s1 = add i64 %ls, %rs
  %s2 = add i64 %s1, %id
  ret i64 %s2
bad:
  ret i64 -1000000
}

; Walks the list rooted in *%root (values 3k + 1, k = 999 down to 0); sum or -1.
define internal i64 @check_list(i8** %root) gc "plimmix" {
entry:
  %cur = alloca i8*, align 8
  call void @llvm.gcroot(i8** %cur, i8* null)
  %h = load i8*, i8** %root
  store i8* %h, i8** %cur
  br label %loop
loop:
  %k = phi i64 [ 999, %entry ], [ %k1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  call void @gc_safepoint()
  %n = load i8*, i8** %cur
  %v = call i64 @ldraw(i8* %n, i64 8)
  %k3 = mul i64 %k, 3
  %e = add i64 %k3, 1
  %ok = icmp eq i64 %v, %e
  br i1 %ok, label %next, label %bad
next:
  %acc1 = add i64 %acc, %v
  %k1 = sub i64 %k, 1
  %nx = call i8* @ld(i8* %n, i64 0)
  store i8* %nx, i8** %cur
  %end = icmp eq i8* %nx, null
  br i1 %end, label %exit, label %loop
exit:
  %lenok = icmp eq i64 %k, 0
  br i1 %lenok, label %good, label %bad
good:
  ret i64 %acc1
bad:
  ret i64 -1
}

define i64 @rw_main() gc "plimmix" {
entry:
  %list = alloca i8*, align 8
  %tree = alloca i8*, align 8
  %tmp = alloca i8*, align 8
  call void @llvm.gcroot(i8** %list, i8* null)
  call void @llvm.gcroot(i8** %tree, i8* null)
  call void @llvm.gcroot(i8** %tmp, i8* null)
  store i8* null, i8** %list
  store i8* null, i8** %tree
  store i8* null, i8** %tmp
  call void @gc_init(i8* @"_GC_MAP_pl_list_tree.c")
  br label %build
build:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %n = call i8* @gc_alloc(i64 1, i64 8)
  store i8* %n, i8** %tmp
  %g = call i8* @gc_alloc(i64 1, i64 8)
  %n2 = load i8*, i8** %tmp
  call void @st(i8* %g, i64 0, i8* %n2)
  %head = load i8*, i8** %list
  call void @st(i8* %n2, i64 0, i8* %head)
  %i3 = mul i64 %i, 3
  %v = add i64 %i3, 1
  call void @straw(i8* %n2, i64 8, i64 %v)
  store i8* %n2, i8** %list
  store i8* null, i8** %tmp
  %m8 = and i64 %i, 7
  %c8 = icmp eq i64 %m8, 0
  br i1 %c8, label %poll, label %next
poll:
  call void @gc_safepoint()
  br label %next
next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 1000
  br i1 %done, label %trees, label %build
trees:
  %t = call i8* @make_tree(i64 8, i64 1)
  store i8* %t, i8** %tree
  call void @gc_collect()
  %l1 = call i64 @check_list(i8** %list)
  %t1 = load i8*, i8** %tree
  %ts = call i64 @check_tree(i8* %t1, i64 8, i64 1)
  call void @gc_collect()
  %l2 = call i64 @check_list(i8** %list)
  %lbad1 = icmp slt i64 %l1, 0
  %lbad2 = icmp slt i64 %l2, 0
  %lbad = or i1 %lbad1, %lbad2
  br i1 %lbad, label %bad.list, label %tcheck
tcheck:
  %tbad = icmp slt i64 %ts, 0
  br i1 %tbad, label %bad.tree, label %good
good:
  %s1 = add i64 %l1, %l2
  %s2 = add i64 %s1, %ts
  ret i64 %s2
bad.list:
  ret i64 -1
bad.tree:
  ret i64 -2
}
