; rootwalk test program (test/walker/core, deep-core.test.ts): managed code keeping a GC pointer
; in a callee-saved register across calls into C. Built with -max-registers-for-gc-values=4
; -fixup-allow-gcptr-in-csr, so the statepoint records `Register` locations, not spill slots.
;   mgd_hold(p, depth): calls c_descend(depth) (a C recursion `depth` frames deep that stops in
;     rw_core_stop, then in rw_stop_nocfi, a function without CFI), then reads p;
;   mgd_leaf(p): calls rw_leaf_stop without a statepoint ("gc-leaf-function"), so a stop there
;     has a managed frame that is not at a safepoint as frame #1, a native frame as #0 (its
;     second call, a statepoint, makes it a function of the stack map).
; Build: opt -passes=rewrite-statepoints-for-gc | llc -O2 -max-registers-for-gc-values=4 -fixup-allow-gcptr-in-csr

declare void @c_descend(i64)
declare void @rw_leaf_stop() "gc-leaf-function"

define i64 @mgd_hold(i64 addrspace(1)* %p, i64 %depth) gc "statepoint-example" {
entry:
  call void @c_descend(i64 %depth)
  %x = load i64, i64 addrspace(1)* %p
  ret i64 %x
}

define i64 @mgd_leaf(i64 addrspace(1)* %p) gc "statepoint-example" {
entry:
  call void @rw_leaf_stop() "gc-leaf-function"
  call void @c_descend(i64 -1)
  %x = load i64, i64 addrspace(1)* %p
  ret i64 %x
}
