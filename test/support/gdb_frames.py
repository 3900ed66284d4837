# Shared by rootwalk's gdb scripts (test/walker/core/gdb-core.py, test/native-runtime/gdb-walk-log.py):
# gdb's own unwind of every thread of the inferior, as JSON-ready dicts.
import gdb

CALLEE_SAVED = ("rbx", "rbp", "r12", "r13", "r14", "r15")
# gdb-multiarch on an AArch64 core: x19-x28, the frame pointer x29 and the link register x30.
AARCH64_CALLEE_SAVED = tuple("x%d" % n for n in range(19, 31))


def machine_registers(frame):
    """(stack pointer name, callee-saved names) of the frame's architecture."""
    if "aarch64" in frame.architecture().name():
        return "sp", AARCH64_CALLEE_SAVED
    return "rsp", CALLEE_SAVED


def reg(frame, name):
    try:
        v = frame.read_register(name)
        return None if v.is_optimized_out else int(v) & 0xFFFFFFFFFFFFFFFF
    except (gdb.error, ValueError):
        return None


def quiet_settings():
    for setting in ("set pagination off", "set confirm off", "set debuginfod enabled off", "set breakpoint pending on", "set print thread-events off"):
        try:
            gdb.execute(setting, to_string=True)
        except gdb.error:
            pass


def thread_frames(max_frames=400):
    """Every thread's frames (pc, sp, name, type, callee-saved registers), innermost first."""
    threads = []
    for th in gdb.selected_inferior().threads():
        th.switch()
        frames = []
        f = gdb.newest_frame()
        while f is not None and len(frames) < max_frames:
            kind = {gdb.INLINE_FRAME: "inline", gdb.TAILCALL_FRAME: "tailcall", gdb.SIGTRAMP_FRAME: "sigtramp"}.get(f.type(), "normal")
            sp, callee_saved = machine_registers(f)
            frames.append({"pc": f.pc(), "sp": reg(f, sp), "name": f.name(), "type": kind, "registers": {n: reg(f, n) for n in callee_saved}})
            try:
                f = f.older()
            except gdb.error:
                break
        threads.append({"tid": th.ptid[1], "frames": frames})
    return threads
