; rootwalk corpus: invoke-statepoint
; Covers: an invoke in a gc function becomes an invoke of gc.statepoint (one record at the
;   return address of the call; the landing pad is reached by the unwinder, not by a return),
;   with deopt values (Constant 2 deopt count, both spilled: Indirect [R#7 + off]). The landing
;   pad block sits after the epilogue and jumps back into it.
; LLVM 14 trap: no gc pointer may be live at the invoke, not even as one of its arguments: RS4GC
;   relocates it in the landing pad too, with the landingpad value as the token, and the verifier
;   rejects the module ("Call parameter type does not match function signature!"). Here the gc
;   pointer is read before the invoke and is dead at it.
; Build: opt -passes=rewrite-statepoints-for-gc -S invoke-statepoint.ll | llc -filetype=obj

declare void @may_throw(i64)
declare i32 @__gxx_personality_v0(...)

define i64 @invoke_statepoint(i64 addrspace(1)* %obj, i64 %n) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %v = load i64, i64 addrspace(1)* %obj
  invoke void @may_throw(i64 %n) [ "deopt"(i64 %n, i64 %v) ]
          to label %normal unwind label %lpad

normal:
  %r = add i64 %v, %n
  ret i64 %r

lpad:
  %lp = landingpad { i8*, i32 } cleanup
  ret i64 -1
}
