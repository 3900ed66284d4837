; rootwalk check corpus (gcroot, plimmix), CORRECT edge cases of check --generational: the check
; must find nothing, with --generational or without.
;   - @set_left: gc_write_barrier right after the store, with the pointer the store used (and
;     the unrooted %o used after it: gc_write_barrier never collects, even when --collects names it);
;   - @set_reloaded: the barrier's argument reloaded from the gcroot slot the object was loaded
;     from (the same object: no store to the slot and no call that can collect between);
;   - @set_later: the barrier after a call that cannot collect (@tag), before gc_collect;
;   - @clear: a store of null; @set_count: a store of an integer;
;   - @pair: stores into an object just allocated by gc_alloc (rooted, reloaded from its slot),
;     no call that can collect since (young under sticky mark bits: no barrier needed);
;   - @rw_main: a long-lived @pair in a gcroot slot, updated across collections.
source_filename = "pl-write-barrier-edges"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_write_barrier(i8*)
@"_GC_MAP_pl-write-barrier-edges" = external global i8

define void @set_left(i8* %o, i8* %v) gc "plimmix" {
entry:
  %slots = bitcast i8* %o to i8**
  store i8* %v, i8** %slots, align 8
  call void @gc_write_barrier(i8* %o)
  %again = load i8*, i8** %slots, align 8
  ret void
}

define void @set_reloaded(i8* %o, i8* %v) gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %o, i8** %r
  %obj = load i8*, i8** %r
  %slots = bitcast i8* %obj to i8**
  %s1 = getelementptr i8*, i8** %slots, i64 1
  store i8* %v, i8** %s1, align 8
  %again = load i8*, i8** %r
  call void @gc_write_barrier(i8* %again)
  call void @gc_collect()
  ret void
}

define i64 @tag(i64 %x) {
entry:
  %y = mul i64 %x, 3
  ret i64 %y
}

define i64 @set_later(i8* %o, i8* %v) gc "plimmix" {
entry:
  %slots = bitcast i8* %o to i8**
  store i8* %v, i8** %slots, align 8
  %t = call i64 @tag(i64 5)
  call void @gc_write_barrier(i8* %o)
  call void @gc_collect()
  ret i64 %t
}

define void @clear(i8* %o) gc "plimmix" {
entry:
  %slots = bitcast i8* %o to i8**
  store i8* null, i8** %slots, align 8
  call void @gc_collect()
  ret void
}

define void @set_count(i8* %o, i64 %n) gc "plimmix" {
entry:
  %raw = getelementptr i8, i8* %o, i64 16
  %count = bitcast i8* %raw to i64*
  store i64 %n, i64* %count, align 8
  call void @gc_collect()
  ret void
}

define i8* @pair(i8* %l, i8* %r) gc "plimmix" {
entry:
  %rl = alloca i8*, align 8
  %rr = alloca i8*, align 8
  %rn = alloca i8*, align 8
  call void @llvm.gcroot(i8** %rl, i8* null)
  call void @llvm.gcroot(i8** %rr, i8* null)
  call void @llvm.gcroot(i8** %rn, i8* null)
  store i8* %l, i8** %rl
  store i8* %r, i8** %rr
  store i8* null, i8** %rn
  %n = call i8* @gc_alloc(i64 2, i64 8)
  store i8* %n, i8** %rn
  %node = load i8*, i8** %rn
  %slots = bitcast i8* %node to i8**
  %l2 = load i8*, i8** %rl
  store i8* %l2, i8** %slots, align 8
  %s1 = getelementptr i8*, i8** %slots, i64 1
  %r2 = load i8*, i8** %rr
  store i8* %r2, i8** %s1, align 8
  ret i8* %node
}

define i64 @rw_main() gc "plimmix" {
entry:
  %keep = alloca i8*, align 8
  %y = alloca i8*, align 8
  call void @llvm.gcroot(i8** %keep, i8* null)
  call void @llvm.gcroot(i8** %y, i8* null)
  store i8* null, i8** %keep
  store i8* null, i8** %y
  call void @gc_init(i8* @"_GC_MAP_pl-write-barrier-edges")
  %p = call i8* @pair(i8* null, i8* null)
  store i8* %p, i8** %keep
  call void @gc_collect()
  %young = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %young, i8** %y
  %k1 = load i8*, i8** %keep
  %y1 = load i8*, i8** %y
  call void @set_left(i8* %k1, i8* %y1)
  %k2 = load i8*, i8** %keep
  %y2 = load i8*, i8** %y
  call void @set_reloaded(i8* %k2, i8* %y2)
  %k3 = load i8*, i8** %keep
  %y3 = load i8*, i8** %y
  %t = call i64 @set_later(i8* %k3, i8* %y3)
  %k4 = load i8*, i8** %keep
  call void @set_count(i8* %k4, i64 %t)
  %k5 = load i8*, i8** %keep
  call void @clear(i8* %k5)
  ret i64 %t
}
