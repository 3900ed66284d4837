; rootwalk native test program: sp-linked-list
; Exercises: a singly linked list of 2,000 nodes (1 pointer slot `next` + 16 raw bytes: the
;   index k and the tag 3k+7), built by prepending, with a garbage object allocated per node and
;   gc_safepoint every 16 nodes; gc_collect; in-place reversal with a poll every 64 nodes (three
;   list pointers live across each poll); a second gc_collect; then a walk that checks the order,
;   every node's raw bytes and the length.
; Build: statepoint mode (opt -passes=rewrite-statepoints-for-gc, llc -O2), no extra flags.
; Expected result: sum over k < 2000 of k * (3k + 7) = 8007994000.
;   Errors: -1 wrong index, -2 wrong tag, -3 wrong length.
source_filename = "sp-linked-list"

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

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  br label %build

build:
  %i = phi i64 [ 0, %entry ], [ %i1, %build.next ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %n, %build.next ]
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 16)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %head)
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %i)
  %t3 = mul i64 %i, 3
  %tag = add i64 %t3, 7
  call void @straw(i8 addrspace(1)* %n, i64 16, i64 %tag)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  call void @straw(i8 addrspace(1)* %junk, i64 16, i64 -1)
  %m = and i64 %i, 15
  %c = icmp eq i64 %m, 0
  br i1 %c, label %poll, label %build.next

poll:
  call void @gc_safepoint()
  br label %build.next

build.next:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 2000
  br i1 %done, label %built, label %build

built:
  call void @gc_collect()
  br label %rev

rev:
  %k = phi i64 [ 0, %built ], [ %k1, %rev.next ]
  %prev = phi i8 addrspace(1)* [ null, %built ], [ %cur, %rev.next ]
  %cur = phi i8 addrspace(1)* [ %n, %built ], [ %next, %rev.next ]
  %next = call i8 addrspace(1)* @ld(i8 addrspace(1)* %cur, i64 0)
  call void @st(i8 addrspace(1)* %cur, i64 0, i8 addrspace(1)* %prev)
  %km = and i64 %k, 63
  %kc = icmp eq i64 %km, 0
  br i1 %kc, label %rev.poll, label %rev.next

rev.poll:
  call void @gc_safepoint()
  br label %rev.next

rev.next:
  %k1 = add i64 %k, 1
  %end = icmp eq i8 addrspace(1)* %next, null
  br i1 %end, label %reversed, label %rev

reversed:
  call void @gc_collect()
  br label %check

check:
  %j = phi i64 [ 0, %reversed ], [ %j1, %check.next ]
  %sum = phi i64 [ 0, %reversed ], [ %sum1, %check.next ]
  %node = phi i8 addrspace(1)* [ %cur, %reversed ], [ %nn, %check.next ]
  %v = call i64 @ldraw(i8 addrspace(1)* %node, i64 8)
  %okv = icmp eq i64 %v, %j
  br i1 %okv, label %check.tag, label %bad.index

check.tag:
  %tg = call i64 @ldraw(i8 addrspace(1)* %node, i64 16)
  %e3 = mul i64 %j, 3
  %e = add i64 %e3, 7
  %okt = icmp eq i64 %tg, %e
  br i1 %okt, label %check.next, label %bad.tag

check.next:
  %p = mul i64 %v, %tg
  %sum1 = add i64 %sum, %p
  %j1 = add i64 %j, 1
  call void @gc_safepoint()
  %nn = call i8 addrspace(1)* @ld(i8 addrspace(1)* %node, i64 0)
  %last = icmp eq i8 addrspace(1)* %nn, null
  br i1 %last, label %finish, label %check

finish:
  %okn = icmp eq i64 %j1, 2000
  br i1 %okn, label %good, label %bad.len

good:
  ret i64 %sum1
bad.index:
  ret i64 -1
bad.tag:
  ret i64 -2
bad.len:
  ret i64 -3
}
