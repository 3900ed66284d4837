; The frames `rootwalk sim` lays out on its simulated stacks. Compiled like any rootwalk program
; (`rootwalk compile --statepoint`: RewriteStatepointsForGC, then llc -O2 with default options,
; plus -spp-rematerialization-threshold=0 so derived pointers stay derived). Each function keeps a
; few GC pointers live across a call to @sim_safepoint: those calls are the safepoints whose
; frame layouts (frame size, root slots) the simulated mutators use.
;
;   sim_one       1 root
;   sim_two       2 roots
;   sim_four      4 roots
;   sim_args      2 roots at a call with 8 integer arguments (pushed: the effective frame size
;                 differs from StackSize)
;   sim_fp        3 roots, "frame-pointer"="all" (climbed by rbp)
;   sim_derived   a base and a pointer derived from it by a variable offset

declare void @sim_safepoint()
declare void @sim_consume8(i64, i64, i64, i64, i64, i64, i64, i64)
declare i64 @sim_use(i8 addrspace(1)*)

define i64 @sim_one(i8 addrspace(1)* %a) gc "statepoint-example" {
  call void @sim_safepoint()
  %r = call i64 @sim_use(i8 addrspace(1)* %a)
  ret i64 %r
}

define i64 @sim_two(i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
  call void @sim_safepoint()
  %x = call i64 @sim_use(i8 addrspace(1)* %a)
  %y = call i64 @sim_use(i8 addrspace(1)* %b)
  %r = add i64 %x, %y
  ret i64 %r
}

define i64 @sim_four(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c, i8 addrspace(1)* %d) gc "statepoint-example" {
  call void @sim_safepoint()
  %x = call i64 @sim_use(i8 addrspace(1)* %a)
  %y = call i64 @sim_use(i8 addrspace(1)* %b)
  %z = call i64 @sim_use(i8 addrspace(1)* %c)
  %w = call i64 @sim_use(i8 addrspace(1)* %d)
  %s1 = add i64 %x, %y
  %s2 = add i64 %z, %w
  %r = add i64 %s1, %s2
  ret i64 %r
}

define i64 @sim_args(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %n) gc "statepoint-example" {
  call void @sim_consume8(i64 %n, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8)
  %x = call i64 @sim_use(i8 addrspace(1)* %a)
  %y = call i64 @sim_use(i8 addrspace(1)* %b)
  %r = add i64 %x, %y
  ret i64 %r
}

define i64 @sim_fp(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %c) #0 gc "statepoint-example" {
  call void @sim_safepoint()
  %x = call i64 @sim_use(i8 addrspace(1)* %a)
  %y = call i64 @sim_use(i8 addrspace(1)* %b)
  %z = call i64 @sim_use(i8 addrspace(1)* %c)
  %s = add i64 %x, %y
  %r = add i64 %s, %z
  ret i64 %r
}

define i64 @sim_derived(i8 addrspace(1)* %a, i64 %i) gc "statepoint-example" {
  %p = getelementptr i8, i8 addrspace(1)* %a, i64 %i
  call void @sim_safepoint()
  %x = call i64 @sim_use(i8 addrspace(1)* %a)
  %y = call i64 @sim_use(i8 addrspace(1)* %p)
  %r = add i64 %x, %y
  ret i64 %r
}

attributes #0 = { "frame-pointer"="all" }
