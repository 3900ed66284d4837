/*
 * What rootwalk needs to know about a processor architecture, in one description per architecture
 * (src/arch/x86-64.ts, src/arch/aarch64.ts; src/arch/elf-architecture.ts picks one by e_machine). Everything
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
  /** Node's `process.arch` on this machine ("x64", "arm64"): how rootwalk knows what it runs on. */
  readonly nodeArch: string;
  /**
   * The GNU target triple of Linux on this machine ("aarch64-linux-gnu"): llc's `-mtriple` for the
   * programs `rootwalk run` builds, what `gcc -dumpmachine` prints for a native compiler, and the
   * prefix of Debian's cross compiler (`aarch64-linux-gnu-gcc`) and its sysroot
   * (`/usr/aarch64-linux-gnu`).
   */
  readonly linuxTriple: string;
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
   * Bytes the call instruction itself pushes below the caller's SP: x86-64's `call` pushes the
   * 8-byte return address; AArch64's `bl` pushes nothing (the return address goes to x30). A
   * frame's size (frame descriptors' frameSizeBytes) is CFA - SP - callPushBytes.
   */
  readonly callPushBytes: number;
  /**
   * Where a frame's return address lies relative to its CFA (the caller's SP after the call
   * returns) when the call pushed it: x86-64, at CFA - 8. Undefined when only the CFI rule for
   * the return-address column says where it is (AArch64: saved with x30, or still in x30).
   */
  readonly returnAddressCfaOffsetBytes: number | undefined;
  /**
   * True when SP never moves in the body of a fixed-size frame (AArch64: outgoing arguments are
   * stored into space the prologue reserved), so the recorded stack size is the frame size even
   * where the CFA rule is frame-pointer based. False on x86-64, where arguments may be pushed.
   */
  readonly spFixedInFixedSizeFrame: boolean;
  /**
   * The frame rule a dynamic frame without unwind info is assumed to have, or undefined when
   * none can be assumed: x86-64 frames of variable size always have `push rbp; mov rsp, rbp`,
   * so CFA = rbp + 16 with the caller's rbp at CFA - 16.
   */
  readonly noUnwindFramePointerRule: { readonly cfaOffsetBytes: number; readonly savedFpCfaOffsetBytes: number } | undefined;
  /**
   * True when call-frame opcode 0x2d is DW_CFA_AARCH64_negate_ra_state (AArch64 pointer
   * authentication: it toggles whether the return address is signed from that point on). On
   * other machines 0x2d means something else (SPARC's DW_CFA_GNU_window_save) and is refused.
   */
  readonly cfiNegateRaState: boolean;
  /**
   * Pointer authentication: the bits of a user-space code address below its signature. A return
   * address the CFI marks signed (CfiRow.returnAddressSigned, FLAG_RETURN_ADDRESS_SIGNED) keeps
   * only these (AArch64 Linux: 48, the kernel's user address size; the signature sits above).
   * Undefined where return addresses are never signed (x86-64).
   */
  readonly signedAddressBits: number | undefined;
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
  /**
   * Offset of the ucontext from the SP the trampoline runs with: x86-64 0 (the handler's `ret`
   * popped the pretcode), AArch64 128 (struct rt_sigframe: siginfo, then the ucontext).
   */
  readonly ucontextOffsetBytes: number;
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
