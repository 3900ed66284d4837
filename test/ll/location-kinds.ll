; rootwalk corpus: location-kinds
; Covers: all five stack map location kinds in stackmap records.
;   @kinds:  Register (values in callee-saved registers), Direct (an alloca: `Direct R#6 + -24`),
;            Constant (7), ConstantIndex (0x123456789 does not fit in 32 bits).
;   @spills: sixteen values live at one stackmap: twelve stay in registers, the rest are
;            Indirect [R#6 + -off] (spill slots; stackmaps force a frame pointer).
; Build: llc -filetype=obj location-kinds.ll   (llc's default -O2, no opt step)

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @use(i64*)
declare i64 @get()

define i64 @kinds(i64 %a, i64 %b) {
entry:
  %slot = alloca i64
  store i64 %a, i64* %slot
  call void @use(i64* %slot)
  %c = add i64 %a, %b
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 0, i64 %a, i64 %c, i64* %slot, i64 7, i64 4886718345)
  ret i64 %c
}

define i64 @spills(i64* %p) {
entry:
  %g0 = getelementptr i64, i64* %p, i64 0
  %v0 = load volatile i64, i64* %g0
  %g1 = getelementptr i64, i64* %p, i64 1
  %v1 = load volatile i64, i64* %g1
  %g2 = getelementptr i64, i64* %p, i64 2
  %v2 = load volatile i64, i64* %g2
  %g3 = getelementptr i64, i64* %p, i64 3
  %v3 = load volatile i64, i64* %g3
  %g4 = getelementptr i64, i64* %p, i64 4
  %v4 = load volatile i64, i64* %g4
  %g5 = getelementptr i64, i64* %p, i64 5
  %v5 = load volatile i64, i64* %g5
  %g6 = getelementptr i64, i64* %p, i64 6
  %v6 = load volatile i64, i64* %g6
  %g7 = getelementptr i64, i64* %p, i64 7
  %v7 = load volatile i64, i64* %g7
  %g8 = getelementptr i64, i64* %p, i64 8
  %v8 = load volatile i64, i64* %g8
  %g9 = getelementptr i64, i64* %p, i64 9
  %v9 = load volatile i64, i64* %g9
  %g10 = getelementptr i64, i64* %p, i64 10
  %v10 = load volatile i64, i64* %g10
  %g11 = getelementptr i64, i64* %p, i64 11
  %v11 = load volatile i64, i64* %g11
  %g12 = getelementptr i64, i64* %p, i64 12
  %v12 = load volatile i64, i64* %g12
  %g13 = getelementptr i64, i64* %p, i64 13
  %v13 = load volatile i64, i64* %g13
  %g14 = getelementptr i64, i64* %p, i64 14
  %v14 = load volatile i64, i64* %g14
  %g15 = getelementptr i64, i64* %p, i64 15
  %v15 = load volatile i64, i64* %g15
  %r = call i64 @get()
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 2, i32 0, i64 %v0, i64 %v1, i64 %v2, i64 %v3, i64 %v4, i64 %v5, i64 %v6, i64 %v7, i64 %v8, i64 %v9, i64 %v10, i64 %v11, i64 %v12, i64 %v13, i64 %v14, i64 %v15)
  %s0 = add i64 %r, %v0
  %s1 = add i64 %s0, %v1
  %s2 = add i64 %s1, %v2
  %s3 = add i64 %s2, %v3
  %s4 = add i64 %s3, %v4
  %s5 = add i64 %s4, %v5
  %s6 = add i64 %s5, %v6
  %s7 = add i64 %s6, %v7
  %s8 = add i64 %s7, %v8
  %s9 = add i64 %s8, %v9
  %s10 = add i64 %s9, %v10
  %s11 = add i64 %s10, %v11
  %s12 = add i64 %s11, %v12
  %s13 = add i64 %s12, %v13
  %s14 = add i64 %s13, %v14
  %s15 = add i64 %s14, %v15
  ret i64 %s15
}
