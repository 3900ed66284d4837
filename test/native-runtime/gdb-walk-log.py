# rootwalk live-walk test: run `rootwalk run ...` (node) under gdb with ROOTWALK_WALK_LOG set; at
# each of the first RW_HITS stops in rw_walk_logged (called right after the runtime appended the
# collection's walks to the log), record gdb's own unwind of every thread (pc, sp, callee-saved
# registers per frame) and the word at every root slot the log names (whole walks and the scan's),
# then continue. Stops whose log has fewer than RW_MIN_THREADS threads are passed over.
#   ROOTWALK_WALK_LOG=log RW_GDB_JSON=out.json RW_HITS=3 gdb -nx -batch -x gdb-walk-log.py --args node main.js run ...
import json, os, sys
import gdb

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from gdb_frames import quiet_settings, thread_frames

quiet_settings()
gdb.execute("handle all nostop noprint pass", to_string=True)
gdb.execute("break rw_walk_logged", to_string=True)
gdb.execute("run", to_string=True)
stops = []
hits = int(os.environ.get("RW_HITS", "3"))
inferior = gdb.selected_inferior()
while len(stops) < hits and inferior.pid != 0:
    with open(os.environ["ROOTWALK_WALK_LOG"]) as h:
        log = json.loads(h.read().strip().split("\n")[-1])
    if len(log["threads"]) < int(os.environ.get("RW_MIN_THREADS", "1")):
        gdb.execute("continue", to_string=True)
        continue
    slots = {}
    for t in log["threads"]:
        for fr in t["frames"] + t["scan"]["frames"]:
            for r in fr["roots"]:
                if "slot" not in r:
                    continue  # a root in a register of the starting context: no memory to read
                slot = int(r["slot"], 16)  # the log writes addresses as hex strings
                slots[str(slot)] = int.from_bytes(bytes(inferior.read_memory(slot, 8)), "little")
    stops.append({"collection": log["collection"], "threads": thread_frames(), "slots": slots})
    if len(stops) < hits:
        gdb.execute("continue", to_string=True)
with open(os.environ["RW_GDB_JSON"], "w") as h:
    json.dump({"stops": stops}, h)
gdb.execute("kill")
