; rootwalk run test program (statepoint): rw_main reads through a wild address, 0x1234, which no
; mapping covers. The runtime's fault handler must end the run with exit 3 naming thread #0, the
; faulting instruction (rw_main + its offset: the load through the wild address, read from the
; signal context's PC) and the fault address 0x1234 (the siginfo's si_addr).
declare void @gc_init(i8*)
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %wild = inttoptr i64 4660 to i64*
  %v = load volatile i64, i64* %wild
  ret i64 %v
}
