; rootwalk run test program (statepoint): a stuck thread and a global root.
;  - @g is registered with gc_add_global and holds a list that no frame references;
;  - the worker builds a list, calls thread_stuck_start, spins WITHOUT safepoints until rw_main
;    releases it, then thread_stuck_end, and checks its list (the head was pinned: same address);
;  - meanwhile rw_main allocates and collects: the stuck thread must not be waited for (else
;    this program hangs).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
declare void @gc_add_global(i8 addrspace(1)**)
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
declare void @thread_stuck_start()
declare void @thread_stuck_end()
@__LLVM_StackMaps = extern_weak global i8
@g = global i8 addrspace(1)* null
@ready = global i64 0
@release = global i64 0
@worker_sum = global i64 0
@worker_pinned = global i64 0

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

define i8 addrspace(1)* @build_list(i64 %n, i64 %base) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %i1, %loop ]
  %acc = phi i8 addrspace(1)* [ null, %entry ], [ %c, %loop ]
  %v = add i64 %i, %base
  %c = call i8 addrspace(1)* @cons(i64 %v, i8 addrspace(1)* %acc)
  %i1 = add i64 %i, 1
  %done = icmp ugt i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i8 addrspace(1)* %c
}

define i64 @sum_list(i8 addrspace(1)* %head) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %p = phi i8 addrspace(1)* [ %head, %entry ], [ %next, %body ]
  %s = phi i64 [ 0, %entry ], [ %s1, %body ]
  %isnull = icmp eq i8 addrspace(1)* %p, null
  br i1 %isnull, label %exit, label %body
body:
  call void @gc_safepoint()
  %raw = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawi
  %s1 = add i64 %s, %v
  %slot = bitcast i8 addrspace(1)* %p to i8 addrspace(1)* addrspace(1)*
  %next = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  br label %loop
exit:
  ret i64 %s
}

define void @worker(i64 %k) gc "statepoint-example" {
entry:
  %l = call i8 addrspace(1)* @build_list(i64 200, i64 1000)
  call void @thread_stuck_start()
  ; (a collection may still move %l at the thread_stuck_start call itself; from its return to
  ; thread_stuck_end's return it is pinned)
  %before = ptrtoint i8 addrspace(1)* %l to i64
  store volatile i64 1, i64* @ready
  br label %spin
spin:
  %r = load volatile i64, i64* @release
  %go = icmp ne i64 %r, 0
  br i1 %go, label %out, label %spin
out:
  call void @thread_stuck_end()
  %after = ptrtoint i8 addrspace(1)* %l to i64
  %same = icmp eq i64 %before, %after
  %pinned = zext i1 %same to i64
  store i64 %pinned, i64* @worker_pinned
  %s = call i64 @sum_list(i8 addrspace(1)* %l)
  store i64 %s, i64* @worker_sum
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  call void @gc_add_global(i8 addrspace(1)** @g)
  %gl = call i8 addrspace(1)* @build_list(i64 100, i64 5)
  store i8 addrspace(1)* %gl, i8 addrspace(1)** @g
  %h = call i64 @gc_thread_start(void (i64)* @worker, i64 0)
  br label %wait
wait:
  call void @gc_safepoint()
  %rd = load volatile i64, i64* @ready
  %isready = icmp ne i64 %rd, 0
  br i1 %isready, label %churn, label %wait
churn:
  %i = phi i64 [ 0, %wait ], [ %i1, %churn ]
  %junk = call i8 addrspace(1)* @build_list(i64 50, i64 0)
  call void @gc_collect()
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 30
  br i1 %done, label %free, label %churn
free:
  store volatile i64 1, i64* @release
  call void @gc_thread_join(i64 %h)
  %gv = load i8 addrspace(1)*, i8 addrspace(1)** @g
  %gs = call i64 @sum_list(i8 addrspace(1)* %gv)
  %ws = load i64, i64* @worker_sum
  %wp = load i64, i64* @worker_pinned
  %a = mul i64 %wp, 1000000000
  %b = add i64 %a, %ws
  %c = mul i64 %gs, 1000000
  %d = add i64 %b, %c
  ret i64 %d
}
