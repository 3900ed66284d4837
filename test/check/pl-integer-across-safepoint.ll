; rootwalk check corpus (gcroot, plimmix), MISTAKE integer-across-safepoint: %key (the object's
; address as an integer) is made before an indirect call (which can collect: its target is
; unknown here; it is @poll) and used after it; the collector updates the root %r, not %key.
; Expected: one finding, integer-across-safepoint in @rw_main: %key across the indirect call of %f.
; Fix: make the integer from the pointer reloaded from %r after the call.
source_filename = "pl-integer-across-safepoint"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@"_GC_MAP_pl-integer-across-safepoint" = external global i8
@hook = global void ()* @poll

define void @poll() gc "plimmix" {
entry:
  call void @gc_safepoint()
  ret void
}

define i64 @rw_main() gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* null, i8** %r
  call void @gc_init(i8* @"_GC_MAP_pl-integer-across-safepoint")
  %o = call i8* @gc_alloc(i64 0, i64 8)
  store i8* %o, i8** %r
  %key = ptrtoint i8* %o to i64
  %f = load void ()*, void ()** @hook
  call void %f()
  %o2 = load i8*, i8** %r
  %now = ptrtoint i8* %o2 to i64
  %moved = sub i64 %now, %key
  ret i64 %moved
}
