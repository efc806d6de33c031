#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ks-rate.sh PROGRAM RUNS [WITH...]: does the feature make one of the
# tree's selftests fail more often? Boots the feature kernel (KS_CONFIG,
# default rkdebug, the kernel make check runs them on) once; the guest
# (guest/ksrate) runs PROGRAM (a path under the selftests' build, e.g.
# futex/functional/futex_requeue) RUNS times with the feature on and RUNS
# times off, in turn, under the kselftests runner's drop_caches loop, with
# each WITH (DIR/BIN[:ARG...]) running beside it as the runner's other
# lanes do. Prints both failure rates, Fisher's exact test on them
# (two-sided), and of the failed runs with the feature on how many had a
# stack of the program reclaimed, and how many a wakeup that waited for
# the worker. Results:
#   FAIL ks-rate/PROGRAM/feature-raises-failures: on failed more often
#        than off, p < 0.05;
#   PASS ks-rate/PROGRAM/no-rise-resolved: otherwise, a statement about
#        RUNS runs, not a proof of no effect;
#   SKIP ks-rate/PROGRAM/...: a run skipped, or no stack of the program
#        was reclaimed with the feature on (nothing was compared);
#   FAIL ks-rate/PROGRAM/setup: the guest gave no counts, or reclaimed
#        stacks of the program with the feature off.
# Tracepoints are switched on in the guest, so it boots with BOOT_TCG=single
# (boot.sh: multi-threaded TCG oopses on text patching).
. "$(dirname "$0")/lib.sh"

prog=${1:-} runs=${2:-}
if [ -z "$prog" ] || [ -z "$runs" ]; then
	die "usage: $0 PROGRAM RUNS [WITH...] (e.g. futex/functional/futex_requeue 200 timers/nsleep-lat)"
fi
int_in RUNS "$runs" 1 500
shift 2
cfg=${KS_CONFIG:-rkdebug}
tag=ks-rate-$ARCH
results_open "$tag-judged"
# Until the judgement below: any earlier exit leaves this FAIL behind.
result fail "ks-rate/$prog/setup" "did not finish (see the messages above)" > /dev/null

CONFIG=$cfg prepare_guest
"$TOP/scripts/kselftests.sh" build || die "the selftests failed to build"
"$TOP/scripts/initramfs.sh" > /dev/null
for p in "$prog" "$@"; do
	[ -x "$BUILD/$ARCH-kselftests/${p%%:*}" ] ||
		die "$p: not among the built selftests (guest/kselftests.list)"
done
args="prog=$prog,runs=$runs"
for w; do args+=",with=$w"; done

log "ks-rate: $prog, $runs runs with the feature on and $runs off, on $ARCH-$cfg"
rm -f "$LOGS/$tag.log"
CONFIG=$cfg BOOT_TCG=single BOOT_TIMEOUT=$((3600 * TIME_SCALE)) \
	"$TOP/scripts/boot.sh" "$tag" ksrate "$args" > /dev/null || true

# Judged into a file of its own, which replaces the results only if the
# judge ran to its end: a crash leaves the "did not finish" FAIL.
python3 - "$prog" "$LOGS/$tag.log" > "$LOGS/$tag.judged" <<'EOF'
import math, re, sys

prog, console = sys.argv[1], sys.argv[2]
modes = {}
with open(console, errors="replace") as f:
    for line in f:
        if line.startswith("@@RK-KSRATE "):
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            modes[kv["mode"]] = kv
name = f"ks-rate/{prog}"
if set(modes) != {"on", "off"}:
    print(f"FAIL {name}/setup: no @@RK-KSRATE line for both modes in {console}")
    sys.exit()
on, off = ({k: int(v) if re.fullmatch(r"\d+", v) else v for k, v in modes[m].items()}
           for m in ("on", "off"))


def fisher(a, b, c, d):
    """Two-sided Fisher's exact test of the 2x2 table [[a, b], [c, d]]."""
    n1, n2, k = a + b, c + d, a + c

    def p(x):
        return math.exp(math.lgamma(n1 + 1) - math.lgamma(x + 1) - math.lgamma(n1 - x + 1)
                        + math.lgamma(n2 + 1) - math.lgamma(k - x + 1)
                        - math.lgamma(n2 - k + x + 1) - math.lgamma(n1 + n2 + 1)
                        + math.lgamma(k + 1) + math.lgamma(n1 + n2 - k + 1))
    obs = p(a)
    return min(1.0, sum(p(x) for x in range(max(0, k - n2), min(k, n1) + 1)
                        if p(x) <= obs * (1 + 1e-9)))


# A skipped run is neither a pass nor a failure: out of the comparison.
n_on, f_on = on["runs"] - on["skipped"], on["failed"]
n_off, f_off = off["runs"] - off["skipped"], off["failed"]
if on["skipped"] or off["skipped"]:
    print(f"# the program skipped {on['skipped']} runs on and {off['skipped']} off: left out")
if n_on <= 0 or n_off <= 0:
    print(f"SKIP {name}/compared: every run skipped in a mode")
    sys.exit()
pv = fisher(f_on, n_on - f_on, f_off, n_off - f_off)
print(f"# {prog}: feature on {f_on}/{n_on} failed, off {f_off}/{n_off}; Fisher p = {pv:.3g}")
print(f"# with the feature on, {on['runs_reclaimed']} runs had a stack of the program"
      f" reclaimed and {on['runs_deferred']} a wakeup that waited for the worker;"
      f" of the {f_on} failed runs, {on['failed_reclaimed']} and {on['failed_deferred']}"
      + ("" if on["attributed"] else " (no attribution: trace events missing)"))
# The smallest failure count with the feature on that would have been
# significant against off's as observed (the runs of the two modes are
# as many): a true rate that high is caught only about half the time.
least = next((r for r in range(f_off + 1, n_on + 1)
              if fisher(r, n_on - r, f_off, n_off - f_off) < 0.05), None)
if off["runs_reclaimed"]:
    print(f"FAIL {name}/setup: {off['runs_reclaimed']} runs with the feature off had a stack reclaimed")
elif f_on * n_off > f_off * n_on and pv < 0.05:
    print(f"FAIL {name}/feature-raises-failures: {f_on}/{n_on} on against {f_off}/{n_off} off, p = {pv:.3g}")
elif not on["attributed"] or not on["runs_reclaimed"]:
    print(f"SKIP {name}/compared: no stack of the program seen reclaimed with the feature on")
else:
    print(f"PASS {name}/no-rise-resolved")
    if least is None:
        print(f"# no failure count with the feature on would have been significant here")
    else:
        print(f"# {least}/{n_on} failed runs ({100 * least / n_on:.1f} %) with the feature on"
              " would have been significant (a true rate that high is caught about half the time)")
EOF
cat "$LOGS/$tag.judged"
mv "$LOGS/$tag.judged" "$(results_file)"
results_total "$(results_file)"
[ "$(results_count FAIL "$(results_file)")" -eq 0 ]
