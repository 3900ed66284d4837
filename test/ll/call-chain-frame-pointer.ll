; rootwalk corpus: call-chain-frame-pointer
; Covers: a chain of gc functions calling each other, chain_f0 -> chain_f1 -> chain_f2 ->
;   @gc_safepoint_poll (external), one statepoint per function, for simulated stack walks.
;   "frame-pointer"="all" on every function: push %rbp; mov %rsp,%rbp in each prologue, so
;   the chain can also be walked through saved RBPs, and StackSize includes the RBP push.
;   chain_f1 passes %other to chain_f2 and never uses it again, yet RS4GC keeps it in gc-live:
;   LLVM 14 treats gc-pointer call arguments as live across the statepoint.
; Build: opt -passes=rewrite-statepoints-for-gc -S call-chain-frame-pointer.ll | llc -filetype=obj

declare void @gc_safepoint_poll()

define i64 @chain_f2(i64 addrspace(1)* %obj, i64 %depth) #0 gc "statepoint-example" {
entry:
  %extra = getelementptr i64, i64 addrspace(1)* %obj, i64 1
  call void @gc_safepoint_poll()
  %v = load i64, i64 addrspace(1)* %obj
  %e = load i64, i64 addrspace(1)* %extra
  %s = add i64 %v, %e
  %r = add i64 %s, %depth
  ret i64 %r
}

define i64 @chain_f1(i64 addrspace(1)* %obj, i64 addrspace(1)* %other, i64 %depth) #0 gc "statepoint-example" {
entry:
  %d = add i64 %depth, 1
  %r = call i64 @chain_f2(i64 addrspace(1)* %other, i64 %d)
  %v = load i64, i64 addrspace(1)* %obj
  %s = add i64 %r, %v
  ret i64 %s
}

define i64 @chain_f0(i64 addrspace(1)* %a, i64 addrspace(1)* %b, i64 addrspace(1)* %c) #0 gc "statepoint-example" {
entry:
  %r = call i64 @chain_f1(i64 addrspace(1)* %a, i64 addrspace(1)* %b, i64 0)
  %x = load i64, i64 addrspace(1)* %a
  %y = load i64, i64 addrspace(1)* %c
  %s = add i64 %r, %x
  %t = add i64 %s, %y
  ret i64 %t
}
attributes #0 = { "frame-pointer"="all" }
