; rootwalk native test program: sp-binary-tree
; Exercises: recursive tree construction (gcbench style). A node has 2 pointer slots (left,
;   right) and 8 raw bytes (its heap-order id: root 1, children 2i and 2i+1). The left subtree is
;   live across the construction of the right one and across the node's own allocation; every
;   internal node polls. One long-lived tree of depth 10 (2047 nodes) stays live while 40
;   short-lived trees of depth 5 (63 nodes) are built, checked and dropped; the long-lived tree is
;   checked before and after a gc_collect. Checking recurses too and polls at depth-3 nodes.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: 2 * (sum of ids 1..2047) + 40 * (sum of ids 1..63)
;   = 2 * 2096128 + 40 * 2016 = 4272896. Errors: -1 (a node's id, or a leaf with children).
source_filename = "sp-binary-tree"

declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

; Field helpers: "gc-leaf-function" (their calls are not statepoints), no gc strategy.
; Slot i is at +8*i; raw bytes are addressed by byte offset from the object pointer.
define internal i8 addrspace(1)* @ld(i8 addrspace(1)* %o, i64 %i) #1 {
  %s = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %a = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s, i64 %i
  %v = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %a, align 8
  ret i8 addrspace(1)* %v
}
define internal void @st(i8 addrspace(1)* %o, i64 %i, i8 addrspace(1)* %v) #1 {
  %s = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %a = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s, i64 %i
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %a, align 8
  ret void
}
define internal i64 @ldraw(i8 addrspace(1)* %o, i64 %off) #1 {
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 %off
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p, align 8
  ret i64 %v
}
define internal void @straw(i8 addrspace(1)* %o, i64 %off, i64 %v) #1 {
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 %off
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %p, align 8
  ret void
}
attributes #1 = { noinline "gc-leaf-function" }

define internal i8 addrspace(1)* @make_tree(i64 %depth, i64 %id) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %depth, 0
  br i1 %leaf, label %make.leaf, label %make.node

make.leaf:
  %l = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  call void @straw(i8 addrspace(1)* %l, i64 16, i64 %id)
  ret i8 addrspace(1)* %l

make.node:
  %d1 = sub i64 %depth, 1
  %lid = shl i64 %id, 1
  %rid = add i64 %lid, 1
  %left = call i8 addrspace(1)* @make_tree(i64 %d1, i64 %lid)
  call void @gc_safepoint()
  %right = call i8 addrspace(1)* @make_tree(i64 %d1, i64 %rid)
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %left)
  call void @st(i8 addrspace(1)* %n, i64 1, i8 addrspace(1)* %right)
  call void @straw(i8 addrspace(1)* %n, i64 16, i64 %id)
  ret i8 addrspace(1)* %n
}

; Returns the sum of the ids of the subtree, or -1.
define internal i64 @check_tree(i8 addrspace(1)* %n, i64 %depth, i64 %id) gc "statepoint-example" {
entry:
  %isnull = icmp eq i8 addrspace(1)* %n, null
  br i1 %isnull, label %bad, label %has

has:
  %v = call i64 @ldraw(i8 addrspace(1)* %n, i64 16)
  %okid = icmp eq i64 %v, %id
  br i1 %okid, label %idok, label %bad

idok:
  %l = call i8 addrspace(1)* @ld(i8 addrspace(1)* %n, i64 0)
  %r = call i8 addrspace(1)* @ld(i8 addrspace(1)* %n, i64 1)
  %leaf = icmp eq i64 %depth, 0
  br i1 %leaf, label %leafcheck, label %inner

leafcheck:
  %ln = icmp eq i8 addrspace(1)* %l, null
  %rn = icmp eq i8 addrspace(1)* %r, null
  %both = and i1 %ln, %rn
  br i1 %both, label %leafok, label %bad

leafok:
  ret i64 %id

inner:
  %d1 = sub i64 %depth, 1
  %lid = shl i64 %id, 1
  %rid = add i64 %lid, 1
  %pollhere = icmp eq i64 %depth, 3
  br i1 %pollhere, label %poll, label %recurse

poll:
  call void @gc_safepoint()
  br label %recurse

recurse:
  %ls = call i64 @check_tree(i8 addrspace(1)* %l, i64 %d1, i64 %lid)
  %lbad = icmp slt i64 %ls, 0
  br i1 %lbad, label %bad, label %right

right:
  %rs = call i64 @check_tree(i8 addrspace(1)* %r, i64 %d1, i64 %rid)
  %rbad = icmp slt i64 %rs, 0
  br i1 %rbad, label %bad, label %sum

sum:
  %s1 = add i64 %ls, %rs
  %s2 = add i64 %s1, %id
  ret i64 %s2

bad:
  ret i64 -1
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %long = call i8 addrspace(1)* @make_tree(i64 10, i64 1)
  %c1 = call i64 @check_tree(i8 addrspace(1)* %long, i64 10, i64 1)
  %b1 = icmp slt i64 %c1, 0
  br i1 %b1, label %bad, label %short

short:
  %i = phi i64 [ 0, %entry ], [ %i1, %short.next ]
  %acc = phi i64 [ %c1, %entry ], [ %acc1, %short.next ]
  %t = call i8 addrspace(1)* @make_tree(i64 5, i64 1)
  %ct = call i64 @check_tree(i8 addrspace(1)* %t, i64 5, i64 1)
  %bt = icmp slt i64 %ct, 0
  br i1 %bt, label %bad, label %short.next

short.next:
  %acc1 = add i64 %acc, %ct
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 40
  br i1 %done, label %final, label %short

final:
  call void @gc_collect()
  %c2 = call i64 @check_tree(i8 addrspace(1)* %long, i64 10, i64 1)
  %b2 = icmp slt i64 %c2, 0
  br i1 %b2, label %bad, label %good

good:
  %r = add i64 %acc1, %c2
  ret i64 %r

bad:
  ret i64 -1
}
