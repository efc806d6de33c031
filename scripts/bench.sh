#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: boot the feature kernel once per benchmark program (each
# switches the feature on and off itself, A/B interleaved), the unpatched
# 6.12 build for the third column, and write the report.
#   BENCH_ROUNDS (10), BENCH_SMOKE=1 (tiny sizes, for make check),
#   BENCH_CLOCK (icount: QEMU's deterministic clock, every guest time a
#   count of guest instructions, see boot.sh; wall: the host's time),
#   BENCH_PROGS (the feature kernel's program:args list, to run a subset),
#   BENCH_BOOTS (3: boots of each program, pooled; the report measures
#   the boot-to-boot spread from 3 boots, and judges no target without
#   it; the smoke: 1), BENCH_AA (1: per boot, one more of p2_busy,
#   p3_hotpath, p5_threads and tools_ab with aa=1, two modes, both off,
#   for the A/A spread; the smoke: 0),
#   BENCH_VANILLA=0 (skip the unpatched kernel), BENCH_CONFIG (the
#   feature build to measure: rkstack; make check's smoke uses its own),
#   BENCH_KARGS (kernel arguments of every boot: nokaslr norandmaps),
#   BENCH_ICOUNT_KARGS (added to the boots on the icount clock:
#   ICOUNT_KARGS of lib.sh, on x86_64 clearcpuid=erms, see below).
# A program's argument clock=wall|icount boots it on that clock whatever
# BENCH_CLOCK says (tools_ab's cyclictest: see its entry below).
. "$(dirname "$0")/lib.sh"

rounds=${BENCH_ROUNDS:-10}
int_in BENCH_ROUNDS "$rounds" 1 100
vanilla=${BENCH_VANILLA:-1}
fcfg=${BENCH_CONFIG:-rkstack}
case "$fcfg" in rk*) ;; *) die "BENCH_CONFIG=$fcfg: want a feature build (rkstack, rkdebug)" ;; esac
smoke=${BENCH_SMOKE:-0}
clock=${BENCH_CLOCK:-icount}
case "$clock" in wall|icount) ;; *) die "BENCH_CLOCK=$clock: want wall or icount" ;; esac
export BOOT_CLOCK=$clock
# A plain make bench gives verdicts: 3 boots and the A/A floor (the
# smoke only checks that every program runs and reports).
if [ "$smoke" = 1 ]; then
	boots=${BENCH_BOOTS:-1} aa=${BENCH_AA:-0}
else
	boots=${BENCH_BOOTS:-3} aa=${BENCH_AA:-1}
fi
int_in BENCH_BOOTS "$boots" 1 5
int_in BENCH_AA "$aa" 0 1

# program:arguments (comma separated) for the feature kernel; the
# vanilla kernel runs the programs whose modes make sense without it.
if [ "$smoke" = 1 ]; then
	progs="p1_idle:rounds=1,threads=400 p2_busy:rounds=1,threads=400,seconds=4
	       p3_hotpath:rounds=2,iters=200 p4_wake:rounds=2,threads=8
	       p5_threads:rounds=2,iters=200 reclaim_cost:rounds=1,threads=200"
	# Each real tool runs and reports (x86_64: GUEST_TOOLS in lib.sh).
	[ -z "$GUEST_TOOLS" ] || progs+="
	       tools_ab:rounds=1,pipe_loops=200,msg_groups=1,msg_loops=5,hb_groups=1,hb_loops=5
	       tools_ab:tools=cyclictest,pressure=drop,clock=wall,rounds=1,cyc_threads=2,cyc_loops=20"
	vanilla=0
else
	# P3 at 2,000 round trips in 2 slices a round on the icount clock:
	# that holds its medians to 0.1-0.2 % between boots (2026-12-07),
	# where p3_hotpath's own defaults (30,000 in 5) are sized for the
	# wall clock and take 15 times as long.
	p3size=
	[ "$clock" = icount ] && p3size=,iters=2000,slices=2
	progs="p1_idle:rounds=3 p2_busy:rounds=2
	       p3_hotpath:rounds=$rounds$p3size
	       p4_wake:rounds=$rounds p5_threads:rounds=$rounds reclaim_cost"
	# The real tools (x86_64): perf bench and hackbench on the icount
	# clock like ours, under memcg pressure, and perf's ping-pong under
	# drop_caches, the only pressure that reaches a pair of tasks (see
	# bench/tools_ab.c); cyclictest on the wall clock under drop_caches:
	# under icount with sleep=off an idle guest's clock jumps to the next
	# timer, so every timer fires exactly on time and its "latency" is
	# only the instructions from the interrupt to the thread (the other
	# vCPU's included), not a latency.
	[ -z "$GUEST_TOOLS" ] || progs+="
	       tools_ab:rounds=$rounds tools_ab:tools=perf_pipe,pressure=drop,rounds=$rounds
	       tools_ab:tools=cyclictest,pressure=drop,clock=wall,rounds=$rounds"
fi
progs=${BENCH_PROGS:-$progs}
# The unpatched kernel runs, with the same arguments, the programs whose
# modes make sense without the feature.
vprogs=
for p in $progs; do
	case "${p%%:*}" in p3_hotpath|p5_threads|tools_ab) vprogs+=" $p" ;; esac
done
# The A/A boots: the programs that take aa=, with their arguments here.
aaprogs=
if [ "$aa" = 1 ]; then
	for p in $progs; do
		case "$p" in
		# A P2 sweep's thresholds share the A/A boot of plain p2_busy:
		# an A/A run never switches the feature on, so no age matters.
		p2_busy:*min_age_ms=*) ;;
		p2_busy:*|p3_hotpath:*|p5_threads:*|tools_ab:*) aaprogs+=" $p,aa=1" ;;
		p2_busy|p3_hotpath|p5_threads|tools_ab) aaprogs+=" $p:aa=1" ;;
		esac
	done
	# By default (no BENCH_AA), a subset without such a program has none.
	[ -n "$aaprogs" ] || [ -z "${BENCH_AA:-}" ] || die "BENCH_AA=1: none of BENCH_PROGS takes aa= (p2_busy, p3_hotpath, p5_threads, tools_ab; a P2 sweep needs a plain p2_busy entry for it)"
fi

[ -n "$aaprogs" ] || aa=0	# for the report's header: no A/A boot ran
CONFIG=$fcfg prepare_guest
[ "$vanilla" = 1 ] && CONFIG=vanilla "$TOP/scripts/kernel.sh"

stamp=$(date -u +%Y%m%d-%H%M%S)
out=$BUILD/bench/$ARCH-$stamp
mkdir -p "$out"
# Each boot's results are in $RESULTS_D/<its tag>; the report's here.
results_open "bench-$ARCH-report"
# The same kernel and user address layout in every boot (BENCH_KARGS=''
# restores randomisation), so that layout is not one more thing in which
# two boots differ: where mmap areas and stacks land can change, for
# example, how many page-table pages fork copies. Whether this narrows
# the A/A spread has not been measured yet.
kargs=${BENCH_KARGS-nokaslr norandmaps}
# x86_64: icount counts each iteration of a rep-prefixed string
# instruction as one instruction. With ERMS (QEMU 7.2's "max" CPU has
# it, not FSRM or FSRS) clear_page() is one rep stosb per page, 4,096
# counted where the hardware retires one instruction; without it the
# kernel uses rep stosq (this CPU model has REP_GOOD), 512 counted, or
# its unrolled loop of plain stores, about 700: so with ERMS a path that
# zeroes pages (the deferred repopulation, the pool refill, a fault of
# the P2 hog) weighs eight times what the same work weighs as ordinary
# code. clearcpuid=erms changes the kernel's view only (user space
# still sees ERMS), and with it also user copies of 64 bytes or more
# (rep movsq, not movsb), memmove of 32 or more and copy_mc; not
# memcpy, memset or copy_page, which without FSRM/FSRS never used rep
# movsb/stosb here. On QEMU 8.0 or later, whose "max" CPU adds FSRM and
# FSRS, memcpy, memset and the user copies would stay per byte whatever
# ERMS says. It is an instrument choice, and it favours the feature's
# dearest paths (which zero pages): neither 4,096 nor 512 is what a
# page clear costs in cycles. It applies to every kernel of the
# comparison alike, the unpatched one included; wall-clock boots keep
# the CPU as it is. It taints the kernel (S, "CPU out of spec"), which
# nothing here checks. BENCH_ICOUNT_KARGS= gives the ERMS view back.
icount_kargs=${BENCH_ICOUNT_KARGS-$ICOUNT_KARGS}
consoles=()
run() { # config tag prog:args
	local cfg=$1 tag=$2 prog=${3%%:*} args= bclock=$clock name bkargs=$kargs
	[ "$prog" = "$3" ] || args=${3#*:}
	name=$prog
	case ",$args," in *,aa=1,*) tag+=-aa ;; esac
	# Its own clock: the console is named after it (tools_ab_wall).
	case ",$args," in
	*,clock=wall,*) bclock=wall name+=_wall ;;
	*,clock=icount,*) bclock=icount name+=_icount ;;
	esac
	[ "$bclock" = wall ] || bkargs+=" $icount_kargs"
	# A program listed twice (tools_ab; p2_busy with min_age_ms= for the
	# P2 sweep): tools_ab_2, ..., each its own console and results file.
	local base=$name n=1
	while [ -e "$out/$tag-$name.log" ]; do n=$((n + 1)); name=${base}_$n; done
	# A FAIL of the boot is in $out/results, counted below; go on.
	CONFIG=$cfg BOOT_CLOCK=$bclock BOOT_TIMEOUT=${BENCH_TIMEOUT:-1800} \
		KERNEL_ARGS="${KERNEL_ARGS:-} $bkargs" \
		"$TOP/scripts/boot.sh" "$tag-$name" "$prog" "$args" >> "$out/results" || true
	cp "$LOGS/$tag-$name.log" "$out/"
	consoles+=("$out/$tag-$name.log")
	if grep -q '^@@RK-BENCH ' "$out/$tag-$name.log"; then
		result pass "$tag-$name/reported" >> "$out/results"
	else
		result fail "$tag-$name/reported" "no @@RK-BENCH line" >> "$out/results"
	fi
}
# Boot K of each program is tagged -bK (bench-report.py pools the boots
# and measures their spread).
for k in $(seq "$boots"); do
	for p in $progs $aaprogs; do run "$fcfg" bench-$ARCH-b$k "$p"; done
	if [ "$vanilla" = 1 ]; then
		for p in $vprogs; do run vanilla bench-$ARCH-vanilla-b$k "$p"; done
	fi
done

{
	echo "# Benchmarks, $ARCH, $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo
	echo "Command: \`make bench\` (BENCH_ROUNDS=$rounds BENCH_SMOKE=$smoke BENCH_VANILLA=$vanilla BENCH_CLOCK=$clock BENCH_BOOTS=$boots BENCH_AA=$aa${BENCH_PROGS:+ BENCH_PROGS=\"$BENCH_PROGS\"});"
	echo "kernel: $SRC_PKG $(src_version) + series; QEMU TCG, 2 vCPUs: compare ratios only."
	echo "Kernel arguments of every boot: ${kargs:-none}; of the boots on the icount clock, also: ${icount_kargs:-none} (see bench.sh)."
	echo "QEMU: $($QEMU --version | head -n 1), $QEMU_MACHINE."
	if [ "$clock" = icount ]; then
		echo "Clock: icount (guest time = instructions executed, 1 ns each:"
		echo "figures labelled µs are thousands of guest instructions, not cycles)."
		echo "The real tools (tools_ab) read the same clock: perf bench's usecs/op and the"
		echo "total_ms of perf messaging and hackbench are guest instructions too, of both"
		echo "vCPUs (one guest clock), the background reclaim loop's included."
		echo "Benches named *_wall (cyclictest) were booted on the wall clock: their µs are"
		echo "real microseconds of a shared TCG host, noisy (see their A/A spread)."
	else
		echo "Clock: wall time of a shared TCG host (moves 30-50 % between runs)."
	fi
	echo
} > "$out/header.md"
rc=0
if python3 "$TOP/scripts/bench-report.py" "$out" "${consoles[@]}" > /dev/null; then
	result pass "bench-$ARCH/report" >> "$out/results"
else
	result fail "bench-$ARCH/report" "no benchmark reported anything" >> "$out/results"
fi
# Each plot a result: plot KIND CSV NAME TITLE draws $out/NAME.svg.
plots=
plot() {
	if "$TOP/scripts/plot.sh" "$1" "$2" "$out/$3.svg" "$4" && [ -s "$out/$3.svg" ]; then
		result pass "bench-$ARCH/plot-$3" >> "$out/results"
		plots+=" $out/$3.svg"
	else
		result fail "bench-$ARCH/plot-$3" "gnuplot failed" >> "$out/results"
	fi
}
# A plot of each distribution the report collected (p4_wake's
# wake-to-run latencies per mode): $out/<bench>.svg.
unit=
[ "$clock" = icount ] && unit=": µs = thousands of guest instructions"
for h in "$out"/hist-*.csv; do
	[ -e "$h" ] || continue
	b=$(basename "$h" .csv)
	b=${b#hist-}
	plot hist "$h" "$b" "$b: each mode's samples, $ARCH, $clock clock$unit"
done
# The P2 age threshold trade-off, when p2_busy ran with min_age_ms=
# (the report's p2-tradeoff.csv): $out/p2-tradeoff.svg.
[ ! -e "$out/p2-tradeoff.csv" ] ||
	plot tradeoff "$out/p2-tradeoff.csv" p2-tradeoff \
		"P2: given back vs wake-to-run on/off per age threshold, $ARCH, $clock clock"
cat "$out/header.md" "$out/report.md" > "$out/table.md"
cat "$out/table.md"
ln -sfn "$(basename "$out")" "$BUILD/bench/latest"
echo
echo "report: $out/table.md, $out/summary.json, $out/samples.csv"
[ -z "$plots" ] || echo "plots:$plots"
grep '^FAIL' "$out/results" && rc=1
[ $rc -eq 0 ] && echo "bench finished" || echo "bench FAILED (see $out/results)"
exit $rc
