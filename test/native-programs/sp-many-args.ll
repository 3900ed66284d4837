; rootwalk native test program: sp-many-args
; Exercises: calls with more than 6 integer arguments at safepoints. rw_main calls @combine12
;   (12 arguments: 6 in registers, 6 on the stack, three of them gc pointers) 300 times; it polls,
;   allocates and calls @leaf9 (9 arguments: the 3 gc pointers on the stack), which polls and
;   allocates again before reading its stack-passed pointers. At -O2, llc's call frame
;   optimization pushes the stack arguments (`push` right before `call`), so at each of these
;   safepoints the caller's frame has outgoing arguments pushed below its fixed frame, and the
;   callee's incoming gc pointer arguments live in the caller's pushed area until spilled.
;   The caller keeps the three boxes live across the call and re-checks them afterwards.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: sum over i < 300 of (6i + i + 36) = 7 * 44850 + 300 * 36 = 324750.
;   Errors: -1 leaf9 saw a wrong box, -2 a box changed across the call, -3 combine12 argument.
source_filename = "sp-many-args"

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

define internal i8 addrspace(1)* @box(i64 %v) gc "statepoint-example" {
entry:
  %b = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  call void @straw(i8 addrspace(1)* %b, i64 0, i64 %v)
  ret i8 addrspace(1)* %b
}

define internal i64 @leaf9(i64 %a1, i64 %a2, i64 %a3, i64 %a4, i64 %a5, i64 %a6, i8 addrspace(1)* %o1, i8 addrspace(1)* %o2, i8 addrspace(1)* %o3) noinline gc "statepoint-example" {
entry:
  call void @gc_safepoint()
  %junk = call i8 addrspace(1)* @gc_alloc(i64 2, i64 16)
  call void @gc_safepoint()
  %v1 = call i64 @ldraw(i8 addrspace(1)* %o1, i64 0)
  %v2 = call i64 @ldraw(i8 addrspace(1)* %o2, i64 0)
  %v3 = call i64 @ldraw(i8 addrspace(1)* %o3, i64 0)
  %e2 = shl i64 %a1, 1
  %e3 = mul i64 %a1, 3
  %ok1 = icmp eq i64 %v1, %a1
  %ok2 = icmp eq i64 %v2, %e2
  %ok3 = icmp eq i64 %v3, %e3
  %ok12 = and i1 %ok1, %ok2
  %ok = and i1 %ok12, %ok3
  br i1 %ok, label %good, label %bad
good:
  %s1 = add i64 %v1, %v2
  %s2 = add i64 %s1, %v3
  %t1 = add i64 %a2, %a3
  %t2 = add i64 %t1, %a4
  %t3 = add i64 %t2, %a5
  %t4 = add i64 %t3, %a6
  %chk = icmp eq i64 %t4, 15
  %r = select i1 %chk, i64 %s2, i64 -1000000
  ret i64 %r
bad:
  ret i64 -1000000
}

define internal i64 @combine12(i64 %a1, i64 %a2, i64 %a3, i64 %a4, i64 %a5, i64 %a6, i8 addrspace(1)* %o1, i64 %a8, i8 addrspace(1)* %o2, i64 %a10, i8 addrspace(1)* %o3, i64 %a12) noinline gc "statepoint-example" {
entry:
  call void @gc_safepoint()
  %junk = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %junk, i64 0, i8 addrspace(1)* %o2)
  %v = call i64 @leaf9(i64 %a1, i64 %a2, i64 %a3, i64 %a4, i64 %a5, i64 %a6, i8 addrspace(1)* %o1, i8 addrspace(1)* %o2, i8 addrspace(1)* %o3)
  %t1 = add i64 %a1, %a2
  %t2 = add i64 %t1, %a3
  %t3 = add i64 %t2, %a4
  %t4 = add i64 %t3, %a5
  %t5 = add i64 %t4, %a6
  %t6 = add i64 %t5, %a8
  %t7 = add i64 %t6, %a10
  %t8 = add i64 %t7, %a12
  %r = add i64 %t8, %v
  ret i64 %r
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  br label %loop

loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  %i2 = shl i64 %i, 1
  %i3 = mul i64 %i, 3
  %o1 = call i8 addrspace(1)* @box(i64 %i)
  %o2 = call i8 addrspace(1)* @box(i64 %i2)
  %o3 = call i8 addrspace(1)* @box(i64 %i3)
  %r = call i64 @combine12(i64 %i, i64 1, i64 2, i64 3, i64 4, i64 5, i8 addrspace(1)* %o1, i64 6, i8 addrspace(1)* %o2, i64 7, i8 addrspace(1)* %o3, i64 8)
  %v1 = call i64 @ldraw(i8 addrspace(1)* %o1, i64 0)
  %v2 = call i64 @ldraw(i8 addrspace(1)* %o2, i64 0)
  %v3 = call i64 @ldraw(i8 addrspace(1)* %o3, i64 0)
  %ok1 = icmp eq i64 %v1, %i
  %ok2 = icmp eq i64 %v2, %i2
  %ok3 = icmp eq i64 %v3, %i3
  %ok12 = and i1 %ok1, %ok2
  %ok = and i1 %ok12, %ok3
  br i1 %ok, label %check.r, label %bad.box
check.r:
  %rbad = icmp slt i64 %r, 0
  br i1 %rbad, label %bad.leaf, label %next
next:
  %acc1 = add i64 %acc, %r
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 300
  br i1 %done, label %good, label %loop

good:
  ret i64 %acc1
bad.leaf:
  ret i64 -1
bad.box:
  ret i64 -2
}
