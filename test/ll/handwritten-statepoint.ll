; rootwalk corpus: handwritten-statepoint
; Covers: statepoints written directly as gc.statepoint calls (no RS4GC), for the rarer parts of
;   the format:
;   ID 42: flags = 1 (a "gc-transition" bundle; its operands are not in the stack map), two deopt
;          values (i32 -1 -> Constant 4294967295; undef -> ConstantIndex 0xFEFEFEFE = 4278124286),
;          pairs for undef (ConstantIndex), null (Constant 0) and %p (Indirect), and the alloca
;          in gc-live as a trailing `Direct R#7 + 16`.
;   ID 43: 16 patch bytes instead of a call: no call instruction at all, the record offset is
;          the end of the 16 nop bytes.
;   ID 44: a (base, derived) pair without a (base, base) pair (only the derived pointer is
;          relocated).
; Build: llc -filetype=obj handwritten-statepoint.ll   (no opt step)

declare void @callee()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define i8 addrspace(1)* @handwritten(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %slot = alloca i8 addrspace(1)*
  store i8 addrspace(1)* %p, i8 addrspace(1)** %slot
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 42, i32 0, void ()* elementtype(void ()) @callee, i32 0, i32 1, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %p, i8 addrspace(1)* null, i8 addrspace(1)* undef, i8 addrspace(1)** %slot), "gc-transition"(i64 7), "deopt"(i32 -1, i8 addrspace(1)* undef) ]
  %p1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %n1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 1, i32 1)
  %u1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 2, i32 2)
  %tok2 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 43, i32 16, void ()* elementtype(void ()) @callee, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %p1) ]
  %p2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok2, i32 0, i32 0)
  ret i8 addrspace(1)* %p2
}

define i8 addrspace(1)* @derived_without_base_pair(i8 addrspace(1)* %base, i64 %i) gc "statepoint-example" {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %base, i64 %i
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 44, i32 0, void ()* elementtype(void ()) @callee, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %base, i8 addrspace(1)* %d) ]
  %d1 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  ret i8 addrspace(1)* %d1
}
