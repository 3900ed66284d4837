; rootwalk run test program (statepoint, --generational): recursion 2,000 frames deep, every
; frame holding a GC pointer (a cell linked to its caller's) across the recursive call; the bottom
; allocates 1,000 cells of 1 KB (about 16 nursery collections at --nursery 64K, each arming
; return barriers in the frames above) and calls getppid after the 900th, where
; test/native-runtime/return-barrier-core.test.ts has gdb write a core. Every frame then checks
; that its cell still links to its caller's (relocated or not): the result is 0 when all did.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_write_barrier(i8 addrspace(1)*) #0
declare void @abort()
@__LLVM_StackMaps = extern_weak global i8

define void @churn() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %junk = call i8 addrspace(1)* @gc_alloc(i64 0, i64 1024)
  %stop = icmp eq i64 %i, 900
  br i1 %stop, label %stophere, label %next
stophere:
  call void @abort()
  br label %next
next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 1000
  br i1 %done, label %out, label %loop
out:
  ret void
}

define i64 @down(i64 %n, i8 addrspace(1)* %parent) gc "statepoint-example" {
entry:
  %c = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %slot = bitcast i8 addrspace(1)* %c to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %parent, i8 addrspace(1)* addrspace(1)* %slot
  call void @gc_write_barrier(i8 addrspace(1)* %c)
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  call void @churn()
  br label %join
rec:
  %n1 = sub i64 %n, 1
  %r0 = call i64 @down(i64 %n1, i8 addrspace(1)* %c)
  br label %join
join:
  %r = phi i64 [ 0, %bottom ], [ %r0, %rec ]
  %par = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %same = icmp eq i8 addrspace(1)* %par, %parent
  %bad = select i1 %same, i64 0, i64 1
  %s = add i64 %r, %bad
  ret i64 %s
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %r = call i64 @down(i64 2000, i8 addrspace(1)* null)
  ret i64 %r
}

attributes #0 = { "gc-leaf-function" }
