; rootwalk check corpus (gcroot, plimmix), MISTAKE no-gc-strategy: @append has no `gc` strategy,
; so it has no gcroot slots and no map; it holds %list (a GC pointer @rw_main passes it) across
; gc_alloc, which may move the list, then stores the stale %list.
; Expected: one finding, no-gc-strategy in @append: %list across @gc_alloc.
; Fix: give @append `gc "plimmix"`, keep %list in a gcroot slot and reload it after gc_alloc.
source_filename = "pl-no-gc-strategy"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
@"_GC_MAP_pl-no-gc-strategy" = external global i8

define i8* @append(i8* %list) {
entry:
  %node = call i8* @gc_alloc(i64 1, i64 0)
  %slot = bitcast i8* %node to i8**
  store i8* %list, i8** %slot
  ret i8* %node
}

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-no-gc-strategy")
  %a = call i8* @gc_alloc(i64 1, i64 0)
  store i8* %a, i8** %r
  %a2 = load i8*, i8** %r
  %b = call i8* @append(i8* %a2)
  ret i64 0
}
