; rootwalk run test program (statepoint, for --generational): a long-lived table of 64 pointer
; slots, made old by gc_collect(), gets a young cell stored into slot i % 64 at every iteration,
; with gc_write_barrier(table) after the store; each cell points to a young leaf (a store into a
; young object, barrier too: its fast path). Only the table keeps the last 64 cells alive; the
; other cells, their leaves and 40-byte junk objects die young. Returns the sum over the table of
; cell value + leaf value (i + 3i for i in 99936..99999 = 25591680).
; Layouts: table = 64 slots; cell = 1 slot (leaf) + 8 raw bytes (i); leaf = 8 raw bytes (3i).
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_write_barrier(i8 addrspace(1)*) #0
@__LLVM_StackMaps = extern_weak global i8

attributes #0 = { "gc-leaf-function" }

; table[k] = cell, then the barrier: the one store into the old table.
define void @put_table(i8 addrspace(1)* %table, i64 %k, i8 addrspace(1)* %cell) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %table to i8 addrspace(1)* addrspace(1)*
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 %k
  store i8 addrspace(1)* %cell, i8 addrspace(1)* addrspace(1)* %slot
  call void @gc_write_barrier(i8 addrspace(1)* %table) ; BARRIER(table)
  ret void
}

; A young cell with its young leaf: cell.leaf = leaf, then the barrier (a young object: fast path).
define i8 addrspace(1)* @make_cell(i64 %i) gc "statepoint-example" {
entry:
  %leaf = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %lraw = bitcast i8 addrspace(1)* %leaf to i64 addrspace(1)*
  %i3 = mul i64 %i, 3
  store i64 %i3, i64 addrspace(1)* %lraw
  %cell = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %slot = bitcast i8 addrspace(1)* %cell to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %leaf, i8 addrspace(1)* addrspace(1)* %slot
  call void @gc_write_barrier(i8 addrspace(1)* %cell)
  %raw = getelementptr i8, i8 addrspace(1)* %cell, i64 8
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  store i64 %i, i64 addrspace(1)* %rawi
  ret i8 addrspace(1)* %cell
}

; cell value + leaf value of table[k]
define i64 @entry_value(i8 addrspace(1)* %table, i64 %k) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %table to i8 addrspace(1)* addrspace(1)*
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 %k
  %cell = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slot
  %raw = getelementptr i8, i8 addrspace(1)* %cell, i64 8
  %rawi = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %rawi
  %lslot = bitcast i8 addrspace(1)* %cell to i8 addrspace(1)* addrspace(1)*
  %leaf = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %lslot
  %lraw = bitcast i8 addrspace(1)* %leaf to i64 addrspace(1)*
  %lv = load i64, i64 addrspace(1)* %lraw
  %s = add i64 %v, %lv
  ret i64 %s
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %table0 = call i8 addrspace(1)* @gc_alloc(i64 64, i64 0)
  call void @gc_collect()
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %table = phi i8 addrspace(1)* [ %table0, %entry ], [ %table, %loop ]
  %cell = call i8 addrspace(1)* @make_cell(i64 %i)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 0, i64 40)
  %k = urem i64 %i, 64
  call void @put_table(i8 addrspace(1)* %table, i64 %k, i8 addrspace(1)* %cell)
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 100000
  br i1 %done, label %sum, label %loop
sum:
  %t = phi i8 addrspace(1)* [ %table, %loop ]
  br label %sumloop
sumloop:
  %j = phi i64 [ 0, %sum ], [ %j1, %sumloop ]
  %acc = phi i64 [ 0, %sum ], [ %acc1, %sumloop ]
  %v = call i64 @entry_value(i8 addrspace(1)* %t, i64 %j)
  %acc1 = add i64 %acc, %v
  %j1 = add i64 %j, 1
  %end = icmp eq i64 %j1, 64
  br i1 %end, label %exit, label %sumloop
exit:
  ret i64 %acc1
}
