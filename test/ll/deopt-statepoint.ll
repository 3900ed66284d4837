; rootwalk corpus: deopt-statepoint
; Covers: statepoints with deopt values after RewriteStatepointsForGC.
;   Record 1 (the call to @alloc): no deopt bundle, one (p, p) pair.
;   Record 2: `Constant 7` deopt values: Constant 1, Constant 2 (i32), the relocated gc pointer
;   (Indirect), i64 %n (Indirect, size 8), i32 %m (Indirect, size 4), a pool constant, a null
;   gc pointer (Constant 0); then the (base, derived) pairs for %p and %q.
;   Both records have the default ID 2882400000 (0xABCDEF00): with RS4GC a deopt bundle does not
;   change the ID (compare deopt-direct.ll).
; Build: opt -passes=rewrite-statepoints-for-gc -S deopt-statepoint.ll | llc -filetype=obj

declare void @callee()
declare i8 addrspace(1)* @alloc()

define i8 addrspace(1)* @deopt_values(i8 addrspace(1)* %p, i64 %n, i32 %m) gc "statepoint-example" {
entry:
  %q = call i8 addrspace(1)* @alloc()
  call void @callee() [ "deopt"(i64 1, i32 2, i8 addrspace(1)* %p, i64 %n, i32 %m, i64 81985529216486895, i8 addrspace(1)* null) ]
  %r = getelementptr i8, i8 addrspace(1)* %q, i64 8
  store i8 1, i8 addrspace(1)* %p
  ret i8 addrspace(1)* %r
}
