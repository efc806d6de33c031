#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""drgn_stacks.py: drgn (Debian's python3-drgn) as a client of the feature.
On the live kernel, through /proc/kcore with the build's vmlinux
(/usr/lib/debug/boot/vmlinux-RELEASE), drgn reads the kernel stack trace of
two blocked threads, one in a futex wait and one in epoll_wait, first with
their stacks resident, then with them reclaimed; prints TAP (plan last).

A trace is sensible when it starts in the scheduler, holds the thread's
wchan, and holds every return address of /proc/TID/stack (the kernel's own
unwinder, which leaves the scheduler out; FUNC+OFF, an address through
/proc/kallsyms) in the same order. Compared by address: the two may name
one address differently (kallsyms says entry_SYSCALL_64_after_hwframe, a
label inside entry_SYSCALL_64, which drgn's ELF symbol lookup names). Reclaimed, the
trace must be the resident one frame for frame, and the stack still
reclaimed after drgn read it (the debugfs inspect file says so before and
after). "drgn_stacks.py subject" is the process whose threads are traced.
"""
import os
import select
import subprocess
import sys
import threading
import time

from rktap import drop_slab, finish, note, tap

INSPECT = "/sys/kernel/debug/reclaimable_stacks/inspect"
VMLINUX = "/usr/lib/debug/boot/vmlinux-" + os.uname().release
KINDS = ("futex", "epoll")
WAIT_S = 10	# for a thread to block, for drop_caches to take both stacks


def subject():
    """A thread blocked on a lock its process holds (futex), the main
    thread in epoll_wait on an empty epoll set; neither ever wakes."""
    lock = threading.Lock()
    lock.acquire()
    t = threading.Thread(target=lock.acquire, daemon=True)
    t.start()
    print("futex %d epoll %d" % (t.native_id, threading.get_native_id()), flush=True)
    select.epoll().poll()


def read(path):
    with open(path) as f:
        return f.read()


def inspect(tid):
    """The inspect file's line for tid, as a dict (tid, state, present...)."""
    with open(INSPECT, "w") as f:
        f.write("%d\n" % tid)
    words = read(INSPECT).split()
    return dict(zip(words[::2], words[1::2]))


def kallsyms():
    """Every /proc/kallsyms name with its addresses (a static function's
    name may be there more than once)."""
    syms = {}
    for line in read("/proc/kallsyms").splitlines():
        addr, _, name = line.split()[:3]
        syms.setdefault(name, []).append(int(addr, 16))
    return syms


def proc_stack(tid, syms):
    """/proc/TID/stack as (FUNC+OFF, its candidate addresses), innermost
    first."""
    out = []
    for line in read("/proc/%d/stack" % tid).splitlines():
        where = line.split()[1]
        name, off = where.split("/")[0].split("+")
        out.append((where, {a + int(off, 16) for a in syms.get(name, [])}))
    return out


def blocked(tid):
    stat = read("/proc/%d/stat" % tid)
    return stat[stat.rindex(")") + 2] == "S" and read("/proc/%d/wchan" % tid) != "0"


def frames(prog, tid):
    """drgn's trace as (pc, function) pairs; an inlined function's frames
    share their caller's pc and ELF symbol, so they appear once."""
    out = []
    for f in prog.stack_trace(tid):
        try:
            name = f.symbol().name
        except LookupError:
            name = hex(f.pc)
        if not out or out[-1] != (f.pc, name):
            out.append((f.pc, name))
    return out


def in_order(proc, pcs):
    """Each entry of proc matches a later pc than the one before."""
    it = iter(pcs)
    return all(any(pc in addrs for pc in it) for _, addrs in proc)


def judge(trace, tid, syms):
    """Why trace is not a sensible trace of tid, or "" if it is."""
    names = [n for _, n in trace]
    wchan, proc = read("/proc/%d/wchan" % tid), proc_stack(tid, syms)
    if not names or not any(s in names[0] for s in ("schedule", "switch_to")):
        return "does not start in the scheduler: %s" % names[:1]
    if wchan not in names:
        return "no %s (wchan) in it" % wchan
    if not proc or not in_order(proc, [pc for pc, _ in trace]):
        return "/proc/%d/stack %s is not in it in order" % \
            (tid, " ".join(w for w, _ in proc))
    return ""


def load(syms):
    import drgn
    t = time.monotonic()
    prog = drgn.Program()
    prog.set_kernel()
    prog.load_debug_info([VMLINUX])
    tap(True, "drgn %s loads %s (%d MiB) over /proc/kcore in %.1f s" %
        (drgn.__version__, VMLINUX, os.path.getsize(VMLINUX) >> 20,
         time.monotonic() - t))
    release = prog["init_uts_ns"].name.release.string_().decode()
    addr = prog.symbol("schedule").address
    tap(release == os.uname().release and syms.get("schedule") == [addr],
        "the vmlinux is the running kernel's (release %s, schedule at %#x)" %
        (release, addr), "kallsyms says %s" % [hex(a) for a in syms.get("schedule", [])])
    return prog


def main():
    sub = subprocess.Popen([sys.executable, __file__, "subject"],
                           stdout=subprocess.PIPE, text=True)
    try:
        words = sub.stdout.readline().split()
        tids = {k: int(v) for k, v in zip(words[::2], words[1::2])}
        end = time.monotonic() + WAIT_S
        while not all(blocked(tids[k]) for k in KINDS) and time.monotonic() < end:
            time.sleep(0.1)
        syms = kallsyms()
        prog = load(syms)
        before = {}
        for k in KINDS:
            tid, info = tids[k], inspect(tids[k])
            resident = info["state"] != "reclaimed" and "0" not in info["present"]
            before[k] = frames(prog, tid)
            why = judge(before[k], tid, syms)
            note("%s thread %d, stack resident: %s" %
                 (k, tid, " < ".join(n for _, n in before[k])))
            tap(resident and not why,
                "drgn reads the %s thread's trace, stack resident (state %s, present %s): "
                "%d functions, /proc/%d/stack's addresses in order, wchan %s" %
                (k, info["state"], info["present"], len(before[k]), tid,
                 read("/proc/%d/wchan" % tid)), why or "stack not resident")
        end = time.monotonic() + WAIT_S
        while time.monotonic() < end:
            drop_slab()
            time.sleep(0.1)
            infos = {k: inspect(tids[k]) for k in KINDS}
            if all(i["state"] == "reclaimed" for i in infos.values()):
                break
        tap(all(i["state"] == "reclaimed" for i in infos.values()),
            "drop_caches reclaims both stacks (%s)" %
            ", ".join("%s: %s, present %s" % (k, i["state"], i["present"])
                      for k, i in infos.items()))
        for k in KINDS:
            tid = tids[k]
            after = frames(prog, tid)
            info = inspect(tid)
            why = judge(after, tid, syms)
            if not why and after != before[k]:
                why = "differs from the resident trace: %s" % \
                    " < ".join(n for _, n in after)
            if not why and info["state"] != "reclaimed":
                why = "the stack was %s after drgn read it" % info["state"]
            tap(infos[k]["state"] == "reclaimed" and not why,
                "drgn reads the %s thread's trace, stack reclaimed (present %s): "
                "the resident trace frame for frame, still reclaimed after" %
                (k, info["present"]), why or "the stack was not reclaimed")
    except Exception as e:  # a crash still ends the TAP with its plan
        tap(False, "drgn driver", repr(e))
    finally:
        sub.kill()
        sub.wait()
    finish()


if __name__ == "__main__":
    subject() if sys.argv[1:] == ["subject"] else main()
