; plimmix test program: frame-pointer
; Covers: functions with a frame pointer ("frame-pointer"="all", and "non-leaf"), where LLVM's
;   GCRoot offsets are RBP-relative (the original's defect); the plugin converts them to
;   SP-relative offsets (sp = fp + StackSize - 8). One function keeps values in callee-saved
;   registers across calls (pushes of rbx/r12.. after `push %rbp`, counted in StackSize), and
;   calls a function with 9 arguments (stack arguments stored into the reserved call frame).
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> frame-pointer.ll
source_filename = "frame-pointer.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare i64 @compute(i64)
declare void @nine(i64, i64, i64, i64, i64, i64, i64, i64, i8*)

@TRAIT_meta = internal constant i8 0
@ATOMIC_meta = internal constant i8 0

define i8* @fp_simple(i8* %p) #0 gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* @TRAIT_meta)
  store i8* inttoptr (i64 77824 to i8*), i8** %a          ; 0x13000: POINTER, #0
  store i8* inttoptr (i64 69633 to i8*), i8** %b          ; 0x11001: TRAIT, #1
  %x = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  store i8* %x, i8** %b
  %y = load i8*, i8** %a
  call void @use(i8* %y)
  %z = load i8*, i8** %b
  ret i8* %z
}

define i64 @fp_callee_saved(i64 %n, i8* %p) #0 gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  %c = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* @ATOMIC_meta)
  call void @llvm.gcroot(i8** %c, i8* @TRAIT_meta)
  store i8* inttoptr (i64 77824 to i8*), i8** %a          ; 0x13000: POINTER, #0
  store i8* inttoptr (i64 65537 to i8*), i8** %b          ; 0x10001: ATOMIC, #1
  store i8* inttoptr (i64 69634 to i8*), i8** %c          ; 0x11002: TRAIT, #2
  %v1 = call i64 @compute(i64 %n)
  store i8* %p, i8** %a
  %v2 = call i64 @compute(i64 %v1)
  %x = call i8* @alloc(i64 %v2)
  store i8* %x, i8** %c
  %v3 = call i64 @compute(i64 %v2)
  %y = load i8*, i8** %a
  call void @nine(i64 %n, i64 %v1, i64 %v2, i64 %v3, i64 5, i64 6, i64 7, i64 8, i8* %y)
  %s1 = add i64 %n, %v1
  %s2 = add i64 %s1, %v2
  %s3 = add i64 %s2, %v3
  %z = load i8*, i8** %c
  call void @use(i8* %z)
  ret i64 %s3
}

define i8* @fp_non_leaf(i8* %p) #1 gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %a          ; 0x13000: POINTER, #0
  %x = call i8* @alloc(i64 16)
  store i8* %p, i8** %a
  %y = load i8*, i8** %a
  call void @use(i8* %y)
  ret i8* %x
}

attributes #0 = { "frame-pointer"="all" }
attributes #1 = { "frame-pointer"="non-leaf" }
