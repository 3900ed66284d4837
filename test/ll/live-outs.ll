; rootwalk corpus: live-outs
; Covers: patchpoint live-out registers of every size, including 32-byte ymm registers.
;   @ymm_live_out:        anyregcc patchpoint (the callee preserves all registers) with ymm2,
;                         xmm1 and r12 live across it: `R#7 (8) R#12 (8) R#18 (16) R#19 (32)`.
;   @ymm_vector_value:    a <8 x i32> value as a patchpoint operand: a Register location of
;                         size 32 (`Register R#18, size: 32`), and 32-byte live-outs.
;   @zmm_live_out:        avx512f: anyregcc does not preserve zmm, so zmm3 is spilled to a
;                         64-byte aligned slot; the realigned frame has StackSize UINT64_MAX.
;   @c_patchpoint_live_out: C calling convention: live-outs are the result (rax) and
;                         callee-saved registers (rbx) plus rsp.
; Build: llc -filetype=obj live-outs.ll   (target features per function via attributes)
; LLVM 14 trap: llc segfaults in StackMaps::createLiveOutReg when a register that has no register
;   class is live across a patchpoint: $mxcsr (any FP arithmetic after it) or $ssp (any later
;   call). Hence inline asm to define and use the vector registers, and no call after a
;   patchpoint. (`-enable-patchpoint-liveness=false` avoids the crash but drops all live-outs.)

declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)

define void @ymm_live_out(i64 %a) #0 {
entry:
  %v = call <4 x double> asm sideeffect "", "={ymm2}"()
  %w = call <2 x double> asm sideeffect "", "={xmm1}"()
  %q = call i64 asm sideeffect "", "={r12}"()
  call anyregcc void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 10, i32 15, i8* null, i32 0, i64 %a)
  call void asm sideeffect "", "{ymm2},{xmm1},{r12}"(<4 x double> %v, <2 x double> %w, i64 %q)
  ret void
}

define i64 @ymm_vector_value(<8 x i32> %x, <8 x i32> %y, i64 %a) #1 {
entry:
  %s = add <8 x i32> %x, %y
  %r = call anyregcc i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 11, i32 15, i8* null, i32 1, i64 %a, <8 x i32> %s)
  %t = mul <8 x i32> %s, %x
  %e = extractelement <8 x i32> %t, i32 3
  %z = zext i32 %e to i64
  %u = add i64 %z, %r
  ret i64 %u
}

define void @zmm_live_out(i64 %a) #2 {
entry:
  %v = call <8 x double> asm sideeffect "", "={zmm3}"()
  call anyregcc void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 12, i32 15, i8* null, i32 0, i64 %a)
  call void asm sideeffect "", "{zmm3}"(<8 x double> %v)
  ret void
}

define i64 @c_patchpoint_live_out(i64 %a, i64 %b) {
entry:
  %q = call i64 asm sideeffect "", "={rbx}"()
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 13, i32 15, i8* null, i32 2, i64 %a, i64 %b)
  %s = add i64 %r, %q
  ret i64 %s
}

attributes #0 = { "target-features"="+avx" }
attributes #1 = { "target-features"="+avx2" }
attributes #2 = { "target-features"="+avx512f" }
