# rootwalk core test: break at rw_core_stop, write a core with gcore, and record gdb's unwind of
# every thread (pc, sp, callee-saved registers per frame) and the words at the given slots.
#   RW_CORE=core RW_CORE_JSON=out.json gdb -nx -batch -x gdb-core.py --args ./prog
# RW_BREAK names another function to stop in; with RW_STARTI=1 the program is started first
# (starti), so that functions of the vDSO, whose symbols gdb reads from memory, can be named.
import json, os, gdb

CALLEE_SAVED = ("rbx", "rbp", "r12", "r13", "r14", "r15")

def reg(frame, name):
    try:
        v = frame.read_register(name)
        return None if v.is_optimized_out else int(v) & 0xFFFFFFFFFFFFFFFF
    except (gdb.error, ValueError):
        return None

gdb.execute("set pagination off")
gdb.execute("set confirm off")
try:
    gdb.execute("set debuginfod enabled off")
except gdb.error:
    pass
gdb.execute("handle SIGUSR1 nostop noprint pass", to_string=True)
if os.environ.get("RW_STARTI") == "1":
    gdb.execute("starti", to_string=True)
    gdb.execute("break %s" % os.environ.get("RW_BREAK", "rw_core_stop"), to_string=True)
    gdb.execute("continue", to_string=True)
else:
    gdb.execute("break %s" % os.environ.get("RW_BREAK", "rw_core_stop"), to_string=True)
    gdb.execute("run", to_string=True)
gdb.execute("gcore %s" % os.environ["RW_CORE"], to_string=True)
threads = []
for th in gdb.selected_inferior().threads():
    th.switch()
    frames = []
    f = gdb.newest_frame()
    while f is not None and len(frames) < 200:
        kind = {gdb.INLINE_FRAME: "inline", gdb.TAILCALL_FRAME: "tailcall", gdb.SIGTRAMP_FRAME: "sigtramp"}.get(f.type(), "normal")
        frames.append({"pc": f.pc(), "sp": reg(f, "rsp"), "name": f.name(), "type": kind, "registers": {n: reg(f, n) for n in CALLEE_SAVED}})
        f = f.older()
    threads.append({"tid": th.ptid[1], "frames": frames})
with open(os.environ["RW_CORE_JSON"], "w") as h:
    json.dump({"threads": threads}, h)
gdb.execute("kill")
