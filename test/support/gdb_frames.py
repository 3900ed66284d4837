# Shared by rootwalk's gdb scripts (test/walker/core/gdb-core.py, test/native-runtime/gdb-walk-log.py):
# gdb's own unwind of every thread of the inferior, as JSON-ready dicts.
import gdb

CALLEE_SAVED = ("rbx", "rbp", "r12", "r13", "r14", "r15")


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
            frames.append({"pc": f.pc(), "sp": reg(f, "rsp"), "name": f.name(), "type": kind, "registers": {n: reg(f, n) for n in CALLEE_SAVED}})
            try:
                f = f.older()
            except gdb.error:
                break
        threads.append({"tid": th.ptid[1], "frames": frames})
    return threads
