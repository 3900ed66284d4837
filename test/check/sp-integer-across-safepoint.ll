; rootwalk check corpus (statepoint), MISTAKE integer-across-safepoint, with debug info: %key is
; the object's address as an integer (ptrtoint), made before gc_collect and used after it; the
; collection moves the object and relocates %o, never %key.
; Expected: one finding, integer-across-safepoint in @rw_main: %key across @gc_collect, at
; hash.c:5 (the call's debug location).
; Fix: make the integer after the call (ptrtoint of the relocated %o).
source_filename = "sp-integer-across-safepoint"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
@__LLVM_StackMaps = extern_weak global i8

define i64 @rw_main() gc "statepoint-example" !dbg !5 {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps), !dbg !8
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8), !dbg !9
  %key = ptrtoint i8 addrspace(1)* %o to i64, !dbg !10
  call void @gc_collect(), !dbg !11
  %now = ptrtoint i8 addrspace(1)* %o to i64, !dbg !12
  %moved = sub i64 %now, %key, !dbg !12
  ret i64 %moved, !dbg !12
}

!llvm.dbg.cu = !{!0}
!llvm.module.flags = !{!3, !4}
!0 = distinct !DICompileUnit(language: DW_LANG_C99, file: !1, producer: "hand-written", isOptimized: false, runtimeVersion: 0, emissionKind: FullDebug)
!1 = !DIFile(filename: "hash.c", directory: "/src")
!3 = !{i32 2, !"Debug Info Version", i32 3}
!4 = !{i32 7, !"Dwarf Version", i32 5}
!5 = distinct !DISubprogram(name: "rw_main", scope: !1, file: !1, line: 1, type: !6, scopeLine: 1, spFlags: DISPFlagDefinition, unit: !0)
!6 = !DISubroutineType(types: !7)
!7 = !{null}
!8 = !DILocation(line: 2, column: 3, scope: !5)
!9 = !DILocation(line: 3, column: 12, scope: !5)
!10 = !DILocation(line: 4, column: 13, scope: !5)
!11 = !DILocation(line: 5, column: 3, scope: !5)
!12 = !DILocation(line: 6, column: 10, scope: !5)
