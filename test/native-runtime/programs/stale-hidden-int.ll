; rootwalk run test program (statepoint), issue 17 item 3 (b): hides a GC pointer from the stack
; map with ptrtoint/inttoptr across safepoints. The object moves, its old space is freed, and the
; allocations after the collection used to land there: the stale read found another live object
; and the run printed a wrong result with exit 0. Without collections: 7 * 1000 = 7000 (the
; hidden object's field read at every one of 1000 iterations, each allocating a garbage object
; holding 13). Under --stress the old space is quarantined and protected: the read must fault.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %obj = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %w = bitcast i8 addrspace(1)* %obj to i64 addrspace(1)*
  store i64 7, i64 addrspace(1)* %w
  %hidden = ptrtoint i8 addrspace(1)* %obj to i64
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s1, %loop ]
  %g = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %gw = bitcast i8 addrspace(1)* %g to i64 addrspace(1)*
  store i64 13, i64 addrspace(1)* %gw
  call void @gc_safepoint()
  %back = inttoptr i64 %hidden to i64 addrspace(1)*
  %v = load volatile i64, i64 addrspace(1)* %back
  %s1 = add i64 %s, %v
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 1000
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %s1
}
