import koffi from "koffi";

/*
 * The native runtime's exported functions (runtime.c, librwruntime-*.so) as koffi bindings: the
 * one place that spells their C signatures on the TypeScript side.
 */

type NativeFunction = ReturnType<ReturnType<typeof koffi.load>["func"]>;

export interface RuntimeLibrary {
  rwSetup: NativeFunction;
  rwStackAdd: NativeFunction;
  rwStackRetire: NativeFunction;
  rwAddressOf: NativeFunction;
  rwHeapReserve: NativeFunction;
  rwAllocationBits: NativeFunction;
  rwHeapProtect: NativeFunction;
  rwInitPath: NativeFunction;
  rwInitBase: NativeFunction;
  rwThreadCount: NativeFunction;
  rwThreadsAddress: NativeFunction;
  rwResultText: NativeFunction;
  rwRunMain: NativeFunction;
  rwStdoutToStderr: NativeFunction;
  rwStdoutRestore: NativeFunction;
  rwSetCollections: NativeFunction;
  rwSetFailure: NativeFunction;
  /** `_exit(code)` after flushing C's streams: ends the process without joining any thread. */
  rwExitNow: NativeFunction;
  /** The write barrier's side (runtime-barrier.c): unlogged bitmap, log, its capacity, count, clear. */
  rwUnloggedBits: NativeFunction;
  rwLogObjects: NativeFunction;
  rwLogCapacity: NativeFunction;
  rwLogCount: NativeFunction;
  rwLogClear: NativeFunction;
  /** Binds a function looked up only when wanted (rw_walk_logged, for the walk log). */
  bind(signature: string): NativeFunction;
}

export function loadRuntimeLibrary(path: string): RuntimeLibrary {
  const runtime = koffi.load(path);
  const bind = (signature: string): NativeFunction => runtime.func(signature);
  return {
    rwSetup: bind("int rw_setup(void *callback, uint64_t stress, int disableGc, uint64_t safepointTimeoutMs, int poison)"),
    rwStackAdd: bind("const char *rw_stack_add(void *region, uint64_t bytes)"),
    rwStackRetire: bind("int rw_stack_retire(void *region)"),
    rwAddressOf: bind("uint64_t rw_address_of(void *p)"),
    rwHeapReserve: bind("void *rw_heap_reserve(uint64_t bytes)"),
    rwAllocationBits: bind("void *rw_allocation_bits(void)"),
    rwHeapProtect: bind("int rw_heap_protect(uint64_t address, uint64_t bytes, int accessible)"),
    rwInitPath: bind("const char *rw_init_path(void)"),
    rwInitBase: bind("uint64_t rw_init_base(void)"),
    rwThreadCount: bind("int rw_thread_count(void)"),
    rwThreadsAddress: bind("void *rw_threads_address(void)"),
    rwResultText: bind("const char *rw_result_text(void)"),
    rwRunMain: bind("int rw_run_main(const char *program)"),
    rwStdoutToStderr: bind("int rw_stdout_to_stderr(void)"),
    rwStdoutRestore: bind("void rw_stdout_restore(void)"),
    rwSetCollections: bind("void rw_set_collections(uint64_t n)"),
    rwSetFailure: bind("void rw_set_failure(const char *line)"),
    rwExitNow: bind("void rw_exit_now(int code)"),
    rwUnloggedBits: bind("void *rw_unlogged_bits(void)"),
    rwLogObjects: bind("void *rw_log_objects(void)"),
    rwLogCapacity: bind("uint64_t rw_log_capacity(void)"),
    rwLogCount: bind("uint64_t rw_log_count(void)"),
    rwLogClear: bind("void rw_log_clear(void)"),
    bind,
  };
}

/** rw_thread_count(): records in use (live or dead), all below it. */
export function threadCount(runtime: RuntimeLibrary): number {
  return runtime.rwThreadCount() as number;
}
