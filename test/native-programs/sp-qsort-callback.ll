; rootwalk native test program: sp-qsort-callback
; Exercises: managed code -> a C library function taking a callback (libc's qsort) -> managed
;   code that allocates and polls, so collections happen with libc's qsort frames between the
;   managed comparator and rw_main. rw_main keeps two objects (A: value 12345; B: value 777,
;   next = A) live across the qsort call: their roots are in rw_main's frame ABOVE the native
;   frames, found only by climbing libc by its CFI (or with the chunk list's fast path, by
;   climbing to the boundary). The comparator allocates two nodes holding the two keys, polls,
;   and compares the keys read back from the nodes; a wrong read sets @bad.
; Build: statepoint mode.
; Expected result: sum over i < 64 of i*i (the sorted array, checked in place) + 12345 + 777
;   = 85344 + 13122 = 98466. Errors: -1 a comparator read a wrong key, -2 the array is not
;   sorted, -3 A or B lost its value or B.next is not A.
source_filename = "sp-qsort-callback"

declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_safepoint()
declare i8* @malloc(i64) #1
declare void @free(i8*) #1
declare void @qsort(i8*, i64, i64, i32 (i8*, i8*)*)
@__LLVM_StackMaps = extern_weak global i8
@bad = internal global i64 0
; qsort is called through this pointer: RS4GC treats a direct call to a function LLVM knows as a
; C library function (TargetLibraryInfo: qsort) as a GC leaf and makes no statepoint for it.
@qsort_ptr = internal global void (i8*, i64, i64, i32 (i8*, i8*)*)* @qsort

define internal i8 addrspace(1)* @ld(i8 addrspace(1)* %o, i64 %i) #1 {
  %s = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %a = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s, i64 %i
  %v = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %a, align 8
  ret i8 addrspace(1)* %v
}
define internal void @st(i8 addrspace(1)* %o, i64 %i, i8 addrspace(1)* %v) #1 {
  %s = bitcast i8 addrspace(1)* %o to i8 addrspace(1)* addrspace(1)*
  %a = getelementptr i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %s, i64 %i
  store i8 addrspace(1)* %v, i8 addrspace(1)* addrspace(1)* %a, align 8
  ret void
}
define internal i64 @ldraw(i8 addrspace(1)* %o, i64 %off) #1 {
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 %off
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %p, align 8
  ret i64 %v
}
define internal void @straw(i8 addrspace(1)* %o, i64 %off, i64 %v) #1 {
  %b = getelementptr i8, i8 addrspace(1)* %o, i64 %off
  %p = bitcast i8 addrspace(1)* %b to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %p, align 8
  ret void
}
attributes #1 = { noinline "gc-leaf-function" }

define internal i8 addrspace(1)* @node(i8 addrspace(1)* %next, i64 %v) gc "statepoint-example" {
entry:
  %n = call i8 addrspace(1)* @gc_alloc(i64 1, i64 8)
  call void @st(i8 addrspace(1)* %n, i64 0, i8 addrspace(1)* %next)
  call void @straw(i8 addrspace(1)* %n, i64 8, i64 %v)
  ret i8 addrspace(1)* %n
}

; The comparator qsort calls: keys are i64 in C memory.
define i32 @cmp(i8* %pa, i8* %pb) gc "statepoint-example" {
entry:
  %ia = bitcast i8* %pa to i64*
  %ib = bitcast i8* %pb to i64*
  %a = load i64, i64* %ia
  %b = load i64, i64* %ib
  %n1 = call i8 addrspace(1)* @node(i8 addrspace(1)* null, i64 %a)
  %n2 = call i8 addrspace(1)* @node(i8 addrspace(1)* %n1, i64 %b)
  call void @gc_safepoint()
  %m1 = call i8 addrspace(1)* @ld(i8 addrspace(1)* %n2, i64 0)
  %ra = call i64 @ldraw(i8 addrspace(1)* %m1, i64 8)
  %rb = call i64 @ldraw(i8 addrspace(1)* %n2, i64 8)
  %oka = icmp eq i64 %ra, %a
  %okb = icmp eq i64 %rb, %b
  %ok = and i1 %oka, %okb
  br i1 %ok, label %cmp, label %fail
fail:
  store i64 1, i64* @bad
  br label %cmp
cmp:
  %lt = icmp slt i64 %ra, %rb
  %gt = icmp sgt i64 %ra, %rb
  %l = select i1 %lt, i32 -1, i32 0
  %r = select i1 %gt, i32 1, i32 %l
  ret i32 %r
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %A = call i8 addrspace(1)* @node(i8 addrspace(1)* null, i64 12345)
  %B = call i8 addrspace(1)* @node(i8 addrspace(1)* %A, i64 777)
  %mem = call i8* @malloc(i64 512)
  %arr = bitcast i8* %mem to i64*
  br label %fill
fill:
  %i = phi i64 [ 0, %entry ], [ %i1, %fill ]
  %k0 = mul i64 %i, 37
  %k = urem i64 %k0, 64
  %slot = getelementptr i64, i64* %arr, i64 %i
  store i64 %k, i64* %slot
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, 64
  br i1 %more, label %fill, label %sort
sort:
  %qs = load void (i8*, i64, i64, i32 (i8*, i8*)*)*, void (i8*, i64, i64, i32 (i8*, i8*)*)** @qsort_ptr
  call void %qs(i8* %mem, i64 64, i64 8, i32 (i8*, i8*)* @cmp)
  br label %check
check:
  %j = phi i64 [ 0, %sort ], [ %j1, %next ]
  %acc = phi i64 [ 0, %sort ], [ %acc1, %next ]
  %s2 = getelementptr i64, i64* %arr, i64 %j
  %v = load i64, i64* %s2
  %sorted = icmp eq i64 %v, %j
  br i1 %sorted, label %next, label %unsorted
next:
  %sq = mul i64 %v, %v
  %acc1 = add i64 %acc, %sq
  %j1 = add i64 %j, 1
  %done = icmp eq i64 %j1, 64
  br i1 %done, label %objects, label %check
unsorted:
  ret i64 -2
objects:
  call void @free(i8* %mem)
  %va = call i64 @ldraw(i8 addrspace(1)* %A, i64 8)
  %vb = call i64 @ldraw(i8 addrspace(1)* %B, i64 8)
  %bn = call i8 addrspace(1)* @ld(i8 addrspace(1)* %B, i64 0)
  %same = icmp eq i8 addrspace(1)* %bn, %A
  %oka = icmp eq i64 %va, 12345
  %okb = icmp eq i64 %vb, 777
  %ok1 = and i1 %oka, %okb
  %ok = and i1 %ok1, %same
  br i1 %ok, label %good, label %lost
lost:
  ret i64 -3
good:
  %flag = load i64, i64* @bad
  %isbad = icmp ne i64 %flag, 0
  br i1 %isbad, label %badcmp, label %fine
badcmp:
  ret i64 -1
fine:
  %s1 = add i64 %acc1, %va
  %s = add i64 %s1, %vb
  ret i64 %s
}
