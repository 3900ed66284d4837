; rootwalk native test program: sp-csr
; Exercises: gc pointers kept in callee-saved registers across statepoints. rw_main keeps four
;   list heads live in a loop (300 iterations: four nodes allocated per iteration, values i, 2i,
;   3i, 4i); each iteration calls @inner, which keeps its two gc arguments live across a poll and
;   an allocation (in its own callee-saved registers, so rw_main's values are in @inner's save
;   slots during @inner's safepoints, found through its CFI). Records therefore hold
;   `Register R#3/12/13/14/15` locations (llvm-readobj --stackmap), with the rest spilled.
;   After the loop: gc_collect and each list is walked and checked.
; Build: statepoint mode with llc flags -max-registers-for-gc-values=4 -fixup-allow-gcptr-in-csr.
; Expected result: sum over i < 300 of (i + 2i) [from @inner] + sum over lists m = 1..4 of
;   sum over i < 300 of m*i [walk] = 3*44850 + 10*44850 = 583050.
;   Errors: -1 @inner saw a wrong value, -2 a list value, -3 a list length.
source_filename = "sp-csr"

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

define internal i8 addrspace(1)* @node(i8 addrspace(1)* %next, i64 %v) gc "statepoint-example" {
entry:
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %next)
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %v)
  ret i8 addrspace(1)* %n
}

define internal i64 @inner(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %i) noinline gc "statepoint-example" {
entry:
  call void @gc_safepoint()
  %junk = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %junk, i64 0, i8 addrspace(1)* %a)
  call void @gc_safepoint()
  %va = call i64 @ldraw(i8 addrspace(1)* %a, i64 8)
  %vb = call i64 @ldraw(i8 addrspace(1)* %b, i64 8)
  %eb = shl i64 %i, 1
  %oka = icmp eq i64 %va, %i
  %okb = icmp eq i64 %vb, %eb
  %ok = and i1 %oka, %okb
  %s = add i64 %va, %vb
  %r = select i1 %ok, i64 %s, i64 -1000000000
  ret i64 %r
}

; Returns sum of the values of a list with values m*(len-1), ..., m*0, or -2 / -3.
define internal i64 @walk(i8 addrspace(1)* %head, i64 %m) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %n = phi i8 addrspace(1)* [ %head, %entry ], [ %nx, %cont ]
  %k = phi i64 [ 299, %entry ], [ %k1, %cont ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %cont ]
  %v = call i64 @ldraw(i8 addrspace(1)* %n, i64 8)
  %e = mul i64 %k, %m
  %ok = icmp eq i64 %v, %e
  br i1 %ok, label %cont, label %bad.value
cont:
  call void @gc_safepoint()
  %acc1 = add i64 %acc, %v
  %k1 = sub i64 %k, 1
  %nx = call i8 addrspace(1)* @ld(i8 addrspace(1)* %n, i64 0)
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %exit, label %loop
exit:
  %lenok = icmp eq i64 %k, 0
  br i1 %lenok, label %good, label %bad.len
good:
  ret i64 %acc1
bad.value:
  ret i64 -2
bad.len:
  ret i64 -3
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  %h1 = phi i8 addrspace(1)* [ null, %entry ], [ %n1, %next ]
  %h2 = phi i8 addrspace(1)* [ null, %entry ], [ %n2, %next ]
  %h3 = phi i8 addrspace(1)* [ null, %entry ], [ %n3, %next ]
  %h4 = phi i8 addrspace(1)* [ null, %entry ], [ %n4, %next ]
  %v2 = shl i64 %i, 1
  %v3 = mul i64 %i, 3
  %v4 = shl i64 %i, 2
  %n1 = call i8 addrspace(1)* @node(i8 addrspace(1)* %h1, i64 %i)
  %n2 = call i8 addrspace(1)* @node(i8 addrspace(1)* %h2, i64 %v2)
  %n3 = call i8 addrspace(1)* @node(i8 addrspace(1)* %h3, i64 %v3)
  %n4 = call i8 addrspace(1)* @node(i8 addrspace(1)* %h4, i64 %v4)
  %r = call i64 @inner(i8 addrspace(1)* %n1, i8 addrspace(1)* %n2, i64 %i)
  %rbad = icmp slt i64 %r, 0
  br i1 %rbad, label %bad.inner, label %next
next:
  %acc1 = add i64 %acc, %r
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 300
  br i1 %done, label %check, label %loop

check:
  call void @gc_collect()
  %w1 = call i64 @walk(i8 addrspace(1)* %n1, i64 1)
  %w2 = call i64 @walk(i8 addrspace(1)* %n2, i64 2)
  %w3 = call i64 @walk(i8 addrspace(1)* %n3, i64 3)
  %w4 = call i64 @walk(i8 addrspace(1)* %n4, i64 4)
  %m12 = call i64 @llvm.smin.i64(i64 %w1, i64 %w2)
  %m34 = call i64 @llvm.smin.i64(i64 %w3, i64 %w4)
  %m = call i64 @llvm.smin.i64(i64 %m12, i64 %m34)
  %bad = icmp slt i64 %m, 0
  br i1 %bad, label %fail, label %good
good:
  %s1 = add i64 %acc1, %w1
  %s2 = add i64 %s1, %w2
  %s3 = add i64 %s2, %w3
  %s4 = add i64 %s3, %w4
  ret i64 %s4
fail:
  ret i64 %m
bad.inner:
  ret i64 -1
}

declare i64 @llvm.smin.i64(i64, i64)
