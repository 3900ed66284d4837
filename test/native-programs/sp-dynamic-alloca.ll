; rootwalk native test program: sp-dynamic-alloca
; Exercises: a gc function with a variable-sized alloca (`alloca i64, i64 %n`, %n an argument):
;   its frame is dynamic (stack size 18446744073709551615 in llvm-readobj --stackmap, a frame
;   pointer, gc pointers spilled RBP-relative). @dyn recurses 20 deep (so dynamic frames are
;   outer frames of every collection), each level filling its own buffer (n = 4 + 3*depth words,
;   word j = j*depth + 7), allocating a node linked to its caller's, polling, recursing (the
;   innermost collects), then re-checking its buffer and its node and the caller's node.
;   rw_main runs this 10 times.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: 10 * sum over d = 0..20 of (sum over j < n_d of (j*d + 7) + d), n_d = 4 + 3d
;   = 10 * 235053 = 2350530. Errors: -1 buffer word, -2 own node, -3 caller's node.
source_filename = "sp-dynamic-alloca"

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

define internal i64 @dyn(i64 %depth, i64 %n, i8 addrspace(1)* %parent) noinline gc "statepoint-example" {
entry:
  %buf = alloca i64, i64 %n, align 8
  br label %fill
fill:
  %j = phi i64 [ 0, %entry ], [ %j1, %fill ]
  %jd = mul i64 %j, %depth
  %w = add i64 %jd, 7
  %slot = getelementptr i64, i64* %buf, i64 %j
  store i64 %w, i64* %slot, align 8
  %j1 = add i64 %j, 1
  %fdone = icmp eq i64 %j1, %n
  br i1 %fdone, label %alloc, label %fill

alloc:
  %node = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %node, i64 0, i8 addrspace(1)* %parent)
  call void @straw(i8 addrspace(1)* %node, i64 8, i64 %depth)
  call void @gc_safepoint()
  %leaf = icmp eq i64 %depth, 0
  br i1 %leaf, label %bottom, label %recurse
bottom:
  call void @gc_collect()
  br label %after
recurse:
  %d1 = sub i64 %depth, 1
  %n1 = sub i64 %n, 3
  %sub = call i64 @dyn(i64 %d1, i64 %n1, i8 addrspace(1)* %node)
  br label %after

after:
  %r = phi i64 [ 0, %bottom ], [ %sub, %recurse ]
  %rbad = icmp slt i64 %r, 0
  br i1 %rbad, label %propagate, label %check
check:
  %k = phi i64 [ 0, %after ], [ %k1, %check.next ]
  %acc = phi i64 [ 0, %after ], [ %acc1, %check.next ]
  %kd = mul i64 %k, %depth
  %e = add i64 %kd, 7
  %ks = getelementptr i64, i64* %buf, i64 %k
  %got = load i64, i64* %ks, align 8
  %ok = icmp eq i64 %got, %e
  br i1 %ok, label %check.next, label %bad.buf
check.next:
  %acc1 = add i64 %acc, %got
  %k1 = add i64 %k, 1
  %cdone = icmp eq i64 %k1, %n
  br i1 %cdone, label %nodes, label %check
nodes:
  %nv = call i64 @ldraw(i8 addrspace(1)* %node, i64 8)
  %nok = icmp eq i64 %nv, %depth
  br i1 %nok, label %parentcheck, label %bad.node
parentcheck:
  %p = call i8 addrspace(1)* @ld(i8 addrspace(1)* %node, i64 0)
  %same = icmp eq i8 addrspace(1)* %p, %parent
  br i1 %same, label %good, label %bad.parent
good:
  %s1 = add i64 %r, %acc1
  %s2 = add i64 %s1, %depth
  ret i64 %s2
propagate:
  ret i64 %r
bad.buf:
  ret i64 -1
bad.node:
  ret i64 -2
bad.parent:
  ret i64 -3
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %anchor = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  %r = call i64 @dyn(i64 20, i64 64, i8 addrspace(1)* %anchor)
  %bad = icmp slt i64 %r, 0
  br i1 %bad, label %fail, label %next
next:
  %acc1 = add i64 %acc, %r
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 10
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc1
fail:
  ret i64 %r
}
