; rootwalk run test program (statepoint): passes a pointer into the middle of an object as an
; argument across safepoints, the mistake the README's "A limit to know" describes. In @sum_from
; the argument %p is a base of its own (LLVM cannot know it is interior), so every collection
; sees a root that is not an object's address, inside the buffer @rw_main keeps as a root too.
; The buffer holds 10, 20, ... 60; --no-gc prints the right sum (raw words 2..4, 30 + 40 + 50,
; plus word 0 read after the call: 130); --stress --verify must name the root, its frame and why.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@__LLVM_StackMaps = extern_weak global i8

define i64 @sum_from(i8 addrspace(1)* %p, i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s1, %loop ]
  call void @gc_safepoint()
  %off = mul i64 %i, 8
  %a = getelementptr i8, i8 addrspace(1)* %p, i64 %off
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %ai
  %s1 = add i64 %s, %v
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %s1
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %buf = call i8 addrspace(1)* @gc_alloc(i64 0, i64 48)
  %w = bitcast i8 addrspace(1)* %buf to i64 addrspace(1)*
  br label %fill
fill:
  %k = phi i64 [ 0, %entry ], [ %k1, %fill ]
  %slot = getelementptr i64, i64 addrspace(1)* %w, i64 %k
  %k1 = add i64 %k, 1
  %v10 = mul i64 %k1, 10
  store i64 %v10, i64 addrspace(1)* %slot
  %full = icmp eq i64 %k1, 6
  br i1 %full, label %call, label %fill
call:
  %mid = getelementptr i8, i8 addrspace(1)* %buf, i64 16
  %r = call i64 @sum_from(i8 addrspace(1)* %mid, i64 3)
  %w0 = load i64, i64 addrspace(1)* %w
  %t = add i64 %r, %w0
  ret i64 %t
}
