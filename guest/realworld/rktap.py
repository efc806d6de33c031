# SPDX-License-Identifier: GPL-2.0
"""What the guest's Python steps (servers.py, drgn_stacks.py) share: TAP
lines numbered as they come, the plan printed last, and the exit status."""
import sys

results = []	# True: ok; False: not ok; None: not ok for a known reason (TODO)


def tap(ok, name, why="", todo=False):
    """One result; todo: a not ok that is a known limitation, the TAP TODO
    directive (scripts/results.sh reports it as a SKIP with its reason)."""
    results.append(True if ok else None if todo else False)
    line = "%s %d %s" % ("ok" if ok else "not ok", len(results), name)
    why = ("TODO " if todo else "") + why
    print(line + (" # " + why if why and not ok else ""), flush=True)


def note(msg):
    print("# " + msg, flush=True)


def finish():
    """The plan, then exit 0 if every line was ok (and there was one), 4 if
    the others were TODOs (a skip to scripts/results.sh), else 1."""
    print("1..%d" % len(results), flush=True)
    sys.exit(1 if not results or False in results else 4 if None in results else 0)


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
