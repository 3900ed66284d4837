/*
 * What rootwalk needs to know about a processor architecture, in one description per architecture
 * (src/arch/x86-64.ts; AArch64 will be a second file implementing the same interface). Everything
 * else asks the description: slot names, register contexts, the unwinder's frame-pointer climb,
 * native frames, signal frames, core files, `roots` output, and the tests that check the C runtime
 * against it (test/native-runtime/runtime-layout.test.ts).
 *
 * Registers are named by their DWARF numbers (the numbering of stack maps and .eh_frame). The
 * walker tracks only the callee-saved registers: a root can survive a call only in them or in
 * memory. `calleeSavedDwarf` fixes their ORDER, which is also:
 *   - the index k of walker/slot.ts context slots and of RegisterContext.values,
 *   - the column order of FrameDescriptors.savedRegOffsets,
 *   - the order of the native runtime's thread record (runtime.c rw_thread.regs) and of the frame
 *     its safepoint trampoline pushes (runtime-entry.S: frame[k] = calleeSaved[k]).
 */

export interface Architecture {
  /** As people write it: "x86-64". */
  readonly name: string;
  readonly wordBytes: number;
  /** DWARF numbers of the stack pointer, the frame pointer and the return-address column. */
  readonly dwarf: { readonly sp: number; readonly fp: number; readonly returnAddress: number };
  /** The callee-saved registers the walker tracks, in the one order (see above). */
  readonly calleeSavedDwarf: readonly number[];
  /** Their names (the keys of RegisterContext.from and of `roots` output), same order. */
  readonly calleeSavedNames: readonly string[];
  /** Index of the frame pointer in calleeSavedDwarf. */
  readonly framePointerIndex: number;
  /**
   * Where a frame's return address lies relative to its CFA (the caller's SP after the call
   * returns): x86-64's `call` pushes it just below, at CFA - 8.
   */
  readonly returnAddressCfaOffsetBytes: number;
  /** rootwalk's spelling of a DWARF register (`rbx`, `sp`, `xmm3`), as dumps and errors print it. */
  registerName(dwarf: number): string;
  /** The name llvm-dwarfdump prints for a DWARF register (`RBX`, `RIP`). */
  dwarfdumpName(dwarf: number): string;
  readonly signalContext: SignalContextLayout;
  readonly coreRegisters: CoreRegisterLayout;
}

/**
 * A signal frame on Linux: the kernel's sigreturn trampoline, and the saved registers of the
 * interrupted frame in the ucontext that the trampoline's SP points to.
 */
export interface SignalContextLayout {
  /** The trampoline's code (`__restore_rt`), recognised by its bytes as gdb does. */
  readonly sigreturnCode: readonly number[];
  /** Offset of the general-register array (uc_mcontext.gregs) in the ucontext. */
  readonly registersOffsetBytes: number;
  /** Index in that array (8-byte entries) of the interrupted SP, PC, and each callee-saved register (calleeSaved order). */
  readonly spIndex: number;
  readonly pcIndex: number;
  readonly calleeSavedIndex: readonly number[];
}

/** The registers of a thread in a core file's NT_PRSTATUS note (elf_prstatus.pr_reg). */
export interface CoreRegisterLayout {
  /** Offset of pr_reg in the note's descriptor. */
  readonly offsetBytes: number;
  /** The registers of pr_reg in order, 8 bytes each (user_regs_struct field names). */
  readonly names: readonly string[];
  /** The names of the SP and PC among them. */
  readonly sp: string;
  readonly pc: string;
}
