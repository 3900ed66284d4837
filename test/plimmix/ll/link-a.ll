; plimmix test program: link-a (linked with link-b.ll)
; Covers: two modules with different source file names ("link/a.c", "link/b.c": not C
;   identifiers, so the labels are quoted in assembly) linked into one object with `ld -r`: both
;   maps survive, each under its own global label, with relocations into the merged .text; a call
;   across the modules. Linking two modules with the same source name fails (duplicate symbol).
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> link-a.ll; ld -r link-a.o link-b.o
source_filename = "link/a.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare i8* @b_entry(i8*)

@shared_a = global i8* null, align 8, !plimmix.root !0

define i8* @a_entry(i8* %p) gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %slot, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %slot       ; 0x13000: POINTER, #0
  %x = call i8* @b_entry(i8* %p)
  store i8* %p, i8** %slot
  store i8* %x, i8** @shared_a
  %y = call i8* @alloc(i64 8)
  %z = load i8*, i8** %slot
  ret i8* %z
}

!0 = !{}
