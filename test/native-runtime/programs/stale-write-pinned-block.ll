; rootwalk run test program (statepoint), issue 17 item 3: a write through a stale pointer into
; memory that stays readable, the case the poison check at the next collection is for. A stuck
; thread pins object P; X was allocated right after P in the same block (30 fillers apart, so not
; in the line after P's). The collection moves X out; P's block is kept, X's old line poisoned and
; (under --stress) not handed out again. rw_main then stores 77 through X's old address, hidden
; from the stack map as an integer, and collects again: that collection finds the write.
; Result: X's field, 77 without collections (the write goes to the one copy), 5 once X moved.
; Run with a large --stress=N (the program collects itself; a stress collection before the pin
; would move P and X apart first).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
declare void @gc_add_global(i8 addrspace(1)**)
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
declare void @thread_stuck_start()
declare void @thread_stuck_end()
@__LLVM_StackMaps = extern_weak global i8

@pinned_root = global i8 addrspace(1)* null, align 8
@stuck_flag = global i64 0, align 8
@release_flag = global i64 0, align 8

; Loads P, gets stuck (its frame, holding P, is scanned and P pinned), spins until released.
define void @stuck_worker(i64 %unused) gc "statepoint-example" {
entry:
  %p = load i8 addrspace(1)*, i8 addrspace(1)** @pinned_root
  call void @thread_stuck_start()
  store atomic i64 1, i64* @stuck_flag seq_cst, align 8
  br label %spin
spin:
  %go = load atomic i64, i64* @release_flag seq_cst, align 8
  %released = icmp ne i64 %go, 0
  br i1 %released, label %done, label %spin
done:
  call void @thread_stuck_end()
  %w = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  store volatile i64 1, i64 addrspace(1)* %w
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  call void @gc_add_global(i8 addrspace(1)** @pinned_root)
  %p = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  store i8 addrspace(1)* %p, i8 addrspace(1)** @pinned_root
  br label %fill
fill:
  %k = phi i64 [ 0, %entry ], [ %k1, %fill ]
  %junk = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %k1 = add i64 %k, 1
  %full = icmp eq i64 %k1, 30
  br i1 %full, label %make_x, label %fill
make_x:
  %x = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %xw = bitcast i8 addrspace(1)* %x to i64 addrspace(1)*
  store i64 5, i64 addrspace(1)* %xw
  %hidden = ptrtoint i8 addrspace(1)* %x to i64
  %h = call i64 @gc_thread_start(void (i64)* @stuck_worker, i64 0)
  br label %wait
wait:
  %n = phi i64 [ 0, %make_x ], [ %n1, %spin ], [ %n1, %safepoint ]
  %f = load atomic i64, i64* @stuck_flag seq_cst, align 8
  %stuck = icmp ne i64 %f, 0
  br i1 %stuck, label %go, label %spin
spin:
  ; a safepoint every 100,000 loads only: --stress=N counts safepoints, and a stress collection
  ; before the pin would move P and X apart
  %n1 = add i64 %n, 1
  %m = urem i64 %n1, 100000
  %poll = icmp eq i64 %m, 0
  br i1 %poll, label %safepoint, label %wait
safepoint:
  call void @gc_safepoint()
  br label %wait
go:
  call void @gc_collect()
  %old = inttoptr i64 %hidden to i64 addrspace(1)*
  store volatile i64 77, i64 addrspace(1)* %old
  call void @gc_collect()
  store atomic i64 1, i64* @release_flag seq_cst, align 8
  call void @gc_thread_join(i64 %h)
  %v = load volatile i64, i64 addrspace(1)* %xw
  ret i64 %v
}
