; rootwalk run test program (statepoint): 4 threads build and sum their own lists with
; safepoints and allocation; rw_main allocates too, then joins them (a safe region: its
; frames are scanned and relocated while it waits). Thread k stores its sum in @results[k].
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
@__LLVM_StackMaps = extern_weak global i8
@results = global [4 x i64] zeroinitializer

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
  %base = mul i64 %k, 100000
  br label %round
round:
  %j = phi i64 [ 0, %entry ], [ %j1, %round ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %round ]
  %l = call i8 addrspace(1)* @build_list(i64 300, i64 %base)
  %s = call i64 @sum_list(i8 addrspace(1)* %l)
  %s2 = call i64 @sum_list(i8 addrspace(1)* %l)
  %d = sub i64 %s, %s2
  %acc0 = add i64 %acc, %s
  %acc1 = add i64 %acc0, %d
  %j1 = add i64 %j, 1
  %done = icmp eq i64 %j1, 20
  br i1 %done, label %exit, label %round
exit:
  %slot = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 %k
  store i64 %acc1, i64* %slot
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %mine = call i8 addrspace(1)* @build_list(i64 100, i64 7)
  %h0 = call i64 @gc_thread_start(void (i64)* @worker, i64 0)
  %h1 = call i64 @gc_thread_start(void (i64)* @worker, i64 1)
  %h2 = call i64 @gc_thread_start(void (i64)* @worker, i64 2)
  %h3 = call i64 @gc_thread_start(void (i64)* @worker, i64 3)
  %more = call i8 addrspace(1)* @build_list(i64 200, i64 9)
  call void @gc_thread_join(i64 %h0)
  call void @gc_thread_join(i64 %h1)
  call void @gc_thread_join(i64 %h2)
  call void @gc_thread_join(i64 %h3)
  %m1 = call i64 @sum_list(i8 addrspace(1)* %mine)
  %m2 = call i64 @sum_list(i8 addrspace(1)* %more)
  %p0 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 0
  %p1 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 1
  %p2 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 2
  %p3 = getelementptr [4 x i64], [4 x i64]* @results, i64 0, i64 3
  %r0 = load i64, i64* %p0
  %r1 = load i64, i64* %p1
  %r2 = load i64, i64* %p2
  %r3 = load i64, i64* %p3
  %a = add i64 %r0, %r1
  %b = add i64 %a, %r2
  %c = add i64 %b, %r3
  %d = add i64 %c, %m1
  %e = add i64 %d, %m2
  ret i64 %e
}
