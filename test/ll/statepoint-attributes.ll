; rootwalk corpus: statepoint-attributes
; Covers: call-site attributes RS4GC reads, and a large frame.
;   coldcc call: the statepoint's first location is `Constant 9` (the calling convention).
;   "statepoint-id"="1234605616436508552" (0x1122334455667788): the IR statepoint has the full
;     ID, but llc 14 stores only its low 32 bits: Record ID 1432778632 (0x55667788). Stackmap
;     IDs are not truncated (stackmap-ids.ll).
;   "statepoint-id"="7" + "statepoint-num-patch-bytes"="13": 13 bytes of nops replace the call.
;   @large_frame: a 128 KiB alloca: `subq $131080, %rsp`, StackSize 131080.
; Build: opt -passes=rewrite-statepoints-for-gc -S statepoint-attributes.ll | llc -filetype=obj

declare coldcc void @cold_callee(i64)
declare void @callee(i64)
declare void @use(i8*)

define i64 @statepoint_attributes(i64 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  call coldcc void @cold_callee(i64 1)
  call void @callee(i64 2) #0
  call void @callee(i64 3) #1
  %v = load i64, i64 addrspace(1)* %obj
  ret i64 %v
}

define i64 @large_frame(i64 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %big = alloca [131072 x i8]
  %p = getelementptr [131072 x i8], [131072 x i8]* %big, i64 0, i64 0
  call void @use(i8* %p)
  %v = load i64, i64 addrspace(1)* %obj
  ret i64 %v
}

attributes #0 = { "statepoint-id"="1234605616436508552" }
attributes #1 = { "statepoint-id"="7" "statepoint-num-patch-bytes"="13" }
