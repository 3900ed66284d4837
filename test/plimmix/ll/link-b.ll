; plimmix test program: link-b (linked with link-a.ll)
; Covers: the second module of the pair (see link-a.ll); its function calls back into nothing but
;   the allocator, with two roots.
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> link-b.ll; ld -r link-a.o link-b.o
source_filename = "link/b.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)

@TRAIT_meta = internal constant i8 0
@shared_b = global i8* null, align 8, !plimmix.root !0

define i8* @b_entry(i8* %p) gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* @TRAIT_meta)
  call void @llvm.gcroot(i8** %b, i8* null)
  store i8* inttoptr (i64 69632 to i8*), i8** %a          ; 0x11000: TRAIT, #0
  store i8* inttoptr (i64 77825 to i8*), i8** %b          ; 0x13001: POINTER, #1
  %x = call i8* @alloc(i64 8)
  store i8* %p, i8** %a
  store i8* %x, i8** %b
  store i8* %x, i8** @shared_b
  %y = load i8*, i8** %a
  call void @use(i8* %y)
  %z = load i8*, i8** %b
  ret i8* %z
}

!0 = !{}
