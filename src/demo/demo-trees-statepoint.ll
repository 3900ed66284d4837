; The `npm start` demo, statepoint variant (rootwalk compile --statepoint: RewriteStatepointsForGC,
; then llc -O2 with default options). rw_main starts 3 worker threads that each build and check
; 40 binary trees of depth 8 (bottom-up, so children stay live across the parent's allocation),
; while rw_main itself recurses 20,000 frames deep, each frame keeping one object alive across
; the recursive call; at the bottom it builds a depth-10 tree; on the way back every frame checks
; its object. Expected result: 3 * 40 * 511 + 2047 + sum(0..19999) = 61320 + 2047 + 199990000
; = 200053367. Negative results are failed checks.
source_filename = "demo-trees-statepoint"

declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
@__LLVM_StackMaps = extern_weak global i8
@results = global [3 x i64] zeroinitializer

; A node: 2 pointer slots (left, right) then 8 raw bytes (a value).
define i8 addrspace(1)* @node(i8 addrspace(1)* %l, i8 addrspace(1)* %r, i64 %v) gc "statepoint-example" {
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  %slots = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %slots
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 1
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %s1
  %raw = getelementptr i8, i8 addrspace(1)* %n, i64 16
  %rawp = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %rawp
  ret i8 addrspace(1)* %n
}

define i8 addrspace(1)* @make_tree(i64 %d) gc "statepoint-example" {
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %bottom, label %inner
bottom:
  %x = call i8 addrspace(1)* @node(i8 addrspace(1)* null, i8 addrspace(1)* null, i64 0)
  ret i8 addrspace(1)* %x
inner:
  %d1 = sub i64 %d, 1
  %l = call i8 addrspace(1)* @make_tree(i64 %d1)
  %r = call i8 addrspace(1)* @make_tree(i64 %d1)
  %n = call i8 addrspace(1)* @node(i8 addrspace(1)* %l, i8 addrspace(1)* %r, i64 %d)
  ret i8 addrspace(1)* %n
}

; Node count, checking each node's stored depth (-1000000 on a mismatch).
define i64 @check(i8 addrspace(1)* %n, i64 %d) gc "statepoint-example" {
  %raw = getelementptr i8, i8 addrspace(1)* %n, i64 16
  %rawp = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawp
  %ok = icmp eq i64 %v, %d
  br i1 %ok, label %good, label %bad
bad:
  ret i64 -1000000
good:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %one, label %kids
one:
  ret i64 1
kids:
  %slots = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  %l = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 1
  %r = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s1
  %d1 = sub i64 %d, 1
  %cl = call i64 @check(i8 addrspace(1)* %l, i64 %d1)
  %cr = call i64 @check(i8 addrspace(1)* %r, i64 %d1)
  %s = add i64 %cl, %cr
  %t = add i64 %s, 1
  ret i64 %t
}

define void @worker(i64 %k) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %loop ]
  %t = call i8 addrspace(1)* @make_tree(i64 8)
  call void @gc_safepoint()
  %c = call i64 @check(i8 addrspace(1)* %t, i64 8)
  %acc1 = add i64 %acc, %c
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 40
  br i1 %more, label %loop, label %done
done:
  %slot = getelementptr [3 x i64], [3 x i64]* @results, i64 0, i64 %k
  store i64 %acc1, i64* %slot
  ret void
}

; Recursion: each frame keeps `o` (raw value = depth) alive across the deeper call.
define i64 @descend(i64 %n, i64 %limit) gc "statepoint-example" {
  %o = call i8 addrspace(1)* @node(i8 addrspace(1)* null, i8 addrspace(1)* null, i64 %n)
  %bottom = icmp eq i64 %n, %limit
  br i1 %bottom, label %tree, label %deeper
tree:
  %t = call i8 addrspace(1)* @make_tree(i64 10)
  %c = call i64 @check(i8 addrspace(1)* %t, i64 10)
  br label %verify
deeper:
  %n1 = add i64 %n, 1
  %below = call i64 @descend(i64 %n1, i64 %limit)
  br label %verify
verify:
  %sum = phi i64 [ %c, %tree ], [ %below, %deeper ]
  %raw = getelementptr i8, i8 addrspace(1)* %o, i64 16
  %rawp = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawp
  %ok = icmp eq i64 %v, %n
  br i1 %ok, label %good, label %bad
bad:
  ret i64 -2000000000
good:
  %r = add i64 %sum, %n
  ret i64 %r
}

define i64 @rw_main() gc "statepoint-example" {
  call void @gc_init(i8* @__LLVM_StackMaps)
  %h0 = call i64 @gc_thread_start(void (i64)* @worker, i64 0)
  %h1 = call i64 @gc_thread_start(void (i64)* @worker, i64 1)
  %h2 = call i64 @gc_thread_start(void (i64)* @worker, i64 2)
  %deep = call i64 @descend(i64 0, i64 19999)
  call void @gc_thread_join(i64 %h0)
  call void @gc_thread_join(i64 %h1)
  call void @gc_thread_join(i64 %h2)
  %p0 = getelementptr [3 x i64], [3 x i64]* @results, i64 0, i64 0
  %p1 = getelementptr [3 x i64], [3 x i64]* @results, i64 0, i64 1
  %p2 = getelementptr [3 x i64], [3 x i64]* @results, i64 0, i64 2
  %r0 = load i64, i64* %p0
  %r1 = load i64, i64* %p1
  %r2 = load i64, i64* %p2
  %a = add i64 %r0, %r1
  %b = add i64 %a, %r2
  %c = add i64 %b, %deep
  ret i64 %c
}
