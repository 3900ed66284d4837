; LLVM 14's `gc "ocaml"` frame table for plain gcroot functions without a frame pointer.
; Built by test/formats/compile-formats.ts: `llc -O2 -filetype=obj ocaml-basic.ll` run in this
; directory (the module identifier, hence the symbol camlOcaml-basic__frametable, comes from the
; file name llc is given).
;   one_root      one root, four calls: four descriptors with the same root list
;   two_roots     two roots and a value live across a call in a callee-saved register (push rbx)
;   no_roots      a gc function without gcroots: descriptors with no live offsets
;   tail_caller   its last call is a tail call (jmp): not a safepoint
;   not_managed   no gc strategy: not in the table

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare i64 @compute(i64)

define void @one_root() gc "ocaml" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %r
  %q = call i8* @alloc(i64 32)
  call void @use(i8* %q)
  %x = load i8*, i8** %r
  call void @use(i8* %x)
  ret void
}

define i64 @two_roots(i64 %n) gc "ocaml" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  %m = call i64 @compute(i64 %n)
  %q = call i8* @alloc(i64 %m)
  store i8* %q, i8** %b
  %k = call i64 @compute(i64 %m)
  %x = load i8*, i8** %a
  call void @use(i8* %x)
  %y = load i8*, i8** %b
  call void @use(i8* %y)
  %s = add i64 %k, %m
  ret i64 %s
}

define void @no_roots() gc "ocaml" {
entry:
  %p = call i8* @alloc(i64 8)
  call void @use(i8* %p)
  ret void
}

define void @tail_caller() gc "ocaml" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %r
  %x = load i8*, i8** %r
  tail call void @use(i8* %x)
  ret void
}

define void @not_managed() {
entry:
  %p = call i8* @alloc(i64 8)
  call void @use(i8* %p)
  ret void
}
