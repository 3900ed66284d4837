; rootwalk run test program (statepoint): prints through printf, puts and write(1, ...) and returns 7.
; Under `rootwalk run --json` all three must end on stderr: stdout carries the JSON alone.
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare i32 @printf(i8*, ...)
declare i32 @puts(i8*)
declare i64 @write(i32, i8*, i64)
@__LLVM_StackMaps = external global i8
@fmt = private constant [12 x i8] c"printf %ld\0A\00"
@msg = private constant [5 x i8] c"puts\00"
@raw = private constant [6 x i8] c"write\0A"
define i64 @rw_main() gc "statepoint-example" {
  call void @gc_init(i8* @__LLVM_StackMaps)
  %o = call i8 addrspace(1)* @gc_alloc(i64 0, i64 8)
  call i32 (i8*, ...) @printf(i8* getelementptr ([12 x i8], [12 x i8]* @fmt, i64 0, i64 0), i64 42)
  call i32 @puts(i8* getelementptr ([5 x i8], [5 x i8]* @msg, i64 0, i64 0))
  call i64 @write(i32 1, i8* getelementptr ([6 x i8], [6 x i8]* @raw, i64 0, i64 0), i64 6)
  ret i64 7
}
