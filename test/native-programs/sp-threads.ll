; rootwalk native test program: sp-threads
; Exercises: 4 mutator threads (gc_thread_start / gc_thread_join) allocating, polling and
;   collecting concurrently with rw_main. Worker a (a = 0..3) builds a 400-node list (1 pointer
;   slot + 16 raw bytes: a*100000 + i, and i*i) while a 64-slot array keeps the latest node per
;   slot (i % 64), allocates a garbage object per node, polls every 4 nodes and calls gc_collect
;   every 100 nodes; then it walks its list and its array (checking every value and the length)
;   and stores its checksum into @results[a] (plain memory). rw_main meanwhile builds and checks
;   its own 200-node list with polls; it joins the workers and combines the results.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: sum over a of (a + 1) * W(a) + M, where W(a) = sum over i < 400 of
;   (a*100000 + i + i*i) + sum over j < 64 of (a*100000 + i_j), i_j = j < 16 ? 384 + j : 320 + j,
;   and M = sum over i < 200 of i = 19900: 1141587100.
;   Errors: -1 list value, -2 list length, -3 array value, -4 rw_main's list (a worker's error is
;   passed through: it is stored instead of its checksum).
source_filename = "sp-threads"

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

@results = global [4 x i64] zeroinitializer, align 8

define internal i64 @work(i64 %a) gc "statepoint-example" {
entry:
  %arr = call i8 addrspace(1)* @gc_alloc(i64 64, i64 0)
  %base = mul i64 %a, 100000
  br label %build
build:
  %i = phi i64 [ 0, %entry ], [ %i1, %build.next ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %n, %build.next ]
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 16)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %head)
  %v0 = add i64 %base, %i
  %v1 = mul i64 %i, %i
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %v0)
  call void @straw(i8 addrspace(1)* %n, i64 16, i64 %v1)
  %slot = and i64 %i, 63
  call void @st(i8 addrspace(1)* %arr, i64 %slot, i8 addrspace(1)* %n)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  call void @st(i8 addrspace(1)* %junk, i64 1, i8 addrspace(1)* %n)
  %m4 = and i64 %i, 3
  %p4 = icmp eq i64 %m4, 0
  br i1 %p4, label %poll, label %build.c
poll:
  call void @gc_safepoint()
  br label %build.c
build.c:
  %m100 = urem i64 %i, 100
  %c100 = icmp eq i64 %m100, 99
  br i1 %c100, label %collect, label %build.next
collect:
  call void @gc_collect()
  br label %build.next
build.next:
  %i1 = add i64 %i, 1
  %bdone = icmp eq i64 %i1, 400
  br i1 %bdone, label %walk, label %build

walk:
  %w = phi i8 addrspace(1)* [ %n, %build.next ], [ %wn, %walk.end ]
  %k = phi i64 [ 399, %build.next ], [ %k1, %walk.end ]
  %acc = phi i64 [ 0, %build.next ], [ %acc1, %walk.end ]
  %x0 = call i64 @ldraw(i8 addrspace(1)* %w, i64 8)
  %x1 = call i64 @ldraw(i8 addrspace(1)* %w, i64 16)
  %e0 = add i64 %base, %k
  %e1 = mul i64 %k, %k
  %ok0 = icmp eq i64 %x0, %e0
  %ok1 = icmp eq i64 %x1, %e1
  %ok = and i1 %ok0, %ok1
  br i1 %ok, label %walk.next, label %bad.value
walk.next:
  %s = add i64 %x0, %x1
  %acc1 = add i64 %acc, %s
  %k1 = sub i64 %k, 1
  %km = and i64 %k, 31
  %kp = icmp eq i64 %km, 0
  %wn = call i8 addrspace(1)* @ld(i8 addrspace(1)* %w, i64 0)
  br i1 %kp, label %walk.poll, label %walk.end
walk.poll:
  call void @gc_safepoint()
  br label %walk.end
walk.end:
  %end = icmp eq i8 addrspace(1)* %wn, null
  br i1 %end, label %walk.done, label %walk
walk.done:
  %lenok = icmp eq i64 %k, 0
  br i1 %lenok, label %array, label %bad.len

array:
  %j = phi i64 [ 0, %walk.done ], [ %j1, %array.next ]
  %acc2 = phi i64 [ %acc1, %walk.done ], [ %acc3, %array.next ]
  %y = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %j)
  %yv = call i64 @ldraw(i8 addrspace(1)* %y, i64 8)
  %low = icmp ult i64 %j, 16
  %ij = select i1 %low, i64 384, i64 320
  %ijj = add i64 %ij, %j
  %ey = add i64 %base, %ijj
  %yok = icmp eq i64 %yv, %ey
  br i1 %yok, label %array.next, label %bad.array
array.next:
  %acc3 = add i64 %acc2, %yv
  %j1 = add i64 %j, 1
  %adone = icmp eq i64 %j1, 64
  br i1 %adone, label %good, label %array
good:
  ret i64 %acc3
bad.value:
  ret i64 -1
bad.len:
  ret i64 -2
bad.array:
  ret i64 -3
}

define void @worker(i64 %a) gc "statepoint-example" {
entry:
  %r = call i64 @work(i64 %a)
  %slot = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 %a
  store atomic i64 %r, i64* %slot seq_cst, align 8
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %t0 = call i64 @gc_thread_start(void (i64)* @worker, i64 0)
  %t1 = call i64 @gc_thread_start(void (i64)* @worker, i64 1)
  %t2 = call i64 @gc_thread_start(void (i64)* @worker, i64 2)
  %t3 = call i64 @gc_thread_start(void (i64)* @worker, i64 3)
  br label %build
build:
  %i = phi i64 [ 0, %entry ], [ %i1, %build ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %n, %build ]
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %head)
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %i)
  call void @gc_safepoint()
  %i1 = add i64 %i, 1
  %bdone = icmp eq i64 %i1, 200
  br i1 %bdone, label %walk, label %build
walk:
  %w = phi i8 addrspace(1)* [ %n, %build ], [ %wn, %walk.next ]
  %k = phi i64 [ 199, %build ], [ %k1, %walk.next ]
  %acc = phi i64 [ 0, %build ], [ %acc1, %walk.next ]
  %x = call i64 @ldraw(i8 addrspace(1)* %w, i64 8)
  %ok = icmp eq i64 %x, %k
  br i1 %ok, label %walk.next, label %bad.main
walk.next:
  %acc1 = add i64 %acc, %x
  %k1 = sub i64 %k, 1
  call void @gc_safepoint()
  %wn = call i8 addrspace(1)* @ld(i8 addrspace(1)* %w, i64 0)
  %end = icmp eq i8 addrspace(1)* %wn, null
  br i1 %end, label %join, label %walk
join:
  %lok = icmp eq i64 %k, 0
  call void @gc_thread_join(i64 %t0)
  call void @gc_thread_join(i64 %t1)
  call void @gc_thread_join(i64 %t2)
  call void @gc_thread_join(i64 %t3)
  br i1 %lok, label %combine, label %bad.main
combine:
  %p0 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 0
  %p1 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 1
  %p2 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 2
  %p3 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 3
  %r0 = load atomic i64, i64* %p0 seq_cst, align 8
  %r1 = load atomic i64, i64* %p1 seq_cst, align 8
  %r2 = load atomic i64, i64* %p2 seq_cst, align 8
  %r3 = load atomic i64, i64* %p3 seq_cst, align 8
  %m01 = call i64 @llvm.smin.i64(i64 %r0, i64 %r1)
  %m23 = call i64 @llvm.smin.i64(i64 %r2, i64 %r3)
  %m = call i64 @llvm.smin.i64(i64 %m01, i64 %m23)
  %anybad = icmp slt i64 %m, 0
  br i1 %anybad, label %worker.bad, label %sum
sum:
  %q1 = shl i64 %r1, 1
  %q2 = mul i64 %r2, 3
  %q3 = shl i64 %r3, 2
  %s1 = add i64 %r0, %q1
  %s2 = add i64 %s1, %q2
  %s3 = add i64 %s2, %q3
  %s4 = add i64 %s3, %acc1
  ret i64 %s4
worker.bad:
  ret i64 %m
bad.main:
  ret i64 -4
}

declare i64 @llvm.smin.i64(i64, i64)
