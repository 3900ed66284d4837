; plimmix test program: stack-args
; Covers: calls with more than 6 integer arguments (9 and 12: 3 and 6 of them on the stack). At -O2
;   llc's X86CallFrameOptimization would push those arguments, moving SP at the return address by
;   an amount v1 cannot record; the plugin turns the optimization off, so they are stored into the
;   reserved call frame. Also a gc function with 8 IR parameters: its record says 2 stack arguments.
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> stack-args.ll
source_filename = "stack-args.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare void @nine(i64, i64, i64, i64, i64, i64, i64, i64, i8*)
declare i8* @twelve(i8*, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i8*)

@COMPLEX_meta = internal constant i8 0

define i8* @pass_nine(i8* %p) gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* @COMPLEX_meta)
  store i8* inttoptr (i64 77824 to i8*), i8** %a          ; 0x13000: POINTER, #0
  store i8* inttoptr (i64 73729 to i8*), i8** %b          ; 0x12001: COMPLEX, #1
  %x = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  store i8* %x, i8** %b
  %y = load i8*, i8** %a
  call void @nine(i64 1, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i8* %y)
  %z = load i8*, i8** %b
  ret i8* %z
}

define i8* @eight_params(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i64 %g, i8* %obj) gc "plimmix" {
entry:
  %keep = alloca i8*, align 8
  %other = alloca i8*, align 8
  call void @llvm.gcroot(i8** %keep, i8* null)
  call void @llvm.gcroot(i8** %other, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %keep       ; 0x13000: POINTER, #0
  store i8* inttoptr (i64 77825 to i8*), i8** %other      ; 0x13001: POINTER, #1
  %fresh = call i8* @alloc(i64 %g)
  store i8* %obj, i8** %keep
  store i8* %fresh, i8** %other
  %k = load i8*, i8** %keep
  %r = call i8* @twelve(i8* %k, i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i64 %g, i64 9, i64 10, i64 11, i8* %fresh)
  %o = load i8*, i8** %other
  call void @nine(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f, i64 %g, i64 0, i8* %o)
  %k2 = load i8*, i8** %keep
  call void @use(i8* %k2)
  ret i8* %r
}
