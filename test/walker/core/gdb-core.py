# rootwalk core test: break at rw_core_stop, write a core with gcore, and record gdb's unwind of
# every thread (pc, sp, callee-saved registers per frame).
#   RW_CORE=core RW_CORE_JSON=out.json gdb -nx -batch -x gdb-core.py --args ./prog
# RW_BREAK names another function to stop in; with RW_STARTI=1 the program is started first
# (starti), so that functions of the vDSO, whose symbols gdb reads from memory, can be named.
# With RW_CORE_READ=1 gdb is given a program and an existing core and only records the unwind:
#   RW_CORE_READ=1 RW_CORE_JSON=out.json gdb -nx -batch -ex 'core-file core' -x gdb-core.py ./prog
import json, os, sys
import gdb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from gdb_frames import quiet_settings, thread_frames

quiet_settings()
gdb.execute("handle SIGUSR1 nostop noprint pass", to_string=True)
if os.environ.get("RW_CORE_READ") == "1":
    # A core written by someone else (the kernel): gdb was given the program and the core; only
    # record its unwind.
    with open(os.environ["RW_CORE_JSON"], "w") as h:
        json.dump({"threads": thread_frames(200)}, h)
    gdb.execute("quit")
if os.environ.get("RW_STARTI") == "1":
    gdb.execute("starti", to_string=True)
    gdb.execute("break %s" % os.environ.get("RW_BREAK", "rw_core_stop"), to_string=True)
    gdb.execute("continue", to_string=True)
else:
    gdb.execute("break %s" % os.environ.get("RW_BREAK", "rw_core_stop"), to_string=True)
    gdb.execute("run", to_string=True)
gdb.execute("gcore %s" % os.environ["RW_CORE"], to_string=True)
with open(os.environ["RW_CORE_JSON"], "w") as h:
    json.dump({"threads": thread_frames(200)}, h)
gdb.execute("kill")
