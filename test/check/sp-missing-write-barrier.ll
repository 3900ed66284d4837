; rootwalk check corpus (statepoint), MISTAKE missing-write-barrier (check --generational only):
; @rw_main allocates a table of 8 pointer slots that lives for the whole run, then fills it with
; young items, one allocation per iteration; the store of %item into the table has no
; gc_write_barrier(%table) after it. From the second iteration on, a nursery collection may have
; promoted %table (old: marked) while %item is young: without the barrier the nursery collection
; never rescans %table, frees %item and leaves a dangling pointer in the table.
; Expected (with --generational): one finding, missing-write-barrier in @rw_main, %loop: %table,
; first reaching the call of @gc_alloc (the next iteration's allocation). Without it: nothing.
; Fix: `call void @gc_write_barrier(i8 addrspace(1)* %table)` right after the store.
source_filename = "sp-missing-write-barrier"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %table = call i8 addrspace(1)* @gc_alloc(i64 8, i64 0)
  %slots = bitcast i8 addrspace(1)* %table to i8 addrspace(1)* addrspace(1)*
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %item = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %raw = bitcast i8 addrspace(1)* %item to i64 addrspace(1)*
  store i64 %i, i64 addrspace(1)* %raw, align 8
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 %i
  store i8 addrspace(1)* %item, i8 addrspace(1)* addrspace(1)* %slot, align 8
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 8
  br i1 %done, label %read, label %loop
read:
  call void @gc_collect()
  %last = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 7
  %kept = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %last, align 8
  %w = bitcast i8 addrspace(1)* %kept to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %w, align 8
  ret i64 %v
}
