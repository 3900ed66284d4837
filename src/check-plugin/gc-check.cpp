//===- gc-check.cpp - `rootwalk check`: GC-safety mistakes found in the IR as written -===//
//
// An opt plugin (new pass manager, LLVM 14-19 from this one source):
//
//   opt -load-pass-plugin=gc-check.so -passes='rootwalk-check<NAME;NAME>' -disable-output IN.ll
//
// It reads a module as its author wrote it, BEFORE rewrite-statepoints-for-gc, and prints one JSON
// object per line on stdout (src/toolchain/check-plugin.ts reads them; the kinds are documented in
// docs/cli.md "rootwalk check"):
//
//   {"finding":{"kind":K,"function":F,"strategy":S,"block":B,"line":"file:N"|null,
//               "value":V,"call":C}}                     one per mistake
//   {"module":{"definesMain":b,"callsInit":b,"allocatesIn":F|null}}   facts for the gc_init rule
//                                                         (decided over the whole program)
//   {"error":"rewritten","function":F}                    the IR holds gc.statepoint calls already
//
// The names between <> (separated by ';', pass parameters cannot contain ',') are functions the
// user says can collect (`--collects`), besides the runtime's entry points.
//
// Calls that can collect: a call of a runtime entry point that can stop for a collection
// (COLLECTING_RUNTIME), of a name given by the user, of a declared function with a GC strategy,
// any indirect call, and (to a fixed point) a call of a defined function that makes such a call.
// A defined function with a GC strategy that reaches none of these never stops for a collection
// (a thread stops only inside the runtime), so calling it is not a safepoint that moves objects.
// Never: intrinsics, inline asm, calls or callees marked "gc-leaf-function".
//
// What is a GC pointer: in statepoint style an addrspace(1) pointer. In gcroot style (any other
// strategy, e.g. "plimmix") pointers are untyped, so GC pointers are the closure of: results of
// gc_alloc and of functions with a gcroot strategy; values stored to or loaded from a gcroot slot
// (an alloca given to llvm.gcroot); arguments a GC pointer is passed to and results of defined
// functions that return one (to a fixed point over the module); and through GEPs, casts, phis,
// selects and pointer loads from a GC pointer (a field of a GC object).
//
// Liveness: per function, a backward dataflow over the tracked values (SSA values, and ordinary
// stack slots holding GC pointers, whose loads are uses and whose direct stores are definitions).
// A tracked value live just after a call that can collect, other than the call's own result, is
// a finding. A comparison of a pointer with null is not a use (a stale copy compared with null
// only is harmless). Each (kind, function, value) is reported once, at its first such call.
//
// Build: g++ -shared -fPIC -O2 -fno-rtti $(llvm-config --cxxflags) gc-check.cpp (see
// src/toolchain/check-plugin.ts; -fno-rtti because libLLVM is built without RTTI).
//
//===----------------------------------------------------------------------===//

#include "llvm/Config/llvm-config.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DebugInfoMetadata.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

using namespace llvm;

namespace {

// Runtime entry points that can stop the calling thread for a collection (src/native/runtime.c;
// the same list as src/check/collecting-runtime.ts, test/check/check.test.ts compares them):
// each polls, parks or collects. Not here: gc_init (nothing can be collected before it),
// thread_stuck_end (the thread's objects stay pinned until it returns), no_gc_thread.
const char *const COLLECTING_RUNTIME[] = {"gc_alloc",        "gc_safepoint",       "gc_collect",   "gc_thread_start",
                                          "gc_thread_join",  "thread_stuck_start", "gc_add_global"};
const char *const ALLOCATOR = "gc_alloc";
const char *const INIT = "gc_init";
const char *const ENTRY = "rw_main";
const char *const LEAF_ATTRIBUTE = "gc-leaf-function";

bool isStatepointStrategy(StringRef gc) { return gc == "statepoint-example" || gc == "coreclr"; }

// ---- Output ---------------------------------------------------------------------------------

std::string jsonString(StringRef text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buffer[8];
      snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string operandText(const Value &value, const Module &module) {
  std::string text;
  raw_string_ostream os(text);
  value.printAsOperand(os, false, &module);
  return os.str();
}

std::string lineText(const Instruction &instruction) {
  const DebugLoc &loc = instruction.getDebugLoc();
  if (!loc) return "null";
  std::string file = loc->getFilename().str();
  return jsonString(file + ":" + std::to_string(loc->getLine()));
}

// ---- Which calls can collect ----------------------------------------------------------------

/** The function a call calls (through pointer casts), or null for an indirect call. */
const Function *calledFunction(const CallBase &call) {
  return dyn_cast<Function>(call.getCalledOperand()->stripPointerCasts());
}


class CollectingCalls {
public:
  CollectingCalls(Module &module, const std::vector<std::string> &userNames) {
    for (const char *name : COLLECTING_RUNTIME) names.insert(name);
    for (const std::string &name : userNames) names.insert(name);
    // A function with a GC strategy whose body is elsewhere may collect; a defined one collects
    // only if it makes a collecting call (a thread stops only in the runtime), found below.
    for (Function &f : module)
      if (f.isDeclaration() && f.hasGC()) names.insert(f.getName());
    // Callers to a fixed point (the least one: mutual recursion alone does not collect).
    for (bool changed = true; changed;) {
      changed = false;
      for (Function &f : module) {
        if (f.isDeclaration() || names.count(f.getName()) != 0) continue;
        for (Instruction &i : instructions(f)) {
          auto *call = dyn_cast<CallBase>(&i);
          if (call != nullptr && canCollect(*call)) {
            names.insert(f.getName());
            changed = true;
            break;
          }
        }
      }
    }
  }

  bool canCollect(const CallBase &call) const {
    if (call.isInlineAsm() || isa<IntrinsicInst>(call) || call.hasFnAttr(LEAF_ATTRIBUTE)) return false;
    const Function *callee = calledFunction(call);
    if (callee == nullptr) return true; // indirect
    if (callee->isIntrinsic() || callee->hasFnAttribute(LEAF_ATTRIBUTE)) return false;
    return names.count(callee->getName()) != 0;
  }

private:
  StringSet<> names;
};

bool calls(const CallBase &call, StringRef name) {
  const Function *callee = calledFunction(call);
  return callee != nullptr && callee->getName() == name;
}

std::string callText(const CallBase &call, const Module &module) {
  const Function *callee = calledFunction(call);
  if (callee != nullptr) return "@" + callee->getName().str();
  return "indirect call of " + operandText(*call.getCalledOperand(), module);
}

// ---- GC pointers ----------------------------------------------------------------------------

bool isGcrootCall(const User *user) {
  auto *intrinsic = dyn_cast<IntrinsicInst>(user);
  return intrinsic != nullptr && intrinsic->getIntrinsicID() == Intrinsic::gcroot;
}

/** An alloca given to llvm.gcroot (directly, or through a bitcast in typed-pointer IR). */
bool isGcrootSlot(const AllocaInst &slot) {
  for (const User *user : slot.users()) {
    if (isGcrootCall(user)) return true;
    if (isa<BitCastInst>(user))
      for (const User *castUser : user->users())
        if (isGcrootCall(castUser)) return true;
  }
  return false;
}

/** The alloca a pointer addresses through casts and GEPs, if any. */
const AllocaInst *slotOf(const Value *pointer) {
  for (;;) {
    if (auto *gep = dyn_cast<GEPOperator>(pointer)) pointer = gep->getPointerOperand();
    else if (auto *cast = dyn_cast<BitCastOperator>(pointer)) pointer = cast->getOperand(0);
    else return dyn_cast<AllocaInst>(pointer);
  }
}

/**
 * GC pointers of the whole module (see the header comment). Statepoint style needs no closure:
 * its GC pointers are exactly the addrspace(1) ones, and both rules are applied everywhere.
 */
class GcPointers {
public:
  explicit GcPointers(Module &module) {
    for (bool changed = true; changed;) {
      changed = false;
      for (Function &f : module)
        if (!f.isDeclaration()) changed |= closeFunction(f);
    }
  }

  bool isGcPointer(const Value *value) const {
    auto *type = dyn_cast<PointerType>(value->getType());
    if (type != nullptr && type->getAddressSpace() == 1) return true;
    return values.count(value) != 0;
  }

private:
  bool add(const Value *value) {
    if (!value->getType()->isPointerTy() || isa<Constant>(value)) return false;
    return values.insert(value).second;
  }

  static bool isSeed(const Instruction &i, const SmallPtrSetImpl<const Function *> &gcRoots) {
    if (auto *call = dyn_cast<CallBase>(&i)) {
      const Function *callee = calledFunction(*call);
      if (callee == nullptr) return false;
      return callee->getName() == ALLOCATOR || (callee->hasGC() && !isStatepointStrategy(callee->getGC())) || gcRoots.count(callee) != 0;
    }
    if (auto *load = dyn_cast<LoadInst>(&i)) {
      const AllocaInst *slot = slotOf(load->getPointerOperand());
      return slot != nullptr && isGcrootSlot(*slot);
    }
    return false;
  }

  /** One forward sweep over `f`; true when anything new was found. */
  bool closeFunction(Function &f) {
    bool changed = false;
    for (Instruction &i : instructions(f)) {
      if (isSeed(i, returnsGcPointer)) changed |= add(&i);
      if (auto *store = dyn_cast<StoreInst>(&i)) {
        const AllocaInst *slot = slotOf(store->getPointerOperand());
        if (slot != nullptr && isGcrootSlot(*slot)) changed |= add(store->getValueOperand());
      }
      if (isGcPointer(&i)) {
        for (const User *user : i.users()) changed |= propagate(*user, &i);
      }
      if (auto *call = dyn_cast<CallBase>(&i)) changed |= markArguments(*call);
      if (auto *ret = dyn_cast<ReturnInst>(&i))
        if (ret->getReturnValue() != nullptr && values.count(ret->getReturnValue()) != 0) changed |= returnsGcPointer.insert(&f).second;
    }
    for (Argument &argument : f.args())
      if (values.count(&argument) != 0)
        for (const User *user : argument.users()) changed |= propagate(*user, &argument);
    return changed;
  }

  bool propagate(const User &user, const Value *from) {
    // Not through an addrspacecast out of addrspace(1) or an inttoptr: those hide the pointer.
    if (isa<AddrSpaceCastInst>(user) && from->getType()->getPointerAddressSpace() == 1) return false;
    if (isa<GetElementPtrInst>(user) || isa<BitCastInst>(user) || isa<AddrSpaceCastInst>(user) || isa<PHINode>(user)) return add(&user);
    if (auto *select = dyn_cast<SelectInst>(&user)) return select->getCondition() != from && add(select);
    if (auto *load = dyn_cast<LoadInst>(&user)) return add(load); // a pointer field of a GC object
    return false;
  }

  bool markArguments(const CallBase &call) {
    const Function *callee = calledFunction(call);
    if (callee == nullptr || callee->isDeclaration()) return false;
    bool changed = false;
    for (unsigned k = 0; k < call.arg_size() && k < callee->arg_size(); k++)
      if (values.count(call.getArgOperand(k)) != 0) changed |= add(callee->getArg(k));
    return changed;
  }

  SmallPtrSet<const Value *, 32> values;
  SmallPtrSet<const Function *, 8> returnsGcPointer;
};

/** An integer (or untracked pointer) made from a GC pointer: ptrtoint, then arithmetic on it. */
bool isHiddenPointer(const Instruction &i, const GcPointers &gc, const SmallPtrSetImpl<const Value *> &hidden) {
  if (auto *cast = dyn_cast<CastInst>(&i)) {
    const Value *source = cast->getOperand(0);
    if (hidden.count(source) != 0) return !gc.isGcPointer(&i);
    return gc.isGcPointer(source) && !gc.isGcPointer(&i) && (isa<PtrToIntInst>(cast) || isa<AddrSpaceCastInst>(cast));
  }
  if (isa<BinaryOperator>(i) || isa<PHINode>(i) || isa<SelectInst>(i)) {
    for (unsigned k = isa<SelectInst>(i) ? 1 : 0; k < i.getNumOperands(); k++)
      if (hidden.count(i.getOperand(k)) != 0) return true;
  }
  return false;
}

/** A GC pointer with a non-zero offset from its object, through casts, zero GEPs and phis. */
bool isInteriorPointer(const Value *value, const GcPointers &gc, SmallPtrSetImpl<const Value *> &visited) {
  if (!visited.insert(value).second) return false;
  if (auto *gep = dyn_cast<GEPOperator>(value)) {
    if (!gep->hasAllZeroIndices() && gc.isGcPointer(gep->getPointerOperand())) return true;
    return isInteriorPointer(gep->getPointerOperand(), gc, visited);
  }
  if (auto *cast = dyn_cast<CastInst>(value)) return isInteriorPointer(cast->getOperand(0), gc, visited);
  if (auto *phi = dyn_cast<PHINode>(value)) {
    for (const Value *incoming : phi->incoming_values())
      if (isInteriorPointer(incoming, gc, visited)) return true;
  }
  if (auto *select = dyn_cast<SelectInst>(value))
    return isInteriorPointer(select->getTrueValue(), gc, visited) || isInteriorPointer(select->getFalseValue(), gc, visited);
  return false;
}

// ---- Liveness across the calls that can collect ---------------------------------------------

enum class Kind { NoGcStrategy, IntegerAcrossSafepoint, StaleGcrootCopy, InteriorPointerArgument, GcPointerInStackSlot };

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::NoGcStrategy: return "no-gc-strategy";
  case Kind::IntegerAcrossSafepoint: return "integer-across-safepoint";
  case Kind::StaleGcrootCopy: return "stale-gcroot-copy";
  case Kind::InteriorPointerArgument: return "interior-pointer-argument";
  case Kind::GcPointerInStackSlot: return "gc-pointer-in-stack-slot";
  }
  return "?";
}

struct Finding {
  Kind kind;
  const Value *value;
  const CallBase *call;
};

bool isNullComparison(const Instruction &user) {
  auto *compare = dyn_cast<ICmpInst>(&user);
  return compare != nullptr && compare->isEquality() && (isa<ConstantPointerNull>(compare->getOperand(0)) || isa<ConstantPointerNull>(compare->getOperand(1)));
}

/** The slot a store writes as a whole (its address is the alloca through casts and zero GEPs). */
const AllocaInst *wholeSlotStored(const StoreInst &store) {
  const Value *pointer = store.getPointerOperand();
  for (;;) {
    auto *gep = dyn_cast<GEPOperator>(pointer);
    if (gep != nullptr && gep->hasAllZeroIndices()) pointer = gep->getPointerOperand();
    else if (auto *cast = dyn_cast<BitCastOperator>(pointer)) pointer = cast->getOperand(0);
    else return dyn_cast<AllocaInst>(pointer);
  }
}

/**
 * The tracked values of one function (SSA values and stack slots, each with the kind of finding
 * it gives when live across a collecting call) and a backward liveness over them.
 */
class FunctionCheck {
public:
  FunctionCheck(Function &f, const GcPointers &gc, const CollectingCalls &collecting) : f(f), gc(gc), collecting(collecting) {
    StringRef strategy = f.hasGC() ? StringRef(f.getGC()) : StringRef();
    bool gcroot = f.hasGC() && !isStatepointStrategy(strategy);
    trackHiddenPointers();
    if (!f.hasGC() || gcroot) trackGcPointers(f.hasGC() ? Kind::StaleGcrootCopy : Kind::NoGcStrategy);
    trackStackSlots();
  }

  std::vector<Finding> run() {
    std::vector<Finding> out;
    for (BasicBlock &block : f)
      for (Instruction &i : block)
        if (isCollectingCall(i)) interiorArguments(cast<CallBase>(i), out);
    if (!items.empty()) liveAcrossCalls(out);
    return out;
  }

private:
  void track(const Value *value, Kind kind) {
    if (index.count(value) != 0) return;
    index[value] = items.size();
    items.push_back({kind, value, nullptr});
  }

  void trackHiddenPointers() {
    SmallPtrSet<const Value *, 16> hidden;
    for (bool changed = true; changed;) {
      changed = false;
      for (Instruction &i : instructions(f))
        if (hidden.count(&i) == 0 && isHiddenPointer(i, gc, hidden)) changed |= hidden.insert(&i).second;
    }
    for (Instruction &i : instructions(f))
      if (hidden.count(&i) != 0) track(&i, Kind::IntegerAcrossSafepoint);
  }

  void trackGcPointers(Kind kind) {
    for (Argument &argument : f.args())
      if (gc.isGcPointer(&argument)) track(&argument, kind);
    for (Instruction &i : instructions(f))
      if (!isa<AllocaInst>(i) && gc.isGcPointer(&i)) track(&i, kind);
  }

  void trackStackSlots() {
    for (Instruction &i : instructions(f)) {
      auto *store = dyn_cast<StoreInst>(&i);
      if (store == nullptr || !gc.isGcPointer(store->getValueOperand())) continue;
      const AllocaInst *slot = slotOf(store->getPointerOperand());
      if (slot != nullptr && !isGcrootSlot(*slot)) track(slot, Kind::GcPointerInStackSlot);
    }
  }

  void interiorArguments(const CallBase &call, std::vector<Finding> &out) {
    for (const Use &argument : call.args()) {
      SmallPtrSet<const Value *, 8> visited;
      if (argument->getType()->isPointerTy() && isInteriorPointer(argument.get(), gc, visited))
        out.push_back({Kind::InteriorPointerArgument, argument.get(), &call});
    }
  }

  /** Calls `visit(item)` for each tracked item `i` uses (a load of a tracked slot uses the slot). */
  template <typename Visit> void forEachUse(const Instruction &i, Visit visit) const {
    if (auto *load = dyn_cast<LoadInst>(&i)) {
      const AllocaInst *slot = slotOf(load->getPointerOperand());
      if (slot != nullptr && itemOf(slot) >= 0) visit(itemOf(slot));
    }
    if (isNullComparison(i)) return;
    for (const Use &operand : i.operands())
      if (!isa<AllocaInst>(operand.get()) && itemOf(operand.get()) >= 0) visit(itemOf(operand.get()));
  }

  /** The tracked item `i` defines (its own value, or the slot it stores to as a whole), or -1. */
  int definedItem(const Instruction &i) const {
    if (!isa<AllocaInst>(i) && itemOf(&i) >= 0) return itemOf(&i);
    if (auto *store = dyn_cast<StoreInst>(&i))
      if (const AllocaInst *slot = wholeSlotStored(*store)) return itemOf(slot);
    return -1;
  }

  void liveAcrossCalls(std::vector<Finding> &out);

  int itemOf(const Value *value) const {
    auto found = index.find(value);
    return found == index.end() ? -1 : static_cast<int>(found->second);
  }

  bool isCollectingCall(const Instruction &i) const {
    auto *call = dyn_cast<CallBase>(&i);
    return call != nullptr && collecting.canCollect(*call);
  }

  Function &f;
  const GcPointers &gc;
  const CollectingCalls &collecting;
  std::vector<Finding> items; // call == nullptr: the kind this value gives
  DenseMap<const Value *, unsigned> index;
};

void FunctionCheck::liveAcrossCalls(std::vector<Finding> &out) {
  unsigned n = items.size();
  DenseMap<const BasicBlock *, BitVector> uses, defs, liveIn, liveOut;
  for (BasicBlock &block : f) {
    BitVector &use = uses[&block], &def = defs[&block];
    use.resize(n);
    def.resize(n);
    liveIn[&block].resize(n);
    liveOut[&block].resize(n);
    for (Instruction &i : block) {
      if (!isa<PHINode>(i)) forEachUse(i, [&](unsigned k) { if (!def.test(k)) use.set(k); });
      int d = definedItem(i);
      if (d >= 0) def.set(d);
    }
  }
  // liveOut(B) = union over successors S of liveIn(S) and the phi operands S takes from B.
  auto outOf = [&](BasicBlock &block) {
    BitVector live(n);
    for (BasicBlock *successor : successors(&block)) {
      live |= liveIn[successor];
      for (PHINode &phi : successor->phis())
        if (itemOf(phi.getIncomingValueForBlock(&block)) >= 0) live.set(itemOf(phi.getIncomingValueForBlock(&block)));
    }
    return live;
  };
  std::vector<BasicBlock *> blocks;
  for (BasicBlock &block : f) blocks.push_back(&block);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) {
      BasicBlock &block = **it;
      BitVector out = outOf(block);
      BitVector in = out;
      in.reset(defs[&block]);
      in |= uses[&block];
      if (in != liveIn[&block] || out != liveOut[&block]) {
        liveIn[&block] = in;
        liveOut[&block] = out;
        changed = true;
      }
    }
  }
  std::map<unsigned, Finding> first; // item -> its first call (in function order)
  DenseMap<const Instruction *, unsigned> order;
  for (Instruction &i : instructions(f)) order[&i] = order.size();
  for (BasicBlock &block : f) {
    BitVector live = liveOut[&block];
    for (auto it = block.rbegin(); it != block.rend(); ++it) {
      Instruction &i = *it;
      if (isCollectingCall(i)) {
        const CallBase *call = cast<CallBase>(&i);
        for (unsigned k : live.set_bits()) {
          if (items[k].value == call) continue;
          auto known = first.find(k);
          if (known == first.end() || order[call] < order[known->second.call]) first[k] = {items[k].kind, items[k].value, call};
        }
      }
      if (isa<PHINode>(i)) continue;
      int d = definedItem(i);
      if (d >= 0) live.reset(d);
      forEachUse(i, [&](unsigned k) { live.set(k); });
    }
  }
  for (auto &entry : first) out.push_back(entry.second);
}

// ---- The pass -------------------------------------------------------------------------------

void printFinding(const Finding &finding, const Function &f, const Module &module) {
  const BasicBlock *block = finding.call->getParent();
  outs() << "{\"finding\":{\"kind\":\"" << kindName(finding.kind) << "\",\"function\":" << jsonString(f.getName())
         << ",\"strategy\":" << (f.hasGC() ? jsonString(f.getGC()) : std::string("null"))
         << ",\"block\":" << jsonString(operandText(*block, module)) << ",\"line\":" << lineText(*finding.call)
         << ",\"value\":" << jsonString(operandText(*finding.value, module)) << ",\"call\":" << jsonString(callText(*finding.call, module))
         << "}}\n";
}

/** A gc.statepoint call: the module went through rewrite-statepoints-for-gc already. */
const Function *rewrittenBy(const Module &module) {
  for (const Function &f : module)
    if (f.getName().find("llvm.experimental.gc.statepoint") == 0)
      for (const User *user : f.users())
        if (auto *call = dyn_cast<CallBase>(user)) return call->getFunction();
  return nullptr;
}

void printModuleFacts(Module &module) {
  const Function *main = module.getFunction(ENTRY);
  bool callsInit = false;
  const Function *allocatesIn = nullptr;
  for (Function &f : module)
    for (Instruction &i : instructions(f)) {
      auto *call = dyn_cast<CallBase>(&i);
      if (call == nullptr) continue;
      if (calls(*call, INIT)) callsInit = true;
      for (const char *name : COLLECTING_RUNTIME)
        if (allocatesIn == nullptr && calls(*call, name)) allocatesIn = &f;
    }
  outs() << "{\"module\":{\"definesMain\":" << (main != nullptr && !main->isDeclaration() ? "true" : "false")
         << ",\"callsInit\":" << (callsInit ? "true" : "false")
         << ",\"allocatesIn\":" << (allocatesIn != nullptr ? jsonString(allocatesIn->getName()) : std::string("null")) << "}}\n";
}

struct GcCheckPass : PassInfoMixin<GcCheckPass> {
  std::vector<std::string> userCollects;

  PreservedAnalyses run(Module &module, ModuleAnalysisManager &) {
    if (const Function *f = rewrittenBy(module)) {
      outs() << "{\"error\":\"rewritten\",\"function\":" << jsonString(f->getName()) << "}\n";
      return PreservedAnalyses::all();
    }
    CollectingCalls collecting(module, userCollects);
    GcPointers gc(module);
    for (Function &f : module) {
      if (f.isDeclaration()) continue;
      for (const Finding &finding : FunctionCheck(f, gc, collecting).run()) printFinding(finding, f, module);
    }
    printModuleFacts(module);
    return PreservedAnalyses::all();
  }

  static bool isRequired() { return true; }
};

const char *const PASS_NAME = "rootwalk-check";

/** `rootwalk-check` or `rootwalk-check<a;b>`: the names are the user's collecting functions. */
bool parsePassName(StringRef name, std::vector<std::string> &collects) {
  if (!name.consume_front(PASS_NAME)) return false;
  if (name.empty()) return true;
  if (!name.consume_front("<") || !name.consume_back(">")) return false;
  SmallVector<StringRef, 8> parts;
  name.split(parts, ';', -1, false);
  for (StringRef part : parts) collects.push_back(part.str());
  return true;
}

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "rootwalk-check", "1", [](PassBuilder &builder) {
            builder.registerPipelineParsingCallback([](StringRef name, ModulePassManager &manager, ArrayRef<PassBuilder::PipelineElement>) {
              GcCheckPass pass;
              if (!parsePassName(name, pass.userCollects)) return false;
              manager.addPass(std::move(pass));
              return true;
            });
          }};
}
