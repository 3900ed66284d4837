; rootwalk run test program (plimmix): gcroot allocas, plain i8* pointers; a list built and
; summed with safepoints. Pointers are reloaded from their gcroot slots after every call.
source_filename = "rw_plimmix_list.c"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_safepoint()
@"_GC_MAP_rw_plimmix_list.c" = external global i8

define i8* @cons(i64 %v, i8* %next) gc "plimmix" {
entry:
  %r = alloca i8*, align 8
  call void @llvm.gcroot(i8** %r, i8* null)
  store i8* %next, i8** %r
  %n = call i8* @gc_alloc(i64 1, i64 8)
  %nx = load i8*, i8** %r
  %slot = bitcast i8* %n to i8**
  store i8* %nx, i8** %slot
  %raw = getelementptr i8, i8* %n, i64 8
  %rawi = bitcast i8* %raw to i64*
  store i64 %v, i64* %rawi
  ret i8* %n
}

define i8* @build_list(i64 %n) gc "plimmix" {
entry:
  %acc = alloca i8*, align 8
  call void @llvm.gcroot(i8** %acc, i8* null)
  store i8* null, i8** %acc
  br label %loop
loop:
  %i = phi i64 [ 1, %entry ], [ %i1, %loop ]
  %a = load i8*, i8** %acc
  %c = call i8* @cons(i64 %i, i8* %a)
  store i8* %c, i8** %acc
  %i1 = add i64 %i, 1
  %done = icmp ugt i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  %res = load i8*, i8** %acc
  ret i8* %res
}

define i64 @sum_list(i8* %head) gc "plimmix" {
entry:
  %p = alloca i8*, align 8
  call void @llvm.gcroot(i8** %p, i8* null)
  store i8* %head, i8** %p
  br label %loop
loop:
  %s = phi i64 [ 0, %entry ], [ %s1, %body ]
  %k = phi i64 [ 1, %entry ], [ %k1, %body ]
  call void @gc_safepoint()
  %x = load i8*, i8** %p
  %isnull = icmp eq i8* %x, null
  br i1 %isnull, label %exit, label %body
body:
  %raw = getelementptr i8, i8* %x, i64 8
  %rawi = bitcast i8* %raw to i64*
  %v = load i64, i64* %rawi
  %m = mul i64 %v, %k
  %s1 = add i64 %s, %m
  %k1 = add i64 %k, 1
  %slot = bitcast i8* %x to i8**
  %next = load i8*, i8** %slot
  store i8* %next, i8** %p
  br label %loop
exit:
  ret i64 %s
}

define i64 @rw_main() gc "plimmix" {
entry:
  %l = alloca i8*, align 8
  %t = alloca i8*, align 8
  call void @llvm.gcroot(i8** %l, i8* null)
  call void @llvm.gcroot(i8** %t, i8* null)
  store i8* null, i8** %l
  store i8* null, i8** %t
  call void @gc_init(i8* @"_GC_MAP_rw_plimmix_list.c")
  %l0 = call i8* @build_list(i64 500)
  store i8* %l0, i8** %l
  %t0 = call i8* @build_list(i64 300)
  store i8* %t0, i8** %t
  %a = load i8*, i8** %l
  %s1 = call i64 @sum_list(i8* %a)
  %b = load i8*, i8** %t
  %s2 = call i64 @sum_list(i8* %b)
  %c = load i8*, i8** %l
  %s3 = call i64 @sum_list(i8* %c)
  %same = icmp eq i64 %s1, %s3
  %bad = select i1 %same, i64 0, i64 -1000000000000
  %x = mul i64 %s1, 1000
  %y = add i64 %x, %s2
  %z = add i64 %y, %bad
  ret i64 %z
}
