; plimmix test program: empty-map
; Covers: a map with N = 0 function records: the module's only gc "plimmix" function is
;   available_externally (no code, no record; it still makes LLVM run the printer), and one
;   global root. G must be at offset 16, right after the header, as for any N.
; Build: llc -filetype=obj -load=<plimmix plugin> empty-map.ll
source_filename = "empty-map.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)

@the_root = global i8* null, align 8, !plimmix.root !0

define available_externally i8* @only_elsewhere() gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %slot, i8* null)
  %x = call i8* @alloc(i64 8)
  ret i8* %x
}

define i8* @read_root() {
entry:
  %r = load i8*, i8** @the_root
  ret i8* %r
}

!0 = !{}
