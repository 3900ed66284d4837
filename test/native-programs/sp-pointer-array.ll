; rootwalk native test program: sp-pointer-array
; Exercises: an array object of 512 pointer slots (+ 8 raw bytes holding its length) whose slots
;   point to 512 boxes of odd sizes: 1 pointer slot (a back pointer to the array: a cycle) and
;   17..23 raw bytes (the box's index i as an i64, then 9 + i%7 pattern bytes (31i + j) & 255);
;   a garbage object per box and a poll every 8 boxes; a permutation by 512 swaps
;   (k <-> (7k + 3) & 511, poll every 32); a second array (256 slots) aliasing every other slot;
;   gc_collect; then every box's back pointer, index and pattern bytes, the array length and the
;   aliases (pointer equality) are checked.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: sum over positions p of (p + 1) * index(box at p) = 37675192 (the reference
;   runtime's value; the permutation makes it position dependent).
;   Errors: -1 back pointer, -2 pattern byte, -3 length, -4 alias mismatch, -5 index out of range.
source_filename = "sp-pointer-array"

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

; Writes the index and pattern bytes of a box with index %i (raw area at +8).
define internal void @fill_box(i8 addrspace(1)* %b, i64 %i) #1 {
entry:
  call void @straw(i8 addrspace(1)* %b, i64 8, i64 %i)
  %r = urem i64 %i, 7
  %len = add i64 %r, 9
  %base = mul i64 %i, 31
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %loop ]
  %v = add i64 %base, %j
  %byte = trunc i64 %v to i8
  %off = add i64 %j, 16
  %p = getelementptr i8, i8 addrspace(1)* %b, i64 %off
  store i8 %byte, i8 addrspace(1)* %p, align 1
  %j1 = add i64 %j, 1
  %done = icmp eq i64 %j1, %len
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; Returns the box's index if its pattern bytes are right, else -2.
define internal i64 @check_box(i8 addrspace(1)* %b) #1 {
entry:
  %i = call i64 @ldraw(i8 addrspace(1)* %b, i64 8)
  %r = urem i64 %i, 7
  %len = add i64 %r, 9
  %base = mul i64 %i, 31
  br label %loop
loop:
  %j = phi i64 [ 0, %entry ], [ %j1, %next ]
  %v = add i64 %base, %j
  %byte = trunc i64 %v to i8
  %off = add i64 %j, 16
  %p = getelementptr i8, i8 addrspace(1)* %b, i64 %off
  %got = load i8, i8 addrspace(1)* %p, align 1
  %ok = icmp eq i8 %got, %byte
  br i1 %ok, label %next, label %bad
next:
  %j1 = add i64 %j, 1
  %done = icmp eq i64 %j1, %len
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %i
bad:
  ret i64 -2
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %arr = call i8 addrspace(1)* @gc_alloc(i64 512, i64 8)
  call void @straw(i8 addrspace(1)* %arr, i64 4096, i64 512)
  br label %fill

fill:
  %i = phi i64 [ 0, %entry ], [ %i1, %fill.next ]
  %r7 = urem i64 %i, 7
  %raw = add i64 %r7, 17
  %box = call i8 addrspace(1)* @gc_alloc(i64 1, i64 %raw)
  call void @fill_box(i8 addrspace(1)* %box, i64 %i)
  call void @st(i8 addrspace(1)* %box, i64 0, i8 addrspace(1)* %arr)
  call void @st(i8 addrspace(1)* %arr, i64 %i, i8 addrspace(1)* %box)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 3, i64 5)
  call void @st(i8 addrspace(1)* %junk, i64 0, i8 addrspace(1)* %box)
  %m = and i64 %i, 7
  %c = icmp eq i64 %m, 0
  br i1 %c, label %fill.poll, label %fill.next
fill.poll:
  call void @gc_safepoint()
  br label %fill.next
fill.next:
  %i1 = add i64 %i, 1
  %fdone = icmp eq i64 %i1, 512
  br i1 %fdone, label %perm, label %fill

perm:
  %k = phi i64 [ 0, %fill.next ], [ %k1, %perm.next ]
  %k7 = mul i64 %k, 7
  %k73 = add i64 %k7, 3
  %j = and i64 %k73, 511
  %a = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %k)
  %b = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %j)
  call void @st(i8 addrspace(1)* %arr, i64 %k, i8 addrspace(1)* %b)
  call void @st(i8 addrspace(1)* %arr, i64 %j, i8 addrspace(1)* %a)
  %km = and i64 %k, 31
  %kc = icmp eq i64 %km, 0
  br i1 %kc, label %perm.poll, label %perm.next
perm.poll:
  call void @gc_safepoint()
  br label %perm.next
perm.next:
  %k1 = add i64 %k, 1
  %pdone = icmp eq i64 %k1, 512
  br i1 %pdone, label %alias, label %perm

alias:
  %arr2 = call i8 addrspace(1)* @gc_alloc(i64 256, i64 0)
  br label %alias.loop
alias.loop:
  %q = phi i64 [ 0, %alias ], [ %q1, %alias.loop ]
  %q2 = shl i64 %q, 1
  %x = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %q2)
  call void @st(i8 addrspace(1)* %arr2, i64 %q, i8 addrspace(1)* %x)
  %q1 = add i64 %q, 1
  %adone = icmp eq i64 %q1, 256
  br i1 %adone, label %collect, label %alias.loop

collect:
  call void @gc_collect()
  %len = call i64 @ldraw(i8 addrspace(1)* %arr, i64 4096)
  %lenok = icmp eq i64 %len, 512
  br i1 %lenok, label %check, label %bad.len

check:
  %p = phi i64 [ 0, %collect ], [ %p1, %check.cont ]
  %sum = phi i64 [ 0, %collect ], [ %sum1, %check.cont ]
  %bx = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %p)
  %back = call i8 addrspace(1)* @ld(i8 addrspace(1)* %bx, i64 0)
  %backok = icmp eq i8 addrspace(1)* %back, %arr
  br i1 %backok, label %check.box, label %bad.back
check.box:
  %idx = call i64 @check_box(i8 addrspace(1)* %bx)
  %idxbad = icmp slt i64 %idx, 0
  br i1 %idxbad, label %bad.pattern, label %check.range
check.range:
  %inrange = icmp ult i64 %idx, 512
  br i1 %inrange, label %check.next, label %bad.range
check.next:
  %p1 = add i64 %p, 1
  %w = mul i64 %p1, %idx
  %sum1 = add i64 %sum, %w
  %pm = and i64 %p, 63
  %pc = icmp eq i64 %pm, 0
  br i1 %pc, label %check.poll, label %check.cont
check.poll:
  call void @gc_safepoint()
  br label %check.cont
check.cont:
  %cdone = icmp eq i64 %p1, 512
  br i1 %cdone, label %check.alias, label %check

check.alias:
  %z = phi i64 [ 0, %check.cont ], [ %z1, %check.alias.next ]
  %z2 = shl i64 %z, 1
  %y1 = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr2, i64 %z)
  %y2 = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %z2)
  %same = icmp eq i8 addrspace(1)* %y1, %y2
  br i1 %same, label %check.alias.next, label %bad.alias
check.alias.next:
  %z1 = add i64 %z, 1
  %zdone = icmp eq i64 %z1, 256
  br i1 %zdone, label %good, label %check.alias

good:
  ret i64 %sum1
bad.back:
  ret i64 -1
bad.pattern:
  ret i64 -2
bad.len:
  ret i64 -3
bad.alias:
  ret i64 -4
bad.range:
  ret i64 -5
}
