; rootwalk corpus: control-flow
; Covers: statepoints in non-linear code, for frame-size oracles and walkers.
;   @early_exit: shrink-wrapping: the entry block tests and returns early BEFORE the prologue
;     (`testq; je` then `pushq %rbx; subq $16, %rsp`), so the early `retq` runs with no frame.
;   @loop_and_switch: a loop around a switch lowered to a jump table (`jmpq *(,%rax,8)`), so
;     some blocks are reached only through the table; branch folding merges the tail calls of
;     several cases into one call (fewer records than IR calls: 3 records for 6 calls).
; Build: opt -passes=rewrite-statepoints-for-gc -S control-flow.ll | llc -filetype=obj

declare void @callee(i64)
declare i64 @work(i64)

define i64 @early_exit(i64 addrspace(1)* %obj, i64 %n) gc "statepoint-example" {
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %fast, label %slow
fast:
  ret i64 0
slow:
  %a = call i64 @work(i64 %n)
  %b = call i64 @work(i64 %a)
  %v = load i64, i64 addrspace(1)* %obj
  %s = add i64 %b, %v
  %t = add i64 %s, %n
  ret i64 %t
}

define i64 @loop_and_switch(i64 addrspace(1)* %obj, i64 %n, i64 %k) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %next ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %next ]
  %sel = and i64 %i, 7
  switch i64 %sel, label %dflt [ i64 0, label %c0
                                 i64 1, label %c1
                                 i64 2, label %c2
                                 i64 3, label %c3
                                 i64 4, label %c4 ]
c0:
  call void @callee(i64 10)
  br label %next
c1:
  %w1 = call i64 @work(i64 %i)
  br label %next
c2:
  %w2 = call i64 @work(i64 %k)
  br label %next
c3:
  call void @callee(i64 %acc)
  br label %next
c4:
  %w4 = call i64 @work(i64 44)
  br label %next
dflt:
  %w5 = call i64 @work(i64 %acc)
  br label %next
next:
  %x = phi i64 [ 0, %c0 ], [ %w1, %c1 ], [ %w2, %c2 ], [ 3, %c3 ], [ %w4, %c4 ], [ %w5, %dflt ]
  %v = load i64, i64 addrspace(1)* %obj
  %acc0 = add i64 %acc, %x
  %acc1 = add i64 %acc0, %v
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %acc1
}
