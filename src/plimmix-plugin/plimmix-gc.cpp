//===- plimmix-gc.cpp - the `plimmix` GC strategy and its _GC_MAP_ v1 printer -===//
//
// An LLVM 14 plugin for llc (`llc -load=plimmix-gc.so`) that registers
//
//   * a GCStrategy named "plimmix": gcroot-based (llvm.gcroot allocas are the roots, no
//     statepoints), a safe point after every non-tail call, GC metadata wanted;
//   * a GCMetadataPrinter for "plimmix" that writes the module's stack map in the `_GC_MAP_` v1
//     format (shared/notes/plimmix-format.md; decoded by src/stackmap/plimmix-map.ts) into the
//     object's data section. LLVM's default `.llvm_stackmaps` section is not involved: gcroot
//     functions produce no StackMaps records, and emitStackMaps keeps the default (false) so that
//     stackmap/statepoint records of *other* functions in the module are never dropped.
//
// Build: g++ -shared -fPIC -O2 -fno-rtti $(llvm-config --cxxflags) plimmix-gc.cpp -o plimmix-gc.so
// (src/toolchain/plimmix-plugin.ts does this and caches the result). -fno-rtti because libLLVM
// is built without RTTI: a subclass compiled with RTTI would need typeinfo symbols that do not
// exist. The plugin is not linked against libLLVM; llc provides the symbols when it loads it.
//
// ============================================================================================
// The map: exact bytes (little-endian; offsets from the label)
// ============================================================================================
//
//   .data, .p2align 3
//   .globl _GC_MAP_<source file name>, @object, .size = total bytes
//   Header                         16 bytes
//     +0   i32  version = 1
//     +4   u32  0                  (the seed wrote the version as an i64)
//     +8   i32  N = number of function records (every defined gc "plimmix" function)
//     +12  u32  0                  (padding: records start 8-aligned, also when N = 0)
//   Function record x N            24 + 8*S + 8*R bytes each, so every record stays 8-aligned
//     +0   u64  function address   (symbol reference: R_X86_64_64 in a .o)
//     +8   i32  frame size in 8-byte words = StackSize / 8, or -1 for a dynamic frame
//     +12  i32  stack arguments    = max(0, IR argument count - 6), as the format defines it
//                                    (it counts IR arguments, not ABI classes)
//     +16  i32  R = number of roots
//     +20  i32  S = number of safe points
//     +24  u64  x S                safe point = the return address of each non-tail call
//     +24+8S (i32 offset in bytes, i32 type) x R
//   Globals                        (at 16 + sum of records: always 8-aligned)
//     +0   i32  G = number of global roots
//     +4   u32  0                  (padding, always present, also when G = 0: the map's size is a
//                                   multiple of 8)
//     +8   u64  x G                absolute addresses of the global roots (R_X86_64_64)
//
// No self pointer precedes the label (the original emitted one; LLVM's ocaml printer still emits
// a `.quad 0` before its frametable). With N = 0, G is at offset 16 like for any N.
//
// ============================================================================================
// Decisions (each one a defect of the original, or a gap in the note, made explicit)
// ============================================================================================
//
// Frame size and dynamic frames.
//   GCMachineCodeAnalysis records MachineFrameInfo::getStackSize() (bytes below the return
//   address: pushed RBP, pushed callee-saved registers and the `sub rsp`), or UINT64_MAX when
//   the frame has variable-sized objects (dynamic allocas) or is realigned. That is exactly what
//   finishAssembly can see: getFrameSize() == UINT64_MAX is a dynamic frame, written as -1.
//
// Root offsets (the original's defect: FP-relative offsets added to SP by the runtime).
//   GCRoot::StackOffset comes from TargetFrameLowering::getFrameIndexReference, which on x86-64
//   picks the register LLVM addresses the slot with, and does not say which:
//     no frame pointer          SP-relative:  MFI offset + 8 + StackSize        >= 0
//     frame pointer, no realign RBP-relative: MFI offset + 16                  <= -8
//     realigned frame           SP-relative (after the `and`), or base-pointer (RBX) relative,
//                               both >= 0
//   A gcroot alloca is an ordinary (non-fixed) stack object, and on x86-64 these lie below the
//   saved RBP, so an RBP-relative offset is always <= -8 and an SP-relative one always >= 0:
//   the sign tells which register LLVM used. (The exception is the red zone, where a leaf's
//   objects sit below SP; it only happens in functions without calls, i.e. without safe points,
//   and those get no roots, see below.) Hence:
//     static frame, offset >= 0  SP-relative already: emitted as is;
//     static frame, offset < 0   RBP-relative: RBP = CFA - 16 and, at a safe point,
//                                SP = CFA - 8 - StackSize (nothing is pushed between prologue
//                                and epilogue, see "call frames"), so
//                                    sp_offset = fp_offset + StackSize - 8;
//     every static offset must then be a multiple of 8 in [0, StackSize - 8], else rejected;
//     dynamic frame (-1), offset < 0   emitted RBP-relative: rootwalk's definition of v1 for
//                                size -1 frames (RBP is the only static reference there; the
//                                walker climbs such a frame with RBP: return address at RBP + 8,
//                                caller's SP at RBP + 16);
//     dynamic frame, offset >= 0 the slot is addressed from the realigned SP or the base pointer,
//                                which v1 cannot express: rejected (see the end of this comment).
//   Verified against the machine code by test/plimmix/plugin.test.ts (llvm-objdump -d: the
//   stores/loads of every gcroot slot, and the prologue's push/sub).
//
// Call frames (pushed outgoing arguments).
//   At -O1 and above, X86CallFrameOptimization turns the stores of stack arguments (calls with
//   more than 6 integer arguments) into `push`es, so SP at those calls' return addresses is lower
//   than after the prologue, by an amount v1 cannot record (one frame size per function). LLVM's
//   ocaml frametable is wrong at such calls. This plugin therefore sets llc's
//   `-no-x86-call-frame-opt` when it is loaded: arguments are then stored into the reserved call
//   frame, which StackSize includes, and SP stays at CFA - 8 - StackSize between prologue and
//   epilogue in every static frame. This applies to every function of the module (code size
//   only). finishAssembly re-reads the option and refuses to describe static frames with safe
//   points if something turned it back off.
//   Dynamic frames have no reserved call frame: calls with stack arguments are bracketed by
//   `sub $N, %rsp` / `add $N, %rsp`. That does not matter there: their roots are RBP-relative.
//
// Functions without safe points.
//   Written with S = 0 and R = 0: such a function is never suspended at a safe point, so its
//   roots are never read, and their offsets could be in the red zone (below SP), which would
//   defeat the sign rule above. Their frame size is StackSize rounded up to words.
//
// Root types, from the gcroot metadata operand (2nd argument of llvm.gcroot):
//   null                                    3 POINTER
//   a global whose name contains exactly one of ATOMIC / TRAIT / COMPLEX / POINTER
//                                           0 / 1 / 2 / 3
//   anything else (no keyword, two keywords, not a global)
//                                           rejected, naming the function, the root and the
//                                           operand (the original wrote 4, which is no type).
//
// Global roots.
//   A global variable is a root if it carries the metadata attachment `!plimmix.root` (its
//   operands are ignored; write `!{}`):
//       @cache = global i8* null, align 8, !plimmix.root !0      !0 = !{}
//   Listed in module order. It must be defined in this module (each module lists the roots it
//   defines, so linking modules never lists one twice), 8 bytes in size and not less than 8-byte
//   aligned; otherwise rejected.
//
// Label naming and collisions.
//   `_GC_MAP_` + Module::getSourceFileName(), verbatim, global, STT_OBJECT, 8-aligned, with a
//   .size. No sanitizing is needed: ELF symbol names may hold any byte but NUL, the object
//   writer takes them as they are, and in `-filetype=asm` output LLVM quotes names that are not
//   plain identifiers (`"_GC_MAP_dir/a.c"`), which GNU as and llvm-mc accept. C code whose source
//   name is not an identifier refers to the label with an asm label:
//       extern const char plimmix_map[] __asm__("_GC_MAP_dir/a.c");
//   The module itself may declare the label (`@"_GC_MAP_a.c" = external global i8`, or the seed's
//   weak reference `extern_weak global i8`) to pass it to gc_init: the printer defines that very
//   symbol. An extern_weak declaration is made external before code generation (beginAssembly):
//   the printer defines the label, so the reference can never be null, and the AsmPrinter would
//   otherwise mark the symbol .weak and the object writer reject the .globl definition
//   ("changed binding to STB_GLOBAL"). The label stays STB_GLOBAL either way. Two modules with the same source file name
//   define the same global symbol: linking them fails with a duplicate-symbol error, which is
//   loud, never a silent overwrite. Give every module a distinct source_filename.
//   LLVM runs a GC printer only for strategies that some defined function uses: a module with
//   global roots but no gc "plimmix" function gets no map (add one, even available_externally:
//   it produces N = 0 and the globals).
//
// Functions that get no record: declarations and available_externally functions (no machine
//   code; GCFunctionInfo's frame size stays at its initial UINT64_MAX, which LLVM 14's ocaml
//   printer does not guard against: it aborts with "too large for the ocaml GC").
//
// Roots are listed in the order LLVM registered them (IR order of the llvm.gcroot calls under
//   SelectionDAG, -O1 and above; FastISel at -O0 visits a block bottom-up and gives the reverse).
//   The order carries no meaning: every root is live at every safe point. A gcroot whose slot
//   LLVM deleted as dead is not listed (GCMachineCodeAnalysis drops it).
//
// Rejected (reported as an llc error through the LLVMContext: "llc: error: plimmix GC: <function>:
// <reason>", exit status 1, no output file; every problem of the module is reported, then no map
// is written):
//   targets other than x86-64 ELF (System V); functions in a COMDAT or with weak/linkonce
//   linkage (the map would point into code the linker may discard or replace); calling
//   conventions whose callee pops or moves its return address (tailcc, swifttailcc, fastcc with
//   -tailcallopt) and any not known to keep the System V frame layout; roots in realigned frames;
//   unknown root types; global roots that are only declared or are not one 8-byte slot;
//   `-no-x86-call-frame-opt=false`.
//
//===----------------------------------------------------------------------===//

#include "llvm/Config/llvm-config.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#if LLVM_VERSION_MAJOR >= 17
#include "llvm/TargetParser/Triple.h" // moved from ADT/ in LLVM 17
#else
#include "llvm/ADT/Triple.h"
#endif
#include "llvm/CodeGen/AsmPrinter.h"
#include "llvm/CodeGen/GCMetadata.h"
#include "llvm/CodeGen/GCMetadataPrinter.h"
#include "llvm/IR/CallingConv.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DataLayout.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GCStrategy.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCDirectives.h"
#include "llvm/MC/MCExpr.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSymbol.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetLoweringObjectFile.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdint>
#include <string>
#include <vector>

using namespace llvm;

namespace {

// ---- The format (see the header comment) -------------------------------------------------

constexpr int32_t MAP_VERSION = 1;
constexpr uint64_t HEADER_SIZE_BYTES = 16;
constexpr uint64_t FUNCTION_HEADER_SIZE_BYTES = 24;
constexpr uint64_t SAFEPOINT_SIZE_BYTES = 8;
constexpr uint64_t ROOT_SIZE_BYTES = 8;
constexpr uint64_t GLOBALS_HEADER_SIZE_BYTES = 8;
constexpr uint64_t GLOBAL_SIZE_BYTES = 8;
constexpr int32_t DYNAMIC_FRAME_WORDS = -1;
/** Integer arguments passed in registers by the System V x86-64 convention (the format's 6). */
constexpr int REGISTER_ARGUMENTS = 6;
/** The loader accepts stack-argument counts up to this. */
constexpr int MAX_STACK_ARGUMENTS = 65535;

constexpr int64_t WORD_BYTES = 8;
/**
 * RBP-relative to SP-relative: RBP = CFA - 16 and SP at a safe point of a static frame =
 * CFA - 8 - StackSize, so SP = RBP - (StackSize - 8).
 */
constexpr int64_t RETURN_ADDRESS_BYTES = 8;

enum RootType : int32_t { ROOT_ATOMIC = 0, ROOT_TRAIT = 1, ROOT_COMPLEX = 2, ROOT_POINTER = 3 };

const char *const GC_NAME = "plimmix";
const char *const LABEL_PREFIX = "_GC_MAP_";
const char *const GLOBAL_ROOT_METADATA = "plimmix.root";
const char *const CALL_FRAME_OPT_OPTION = "no-x86-call-frame-opt";

// ---- The strategy ---------------------------------------------------------------------------

class PlimmixGC : public GCStrategy {
public:
  PlimmixGC() {
    UseStatepoints = false;  // llvm.gcroot allocas are the roots
    NeededSafePoints = true; // GCMachineCodeAnalysis labels the return address of every
                             // non-tail call
    UsesMetadata = true;     // the printer below writes the map
  }
};

// ---- Keeping SP constant at safe points (see "Call frames") --------------------------------

/**
 * Sets `-no-x86-call-frame-opt` when the plugin is loaded. The option is llc's
 * `static cl::opt<bool> NoX86CFOpt` (X86CallFrameOptimization.cpp); the cast relies on that, and
 * on this plugin being built against the same LLVM headers (cached per `llvm-config --version`).
 * A later `-no-x86-call-frame-opt=false` on the command line wins; finishAssembly then refuses.
 */
cl::opt<bool> *callFrameOptOption() {
  StringMap<cl::Option *> &options = cl::getRegisteredOptions();
  auto found = options.find(CALL_FRAME_OPT_OPTION);
  if (found == options.end()) return nullptr;
  return static_cast<cl::opt<bool> *>(found->second);
}

struct DisableCallFrameOptimization {
  DisableCallFrameOptimization() {
    if (cl::opt<bool> *option = callFrameOptOption()) option->setValue(true);
  }
};
DisableCallFrameOptimization disableCallFrameOptimizationAtLoad;

bool callFrameOptimizationDisabled() {
  cl::opt<bool> *option = callFrameOptOption();
  return option != nullptr && option->getValue();
}

// ---- The printer ------------------------------------------------------------------------------

/**
 * Errors go to the LLVMContext's diagnostic handler (llc prints "llc: error: plimmix GC: ..." and
 * exits with status 1 without keeping the output). Every problem in the module is reported, and
 * no map is written if there was one.
 */
class Diagnostics {
public:
  explicit Diagnostics(LLVMContext &context) : context(context) {}
  bool error(const Twine &message) {
    context.emitError("plimmix GC: " + message);
    failed = true;
    return false;
  }
  bool hasFailed() const { return failed; }

private:
  LLVMContext &context;
  bool failed = false;
};

std::string describe(const Constant &constant) {
  std::string text;
  raw_string_ostream out(text);
  constant.printAsOperand(out, /*PrintType=*/true);
  return out.str();
}

struct RootRecord {
  int32_t offsetBytes;
  int32_t type;
};

struct FunctionRecord {
  MCSymbol *symbol = nullptr;
  int32_t frameWords = 0;
  int32_t stackArguments = 0;
  std::vector<MCSymbol *> safepoints;
  std::vector<RootRecord> roots;
};

/** The root type named by the gcroot metadata operand (see "Root types"). */
bool rootType(const GCRoot &root, const Function &function, unsigned index, Diagnostics &diagnostics,
              int32_t &type) {
  const Constant *metadata = root.Metadata;
  if (metadata == nullptr || metadata->isNullValue()) {
    type = ROOT_POINTER;
    return true;
  }
  const auto *global = dyn_cast<GlobalValue>(metadata->stripPointerCasts());
  if (global == nullptr) {
    return diagnostics.error("function '" + function.getName() + "', root #" + Twine(index) + ": gcroot metadata " +
                             describe(*metadata) +
                             " is not a global; expected null or a global whose name contains ATOMIC, TRAIT, "
                             "COMPLEX or POINTER");
  }
  static const struct {
    const char *keyword;
    RootType type;
  } KEYWORDS[] = {{"ATOMIC", ROOT_ATOMIC}, {"TRAIT", ROOT_TRAIT}, {"COMPLEX", ROOT_COMPLEX}, {"POINTER", ROOT_POINTER}};
  const StringRef name = global->getName();
  unsigned matches = 0;
  for (const auto &entry : KEYWORDS) {
    if (name.contains(entry.keyword)) {
      type = entry.type;
      ++matches;
    }
  }
  if (matches != 1) {
    return diagnostics.error("function '" + function.getName() + "', root #" + Twine(index) +
                             ": gcroot metadata global '" + name + "' names " + Twine(matches) +
                             " root types; expected exactly one of ATOMIC, TRAIT, COMPLEX, POINTER in its name");
  }
  return true;
}

bool checkFunctionIsDescribable(const Function &function, const TargetMachine &target, Diagnostics &diagnostics) {
  if (function.hasComdat() || function.isWeakForLinker()) {
    return diagnostics.error("function '" + function.getName() +
                             "' is in a COMDAT or has weak/linkonce linkage; the map would point into code the "
                             "linker may discard or replace");
  }
  switch (function.getCallingConv()) {
  case CallingConv::C:
  case CallingConv::Cold:
  case CallingConv::PreserveMost:
  case CallingConv::PreserveAll:
  case CallingConv::X86_64_SysV:
    return true;
  case CallingConv::Fast:
    if (!target.Options.GuaranteedTailCallOpt) return true;
    return diagnostics.error("function '" + function.getName() +
                             "' uses fastcc with -tailcallopt: its callee pops arguments and may move its return "
                             "address");
  default:
    return diagnostics.error("function '" + function.getName() + "' uses calling convention " +
                             Twine(function.getCallingConv()) +
                             "; supported: ccc, fastcc (without -tailcallopt), coldcc, preserve_mostcc, "
                             "preserve_allcc, x86_64_sysvcc");
  }
}

/** The root's offset as v1 defines it (see "Root offsets"). */
bool rootOffset(const GCRoot &root, const Function &function, unsigned index, uint64_t stackSizeBytes,
                Diagnostics &diagnostics, int32_t &offsetBytes) {
  const int64_t frameRegisterOffset = root.StackOffset;
  int64_t offset = frameRegisterOffset;
  if (stackSizeBytes == UINT64_MAX) {
    if (frameRegisterOffset >= 0) {
      return diagnostics.error("function '" + function.getName() + "', root #" + Twine(index) +
                               ": the frame is realigned and the slot is addressed from the realigned SP or the "
                               "base pointer (offset " + Twine(frameRegisterOffset) +
                               "), which v1 cannot express for a dynamic frame; avoid over-aligned stack objects "
                               "and \"stackrealign\" in gc functions");
    }
    // RBP-relative: rootwalk's definition of v1 for size -1 frames.
  } else {
    const int64_t stackSize = static_cast<int64_t>(stackSizeBytes);
    if (frameRegisterOffset < 0) offset = frameRegisterOffset + stackSize - RETURN_ADDRESS_BYTES;
    if (offset < 0 || offset + WORD_BYTES > stackSize) {
      return diagnostics.error("function '" + function.getName() + "', root #" + Twine(index) + ": offset " +
                               Twine(frameRegisterOffset) + " maps to SP + " + Twine(offset) + ", outside the " +
                               Twine(stackSize) + "-byte frame");
    }
  }
  if (offset % WORD_BYTES != 0) {
    return diagnostics.error("function '" + function.getName() + "', root #" + Twine(index) + ": slot offset " +
                             Twine(offset) + " is not 8-byte aligned; give gcroot allocas align 8");
  }
  offsetBytes = static_cast<int32_t>(offset);
  return true;
}

bool describeFunction(GCFunctionInfo &info, AsmPrinter &printer, bool callFramesPushed, Diagnostics &diagnostics,
                      FunctionRecord &record) {
  const Function &function = info.getFunction();
  if (!checkFunctionIsDescribable(function, printer.TM, diagnostics)) return false;

  record.symbol = printer.getSymbol(&function);
  const int argumentCount = static_cast<int>(function.arg_size());
  record.stackArguments = argumentCount > REGISTER_ARGUMENTS ? argumentCount - REGISTER_ARGUMENTS : 0;
  if (record.stackArguments > MAX_STACK_ARGUMENTS) {
    return diagnostics.error("function '" + function.getName() + "' has " + Twine(argumentCount) +
                             " arguments; at most " + Twine(MAX_STACK_ARGUMENTS + REGISTER_ARGUMENTS) +
                             " are supported");
  }
  for (const GCPoint &point : info) record.safepoints.push_back(point.Label);

  const uint64_t stackSizeBytes = info.getFrameSize();
  const bool hasSafepoints = !record.safepoints.empty();
  if (stackSizeBytes == UINT64_MAX) {
    record.frameWords = DYNAMIC_FRAME_WORDS;
  } else {
    if (stackSizeBytes % WORD_BYTES != 0 && hasSafepoints) {
      return diagnostics.error("function '" + function.getName() + "' has stack size " + Twine(stackSizeBytes) +
                               " bytes, not a multiple of 8, although it makes calls");
    }
    const uint64_t words = (stackSizeBytes + WORD_BYTES - 1) / WORD_BYTES;
    if (words >= static_cast<uint64_t>(INT32_MAX)) {
      return diagnostics.error("function '" + function.getName() + "' has a frame of " + Twine(stackSizeBytes) +
                               " bytes, too large for v1");
    }
    record.frameWords = static_cast<int32_t>(words);
    if (hasSafepoints && callFramesPushed) {
      return diagnostics.error("function '" + function.getName() +
                               "': -no-x86-call-frame-opt is off, so calls may push their stack arguments and SP "
                               "at a safe point would not be at a fixed distance from the frame; do not pass "
                               "-no-x86-call-frame-opt=false with this plugin");
    }
  }

  // No safe point: the roots are never read (see "Functions without safe points").
  if (!hasSafepoints) return true;

  bool ok = true;
  unsigned index = 0;
  for (auto root = info.roots_begin(); root != info.roots_end(); ++root, ++index) {
    RootRecord entry{0, 0};
    if (rootOffset(*root, function, index, stackSizeBytes, diagnostics, entry.offsetBytes) &&
        rootType(*root, function, index, diagnostics, entry.type)) {
      record.roots.push_back(entry);
    } else {
      ok = false;
    }
  }
  return ok;
}

/** The globals carrying !plimmix.root, in module order (see "Global roots"). */
std::vector<const GlobalVariable *> globalRoots(const Module &module, Diagnostics &diagnostics) {
  std::vector<const GlobalVariable *> roots;
  const unsigned kind = module.getContext().getMDKindID(GLOBAL_ROOT_METADATA);
  const DataLayout &layout = module.getDataLayout();
  for (const GlobalVariable &global : module.globals()) {
    if (global.getMetadata(kind) == nullptr) continue;
    if (global.isDeclaration()) {
      diagnostics.error("global root '" + global.getName() + "' is only declared here; attach !" +
                        GLOBAL_ROOT_METADATA + " in the module that defines it");
      continue;
    }
    const uint64_t size = layout.getTypeAllocSize(global.getValueType());
    if (size != GLOBAL_SIZE_BYTES) {
      diagnostics.error("global root '" + global.getName() + "' is " + Twine(size) +
                        " bytes; expected one 8-byte slot");
      continue;
    }
    if (global.getAlign() && global.getAlign()->value() < GLOBAL_SIZE_BYTES) {
      diagnostics.error("global root '" + global.getName() + "' is " + Twine(global.getAlign()->value()) +
                        "-byte aligned; expected at least 8");
      continue;
    }
    roots.push_back(&global);
  }
  return roots;
}

class PlimmixPrinter : public GCMetadataPrinter {
public:
  void beginAssembly(Module &module, GCModuleInfo &info, AsmPrinter &printer) override;
  void finishAssembly(Module &module, GCModuleInfo &info, AsmPrinter &printer) override;

private:
  static void emit(const Module &module, const std::vector<FunctionRecord> &records,
                   const std::vector<const GlobalVariable *> &globals, MCSymbol *label, AsmPrinter &printer);
};

void PlimmixPrinter::beginAssembly(Module &module, GCModuleInfo &, AsmPrinter &) {
  GlobalValue *declared = module.getNamedValue((Twine(LABEL_PREFIX) + module.getSourceFileName()).str());
  if (declared != nullptr && declared->isDeclaration() && declared->hasExternalWeakLinkage()) {
    declared->setLinkage(GlobalValue::ExternalLinkage);
  }
}

void PlimmixPrinter::finishAssembly(Module &module, GCModuleInfo &info, AsmPrinter &printer) {
  Diagnostics diagnostics(module.getContext());
  const Triple &triple = printer.TM.getTargetTriple();
  if (triple.getArch() != Triple::x86_64 || !triple.isOSBinFormatELF() || triple.isOSWindows()) {
    diagnostics.error("target '" + triple.str() + "' is not supported; the _GC_MAP_ v1 printer handles x86-64 ELF only");
    return;
  }
#if LLVM_VERSION_MAJOR >= 18
  const bool optimizing = printer.TM.getOptLevel() != CodeGenOptLevel::None; // enum class from LLVM 18
#else
  const bool optimizing = printer.TM.getOptLevel() != CodeGenOpt::None;
#endif
  const bool callFramesPushed = optimizing && !callFrameOptimizationDisabled();

  std::vector<FunctionRecord> records;
  for (auto it = info.funcinfo_begin(); it != info.funcinfo_end(); ++it) {
    GCFunctionInfo &functionInfo = **it;
    if (functionInfo.getStrategy().getName() != getStrategy().getName()) continue;
    const Function &function = functionInfo.getFunction();
    // No machine code is emitted for these: no frame, no labels.
    if (function.isDeclaration() || function.hasAvailableExternallyLinkage()) continue;
    FunctionRecord record;
    if (describeFunction(functionInfo, printer, callFramesPushed, diagnostics, record)) {
      records.push_back(std::move(record));
    }
  }
  const std::vector<const GlobalVariable *> globals = globalRoots(module, diagnostics);
  if (records.size() > static_cast<size_t>(INT32_MAX) || globals.size() > static_cast<size_t>(INT32_MAX)) {
    diagnostics.error("too many functions or global roots for v1");
  }
  MCSymbol *label = printer.OutContext.getOrCreateSymbol(Twine(LABEL_PREFIX) + module.getSourceFileName());
  if (label->isDefined()) {
    diagnostics.error("symbol '" + label->getName() + "' is already defined in this module");
  }
  if (diagnostics.hasFailed()) return;
  emit(module, records, globals, label, printer);
}

void PlimmixPrinter::emit(const Module &module, const std::vector<FunctionRecord> &records,
                          const std::vector<const GlobalVariable *> &globals, MCSymbol *label, AsmPrinter &printer) {
  uint64_t sizeBytes = HEADER_SIZE_BYTES + GLOBALS_HEADER_SIZE_BYTES + GLOBAL_SIZE_BYTES * globals.size();
  for (const FunctionRecord &record : records) {
    sizeBytes += FUNCTION_HEADER_SIZE_BYTES + SAFEPOINT_SIZE_BYTES * record.safepoints.size() +
                 ROOT_SIZE_BYTES * record.roots.size();
  }

  MCStreamer &out = *printer.OutStreamer;
#if LLVM_VERSION_MAJOR >= 15
  out.switchSection(printer.getObjFileLowering().getDataSection()); // renamed in LLVM 15
#else
  out.SwitchSection(printer.getObjFileLowering().getDataSection());
#endif
  printer.emitAlignment(Align(8));
  out.emitSymbolAttribute(label, MCSA_Global);
  out.emitSymbolAttribute(label, MCSA_ELF_TypeObject);
  out.emitELFSize(label, MCConstantExpr::create(static_cast<int64_t>(sizeBytes), printer.OutContext));
  out.AddComment("plimmix _GC_MAP_ v1 for " + Twine(module.getSourceFileName()));
  out.emitLabel(label);

  out.AddComment("version");
  out.emitInt32(MAP_VERSION);
  out.emitInt32(0);
  out.AddComment("number of functions");
  out.emitInt32(static_cast<uint32_t>(records.size()));
  out.emitInt32(0);

  for (const FunctionRecord &record : records) {
    out.AddComment("function " + record.symbol->getName());
    out.emitSymbolValue(record.symbol, 8);
    out.AddComment("frame size in words");
    out.emitInt32(static_cast<uint32_t>(record.frameWords));
    out.AddComment("stack arguments");
    out.emitInt32(static_cast<uint32_t>(record.stackArguments));
    out.AddComment("roots");
    out.emitInt32(static_cast<uint32_t>(record.roots.size()));
    out.AddComment("safe points");
    out.emitInt32(static_cast<uint32_t>(record.safepoints.size()));
    for (MCSymbol *safepoint : record.safepoints) out.emitSymbolValue(safepoint, 8);
    for (const RootRecord &root : record.roots) {
      out.AddComment("root offset");
      out.emitInt32(static_cast<uint32_t>(root.offsetBytes));
      out.AddComment("root type");
      out.emitInt32(static_cast<uint32_t>(root.type));
    }
  }

  out.AddComment("number of global roots");
  out.emitInt32(static_cast<uint32_t>(globals.size()));
  out.emitInt32(0);
  for (const GlobalVariable *global : globals) out.emitSymbolValue(printer.getSymbol(global), 8);
}

} // end anonymous namespace

static GCRegistry::Add<PlimmixGC> PlimmixStrategy(GC_NAME, "rootwalk plimmix: gcroot roots, a safe point after every call");
static GCMetadataPrinterRegistry::Add<PlimmixPrinter> PlimmixMapPrinter(GC_NAME, "rootwalk plimmix: _GC_MAP_ v1 stack map");
