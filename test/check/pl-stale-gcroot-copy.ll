; rootwalk check corpus (gcroot, plimmix), MISTAKE stale-gcroot-copy: %copy is loaded from the
; root %r before gc_collect and used after it; the collector updates %r, not %copy. (Its
; comparison with null after the call is harmless and not reported; the load through it is.)
; Expected: one finding, stale-gcroot-copy in @rw_main: %copy across @gc_collect.
; Fix: `%copy2 = load i8*, i8** %r` after the call, and use %copy2.
source_filename = "pl-stale-gcroot-copy"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
@"_GC_MAP_pl-stale-gcroot-copy" = external global i8

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-stale-gcroot-copy")
  %o = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %o, i8** %r
  %copy = load i8*, i8** %r
  call void @gc_collect()
  %none = icmp eq i8* %copy, null
  br i1 %none, label %empty, label %read
empty:
  ret i64 -1
read:
  %w = bitcast i8* %copy to i64*
  %v = load i64, i64* %w
  ret i64 %v
}
