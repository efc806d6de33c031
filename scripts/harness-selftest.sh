#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# harness-selftest.sh: results.sh on the synthetic consoles in
# scripts/selftest/ (no kernel, no QEMU): each scenario below names a
# console, the CONFIG it is judged for, RK_KUNIT, RK_SKIP_OK and the exit
# status and result lines results.sh must give (the tag, which is the
# scenario's name, left out). Then the closing line summed over their
# results files, as check.sh sums. One result per check, in
# $RESULTS_D/harness-selftest; exit status non-zero on any failure.
# Needs the unpacked source for the KUnit parser ('make source').
. "$(dirname "$0")/lib.sh"

fixtures=$TOP/scripts/selftest
# A build directory of its own: the scenarios' results files, expected
# FAILs among them, must not reach the real $RESULTS_D.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results_open harness-selftest
fail=0
expected_all=()

# scenario NAME CONSOLE CONFIG RK_KUNIT RK_SKIP_OK EXIT [QEMU_EXIT] < EXPECTED_LINES
scenario() {
	local name=$1 con=$fixtures/$2.log config=$3 kunit=$4 skipok=${5#-} want_rc=$6
	local qemu_rc=${7:-0}
	local want got rc=0 why=
	want=$(sed "s|^\([A-Z]*\) |\1 $name/|")
	expected_all+=("$want")
	echo "--- $name: $2.log, CONFIG=$config RK_KUNIT=$kunit${skipok:+ RK_SKIP_OK=$skipok}"
	got=$(BUILD=$tmp KSRC=$SRC CONFIG=$config RK_KUNIT=$kunit RK_SKIP_OK=$skipok \
		"$TOP/scripts/results.sh" "$name" "$con" "$qemu_rc" 2>&1) || rc=$?
	grep -E '^(PASS|FAIL|SKIP) ' <<< "$got" | sed 's/^/    /' || true
	got=$(grep -E '^(PASS|FAIL|SKIP) ' <<< "$got" || true)
	[ "$got" = "$want" ] || why="result lines differ from the expected ones"
	[ "$rc" = "$want_rc" ] || why="${why:+$why; }exit status $rc, want $want_rc"
	# One results file per boot, holding exactly what it printed.
	[ "$(grep -E '^(PASS|FAIL|SKIP) ' "$tmp/logs/results.d/$name" 2>/dev/null)" = "$got" ] ||
		why="${why:+$why; }$tmp/logs/results.d/$name does not hold the printed results"
	if [ -z "$why" ]; then
		result pass "harness-selftest/$name"
	else
		result fail "harness-selftest/$name" "$why"
		diff <(echo "$want") <(echo "$got") | result_excerpt || true
		fail=1
	fi
}

# A normal rkdebug boot: KUnit and a test program all pass, a bench
# program without TAP passes by its exit status.
scenario normal normal rkdebug 1 - 0 <<'EOF'
PASS kunit/stack_reclaim_states/stack_test_legal_table
PASS kunit/stack_reclaim_states/stack_test_move
PASS kunit/stack_reclaim_pool/stack_test_pool_refill
PASS kunit/stack_reclaim_kthread/stack_test_kthread
PASS smoke_kstack/global.counters_agree
PASS smoke_kstack/global.futex_threads_account_their_stacks
PASS smoke_kstack/global.stack_free_flushes_lazily
PASS p1_idle
PASS kernel-splat
PASS guest-finished
EOF
# "ok 1 x # SKIP why": SKIP on the base kernel, FAIL on a feature kernel
# unless the matrix entry allows it (skip-ok=, RK_SKIP_OK).
scenario skip-base skip base 0 - 0 <<'EOF'
SKIP reclaim_stress/stress.all_sites: kernel without reclaimable stacks
PASS kernel-splat
PASS guest-finished
EOF
scenario skip-feature skip rkdebug 0 - 1 <<'EOF'
FAIL reclaim_stress/stress.all_sites: skipped on a feature kernel (SKIP: kernel without reclaimable stacks)
PASS kernel-splat
PASS guest-finished
EOF
scenario skip-allowed skip rkdebug 0 'reclaim_stress/stress.*' 0 <<'EOF'
SKIP reclaim_stress/stress.all_sites: kernel without reclaimable stacks
PASS kernel-splat
PASS guest-finished
EOF
# "1..0 # SKIP why", exit status 4: the whole program skipped.
scenario skip-program-base skip-program base 0 - 0 <<'EOF'
SKIP reclaim_inspect: no debugfs reclaimable_stacks/inspect
PASS kernel-splat
PASS guest-finished
EOF
scenario skip-program-feature skip-program rkstack 0 - 1 <<'EOF'
FAIL reclaim_inspect: skipped on a feature kernel (SKIP: no debugfs reclaimable_stacks/inspect)
PASS kernel-splat
PASS guest-finished
EOF
# Plan 1..3, two results, exit status 0.
scenario short-plan short-plan base 0 - 1 <<'EOF'
PASS smoke_kstack/global.counters_agree
PASS smoke_kstack/global.futex_threads_account_their_stacks
FAIL smoke_kstack: TAP plan 1..3 but 2 results
PASS kernel-splat
PASS guest-finished
EOF
scenario no-plan no-plan base 0 - 1 <<'EOF'
PASS smoke_kstack/global.counters_agree
PASS smoke_kstack/global.futex_threads_account_their_stacks
FAIL smoke_kstack: TAP plan missing (2 results)
PASS kernel-splat
PASS guest-finished
EOF
# A tests/ program must print TAP; a bench program counts by exit status.
scenario no-tap no-tap base 0 - 1 <<'EOF'
FAIL reclaim_oom: no TAP output
FAIL p1_idle: exit status 1
PASS kernel-splat
PASS guest-finished
EOF
# XFAIL and a failed TODO: SKIP (nothing shown to work, nothing
# regressed); a passed TODO and XPASS: PASS; another directive: FAIL.
scenario directives directives base 0 - 1 <<'EOF'
SKIP smoke_kstack/global.a: XFAIL: known to fail under TCG
SKIP smoke_kstack/global.b: TODO: not written yet
PASS smoke_kstack/global.c
PASS smoke_kstack/global.d
FAIL smoke_kstack/global.e: TIMEOUT after 30 s
PASS kernel-splat
PASS guest-finished
EOF
# The guest dies inside a program after one of its three results: the
# panic ends QEMU through pvpanic, with status 1.
scenario died died base 0 - 1 1 <<'EOF'
PASS reclaim_race/race.futex_pingpong
FAIL reclaim_race: TAP plan 1..3 but 1 result; no exit status: the guest died in it
FAIL kernel-splat: [   33.000000] Kernel panic - not syncing: hung_task: blocked tasks
FAIL guest-finished: guest died inside test reclaim_race; qemu exit status 1: a kernel panic (pvpanic)
EOF
# KUnit: the kernel oopses in case 2 of suite 1 of 3: that case FAILs as
# crashed, so do suites 2 and 3, which never started (their cases are
# unknown: the top-level plan only counts suites).
scenario kunit-crash kunit-crash rkdebug 1 - 1 <<'EOF'
PASS kunit/stack_reclaim_states/stack_test_legal_table
FAIL kunit/stack_reclaim_states/#2: crashed: no result line (the kernel died or hung in it)
FAIL kunit/#2: crashed: no result line (the kernel died or hung in it)
FAIL kunit/#3: crashed: no result line (the kernel died or hung in it)
FAIL kernel-splat: [    1.206500] BUG: unable to handle page fault for address: ffffc90000013ff8
FAIL guest-finished: guest never reached /init
EOF
# KUnit: a suite closes without its second case.
scenario kunit-missing kunit-missing rkdebug 1 - 1 <<'EOF'
PASS kunit/stack_reclaim_states/stack_test_legal_table
PASS kunit/stack_reclaim_states/stack_test_move
PASS kunit/stack_reclaim_pool/stack_test_pool_refill
FAIL kunit/stack_reclaim_pool/#2: crashed: no result line (the kernel died or hung in it)
PASS kernel-splat
PASS guest-finished
EOF
# A kernel with our KUnit suites that printed no KTAP.
scenario kunit-absent skip rkdebug 1 'reclaim_stress/*' 1 <<'EOF'
FAIL kunit: no KUnit case reported, but the kernel has our KUnit suites
SKIP reclaim_stress/stress.all_sites: kernel without reclaimable stacks
PASS kernel-splat
PASS guest-finished
EOF

# bench-report.py on synthetic consoles (selftest/bench/), three boots of
# most programs, since a spread between boots counts from three:
# p3_hotpath, whose futex medians move 10-11 % between boots in both
# modes (the on/off ratio, from one boot, moves only 0.8 %: too much for
# a figure of 1.004 against 1.01; off/unpatched, across boots, gets the
# 10 %); p5_threads on/off, with two A/A boots (threads off_b 4 % above
# off_a in one, alike in the other: the noise is the larger, 4 %, not
# the 2 % of the pooled medians); the unpatched kernel for both; tools_ab,
# whose on/off (no target of ours) is judged as a cost with its noise;
# p2_busy, whose p50 on/off is 0.7, 0.9 and 0.8 (noise 28.6 %, more than
# the 20 % between 1 and the limit 1.2 but less than the 50 % between
# the figure 0.8 and it: "yes") and p99 on/off 2.5, 1.8 and 2.2 (2.2
# against <= 2 with 38.9 % of noise: "inconclusive", and so the three P2
# targets together), plus an A/A boot of it (p99 off_b 25 % above
# off_a); p2_busy with min_age_ms=100 (bench.sh's console p2_busy_2,
# bench p2_age100: p50 1.5x, "NO"; p99 2.4-2.5x, 22.5 % above its limit,
# "inconclusive" only because the sweep shares p2_busy's A/A of 25 %; NO
# for all three) in three boots, and min_age_ms=10000 in one (p2_busy_3,
# p2_age10000): the trade-off table, a row a threshold in ms with p2_busy
# as the 1500 ms default, judges each like the P2 targets; two boots of
# p1_idle and one of p4_wake, too few for a noise: their figures (P1
# over 73 %, P4 fast 1.09x, deferred p50 6.1x, p99 11.5x) must give no
# verdict. A verdict is "inconclusive" when the noise reaches the
# figure's distance from its limit, or is not measured; a rate is a cost
# inverted (> 1 worse); the cost of the feature built in and off is
# "zero" only within 0.5 % and a noise below that.
output_is() { # NAME FILE < EXPECTED_LINES (each a whole line of FILE)
	local name=$1 file=$2 missing
	echo "--- $name"
	missing=$(grep -vxF -f "$file" 2>&1 || true)
	if [ -z "$missing" ]; then
		result pass "harness-selftest/$name"
	else
		result fail "harness-selftest/$name" "$(basename "$file") lacks expected lines"
		echo "$missing" | result_excerpt || true
		fail=1
	fi
}
echo "--- bench-report"
if python3 "$TOP/scripts/bench-report.py" "$tmp" "$fixtures"/bench/*.log \
		> "$tmp/report.out"; then
	result pass "harness-selftest/bench-report"
else
	result fail "harness-selftest/bench-report" "bench-report.py failed"
	fail=1
fi
output_is bench-noise "$tmp/report.md" <<'EOF'
Each cell: median (min-max) over rounds of 3 boots.
| spread | A/A (off_a/off_b, largest of one boot) | between boots (from 3), per mode |
| p2_busy p50_us | 5.00 % | on 29.86 %, off 1.00 % |
| p3_futex us_per_op | not measured | on 10.88 %, off 10.00 %, vanilla 0.00 % |
| p5_threads threads_per_s | 4.00 % | on 0.00 %, off 0.00 %, vanilla 0.00 % |
| p2_age10000 | given_back_pct | 40.0 | 0.5 | - | - | - | - | - | - | 1 |
| p3_pipe us_per_op | 1.0010 | 0.00 % | zero (within 0.5 %) |
| p3_futex us_per_op | 1.0000 | 10.00 % | inconclusive |
| p3_msg us_per_op | 1.1111 | 0.00 % | worse |
| p5_threads threads_per_s | 1.0050 | 4.00 % | inconclusive |
| feature on vs off | cost (> 1 worse) | noise | verdict |
| perf_msg total_ms | 1.0348 | 1.00 % | worse |
EOF
output_is bench-targets "$tmp/report.md" <<'EOF'
| target | figure (ratios > 1 worse; P5's rates inverted: >= 0.99 is <= 1/0.99) | goal | noise | met |
| P2 non-idle: steady-state given back (%) | 75.5 | >= 70 | 1.00 points | yes |
| P2 non-idle: wake-to-run p50 on/off | 0.8000 | <= 1.2 | 28.57 % | yes |
| P2 non-idle: wake-to-run p99 on/off | 2.2000 | <= 2 | 38.89 % | inconclusive |
| P2 non-idle: given back AND p50 AND p99 | - | all 3 met | - | inconclusive |
| P3 pipe ping-pong, time on/off | 1.0050 | <= 1.01 | 0.00 % | yes |
| P3 futex ping-pong, time on/off | 1.0040 | <= 1.01 | 0.80 % | inconclusive |
| P3 messaging (hackbench-style), time on/off | 1.2000 | <= 1.01 | 0.00 % | NO |
| P3 pipe ping-pong, time off/unpatched | 1.0010 | <= 1.005 | 0.00 % | yes |
| P3 futex ping-pong, time off/unpatched | 1.0000 | <= 1.005 | 10.00 % | inconclusive |
| P3 messaging (hackbench-style), time off/unpatched | 1.1111 | <= 1.005 | 0.00 % | NO |
| P5 thread create+join on/off (rate off/on) | 1.0050 | <= 1.0101 | 4.00 % | inconclusive |
| P5 fork+wait on/off (rate off/on) | 1.0060 | <= 1.0101 | 0.00 % | yes |
| P5 thread create+join off/unpatched (rate unpatched/off) | 1.0050 | <= 1.0101 | 4.00 % | inconclusive |
| P5 fork+wait off/unpatched (rate unpatched/off) | 1.0200 | <= 1.0101 | 0.00 % | NO |
EOF
output_is bench-no-noise "$tmp/report.md" <<'EOF'
| P1 idle: stack memory given back (%) | 80.0 | >= 73 | not measured | inconclusive |
| P4 wake, fast path p50 / unreclaimed p50 | 1.0909 | <= 1.15 | not measured | inconclusive |
| P4 wake, deferred p50 / unreclaimed p50 | 6.0606 | <= 5 | not measured | inconclusive |
| P4 wake, deferred p99 / unreclaimed p99 | 11.5385 | <= 10 | not measured | inconclusive |
EOF
# p4_wake's @@RK-HIST lines: each bucket's share of its mode; the plot.
output_is bench-hist "$tmp/hist-p4_wake.csv" <<'EOF'
mode,lo_us,hi_us,count,share_pct
unreclaimed,3.162,3.548,8,80.000
fast,44.67,50.12,1,10.000
deferred,19.95,22.39,9,90.000
EOF
output_is bench-p2-tradeoff "$tmp/report.md" <<'EOF'
| P2 age threshold trade-off (ms) | given back % on | given back % off | p50 on/off | p99 on/off | met: given back >= 70 | met: p50 <= 1.2 | met: p99 <= 2 | all 3 met |
| 100 | 85.0 | 1 | 1.5000 | 2.4500 | yes | NO | inconclusive | NO |
| 1500 (default) | 75.5 | 1.5 | 0.8000 | 2.2000 | yes | yes | inconclusive | inconclusive |
| 10000 | 40.0 | 0.5 | 1.0500 | 1.5000 | inconclusive | inconclusive | inconclusive | inconclusive |
EOF
# The same as CSV (the plot's input): these lines and no others.
output_is bench-p2-tradeoff-csv "$tmp/p2-tradeoff.csv" <<'EOF'
threshold_ms,bench,given_back_on_pct,given_back_off_pct,p50_on_off,p99_on_off,given_back_met,p50_met,p99_met,all_met,given_back_goal_pct,p50_goal,p99_goal
100,p2_age100,85.0000,1.0000,1.5000,2.4500,yes,NO,inconclusive,NO,70.0,1.2,2.0
1500,p2_busy,75.5000,1.5000,0.8000,2.2000,yes,yes,inconclusive,inconclusive,70.0,1.2,2.0
10000,p2_age10000,40.0000,0.5000,1.0500,1.5000,inconclusive,inconclusive,inconclusive,inconclusive,70.0,1.2,2.0
EOF
if [ "$(wc -l < "$tmp/p2-tradeoff.csv")" = 4 ]; then
	result pass "harness-selftest/bench-p2-tradeoff-rows"
else
	result fail "harness-selftest/bench-p2-tradeoff-rows" "p2-tradeoff.csv: not 3 rows"
	fail=1
fi
# plot_is NAME KIND CSV: plot.sh KIND draws an SVG of CSV.
plot_is() {
	echo "--- $1"
	if ! command -v gnuplot > /dev/null; then
		result skip "harness-selftest/$1" "no gnuplot (make deps)"
	elif "$TOP/scripts/plot.sh" "$2" "$3" "$tmp/$1.svg" "$1" &&
			grep -q '<svg' "$tmp/$1.svg"; then
		result pass "harness-selftest/$1"
	else
		result fail "harness-selftest/$1" "plot.sh $2 drew no SVG"
		fail=1
	fi
}
plot_is bench-plot hist "$tmp/hist-p4_wake.csv"
plot_is bench-plot-tradeoff tradeoff "$tmp/p2-tradeoff.csv"

# kselftests.sh report on synthetic consoles (scripts/selftest/ks/): a
# case that passes in the retry is PASS; one that fails in the retry and
# ends the same way in the control with the feature off is SKIP; a FAIL
# stays one when the case passes in the control (b/y/two), did not run
# there (c/z/two), ends differently there (d/w: a timeout with the
# feature on, a plain failure off), is the runner's own reclaim check,
# or when the control did not run with the feature off at all.
ks_report_is() { # NAME OFF_CONSOLE EXPECTED_LINES
	local name=$1 want=$3 got
	echo "--- $name"
	rm -rf "$tmp/ks"
	BUILD=$tmp/ks "$TOP/scripts/kselftests.sh" report \
		"$fixtures"/ks/{vanilla,patched,retry}.log "$fixtures/ks/$2.log" > /dev/null 2>&1 || true
	got=$(cat "$tmp/ks/logs/results.d/kselftests-$ARCH" 2>/dev/null || true)
	if [ "$got" = "$want" ]; then
		result pass "harness-selftest/$name"
	else
		result fail "harness-selftest/$name" "verdicts differ from the expected ones"
		diff <(echo "$want") <(echo "$got") | result_excerpt || true
		fail=1
	fi
}
excused="pass on vanilla; fail on the patched kernel with the feature on, in the retry too, and the same with it switched off: not the runtime feature (the debug options, the kernel build or the series' always-on code)"
ks_want="PASS kselftests-regress/a/x/one
PASS kselftests-regress/a/x/two
PASS kselftests-regress/a/x
SKIP kselftests-regress/b/y/one: $excused
FAIL kselftests-regress/b/y/two: passes on vanilla, fails patched
SKIP kselftests-regress/b/y: $excused
SKIP kselftests-regress/c/z/one: $excused
FAIL kselftests-regress/c/z/two: passes on vanilla, fails patched
FAIL kselftests-regress/c/z: passes on vanilla, fails patched
SKIP kselftests-regress/d/w/one: fail on both kernels
FAIL kselftests-regress/d/w: vanilla: fail, patched: timeout
FAIL kselftests-regress/kselftests/reclaim-exercised: vanilla: skip, patched: fail"
ks_report_is kselftests-report off "$ks_want"
# The same consoles with a control that says the switch was 1: nothing
# excused, every such SKIP the plain FAIL it was before the control.
ks_report_is kselftests-report-control-not-off off-not-off \
	"$(sed "s|^SKIP \(.*\): $excused\$|FAIL \1: passes on vanilla, fails patched|" <<< "$ks_want")"

# check.sh's closing line over every scenario's results file: the
# expected lines counted by state, and no ", 0 skipped" when none skipped.
total_is() { # NAME WANT FILE...
	local name=$1 want=$2 got
	shift 2
	got=$(results_total "$@")
	echo "--- $name: $got"
	if [ "$got" = "$want" ]; then
		result pass "harness-selftest/$name"
	else
		result fail "harness-selftest/$name" "got '$got', want '$want'"
		fail=1
	fi
}
all=$(printf '%s\n' "${expected_all[@]}")
want="$(grep -c '^PASS ' <<< "$all") passed, $(grep -c '^FAIL ' <<< "$all") failed"
want+=", $(grep -c '^SKIP ' <<< "$all") skipped"
total_is sum-all "$want" "$tmp/logs/results.d"/*
total_is sum-no-skips "10 passed, 0 failed" "$tmp/logs/results.d/normal"
exit $fail
