; LLVM 14's `gc "ocaml"` frame table at calls that pass arguments on the stack: the frame size in
; the table is the fixed frame (StackSize), SP at the safepoint is lower by the pushed arguments
; (X86CallFrameOptimization), which only the CFI row knows. Built by
; test/formats/compile-formats.ts: `llc -O2 -filetype=obj ocaml-stack-args.ll` in this directory.
;   push_args      roots; calls with 9 and 12 arguments (pushed) and one with 6 (none pushed)
;   take_args      receives 10 arguments (4 on the stack: above its return address, not in its frame)

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare void @nine(i64, i64, i64, i64, i64, i64, i64, i64, i8*)
declare void @twelve(i64, i64, i64, i64, i64, i64, i8*, i8*, i64, i64, i64, i64)

define void @push_args() gc "ocaml" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  %x = load i8*, i8** %a
  call void @nine(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i8* %x)
  %q = call i8* @alloc(i64 32)
  store i8* %q, i8** %b
  %y = load i8*, i8** %a
  %z = load i8*, i8** %b
  call void @twelve(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i8* %y, i8* %z, i64 9, i64 10, i64 11, i64 12)
  %w = load i8*, i8** %b
  call void @use(i8* %w)
  ret void
}

define i64 @take_args(i64 %a1, i64 %a2, i64 %a3, i64 %a4, i64 %a5, i64 %a6, i64 %a7, i64 %a8, i64 %a9, i64 %a10) gc "ocaml" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  %p = call i8* @alloc(i64 %a9)
  store i8* %p, i8** %r
  %x = load i8*, i8** %r
  call void @use(i8* %x)
  %s = add i64 %a10, %a7
  ret i64 %s
}
