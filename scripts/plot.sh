#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# plot.sh CSV SVG TITLE: KernelStack over time from the demo's samples
# (t_s,phase,kernel_stack_kb,...), one dashed line where a phase begins.
. "$(dirname "$0")/lib.sh"

csv=$1 svg=$2 title=$3
command -v gnuplot > /dev/null || die "gnuplot missing: run 'make deps' (as root)"
marks=$(awk -F, 'NR > 1 && $2 != last {
	printf "set arrow from %s, graph 0 to %s, graph 1 nohead dt 2 lc rgb \"gray\"\n", $1, $1
	printf "set label \"%s\" at %s, graph 0.97 rotate by 90 right font \",9\"\n", $2, $1
	last = $2 }' "$csv")
gnuplot <<GP
set terminal svg size 900,500 dynamic background rgb "white"
set output "$svg"
set datafile separator ","
set title "$title" noenhanced
set xlabel "time (s)"
set ylabel "KernelStack (MiB)"
set y2label "stack pages reclaimed (cumulative)"
set ytics nomirror
set y2tics
set yrange [0:*]
set y2range [0:*]
set key bottom right
$marks
plot "$csv" using 1:(\$3/1024) skip 1 with lines lw 2 title "KernelStack", \
     "$csv" using 1:5 skip 1 axes x1y2 with lines dt 3 title "pages reclaimed"
GP
