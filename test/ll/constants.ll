; rootwalk corpus: constants
; Covers: constant operands of stackmaps, how they are encoded and printed.
;   Constant (kind 4) holds a sign-extended 32-bit value, always with size 8; llvm-readobj prints
;   it as unsigned 32-bit: i8 -1 -> 4294967295, i16 -2 -> 4294967294, i32 -3 -> 4294967293,
;   i1 true -> 4294967295 (i1 is sign-extended too), i32 -2147483648 -> 2147483648.
;   ConstantIndex (kind 5) for values outside i32: INT64_MIN (9223372036854775808 unsigned),
;   INT64_MAX, 2^31, -2^31-1. i64 -2^31 still fits a Constant. The pool is deduplicated:
;   the second record reuses the first record's entries.
; Build: llc -filetype=obj constants.ll

declare void @llvm.experimental.stackmap(i64, i32, ...)

define void @constants() {
entry:
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 3, i32 0, i64 -9223372036854775808, i64 9223372036854775807, i8 -1, i16 -2, i32 -3, i64 -4, i32 2147483647, i32 -2147483648, i64 2147483647, i64 2147483648, i64 -2147483648, i64 -2147483649, i1 true, i64 0, i64 -1)
  ret void
}

define void @constants_again(i64 %x) {
entry:
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 4, i32 0, i64 9223372036854775807, i64 -9223372036854775808, i64 %x, i64 2147483648)
  ret void
}
