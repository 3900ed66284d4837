; Keeps every object it allocates alive (a linked list of 1 KiB objects): with --heap 4M the
; collector runs out of room. rootwalk run must say "heap exhausted" in one line, exit 3.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
@__LLVM_StackMaps = extern_weak global i8
define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %n, %loop ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %o, %loop ]
  %o = call i8 addrspace(1)* @gc_alloc(i64 1, i64 1000)
  %slot = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %slot
  %n = add i64 %i, 1
  %c = icmp ult i64 %n, 100000
  br i1 %c, label %loop, label %done
done:
  ret i64 %n
}
