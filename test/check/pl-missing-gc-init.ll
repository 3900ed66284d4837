; rootwalk check corpus (gcroot, plimmix), MISTAKE missing-gc-init: the program collects but never
; calls gc_init, so the runtime has no map.
; Expected: one finding, missing-gc-init (first collecting call in @rw_main).
; Fix: `call void @gc_init(i8* @"_GC_MAP_pl-missing-gc-init")` first in @rw_main.
source_filename = "pl-missing-gc-init"
declare void @gc_collect()

define i64 @rw_main() gc "plimmix" {
entry:
  call void @gc_collect()
  ret i64 0
}
