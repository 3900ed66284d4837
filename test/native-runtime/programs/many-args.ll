; rootwalk run test program (statepoint): GC pointers passed as the 7th and 9th arguments of a
; call (pushed on the stack by llc -O2), live across safepoints in caller and callee.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@__LLVM_StackMaps = extern_weak global i8

define i8 addrspace(1)* @box(i64 %v) gc "statepoint-example" {
entry:
  %n = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %p = bitcast i8 addrspace(1)* %n to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %p
  ret i8 addrspace(1)* %n
}

define i64 @unbox(i8 addrspace(1)* %n) gc "statepoint-example" {
entry:
  %p = bitcast i8 addrspace(1)* %n to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p
  ret i64 %v
}

define i64 @many(i8 addrspace(1)* %a, i64 %x1, i64 %x2, i64 %x3, i64 %x4, i64 %x5, i8 addrspace(1)* %b, i64 %x7, i8 addrspace(1)* %c) noinline gc "statepoint-example" {
entry:
  call void @gc_safepoint()
  %g = call i8 addrspace(1)* @box(i64 %x7)
  call void @gc_safepoint()
  %va = call i64 @unbox(i8 addrspace(1)* %a)
  %vb = call i64 @unbox(i8 addrspace(1)* %b)
  %vc = call i64 @unbox(i8 addrspace(1)* %c)
  %vg = call i64 @unbox(i8 addrspace(1)* %g)
  %s1 = add i64 %x1, %x2
  %s2 = add i64 %s1, %x3
  %s3 = add i64 %s2, %x4
  %s4 = add i64 %s3, %x5
  %t1 = mul i64 %va, 3
  %t2 = mul i64 %vb, 5
  %t3 = mul i64 %vc, 7
  %t4 = add i64 %t1, %t2
  %t5 = add i64 %t4, %t3
  %t6 = add i64 %t5, %vg
  %r = add i64 %t6, %s4
  ret i64 %r
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc2, %loop ]
  %a = call i8 addrspace(1)* @box(i64 %i)
  %i10 = add i64 %i, 10
  %b = call i8 addrspace(1)* @box(i64 %i10)
  %i20 = add i64 %i, 20
  %c = call i8 addrspace(1)* @box(i64 %i20)
  %r = call i64 @many(i8 addrspace(1)* %a, i64 1, i64 2, i64 3, i64 4, i64 5, i8 addrspace(1)* %b, i64 %i, i8 addrspace(1)* %c)
  %vb = call i64 @unbox(i8 addrspace(1)* %b)
  %vc = call i64 @unbox(i8 addrspace(1)* %c)
  %acc1 = add i64 %acc, %r
  %x = mul i64 %vb, %vc
  %acc2 = add i64 %acc1, %x
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 300
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc2
}
