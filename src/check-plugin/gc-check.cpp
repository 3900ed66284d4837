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
//               "value":V,"call":C}}                     one per mistake (C: the call, or for
//                                                         interior-pointer-in-gcroot the slot)
//     missing-write-barrier: B and line are the store's, V the object stored into, C the first
//     call that can collect the store reaches unbarriered or "return", and two more members,
//     "stored":P (the GC pointer stored) and "field":A (the address stored to)
//   {"module":{"definesMain":b,"callsInit":b,"allocatesIn":F|null}}   facts for the gc_init rule
//                                                         (decided over the whole program)
//   {"error":"rewritten","function":F}                    the IR holds gc.statepoint calls already
//
// The names between <> (separated by ';', pass parameters cannot contain ',') are functions the
// user says can collect (`--collects`), besides the runtime's entry points. The pass named
// `rootwalk-check-generational` (`check --generational`) also reports missing-write-barrier:
// a store of a GC pointer into a GC object with no gc_write_barrier of that object before the
// next call that can collect or the return (WriteBarriers below says exactly what counts).
//
// Calls that can collect: a call of a runtime entry point that can stop for a collection
// (COLLECTING_RUNTIME), of a name given by the user, of a declared function with a GC strategy,
// any indirect call, and (the least fixed point) a call of a defined function that makes such a
// call. A defined function with a GC strategy that reaches none of these never stops for a
// collection (a thread stops only inside the runtime), so calling it is not a safepoint that moves
// objects. Never: intrinsics, inline asm, calls or callees marked "gc-leaf-function", and
// gc_write_barrier (a leaf however it is declared).
//
// What is a GC pointer: in statepoint style an addrspace(1) pointer. In gcroot style (any other
// strategy, e.g. "plimmix") pointers are untyped, so GC pointers are the closure of: results of
// gc_alloc and of functions with a gcroot strategy; values stored to or loaded from a gcroot slot
// (an alloca given to llvm.gcroot); arguments a GC pointer is passed to and results of defined
// functions that return one; and through GEPs, casts, phis, selects and pointer loads from a GC
// pointer (a field of a GC object).
//
// Linear time: both fixed points above, and which functions read or write a plain global (below),
// are worklists over the call sites gathered in one sweep (CallSites): a function or value is
// revisited only when something new reaches it, never by re-sweeping the module (a 20,000-deep
// call chain took minutes that way; bench/check-chain.ts times it).
//
// Liveness: per function, a backward dataflow over the tracked values, each with the kind it
// gives when live just after a call that can collect (other than the call's own result):
//   - no strategy: every GC pointer (no-gc-strategy);
//   - gcroot style: a GC pointer that was, or derives from one that was, stored to or loaded
//     from a gcroot slot (stale-gcroot-copy), any other GC pointer (unrooted-gc-pointer);
//   - statepoint style: GC pointers are relocated, except one made by inttoptr (its own base to
//     RS4GC: inttoptr-gc-pointer); a derived pointer is correct;
//   - with a strategy: a struct or array SSA value holding a GC pointer (gc-pointer-in-aggregate);
//   - any: integers made from GC pointers (integer-across-safepoint), ordinary stack slots holding
//     GC pointers (gc-pointer-in-stack-slot), and globals a GC pointer is stored into that no
//     gc_add_global registers (gc-pointer-in-plain-global): a slot or global is used by a load of
//     it (a global also by a call of a function that reads it) and defined by a whole store;
//     a global counts only where a GC pointer may be in it (a forward may-analysis).
// Besides liveness: a pointer into the middle of a GC object passed to a call that can collect
// (interior-pointer-argument) or stored into a gcroot slot (interior-pointer-in-gcroot).
// A comparison of a pointer with null is not a use (a stale copy compared with null only is
// harmless). Each (kind, function, value) is reported once, at its first such call.
//
// Build: g++ -shared -fPIC -O2 -fno-rtti $(llvm-config --cxxflags) gc-check.cpp (see
// src/toolchain/check-plugin.ts; -fno-rtti because libLLVM is built without RTTI).
//
//===----------------------------------------------------------------------===//

#include "llvm/Config/llvm-config.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/PostOrderIterator.h"
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
const char *const REGISTER_GLOBAL = "gc_add_global";
const char *const ENTRY = "rw_main";
const char *const LEAF_ATTRIBUTE = "gc-leaf-function";
// The generational runtime's write barrier: never collects, whatever its declaration says.
const char *const WRITE_BARRIER = "gc_write_barrier";

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


/**
 * The direct call sites of each function (through pointer casts), gathered in one sweep: the
 * bottom-up passes below follow them from callee to callers, each edge a bounded number of times,
 * so the check is linear in the module's size (a 20,000-deep call chain included).
 */
class CallSites {
public:
  explicit CallSites(Module &module) {
    for (Function &f : module)
      for (Instruction &i : instructions(f))
        if (auto *call = dyn_cast<CallBase>(&i))
          if (const Function *callee = calledFunction(*call)) sites[callee].push_back(call);
  }

  ArrayRef<const CallBase *> of(const Function *callee) const {
    auto found = sites.find(callee);
    return found == sites.end() ? ArrayRef<const CallBase *>() : ArrayRef<const CallBase *>(found->second);
  }

private:
  DenseMap<const Function *, SmallVector<const CallBase *, 2>> sites;
};

class CollectingCalls {
public:
  CollectingCalls(Module &module, const std::vector<std::string> &userNames, const CallSites &sites) {
    for (const char *name : COLLECTING_RUNTIME) names.insert(name);
    for (const std::string &name : userNames) names.insert(name);
    // A function with a GC strategy whose body is elsewhere may collect; a defined one collects
    // only if it makes a collecting call (a thread stops only in the runtime), found below.
    for (Function &f : module)
      if (f.isDeclaration() && f.hasGC()) names.insert(f.getName());
    // The least fixed point (mutual recursion alone does not collect): the functions that make a
    // collecting call themselves, then, from each function newly known to collect, its callers
    // (a worklist over the reverse call graph: each function enters it at most once).
    std::vector<const Function *> work;
    for (Function &f : module) {
      if (f.isDeclaration() || names.count(f.getName()) != 0) continue;
      for (Instruction &i : instructions(f)) {
        auto *call = dyn_cast<CallBase>(&i);
        if (call != nullptr && canCollect(*call)) {
          names.insert(f.getName());
          work.push_back(&f);
          break;
        }
      }
    }
    while (!work.empty()) {
      const Function *callee = work.back();
      work.pop_back();
      for (const CallBase *call : sites.of(callee)) {
        const Function *caller = call->getFunction();
        if (names.count(caller->getName()) != 0 || !canCollect(*call)) continue;
        names.insert(caller->getName());
        work.push_back(caller);
      }
    }
  }

  bool canCollect(const CallBase &call) const {
    if (call.isInlineAsm() || isa<IntrinsicInst>(call) || call.hasFnAttr(LEAF_ATTRIBUTE)) return false;
    const Function *callee = calledFunction(call);
    if (callee == nullptr) return true; // indirect
    if (callee->isIntrinsic() || callee->hasFnAttribute(LEAF_ATTRIBUTE) || callee->getName() == WRITE_BARRIER) return false;
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

/** The object a pointer addresses through casts and GEPs: an alloca, a global, or anything else. */
const Value *baseObjectOf(const Value *pointer) {
  for (;;) {
    if (auto *gep = dyn_cast<GEPOperator>(pointer)) pointer = gep->getPointerOperand();
    else if (auto *cast = dyn_cast<BitCastOperator>(pointer)) pointer = cast->getOperand(0);
    else return pointer;
  }
}

/** The alloca a pointer addresses through casts and GEPs, if any. */
const AllocaInst *slotOf(const Value *pointer) { return dyn_cast<AllocaInst>(baseObjectOf(pointer)); }

/** The gcroot slot a store or load addresses, or null. */
const AllocaInst *gcrootSlotOf(const Value *pointer) {
  const AllocaInst *slot = slotOf(pointer);
  return slot != nullptr && isGcrootSlot(*slot) ? slot : nullptr;
}

/**
 * GC pointers of the whole module (see the header comment). Statepoint style needs no closure:
 * its GC pointers are exactly the addrspace(1) ones, and both rules are applied everywhere.
 * The closure is a worklist: the seeds of one sweep, then each value newly found follows its
 * users, the callee arguments it is passed to, and (returned) the results of its function's call
 * sites; each value enters the worklist once.
 */
class GcPointers {
public:
  GcPointers(Module &module, const CallSites &sites) : sites(sites) {
    for (Function &f : module)
      if (!f.isDeclaration())
        for (Instruction &i : instructions(f)) seed(i);
    while (!work.empty()) {
      const Value *value = work.back();
      work.pop_back();
      follow(*value);
    }
  }

  bool isGcPointer(const Value *value) const {
    auto *type = dyn_cast<PointerType>(value->getType());
    if (type != nullptr && type->getAddressSpace() == 1) return true;
    return values.count(value) != 0;
  }

  /** The value, or one it is derived from (casts, GEPs, phis, selects), was loaded from or stored to a gcroot slot. */
  bool wasInGcrootSlot(const Value *value) const {
    SmallPtrSet<const Value *, 8> visited;
    SmallVector<const Value *, 8> todo{value};
    while (!todo.empty()) {
      const Value *v = todo.pop_back_val();
      if (!visited.insert(v).second) continue;
      if (rooted.count(v) != 0) return true;
      if (auto *gep = dyn_cast<GEPOperator>(v)) todo.push_back(gep->getPointerOperand());
      else if (auto *cast = dyn_cast<CastInst>(v)) todo.push_back(cast->getOperand(0));
      else if (auto *phi = dyn_cast<PHINode>(v)) todo.append(phi->incoming_values().begin(), phi->incoming_values().end());
      else if (auto *select = dyn_cast<SelectInst>(v)) todo.append({select->getTrueValue(), select->getFalseValue()});
    }
    return false;
  }

private:
  bool add(const Value *value) {
    if (!value->getType()->isPointerTy() || isa<Constant>(value)) return false;
    if (!values.insert(value).second) return false;
    work.push_back(value);
    return true;
  }

  static bool isSeedCall(const CallBase &call) {
    const Function *callee = calledFunction(call);
    return callee != nullptr && (callee->getName() == ALLOCATOR || (callee->hasGC() && !isStatepointStrategy(callee->getGC())));
  }

  /** The rules that need no other GC pointer: allocations, gcroot slots, addrspace(1) values. */
  void seed(Instruction &i) {
    if (auto *call = dyn_cast<CallBase>(&i))
      if (isSeedCall(*call)) add(call);
    if (auto *load = dyn_cast<LoadInst>(&i))
      if (gcrootSlotOf(load->getPointerOperand()) != nullptr) {
        rooted.insert(load);
        add(load);
      }
    if (auto *store = dyn_cast<StoreInst>(&i))
      if (gcrootSlotOf(store->getPointerOperand()) != nullptr) {
        rooted.insert(store->getValueOperand());
        add(store->getValueOperand());
      }
    if (isGcPointer(&i) && values.count(&i) == 0)
      for (const User *user : i.users()) propagate(*user, &i);
  }

  /** The rules from one GC pointer of `values`. */
  void follow(const Value &value) {
    for (const User *user : value.users()) {
      propagate(*user, &value);
      if (auto *call = dyn_cast<CallBase>(user)) {
        const Function *callee = calledFunction(*call);
        if (callee == nullptr || callee->isDeclaration()) continue;
        for (unsigned k = 0; k < call->arg_size() && k < callee->arg_size(); k++)
          if (call->getArgOperand(k) == &value) add(callee->getArg(k));
      }
      if (auto *ret = dyn_cast<ReturnInst>(user))
        if (returnsGcPointer.insert(ret->getFunction()).second)
          for (const CallBase *call : sites.of(ret->getFunction())) add(call);
    }
  }

  void propagate(const User &user, const Value *from) {
    // Not through an addrspacecast out of addrspace(1) or an inttoptr: those hide the pointer.
    if (isa<AddrSpaceCastInst>(user) && from->getType()->getPointerAddressSpace() == 1) return;
    if (isa<GetElementPtrInst>(user) || isa<BitCastInst>(user) || isa<AddrSpaceCastInst>(user) || isa<PHINode>(user)) add(&user);
    else if (auto *select = dyn_cast<SelectInst>(&user)) {
      if (select->getCondition() != from) add(select);
    } else if (auto *load = dyn_cast<LoadInst>(&user)) add(load); // a pointer field of a GC object
  }

  const CallSites &sites;
  SmallPtrSet<const Value *, 32> values;
  SmallPtrSet<const Value *, 16> rooted; // loaded from or stored to a gcroot slot
  SmallPtrSet<const Function *, 8> returnsGcPointer;
  std::vector<const Value *> work;
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

/** A statepoint GC pointer made by inttoptr (through GEPs, casts, phis, selects): RS4GC takes it for its own base. */
bool isMadeByInttoptr(const Value *value) {
  SmallPtrSet<const Value *, 8> visited;
  SmallVector<const Value *, 8> todo{value};
  while (!todo.empty()) {
    const Value *v = todo.pop_back_val();
    if (!visited.insert(v).second) continue;
    if (isa<IntToPtrInst>(v)) return true;
    if (auto *gep = dyn_cast<GetElementPtrInst>(v)) todo.push_back(gep->getPointerOperand());
    else if (isa<BitCastInst>(v) || isa<AddrSpaceCastInst>(v)) todo.push_back(cast<Instruction>(v)->getOperand(0));
    else if (auto *phi = dyn_cast<PHINode>(v)) todo.append(phi->incoming_values().begin(), phi->incoming_values().end());
    else if (auto *select = dyn_cast<SelectInst>(v)) todo.append({select->getTrueValue(), select->getFalseValue()});
  }
  return false;
}

/** A struct or array type holding an addrspace(1) pointer: RS4GC relocates no such SSA value. */
bool holdsStatepointPointer(Type *type) {
  if (auto *pointer = dyn_cast<PointerType>(type)) return pointer->getAddressSpace() == 1;
  if (auto *array = dyn_cast<ArrayType>(type)) return holdsStatepointPointer(array->getElementType());
  if (auto *structure = dyn_cast<StructType>(type)) {
    for (Type *element : structure->elements())
      if (holdsStatepointPointer(element)) return true;
  }
  return false;
}

/**
 * A first-class aggregate holding a GC pointer: in statepoint style by its type; in gcroot style
 * one an insertvalue put a GC pointer into (through insertvalue chains).
 */
bool isGcAggregate(const Value *value, const GcPointers &gc, bool statepoint) {
  Type *type = value->getType();
  if (!type->isStructTy() && !type->isArrayTy()) return false;
  if (statepoint) return holdsStatepointPointer(type);
  for (auto *insert = dyn_cast<InsertValueInst>(value); insert != nullptr; insert = dyn_cast<InsertValueInst>(insert->getAggregateOperand()))
    if (gc.isGcPointer(insert->getInsertedValueOperand())) return true;
  return false;
}

// ---- Globals that hold a GC pointer without gc_add_global -----------------------------------

/**
 * The globals a GC pointer is stored into and that no gc_add_global call registers (the
 * collector neither sees nor updates them), and for each function the ones it reads, directly or
 * through its callees (bottom-up over the reverse call graph: a function is revisited only when
 * its set grows, at most once per global).
 */
class PlainGcGlobals {
public:
  PlainGcGlobals(Module &module, const GcPointers &gc, const CallSites &sites) {
    SmallPtrSet<const Value *, 8> registered;
    for (Function &f : module)
      for (Instruction &i : instructions(f))
        if (auto *call = dyn_cast<CallBase>(&i))
          if (calls(*call, REGISTER_GLOBAL) && call->arg_size() > 0) registered.insert(baseObjectOf(call->getArgOperand(0)));
    for (Function &f : module)
      for (Instruction &i : instructions(f)) {
        auto *store = dyn_cast<StoreInst>(&i);
        if (store == nullptr || !gc.isGcPointer(store->getValueOperand())) continue;
        auto *global = dyn_cast<GlobalVariable>(baseObjectOf(store->getPointerOperand()));
        if (global != nullptr && registered.count(global) == 0 && index.count(global) == 0) {
          index[global] = globals.size();
          globals.push_back(global);
        }
      }
    if (globals.empty()) return;
    summarize(module, sites, readers, [&](const Instruction &i) {
      auto *load = dyn_cast<LoadInst>(&i);
      return load != nullptr ? globalOf(load->getPointerOperand()) : -1;
    });
    summarize(module, sites, writers, [&](const Instruction &i) {
      auto *store = dyn_cast<StoreInst>(&i);
      return store != nullptr && gc.isGcPointer(store->getValueOperand()) ? globalOf(store->getPointerOperand()) : -1;
    });
  }

  const std::vector<const GlobalVariable *> &all() const { return globals; }

  /** The global a load or store addresses, as its index in all(), or -1. */
  int globalOf(const Value *pointer) const {
    auto found = index.find(baseObjectOf(pointer));
    return found == index.end() ? -1 : static_cast<int>(found->second);
  }

  /** The globals of all() that `f` reads, itself or through calls (empty when none). */
  const BitVector &readBy(const Function *f) const { return lookup(readers, f); }

  /** The globals of all() that `f` stores a GC pointer into, itself or through calls. */
  const BitVector &writtenBy(const Function *f) const { return lookup(writers, f); }

private:
  using Summary = DenseMap<const Function *, BitVector>;

  const BitVector &lookup(const Summary &summary, const Function *f) const {
    auto found = summary.find(f);
    return found == summary.end() ? none : found->second;
  }

  /** Each function's globals that `direct` gives for one of its instructions, then its callees' too. */
  template <typename Direct> void summarize(Module &module, const CallSites &sites, Summary &summary, Direct direct) {
    std::vector<const Function *> work;
    for (Function &f : module)
      for (Instruction &i : instructions(f)) {
        int k = direct(i);
        if (k < 0) continue;
        BitVector &set = summary[&f];
        if (set.empty()) {
          set.resize(globals.size());
          work.push_back(&f);
        }
        set.set(k);
      }
    while (!work.empty()) {
      const Function *callee = work.back();
      work.pop_back();
      BitVector set = summary[callee]; // a copy: inserting a caller may move the map's entries
      for (const CallBase *call : sites.of(callee)) {
        BitVector &callerSet = summary[call->getFunction()];
        if (callerSet.empty()) callerSet.resize(globals.size());
        BitVector before = callerSet;
        callerSet |= set;
        if (callerSet != before) work.push_back(call->getFunction());
      }
    }
  }

  std::vector<const GlobalVariable *> globals;
  DenseMap<const Value *, unsigned> index;
  Summary readers, writers;
  BitVector none;
};

// ---- Liveness across the calls that can collect ---------------------------------------------

enum class Kind {
  NoGcStrategy,
  IntegerAcrossSafepoint,
  StaleGcrootCopy,
  UnrootedGcPointer,
  InteriorPointerArgument,
  InteriorPointerInGcroot,
  GcPointerInStackSlot,
  GcPointerInPlainGlobal,
  GcPointerInAggregate,
  InttoptrGcPointer,
  MissingWriteBarrier,
};

const char *kindName(Kind kind) {
  switch (kind) {
  case Kind::NoGcStrategy: return "no-gc-strategy";
  case Kind::IntegerAcrossSafepoint: return "integer-across-safepoint";
  case Kind::StaleGcrootCopy: return "stale-gcroot-copy";
  case Kind::UnrootedGcPointer: return "unrooted-gc-pointer";
  case Kind::InteriorPointerArgument: return "interior-pointer-argument";
  case Kind::InteriorPointerInGcroot: return "interior-pointer-in-gcroot";
  case Kind::GcPointerInStackSlot: return "gc-pointer-in-stack-slot";
  case Kind::GcPointerInPlainGlobal: return "gc-pointer-in-plain-global";
  case Kind::GcPointerInAggregate: return "gc-pointer-in-aggregate";
  case Kind::InttoptrGcPointer: return "inttoptr-gc-pointer";
  case Kind::MissingWriteBarrier: return "missing-write-barrier";
  }
  return "?";
}

/**
 * A mistake: `value` and where it shows, `at` (a call that can collect, or a store into a gcroot
 * slot; for missing-write-barrier the store, `value` the object stored into and `safepoint` the
 * call that can collect it reaches unbarriered, or null when it reaches the function's return).
 */
struct Finding {
  Kind kind;
  const Value *value;
  const Instruction *at;
  const Instruction *safepoint = nullptr;
};

bool isNullComparison(const Instruction &user) {
  auto *compare = dyn_cast<ICmpInst>(&user);
  return compare != nullptr && compare->isEquality() && (isa<ConstantPointerNull>(compare->getOperand(0)) || isa<ConstantPointerNull>(compare->getOperand(1)));
}

/** The slot or global a store writes as a whole (its address is it through casts and zero GEPs). */
const Value *wholeObjectStored(const StoreInst &store) {
  const Value *pointer = store.getPointerOperand();
  for (;;) {
    auto *gep = dyn_cast<GEPOperator>(pointer);
    if (gep != nullptr && gep->hasAllZeroIndices()) pointer = gep->getPointerOperand();
    else if (auto *cast = dyn_cast<BitCastOperator>(pointer)) pointer = cast->getOperand(0);
    else return pointer;
  }
}

/** Memory objects tracked as a whole (loads use them, whole stores define them), not as SSA operands. */
bool isMemoryObject(const Value *value) { return isa<AllocaInst>(value) || isa<GlobalVariable>(value); }

/**
 * The tracked values of one function (SSA values, stack slots and plain globals, each with the
 * kind of finding it gives when live across a collecting call) and a backward liveness over them.
 */
class FunctionCheck {
public:
  FunctionCheck(Function &f, const GcPointers &gc, const CollectingCalls &collecting, const PlainGcGlobals &globals)
      : f(f), gc(gc), collecting(collecting), globals(globals) {
    StringRef strategy = f.hasGC() ? StringRef(f.getGC()) : StringRef();
    bool statepoint = f.hasGC() && isStatepointStrategy(strategy);
    trackHiddenPointers();
    if (!f.hasGC()) trackGcPointers([](const Value *) { return Kind::NoGcStrategy; });
    else if (!statepoint)
      trackGcPointers([&](const Value *v) { return gc.wasInGcrootSlot(v) ? Kind::StaleGcrootCopy : Kind::UnrootedGcPointer; });
    else trackInttoptrPointers();
    if (f.hasGC()) trackAggregates(statepoint);
    trackStackSlots();
    for (unsigned k : globals.readBy(&f).set_bits()) track(globals.all()[k], Kind::GcPointerInPlainGlobal);
  }

  std::vector<Finding> run() {
    std::vector<Finding> out;
    for (BasicBlock &block : f)
      for (Instruction &i : block) {
        if (isCollectingCall(i)) interiorArguments(cast<CallBase>(i), out);
        if (auto *store = dyn_cast<StoreInst>(&i)) interiorPointerInGcroot(*store, out);
      }
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

  template <typename KindOf> void trackGcPointers(KindOf kindOf) {
    for (Argument &argument : f.args())
      if (gc.isGcPointer(&argument)) track(&argument, kindOf(&argument));
    for (Instruction &i : instructions(f))
      if (!isa<AllocaInst>(i) && gc.isGcPointer(&i)) track(&i, kindOf(&i));
  }

  /** Statepoint style relocates its GC pointers, except one made by inttoptr (its own base, stale). */
  void trackInttoptrPointers() {
    for (Instruction &i : instructions(f))
      if (gc.isGcPointer(&i) && isMadeByInttoptr(&i)) track(&i, Kind::InttoptrGcPointer);
  }

  void trackAggregates(bool statepoint) {
    for (Argument &argument : f.args())
      if (isGcAggregate(&argument, gc, statepoint)) track(&argument, Kind::GcPointerInAggregate);
    for (Instruction &i : instructions(f))
      if (isGcAggregate(&i, gc, statepoint)) track(&i, Kind::GcPointerInAggregate);
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

  /** The collector takes a gcroot slot's value for an object's start. */
  void interiorPointerInGcroot(const StoreInst &store, std::vector<Finding> &out) {
    if (gcrootSlotOf(store.getPointerOperand()) == nullptr) return;
    SmallPtrSet<const Value *, 8> visited;
    if (isInteriorPointer(store.getValueOperand(), gc, visited)) out.push_back({Kind::InteriorPointerInGcroot, store.getValueOperand(), &store});
  }

  /**
   * Calls `visit(item)` for each tracked item `i` uses: a load of a tracked slot or global uses
   * it, and so does a call of a function that reads a tracked global.
   */
  template <typename Visit> void forEachUse(const Instruction &i, Visit visit) const {
    if (auto *load = dyn_cast<LoadInst>(&i)) {
      int k = itemOf(baseObjectOf(load->getPointerOperand()));
      if (k >= 0) visit(k);
    }
    if (auto *call = dyn_cast<CallBase>(&i))
      if (const Function *callee = calledFunction(*call))
        for (unsigned g : globals.readBy(callee).set_bits())
          if (itemOf(globals.all()[g]) >= 0) visit(itemOf(globals.all()[g]));
    if (isNullComparison(i)) return;
    for (const Use &operand : i.operands())
      if (!isMemoryObject(operand.get()) && itemOf(operand.get()) >= 0) visit(itemOf(operand.get()));
  }

  /** The tracked item `i` defines (its own value, or the slot or global it stores to as a whole), or -1. */
  int definedItem(const Instruction &i) const {
    if (!isa<AllocaInst>(i) && itemOf(&i) >= 0) return itemOf(&i);
    if (auto *store = dyn_cast<StoreInst>(&i)) {
      const Value *object = wholeObjectStored(*store);
      if (isMemoryObject(object)) return itemOf(object);
    }
    return -1;
  }

  void liveAcrossCalls(std::vector<Finding> &out);
  DenseMap<const Instruction *, BitVector> globalsHeldAtCalls() const;
  void holdStep(const Instruction &i, BitVector &held) const;

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
  const PlainGcGlobals &globals;
  std::vector<Finding> items; // at == nullptr: the kind this value gives
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
  DenseMap<const Instruction *, BitVector> held = globalsHeldAtCalls();
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
          if (items[k].value == call || (isa<GlobalVariable>(items[k].value) && !held[call].test(k))) continue;
          auto known = first.find(k);
          if (known == first.end() || order[call] < order[known->second.at]) first[k] = {items[k].kind, items[k].value, call};
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

bool hasBit(const BitVector &set, unsigned k) { return k < set.size() && set.test(k); }

/** The tracked globals `i` puts a GC pointer into (set), or clears with a whole store of anything else (reset). */
void FunctionCheck::holdStep(const Instruction &i, BitVector &held) const {
  if (auto *store = dyn_cast<StoreInst>(&i)) {
    int k = itemOf(baseObjectOf(store->getPointerOperand()));
    if (k >= 0 && isa<GlobalVariable>(items[k].value)) {
      if (gc.isGcPointer(store->getValueOperand())) held.set(k);
      else if (wholeObjectStored(*store) == items[k].value) held.reset(k);
    }
  }
  if (auto *call = dyn_cast<CallBase>(&i))
    if (const Function *callee = calledFunction(*call))
      for (unsigned g : globals.writtenBy(callee).set_bits())
        if (itemOf(globals.all()[g]) >= 0) held.set(itemOf(globals.all()[g]));
}

/**
 * For each call that can collect, the tracked globals that may hold a GC pointer just before it
 * (a forward may-analysis): a global is held after a store of a GC pointer into it or a call of
 * a function that makes one, and no longer after a whole store of anything else (null); at entry
 * it is held unless this function (or a callee) writes it, in which case a store comes first.
 * A global that holds nothing yet when the program collects is not stale.
 */
DenseMap<const Instruction *, BitVector> FunctionCheck::globalsHeldAtCalls() const {
  DenseMap<const Instruction *, BitVector> heldAt;
  BitVector atEntry(items.size());
  bool any = false;
  for (unsigned k = 0; k < items.size(); k++)
    if (auto *global = dyn_cast<GlobalVariable>(items[k].value)) {
      any = true;
      if (!hasBit(globals.writtenBy(&f), globals.globalOf(global))) atEntry.set(k);
    }
  if (!any) return heldAt;
  DenseMap<const BasicBlock *, BitVector> heldOut;
  auto heldIn = [&](const BasicBlock &block) {
    if (&block == &f.getEntryBlock()) return atEntry;
    BitVector in(items.size());
    for (const BasicBlock *pred : predecessors(&block)) {
      auto found = heldOut.find(pred);
      if (found != heldOut.end()) in |= found->second;
    }
    return in;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (BasicBlock &block : f) {
      BitVector held = heldIn(block);
      for (Instruction &i : block) holdStep(i, held);
      auto found = heldOut.find(&block);
      if (found == heldOut.end() || found->second != held) {
        heldOut[&block] = held;
        changed = true;
      }
    }
  }
  for (BasicBlock &block : f) {
    BitVector held = heldIn(block);
    for (Instruction &i : block) {
      if (isCollectingCall(i)) heldAt[&i] = held;
      holdStep(i, held);
    }
  }
  return heldAt;
}

// ---- Missing write barriers (check --generational) ------------------------------------------

/**
 * A forward dataflow over `f`'s reachable blocks, in reverse post-order until nothing changes:
 * in(entry) is empty; in(B) is the union (or, `intersect`, the intersection) of out(P) over B's
 * predecessors; out(B) is `step` applied to in(B) over B's instructions. Returns in(B) per
 * reachable block (an unreachable block has none: nothing is reported there).
 */
template <typename Step>
DenseMap<const BasicBlock *, BitVector> forwardIn(Function &f, unsigned n, bool intersect, Step step) {
  ReversePostOrderTraversal<Function *> rpo(&f);
  DenseMap<const BasicBlock *, BitVector> in, out;
  for (BasicBlock *block : rpo) out[block] = BitVector(n, intersect);
  for (bool changed = true; changed;) {
    changed = false;
    for (BasicBlock *block : rpo) {
      BitVector here(n, intersect && block != &f.getEntryBlock());
      for (BasicBlock *pred : predecessors(block)) {
        auto found = out.find(pred);
        if (found == out.end()) continue; // an unreachable predecessor
        if (intersect) here &= found->second;
        else here |= found->second;
      }
      in[block] = here;
      for (Instruction &i : *block) step(i, here);
      if (here != out[block]) {
        out[block] = here;
        changed = true;
      }
    }
  }
  return in;
}

/**
 * `check --generational`: each store of a GC pointer into a field of a GC object (not a stack slot,
 * gcroot slot or global) must be followed by `gc_write_barrier(obj)` of the object stored into on
 * every path before the next call that can collect, and before the function returns (its caller's
 * next safepoint is out of sight). A thread stops for a collection only at such a call, so no
 * nursery collection can run between the store and the barrier. As a dataflow: a forward
 * may-analysis of the stores still owed a barrier (gen: the store; kill: a gc_write_barrier call
 * whose argument is the same object); a store still owed at a call that can collect or at a
 * `ret`/`resume` is a finding, named at that first safepoint. gc_write_barrier never collects.
 *
 * The same object: the pointer operands' bases through GEPs and casts; in gcroot style also a
 * reload of the gcroot slot the base was stored to or loaded from, in the same block with no
 * store to the slot and no call that can collect between.
 *
 * Exempt: a store of a constant (null) or a non-GC value, and a store into an object allocated by
 * gc_alloc with no call that can collect on any path since (a forward must-analysis over the
 * function's gc_alloc calls). Under sticky mark bits such an object is young (unmarked: nothing
 * has collected since it was allocated), and a nursery collection traces every young object
 * reachable from the roots or from a logged old object, so what is stored into it is found
 * through it; storing the young object itself into an old one needs that old object's barrier.
 */
class WriteBarriers {
public:
  WriteBarriers(Function &f, const GcPointers &gc, const CollectingCalls &collecting) : f(f), gc(gc), collecting(collecting) {}

  void run(std::vector<Finding> &out) {
    numberSlotReloads();
    findOwedStores();
    if (stores.empty()) return;
    std::vector<const Instruction *> reached(stores.size(), nullptr);
    DenseMap<const Instruction *, unsigned> order;
    for (Instruction &i : instructions(f)) order[&i] = order.size();
    auto firstSafepoint = [&](const BitVector &owed, const Instruction *at) {
      for (unsigned k : owed.set_bits())
        if (reached[k] == nullptr || order[at] < order[reached[k]]) reached[k] = at;
    };
    auto step = [&](const Instruction &i, BitVector &owed) { owedStep(i, owed, firstSafepoint); };
    auto noReport = [](const BitVector &, const Instruction *) {};
    DenseMap<const BasicBlock *, BitVector> in =
        forwardIn(f, stores.size(), false, [&](const Instruction &i, BitVector &owed) { owedStep(i, owed, noReport); });
    for (auto &entry : in) {
      BitVector owed = entry.second;
      for (const Instruction &i : *entry.first) step(i, owed);
    }
    for (unsigned k = 0; k < stores.size(); k++)
      if (reached[k] != nullptr) {
        const Instruction *safepoint = isa<CallBase>(reached[k]) ? reached[k] : nullptr;
        out.push_back({Kind::MissingWriteBarrier, baseObjectOf(stores[k]->getPointerOperand()), stores[k], safepoint});
      }
  }

private:
  /** The object a pointer addresses: its base through GEPs and casts, or the value a gcroot reload stands for. */
  const Value *objectOf(const Value *pointer) const {
    const Value *base = baseObjectOf(pointer);
    auto found = sameAs.find(base);
    return found == sameAs.end() ? base : found->second;
  }

  /** A store of a GC pointer (not a constant) into a field of a GC object (not a slot or global). */
  bool storesGcPointerIntoObject(const StoreInst &store) const {
    const Value *stored = store.getValueOperand();
    if (isa<Constant>(stored) || !gc.isGcPointer(stored)) return false;
    const Value *object = baseObjectOf(store.getPointerOperand());
    return !isa<AllocaInst>(object) && !isa<Constant>(object) && gc.isGcPointer(object);
  }

  bool isBarrier(const Instruction &i) const {
    auto *call = dyn_cast<CallBase>(&i);
    return call != nullptr && calls(*call, WRITE_BARRIER) && call->arg_size() > 0;
  }

  bool isCollectingCall(const Instruction &i) const {
    auto *call = dyn_cast<CallBase>(&i);
    return call != nullptr && !isBarrier(i) && collecting.canCollect(*call);
  }

  /**
   * Per block: a load of a gcroot slot stands for the value last stored to it or the slot's first
   * load, when no other store to the slot and no call that can collect came between.
   */
  void numberSlotReloads() {
    for (BasicBlock &block : f) {
      DenseMap<const AllocaInst *, const Value *> holds;
      for (Instruction &i : block) {
        if (isCollectingCall(i)) holds.clear();
        if (auto *load = dyn_cast<LoadInst>(&i)) {
          const AllocaInst *slot = gcrootSlotOf(load->getPointerOperand());
          if (slot == nullptr) continue;
          auto found = holds.find(slot);
          if (found != holds.end()) sameAs[load] = found->second;
          else holds[slot] = load;
        } else if (auto *store = dyn_cast<StoreInst>(&i)) {
          const AllocaInst *slot = gcrootSlotOf(store->getPointerOperand());
          if (slot == nullptr) continue;
          if (wholeObjectStored(*store) == slot) holds[slot] = objectOf(store->getValueOperand());
          else holds.erase(slot);
        }
      }
    }
  }

  /** The stores owed a barrier: each store of a GC pointer into an object not freshly allocated. */
  void findOwedStores() {
    DenseMap<const Value *, unsigned> allocation;
    for (Instruction &i : instructions(f))
      if (auto *call = dyn_cast<CallBase>(&i))
        if (calls(*call, ALLOCATOR)) {
          unsigned next = allocation.size(); // before operator[] inserts (C++14 leaves the order open)
          allocation[call] = next;
        }
    auto freshStep = [&](const Instruction &i, BitVector &fresh) {
      if (isCollectingCall(i)) fresh.reset();
      auto found = allocation.find(&i);
      if (found != allocation.end()) fresh.set(found->second);
    };
    DenseMap<const BasicBlock *, BitVector> in = forwardIn(f, allocation.size(), true, freshStep);
    DenseMap<const Value *, BitVector> byObject;
    for (BasicBlock &block : f) {
      auto found = in.find(&block);
      if (found == in.end()) continue;
      BitVector fresh = found->second;
      for (Instruction &i : block) {
        auto *store = dyn_cast<StoreInst>(&i);
        if (store != nullptr && storesGcPointerIntoObject(*store)) {
          auto alloc = allocation.find(objectOf(store->getPointerOperand()));
          if (alloc == allocation.end() || !fresh.test(alloc->second)) stores.push_back(store);
        }
        freshStep(i, fresh);
      }
    }
    for (unsigned k = 0; k < stores.size(); k++) {
      BitVector &mask = owedBy[objectOf(stores[k]->getPointerOperand())];
      mask.resize(stores.size());
      mask.set(k);
    }
    for (unsigned k = 0; k < stores.size(); k++) storeIndex[stores[k]] = k;
  }

  /** One instruction of the owed-stores analysis; `reach(owed, at)` is told of each safepoint reached. */
  template <typename Reach> void owedStep(const Instruction &i, BitVector &owed, Reach reach) const {
    if (isBarrier(i)) {
      auto found = owedBy.find(objectOf(cast<CallBase>(i).getArgOperand(0)));
      if (found != owedBy.end()) owed.reset(found->second);
    } else if (isCollectingCall(i) || isa<ReturnInst>(i) || isa<ResumeInst>(i)) {
      if (owed.any()) reach(owed, &i);
      owed.reset();
    }
    auto found = storeIndex.find(&i);
    if (found != storeIndex.end()) owed.set(found->second);
  }

  Function &f;
  const GcPointers &gc;
  const CollectingCalls &collecting;
  DenseMap<const Value *, const Value *> sameAs; // a gcroot reload -> the value it stands for
  std::vector<const StoreInst *> stores;          // owed a barrier, in function order
  DenseMap<const Instruction *, unsigned> storeIndex;
  DenseMap<const Value *, BitVector> owedBy; // object -> its stores
};

// ---- The pass -------------------------------------------------------------------------------

void printFinding(const Finding &finding, const Function &f, const Module &module) {
  const BasicBlock *block = finding.at->getParent();
  // The call that can collect; for a store into a gcroot slot, the slot; for a store owed a write
  // barrier, the safepoint it reaches first ("return": the function's return).
  auto *store = dyn_cast<StoreInst>(finding.at);
  std::string at = finding.kind == Kind::MissingWriteBarrier
                       ? (finding.safepoint != nullptr ? callText(*cast<CallBase>(finding.safepoint), module) : std::string("return"))
                   : store != nullptr ? operandText(*store->getPointerOperand(), module)
                                      : callText(*cast<CallBase>(finding.at), module);
  outs() << "{\"finding\":{\"kind\":\"" << kindName(finding.kind) << "\",\"function\":" << jsonString(f.getName())
         << ",\"strategy\":" << (f.hasGC() ? jsonString(f.getGC()) : std::string("null"))
         << ",\"block\":" << jsonString(operandText(*block, module)) << ",\"line\":" << lineText(*finding.at)
         << ",\"value\":" << jsonString(operandText(*finding.value, module)) << ",\"call\":" << jsonString(at);
  if (finding.kind == Kind::MissingWriteBarrier) // which store: the pointer stored and the field's address
    outs() << ",\"stored\":" << jsonString(operandText(*store->getValueOperand(), module))
           << ",\"field\":" << jsonString(operandText(*store->getPointerOperand(), module));
  outs() << "}}\n";
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
  /** `rootwalk-check-generational`: also the missing write barriers (WriteBarriers). */
  bool generational = false;

  PreservedAnalyses run(Module &module, ModuleAnalysisManager &) {
    if (const Function *f = rewrittenBy(module)) {
      outs() << "{\"error\":\"rewritten\",\"function\":" << jsonString(f->getName()) << "}\n";
      return PreservedAnalyses::all();
    }
    CallSites sites(module);
    CollectingCalls collecting(module, userCollects, sites);
    GcPointers gc(module, sites);
    PlainGcGlobals globals(module, gc, sites);
    for (Function &f : module) {
      if (f.isDeclaration()) continue;
      std::vector<Finding> findings = FunctionCheck(f, gc, collecting, globals).run();
      if (generational) WriteBarriers(f, gc, collecting).run(findings);
      for (const Finding &finding : findings) printFinding(finding, f, module);
    }
    printModuleFacts(module);
    return PreservedAnalyses::all();
  }

  static bool isRequired() { return true; }
};

const char *const PASS_NAME = "rootwalk-check";

/**
 * `rootwalk-check` or `rootwalk-check<a;b>`: the names are the user's collecting functions;
 * `rootwalk-check-generational[<a;b>]` also checks the write barriers.
 */
bool parsePassName(StringRef name, std::vector<std::string> &collects, bool &generational) {
  if (!name.consume_front(PASS_NAME)) return false;
  generational = name.consume_front("-generational");
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
              if (!parsePassName(name, pass.userCollects, pass.generational)) return false;
              manager.addPass(std::move(pass));
              return true;
            });
          }};
}
