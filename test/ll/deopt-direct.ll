; rootwalk corpus: deopt-direct
; Covers: a call with a "deopt" bundle lowered by llc directly (no RS4GC pass): llc emits a
;   statepoint record with ID 2882400015 (0xABCDEF0F, DeoptBundleStatepointID), 7 deopt values
;   and no gc pointer pairs at all (nothing is relocated: the gc pointer is only a deopt value).
; Build: llc -filetype=obj deopt-direct.ll   (no opt step)

declare void @callee()

define i64 @deopt_without_rs4gc(i8 addrspace(1)* %p, i64 %n, i32 %m) gc "statepoint-example" {
entry:
  call void @callee() [ "deopt"(i64 1, i32 2, i8 addrspace(1)* %p, i64 %n, i32 %m, i64 81985529216486895, i8 addrspace(1)* null) ]
  %r = add i64 %n, 1
  ret i64 %r
}
