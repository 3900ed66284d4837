; plimmix test program: nested-calls
; Covers: gc functions calling gc functions (outer -> middle -> inner), a call inside a loop,
;   an internal function (its function-address relocation is against .text + addend), a tail call
;   (a `jmp`: not a safe point), a gc function without calls (S = 0, so R = 0 by the plugin's
;   rule), an available_externally gc function (no code: no record) and a function without gc
;   (no record). Every gc function with safe points keeps its roots live across its calls.
; Marker stores: 0x10000 + (type << 12) + index into each slot before the first call.
; Build: llc -filetype=obj -load=<plimmix plugin> nested-calls.ll
source_filename = "nested-calls.c"

declare void @llvm.gcroot(i8**, i8*)
declare i8* @alloc(i64)
declare void @use(i8*)
declare i8* @external_tail(i8*)

@TRAIT_meta = internal constant i8 0

define internal fastcc i8* @inner(i8* %x) gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %slot, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %slot      ; 0x13000: POINTER, #0
  %fresh = call i8* @alloc(i64 16)
  store i8* %fresh, i8** %slot
  call void @use(i8* %x)
  %r = load i8*, i8** %slot
  ret i8* %r
}

define i8* @middle(i8* %x) gc "plimmix" {
entry:
  %a = alloca i8*, align 8
  %b = alloca i8*, align 8
  call void @llvm.gcroot(i8** %a, i8* null)
  call void @llvm.gcroot(i8** %b, i8* @TRAIT_meta)
  store i8* inttoptr (i64 77824 to i8*), i8** %a         ; 0x13000: POINTER, #0
  store i8* inttoptr (i64 69633 to i8*), i8** %b         ; 0x11001: TRAIT, #1
  %first = call fastcc i8* @inner(i8* %x)
  store i8* %x, i8** %a
  store i8* %first, i8** %b
  %a1 = load i8*, i8** %a
  %second = call fastcc i8* @inner(i8* %a1)
  %b1 = load i8*, i8** %b
  call void @use(i8* %b1)
  ret i8* %second
}

define void @outer(i64 %n) gc "plimmix" {
entry:
  %keep = alloca i8*, align 8
  call void @llvm.gcroot(i8** %keep, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %keep      ; 0x13000: POINTER, #0
  %start = call i8* @alloc(i64 8)
  store i8* %start, i8** %keep
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %cur = load i8*, i8** %keep
  %r = call i8* @middle(i8* %cur)
  store i8* %r, i8** %keep
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  %last = load i8*, i8** %keep
  call void @use(i8* %last)
  ret void
}

define i8* @tail_caller(i8* %x) gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %slot, i8* null)
  store i8* inttoptr (i64 77824 to i8*), i8** %slot      ; 0x13000: POINTER, #0
  %y = call i8* @alloc(i64 8)
  store i8* %y, i8** %slot
  call void @use(i8* %x)
  %z = load i8*, i8** %slot
  %r = tail call i8* @external_tail(i8* %z)
  ret i8* %r
}

define i8* @leaf_with_root(i8* %x) gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %slot, i8* null)
  store i8* %x, i8** %slot
  %r = load volatile i8*, i8** %slot
  ret i8* %r
}

define available_externally i8* @inline_only(i8* %x) gc "plimmix" {
entry:
  %slot = alloca i8*, align 8
  call void @llvm.gcroot(i8** %slot, i8* null)
  %y = call i8* @alloc(i64 8)
  ret i8* %y
}

define void @no_gc(i8* %x) {
entry:
  call void @use(i8* %x)
  %y = call i8* @inline_only(i8* %x)
  ret void
}
