; rootwalk test program (test/walker/core): managed code -> a C function taking a callback
; (apply_cb, compiled -O2 -fomit-frame-pointer) -> managed code -> C (stop_here), on 3 threads.
; Roots: %a and %b live across the call to apply_cb in mgd_outer; %p across stop_here in mgd_cb.
; Build: opt -passes=rewrite-statepoints-for-gc | llc -O2 -filetype=obj

declare i64 @apply_cb(i64 (i8 addrspace(1)*, i64)*, i8 addrspace(1)*, i64)
declare void @stop_here(i64)

define i64 @mgd_cb(i8 addrspace(1)* %p, i64 %k) gc "statepoint-example" {
entry:
  call void @stop_here(i64 %k)
  %pi = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %p1 = getelementptr i64, i64 addrspace(1)* %pi, i64 1
  %x = load i64, i64 addrspace(1)* %p1
  %s = add i64 %x, %k
  ret i64 %s
}

define i64 @mgd_outer(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %k) gc "statepoint-example" {
entry:
  %r = call i64 @apply_cb(i64 (i8 addrspace(1)*, i64)* @mgd_cb, i8 addrspace(1)* %b, i64 %k)
  %ai = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %bi = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %x = load i64, i64 addrspace(1)* %ai
  %y = load i64, i64 addrspace(1)* %bi
  %s1 = add i64 %r, %x
  %s2 = add i64 %s1, %y
  ret i64 %s2
}
