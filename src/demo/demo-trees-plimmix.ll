; The `npm start` demo, plimmix variant (rootwalk compile --plimmix: llc -O2 with the plimmix GC
; plugin; gcroot allocas are the roots, every call is a safe point). The same workload as
; demo-trees-statepoint.ll: 3 worker threads each build and check 40 binary trees of depth 8,
; while rw_main recurses 20,000 frames deep, each frame keeping one object in a gcroot slot
; across the recursive call; at the bottom it builds a depth-10 tree. Expected result:
; 3 * 40 * 511 + 2047 + sum(0..19999) = 200053367. Negative results are failed checks.
source_filename = "demo_trees_plimmix.c"

@"_GC_MAP_demo_trees_plimmix.c" = external global i8
@results = global [3 x i64] zeroinitializer

declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)

define internal void @set_slot(i8* %o, i64 %i, i8* %v) {
  %s = bitcast i8* %o to i8**
  %a = getelementptr i8*, i8** %s, i64 %i
  store i8* %v, i8** %a
  ret void
}
define internal i8* @slot(i8* %o, i64 %i) {
  %s = bitcast i8* %o to i8**
  %a = getelementptr i8*, i8** %s, i64 %i
  %v = load i8*, i8** %a
  ret i8* %v
}
define internal void @set_value(i8* %o, i64 %v) {
  %b = getelementptr i8, i8* %o, i64 16
  %p = bitcast i8* %b to i64*
  store i64 %v, i64* %p
  ret void
}
define internal i64 @value(i8* %o) {
  %b = getelementptr i8, i8* %o, i64 16
  %p = bitcast i8* %b to i64*
  %v = load i64, i64* %p
  ret i64 %v
}

define i8* @make_tree(i64 %d) gc "plimmix" {
entry:
  %l = alloca i8*
  %r = alloca i8*
  call void @llvm.gcroot(i8** %l, i8* null)
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %l
  store i8* null, i8** %r
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %bottom, label %inner
bottom:
  %x = call i8* @gc_alloc(i64 2, i64 8)
  ret i8* %x
inner:
  %d1 = sub i64 %d, 1
  %lt = call i8* @make_tree(i64 %d1)
  store i8* %lt, i8** %l
  %rt = call i8* @make_tree(i64 %d1)
  store i8* %rt, i8** %r
  %n = call i8* @gc_alloc(i64 2, i64 8)
  %l2 = load i8*, i8** %l
  %r2 = load i8*, i8** %r
  call void @set_slot(i8* %n, i64 0, i8* %l2)
  call void @set_slot(i8* %n, i64 1, i8* %r2)
  call void @set_value(i8* %n, i64 %d)
  ret i8* %n
}

define i64 @check(i8* %n, i64 %d) gc "plimmix" {
entry:
  %v = call i64 @value(i8* %n)
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
  %l = call i8* @slot(i8* %n, i64 0)
  %r = call i8* @slot(i8* %n, i64 1)
  %d1 = sub i64 %d, 1
  %cl = call i64 @check(i8* %l, i64 %d1)
  %cr = call i64 @check(i8* %r, i64 %d1)
  %s = add i64 %cl, %cr
  %t = add i64 %s, 1
  ret i64 %t
}

define void @worker(i64 %k) gc "plimmix" {
entry:
  %t = alloca i8*
  call void @llvm.gcroot(i8** %t, i8* null)
  store i8* null, i8** %t
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %loop ]
  %tree = call i8* @make_tree(i64 8)
  store i8* %tree, i8** %t
  call void @gc_safepoint()
  %tree2 = load i8*, i8** %t
  %c = call i64 @check(i8* %tree2, i64 8)
  %acc1 = add i64 %acc, %c
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 40
  br i1 %more, label %loop, label %done
done:
  %slot = getelementptr [3 x i64], [3 x i64]* @results, i64 0, i64 %k
  store i64 %acc1, i64* %slot
  ret void
}

define i64 @descend(i64 %n, i64 %limit) gc "plimmix" {
entry:
  %o = alloca i8*
  %t = alloca i8*
  call void @llvm.gcroot(i8** %o, i8* null)
  call void @llvm.gcroot(i8** %t, i8* null)
  store i8* null, i8** %o
  store i8* null, i8** %t
  %obj = call i8* @gc_alloc(i64 2, i64 8)
  store i8* %obj, i8** %o
  call void @set_value(i8* %obj, i64 %n)
  %bottom = icmp eq i64 %n, %limit
  br i1 %bottom, label %tree, label %deeper
tree:
  %tr = call i8* @make_tree(i64 10)
  store i8* %tr, i8** %t
  call void @gc_safepoint()
  %tr2 = load i8*, i8** %t
  %c = call i64 @check(i8* %tr2, i64 10)
  br label %verify
deeper:
  %n1 = add i64 %n, 1
  %below = call i64 @descend(i64 %n1, i64 %limit)
  br label %verify
verify:
  %sum = phi i64 [ %c, %tree ], [ %below, %deeper ]
  %o2 = load i8*, i8** %o
  %v = call i64 @value(i8* %o2)
  %ok = icmp eq i64 %v, %n
  br i1 %ok, label %good, label %bad
bad:
  ret i64 -2000000000
good:
  %r = add i64 %sum, %n
  ret i64 %r
}

define i64 @rw_main() gc "plimmix" {
  call void @gc_init(i8* @"_GC_MAP_demo_trees_plimmix.c")
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
