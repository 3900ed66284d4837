; rootwalk run test program (statepoint): a pointer to byte 16 of a 32-byte object, made with
; ptrtoint / add / inttoptr, held across gc_collect and read through afterwards (issue 29, item 1).
; RS4GC takes the inttoptr result for a base pointer of its own, so the stack map names it as a
; root: a root that is no object's address. Words 2 and 3 hold 7 and 9 (--no-gc prints 16); the
; word before the interior pointer (word 1) is 0. The collector must refuse the root, never move
; a fake object "starting" there.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %obj = call i8 addrspace(1)* @gc_alloc(i64 0, i64 32)
  %w = bitcast i8 addrspace(1)* %obj to i64 addrspace(1)*
  %w2 = getelementptr i64, i64 addrspace(1)* %w, i64 2
  store i64 7, i64 addrspace(1)* %w2
  %w3 = getelementptr i64, i64 addrspace(1)* %w, i64 3
  store i64 9, i64 addrspace(1)* %w3
  %a = ptrtoint i8 addrspace(1)* %obj to i64
  %a16 = add i64 %a, 16
  %mid = inttoptr i64 %a16 to i64 addrspace(1)*
  call void @gc_collect()
  %x = load i64, i64 addrspace(1)* %mid
  %m1 = getelementptr i64, i64 addrspace(1)* %mid, i64 1
  %y = load i64, i64 addrspace(1)* %m1
  %s = add i64 %x, %y
  ret i64 %s
}
