; rootwalk native test program: sp-stuck-thread
; Exercises: thread_stuck_start / thread_stuck_end and no_gc_thread.
;   - @stuck_worker builds a 300-node list (values 7i), calls thread_stuck_start (its frames, as
;     recorded at that statepoint, are scanned by every collection while it is stuck and what
;     they reference is pinned), sets @stuck_flag and spins in pure IR (no calls, no allocation,
;     no heap access: an LCG and an atomic load of @release_flag) until rw_main releases it,
;     then calls thread_stuck_end, polls and checks its list.
;   - two @alloc_worker threads wait (polling once per 100,000 loads) for @stuck_flag, then
;     allocate 500 nodes each with garbage, collect every 100 nodes and check their lists, all while the first thread is
;     stuck;
;   - @nogc_worker (not a gc function) calls no_gc_thread and computes integers only;
;   - rw_main waits (polling once per 100,000 loads of the flag) for @stuck_flag, builds and
;     checks a 300-node list with 3 gc_collect calls, joins the allocating workers and the no-gc one, and only then sets
;     @release_flag and joins the stuck thread.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: S + 2*A1 + 3*A2 + 4*N + M where S = sum 7i (i < 300) = 313950,
;   Aa = sum over i < 500 of (1000a + i) (A1 = 624750, A2 = 1124750), N = sum i*3 (i < 1000)
;   = 1498500, M = sum i (i < 300) = 44850: 313950 + 1249500 + 3374250 + 5994000 + 44850
;   = 10976550. Errors: -1 stuck list, -2 allocating worker list, -3 rw_main list.
source_filename = "sp-stuck-thread"

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

declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
declare void @thread_stuck_start()
declare void @thread_stuck_end()
declare void @no_gc_thread()

@stuck_flag = global i64 0, align 8
@release_flag = global i64 0, align 8
@spin_sink = global i64 0, align 8
@results = global [4 x i64] zeroinitializer, align 8

; Builds a list of %count nodes with values %base + %mul * i (head: the last one), with a
; garbage object per node when %junk is set, polling every 8 nodes and collecting every 100.
define internal i8 addrspace(1)* @build(i64 %count, i64 %base, i64 %mul, i1 %junk) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %n, %next ]
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %head)
  %im = mul i64 %i, %mul
  %v = add i64 %base, %im
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %v)
  br i1 %junk, label %garbage, label %poll.q
garbage:
  %g = call i8 addrspace(1)* @gc_alloc(i64 2, i64 24)
  call void @st(i8 addrspace(1)* %g, i64 0, i8 addrspace(1)* %n)
  %m100 = urem i64 %i, 100
  %c100 = icmp eq i64 %m100, 50
  br i1 %c100, label %collect, label %poll.q
collect:
  call void @gc_collect()
  br label %poll.q
poll.q:
  %m8 = and i64 %i, 7
  %c8 = icmp eq i64 %m8, 0
  br i1 %c8, label %poll, label %next
poll:
  call void @gc_safepoint()
  br label %next
next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %count
  br i1 %done, label %exit, label %loop
exit:
  ret i8 addrspace(1)* %n
}

; Checks a list built by @build; returns the sum of its values or -1.
define internal i64 @check(i8 addrspace(1)* %head, i64 %count, i64 %base, i64 %mul) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %n = phi i8 addrspace(1)* [ %head, %entry ], [ %nx, %cont ]
  %k = phi i64 [ %count, %entry ], [ %k1, %cont ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %cont ]
  %k1 = sub i64 %k, 1
  %v = call i64 @ldraw(i8 addrspace(1)* %n, i64 8)
  %km = mul i64 %k1, %mul
  %e = add i64 %base, %km
  %ok = icmp eq i64 %v, %e
  br i1 %ok, label %next, label %bad
next:
  %acc1 = add i64 %acc, %v
  %kp = and i64 %k1, 15
  %kc = icmp eq i64 %kp, 0
  %nx = call i8 addrspace(1)* @ld(i8 addrspace(1)* %n, i64 0)
  br i1 %kc, label %poll, label %cont
poll:
  call void @gc_safepoint()
  br label %cont
cont:
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %exit, label %loop
exit:
  %lenok = icmp eq i64 %k1, 0
  br i1 %lenok, label %good, label %bad
good:
  ret i64 %acc1
bad:
  ret i64 -1
}

define internal void @put(i64 %a, i64 %v) #1 {
  %slot = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 %a
  store atomic i64 %v, i64* %slot seq_cst, align 8
  ret void
}

define void @stuck_worker(i64 %a) gc "statepoint-example" {
entry:
  %list = call i8 addrspace(1)* @build(i64 300, i64 0, i64 7, i1 false)
  call void @thread_stuck_start()
  store atomic i64 1, i64* @stuck_flag seq_cst, align 8
  br label %spin
spin:
  %x = phi i64 [ 1, %entry ], [ %x2, %spin ]
  %x1 = mul i64 %x, 6364136223846793005
  %x2 = add i64 %x1, 1442695040888963407
  %go = load atomic i64, i64* @release_flag seq_cst, align 8
  %wait = icmp eq i64 %go, 0
  br i1 %wait, label %spin, label %released
released:
  store i64 %x2, i64* @spin_sink, align 8
  call void @thread_stuck_end()
  call void @gc_safepoint()
  %r = call i64 @check(i8 addrspace(1)* %list, i64 300, i64 0, i64 7)
  call void @put(i64 %a, i64 %r)
  ret void
}

define void @alloc_worker(i64 %a) gc "statepoint-example" {
entry:
  br label %wait
wait:
  call void @gc_safepoint()
  br label %wait.inner
wait.inner:
  %c = phi i64 [ 0, %wait ], [ %c1, %wait.inner.next ]
  %f = load atomic i64, i64* @stuck_flag seq_cst, align 8
  %notyet = icmp eq i64 %f, 0
  br i1 %notyet, label %wait.inner.next, label %work
wait.inner.next:
  %c1 = add i64 %c, 1
  %again = icmp eq i64 %c1, 100000
  br i1 %again, label %wait, label %wait.inner
work:
  %base = mul i64 %a, 1000
  %list = call i8 addrspace(1)* @build(i64 500, i64 %base, i64 1, i1 true)
  call void @gc_collect()
  %r = call i64 @check(i8 addrspace(1)* %list, i64 500, i64 %base, i64 1)
  %bad = icmp slt i64 %r, 0
  %rr = select i1 %bad, i64 -2, i64 %r
  call void @put(i64 %a, i64 %rr)
  ret void
}

define void @nogc_worker(i64 %a) {
entry:
  call void @no_gc_thread()
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %loop ]
  %t = mul i64 %i, %a
  %acc1 = add i64 %acc, %t
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 1000
  br i1 %done, label %exit, label %loop
exit:
  call void @put(i64 %a, i64 %acc1)
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %ts = call i64 @gc_thread_start(void (i64)* @stuck_worker, i64 0)
  %t1 = call i64 @gc_thread_start(void (i64)* @alloc_worker, i64 1)
  %t2 = call i64 @gc_thread_start(void (i64)* @alloc_worker, i64 2)
  %t3 = call i64 @gc_thread_start(void (i64)* @nogc_worker, i64 3)
  br label %wait
wait:
  call void @gc_safepoint()
  br label %wait.inner
wait.inner:
  %c = phi i64 [ 0, %wait ], [ %c1, %wait.inner.next ]
  %f = load atomic i64, i64* @stuck_flag seq_cst, align 8
  %notyet = icmp eq i64 %f, 0
  br i1 %notyet, label %wait.inner.next, label %work
wait.inner.next:
  %c1 = add i64 %c, 1
  %again = icmp eq i64 %c1, 100000
  br i1 %again, label %wait, label %wait.inner
work:
  %list = call i8 addrspace(1)* @build(i64 300, i64 0, i64 1, i1 true)
  call void @gc_collect()
  %m = call i64 @check(i8 addrspace(1)* %list, i64 300, i64 0, i64 1)
  call void @gc_collect()
  call void @gc_thread_join(i64 %t1)
  call void @gc_thread_join(i64 %t2)
  call void @gc_thread_join(i64 %t3)
  store atomic i64 1, i64* @release_flag seq_cst, align 8
  call void @gc_thread_join(i64 %ts)
  %mbad = icmp slt i64 %m, 0
  br i1 %mbad, label %bad.main, label %combine
combine:
  %p0 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 0
  %p1 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 1
  %p2 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 2
  %p3 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 3
  %r0 = load atomic i64, i64* %p0 seq_cst, align 8
  %r1 = load atomic i64, i64* %p1 seq_cst, align 8
  %r2 = load atomic i64, i64* %p2 seq_cst, align 8
  %r3 = load atomic i64, i64* %p3 seq_cst, align 8
  %r0bad = icmp slt i64 %r0, 0
  br i1 %r0bad, label %bad.stuck, label %chk1
chk1:
  %w12 = call i64 @llvm.smin.i64(i64 %r1, i64 %r2)
  %wbad = icmp slt i64 %w12, 0
  br i1 %wbad, label %bad.alloc, label %sum
sum:
  %q1 = shl i64 %r1, 1
  %q2 = mul i64 %r2, 3
  %q3 = shl i64 %r3, 2
  %s1 = add i64 %r0, %q1
  %s2 = add i64 %s1, %q2
  %s3 = add i64 %s2, %q3
  %s4 = add i64 %s3, %m
  ret i64 %s4
bad.stuck:
  ret i64 -1
bad.alloc:
  ret i64 -2
bad.main:
  ret i64 -3
}

declare i64 @llvm.smin.i64(i64, i64)
