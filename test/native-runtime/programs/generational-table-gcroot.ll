; rootwalk run test program (plimmix gcroot style, for --generational): generational-table.ll's
; program with gcroot allocas and plain i8* pointers, reloaded from their slots after every call.
; A long-lived table of 64 pointer slots, made old by gc_collect(), gets a young cell stored into
; slot i % 64 at every iteration, with gc_write_barrier(table) after the store; each cell points
; to a young leaf (barrier too). Returns the sum over the table of cell value + leaf value
; (i + 3i for i in 99936..99999 = 25591680).
source_filename = "rw_generational_table.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_write_barrier(i8*)
@"_GC_MAP_rw_generational_table.c" = external global i8

; table[k] = cell, then the barrier: the one store into the old table. No call can collect here.
define void @put_table(i8* %table, i64 %k, i8* %cell) {
entry:
  %slots = bitcast i8* %table to i8**
  %slot = getelementptr i8*, i8** %slots, i64 %k
  store i8* %cell, i8** %slot
  call void @gc_write_barrier(i8* %table) ; BARRIER(table)
  ret void
}

define i8* @make_cell(i64 %i) gc "plimmix" {
entry:
  %leafroot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %leafroot, i8* null)
  %leaf = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %leaf, i8** %leafroot
  %lraw = bitcast i8* %leaf to i64*
  %i3 = mul i64 %i, 3
  store i64 %i3, i64* %lraw
  %cell = call i8* @gc_alloc(i64 1, i64 8)
  %leaf2 = load i8*, i8** %leafroot
  %slot = bitcast i8* %cell to i8**
  store i8* %leaf2, i8** %slot
  call void @gc_write_barrier(i8* %cell)
  %raw = getelementptr i8, i8* %cell, i64 8
  %rawi = bitcast i8* %raw to i64*
  store i64 %i, i64* %rawi
  ret i8* %cell
}

; cell value + leaf value of table[k] (no call: nothing moves)
define i64 @entry_value(i8* %table, i64 %k) {
entry:
  %slots = bitcast i8* %table to i8**
  %slot = getelementptr i8*, i8** %slots, i64 %k
  %cell = load i8*, i8** %slot
  %raw = getelementptr i8, i8* %cell, i64 8
  %rawi = bitcast i8* %raw to i64*
  %v = load i64, i64* %rawi
  %lslot = bitcast i8* %cell to i8**
  %leaf = load i8*, i8** %lslot
  %lraw = bitcast i8* %leaf to i64*
  %lv = load i64, i64* %lraw
  %s = add i64 %v, %lv
  ret i64 %s
}

define i64 @rw_main() gc "plimmix" {
entry:
  %tableroot = alloca i8*, align 8
  %cellroot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %tableroot, i8* null)
  call void @llvm.gcroot(i8** %cellroot, i8* null)
  call void @gc_init(i8* @"_GC_MAP_rw_generational_table.c")
  %table0 = call i8* @gc_alloc(i64 64, i64 0)
  store i8* %table0, i8** %tableroot
  call void @gc_collect()
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %cell = call i8* @make_cell(i64 %i)
  store i8* %cell, i8** %cellroot
  %junk = call i8* @gc_alloc(i64 0, i64 40)
  %k = urem i64 %i, 64
  %table = load i8*, i8** %tableroot
  %cell2 = load i8*, i8** %cellroot
  call void @put_table(i8* %table, i64 %k, i8* %cell2)
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 100000
  br i1 %done, label %sum, label %loop
sum:
  store i8* null, i8** %cellroot
  br label %sumloop
sumloop:
  %j = phi i64 [ 0, %sum ], [ %j1, %sumloop ]
  %acc = phi i64 [ 0, %sum ], [ %acc1, %sumloop ]
  %t = load i8*, i8** %tableroot
  %v = call i64 @entry_value(i8* %t, i64 %j)
  %acc1 = add i64 %acc, %v
  %j1 = add i64 %j, 1
  %end = icmp eq i64 %j1, 64
  br i1 %end, label %exit, label %sumloop
exit:
  ret i64 %acc1
}
