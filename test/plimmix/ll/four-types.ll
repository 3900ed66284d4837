; plimmix test program: four-types
; Covers: one gcroot of each root type, named by the gcroot metadata operand: @ATOMIC_meta -> 0,
;   @TRAIT_meta -> 1, @COMPLEX_meta -> 2, @POINTER_meta -> 3, and null metadata -> 3 (POINTER).
; Marker stores: before its first call every function stores a distinct constant
;   0x10000 + (type << 12) + index into each gcroot slot (decimal below), so that the test can find
;   each slot in `llvm-objdump -d` and check the map's offset and type against the machine code.
; Build: llc -filetype=obj -load=<plimmix plugin> four-types.ll (gc "ocaml" form: the test rewrites
;   the gc name).
source_filename = "four-types.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)

@ATOMIC_meta = internal constant i8 0
@TRAIT_meta = internal constant i8 0
@COMPLEX_meta = internal constant i8 0
@POINTER_meta = internal constant i8 0

define i8* @four_types(i8* %arg) gc "plimmix" {
entry:
  %atomic = alloca i8*, align 8
  %trait = alloca i8*, align 8
  %complex = alloca i8*, align 8
  %pointer = alloca i8*, align 8
  %untyped = alloca i8*, align 8
  call void @llvm.gcroot(i8** %atomic, i8* @ATOMIC_meta)
  call void @llvm.gcroot(i8** %trait, i8* @TRAIT_meta)
  call void @llvm.gcroot(i8** %complex, i8* @COMPLEX_meta)
  call void @llvm.gcroot(i8** %pointer, i8* @POINTER_meta)
  call void @llvm.gcroot(i8** %untyped, i8* null)
  store i8* inttoptr (i64 65536 to i8*), i8** %atomic      ; 0x10000: ATOMIC, #0
  store i8* inttoptr (i64 69633 to i8*), i8** %trait       ; 0x11001: TRAIT, #1
  store i8* inttoptr (i64 73730 to i8*), i8** %complex     ; 0x12002: COMPLEX, #2
  store i8* inttoptr (i64 77827 to i8*), i8** %pointer     ; 0x13003: POINTER, #3
  store i8* inttoptr (i64 77828 to i8*), i8** %untyped     ; 0x13004: POINTER (null metadata), #4
  %a = call i8* @alloc(i64 16)
  store i8* %a, i8** %atomic
  %t = call i8* @alloc(i64 16)
  store i8* %t, i8** %trait
  %c = call i8* @alloc(i64 32)
  store i8* %c, i8** %complex
  store i8* %arg, i8** %pointer
  %p = load i8*, i8** %pointer
  call void @use(i8* %p)
  %u = call i8* @alloc(i64 8)
  store i8* %u, i8** %untyped
  %t2 = load i8*, i8** %trait
  call void @use(i8* %t2)
  %c2 = load i8*, i8** %complex
  call void @use(i8* %c2)
  %u2 = load i8*, i8** %untyped
  ret i8* %u2
}
