; rootwalk corpus: stackmap-ids
; Covers: stackmap IDs at the edges of u64 and records that share an instruction offset.
;   IDs 0, 2^63 (9223372036854775808), 0x1122334455667788 and UINT64_MAX (which looks like the
;   "too many locations" overflow stub ID, but has a location here) are stored in full: only
;   statepoint IDs are truncated (see statepoint-attributes.ll).
;   Two stackmaps with no instruction between them get the same instruction offset (a zero-byte
;   shadow emits no code), so a table keyed by address sees two records for one address.
;   A stackmap with a 16-byte shadow after a call (llc pads the shadow with nops).
;   @first_instruction: a stackmap as the only thing in a function: offset 4, right after
;   `push %rbp; mov %rsp,%rbp` (stackmaps force a frame pointer, so offset 0 does not occur).
; Build: llc -filetype=obj stackmap-ids.ll

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @callee()

define void @extreme_ids(i64 %a) {
entry:
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 0, i32 0, i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 -1, i32 0, i64 %a)
  call void @callee()
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 -9223372036854775808, i32 16)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1234605616436508552, i32 0, i64 %a)
  ret void
}

define void @first_instruction() {
entry:
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 5, i32 0)
  ret void
}
