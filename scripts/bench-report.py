#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OUTDIR CONSOLE...: collect the "@@RK-BENCH" lines of the
guest consoles into OUTDIR/samples.csv (every value), OUTDIR/summary.json
(median, min and max per bench, metric and mode) and OUTDIR/report.md (the
table, with the ratios between modes and each target met or missed), and
the "@@RK-HIST" lines (a histogram on fixed bucket edges, rk_bench.h) into
OUTDIR/hist-<bench>.csv, counts added over consoles (plot.sh hist draws it).

A console named ...-b<K>-[aa-]<program>.log is boot K of that program (bench.sh
BENCH_BOOTS); values of all boots are pooled. The noise of the instrument
(the A/A spread) of a bench and metric is the larger of |off_a/off_b - 1|
(an A/A run, bench.sh BENCH_AA=1: two modes, both switched off) and, per mode,
the spread between the medians of its boots (max/min - 1). A ratio target
whose margin |limit - 1| is smaller than that noise is "inconclusive",
whatever the ratio; a share target (a percentage, no ratio) is judged
against the spread of its own mode's boots, and is "inconclusive" when that
exceeds the figure's relative distance from the limit. With no noise data
the noise is "not measured" and the verdict "inconclusive": never "yes" or
"NO" from the figure alone.

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
EDGE = r"(\d+(?:\.\d*)?(?:e[+-]?\d+)?)"
HIST = re.compile(r"@@RK-HIST bench=(\S+) mode=(\S+) lo_us=" + EDGE +
                  r" hi_us=" + EDGE + r" count=(\d+)")
BOOT = re.compile(r"-b(\d+)-(?:aa-)?[^-]+\.log$")

# One convention: a ratio is a cost, > 1 always worse: time (or latency)
# of mode over time of the mode it is measured against, and for a rate
# (metric *_per_s) the rate of the other mode over the rate of this one.
# Issue 13 writes P5's goals as rates, on/off >= 0.99 and off/unpatched
# >= 0.99: as costs, <= 1 / 0.99.
RATE_GOAL = 1 / 0.99

# (label, bench, metric, mode, against, limit). against None: a share,
# the median of mode itself, met when >= limit; else the cost of mode
# against that mode, met when <= limit.
TARGETS = [
    ("P1 idle: stack memory given back (%)", "p1_idle", "given_back_pct",
     "on", None, 73.0),
    ("P1 idle, proactive reclaim only (no pressure): given back (%)",
     "p1_proactive", "given_back_pct", "on", None, 73.0),
    ("P2 non-idle: steady-state given back (%)", "p2_busy", "given_back_pct",
     "on", None, 70.0),
    ("P2 non-idle: wake-to-run p50 on/off", "p2_busy", "p50_us",
     "on", "off", 1.2),
    ("P2 non-idle: wake-to-run p99 on/off", "p2_busy", "p99_us",
     "on", "off", 2.0),
    ("P3 pipe ping-pong, time on/off", "p3_pipe", "us_per_op",
     "on", "off", 1.01),
    ("P3 futex ping-pong, time on/off", "p3_futex", "us_per_op",
     "on", "off", 1.01),
    ("P3 messaging (hackbench-style), time on/off", "p3_msg", "us_per_op",
     "on", "off", 1.01),
    ("P3 pipe ping-pong, time off/unpatched", "p3_pipe", "us_per_op",
     "off", "vanilla", 1.005),
    ("P3 futex ping-pong, time off/unpatched", "p3_futex", "us_per_op",
     "off", "vanilla", 1.005),
    ("P3 messaging (hackbench-style), time off/unpatched", "p3_msg",
     "us_per_op", "off", "vanilla", 1.005),
    ("P4 wake, fast path p50 / unreclaimed p50", "p4_wake", "p50_us",
     "fast", "unreclaimed", 1.15),
    ("P4 wake, deferred p50 / unreclaimed p50", "p4_wake", "p50_us",
     "deferred", "unreclaimed", 5.0),
    ("P4 wake, deferred p99 / unreclaimed p99", "p4_wake", "p99_us",
     "deferred", "unreclaimed", 10.0),
    ("P5 thread create+join on/off (rate off/on)", "p5_threads",
     "threads_per_s", "on", "off", RATE_GOAL),
    ("P5 fork+wait on/off (rate off/on)", "p5_fork", "forks_per_s",
     "on", "off", RATE_GOAL),
    ("P5 thread create+join off/unpatched (rate unpatched/off)", "p5_threads",
     "threads_per_s", "off", "vanilla", RATE_GOAL),
    ("P5 fork+wait off/unpatched (rate unpatched/off)", "p5_fork",
     "forks_per_s", "off", "vanilla", RATE_GOAL),
]

# Targets met only together (issue 12's P2): (label, labels of the parts).
ALL_OF = [
    ("P2 non-idle: given back AND p50 AND p99", (
        "P2 non-idle: steady-state given back (%)",
        "P2 non-idle: wake-to-run p50 on/off",
        "P2 non-idle: wake-to-run p99 on/off")),
]


def load(paths):
    """The @@RK-BENCH values as rows (bench, mode, round, metric, value,
    boot, console) and the @@RK-HIST counts, {bench: {(mode, lo_us, hi_us):
    count}}, added over every console (the edges are fixed)."""
    rows = []
    hist = defaultdict(lambda: defaultdict(int))
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
                m = HIST.search(line)
                if m:
                    b, mode, lo, hi, count = m.groups()
                    hist[b][(mode, float(lo), float(hi))] += int(count)
    return rows, hist


def noise_of(per_boot, med):
    """The A/A spread of each (bench, metric), where it was measured, and
    the spread between the boots of each (bench, metric, mode)."""
    noise = defaultdict(float)
    spread = {}
    for (b, metric, mode), v in med.items():
        if mode == "off_a" and med.get((b, metric, "off_b")):
            noise[(b, metric)] = max(noise[(b, metric)],
                                     abs(v / med[(b, metric, "off_b")] - 1))
    for (b, metric, mode), boots in per_boot.items():
        ms = [statistics.median(v) for v in boots.values()]
        if len(ms) > 1 and min(ms) > 0:
            spread[(b, metric, mode)] = max(ms) / min(ms) - 1
            noise[(b, metric)] = max(noise[(b, metric)],
                                     spread[(b, metric, mode)])
    return noise, spread


def cost(med, b, metric, mode, against):
    """The cost of mode against the other, > 1 worse (see RATE_GOAL);
    None where either median is missing or zero."""
    x, y = med.get((b, metric, mode)), med.get((b, metric, against))
    if not x or not y:
        return None
    return y / x if metric.endswith("_per_s") else x / y


def judge(figure, limit, n, share):
    """A target's verdict given its noise n (None: not measured): never
    "yes" or "NO" without the noise, nor when the noise exceeds the
    margin: a ratio's |limit - 1|, a share's distance from its limit."""
    if figure is None:
        return "-"
    margin = abs(figure / limit - 1) if share else abs(limit - 1)
    if n is None or n > margin:
        return "inconclusive"
    met = figure >= limit if share else figure <= limit
    return "yes" if met else "NO"


def judge_all(verdicts):
    """The verdict of targets met only together."""
    if "NO" in verdicts:
        return "NO"
    if all(v == "yes" for v in verdicts):
        return "yes"
    return "-" if "-" in verdicts else "inconclusive"


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


def noise_cell(n):
    return "not measured" if n is None else f"{100 * n:.2f} %"


def measure(med, noise, spread, b, metric, mode, against, limit):
    """A target's figure on bench b, its noise (a share: the spread of its
    mode's boots; a cost: the bench's A/A noise), the verdict, and the
    figure and goal as the tables print them."""
    share = against is None
    if share:
        v, n = med.get((b, metric, mode)), spread.get((b, metric, mode))
        vcell = fmt(v)
    else:
        v, n = cost(med, b, metric, mode, against), noise.get((b, metric))
        vcell = "-" if v is None else f"{v:.4f}"
    return v, n, judge(v, limit, n, share), vcell, goal_text(limit, share)


def goal_text(limit, share):
    return f"{'>=' if share else '<='} {limit:.5g}"


NO_NOISE = ("Noise not measured: inconclusive, whatever the figure "
            "(make bench BENCH_BOOTS=2 or more, BENCH_AA=1, measures it).")


def target_rows(med, noise, spread):
    """The targets table and its summary.json entries."""
    lines = ["| target | figure (ratios > 1 worse; P5's rates inverted: "
             ">= 0.99 is <= 1/0.99) | goal | A/A noise | met |",
             "|---|---|---|---|---|"]
    entries = []
    verdict_of = {}
    for label, b, *spec in TARGETS:
        v, n, verdict, vcell, goal = measure(med, noise, spread, b, *spec)
        verdict_of[label] = verdict
        lines.append(f"| {label} | {vcell} | {goal} | {noise_cell(n)} | "
                     f"{verdict} |")
        entries.append({"target": label, "figure": v, "goal": goal,
                        "noise": n, "verdict": verdict})
        # Targets met only together: their row after the last part's.
        for all_label, parts in ALL_OF:
            if parts[-1] == label:
                verdict = judge_all([verdict_of[p] for p in parts])
                lines.append(f"| {all_label} | - | all {len(parts)} met | - | "
                             f"{verdict} |")
                entries.append({"target": all_label, "parts": parts,
                                "verdict": verdict})
    if any(e.get("figure") is not None and e["noise"] is None
           for e in entries):
        lines += ["", NO_NOISE]
    return lines, entries


# The P2 trade-off: p2_busy run with min_age_ms=N reports as p2_age<N>;
# plain p2_busy ran at the kernel's default threshold (min_age_us
# 1000000). Issue 12's three P2 targets are judged on each, as above.
AGE = re.compile(r"p2_age(\d+)$")
DEFAULT_AGE_MS = 1000
P2 = [t for t in TARGETS if t[1] == "p2_busy"]
P2_SHORT = ["given back", "p50", "p99"]


def tradeoff(out, med, noise, spread):
    """The P2 age threshold trade-off table (one row a threshold, in ms),
    also as OUTDIR/p2-tradeoff.csv (plot.sh tradeoff draws it), and its
    summary.json entries; nothing unless a p2_age<N> bench ran."""
    benches = {b for b, _, _ in med}
    ages = [(int(m.group(1)), b) for b in benches if (m := AGE.match(b))]
    if not ages:
        return [], []
    if "p2_busy" in benches:
        ages.append((DEFAULT_AGE_MS, "p2_busy"))
    _, _, gb_metric, *_ = P2[0]
    goals = [goal_text(t[-1], t[4] is None) for t in P2]
    lines = ["| P2 age threshold trade-off (ms) | given back % on | "
             "given back % off | p50 on/off | p99 on/off | "
             + " | ".join(f"met: {s} {g}" for s, g in zip(P2_SHORT, goals))
             + " | all 3 met |", "|---|---|---|---|---|---|---|---|---|"]
    entries = []
    with open(f"{out}/p2-tradeoff.csv", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["threshold_ms", "bench", "given_back_on_pct",
                    "given_back_off_pct", "p50_on_off", "p99_on_off",
                    "given_back_met", "p50_met", "p99_met", "all_met",
                    "given_back_goal_pct", "p50_goal", "p99_goal"])
        for ms, b in sorted(ages):
            parts = [measure(med, noise, spread, b, *t[2:]) for t in P2]
            off = med.get((b, gb_metric, "off"))
            verdicts = [p[2] for p in parts]
            every = judge_all(verdicts)
            label = f"{ms} (default)" if b == "p2_busy" else f"{ms}"
            lines.append(f"| {label} | {parts[0][3]} | {fmt(off)} | "
                         + " | ".join(p[3] for p in parts[1:]) + " | "
                         + " | ".join(verdicts) + f" | {every} |")
            figures = [parts[0][0], off] + [p[0] for p in parts[1:]]
            w.writerow([ms, b] + ["" if v is None else f"{v:.4f}"
                                  for v in figures]
                       + verdicts + [every] + [t[-1] for t in P2])
            entries.append({"threshold_ms": ms, "bench": b,
                            "given_back_off": off,
                            "targets": [{"figure": p[0], "noise": p[1],
                                         "verdict": p[2]} for p in parts],
                            "verdict": every})
    if any(p["noise"] is None for e in entries for p in e["targets"]):
        lines += ["", NO_NOISE]
    return lines, entries


def cost_rows(med, noise, keys, mode, against):
    """Rows of a cost table, mode against the other for each (bench,
    metric) of keys where both ran, and their summary.json entries."""
    rows, entries = [], []
    for b, metric in keys:
        c = cost(med, b, metric, mode, against)
        if c is None:
            continue
        n = noise.get((b, metric))
        verdict = zero_cost(c, n)
        rows.append(f"| {b} {metric} | {c:.4f} | {noise_cell(n)} | {verdict} |")
        entries.append({"bench": b, "metric": metric, "cost": c, "noise": n,
                        "verdict": verdict})
    return rows, entries


def write_hist(out, hist):
    """OUTDIR/hist-<bench>.csv: mode, bucket edges, count and the share of
    that mode's samples (%), modes in the report's order, then by edge."""
    for b, buckets in hist.items():
        total = defaultdict(int)
        for (mode, _, _), count in buckets.items():
            total[mode] += count
        with open(f"{out}/hist-{b}.csv", "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["mode", "lo_us", "hi_us", "count", "share_pct"])
            for (mode, lo, hi), count in sorted(
                    buckets.items(), key=lambda k: (mode_rank(k[0][0]), k[0][1])):
                w.writerow([mode, lo, hi, count,
                            f"{100 * count / total[mode]:.3f}"])


MODES = ["on", "off", "off_a", "off_b", "vanilla", "unreclaimed", "fast",
         "deferred"]


def mode_rank(mode):
    return MODES.index(mode) if mode in MODES else len(MODES)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, consoles = sys.argv[1], sys.argv[2:]
    rows, hist = load(consoles)
    groups = defaultdict(list)
    per_boot = defaultdict(lambda: defaultdict(list))
    for b, mode, _, metric, val, boot, _ in rows:
        groups[(b, metric, mode)].append(val)
        per_boot[(b, metric, mode)][boot].append(val)
    med = {k: statistics.median(v) for k, v in groups.items()}
    noise, spread = noise_of(per_boot, med)
    boots = max((r[5] for r in rows), default=1)

    with open(f"{out}/samples.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["bench", "mode", "round", "metric", "value", "boot",
                    "console"])
        w.writerows(rows)
    write_hist(out, hist)

    modes_of = defaultdict(set)
    for b, metric, mode in med:
        modes_of[(b, metric)].add(mode)
    order = [m for m in MODES if any(m in ms for ms in modes_of.values())]

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

    tlines, verdicts = target_rows(med, noise, spread)
    lines += [""] + tlines

    # On against off for the benches no target above judges (the real
    # tools of tools_ab, under forced reclaim): the cost of the feature at
    # work, with the same A/A noise and verdicts as below. Counts that are
    # zero when off (reclaimed, repopulated) are no cost.
    judged = {(b, metric) for _, b, metric, *_ in TARGETS}
    plines, p2_entries = tradeoff(out, med, noise, spread)
    if plines:
        lines += [""] + plines
    judged |= {(e["bench"], t[2]) for e in p2_entries for t in P2}
    onoff, onoff_entries = cost_rows(
        med, noise, [k for k in sorted(modes_of) if k not in judged],
        "on", "off")
    if onoff:
        lines += ["", "| feature on vs off | cost (> 1 worse) | A/A noise | verdict |",
                  "|---|---|---|---|"] + onoff

    # Patched-but-off against the unpatched kernel, where both ran: the
    # cost of building the feature in, judged against the bench's A/A
    # noise and the 0.5 % that a difference must stay under to count as
    # zero (every difference above it is to be explained).
    extra, zero = cost_rows(med, noise, sorted(modes_of), "off", "vanilla")
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
                   "targets": verdicts, "on_vs_off": onoff_entries,
                   "off_vs_unpatched": zero, "p2_tradeoff": p2_entries,
                   "histograms": sorted(f"hist-{b}.csv" for b in hist)},
                  f, indent=1)
    print("\n".join(lines))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
