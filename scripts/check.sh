#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The whole test pyramid: for each (arch, config) in CHECK_MATRIX build what
# is stale, boot it with its tests, then print every failure and skip and
# the closing "N passed, N failed" line (", N skipped" appended when some
# were): the sum of every results file in $RESULTS_D (one per boot and per
# other producer, see lib.sh), which is emptied first. Exit status is
# non-zero on any failure, or if nothing passed.
. "$(dirname "$0")/lib.sh"

# arch:config:tests[:extra,kernel,args], space separated. Among the extras,
# skip-ok=GLOB (never passed to the kernel) lets the tests GLOB matches, as
# "program/case" ("program" if it skipped whole), SKIP on a feature kernel,
# where a SKIP of our tests/ is otherwise a FAIL (results.sh, RK_SKIP_OK),
# e.g. skip-ok=reclaim_sites/*binder*. arm64 has two: its
# flush_tlb_kernel_range() is inline, so the flush test cannot probe it;
# and its feature config has no lockdep, whose checks reclaim_lockdep
# provokes (x86_64's rkdebug runs it).
# base: the series applied, feature built out (the "off" build);
# rkdebug: the debug kernel (lockdep, KFENCE, DEBUG_VM, page poisoning,
# fault injection) with the feature on at boot and its KUnit suites, which
# run before /init; booted again with a bad reclaimable_stacks= after the
# good one, which must be refused; arm64: the feature build.
matrix=${CHECK_MATRIX:-"x86_64:base:smoke_kstack
	x86_64:rkdebug:all
	x86_64:rkdebug:bootparam:reclaimable_stacks=maybe,rk.expect_enabled=1
	arm64:rkstack:all:skip-ok=reclaim_pressure/*flush*,skip-ok=reclaim_lockdep/*"}
# feature_cfg ARCH: the first feature config (rk*) the matrix has for ARCH.
feature_cfg() {
	for e in $matrix; do echo "$e"; done |
		awk -F: -v a="$1" '!c && $1 == a && $2 ~ /^rk/ { c = $2 } END { if (c) print c }'
}
# in_matrix ARCH CONFIG: does the matrix build that kernel?
in_matrix() {
	local e
	for e in $matrix; do
		[[ "$e" == "$1:$2:"* ]] && return 0
	done
	return 1
}
t0=$(date +%s)
# $LOGS/results: the one file every script shared before results.d.
rm -rf "$RESULTS_D" "$LOGS/results"
mkdir -p "$RESULTS_D"

for a in $(for e in $matrix; do echo "${e%%:*}"; done | sort -u); do
	ARCH=$a "$TOP/scripts/deps.sh"
done
"$TOP/scripts/source.sh"
# The parser of results itself first, on synthetic consoles (a second):
# every result below depends on it. Its details go to a log.
"$TOP/scripts/harness-selftest.sh" > "$LOGS/harness-selftest.out" 2>&1 || true
grep -E '^(PASS|FAIL) ' "$LOGS/harness-selftest.out" || true
"$TOP/scripts/checkpatch.sh" || true
# The series through git am onto the pristine tree, as a maintainer takes it.
"$TOP/scripts/am-test.sh" || true
[ "${CHECK_MODEL:-1}" = 1 ] && { "$TOP/scripts/model.sh" || true; }
# The configurations the test kernels are not (UP and PREEMPT_RT refused
# by Kconfig; MEMCG=n, NUMA=n and the preemption models compile): the
# quick form, x86_64 (CHECK_CONFIGS=0 skips it; `make matrix`: the full).
[ "${CHECK_CONFIGS:-1}" = 1 ] && { "$TOP/scripts/config-matrix.sh" quick || true; }
n=0
for entry in $matrix; do
	IFS=: read -r a c tests kargs <<< "$entry"
	n=$((n + 1))
	tag="check-$n-$a-$c"
	kernel_args='' skip_ok=''
	IFS=, read -ra extras <<< "$kargs"	# read: no glob expansion
	for k in "${extras[@]}"; do
		case "$k" in
		skip-ok=*) skip_ok+=" ${k#skip-ok=}" ;;
		*) kernel_args+=" $k" ;;
		esac
	done
	if ! ARCH=$a CONFIG=$c "$TOP/scripts/kernel.sh" ||
	   ! ARCH=$a CONFIG=$c "$TOP/scripts/initramfs.sh" >/dev/null; then
		results_open "$tag"
		result fail "$tag/build" "see messages above"
		continue
	fi
	# A failed boot is in its results file; the matrix goes on.
	ARCH=$a CONFIG=$c KERNEL_ARGS="$kernel_args" RK_SKIP_OK="$skip_ok" \
		"$TOP/scripts/boot.sh" "$tag" "$tests" || true
done

# sparse and W=1 on every file the series touches (x86_64, the debug
# config just built): nothing beyond what the unpatched 6.12 reports
# (scripts/lint.sh; CHECK_LINT=0 skips it). About a minute warm.
[ "${CHECK_LINT:-1}" = 1 ] && { ARCH=x86_64 CONFIG=rkdebug "$TOP/scripts/lint.sh" || true; }

# Short forms of make demo and make bench on each arch, so that neither
# can rot: tiny populations and two rounds; their results are summed
# with the others (CHECK_SMOKE=0 skips them). The bench smoke runs on the
# wall clock: it checks that every program runs and reports, not figures
# (icount, make bench's default, is single-threaded and slower). They use
# the first feature config the matrix has for the arch, so nothing extra is built.
if [ "${CHECK_SMOKE:-1}" = 1 ]; then
	for a in $(for e in $matrix; do echo "${e%%:*}"; done | sort -u); do
		c=$(feature_cfg "$a")
		[ -n "$c" ] || continue
		log "demo and bench smoke runs on $a-$c"
		ARCH=$a DEMO_CONFIG=$c DEMO_PROCS=2 DEMO_THREADS=100 DEMO_HOG_MB=16 \
			"$TOP/scripts/demo.sh" > "$LOGS/demo-smoke-$a.out" 2>&1 || true
		ARCH=$a BENCH_CONFIG=$c BENCH_SMOKE=1 BENCH_CLOCK=wall "$TOP/scripts/bench.sh" \
			> "$LOGS/bench-smoke-$a.out" 2>&1 || true
	done
fi

# The instrument of make bench's verdicts: two short boots of the x86_64
# base kernel on the icount clock, whose instruction counts must agree
# within 0.3 % (scripts/bench-instrument.sh; CHECK_INSTRUMENT=0 skips it;
# about 30 s).
if [ "${CHECK_INSTRUMENT:-1}" = 1 ] && in_matrix x86_64 base; then
	ARCH=x86_64 "$TOP/scripts/bench-instrument.sh" > "$LOGS/bench-instrument.out" 2>&1 || true
fi

# The kernel tree's futex, epoll, timers and sigaltstack selftests on the
# unpatched kernel and on the matrix's x86_64 feature config, compared test
# by test (scripts/kselftests.sh; CHECK_KSELFTESTS=0 skips them).
if [ "${CHECK_KSELFTESTS:-1}" = 1 ]; then
	c=$(feature_cfg x86_64)
	[ -z "$c" ] || ARCH=x86_64 KS_CONFIG=$c KS_BASE=${CHECK_KS_BASE:-base} \
		"$TOP/scripts/kselftests.sh" check || true
fi

files=("$RESULTS_D"/*)
echo
echo "kernel source: $SRC_PKG $(src_version); series: $(grep -vc '^#' "$TOP/patches/series" || true) patch(es)"
echo "console logs: $LOGS/; took $(( $(date +%s) - t0 )) s"
if [ "$(results_count SKIP "${files[@]}")" -gt 0 ]; then
	echo "skipped:"
	grep -h '^SKIP ' "${files[@]}"
fi
if [ "$(results_count FAIL "${files[@]}")" -gt 0 ]; then
	echo "failures (details and console excerpts above and in $RESULTS_D/):"
	grep -h '^FAIL ' "${files[@]}"
fi
results_total "${files[@]}"
[ "$(results_count FAIL "${files[@]}")" -eq 0 ] && [ "$(results_count PASS "${files[@]}")" -gt 0 ]
