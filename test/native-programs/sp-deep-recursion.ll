; rootwalk native test program: sp-deep-recursion
; Exercises: a stack of more than 100,000 managed frames. @rec(n, acc) recurses to n = 0 with a
;   gc pointer (the list head `acc`) live across the recursive call in EVERY frame, so each
;   collection walks 100,001 frames of @rec and finds a root in each. Every 10,000 levels a node
;   (value n) is prepended to the list and the frame polls (10 polls on the way down); the
;   innermost frame collects and checks the whole list; every frame re-checks its head's value
;   after the call returns. Frames are small (a spill slot and a saved register), and the
;   runtime runs rw_main on a thread with a huge stack (the reference runtime: 1 GiB).
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: the number of @rec frames, counted on the way back up: 100001 (rec(100000)
;   down to rec(0)). Errors: -1 list content at the bottom, -2 a head changed across the call.
source_filename = "sp-deep-recursion"

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

; Checks the list at the bottom: values 10000, 20000, ..., 100000 from the head (10 nodes) plus
; the anchor (value -7). Returns 0 or -1.
define internal i64 @check_list(i8 addrspace(1)* %head) #1 {
entry:
  br label %loop
loop:
  %n = phi i8 addrspace(1)* [ %head, %entry ], [ %nx, %next ]
  %e = phi i64 [ 10000, %entry ], [ %e1, %next ]
  %v = call i64 @ldraw(i8 addrspace(1)* %n, i64 8)
  %isanchor = icmp eq i64 %e, 110000
  br i1 %isanchor, label %anchor, label %mid
mid:
  %ok = icmp eq i64 %v, %e
  br i1 %ok, label %next, label %bad
next:
  %e1 = add i64 %e, 10000
  %nx = call i8 addrspace(1)* @ld(i8 addrspace(1)* %n, i64 0)
  br label %loop
anchor:
  %aok = icmp eq i64 %v, -7
  br i1 %aok, label %good, label %bad
good:
  ret i64 0
bad:
  ret i64 -1
}

define internal i64 @rec(i64 %n, i8 addrspace(1)* %acc) noinline gc "statepoint-example" {
entry:
  %bottom = icmp eq i64 %n, 0
  br i1 %bottom, label %base, label %step
base:
  call void @gc_collect()
  %c = call i64 @check_list(i8 addrspace(1)* %acc)
  %cbad = icmp slt i64 %c, 0
  %one = select i1 %cbad, i64 -1, i64 1
  ret i64 %one
step:
  %m = urem i64 %n, 10000
  %mk = icmp eq i64 %m, 0
  br i1 %mk, label %make, label %go
make:
  %node = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %node, i64 0, i8 addrspace(1)* %acc)
  call void @straw(i8 addrspace(1)* %node, i64 8, i64 %n)
  call void @gc_safepoint()
  br label %go
go:
  %head = phi i8 addrspace(1)* [ %acc, %step ], [ %node, %make ]
  %n1 = sub i64 %n, 1
  %r = call i64 @rec(i64 %n1, i8 addrspace(1)* %head)
  %rbad = icmp slt i64 %r, 0
  br i1 %rbad, label %fail, label %verify
verify:
  %hv = call i64 @ldraw(i8 addrspace(1)* %head, i64 8)
  %expect = select i1 %mk, i64 %n, i64 %hv
  %same = icmp eq i64 %hv, %expect
  br i1 %same, label %up, label %changed
up:
  %r1 = add i64 %r, 1
  ret i64 %r1
changed:
  ret i64 -2
fail:
  ret i64 %r
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %anchor = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @straw(i8 addrspace(1)* %anchor, i64 8, i64 -7)
  %r = call i64 @rec(i64 100000, i8 addrspace(1)* %anchor)
  ret i64 %r
}
