; rootwalk native test program: sp-derived-pointers
; Exercises: derived (interior) pointers live across safepoints, as real (base, derived) pairs in
;   the statepoint records, because rematerialization is off:
;   1. %p = GEP(buf, 8*i) with a variable offset, live across gc_safepoint and a garbage
;      gc_alloc, then stored through (256 words of a 2 KiB raw buffer);
;   2. %slot = GEP(array slots, k), a pointer to a pointer slot, live across the gc_alloc of the
;      object then stored through it (64 slots);
;   3. a cursor walking the buffer by `GEP cur, 1` in a loop (a phi of derived pointers whose
;      base is the buffer), live across a poll in every iteration; the word is read before the
;      poll and re-read after it through the relocated cursor;
;   4. a middle pointer (GEP buf, 1024 bytes) made in a gc function from the buffer and an offset
;      it is passed, live across polls, then read through, and through a GEP of it with a
;      negative variable offset. (Passing the middle pointer itself would not do: in the callee
;      an argument is a base, and the collector takes every base for an object's address; it
;      has no interior-pointer lookup. That version passed only because the caller's buffer
;      moved and the callee kept reading the intact old copy; --poison exposes it.)
; Build: statepoint mode with opt flag -spp-rematerialization-threshold=0 (llc -O2 default).
; Expected result: sum over i < 256 of (i*i + 1) [= 5559680 + 256 = 5559936]
;   + sum over k < 64 of 5k [= 10080] + (128*128 + 1) + (64*64 + 1) [= 20482] = 5590498.
;   Errors: -1 buffer word, -2 slot object, -3 cursor re-read, -4 middle pointer.
source_filename = "sp-derived-pointers"

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

; %mid points %offset = 1024 bytes into the buffer (word 128); %back is a word count to look back.
define internal i64 @through_middle(i8 addrspace(1)* %obj, i64 %offset, i64 %back) gc "statepoint-example" {
entry:
  %midraw = getelementptr i8, i8 addrspace(1)* %obj, i64 %offset
  %mid = bitcast i8 addrspace(1)* %midraw to i64 addrspace(1)*
  %neg = sub i64 0, %back
  %earlier = getelementptr i64, i64 addrspace(1)* %mid, i64 %neg
  call void @gc_safepoint()
  %junk = call i8 addrspace(1)* @gc_alloc(i64 0, i64 64)
  call void @gc_safepoint()
  %a = load i64, i64 addrspace(1)* %mid, align 8
  %b = load i64, i64 addrspace(1)* %earlier, align 8
  %s = add i64 %a, %b
  ret i64 %s
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %buf = call i8 addrspace(1)* @gc_alloc(i64 0, i64 2048)
  br label %fill

fill:
  %i = phi i64 [ 0, %entry ], [ %i1, %fill ]
  %off = shl i64 %i, 3
  %praw = getelementptr i8, i8 addrspace(1)* %buf, i64 %off
  %p = bitcast i8 addrspace(1)* %praw to i64 addrspace(1)*
  call void @gc_safepoint()
  %junk = call i8 addrspace(1)* @gc_alloc(i64 1, i64 24)
  %sq = mul i64 %i, %i
  %v = add i64 %sq, 1
  store i64 %v, i64 addrspace(1)* %p, align 8
  %i1 = add i64 %i, 1
  %fdone = icmp eq i64 %i1, 256
  br i1 %fdone, label %slots, label %fill

slots:
  %arr = call i8 addrspace(1)* @gc_alloc(i64 64, i64 0)
  %arrs = bitcast i8 addrspace(1)* %arr to i8 addrspace(1)* addrspace(1)*
  br label %slots.loop

slots.loop:
  %k = phi i64 [ 0, %slots ], [ %k1, %slots.loop ]
  %slot = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %arrs, i64 %k
  %obj = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  %k5 = mul i64 %k, 5
  call void @straw(i8 addrspace(1)* %obj, i64 0, i64 %k5)
  store i8 addrspace(1)* %obj, i8 addrspace(1)* addrspace(1)* %slot, align 8
  %k1 = add i64 %k, 1
  %sdone = icmp eq i64 %k1, 64
  br i1 %sdone, label %walk.start, label %slots.loop

walk.start:
  call void @gc_collect()
  %start = bitcast i8 addrspace(1)* %buf to i64 addrspace(1)*
  br label %walk

walk:
  %n = phi i64 [ 0, %walk.start ], [ %n1, %walk.next ]
  %acc = phi i64 [ 0, %walk.start ], [ %acc1, %walk.next ]
  %cur = phi i64 addrspace(1)* [ %start, %walk.start ], [ %next, %walk.next ]
  %w = load i64, i64 addrspace(1)* %cur, align 8
  call void @gc_safepoint()
  %w2 = load i64, i64 addrspace(1)* %cur, align 8
  %same = icmp eq i64 %w, %w2
  br i1 %same, label %walk.check, label %bad.cursor

walk.check:
  %nsq = mul i64 %n, %n
  %expect = add i64 %nsq, 1
  %ok = icmp eq i64 %w, %expect
  br i1 %ok, label %walk.next, label %bad.word

walk.next:
  %acc1 = add i64 %acc, %w
  %next = getelementptr i64, i64 addrspace(1)* %cur, i64 1
  %n1 = add i64 %n, 1
  %wdone = icmp eq i64 %n1, 256
  br i1 %wdone, label %slots.check, label %walk

slots.check:
  %q = phi i64 [ 0, %walk.next ], [ %q1, %slots.check.next ]
  %acc2 = phi i64 [ %acc1, %walk.next ], [ %acc3, %slots.check.next ]
  %o = call i8 addrspace(1)* @ld(i8 addrspace(1)* %arr, i64 %q)
  %ov = call i64 @ldraw(i8 addrspace(1)* %o, i64 0)
  %q5 = mul i64 %q, 5
  %ook = icmp eq i64 %ov, %q5
  br i1 %ook, label %slots.check.next, label %bad.slot

slots.check.next:
  %acc3 = add i64 %acc2, %ov
  %q1 = add i64 %q, 1
  %qdone = icmp eq i64 %q1, 64
  br i1 %qdone, label %middle, label %slots.check

middle:
  %m = call i64 @through_middle(i8 addrspace(1)* %buf, i64 1024, i64 64)
  %mok = icmp eq i64 %m, 20482
  br i1 %mok, label %good, label %bad.middle

good:
  %r = add i64 %acc3, %m
  ret i64 %r
bad.word:
  ret i64 -1
bad.slot:
  ret i64 -2
bad.cursor:
  ret i64 -3
bad.middle:
  ret i64 -4
}
