; rootwalk corpus: derived-pairs
; Covers: (base, derived) pairs whose two locations differ.
;   @base_and_derived: d2 = base + 8*i is live across the call: pair (base, d2). d1 = base + 32
;                      also has a gc.relocate after RS4GC, but CodeGenPrepare rewrites a relocate
;                      of a constant-offset GEP into a GEP of the relocated base, so d1 has no pair.
;   @derived_only:     only the derived pointer is used after the call; RS4GC still relocates
;                      the base too, so the record has (base, base) and (base, d).
;   @derived_from_phi: the derived pointer is a phi of two GEPs; RS4GC adds a base phi (%d.base).
; Build: opt -passes=rewrite-statepoints-for-gc -spp-rematerialization-threshold=0 -S derived-pairs.ll | llc -filetype=obj
;   (the threshold is an RS4GC option: without it, cheap derived pointers are recomputed after
;   the call from the relocated base and never appear in the stack map.)

declare void @callee()

define i64 @base_and_derived(i64 addrspace(1)* %base, i64 %i) gc "statepoint-example" {
entry:
  %d1 = getelementptr i64, i64 addrspace(1)* %base, i64 4
  %d2 = getelementptr i64, i64 addrspace(1)* %base, i64 %i
  call void @callee()
  %a = load i64, i64 addrspace(1)* %d1
  %b = load i64, i64 addrspace(1)* %d2
  %c = load i64, i64 addrspace(1)* %base
  %s = add i64 %a, %b
  %t = add i64 %s, %c
  ret i64 %t
}

define i64 @derived_only(i64 addrspace(1)* %base, i64 %i) gc "statepoint-example" {
entry:
  %d = getelementptr i64, i64 addrspace(1)* %base, i64 %i
  call void @callee()
  %v = load i64, i64 addrspace(1)* %d
  ret i64 %v
}

define i64 @derived_from_phi(i1 %c, i64 addrspace(1)* %x, i64 addrspace(1)* %y, i64 %i) gc "statepoint-example" {
entry:
  br i1 %c, label %left, label %right
left:
  %dx = getelementptr i64, i64 addrspace(1)* %x, i64 %i
  br label %join
right:
  %dy = getelementptr i64, i64 addrspace(1)* %y, i64 2
  br label %join
join:
  %d = phi i64 addrspace(1)* [ %dx, %left ], [ %dy, %right ]
  call void @callee()
  %v = load i64, i64 addrspace(1)* %d
  ret i64 %v
}
