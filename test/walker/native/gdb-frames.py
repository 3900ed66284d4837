# rootwalk native stop: gdb's view of the same stop the harness snapshots.
#
#   RW_NATIVE_STOP_SNAPSHOT=SNAPSHOT.json gdb -nx -batch -x gdb-frames.py --args ./prog SNAPSHOT.json
#
# Scheme: break on the FIRST instruction of gc_safepoint_poll (`break *gc_safepoint_poll`, no
# prologue skipping). At that stop the managed caller is exactly in the state the trampoline
# records a few instructions later (its SP after return = this frame's CFA, its return address
# on top of the stack, callee-saved registers untouched), so gdb's frame #1 must have
# pc == snapshot.ra and rsp == snapshot.sp. The script walks gdb's frames outward from #1 until
# the frame whose pc is rw_enter_return (the boundary; excluded, reported as gdbBoundary),
# remembers them, deletes the breakpoint and continues: the program then runs the handler,
# writes SNAPSHOT.json and exits. Finally the script reads SNAPSHOT.json (same process, so the
# same addresses; gdb also disables ASLR) and rewrites it with "gdbFrames", "gdbBoundary" and
# "exitCode" added. Any failure: message on stderr, "gdbError" added if possible, gdb exit 1.
import json
import os
import sys

import gdb

CALLEE_SAVED = ("rbx", "rbp", "r12", "r13", "r14", "r15")
MAX_FRAMES = 64


def fail(message):
    sys.stderr.write("gdb-frames.py: %s\n" % message)
    sys.stderr.flush()
    try:
        gdb.execute("kill", to_string=True)
    except gdb.error:
        pass
    gdb.execute("quit 1")


def register_hex(frame, name):
    try:
        value = frame.read_register(name)
        if value.is_optimized_out:
            return None
        return hex(int(value) & 0xFFFFFFFFFFFFFFFF)
    except (gdb.error, ValueError):
        return None


def describe(frame):
    return {
        "name": frame.name(),
        "pc": hex(frame.pc()),
        "sp": hex(int(frame.read_register("rsp")) & 0xFFFFFFFFFFFFFFFF),
        "registers": {name: register_hex(frame, name) for name in CALLEE_SAVED},
    }


def main():
    gdb.execute("set pagination off")
    gdb.execute("set confirm off")
    gdb.execute("set width 0")
    try:
        gdb.execute("set debuginfod enabled off")
    except gdb.error:
        pass
    # gdb runs -x scripts before it applies --args, so the path comes by environment.
    snapshot_path = os.environ.get("RW_NATIVE_STOP_SNAPSHOT", "")
    if snapshot_path == "":
        fail("RW_NATIVE_STOP_SNAPSHOT (the snapshot path, also the program's argument) is not set")

    poll = int(gdb.parse_and_eval("(unsigned long) &gc_safepoint_poll"))
    boundary = int(gdb.parse_and_eval("(unsigned long) &rw_enter_return"))
    gdb.execute("break *0x%x" % poll, to_string=True)
    gdb.execute("run", to_string=True)

    frame = gdb.selected_frame()
    if frame is None or frame.pc() != poll:
        fail("did not stop at the first instruction of gc_safepoint_poll")
    frames = []
    boundary_frame = None
    current = frame.older()
    while current is not None:
        if current.pc() == boundary:
            boundary_frame = describe(current)
            break
        frames.append(describe(current))
        if len(frames) > MAX_FRAMES:
            fail("no frame returning to rw_enter_return within %d frames" % MAX_FRAMES)
        current = current.older()
    if boundary_frame is None:
        fail("gdb's unwind ended before rw_enter_return; frames: %r" % frames)

    gdb.execute("delete", to_string=True)
    gdb.execute("continue", to_string=True)
    exit_code = gdb.parse_and_eval("$_exitcode")
    if exit_code.type.code == gdb.TYPE_CODE_VOID:
        fail("the program did not exit normally")

    with open(snapshot_path) as handle:
        snapshot = json.load(handle)
    snapshot["gdbFrames"] = frames
    snapshot["gdbBoundary"] = boundary_frame
    snapshot["exitCode"] = int(exit_code)
    temporary = snapshot_path + ".gdb-tmp"
    with open(temporary, "w") as handle:
        json.dump(snapshot, handle)
    os.replace(temporary, snapshot_path)


try:
    main()
except Exception as error:  # gdb.error, OSError, ValueError, ...
    fail("%s: %s" % (type(error).__name__, error))
