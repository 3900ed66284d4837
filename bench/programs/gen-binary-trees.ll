; rootwalk bench program (statepoint): binary-trees with a long-lived tree, for the generational
; bench. A tree of depth 16 (65,535 nodes, kept to the end) is built and made old by gc_collect();
; then 3,000 trees of depth 10 (1,023 nodes each) are built and counted; each is stored into slot
; i % 8 of a long-lived table, with gc_write_barrier(table) after the store, so the last 8 stay
; alive a while (young objects stored into an old one). Node: 2 slots (left, right) + 8 raw bytes.
; Returns the long-lived tree's node count * 1,000,000 + the sum of the short trees' counts
; (65535 * 1000000 + 3000 * 1023 = 65538069000).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_write_barrier(i8 addrspace(1)*) #0
@__LLVM_StackMaps = extern_weak global i8

attributes #0 = { "gc-leaf-function" }

define i8 addrspace(1)* @make(i64 %d) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %ret_leaf, label %rec
ret_leaf:
  %n0 = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  ret i8 addrspace(1)* %n0
rec:
  %d1 = sub i64 %d, 1
  %l = call i8 addrspace(1)* @make(i64 %d1)
  %r = call i8 addrspace(1)* @make(i64 %d1)
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  %s0 = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %s0
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s0, i64 1
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %s1
  call void @gc_write_barrier(i8 addrspace(1)* %n)
  ret i8 addrspace(1)* %n
}

define i64 @count(i8 addrspace(1)* %t) gc "statepoint-example" {
entry:
  %s0 = bitcast i8 addrspace(1)* %t to i8 addrspace(1)* addrspace(1)*
  %l = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s0
  %isleaf = icmp eq i8 addrspace(1)* %l, null
  br i1 %isleaf, label %one, label %rec
one:
  ret i64 1
rec:
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s0, i64 1
  %r = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s1
  %cl = call i64 @count(i8 addrspace(1)* %l)
  %cr = call i64 @count(i8 addrspace(1)* %r)
  %c = add i64 %cl, %cr
  %c1 = add i64 %c, 1
  ret i64 %c1
}

define void @put(i8 addrspace(1)* %table, i64 %k, i8 addrspace(1)* %v) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %table to i8 addrspace(1)* addrspace(1)*
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 %k
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %slot
  call void @gc_write_barrier(i8 addrspace(1)* %table)
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %long = call i8 addrspace(1)* @make(i64 15)
  %table = call i8 addrspace(1)* @gc_alloc(i64 64, i64 0)
  call void @gc_collect()
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %sum = phi i64 [ 0, %entry ], [ %sum1, %loop ]
  %t = call i8 addrspace(1)* @make(i64 9)
  %c = call i64 @count(i8 addrspace(1)* %t)
  %sum1 = add i64 %sum, %c
  %k = urem i64 %i, 8
  call void @put(i8 addrspace(1)* %table, i64 %k, i8 addrspace(1)* %t)
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 3000
  br i1 %done, label %exit, label %loop
exit:
  %cl = call i64 @count(i8 addrspace(1)* %long)
  %m = mul i64 %cl, 1000000
  %r = add i64 %m, %sum1
  ret i64 %r
}
