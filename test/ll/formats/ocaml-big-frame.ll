; LLVM 14's `gc "ocaml"` frame table for large frames: a 4 KiB array and a 40 KiB one next to
; the roots, and values kept in callee-saved registers across calls (their pushes are part of the
; frame size). Above 32 KiB an SP-relative offset can look like a negative RBP-relative one; the
; CFI row tells them apart. Built by test/formats/compile-formats.ts: `llc -O2 -filetype=obj
; ocaml-big-frame.ll` in this directory.
;   array_4k       [512 x i64] + two roots + three values live across calls
;   array_40k      [5000 x i64] + two roots

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare void @fill(i64*)
declare i64 @compute(i64)

define i64 @array_4k(i64 %n, i64 %m, i64 %k) gc "ocaml" {
entry:
  %arr = alloca [512 x i64]
  %a = alloca i8*
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %base = getelementptr [512 x i64], [512 x i64]* %arr, i64 0, i64 0
  call void @fill(i64* %base)
  %p = call i8* @alloc(i64 %n)
  store i8* %p, i8** %a
  %c1 = call i64 @compute(i64 %m)
  %q = call i8* @alloc(i64 %c1)
  store i8* %q, i8** %b
  %c2 = call i64 @compute(i64 %k)
  %x = load i8*, i8** %a
  call void @use(i8* %x)
  %y = load i8*, i8** %b
  call void @use(i8* %y)
  %e = getelementptr [512 x i64], [512 x i64]* %arr, i64 0, i64 7
  %v = load i64, i64* %e
  %s1 = add i64 %v, %c1
  %s2 = add i64 %s1, %c2
  %s3 = add i64 %s2, %n
  %s4 = add i64 %s3, %m
  ret i64 %s4
}

define void @array_40k() gc "ocaml" {
entry:
  %a = alloca i8*
  %arr = alloca [5000 x i64]
  %b = alloca i8*
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* null)
  %base = getelementptr [5000 x i64], [5000 x i64]* %arr, i64 0, i64 0
  call void @fill(i64* %base)
  %p = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  %q = call i8* @alloc(i64 16)
  store i8* %q, i8** %b
  %x = load i8*, i8** %a
  call void @use(i8* %x)
  ret void
}
