/**
 * The kinds of mistake `rootwalk check` reports, what each means and how to fix it: the one home
 * of these texts (the report prints them; docs/cli.md "rootwalk check" shows an example of each).
 */
export const FINDING_KINDS = {
  "no-gc-strategy": {
    meaning:
      "a function without a GC strategy holds a GC pointer across a call that can collect: no stack map covers it, the collector neither sees nor updates it",
    fix: 'give the function a GC strategy (gc "statepoint-example" or gc "plimmix" with the pointer in a gcroot slot), or do not keep the pointer across the call',
  },
  "integer-across-safepoint": {
    meaning:
      "an integer made from a GC pointer (ptrtoint, or arithmetic on it) is live across a call that can collect: the object may move and the integer still holds the old address",
    fix: "keep the pointer itself live across the call and make the integer after it",
  },
  "stale-gcroot-copy": {
    meaning:
      "gcroot style: an SSA copy of a pointer that was stored to or loaded from a gcroot slot is used after a call that can collect: the collector updates the slot, not this copy",
    fix: "load the pointer again from its gcroot slot after the call and use that",
  },
  "unrooted-gc-pointer": {
    meaning:
      "gcroot style: a GC pointer that was never stored in a gcroot slot (an allocation's result, an argument, a field read) is used after a call that can collect: no stack map entry covers it, the collector neither keeps its object alive nor updates it",
    fix: "store the pointer in a gcroot slot (an alloca given to llvm.gcroot) before the call and load it from the slot after the call",
  },
  "interior-pointer-argument": {
    meaning:
      "a pointer into the middle of a GC object is passed to a call that can collect: in the callee it is a base, and the collector takes every base for an object's address",
    fix: "pass the object's pointer and the offset as two arguments, and make the interior pointer in the callee",
  },
  "interior-pointer-in-gcroot": {
    meaning:
      "gcroot style: a pointer into the middle of a GC object (a getelementptr with a non-zero offset) is stored into a gcroot slot: the collector takes every gcroot slot's value for an object's start",
    fix: "root the object's pointer and make the interior pointer (getelementptr) after each load from the slot",
  },
  "gc-pointer-in-plain-global": {
    meaning:
      "a GC pointer is stored into a global that no gc_add_global call registers, and the global is read after a call that can collect: the collector neither keeps the object alive nor updates the global",
    fix: "register the global once, before storing into it: call void @gc_add_global(ptr @the_global) (its address, an 8-aligned pointer-sized slot)",
  },
  "gc-pointer-in-aggregate": {
    meaning:
      "a first-class aggregate (a struct or array SSA value, e.g. insertvalue into { ptr addrspace(1), i64 }) holding a GC pointer is live across a call that can collect: rewrite-statepoints-for-gc and gcroot slots relocate pointers, not aggregates",
    fix: "keep the GC pointer as its own SSA value across the call (extractvalue before it, insertvalue after it), or (gcroot style) in a gcroot slot",
  },
  "inttoptr-gc-pointer": {
    meaning:
      "statepoint style: a GC pointer made by inttoptr is live across a call that can collect: rewrite-statepoints-for-gc takes it for its own base, but it is almost always an interior or stale address, and the collector takes every base for an object's start",
    fix: "derive the pointer from the object's pointer with getelementptr (keep the offset as an integer), so it is relocated with its base",
  },
  "gc-pointer-in-stack-slot": {
    meaning:
      "a GC pointer is kept in an ordinary stack slot (an alloca that is not a gcroot) and read after a call that can collect: the collector does not see the slot",
    fix: "statepoint style: keep the pointer in an SSA value (run mem2reg/sroa first); gcroot style: register the slot with llvm.gcroot",
  },
  "missing-write-barrier": {
    meaning:
      "check --generational: a GC pointer is stored into a field of a GC object with no gc_write_barrier of that object before the next call that can collect (or the return): once the object is old, a nursery collection does not rescan it, and frees the young object it now points to",
    fix: "call gc_write_barrier(obj) after the store, with the object stored into, before the next call that can collect",
  },
  "missing-gc-init": {
    meaning: "the program allocates or collects but never calls gc_init: the runtime does not know its stack map and stops at the first allocation",
    fix: "call gc_init with the module's stack map (@__LLVM_StackMaps, or the _GC_MAP_ label) at the start of rw_main",
  },
  "call-without-safepoint": {
    meaning: "a call that can collect has no safepoint record at its return address: the collector cannot walk or update the calling frame there",
    fix: "give the calling function a GC strategy (its calls then get records), or keep no GC pointer in it across the call",
  },
} as const;

export type FindingKind = keyof typeof FINDING_KINDS;

export const FINDING_KIND_NAMES = Object.keys(FINDING_KINDS) as FindingKind[];

/** One mistake, from the IR pass or the binary check, in the form every report prints. */
export interface CheckFinding {
  kind: FindingKind;
  file: string;
  function: string;
  /** `%block` for IR; `+0x1c` (the call's offset in the function) for a binary. */
  where: string;
  /** `file:line` from debug info, or null. */
  line: string | null;
  /** The value held across the call (IR), or null; for missing-write-barrier, the object stored into. */
  value: string | null;
  /**
   * The call that can collect; for interior-pointer-in-gcroot, the gcroot slot stored into; for
   * missing-write-barrier, the first such call the store reaches with no barrier, or `return`.
   */
  call: string;
  /** missing-write-barrier only: the store, as the GC pointer stored and the field's address. */
  store?: { stored: string; field: string };
}
