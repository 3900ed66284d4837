; rootwalk check corpus (statepoint), CORRECT edge cases of check --generational: the check must
; find nothing, with --generational or without.
;   - @set_left: gc_write_barrier right after the store (declared "gc-leaf-function": it never
;     collects, so the pointer held across it is no finding either);
;   - @set_both: two stores, through a GEP and a bitcast, one barrier later, called with a
;     bitcast of the object, after a call of a helper that cannot collect (@tag, no safepoint);
;   - @set_on_branch: the store on one branch, the barrier in the join block, before gc_collect;
;   - @clear: a store of null (nothing to remember);
;   - @set_count: a store of an integer (not a GC pointer) into the object;
;   - @pair: stores into an object allocated by gc_alloc with no call that can collect since
;     (young under sticky mark bits: what it points to is traced through it);
;   - @rw_main: a long-lived @pair, updated with @set_left and @set_on_branch across collections.
source_filename = "sp-write-barrier-edges"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_write_barrier(i8 addrspace(1)*) #0
@__LLVM_StackMaps = extern_weak global i8

attributes #0 = { "gc-leaf-function" }

define void @set_left(i8 addrspace(1)* %o, i8 addrspace(1)* %v) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %slots, align 8
  call void @gc_write_barrier(i8 addrspace(1)* %o)
  %again = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, align 8
  ret void
}

define i64 @tag(i64 %x) {
entry:
  %y = mul i64 %x, 3
  ret i64 %y
}

define i64 @set_both(i8 addrspace(1)* %o, i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %a, i8 addrspace(1)* addrspace(1)* %slots, align 8
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 1
  store i8 addrspace(1)* %b, i8 addrspace(1)* addrspace(1)* %s1, align 8
  %t = call i64 @tag(i64 7)
  %whole = bitcast i8 addrspace(1)* addrspace(1)* %slots to i8 addrspace(1)*
  call void @gc_write_barrier(i8 addrspace(1)* %whole)
  call void @gc_collect()
  ret i64 %t
}

define void @set_on_branch(i8 addrspace(1)* %o, i8 addrspace(1)* %v, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %store, label %join
store:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 1
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %s1, align 8
  br label %join
join:
  call void @gc_write_barrier(i8 addrspace(1)* %o)
  call void @gc_collect()
  ret void
}

define void @clear(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %slots = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* null, i8 addrspace(1)* addrspace(1)* %slots, align 8
  call void @gc_collect()
  ret void
}

define void @set_count(i8 addrspace(1)* %o, i64 %n) gc "statepoint-example" {
entry:
  %raw = getelementptr i8, i8 addrspace(1)* %o, i64 16
  %count = bitcast i8 addrspace(1)* %raw to i64 addrspace(1)*
  store i64 %n, i64 addrspace(1)* %count, align 8
  call void @gc_collect()
  ret void
}

define i8 addrspace(1)* @pair(i8 addrspace(1)* %l, i8 addrspace(1)* %r) gc "statepoint-example" {
entry:
  %n = call i8 addrspace(1)* @gc_alloc(i64 2, i64 8)
  %slots = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %slots, align 8
  %s1 = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %slots, i64 1
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %s1, align 8
  ret i8 addrspace(1)* %n
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %keep = call i8 addrspace(1)* @pair(i8 addrspace(1)* null, i8 addrspace(1)* null)
  call void @gc_collect()
  %young = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  call void @set_left(i8 addrspace(1)* %keep, i8 addrspace(1)* %young)
  %other = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  call void @set_on_branch(i8 addrspace(1)* %keep, i8 addrspace(1)* %other, i1 true)
  %t = call i64 @set_both(i8 addrspace(1)* %keep, i8 addrspace(1)* %young, i8 addrspace(1)* %other)
  call void @set_count(i8 addrspace(1)* %keep, i64 %t)
  call void @clear(i8 addrspace(1)* %keep)
  ret i64 %t
}
