; rootwalk native test program: sp-globals
; Exercises: gc_add_global. Two global slots (@list_root, @table_root: plain globals holding
;   gc pointers) are registered; a 1,000-node list is reachable ONLY through @list_root (each
;   iteration loads the head from the global, allocates, links and stores back, polling every 8
;   nodes, with a garbage object per node), and a 128-slot table, reachable only through
;   @table_root, points at every 8th node. No local keeps these objects across a safepoint after
;   they are published. Two gc_collect calls, then the list and table are checked through the
;   globals.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: sum over i < 1000 of (i*i + 3) + sum over t < 125 of 8t = 332833500 + 3000
;   + 62000 = 332898500. Errors: -1 list value, -2 list length, -3 table entry.
source_filename = "sp-globals"

declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

; Field helpers: "gc-leaf-function" (their calls are not statepoints), no gc strategy.
; Slot i is at +8*i; raw bytes are addressed by byte offset from the object pointer.
define internal i8 addrspace(1)* @ld(i8 addrspace(1)* %o, i64 %i) #1 {
  %s = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %a = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s, i64 %i
  %v = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %a, align 8
  ret i8 addrspace(1)* %v
}
define internal void @st(i8 addrspace(1)* %o, i64 %i, i8 addrspace(1)* %v) #1 {
  %s = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %a = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s, i64 %i
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %a, align 8
  ret void
}
define internal i64 @ldraw(i8 addrspace(1)* %o, i64 %off) #1 {
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 %off
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p, align 8
  ret i64 %v
}
define internal void @straw(i8 addrspace(1)* %o, i64 %off, i64 %v) #1 {
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 %off
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %p, align 8
  ret void
}
attributes #1 = { noinline "gc-leaf-function" }

declare void @gc_add_global(i8 addrspace(1)**)

@list_root = global i8 addrspace(1)* null, align 8
@table_root = global i8 addrspace(1)* null, align 8

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  call void @gc_add_global(i8 addrspace(1)** @list_root)
  call void @gc_add_global(i8 addrspace(1)** @table_root)
  %t = call i8 addrspace(1)* @gc_alloc(i64 128, i64 0)
  store i8 addrspace(1)* %t, i8 addrspace(1)** @table_root, align 8
  br label %build
build:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %head = load i8 addrspace(1)*, i8 addrspace(1)** @list_root, align 8
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %head)
  %sq = mul i64 %i, %i
  %v = add i64 %sq, 3
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %v)
  store i8 addrspace(1)* %n, i8 addrspace(1)** @list_root, align 8
  %m8 = and i64 %i, 7
  %c8 = icmp eq i64 %m8, 0
  br i1 %c8, label %publish, label %junk
publish:
  %tab = load i8 addrspace(1)*, i8 addrspace(1)** @table_root, align 8
  %ti = lshr i64 %i, 3
  %fresh = load i8 addrspace(1)*, i8 addrspace(1)** @list_root, align 8
  call void @st(i8 addrspace(1)* %tab, i64 %ti, i8 addrspace(1)* %fresh)
  call void @gc_safepoint()
  br label %junk
junk:
  %g = call i8 addrspace(1)* @gc_alloc(i64 2, i64 16)
  br label %next
next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 1000
  br i1 %done, label %check, label %build

check:
  call void @gc_collect()
  call void @gc_collect()
  %h0 = load i8 addrspace(1)*, i8 addrspace(1)** @list_root, align 8
  br label %walk
walk:
  %w = phi i8 addrspace(1)* [ %h0, %check ], [ %wn, %walk.next ]
  %k = phi i64 [ 999, %check ], [ %k1, %walk.next ]
  %acc = phi i64 [ 0, %check ], [ %acc1, %walk.next ]
  %x = call i64 @ldraw(i8 addrspace(1)* %w, i64 8)
  %ksq = mul i64 %k, %k
  %e = add i64 %ksq, 3
  %ok = icmp eq i64 %x, %e
  br i1 %ok, label %walk.next, label %bad.value
walk.next:
  %acc1 = add i64 %acc, %x
  %k1 = sub i64 %k, 1
  %wn = call i8 addrspace(1)* @ld(i8 addrspace(1)* %w, i64 0)
  %end = icmp eq i8 addrspace(1)* %wn, null
  br i1 %end, label %walk.done, label %walk
walk.done:
  %lenok = icmp eq i64 %k, 0
  br i1 %lenok, label %table, label %bad.len

table:
  %q = phi i64 [ 0, %walk.done ], [ %q1, %table.next ]
  %acc2 = phi i64 [ %acc1, %walk.done ], [ %acc3, %table.next ]
  call void @gc_safepoint()
  %tb = load i8 addrspace(1)*, i8 addrspace(1)** @table_root, align 8
  %ent = call i8 addrspace(1)* @ld(i8 addrspace(1)* %tb, i64 %q)
  %ev = call i64 @ldraw(i8 addrspace(1)* %ent, i64 8)
  %q8 = shl i64 %q, 3
  %q64 = mul i64 %q8, %q8
  %qe = add i64 %q64, 3
  %qok = icmp eq i64 %ev, %qe
  br i1 %qok, label %table.next, label %bad.table
table.next:
  %acc3 = add i64 %acc2, %q8
  %q1 = add i64 %q, 1
  %tdone = icmp eq i64 %q1, 125
  br i1 %tdone, label %good, label %table
good:
  ret i64 %acc3
bad.value:
  ret i64 -1
bad.len:
  ret i64 -2
bad.table:
  ret i64 -3
}
