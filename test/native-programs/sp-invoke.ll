; rootwalk native test program: sp-invoke
; Exercises: calls as `invoke` with a landing pad (never taken), found by the program fuzzer
;   (issue 13, seed 1): under llc's default static relocation model a function with a landing
;   pad gets absolute (R_X86_64_32) personality and LSDA pointers in .eh_frame, and the program
;   could not be linked into the shared object `rootwalk run` loads ("relocation R_X86_64_32
;   against `.text' can not be used when making a shared object"); rootwalk now compiles PIC.
;   @build(n, mul) builds a list of n nodes (value mul*i) by prepending; each node's gc_alloc
;   and a gc_safepoint per node are invokes, with the list head live across both. rw_main
;   invokes @build(50, 10), then @build(50, 7) with the first list live across it, then invokes
;   gc_collect with both live, and sums both lists. The landing pads are `landingpad token`
;   (RS4GC relocates through the pad's value) and end `unreachable`: nothing is thrown.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2 -relocation-model=pic).
; Expected result: A + 2*B where A = sum over i < 50 of 10i = 12250 and B = sum of 7i = 8575:
;   12250 + 17150 = 29400.
source_filename = "sp-invoke"

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

; The personality of every function with a landing pad; never called (nothing is thrown).
define internal i32 @rw_personality(...) {
  ret i32 0
}

; Sums the values of a list; a leaf (no gc strategy, no safepoint: only leaf calls).
define internal i64 @sum(i8 addrspace(1)* %h) #1 {
entry:
  br label %walk
walk:
  %p = phi i8 addrspace(1)* [ %h, %entry ], [ %nx, %walk ]
  %s = phi i64 [ 0, %entry ], [ %s1, %walk ]
  %v = call i64 @ldraw(i8 addrspace(1)* %p, i64 8)
  %s1 = add i64 %s, %v
  %nx = call i8 addrspace(1)* @ld(i8 addrspace(1)* %p, i64 0)
  %end = icmp eq i8 addrspace(1)* %nx, null
  br i1 %end, label %done, label %walk
done:
  ret i64 %s1
}

define internal i8 addrspace(1)* @build(i64 %n, i64 %mul) gc "statepoint-example" personality i8* bitcast (i32 (...)* @rw_personality to i8*) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %linked ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %node, %linked ]
  %node = invoke i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
          to label %allocated unwind label %pad
allocated:
  call void @st(i8 addrspace(1)* %node, i64 0, i8 addrspace(1)* %head)
  %v = mul i64 %i, %mul
  call void @straw(i8 addrspace(1)* %node, i64 8, i64 %v)
  invoke void @gc_safepoint()
          to label %linked unwind label %pad
linked:
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i8 addrspace(1)* %node
pad:
  %lp = landingpad token
          cleanup
  unreachable
}

define i64 @rw_main() gc "statepoint-example" personality i8* bitcast (i32 (...)* @rw_personality to i8*) {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %a = invoke i8 addrspace(1)* @build(i64 50, i64 10)
          to label %a.ok unwind label %pad
a.ok:
  %b = invoke i8 addrspace(1)* @build(i64 50, i64 7)
          to label %b.ok unwind label %pad
b.ok:
  invoke void @gc_collect()
          to label %c.ok unwind label %pad
c.ok:
  %sa = call i64 @sum(i8 addrspace(1)* %a)
  %sb = call i64 @sum(i8 addrspace(1)* %b)
  %sb2 = mul i64 %sb, 2
  %r = add i64 %sa, %sb2
  ret i64 %r
pad:
  %lp = landingpad token
          cleanup
  unreachable
}
