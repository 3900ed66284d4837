; rootwalk check corpus (statepoint), CORRECT edge cases: none of these is a mistake, and the
; check must find nothing.
;   - @hash: a ptrtoint used only before the safepoint (the integer is stored as raw data);
;   - @collect_now: a helper without a gc strategy that calls gc_collect holding no GC pointer;
;   - @tail_word: a derived pointer passed to a "gc-leaf-function" helper (a call that cannot
;     collect), and a derived pointer held across a poll in a gc function (relocated with its base);
;   - @keep_in_global: a GC pointer stored into @kept, registered with gc_add_global in @rw_main,
;     and read back after a collection (the collector updates a registered global);
;   - @list_of: a loop that allocates a node per iteration and links it to the previous one
;     (the phi's value is relocated at each gc_alloc);
;   - @second_word: a derived pointer (getelementptr) made before a collection and used after it
;     (rewrite-statepoints-for-gc relocates it with its base);
;   - @rw_main: GC pointers held across calls in a gc function (relocated), a call of @check,
;     which has a gc strategy but never reaches a collecting call (mutual recursion alone does
;     not collect), and an opaque external call with a ptrtoint live across it (not a call that
;     can collect unless `--collects ext_log` says so: sp-collects-option.ll).
source_filename = "sp-correct-edges"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare void @gc_collect()
declare void @ext_log(i64)
declare void @gc_add_global(i8 addrspace(1)**)
@__LLVM_StackMaps = extern_weak global i8
@kept = global i8 addrspace(1)* null, align 8

define i64 @keep_in_global(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  store i8 addrspace(1)* %o, i8 addrspace(1)** @kept, align 8
  call void @gc_collect()
  %again = load i8 addrspace(1)*, i8 addrspace(1)** @kept, align 8
  %w = bitcast i8 addrspace(1)* %again to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %w, align 8
  ret i64 %v
}

define i8 addrspace(1)* @list_of(i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %head = phi i8 addrspace(1)* [ null, %entry ], [ %node, %loop ]
  %node = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  %link = bitcast i8 addrspace(1)* %node to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %link, align 8
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  ret i8 addrspace(1)* %node
}

define i64 @second_word(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 8
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %p, align 8
  ret i64 %v
}

define void @hash(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %a = ptrtoint i8 addrspace(1)* %o to i64
  %h = mul i64 %a, 31
  %w = bitcast i8 addrspace(1)* %o to i64 addrspace(1)*
  store i64 %h, i64 addrspace(1)* %w
  call void @gc_safepoint()
  ret void
}

define void @collect_now() {
entry:
  call void @gc_collect()
  ret void
}

define i64 @leaf_read(i64 addrspace(1)* %p) #0 {
entry:
  %v = load i64, i64 addrspace(1)* %p
  ret i64 %v
}

define i64 @tail_word(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 8
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %v = call i64 @leaf_read(i64 addrspace(1)* %p)
  call void @gc_safepoint()
  %v2 = load i64, i64 addrspace(1)* %p
  %s = add i64 %v, %v2
  ret i64 %s
}

define i64 @check(i8 addrspace(1)* %o, i64 %d) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %done, label %more
more:
  %d1 = sub i64 %d, 1
  %r = call i64 @check(i8 addrspace(1)* %o, i64 %d1)
  %a = ptrtoint i8 addrspace(1)* %o to i64
  %s = add i64 %r, %a
  ret i64 %s
done:
  ret i64 0
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  call void @gc_add_global(i8 addrspace(1)** @kept)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 16)
  %k = call i64 @keep_in_global(i8 addrspace(1)* %o)
  %list = call i8 addrspace(1)* @list_of(i64 4)
  %w2 = call i64 @second_word(i8 addrspace(1)* %o)
  call void @hash(i8 addrspace(1)* %o)
  call void @collect_now()
  %t = call i64 @tail_word(i8 addrspace(1)* %o)
  %a = ptrtoint i8 addrspace(1)* %o to i64
  %c = call i64 @check(i8 addrspace(1)* %o, i64 3)
  call void @ext_log(i64 %a)
  call void @ext_log(i64 %a)
  %s = add i64 %t, %c
  %s1 = add i64 %s, %k
  %s2 = add i64 %s1, %w2
  ret i64 %s2
}

attributes #0 = { "gc-leaf-function" }
