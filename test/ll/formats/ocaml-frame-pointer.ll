; LLVM 14's `gc "ocaml"` frame table for functions with a frame pointer ("frame-pointer"="all"):
; the root offsets are RBP-relative (negative, 16-bit two's complement), the frame size still
; counts the pushed RBP. Built by test/formats/compile-formats.ts: `llc -O2 -filetype=obj
; ocaml-frame-pointer.ll` run in this directory.
;   fp_roots       three roots; a call with 9 arguments (three pushed: SP moves below the frame)
;   fp_loop        a root live around a call inside a loop
;   sp_neighbour   the same shape without a frame pointer, in the same module

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare void @many(i64, i64, i64, i64, i64, i64, i64, i64, i8*)

define void @fp_roots() #0 gc "ocaml" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  %c = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  call void @llvm.gcroot(i8** %c, i8* null)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  %q = call i8* @alloc(i64 32)
  store i8* %q, i8** %b
  %x = load i8*, i8** %a
  call void @many(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i8* %x)
  %r = call i8* @alloc(i64 48)
  store i8* %r, i8** %c
  %y = load i8*, i8** %b
  call void @use(i8* %y)
  %z = load i8*, i8** %c
  call void @use(i8* %z)
  ret void
}

define void @fp_loop(i64 %n) #0 gc "ocaml" {
entry:
  %a = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %p = call i8* @alloc(i64 %i)
  store i8* %p, i8** %a
  %x = load i8*, i8** %a
  call void @use(i8* %x)
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

define void @sp_neighbour() gc "ocaml" {
entry:
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  %x = load i8*, i8** %a
  call void @many(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i8* %x)
  %y = load i8*, i8** %b
  call void @use(i8* %y)
  ret void
}

attributes #0 = { "frame-pointer"="all" }
