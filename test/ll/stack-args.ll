; rootwalk corpus: stack-args
; Covers: statepoint call sites whose outgoing stack arguments are PUSHED (X86CallFrameOptimization,
;   on by default at -O2): 8 and 10 integer arguments, so 2 and 4 go on the stack:
;     pushq $10; pushq %rax; callq sink8          (16 bytes pushed)
;     pushq $11; pushq %rbx; pushq %r14; pushq (%rax); callq sink10   (32 bytes pushed)
;   The records' Indirect offsets are relative to RSP at the call, i.e. they include the pushed
;   bytes ([R#7 + 16], [R#7 + 32] for the same spill slot), but StackSize (24) does not: the
;   StackSize formula puts the return address slot inside the pushed arguments here.
; Build: opt -passes=rewrite-statepoints-for-gc -S stack-args.ll | llc -filetype=obj
;   (deliberately WITHOUT -no-x86-call-frame-opt)

declare void @sink8(i64, i64, i64, i64, i64, i64, i64, i64)
declare void @sink10(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)

define i64 @pushes_stack_args(i64 addrspace(1)* %obj, i64 %a, i64 %b) gc "statepoint-example" {
entry:
  %v = load i64, i64 addrspace(1)* %obj
  call void @sink8(i64 %a, i64 %b, i64 3, i64 4, i64 5, i64 6, i64 %v, i64 10)
  %w = load i64, i64 addrspace(1)* %obj
  call void @sink10(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 %w, i64 %a, i64 %b, i64 11)
  %x = load i64, i64 addrspace(1)* %obj
  ret i64 %x
}
