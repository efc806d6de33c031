#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: build (what is stale) and boot the feature kernel, run the
# Android-like thread population of bench/demo.c in the guest, print its
# before/after table, the census of every thread once the population is
# blocked (before reclaim), and plot KernelStack over time.
#   DEMO_PROCS (16), DEMO_THREADS per process (250), DEMO_HOG_MB (64),
#   DEMO_MIX (site:weight/..., default in bench/demo.c).
export CONFIG=${DEMO_CONFIG:-rkstack}
. "$(dirname "$0")/lib.sh"

procs=${DEMO_PROCS:-16}
threads=${DEMO_THREADS:-250}
hog=${DEMO_HOG_MB:-64}
mix=${DEMO_MIX:-}

int_in DEMO_PROCS "$procs" 1 64
int_in DEMO_THREADS "$threads" 1 2000
int_in DEMO_HOG_MB "$hog" 0 1024
[ -z "$mix" ] || [[ "$mix" =~ ^[a-z_]+:[0-9]+(/[a-z_]+:[0-9]+)*$ ]] ||
	die "DEMO_MIX=$mix: want site:weight/site:weight..., e.g. futex:60/epoll:40"
case "$CONFIG" in rk*) ;; *) die "the demo needs a feature build (DEMO_CONFIG=rkstack or rkdebug)" ;; esac

prepare_guest

out=$BUILD/demo/$ARCH
mkdir -p "$out"
tag=demo-$ARCH
# The boot's results are in $RESULTS_D/$tag; the table's and plot's here.
results_open "$tag-report"
args="procs=$procs,threads=$threads,hog_mb=$hog${mix:+,mix=$mix}"
rc=0
"$TOP/scripts/boot.sh" "$tag" demo "$args" > "$out/results" || rc=$?
con=$LOGS/$tag.log

# The samples, as CSV, and the table, as markdown.
{
	echo "t_s,phase,kernel_stack_kb,stacks_reclaimed,pages_reclaimed,fast,deferred"
	sed -n 's/\r$//; s/^@@RK-DATA //p' "$con"
} > "$out/kernelstack.csv"
sed -n 's/\r$//; s/^@@RK-TABLE \{0,1\}//p' "$con" > "$out/table.md"
"$TOP/scripts/census-report.sh" "$con" > "$out/census.md"
sed -n 's/\r$//; /^demo:/p' "$con"
echo
cat "$out/table.md"
echo
cat "$out/census.md"

if [ -s "$out/census.md" ]; then
	result pass "$tag/census" >> "$out/results"
else
	result fail "$tag/census" "the guest printed no census" >> "$out/results"
fi
if [ ! -s "$out/table.md" ]; then
	result fail "$tag/table" "the guest printed no table" >> "$out/results"
elif [ "$(wc -l < "$out/kernelstack.csv")" -lt 3 ]; then
	result fail "$tag/plot" "fewer than two samples" >> "$out/results"
elif "$TOP/scripts/plot.sh" demo "$out/kernelstack.csv" "$out/kernelstack.svg" \
		"KernelStack, $procs x $threads threads ($ARCH)" && [ -s "$out/kernelstack.svg" ]; then
	result pass "$tag/plot" >> "$out/results"
	echo "plot: $out/kernelstack.svg"
else
	result fail "$tag/plot" "gnuplot failed" >> "$out/results"
fi
echo "samples: $out/kernelstack.csv; console: $con"
grep '^FAIL' "$out/results" && rc=1
[ $rc -eq 0 ] && echo "demo passed" || echo "demo FAILED"
exit $rc
