; rootwalk run test program (statepoint): rw_main starts one thread that recurses without end,
; 512 bytes a frame, until it runs into the guard below its stack (--thread-stack): the run must
; stop with exit 3 naming the thread and the guard, never run on into memory below the stack.
declare void @gc_init(i8*)
declare i64 @gc_thread_start(void (i64)*, i64)
declare void @gc_thread_join(i64)
@__LLVM_StackMaps = extern_weak global i8

; Each frame passes the address of its own buffer down: no tail call, no loop.
define i64 @down(i64* %up) gc "statepoint-example" {
entry:
  %buffer = alloca [64 x i64]
  %p = getelementptr [64 x i64], [64 x i64]* %buffer, i64 0, i64 0
  %v = load volatile i64, i64* %up
  store volatile i64 %v, i64* %p
  %r = call i64 @down(i64* %p)
  %s = add i64 %r, %v
  ret i64 %s
}

define void @worker(i64 %a) gc "statepoint-example" {
entry:
  %x = alloca i64
  store i64 %a, i64* %x
  %r = call i64 @down(i64* %x)
  ret void
}

define i64 @rw_main() gc "statepoint-example" {
entry:
  call void @gc_init(i8* @__LLVM_StackMaps)
  %h = call i64 @gc_thread_start(void (i64)* @worker, i64 1)
  call void @gc_thread_join(i64 %h)
  ret i64 0
}
