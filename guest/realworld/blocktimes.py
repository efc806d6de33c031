#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""How long the user threads of the idle system stay blocked, and what an
age bar T of the stack shrinker would trade on them.

blocktimes.py [SECONDS]: trace sched_switch and sched_wakeup for SECONDS
(60) of guest time, then, for every user thread (kernel threads are left
out: PF_KTHREAD in /proc/TID/stat), cut the window into blocked intervals:
from a switch-out in state S (an interruptible sleep, where every marked
wait site sleeps but job-control stop) to its wakeup. An interval already
running at the start is taken to start there, one still running at the
end to end there, and a thread with no event at all was blocked all the
window: all of them err towards shorter sleeps. For each bar T:

  given back: the share of the blocked thread-seconds that lie beyond T
              into their sleep, sum(max(0, d - T)) / sum(d): what a
              shrinker taking every stack blocked longer than T, all the
              time, could hold back;
  wakeups/s:  the sleeps that ended after lasting longer than T, per
              second: each would find its stack taken and map it again.

Output: TAP (one test: the trace was taken and parsed) and one
"@@RK-BLOCKTIMES" line per bar for scripts/realworld-report.sh.
"""
import glob
import os
import re
import sys
import time

import rktap

TRACEFS = "/sys/kernel/tracing"
BARS_MS = [0, 10, 30, 100, 300, 1000, 1500, 2000, 3000, 5000, 10000, 30000]
PF_KTHREAD = 0x00200000
EVENT = re.compile(r"\s(\d+\.\d+): (sched_switch|sched_wakeup): (.*)$")
FIELD = re.compile(r"(\w+)=(\S+)")


def write(name, val):
    with open(os.path.join(TRACEFS, name), "w") as f:
        f.write(val)


def user_tids():
    """The TIDs of every thread now, split into (user, kernel)."""
    user, kernel = set(), set()
    for path in glob.glob("/proc/[0-9]*/task/[0-9]*/stat"):
        try:
            with open(path) as f:
                stat = f.read()
        except OSError:
            continue
        tid = int(path.split("/")[4])
        # Field 9 (flags) counts from after the ")" closing comm.
        flags = int(stat[stat.rindex(")") + 2:].split()[6])
        (kernel if flags & PF_KTHREAD else user).add(tid)
    return user, kernel


def trace(seconds):
    if not os.path.isdir(os.path.join(TRACEFS, "events")):
        os.system(f"mount -t tracefs tracefs {TRACEFS}")
    write("tracing_on", "0")
    write("trace_clock", "mono")    # CLOCK_MONOTONIC, as time.clock_gettime()
    write("buffer_size_kb", "16384")
    write("trace", "")
    write("events/sched/sched_switch/enable", "1")
    write("events/sched/sched_wakeup/enable", "1")
    write("tracing_on", "1")
    time.sleep(seconds)
    write("tracing_on", "0")
    write("events/sched/sched_switch/enable", "0")
    write("events/sched/sched_wakeup/enable", "0")
    with open(os.path.join(TRACEFS, "trace")) as f:
        lines = f.readlines()
    write("trace", "")
    return lines


def intervals(lines, t0, t1):
    """Blocked intervals per TID (clipped to [t0, t1]) and the TIDs seen."""
    blocked_since = {}      # tid -> start of its current sleep
    running = set()         # seen switched in or woken: not blocked
    done = []               # (tid, duration, ended by a wakeup)
    seen = set()
    for line in lines:
        m = EVENT.search(line)
        if not m:
            continue
        t = float(m.group(1))
        f = dict(FIELD.findall(m.group(3)))
        if m.group(2) == "sched_switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            seen.update((prev, nxt))
            if f["prev_state"] == "S":
                blocked_since[prev] = t
            running.add(nxt)
        else:
            tid = int(f["pid"])
            if tid in blocked_since:
                done.append((tid, t - blocked_since.pop(tid), True))
            elif tid not in running and tid not in seen:
                done.append((tid, t - t0, True))  # asleep since before t0
            seen.add(tid)
            running.add(tid)
    for tid, start in blocked_since.items():
        done.append((tid, t1 - start, False))
    return done, seen


def main():
    seconds = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1] else 60
    user0, kernel0 = user_tids()
    t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
    lines = trace(seconds)
    t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    user1, kernel1 = user_tids()
    kernel = kernel0 | kernel1
    # The window: the span we slept, widened to the events' own if wider.
    stamps = [float(m.group(1)) for m in map(EVENT.search, lines) if m]
    if stamps:
        t0, t1 = min(stamps[0], t0), max(stamps[-1], t1)
    window = t1 - t0
    done, seen = intervals(lines, t0, t1)
    done = [d for d in done if d[0] not in kernel and d[0] != 0]
    quiet = (user0 & user1) - seen   # no event: blocked all the window
    durations = [d for _, d, _ in done] + [window] * len(quiet)
    ended = [d for _, d, woke in done if woke]
    total = sum(durations)
    nthreads = len({tid for tid, _, _ in done} | quiet)
    ok = bool(stamps) and total > 0
    rktap.tap(ok, f"traced {len(stamps)} events over {window:.1f} s: "
              f"{len(ended)} sleeps ended, {nthreads} user threads, "
              f"{len(quiet)} of them blocked all along")
    if ok:
        ended.sort()
        p = lambda q: ended[min(len(ended) - 1, int(q * len(ended)))] \
            if ended else 0.0
        rktap.note(f"sleeps that ended: p50 {p(0.5) * 1e3:.1f} ms, "
              f"p90 {p(0.9) * 1e3:.1f} ms, p99 {p(0.99) * 1e3:.1f} ms")
        for bar_ms in BARS_MS:
            bar = bar_ms / 1e3
            beyond = sum(max(0.0, d - bar) for d in durations)
            woke = sum(1 for d in ended if d > bar)
            print(f"@@RK-BLOCKTIMES {bar_ms}|{100 * beyond / total:.1f}|"
                  f"{woke / window:.2f}|{nthreads}|{window:.0f}", flush=True)
    rktap.finish()


if __name__ == "__main__":
    main()
