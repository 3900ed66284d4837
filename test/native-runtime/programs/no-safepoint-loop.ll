; rootwalk run test program (statepoint): a worker thread passes one safepoint in @spin_forever,
; says it started, then loops forever without reaching another (no call, no poll). rw_main waits
; until it started, then asks for a collection that can never begin: the safepoint watchdog
; must stop the run with exit 3, naming thread #1 and its last safepoint in @spin_forever.
declare void @gc_init(i8*)
declare void @gc_safepoint()
declare void @gc_collect()
declare i64 @gc_thread_start(void (i64)*, i64)
@__LLVM_StackMaps = extern_weak global i8
@started = global i64 0

define void @spin_forever(i64 %unused) gc "statepoint-example" {
entry:
  call void @gc_safepoint()
  store atomic i64 1, i64* @started seq_cst, align 8
  br label %loop
loop:
  %v = load volatile i64, i64* @started, align 8
  %go = icmp ne i64 %v, 0
  br i1 %go, label %loop, label %exit
exit:
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %t = call i64 @gc_thread_start(void (i64)* @spin_forever, i64 0)
  br label %wait
wait:
  call void @gc_safepoint()
  %s = load atomic i64, i64* @started seq_cst, align 8
  %ready = icmp ne i64 %s, 0
  br i1 %ready, label %collect, label %wait
collect:
  call void @gc_collect()
  ret i64 %t
}
