# SPDX-License-Identifier: GPL-2.0
"""What the guest's Python steps (servers.py, drgn_stacks.py) share: TAP
lines numbered as they come, the plan printed last, and the exit status."""
import sys

results = []


def tap(ok, name, why=""):
    results.append(bool(ok))
    line = "%s %d %s" % ("ok" if ok else "not ok", len(results), name)
    print(line + (" # " + why if why and not ok else ""), flush=True)


def note(msg):
    print("# " + msg, flush=True)


def finish():
    """The plan, then exit 0 only if every line was ok (and there was one)."""
    print("1..%d" % len(results), flush=True)
    sys.exit(0 if results and all(results) else 1)


def drop_slab():
    """One drop_caches 2: the slab shrinkers, the stack shrinker among them.
    The first call also writes 4, so that the kernel prints no console line
    for each write."""
    if not drop_slab.quiet:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("4")
        drop_slab.quiet = True
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2")


drop_slab.quiet = False
