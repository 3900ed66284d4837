; plimmix test program: globals
; Covers: global roots, marked with the `!plimmix.root` attachment (operands ignored): an external
;   pointer global, an internal i64 global (its relocation may be against a section), one in a
;   named section; a global without the attachment and an external declaration (not listed).
;   The module passes its own map to the runtime: it declares `@"_GC_MAP_globals.c"` and the
;   printer defines that symbol.
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> globals.ll
source_filename = "globals.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare void @gc_init(i8*)

@"_GC_MAP_globals.c" = external global i8

@root_pointer = global i8* null, align 8, !plimmix.root !0
@not_a_root = global i8* null, align 8
@root_internal = internal global i64 0, align 8, !plimmix.root !0
@root_in_section = global i8* null, section ".data.roots", align 8, !plimmix.root !0
@elsewhere = external global i8*

define void @register_map() {
entry:
  call void @gc_init(i8* @"_GC_MAP_globals.c")
  ret void
}

define void @set_globals() gc "plimmix" {
entry:
  %tmp = alloca i8*, align 8
  call void @llvm.gcroot(i8** %tmp, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %tmp        ; 0x13000: POINTER, #0
  %a = call i8* @alloc(i64 8)
  store i8* %a, i8** %tmp
  %b = call i8* @alloc(i64 8)
  store i8* %b, i8** @root_pointer
  %t = load i8*, i8** %tmp
  store i8* %t, i8** @root_in_section
  %i = ptrtoint i8* %b to i64
  store i64 %i, i64* @root_internal
  store i8* %b, i8** @not_a_root
  %e = load i8*, i8** @elsewhere
  call void @use(i8* %e)
  ret void
}

!0 = !{}
