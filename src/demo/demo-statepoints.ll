; The example `npm start` compiles and dumps until the native demo exists.
; A small statepoint program: compiled with `opt -passes=rewrite-statepoints-for-gc` and then
; `llc -O2` with default options, so it shows a call with pushed stack arguments (more than six
; integer arguments), a derived pointer, deopt state and a frame-pointer function.

declare void @gc_safepoint()
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @consume8(i64, i64, i64, i64, i64, i64, i64, i64)

define i8 addrspace(1)* @make_pair(i64 %tag) gc "statepoint-example" {
entry:
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  %b = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  %slot = getelementptr i8, i8 addrspace(1)* %a, i64 8
  call void @gc_safepoint() [ "deopt"(i64 %tag, i32 7) ]
  %slot64 = bitcast i8 addrspace(1)* %slot to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %b, i8 addrspace(1)* addrspace(1)* %slot64
  ret i8 addrspace(1)* %a
}

define i64 @many_args(i8 addrspace(1)* %obj, i64 %x) gc "statepoint-example" {
entry:
  call void @consume8(i64 %x, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8)
  %p = bitcast i8 addrspace(1)* %obj to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p
  ret i64 %v
}

define i64 @with_frame_pointer(i64 %n) #0 gc "statepoint-example" {
entry:
  %o = call i8 addrspace(1)* @make_pair(i64 %n)
  %r = call i64 @many_args(i8 addrspace(1)* %o, i64 %n)
  call void @gc_safepoint()
  %p = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  store i64 %r, i64 addrspace(1)* %p
  ret i64 %r
}

attributes #0 = { "frame-pointer"="all" }
