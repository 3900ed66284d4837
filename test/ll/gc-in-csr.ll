; rootwalk corpus: gc-in-csr
; Covers: gc pointers kept in callee-saved registers across statepoints (`Register R#3`,
;   `R#12..R#15`) instead of spill slots; with six live gc pointers and at most four registers,
;   the rest are spilled (`Indirect [R#7 + off]`), so one record mixes both kinds. In an outer
;   frame, a Register location's value is in the callee's save slot for that register.
; Build: opt -passes=rewrite-statepoints-for-gc -S gc-in-csr.ll |
;        llc -filetype=obj -max-registers-for-gc-values=4 -fixup-allow-gcptr-in-csr

declare void @callee()

define i64 @three_in_registers(i64 addrspace(1)* %a, i64 addrspace(1)* %b, i64 addrspace(1)* %c) gc "statepoint-example" {
entry:
  call void @callee()
  %x = load i64, i64 addrspace(1)* %a
  %y = load i64, i64 addrspace(1)* %b
  %z = load i64, i64 addrspace(1)* %c
  %s = add i64 %x, %y
  %t = add i64 %s, %z
  ret i64 %t
}

define i64 @six_live(i64 addrspace(1)* %a, i64 addrspace(1)* %b, i64 addrspace(1)* %c, i64 addrspace(1)* %d, i64 addrspace(1)* %e, i64 addrspace(1)* %f) gc "statepoint-example" {
entry:
  call void @callee()
  %x1 = load i64, i64 addrspace(1)* %a
  %x2 = load i64, i64 addrspace(1)* %b
  %x3 = load i64, i64 addrspace(1)* %c
  %x4 = load i64, i64 addrspace(1)* %d
  %x5 = load i64, i64 addrspace(1)* %e
  %x6 = load i64, i64 addrspace(1)* %f
  call void @callee()
  %y1 = load i64, i64 addrspace(1)* %a
  %s1 = add i64 %x1, %x2
  %s2 = add i64 %s1, %x3
  %s3 = add i64 %s2, %x4
  %s4 = add i64 %s3, %x5
  %s5 = add i64 %s4, %x6
  %s6 = add i64 %s5, %y1
  ret i64 %s6
}
