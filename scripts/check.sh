#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The whole test pyramid: for each (arch, config) in CHECK_MATRIX build what
# is stale, boot it with its tests, then print every failure and the
# closing "N passed, N failed" line. Exit status is non-zero on any failure.
. "$(dirname "$0")/lib.sh"

# arch:config:tests[:extra,kernel,args], space separated.
# base: the series applied, feature built out (the "off" build);
# rkdebug: the debug kernel (lockdep, KFENCE, DEBUG_VM, page poisoning,
# fault injection) with the feature on at boot and its KUnit suites, which
# run before /init; booted again with a bad reclaimable_stacks= after the
# good one, which must be refused; arm64: the feature build.
matrix=${CHECK_MATRIX:-"x86_64:base:smoke_kstack
	x86_64:rkdebug:all
	x86_64:rkdebug:bootparam:reclaimable_stacks=foo,rk.expect_enabled=1
	arm64:rkstack:all"}
t0=$(date +%s)
mkdir -p "$LOGS"
: > "$LOGS/results"

for a in $(for e in $matrix; do echo "${e%%:*}"; done | sort -u); do
	ARCH=$a "$TOP/scripts/deps.sh"
done
"$TOP/scripts/source.sh"
"$TOP/scripts/checkpatch.sh" || true
[ "${CHECK_MODEL:-1}" = 1 ] && { "$TOP/scripts/model.sh" || true; }
n=0
for entry in $matrix; do
	IFS=: read -r a c tests kargs <<< "$entry"
	n=$((n + 1))
	tag="check-$n-$a-$c"
	if ! ARCH=$a CONFIG=$c "$TOP/scripts/kernel.sh" ||
	   ! ARCH=$a CONFIG=$c "$TOP/scripts/initramfs.sh" >/dev/null; then
		echo "FAIL $tag/build: see messages above" | tee -a "$LOGS/results"
		continue
	fi
	ARCH=$a CONFIG=$c KERNEL_ARGS="${kargs//,/ }" "$TOP/scripts/boot.sh" "$tag" "$tests"
done

# Short forms of make demo and make bench on each arch, so that neither
# can rot: tiny populations and two rounds; their results land in the
# same results file (CHECK_SMOKE=0 skips them). They use the first
# feature config the matrix has for the arch, so nothing extra is built.
if [ "${CHECK_SMOKE:-1}" = 1 ]; then
	for a in $(for e in $matrix; do echo "${e%%:*}"; done | sort -u); do
		c=$(for e in $matrix; do echo "$e"; done | awk -F: -v a="$a" \
			'$1 == a && $2 ~ /^rk/ { print $2; exit }')
		[ -n "$c" ] || continue
		log "demo and bench smoke runs on $a-$c"
		ARCH=$a DEMO_CONFIG=$c DEMO_PROCS=2 DEMO_THREADS=100 DEMO_HOG_MB=16 \
			"$TOP/scripts/demo.sh" > "$LOGS/demo-smoke-$a.out" 2>&1 || true
		ARCH=$a BENCH_CONFIG=$c BENCH_SMOKE=1 "$TOP/scripts/bench.sh" \
			> "$LOGS/bench-smoke-$a.out" 2>&1 || true
	done
fi

# The kernel tree's futex, epoll, timers and sigaltstack selftests on the
# unpatched kernel and on the matrix's x86_64 feature config, compared test
# by test (scripts/kselftests.sh; CHECK_KSELFTESTS=0 skips them).
if [ "${CHECK_KSELFTESTS:-1}" = 1 ]; then
	c=$(for e in $matrix; do echo "$e"; done | awk -F: '$1 == "x86_64" && $2 ~ /^rk/ { print $2; exit }')
	[ -z "$c" ] || ARCH=x86_64 KS_CONFIG=$c KS_BASE=${CHECK_KS_BASE:-base} \
		"$TOP/scripts/kselftests.sh" check || true
fi

pass=$(grep -c '^PASS ' "$LOGS/results" || true)
fail=$(grep -c '^FAIL ' "$LOGS/results" || true)
echo
echo "kernel source: $SRC_PKG $(src_version); series: $(grep -vc '^#' "$TOP/patches/series" || true) patch(es)"
echo "console logs: $LOGS/; took $(( $(date +%s) - t0 )) s"
if [ "$fail" -gt 0 ]; then
	echo "failures (details and console excerpts above and in $LOGS/results):"
	grep '^FAIL ' "$LOGS/results"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
