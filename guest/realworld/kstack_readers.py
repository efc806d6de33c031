#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""kstack_readers.py READER: a kernel debugger as a client of the feature,
READER "drgn" (Debian's python3-drgn) or "crash" (Debian's crash). On the
live kernel, through /proc/kcore with the build's vmlinux
(/usr/lib/debug/boot/vmlinux-RELEASE), the reader prints the kernel stack
trace of two blocked threads, one in a futex wait and one in epoll_wait,
first with their stacks resident, then with them reclaimed; prints TAP
(plan last).

A trace is sensible when it starts in the scheduler, holds the thread's
wchan, and holds every return address of /proc/TID/stack (the kernel's own
unwinder, which leaves the scheduler out; FUNC+OFF, an address through
/proc/kallsyms) in the same order. Compared by address: the two may name
one address differently (kallsyms says entry_SYSCALL_64_after_hwframe, a
label inside entry_SYSCALL_64, which drgn's ELF symbol lookup names).
Reclaimed, the trace must be the resident one frame for frame, and the
stack still reclaimed after the reader read it (the debugfs inspect file
says so before and after). "kstack_readers.py subject" is the process
whose threads are traced.
"""
import os
import pty
import re
import select
import struct
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


class Drgn:
    """drgn 0.0.22 on the live kernel: a drgn.Program over /proc/kcore."""
    name = "drgn"

    def __init__(self):
        import drgn
        self.prog = drgn.Program()
        self.prog.set_kernel()
        self.prog.load_debug_info([VMLINUX])
        self.version = drgn.__version__

    def release(self):
        return self.prog["init_uts_ns"].name.release.string_().decode()

    def address(self, symbol):
        return self.prog.symbol(symbol).address

    def frames(self, tid):
        """The trace as (pc, function) pairs; an inlined function's frames
        share their caller's pc and ELF symbol, so they appear once."""
        out = []
        for f in self.prog.stack_trace(tid):
            try:
                name = f.symbol().name
            except LookupError:
                name = hex(f.pc)
            if not out or out[-1] != (f.pc, name):
                out.append((f.pc, name))
        return out


class Crash:
    """crash 8 on the live kernel, VMLINUX with /proc/kcore as its memory
    (the rkreal kernel has no /dev/mem, DEVMEM off, nor the out-of-tree
    /dev/crash driver): one session for every command, its input a pipe,
    its output a pseudo-terminal, so that each line comes as crash prints
    it; a shell escape after each command marks the command's end."""
    name = "crash"
    ARGS = ["crash", "-s", "--no_scroll", VMLINUX, "/proc/kcore"]
    START_S = 600	# gdb reads the whole vmlinux's DWARF under TCG
    CMD_S = 120
    DIRECT_MAP = 0xffff888000000000	# x86_64 PAGE_OFFSET, 4-level, since 4.20

    def __init__(self):
        self.version = crash_version()
        self.pty, tty = pty.openpty()
        self.proc = subprocess.Popen(self.ARGS, stdin=subprocess.PIPE, stdout=tty,
                                     stderr=tty, text=True)
        os.close(tty)
        self.buf, self.count = "", 0
        self.command("", self.START_S)

    def command(self, cmd, timeout=CMD_S):
        """cmd's output; raises with what crash said if crash ended or took
        longer than timeout."""
        self.count += 1
        mark = "@@crash-done-%d" % self.count
        self.proc.stdin.write("%s\n!echo %s\n" % (cmd, mark))
        self.proc.stdin.flush()
        end = time.monotonic() + timeout
        while "\n%s\n" % mark not in "\n" + self.buf:	# a line, not an echo
            left = end - time.monotonic()
            chunk = b""
            if left > 0 and select.select([self.pty], [], [], left)[0]:
                try:
                    chunk = os.read(self.pty, 65536)
                except OSError:	# EIO: crash ended
                    pass
            if not chunk:	# crash's "WARNING:" lowered: not a kernel splat
                raise RuntimeError("crash %s %r: %s" % (
                    "ended (%s) at" % self.exit_status() if left > 0 else
                    "took over %d s on" % timeout, cmd or "start",
                    " | ".join(self.buf.replace("WARNING:", "warning:")
                               .strip().splitlines()[-8:])))
            self.buf += chunk.decode(errors="replace").replace("\r", "")
        out, self.buf = ("\n" + self.buf).split("\n%s\n" % mark, 1)
        return out

    def exit_status(self):
        try:
            rc = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            return "still running"
        return "signal %d" % -rc if rc < 0 else "exit status %d" % rc

    @classmethod
    def known_failure(cls):
        """Why crash did not start, if it is crash 8.0.2's known limit, else
        "". Until it knows the kernel's version, crash reads the kernel
        image and physical memory from /proc/kcore at paddr | PAGE_OFFSET
        with x86_64's PAGE_OFFSET before 4.20 (0xffff880000000000, where
        /proc/kcore has no segment: a seek error) unless the kernel has
        page_offset_base (CONFIG_RANDOMIZE_MEMORY); it reads the version
        from linux_banner, through that same wrong mapping, and goes on
        with none: no task is found ("cannot set context for pid"), and it
        dies. --minimal mode shows it: linux_banner unreadable at its
        address, readable through the direct map (the physical address
        from /proc/kcore's program headers; linux_banner's address from the
        vmlinux: kallsyms has no data symbols without KALLSYMS_ALL)."""
        nm = subprocess.run(["nm", VMLINUX], capture_output=True, text=True).stdout
        found = re.search(r"^([0-9a-f]+) \w linux_banner$", nm, re.M)
        banner = int(found.group(1), 16) if found else 0
        paddr = kcore_paddr(banner)
        if paddr is None:
            note("linux_banner (%#x) is in no /proc/kcore segment" % banner)
            return ""
        direct = cls.DIRECT_MAP + paddr
        out = subprocess.run(cls.ARGS[:-2] + ["--minimal"] + cls.ARGS[-2:],
                             input="rd -a linux_banner\nrd -a %#x\nq\n" % direct,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,	# its errors
                             text=True, timeout=cls.START_S).stdout
        at_direct = re.search(r"^%x:\s+(Linux version \S+)" % direct, out, re.M)
        if "seek error: kernel virtual address: %x" % banner not in out or not at_direct:
            note("crash --minimal, rd linux_banner (%#x) and %#x: %s" % (
                banner, direct, " | ".join(out.replace("WARNING:", "warning:").split("\n")[-8:])))
            return ""
        return ("crash %s maps the kernel image to /proc/kcore with the pre-4.20 "
                "PAGE_OFFSET (no page_offset_base: CONFIG_RANDOMIZE_MEMORY off) until "
                "it has read the kernel version there: rd linux_banner (%#x): seek "
                "error; through the direct map (%#x): '%s'" %
                (crash_version(), banner, direct, at_direct.group(1)))

    def release(self):
        return re.search(r"RELEASE: (\S+)", self.command("sys")).group(1)

    def address(self, symbol):
        return int(self.command("sym " + symbol).split()[0], 16)

    def frames(self, tid):
        """bt TID's frames as (return address, function): ' #N [SP] FUNC at
        ADDR'."""
        out = self.command("bt %d" % tid)
        found = re.findall(r"^\s*#\d+ \[[0-9a-f]+\] (\S+) at ([0-9a-f]+)", out, re.M)
        if not found:
            raise RuntimeError("crash bt %d printed no frame: %s" %
                               (tid, " | ".join(out.strip().splitlines())))
        return [(int(pc, 16), name) for name, pc in found]


def kcore_paddr(vaddr):
    """The physical address of vaddr by /proc/kcore's ELF64 program headers
    (the PT_LOAD that holds it, if it has one), or None."""
    with open("/proc/kcore", "rb") as f:
        head = f.read(64)
        phoff, = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    for i in range(phnum):
        kind, _, _, start, phys, _, size, _ = struct.unpack_from("<IIQQQQQQ", table, i * phentsize)
        if kind == 1 and start <= vaddr < start + size and phys != 2**64 - 1:
            return vaddr - start + phys
    return None


def crash_version():
    out = subprocess.run(["crash", "--version"], capture_output=True, text=True).stdout
    return out.split()[1]


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


def load(reader, syms):
    """reader on the live kernel, or None (and a not ok) if it fails."""
    t = time.monotonic()
    try:
        r = reader()
    except Exception as e:
        note("%s did not start: %s" % (reader.name, e))
        known = getattr(reader, "known_failure", lambda: "")()
        tap(False, "%s loads %s over /proc/kcore" % (reader.name, VMLINUX),
            known or str(e), todo=bool(known))
        return None
    tap(True, "%s %s loads %s (%d MiB) over /proc/kcore in %.1f s" %
        (r.name, r.version, VMLINUX, os.path.getsize(VMLINUX) >> 20,
         time.monotonic() - t))
    release, addr = r.release(), r.address("schedule")
    tap(release == os.uname().release and syms.get("schedule") == [addr],
        "the vmlinux is the running kernel's (release %s, schedule at %#x)" %
        (release, addr), "kallsyms says %s" % [hex(a) for a in syms.get("schedule", [])])
    return r


def main(reader):
    sub = subprocess.Popen([sys.executable, __file__, "subject"],
                           stdout=subprocess.PIPE, text=True)
    try:
        words = sub.stdout.readline().split()
        tids = {k: int(v) for k, v in zip(words[::2], words[1::2])}
        end = time.monotonic() + WAIT_S
        while not all(blocked(tids[k]) for k in KINDS) and time.monotonic() < end:
            time.sleep(0.1)
        syms = kallsyms()
        r = load(reader, syms)
        if r is None:
            return
        before = {}
        for k in KINDS:
            tid, info = tids[k], inspect(tids[k])
            resident = info["state"] != "reclaimed" and "0" not in info["present"]
            before[k] = r.frames(tid)
            why = judge(before[k], tid, syms)
            note("%s thread %d, stack resident: %s" %
                 (k, tid, " < ".join(n for _, n in before[k])))
            tap(resident and not why,
                "%s reads the %s thread's trace, stack resident (state %s, present %s): "
                "%d functions, /proc/%d/stack's addresses in order, wchan %s" %
                (r.name, k, info["state"], info["present"], len(before[k]), tid,
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
            after = r.frames(tid)
            info = inspect(tid)
            why = judge(after, tid, syms)
            if not why and after != before[k]:
                why = "differs from the resident trace: %s" % \
                    " < ".join(n for _, n in after)
            if not why and info["state"] != "reclaimed":
                why = "the stack was %s after %s read it" % (info["state"], r.name)
            tap(infos[k]["state"] == "reclaimed" and not why,
                "%s reads the %s thread's trace, stack reclaimed (present %s): "
                "the resident trace frame for frame, still reclaimed after" %
                (r.name, k, info["present"]), why or "the stack was not reclaimed")
    except Exception as e:  # a failure still ends the TAP with its plan
        tap(False, "%s driver" % reader.name, repr(e))
    finally:
        sub.kill()
        sub.wait()
        finish()


if __name__ == "__main__":
    if sys.argv[1:] == ["subject"]:
        subject()
    else:
        main({"drgn": Drgn, "crash": Crash}[sys.argv[1]])
