; rootwalk run test program (statepoint): recursion 100,000 frames deep, every frame holding a
; GC pointer (a fresh cell linked to its caller's) across the recursive call; a collection at
; the bottom moves all of them.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @down(i64 %n, i8 addrspace(1)* %parent) gc "statepoint-example" {
entry:
  %c = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %slot = bitcast i8 addrspace(1)* %c to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %parent, i8 addrspace(1)* addrspace(1)* %slot
  %raw = getelementptr i8, i8 addrspace(1)* %c, i64 8
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  store i64 %n, i64 addrspace(1)* %rawi
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %rec
bottom:
  call void @gc_collect()
  br label %join
rec:
  %n1 = sub i64 %n, 1
  %r0 = call i64 @down(i64 %n1, i8 addrspace(1)* %c)
  br label %join
join:
  %r = phi i64 [ 0, %bottom ], [ %r0, %rec ]
  ; read own cell and the parent link after the call (both relocated)
  %rawi2 = bitcast i8 addrspace(1)* %c to i8 addrspace(1)* addrspace(1)*
  %par = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %rawi2
  %raw3 = getelementptr i8, i8 addrspace(1)* %c, i64 8
  %rawi3 = bitcast i8 addrspace(1)* %raw3 to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawi3
  %same = icmp eq i8 addrspace(1)* %par, %parent
  %bad = select i1 %same, i64 0, i64 1000000000
  %s = add i64 %r, %v
  %s2 = add i64 %s, %bad
  ret i64 %s2
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %r = call i64 @down(i64 100000, i8 addrspace(1)* null)
  ret i64 %r
}
