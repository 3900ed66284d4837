; rootwalk run test program (statepoint): a linked list and a binary tree, built and summed by
; recursive and looping code that calls gc_alloc and gc_safepoint; returns a checksum.
; Node layouts: list cell = 1 pointer slot (next) + 8 raw bytes (value);
;               tree node = 2 pointer slots (left, right) + 8 raw bytes (value).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i8 addrspace(1)* @cons(i64 %v, i8 addrspace(1)* %next) gc "statepoint-example" {
entry:
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %slot = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %next, i8 addrspace(1)* addrspace(1)* %slot
  %raw = getelementptr i8, i8 addrspace(1)* %n, i64 8
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %rawi
  ret i8 addrspace(1)* %n
}

define i8 addrspace(1)* @build_list(i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %i1, %loop ]
  %acc = phi i8 addrspace(1)* [ null, %entry ], [ %c, %loop ]
  %c = call i8 addrspace(1)* @cons(i64 %i, i8 addrspace(1)* %acc)
  %i1 = add i64 %i, 1
  %done = icmp ugt i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i8 addrspace(1)* %c
}

; sum of value * position, with a safepoint per cell and the raw pointer (a derived pointer)
; computed before it and read after it.
define i64 @sum_list(i8 addrspace(1)* %head) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %p = phi i8 addrspace(1)* [ %head, %entry ], [ %next, %body ]
  %k = phi i64 [ 1, %entry ], [ %k1, %body ]
  %s = phi i64 [ 0, %entry ], [ %s1, %body ]
  %isnull = icmp eq i8 addrspace(1)* %p, null
  br i1 %isnull, label %exit, label %body
body:
  %raw = getelementptr i8, i8 addrspace(1)* %p, i64 8
  call void @gc_safepoint()
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawi
  %m = mul i64 %v, %k
  %s1 = add i64 %s, %m
  %slot = bitcast i8 addrspace(1)* %p to i8 addrspace(1)* addrspace(1)*
  %next = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %k1 = add i64 %k, 1
  br label %loop
exit:
  ret i64 %s
}

define i8 addrspace(1)* @build_tree(i64 %d) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %ret_null, label %rec
ret_null:
  ret i8 addrspace(1)* null
rec:
  %d1 = sub i64 %d, 1
  %l = call i8 addrspace(1)* @build_tree(i64 %d1)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 0, i64 24)
  %r = call i8 addrspace(1)* @build_tree(i64 %d1)
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  %s0 = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %s0
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s0, i64 1
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %s1
  %raw = getelementptr i8, i8 addrspace(1)* %n, i64 16
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = mul i64 %d, 17
  store i64 %v, i64 addrspace(1)* %rawi
  ret i8 addrspace(1)* %n
}

define i64 @sum_tree(i8 addrspace(1)* %t) gc "statepoint-example" {
entry:
  %isnull = icmp eq i8 addrspace(1)* %t, null
  br i1 %isnull, label %zero, label %rec
zero:
  ret i64 1
rec:
  call void @gc_safepoint()
  %s0 = bitcast i8 addrspace(1)* %t to i8 addrspace(1)* addrspace(1)*
  %l = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s0
  %a = call i64 @sum_tree(i8 addrspace(1)* %l)
  %s0b = bitcast i8 addrspace(1)* %t to i8 addrspace(1)* addrspace(1)*
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s0b, i64 1
  %r = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s1
  %b = call i64 @sum_tree(i8 addrspace(1)* %r)
  %raw = getelementptr i8, i8 addrspace(1)* %t, i64 16
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawi
  %a3 = mul i64 %a, 3
  %b7 = mul i64 %b, 7
  %x = add i64 %a3, %b7
  %y = add i64 %x, %v
  ret i64 %y
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %list = call i8 addrspace(1)* @build_list(i64 600)
  %tree = call i8 addrspace(1)* @build_tree(i64 8)
  call void @gc_collect()
  %s1 = call i64 @sum_list(i8 addrspace(1)* %list)
  %s2 = call i64 @sum_tree(i8 addrspace(1)* %tree)
  %s3 = call i64 @sum_list(i8 addrspace(1)* %list)
  %eq = icmp eq i64 %s1, %s3
  br i1 %eq, label %ok, label %bad
ok:
  %m = mul i64 %s1, 1000003
  %r = xor i64 %m, %s2
  ret i64 %r
bad:
  ret i64 -1
}
