#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OUTDIR CONSOLE...: collect the "@@RK-BENCH" lines of the
guest consoles into OUTDIR/samples.csv (every value), OUTDIR/summary.json
(median, min and max per bench, metric and mode) and OUTDIR/report.md (the
table, with the ratios between modes and each target met or missed).

A console named ...-b<K>-[aa-]<program>.log is boot K of that program (bench.sh
BENCH_BOOTS); values of all boots are pooled. The noise of the instrument
(the A/A spread) of a bench and metric is the larger of |off_a/off_b - 1|
(an A/A run, bench.sh BENCH_AA=1: two modes, both switched off) and, per mode,
the spread between the medians of its boots (max/min - 1). A ratio target
whose margin |limit - 1| is smaller than that noise is "inconclusive",
whatever the ratio; with no A/A data the noise is "not measured".

Exit status 1 if a benchmark reported nothing at all (a target missed is
a result, not an error)."""

import csv
import json
import os
import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(r"@@RK-BENCH bench=(\S+) mode=(\S+) round=(\d+) "
                  r"metric=(\S+) value=(-?(?:\d+\.?\d*|nan|inf))")
BOOT = re.compile(r"-b(\d+)-(?:aa-)?[^-]+\.log$")

# (label, bench, metric, mode, against mode, goal, limit, what the ratio is)
# goal: "ge" value >= limit, "le" value <= limit; against None: the value
# itself is the figure, else value(mode) / value(against).
TARGETS = [
    ("P1 idle: stack memory given back (%)", "p1_idle", "given_back_pct",
     "on", None, "ge", 73.0),
    ("P2 non-idle: steady-state given back (%)", "p2_busy", "given_back_pct",
     "on", None, "ge", 60.0),
    ("P3 pipe ping-pong, time on/off", "p3_pipe", "us_per_op",
     "on", "off", "le", 1.02),
    ("P3 futex ping-pong, time on/off", "p3_futex", "us_per_op",
     "on", "off", "le", 1.02),
    ("P3 messaging (hackbench-style), time on/off", "p3_msg", "us_per_op",
     "on", "off", "le", 1.02),
    ("P4 wake, fast path p50 / unreclaimed p50", "p4_wake", "p50_us",
     "fast", "unreclaimed", "le", 1.5),
    ("P4 wake, deferred p99 / unreclaimed p99", "p4_wake", "p99_us",
     "deferred", "unreclaimed", "le", 10.0),
    ("P5 thread create+join rate on/off", "p5_threads", "threads_per_s",
     "on", "off", "ge", 0.97),
]


def load(paths):
    rows = []
    for path in paths:
        bm = BOOT.search(os.path.basename(path))
        boot = int(bm.group(1)) if bm else 1
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    b, mode, rnd, metric, val = m.groups()
                    rows.append((b, mode, int(rnd), metric, float(val),
                                 boot, path))
    return rows


def noise_of(groups, per_boot, med):
    """(bench, metric) -> the A/A spread, where it was measured."""
    noise = defaultdict(float)
    for (b, metric, mode), v in med.items():
        if mode == "off_a" and med.get((b, metric, "off_b")):
            noise[(b, metric)] = max(noise[(b, metric)],
                                     abs(v / med[(b, metric, "off_b")] - 1))
    for (b, metric, mode), boots in per_boot.items():
        if len(boots) > 1:
            ms = [statistics.median(v) for v in boots.values()]
            if min(ms) > 0:
                noise[(b, metric)] = max(noise[(b, metric)],
                                         max(ms) / min(ms) - 1)
    return noise


ZERO = 0.005   # a built-in-but-off difference above this must be explained


def zero_cost(cost, n):
    """Verdict on a cost ratio (> 1 worse) given its A/A noise n."""
    if n is None:
        return "noise not measured"
    bar = max(n, ZERO)
    if cost - 1 > bar:
        return "worse"
    if 1 - cost > bar:
        return "better"
    return "zero (within 0.5 %)" if n <= ZERO else "inconclusive"


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:.0f}"
    return f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, consoles = sys.argv[1], sys.argv[2:]
    rows = load(consoles)
    groups = defaultdict(list)
    per_boot = defaultdict(lambda: defaultdict(list))
    for b, mode, _, metric, val, boot, _ in rows:
        groups[(b, metric, mode)].append(val)
        per_boot[(b, metric, mode)][boot].append(val)
    med = {k: statistics.median(v) for k, v in groups.items()}
    noise = noise_of(groups, per_boot, med)
    boots = max((r[5] for r in rows), default=1)

    with open(f"{out}/samples.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["bench", "mode", "round", "metric", "value", "boot",
                    "console"])
        w.writerows(rows)

    modes_of = defaultdict(set)
    for b, metric, mode in med:
        modes_of[(b, metric)].add(mode)
    order = ["on", "off", "off_a", "off_b", "vanilla", "unreclaimed", "fast", "deferred"]
    order = [m for m in order if any(m in ms for ms in modes_of.values())]

    def cell(k):
        if k not in groups:
            return "-"
        v = groups[k]
        if len(v) == 1:
            return fmt(v[0])
        return f"{fmt(med[k])} ({fmt(min(v))}-{fmt(max(v))})"

    lines = ["Each cell: median (min-max) over rounds"
             + (f" of {boots} boots" if boots > 1 else "") + ".", "",
             "| bench | metric | " + " | ".join(order) + " | rounds |",
             "|---|---|" + "---|" * len(order) + "---|"]
    for (b, metric) in sorted(modes_of):
        vals = [cell((b, metric, m)) for m in order]
        n = max(len(groups[(b, metric, m)]) for m in modes_of[(b, metric)])
        lines.append(f"| {b} | {metric} | " + " | ".join(vals) + f" | {n} |")

    if noise:
        lines += ["", "| A/A spread (off_a/off_b, boot to boot) | noise |",
                  "|---|---|"]
        lines += [f"| {b} {metric} | {100 * n:.2f} % |"
                  for (b, metric), n in sorted(noise.items())]

    lines += ["", "| target | figure | goal | A/A noise | met |",
              "|---|---|---|---|---|"]
    verdicts = []
    for label, b, metric, mode, against, goal, limit in TARGETS:
        v = med.get((b, metric, mode))
        if against is not None and v is not None:
            a = med.get((b, metric, against))
            v = v / a if a else None
        met = None if v is None else (v >= limit if goal == "ge" else v <= limit)
        n = noise.get((b, metric)) if against is not None else None
        verdict = "-" if met is None else "yes" if met else "NO"
        if met is not None and n is not None and n > abs(limit - 1):
            verdict = "inconclusive"
        sign = ">=" if goal == "ge" else "<="
        ncell = ("-" if against is None else
                 "not measured" if n is None else f"{100 * n:.2f} %")
        lines.append(f"| {label} | {fmt(v)} | {sign} {limit:g} | {ncell} | "
                     f"{verdict} |")
        verdicts.append({"target": label, "figure": v, "goal": f"{sign} {limit:g}",
                         "noise": n, "met": met, "verdict": verdict})

    # On against off for the benches no target above judges (the real
    # tools of tools_ab, under forced reclaim): the cost of the feature at
    # work, > 1 worse as below, with the same A/A noise and verdicts.
    # Counts that are zero when off (reclaimed, repopulated) are no cost.
    judged = {(b, metric) for _, b, metric, *_ in TARGETS}
    onoff = []
    for (b, metric), modes in sorted(modes_of.items()):
        if {"on", "off"} <= modes and (b, metric) not in judged:
            on, off = med[(b, metric, "on")], med[(b, metric, "off")]
            if not on or not off:
                continue
            cost = off / on if metric.endswith("_per_s") else on / off
            n = noise.get((b, metric))
            verdict = zero_cost(cost, n)
            ncell = "not measured" if n is None else f"{100 * n:.2f} %"
            onoff.append(f"| {b} {metric} | {cost:.4f} | {ncell} | {verdict} |")
            verdicts.append({"target": f"{b} {metric} on/off", "figure": cost,
                             "goal": "cost", "noise": n, "met": None,
                             "verdict": verdict})
    if onoff:
        lines += ["", "| feature on vs off | cost (> 1 worse) | A/A noise | verdict |",
                  "|---|---|---|---|"] + onoff

    # Patched-but-off against the unpatched kernel, where both ran: the
    # cost of building the feature in, > 1 always worse (time over time,
    # rate under rate), judged against the bench's A/A noise and the
    # 0.5 % that a difference must stay under to count as zero.
    extra = []
    zero = []
    for (b, metric), modes in sorted(modes_of.items()):
        if {"off", "vanilla"} <= modes:
            off, van = med[(b, metric, "off")], med[(b, metric, "vanilla")]
            cost = van / off if metric.endswith("_per_s") else off / van
            n = noise.get((b, metric))
            verdict = zero_cost(cost, n)
            ncell = "not measured" if n is None else f"{100 * n:.2f} %"
            extra.append(f"| {b} {metric} | {cost:.4f} | {ncell} | {verdict} |")
            zero.append({"bench": b, "metric": metric, "cost": cost,
                         "noise": n, "verdict": verdict})
    if extra:
        lines += ["", "| built in, switched off vs unpatched 6.12 | cost (> 1 worse) "
                  "| A/A noise | verdict |", "|---|---|---|---|"] + extra

    with open(f"{out}/report.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(f"{out}/summary.json", "w") as f:
        json.dump({"medians": [{"bench": b, "metric": m, "mode": mo,
                                "median": v, "min": min(groups[(b, m, mo)]),
                                "max": max(groups[(b, m, mo)]),
                                "n": len(groups[(b, m, mo)])}
                               for (b, m, mo), v in sorted(med.items())],
                   "noise": [{"bench": b, "metric": m, "spread": n}
                             for (b, m), n in sorted(noise.items())],
                   "targets": verdicts, "off_vs_unpatched": zero}, f, indent=1)
    print("\n".join(lines))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
