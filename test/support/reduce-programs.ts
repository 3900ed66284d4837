/**
 * Generated programs for `rootwalk reduce` tests: `functions` small functions called in turn by
 * rw_main, each allocating an object, storing a value and a young item (with gc_write_barrier)
 * into it, collecting (gc_collect) and reading the value back. With `mistake`, one function in
 * the middle does one thing wrong, so that the program fails and the reduced one must too:
 *  - integer-across-safepoint (statepoint): the object's address as an integer (ptrtoint) made
 *    before the collection and used after it;
 *  - unrooted-gc-pointer (gcroot): the object is never stored in its gcroot slot and is used after
 *    the collection (check finds it; under run --stress it faults: the object moved);
 *  - missing-write-barrier (both styles, check --generational): the item's store has no barrier.
 */
export type ReduceStyle = "statepoint" | "gcroot";
export type ReduceMistake = "integer-across-safepoint" | "unrooted-gc-pointer" | "missing-write-barrier" | "none";

export interface GeneratedProgram {
  text: string;
  /** The function holding the mistake (`f<index>`). */
  culprit: string;
}

function statepointFunction(k: number, mistake: ReduceMistake | undefined, barriers: boolean): string {
  const p = "i8 addrspace(1)*";
  const integer = mistake === "integer-across-safepoint";
  const item = `  %item = call ${p} @gc_alloc(i64 0, i64 8)
  %slot = bitcast ${p} %o to ${p} addrspace(1)*
  store ${p} %item, ${p} addrspace(1)* %slot, align 8
${mistake === "missing-write-barrier" ? "" : `  call void @gc_write_barrier(${p} %o)\n`}`;
  return `define i64 @f${k}(i64 %x) gc "statepoint-example" {
entry:
  %o = call ${p} @gc_alloc(i64 1, i64 8)
${barriers ? item : ""}  %raw = getelementptr i8, ${p} %o, i64 8
  %value = bitcast ${p} %raw to i64 addrspace(1)*
  store i64 %x, i64 addrspace(1)* %value, align 8
${integer ? `  %key = ptrtoint ${p} %o to i64\n` : ""}  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %value, align 8
${integer ? `  %now = ptrtoint ${p} %o to i64\n  %moved = sub i64 %now, %key\n  %w = add i64 %v, %moved\n` : "  %w = add i64 %v, 0\n"}  %r = add i64 %w, ${k}
  ret i64 %r
}
`;
}

function gcrootFunction(k: number, mistake: ReduceMistake | undefined, barriers: boolean): string {
  const unrooted = mistake === "unrooted-gc-pointer";
  const item = `  %item = call i8* @gc_alloc(i64 0, i64 8)
  %held = load i8*, i8** %root
  %slot = bitcast i8* ${unrooted ? "%o" : "%held"} to i8**
  store i8* %item, i8** %slot, align 8
${mistake === "missing-write-barrier" ? "" : `  call void @gc_write_barrier(i8* ${unrooted ? "%o" : "%held"})\n`}`;
  return `define i64 @f${k}(i64 %x) gc "plimmix" {
entry:
  %root = alloca i8*, align 8
  call void @llvm.gcroot(i8** %root, i8* null)
  store i8* null, i8** %root
  %o = call i8* @gc_alloc(i64 1, i64 8)
${unrooted ? "" : "  store i8* %o, i8** %root\n"}  %raw = getelementptr i8, i8* %o, i64 8
  %value = bitcast i8* %raw to i64*
  store i64 %x, i64* %value, align 8
${barriers ? item : ""}  call void @gc_collect()
${unrooted ? "  %again = getelementptr i8, i8* %o, i64 0\n" : "  %again = load i8*, i8** %root\n"}  %raw2 = getelementptr i8, i8* %again, i64 8
  %value2 = bitcast i8* %raw2 to i64*
  %v = load i64, i64* %value2, align 8
  %r = add i64 %v, ${k}
  ret i64 %r
}
`;
}

function header(style: ReduceStyle, name: string, barriers: boolean): string {
  if (style === "statepoint")
    return `source_filename = "${name}"
declare void @gc_init(i8*)
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
${barriers ? `declare void @gc_write_barrier(i8 addrspace(1)*) #0\nattributes #0 = { "gc-leaf-function" }\n` : ""}@__LLVM_StackMaps = external global i8
`;
  return `source_filename = "${name}"
declare void @llvm.gcroot(i8**, i8*)
declare void @gc_init(i8*)
declare i8* @gc_alloc(i64, i64)
declare void @gc_collect()
${barriers ? "declare void @gc_write_barrier(i8*)\n" : ""}@"_GC_MAP_${name}" = external global i8
`;
}

function rwMain(style: ReduceStyle, name: string, functions: number): string {
  const map = style === "statepoint" ? "@__LLVM_StackMaps" : `@"_GC_MAP_${name}"`;
  const calls = Array.from({ length: functions }, (_, k) => `  %s${k + 1} = call i64 @f${k}(i64 %s${k})\n`).join("");
  return `define i64 @rw_main() gc "${style === "statepoint" ? "statepoint-example" : "plimmix"}" {
entry:
  call void @gc_init(i8* ${map})
  %s0 = add i64 0, 1
${calls}  ret i64 %s${functions}
}
`;
}

/**
 * A program of `functions` functions (and rw_main); the mistake, if any, is in f<floor(2n/3)>.
 * `barriers`: each function also stores a young item into its object, with gc_write_barrier
 * (needed for missing-write-barrier; off otherwise, so that the program runs on a runtime
 * without gc_write_barrier).
 */
export function generateReduceProgram(
  style: ReduceStyle,
  mistake: ReduceMistake,
  functions: number,
  barriers = mistake === "missing-write-barrier",
  name = "reduce-me",
): GeneratedProgram {
  const culpritIndex = Math.floor((2 * functions) / 3);
  const make = style === "statepoint" ? statepointFunction : gcrootFunction;
  const bodies = Array.from({ length: functions }, (_, k) => make(k, k === culpritIndex && mistake !== "none" ? mistake : undefined, barriers));
  return { text: `${header(style, name, barriers)}\n${bodies.join("\n")}\n${rwMain(style, name, functions)}`, culprit: `f${culpritIndex}` };
}
