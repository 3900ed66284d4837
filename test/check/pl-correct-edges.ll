; rootwalk check corpus (gcroot, plimmix), CORRECT edge cases: the check must find nothing.
;   - @rw_main: a copy loaded from a root before gc_collect and, after it, only compared with
;     null (harmless); every other use reloads the root after the call;
;   - @field / @set_field: helpers without a gc strategy that read and write fields and reach no
;     collecting call;
;   - @count: a gc function holding an SSA copy across calls of itself and of @field, none of
;     which can collect;
;   - @collect_now: a helper without a gc strategy that calls gc_collect holding nothing;
;   - @keep_in_global: a GC pointer stored into @kept, registered with gc_add_global in @rw_main,
;     and read back after a collection (the collector updates a registered global);
;   - @list_of: a loop that allocates a node per iteration, the list's head in a gcroot slot
;     reloaded after each gc_alloc.
source_filename = "pl-correct-edges"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @gc_add_global(i8**)
@"_GC_MAP_pl-correct-edges" = external global i8
@kept = global i8* null, align 8

define i64 @keep_in_global(i8* %o) gc "plimmix" {
entry:
  store i8* %o, i8** @kept, align 8
  call void @gc_collect()
  %again = load i8*, i8** @kept, align 8
  %w = bitcast i8* %again to i64*
  %v = load i64, i64* %w, align 8
  ret i64 %v
}

define i8* @list_of(i64 %n) gc "plimmix" {
entry:
  %head = alloca i8*, align 8
  call void @llvm.gcroot(i8** %head, i8* null)
  store i8* null, i8** %head
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %node = call i8* @gc_alloc(i64 1, i64 8)
  %prev = load i8*, i8** %head
  %link = bitcast i8* %node to i8**
  store i8* %prev, i8** %link, align 8
  store i8* %node, i8** %head
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %done
done:
  %list = load i8*, i8** %head
  ret i8* %list
}

define i8* @field(i8* %o) {
entry:
  %s = bitcast i8* %o to i8**
  %v = load i8*, i8** %s
  ret i8* %v
}

define void @set_field(i8* %o, i8* %v) {
entry:
  %s = bitcast i8* %o to i8**
  store i8* %v, i8** %s
  ret void
}

define void @collect_now() {
entry:
  call void @gc_collect()
  ret void
}

define i64 @count(i8* %n) gc "plimmix" {
entry:
  %none = icmp eq i8* %n, null
  br i1 %none, label %zero, label %more
zero:
  ret i64 0
more:
  %next = call i8* @field(i8* %n)
  %c = call i64 @count(i8* %next)
  %again = call i8* @field(i8* %n)
  %c1 = add i64 %c, 1
  ret i64 %c1
}

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  %s = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  call void @llvm.gcroot(i8** %s, i8* null)
  store i8* null, i8** %r
  store i8* null, i8** %s
  call void @gc_init(i8* @"_GC_MAP_pl-correct-edges")
  call void @gc_add_global(i8** @kept)
  %list = call i8* @list_of(i64 4)
  %a = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %a, i8** %r
  %b = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %b, i8** %s
  %a2 = load i8*, i8** %r
  %b2 = load i8*, i8** %s
  call void @set_field(i8* %a2, i8* %b2)
  %copy = load i8*, i8** %r
  call void @collect_now()
  %isnull = icmp eq i8* %copy, null
  %a3 = load i8*, i8** %r
  %n = call i64 @count(i8* %a3)
  %a4 = load i8*, i8** %r
  %k = call i64 @keep_in_global(i8* %a4)
  %z = zext i1 %isnull to i64
  %res = add i64 %n, %z
  %res2 = add i64 %res, %k
  ret i64 %res2
}
