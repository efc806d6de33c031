#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench-report.py OUTDIR CONSOLE...: collect the "@@RK-BENCH" lines of the
guest consoles into OUTDIR/samples.csv (every value), OUTDIR/summary.json
(median, min and max per bench, metric and mode) and OUTDIR/report.md (the
table, with the ratios between modes and each target met or missed), and
the "@@RK-HIST" lines (a histogram on fixed bucket edges, rk_bench.h) into
OUTDIR/hist-<bench>.csv, counts added over consoles (plot.sh hist draws it).

A console named ...-b<K>-[aa-]<program>.log is boot K of that program (bench.sh
BENCH_BOOTS). A share's figure (a percentage, no ratio) is the median of
every value of all boots; a ratio of two modes of one boot (on/off,
fast/unreclaimed) is the median of the boots' own ratios; a ratio against
the unpatched kernel, whose modes come from different boots, the ratio of
the two modes' pooled medians. Each target has a noise, the amount its
figure moves when nothing but chance changes, measured only from
MIN_BOOTS (3) boots or more:
- a share: the spread between the medians of its mode's boots, in
  points (max - min);
- a ratio of two modes of one boot, which cancels whatever makes one
  boot slower than another: the spread of the boots' ratios (max/min - 1);
- a ratio against the unpatched kernel: the larger of the two modes'
  spreads between boots (max/min - 1 of each mode's boot medians);
and, for either ratio, no less than the A/A spread where it was measured
(bench.sh BENCH_AA=1: two modes, both switched off, in a boot of their
own; the largest max(off_a/off_b, off_b/off_a) - 1 of such a boot; a P2
sweep's p2_age<N> shares p2_busy's). A target is "inconclusive" when its
noise reaches the margin, the figure's distance from its limit: for a
share |figure - limit| points, for a ratio max(limit/figure,
figure/limit) - 1 (a ratio of 0.75 against a limit of 1.2 has 60 % of
room, one of 1.19 under 1 %); "yes" or "NO" only otherwise. With no
noise data the noise is "not measured" and the verdict "inconclusive":
never "yes" or "NO" from the figure alone.

Exit status 1 if a benchmark reported nothing at all (a target missed is
a result, not an error)."""

import csv
import json
import math
import os
import re
import statistics
import sys
from collections import defaultdict, namedtuple

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
    boot, console), the @@RK-HIST counts, {bench: {(mode, lo_us, hi_us):
    count}}, added over every console (the edges are fixed), and the
    values that were no number (nan, inf: a program's percentile of no
    samples), left out of the rows and counted per (bench, mode, metric)."""
    rows = []
    hist = defaultdict(lambda: defaultdict(int))
    dropped = defaultdict(int)
    for path in paths:
        bm = BOOT.search(os.path.basename(path))
        boot = int(bm.group(1)) if bm else 1
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE.search(line)
                if m:
                    b, mode, rnd, metric, val = m.groups()
                    if not math.isfinite(float(val)):
                        dropped[(b, mode, metric)] += 1
                        continue
                    rows.append((b, mode, int(rnd), metric, float(val),
                                 boot, path))
                m = HIST.search(line)
                if m:
                    b, mode, lo, hi, count = m.groups()
                    hist[b][(mode, float(lo), float(hi))] += int(count)
    return rows, hist, dropped


# A spread between fewer boots is no estimate of the noise: with the
# ratio exactly at its limit, the max/min of two boots' log-normal ratios
# calls it met one time in seven, of three one time in 25, of five one
# in 300 (a simulation by review, 2026-12-07).
MIN_BOOTS = 3

# A P2 sweep's bench: p2_busy run with min_age_ms=N (see tradeoff()).
AGE = re.compile(r"p2_age(\d+)$")


def spread_of(values):
    """max/min - 1 of non-negative values (0 if all equal, zeros too; inf
    if some are 0 and some not); None for fewer than MIN_BOOTS."""
    if len(values) < MIN_BOOTS:
        return None
    if max(values) == min(values):
        return 0.0
    if min(values) <= 0:
        return math.inf
    return max(values) / min(values) - 1


def noise_of(per_boot):
    """The spread between the boots of each (bench, metric, mode) (spread;
    from MIN_BOOTS boots), and per (bench, metric) the largest A/A spread
    of one boot, max(off_a/off_b, off_b/off_a) - 1 (aa)."""
    spread, aa = {}, {}
    for (b, metric, mode), boots in per_boot.items():
        n = spread_of([statistics.median(v) for v in boots.values()])
        if n is not None:
            spread[(b, metric, mode)] = n
        other = per_boot.get((b, metric, "off_b"), {})
        for boot, v in boots.items() if mode == "off_a" else ():
            x = statistics.median(v)
            y = statistics.median(other.get(boot, [0]))
            if x > 0 and y > 0:
                aa[(b, metric)] = max(aa.get((b, metric), 0),
                                      max(x / y, y / x) - 1)
    return spread, aa


def aa_bench(b):
    """The bench whose A/A boots measure b's instrument: a P2 sweep's
    p2_age<N> has none of its own (an A/A run never switches the feature
    on, so no threshold matters) and shares plain p2_busy's."""
    return "p2_busy" if AGE.match(b) else b


def target_noise(st, b, metric, mode, against):
    """The noise of a figure (see the top of this file): None unless it
    rests on MIN_BOOTS boots; for a ratio, no less than the A/A spread
    where it was measured."""
    if against is None:
        boots = st.per_boot.get((b, metric, mode), {})
        if len(boots) < MIN_BOOTS:
            return None
        ms = [statistics.median(v) for v in boots.values()]
        return max(ms) - min(ms)
    if "vanilla" in (mode, against):
        parts = [st.spread.get((b, metric, m)) for m in (mode, against)]
        n = None if None in parts else max(parts)
    else:
        costs = boot_costs(st, b, metric, mode, against)
        n = spread_of(costs) if None not in costs else None
        # A boot where a mode's median is 0 has no ratio: infinitely noisy.
        if None in costs and len(costs) >= MIN_BOOTS:
            n = math.inf
    return None if n is None else max(n, st.aa.get((aa_bench(b), metric), 0))


def boot_costs(st, b, metric, mode, against):
    """The cost of mode against the other in each boot that has both (None
    for a boot where either median is 0)."""
    x = st.per_boot.get((b, metric, mode), {})
    y = st.per_boot.get((b, metric, against), {})
    return [ratio(statistics.median(x[k]), statistics.median(y[k]), metric)
            for k in sorted(set(x) & set(y))]


def figure_cost(st, b, metric, mode, against):
    """A ratio target's figure: for two modes of one boot, the median of
    the boots' own ratios (what its noise measures the spread of; boots
    where one mode is missing or 0 left out); against the unpatched
    kernel, the ratio of the pooled medians."""
    if "vanilla" in (mode, against):
        return cost(st.med, b, metric, mode, against)
    costs = [c for c in boot_costs(st, b, metric, mode, against) if c]
    return statistics.median(costs) if costs else None


def ratio(x, y, metric):
    """The cost of a mode's median x against another's y, > 1 worse (see
    RATE_GOAL); None where either is missing or zero."""
    if not x or not y:
        return None
    return y / x if metric.endswith("_per_s") else x / y


def cost(med, b, metric, mode, against):
    """The cost of mode against the other, from the pooled medians."""
    return ratio(med.get((b, metric, mode)), med.get((b, metric, against)),
                 metric)


def judge(figure, limit, n, share):
    """A target's verdict given its noise n (None: not measured): never
    "yes" or "NO" without the noise, nor when the noise reaches the
    margin, the figure's distance from its limit: for a share in points,
    |figure - limit|, as its noise is; for a ratio relative, max(limit /
    figure, figure / limit) - 1, as its noise (a max/min - 1) is."""
    if figure is None:
        return "-"
    if share:
        margin = abs(figure - limit)
    else:
        margin = (max(limit / figure, figure / limit) - 1 if figure > 0
                  else math.inf)
    if n is None or n >= margin:
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

# Metrics that count events rather than cost time: no "on vs off" cost.
# P2's hog_user_ms and hog_sys_ms: how much the hog ran (which the
# feature lets it do; its system time also holds the reclaim it ran, the
# stack shrinker's included): shown, not judged. given_back_pct is what
# the feature is for, judged by the targets (P1, P2), never as a cost
# (a p2_hold<N>_<M> run has none).
COUNTS = ("wakeups", "count", "reclaimed", "repopulated", "skipped_slots",
          "busy_slots", "hog_user_ms", "hog_sys_ms", "given_back_pct")


def zero_cost(cost, n):
    """Verdict on a cost ratio (> 1 worse) given its noise n."""
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


def finite(obj):
    """obj for JSON: an infinite float (a spread over a zero) as "inf"."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def noise_cell(n, share=False):
    """A noise as the tables print it: a share's in points, a ratio's in
    percent of the figure."""
    if n is None:
        return "not measured"
    return f"{n:.2f} points" if share else f"{100 * n:.2f} %"


# What the targets are judged on: the pooled medians, the noise_of()
# dicts and the values of each boot ({(bench, metric, mode): {boot:
# [values]}}).
Stats = namedtuple("Stats", "med spread aa per_boot")


def measure(st, b, metric, mode, against, limit):
    """A target's figure on bench b, its noise (see the top of this file),
    the verdict, and the figure and goal as the tables print them."""
    share = against is None
    n = target_noise(st, b, metric, mode, against)
    if share:
        v = st.med.get((b, metric, mode))
        vcell = fmt(v)
    else:
        v = figure_cost(st, b, metric, mode, against)
        vcell = "-" if v is None else f"{v:.4f}"
    return (v, n, judge(v, limit, n, share), vcell, goal_text(limit, share),
            noise_cell(n, share))


def goal_text(limit, share):
    return f"{'>=' if share else '<='} {limit:.5g}"


NO_NOISE = ("Noise not measured: inconclusive, whatever the figure "
            "(make bench BENCH_BOOTS=3 or more measures it; BENCH_AA=1 adds "
            "the A/A floor of the ratios).")


def target_rows(st):
    """The targets table and its summary.json entries."""
    lines = ["| target | figure (ratios > 1 worse; P5's rates inverted: "
             ">= 0.99 is <= 1/0.99) | goal | noise | met |",
             "|---|---|---|---|---|"]
    entries = []
    verdict_of = {}
    for label, b, *spec in TARGETS:
        v, n, verdict, vcell, goal, ncell = measure(st, b, *spec)
        verdict_of[label] = verdict
        lines.append(f"| {label} | {vcell} | {goal} | {ncell} | {verdict} |")
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
# 1500000). Issue 12's three P2 targets are judged on each, as above.
DEFAULT_AGE_MS = 1500
P2 = [t for t in TARGETS if t[1] == "p2_busy"]
P2_SHORT = ["given back", "p50", "p99"]


def tradeoff(out, st):
    """The P2 age threshold trade-off table (one row a threshold, in ms),
    also as OUTDIR/p2-tradeoff.csv (plot.sh tradeoff draws it), and its
    summary.json entries; nothing unless a p2_age<N> bench ran."""
    med = st.med
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
            parts = [measure(st, b, *t[2:]) for t in P2]
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
    if any(p["figure"] is not None and p["noise"] is None
           for e in entries for p in e["targets"]):
        lines += ["", NO_NOISE]
    return lines, entries


def cost_rows(st, keys, mode, against):
    """Rows of a cost table, mode against the other for each (bench,
    metric) of keys where both ran, and their summary.json entries."""
    rows, entries = [], []
    for b, metric in keys:
        c = figure_cost(st, b, metric, mode, against)
        if c is None:
            continue
        n = target_noise(st, b, metric, mode, against)
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
    rows, hist, dropped = load(consoles)
    groups = defaultdict(list)
    per_boot = defaultdict(lambda: defaultdict(list))
    for b, mode, _, metric, val, boot, _ in rows:
        groups[(b, metric, mode)].append(val)
        per_boot[(b, metric, mode)][boot].append(val)
    med = {k: statistics.median(v) for k, v in groups.items()}
    spread, aa = noise_of(per_boot)
    st = Stats(med, spread, aa, per_boot)
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

    if dropped:
        lines += ["", "Values that were no number (nan or inf), left out: "
                  + ", ".join(f"{b} {mo} {m} x{n}"
                              for (b, mo, m), n in sorted(dropped.items()))
                  + "."]

    # The spreads the verdicts rest on: A/A (the largest of one boot) and
    # between the boots of each mode (from MIN_BOOTS boots).
    noisy = sorted({k for k in aa} | {k[:2] for k in spread})
    if noisy:
        lines += ["", "| spread | A/A (off_a/off_b, largest of one boot) | "
                  f"between boots (from {MIN_BOOTS}), per mode |", "|---|---|---|"]
        for b, metric in noisy:
            # A share's spread in points (see target_noise()).
            per_mode = ", ".join(
                f"{m} " + (noise_cell(target_noise(st, b, metric, m, None), True)
                           if metric.endswith("_pct") else
                           noise_cell(spread[(b, metric, m)]))
                for m in sorted(modes_of[(b, metric)], key=mode_rank)
                if (b, metric, m) in spread)
            # A share's noise takes no A/A (target_noise()).
            shared = "" if aa_bench(b) == b else f" ({aa_bench(b)}'s)"
            aacell = ("-" if metric.endswith("_pct") else
                      noise_cell(aa.get((aa_bench(b), metric))) + shared)
            lines.append(f"| {b} {metric} | {aacell} | {per_mode or '-'} |")

    tlines, verdicts = target_rows(st)
    lines += [""] + tlines

    # On against off for the benches no target above judges (the real
    # tools of tools_ab, under forced reclaim): the cost of the feature at
    # work, with the noise of a ratio of one boot's modes and verdicts as
    # below. Counts (COUNTS: reclaimed, repopulated, ...) are no cost.
    judged = {(b, metric) for _, b, metric, *_ in TARGETS}
    judged |= {k for k in modes_of if k[1] in COUNTS}
    plines, p2_entries = tradeoff(out, st)
    if plines:
        lines += [""] + plines
    judged |= {(e["bench"], t[2]) for e in p2_entries for t in P2}
    onoff, onoff_entries = cost_rows(
        st, [k for k in sorted(modes_of) if k not in judged], "on", "off")
    if onoff:
        lines += ["", "| feature on vs off | cost (> 1 worse) | noise | verdict |",
                  "|---|---|---|---|"] + onoff

    # Patched-but-off against the unpatched kernel, where both ran: the
    # cost of building the feature in, judged against its noise (as the
    # targets' against the unpatched kernel) and the 0.5 % that a
    # difference must stay under to count as zero (every difference above
    # it is to be explained).
    extra, zero = cost_rows(st, sorted(modes_of), "off", "vanilla")
    if extra:
        lines += ["", "| built in, switched off vs unpatched 6.12 | cost (> 1 worse) "
                  "| noise | verdict |", "|---|---|---|---|"] + extra

    with open(f"{out}/report.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(f"{out}/summary.json", "w") as f:
        json.dump(finite({"medians": [{"bench": b, "metric": m, "mode": mo,
                                "median": v, "min": min(groups[(b, m, mo)]),
                                "max": max(groups[(b, m, mo)]),
                                "n": len(groups[(b, m, mo)])}
                               for (b, m, mo), v in sorted(med.items())],
                   "noise": [{"bench": b, "metric": m,
                              "aa": (None if m.endswith("_pct")
                                     else aa.get((aa_bench(b), m))),
                              "between_boots": {
                                  mo: (target_noise(st, b, m, mo, None)
                                       if m.endswith("_pct")
                                       else spread[(b, m, mo)])
                                  for mo in sorted(modes_of[(b, m)])
                                  if (b, m, mo) in spread},
                              "unit": ("points" if m.endswith("_pct")
                                       else "max/min - 1")}
                             for b, m in noisy],
                   "targets": verdicts, "on_vs_off": onoff_entries,
                   "off_vs_unpatched": zero, "p2_tradeoff": p2_entries,
                   "histograms": sorted(f"hist-{b}.csv" for b in hist)}),
                  f, indent=1, allow_nan=False)
    print("\n".join(lines))
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
