#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# plot.sh KIND CSV SVG TITLE: one SVG by gnuplot, every kind in one style.
#   demo  KernelStack over time from the demo's samples
#         (t_s,phase,kernel_stack_kb,...), one dashed line where a phase
#         begins;
#   hist  the distributions in a bench-report.py hist-<bench>.csv
#         (mode,lo_us,hi_us,count,share_pct): a shaded box a bucket, from
#         edge to edge, as high as its share of the mode's samples, one
#         colour a mode; log x;
#   tradeoff  bench-report.py's p2-tradeoff.csv (threshold_ms, bench,
#         given back on and off, p50 and p99 on/off, verdicts, then the
#         three goals): p50 and p99 on/off against the share given back,
#         a point a threshold labelled in ms, joined in threshold order,
#         the goals as dashed lines (the targets are met inside the box
#         right of the given-back goal and under a ratio's goal). Given
#         back on x, not the threshold on a log x: the targets are a region
#         in these axes, and a threshold of 0 has no place on a log axis.
. "$(dirname "$0")/lib.sh"

kind=$1 csv=$2 svg=$3 title=$4
command -v gnuplot > /dev/null || die "gnuplot missing: run 'make deps' (as root)"

demo() {
	awk -F, 'NR > 1 && $2 != last {
		printf "set arrow from %s, graph 0 to %s, graph 1 nohead dt 2 lc rgb \"gray\"\n", $1, $1
		printf "set label \"%s\" at %s, graph 0.97 rotate by 90 right font \",9\"\n", $2, $1
		last = $2 }' "$csv"
	cat <<GP
set xlabel "time (s)"
set ylabel "KernelStack (MiB)"
set y2label "stack pages reclaimed (cumulative)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key bottom right
plot "$csv" using 1:(\$3/1024) skip 1 with lines lw 2 title "KernelStack", \
     "$csv" using 1:5 skip 1 axes x1y2 with lines dt 3 title "pages reclaimed"
GP
}

hist() {
	local modes
	modes=$(awk -F, 'NR > 1 && !seen[$1]++ { printf "%s ", $1 }' "$csv")
	cat <<GP
set xlabel "µs (log scale)"
set ylabel "share of the mode's samples (%)"
set logscale x
set yrange [0:*]
set offsets 0, 0, graph 0.05, 0
set key outside right top
set style fill transparent solid 0.3 border
plot for [m in "$modes"] "$csv" \
     using (sqrt(\$2*\$3)):(strcol(1) eq m ? \$5/2 : NaN):2:3:(0):5 skip 1 \
     with boxxyerror lw 2 title m noenhanced
GP
}

tradeoff() {
	local gb p50 p99
	read -r gb p50 p99 < <(awk -F, 'NR == 2 { print $11, $12, $13 }' "$csv")
	cat <<GP
set xlabel "stack memory given back, feature on (%)"
set ylabel "wake-to-run on/off (> 1 worse)"
set xrange [0:100]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set arrow from $gb, graph 0 to $gb, graph 1 nohead dt 2 lc rgb "gray"
set label "given back goal" at $gb, graph 0.97 rotate by 90 right font ",9"
set key outside right top
plot "$csv" using 3:5 skip 1 with linespoints lw 2 pt 7 title "p50 on/off", \
     "$csv" using 3:6 skip 1 with linespoints lw 2 pt 5 title "p99 on/off", \
     "$csv" using 3:5:(sprintf("%d ms", \$1)) skip 1 with labels offset 0, 1 font ",9" notitle, \
     "$csv" using 3:6:(sprintf("%d ms", \$1)) skip 1 with labels offset 0, 1 font ",9" notitle, \
     $p50 with lines dt 2 lc 1 title "p50 goal", \
     $p99 with lines dt 2 lc 2 title "p99 goal"
GP
}

case "$kind" in
demo|hist|tradeoff) ;;
*) die "plot.sh: unknown kind '$kind' (demo, hist, tradeoff)" ;;
esac
{
	cat <<GP
set terminal svg size 900,500 dynamic background rgb "white"
set output "$svg"
set datafile separator ","
set title "$title" noenhanced
GP
	"$kind"
} | gnuplot
