; rootwalk run test program (statepoint, for --generational and its return barriers), deep-roots.ll
; made small enough for a report test: recursion 5,000 frames deep, every frame holding a root (a
; cell of its own with its depth n, read after the recursive call and summed on the way up); the
; bottom allocates 40,000 cells of 24 bytes, each iteration reading the previous one across the
; allocation: a dozen nursery collections at --nursery 64K, the first during the descent (about
; 4,100 frames deep), the others at the bottom, each of which (with return barriers) walks only the
; frames above the innermost barrier and skips the rest. The result,
; the same with and without collections (--no-gc), is sum(0..39,998) + sum(0..5,000) = 812,442,501.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
@__LLVM_StackMaps = extern_weak global i8

; The bottom: `iters` allocations, each cell holding its index; returns the sum of the values read
; from the previous cell (a young root across every allocation).
define i64 @churn(i64 %iters) gc "statepoint-example" {
entry:
  %first = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %firsti = bitcast i8 addrspace(1)* %first to i64 addrspace(1)*
  store i64 0, i64 addrspace(1)* %firsti
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %prev = phi i8 addrspace(1)* [ %first, %entry ], [ %cur, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %loop ]
  %cur = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %curi = bitcast i8 addrspace(1)* %cur to i64 addrspace(1)*
  store i64 %i, i64 addrspace(1)* %curi
  %previ = bitcast i8 addrspace(1)* %prev to i64 addrspace(1)*
  %pv = load i64, i64 addrspace(1)* %previ
  %acc1 = add i64 %acc, %pv
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %iters
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc1
}

; n frames below this one, each with its own cell; the bottom churns `iters` times.
define i64 @down(i64 %n, i64 %iters) gc "statepoint-example" {
entry:
  %c = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  store i64 %n, i64 addrspace(1)* %ci
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  %b = call i64 @churn(i64 %iters)
  br label %join
rec:
  %n1 = sub i64 %n, 1
  %r0 = call i64 @down(i64 %n1, i64 %iters)
  br label %join
join:
  %r = phi i64 [ %b, %bottom ], [ %r0, %rec ]
  %ci2 = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %ci2
  %s = add i64 %r, %v
  ret i64 %s
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %r = call i64 @down(i64 5000, i64 40000)
  ret i64 %r
}
