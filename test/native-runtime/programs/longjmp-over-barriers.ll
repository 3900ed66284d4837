; rootwalk run test program (statepoint, for --generational's return barriers): setjmp, then 300
; frames down whose bottom allocates (nursery collections arm return barriers in those frames),
; then longjmp back over them: their barriers are stale (their slots lie below the SP). @jump_a
; returns at once after the longjmp (the next return through a barrier finds the stale entries
; inward of its own and drops them); @jump_b allocates first (the next collection finds them when
; it disarms). Every frame's cell is read after the longjmp or the return; the result is the same
; with and without collections (--no-gc).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare i32 @_setjmp(i8*) #0
declare void @longjmp(i8*, i32) #1
@__LLVM_StackMaps = extern_weak global i8
@buf = global [64 x i64] zeroinitializer, align 16

attributes #0 = { returns_twice "gc-leaf-function" }
attributes #1 = { noreturn "gc-leaf-function" }

define i64 @junk(i64 %k) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %loop ]
  %j = call i8 addrspace(1)* @gc_alloc(i64 0, i64 40)
  %ji = bitcast i8 addrspace(1)* %j to i64 addrspace(1)*
  store i64 %i, i64 addrspace(1)* %ji
  %v = load i64, i64 addrspace(1)* %ji
  %acc1 = add i64 %acc, %v
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %k
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc1
}

; n frames, each with a cell; the bottom allocates, then longjmps out of all of them.
define i64 @down(i64 %n) gc "statepoint-example" {
entry:
  %c = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  store i64 %n, i64 addrspace(1)* %ci
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  %b = call i64 @junk(i64 20000)
  call void @longjmp(i8* bitcast ([64 x i64]* @buf to i8*), i32 1)
  unreachable
rec:
  %n1 = sub i64 %n, 1
  %r = call i64 @down(i64 %n1)
  %v = load i64, i64 addrspace(1)* %ci
  %s = add i64 %r, %v
  ret i64 %s
}

define i64 @jump_a() gc "statepoint-example" {
entry:
  %c = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  store i64 7, i64 addrspace(1)* %ci
  %s = call i32 @_setjmp(i8* bitcast ([64 x i64]* @buf to i8*))
  %first = icmp eq i32 %s, 0
  br i1 %first, label %go, label %back
go:
  %r = call i64 @down(i64 300)
  ret i64 %r
back:
  ret i64 1000
}

define i64 @jump_b() gc "statepoint-example" {
entry:
  %s = call i32 @_setjmp(i8* bitcast ([64 x i64]* @buf to i8*))
  %first = icmp eq i32 %s, 0
  br i1 %first, label %go, label %back
go:
  %r = call i64 @down(i64 300)
  ret i64 %r
back:
  %j = call i64 @junk(i64 20000)
  %k = add i64 %j, 2000
  ret i64 %k
}

; rw_main's own frames 60 deep, so that barriers sit above jump_a and jump_b too.
define i64 @outer(i64 %n) gc "statepoint-example" {
entry:
  %c = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %ci = bitcast i8 addrspace(1)* %c to i64 addrspace(1)*
  store i64 %n, i64 addrspace(1)* %ci
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  %a = call i64 @jump_a()
  %b = call i64 @jump_b()
  %ab = add i64 %a, %b
  br label %join
rec:
  %n1 = sub i64 %n, 1
  %r0 = call i64 @outer(i64 %n1)
  br label %join
join:
  %r = phi i64 [ %ab, %bottom ], [ %r0, %rec ]
  %v = load i64, i64 addrspace(1)* %ci
  %s = add i64 %r, %v
  ret i64 %s
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %r = call i64 @outer(i64 60)
  ret i64 %r
}
