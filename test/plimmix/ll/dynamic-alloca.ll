; plimmix test program: dynamic-alloca
; Covers: variable-sized allocas, so LLVM records a dynamic frame (StackSize UINT64_MAX): the
;   record's frame size is -1 and its root offsets are RBP-relative (rootwalk's definition for
;   size -1 frames). SP moves at run time (`sub %reg, %rsp`), and a call with stack arguments is
;   bracketed by `sub $32, %rsp` / `add $32, %rsp` (no reserved call frame), which does not matter
;   for RBP-relative roots. LLVM's ocaml printer rejects these functions (frame size
;   >= 65536), so the gc "ocaml" form of this program fails to compile, as the test expects.
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> dynamic-alloca.ll
source_filename = "dynamic-alloca.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare void @use_buffer(i8*, i8*)
declare void @nine(i64, i64, i64, i64, i64, i64, i64, i64, i8*)

@COMPLEX_meta = internal constant i8 0

define i8* @vla(i64 %n, i8* %p) gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* @COMPLEX_meta)
  store i8* inttoptr (i64 77824 to i8*), i8** %a          ; 0x13000: POINTER, #0
  store i8* inttoptr (i64 73729 to i8*), i8** %b          ; 0x12001: COMPLEX, #1
  %buf = alloca i8, i64 %n, align 16
  %x = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  store i8* %x, i8** %b
  %y = load i8*, i8** %a
  call void @use_buffer(i8* %buf, i8* %y)
  call void @nine(i64 %n, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i8* %y)
  %z = load i8*, i8** %b
  ret i8* %z
}

define void @vla_in_loop(i64 %n) gc "plimmix" {
entry:
  %keep = alloca i8*, align 8
  call void @llvm.gcroot(i8** %keep, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %keep       ; 0x13000: POINTER, #0
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %next, %loop ]
  %buf = alloca i8, i64 %i, align 16
  %x = call i8* @alloc(i64 %i)
  store i8* %x, i8** %keep
  %y = load i8*, i8** %keep
  call void @use_buffer(i8* %buf, i8* %y)
  %next = add i64 %i, 1
  %done = icmp ugt i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
