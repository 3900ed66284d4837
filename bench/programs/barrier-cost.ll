; rootwalk bench program (statepoint, run with --generational): the cost of gc_write_barrier per
; store. An old table (made old by gc_collect) gets 20M stores of a pointer into its 8 slots, each
; followed by gc_write_barrier(table) (logged at the first, then the fast path: one bit test), then
; the same 20M stores without the barrier. Returns (ps per store with barrier) * 2^32 + (ps per
; store without): both loops timed with CLOCK_MONOTONIC in one run.
%timespec = type { i64, i64 }
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_write_barrier(i8 addrspace(1)*) #0
declare i32 @clock_gettime(i32, %timespec*) #0
@__LLVM_StackMaps = extern_weak global i8

attributes #0 = { "gc-leaf-function" }

define i64 @now_ns(%timespec* %t) {
entry:
  %r = call i32 @clock_gettime(i32 1, %timespec* %t)
  %sp = getelementptr %timespec, %timespec* %t, i32 0, i32 0
  %np = getelementptr %timespec, %timespec* %t, i32 0, i32 1
  %s = load i64, i64* %sp
  %n = load i64, i64* %np
  %s9 = mul i64 %s, 1000000000
  %ns = add i64 %s9, %n
  ret i64 %ns
}

define void @stores(i8 addrspace(1)* %table, i8 addrspace(1)* %cell, i64 %count, i1 %barrier) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %table to i8 addrspace(1)* addrspace(1)*
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %k = and i64 %i, 7
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 %k
  store volatile i8 addrspace(1)* %cell, i8 addrspace(1)* addrspace(1)* %slot
  br i1 %barrier, label %wb, label %next
wb:
  call void @gc_write_barrier(i8 addrspace(1)* %table)
  br label %next
next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %count
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  %t = alloca %timespec
  call void @gc_init(i8* @__LLVM_StackMaps)
  %table = call i8 addrspace(1)* @gc_alloc(i64 8, i64 0)
  call void @gc_collect()
  %cell = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %t0 = call i64 @now_ns(%timespec* %t)
  call void @stores(i8 addrspace(1)* %table, i8 addrspace(1)* %cell, i64 20000000, i1 true)
  %t1 = call i64 @now_ns(%timespec* %t)
  call void @stores(i8 addrspace(1)* %table, i8 addrspace(1)* %cell, i64 20000000, i1 false)
  %t2 = call i64 @now_ns(%timespec* %t)
  %with = sub i64 %t1, %t0
  %without = sub i64 %t2, %t1
  %withps = udiv i64 %with, 20000
  %withoutps = udiv i64 %without, 20000
  %hi = shl i64 %withps, 32
  %r = or i64 %hi, %withoutps
  ret i64 %r
}
