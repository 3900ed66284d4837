; rootwalk run test program (statepoint): as interior-root-inttoptr.ll, but the word before the
; interior pointer (word 1 of the object) is all ones, so taken for a header it reads "forwarded"
; (bit 0 set). Before the allocation bitmap a collection "forwarded" the root to 2^64 - 8 and
; the run stopped with exit 3 blaming the collector; --no-gc prints 16 (words 2 and 3: 7 + 9).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %obj = call i8 addrspace(1)* @gc_alloc(i64 0, i64 32)
  %w = bitcast i8 addrspace(1)* %obj to i64 addrspace(1)*
  %w1 = getelementptr i64, i64 addrspace(1)* %w, i64 1
  store i64 -1, i64 addrspace(1)* %w1
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
