#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OUTDIR CONSOLE...: collect the "@@RK-BENCH" lines of the
guest consoles into OUTDIR/samples.csv (every value), OUTDIR/summary.json
(median per bench, metric and mode) and OUTDIR/report.md (the table, with
the ratios between modes and each target met or missed).

Exit status 1 if a benchmark reported nothing at all (a target missed is
a result, not an error)."""

import csv
import json
import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(r"@@RK-BENCH bench=(\S+) mode=(\S+) round=(\d+) "
                  r"metric=(\S+) value=(\S+)")

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
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    b, mode, rnd, metric, val = m.groups()
                    rows.append((b, mode, int(rnd), metric, float(val), path))
    return rows


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
    for b, mode, _, metric, val, _ in rows:
        groups[(b, metric, mode)].append(val)
    med = {k: statistics.median(v) for k, v in groups.items()}

    with open(f"{out}/samples.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["bench", "mode", "round", "metric", "value", "console"])
        w.writerows(rows)

    modes_of = defaultdict(set)
    for b, metric, mode in med:
        modes_of[(b, metric)].add(mode)
    order = ["on", "off", "vanilla", "unreclaimed", "fast", "deferred"]

    lines = ["| bench | metric | " + " | ".join(order) + " | rounds |",
             "|---|---|" + "---|" * len(order) + "---|"]
    for (b, metric) in sorted(modes_of):
        vals = [fmt(med.get((b, metric, m))) for m in order]
        n = max(len(groups[(b, metric, m)]) for m in modes_of[(b, metric)])
        lines.append(f"| {b} | {metric} | " + " | ".join(vals) + f" | {n} |")

    lines += ["", "| target | figure | goal | met |", "|---|---|---|---|"]
    verdicts = []
    for label, b, metric, mode, against, goal, limit in TARGETS:
        v = med.get((b, metric, mode))
        if against is not None and v is not None:
            a = med.get((b, metric, against))
            v = v / a if a else None
        met = None if v is None else (v >= limit if goal == "ge" else v <= limit)
        sign = ">=" if goal == "ge" else "<="
        lines.append(f"| {label} | {fmt(v)} | {sign} {limit:g} | "
                     f"{'-' if met is None else 'yes' if met else 'NO'} |")
        verdicts.append({"target": label, "figure": v, "goal": f"{sign} {limit:g}",
                         "met": met})

    # Patched-but-off against the unpatched kernel, where both ran.
    extra = []
    for (b, metric), modes in sorted(modes_of.items()):
        if {"off", "vanilla"} <= modes:
            r = med[(b, metric, "off")] / med[(b, metric, "vanilla")]
            extra.append(f"| {b} {metric} off/vanilla | {fmt(r)} |")
    if extra:
        lines += ["", "| patched, switched off / unpatched 6.12 | ratio |",
                  "|---|---|"] + extra

    with open(f"{out}/report.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(f"{out}/summary.json", "w") as f:
        json.dump({"medians": [{"bench": b, "metric": m, "mode": mo,
                                "median": v, "n": len(groups[(b, m, mo)])}
                               for (b, m, mo), v in sorted(med.items())],
                   "targets": verdicts}, f, indent=1)
    print("\n".join(lines))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
