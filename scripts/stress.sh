#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make stress: build (what is stale) and boot the debug kernel with the
# feature, run the full form of tests/reclaim_stress.c (every wait site,
# continuous reclaim, memcg pressure, thread churn, CPU hotplug, fault
# injection) and print its totals. Exit status non-zero on any failure.
#   STRESS_THREADS (4000), STRESS_CYCLES (1000000), STRESS_ARGS (more
#   rk.stress_*=N kernel arguments), STRESS_CONFIG (rkdebug),
#   BOOT_TIMEOUT (14400 s).
export CONFIG=${STRESS_CONFIG:-rkdebug}
. "$(dirname "$0")/lib.sh"

threads=${STRESS_THREADS:-4000}
cycles=${STRESS_CYCLES:-1000000}
extra=${STRESS_ARGS:-}

int_in STRESS_THREADS "$threads" 10 9000
int_in STRESS_CYCLES "$cycles" 1 100000000
for a in $extra; do
	[[ "$a" =~ ^rk\.stress_[a-z_]+=[0-9]+$ ]] ||
		die "STRESS_ARGS: '$a' is not rk.stress_<name>=N"
done
case "$CONFIG" in rk*) ;; *) die "the stress test needs a feature build (STRESS_CONFIG=rkdebug or rkstack)" ;; esac

prepare_guest

tag=stress-$ARCH-$CONFIG
t0=$(date +%s)
rc=0
out=$(BOOT_TIMEOUT=${BOOT_TIMEOUT:-$((14400 * TIME_SCALE))} \
	KERNEL_ARGS="rk.stress_threads=$threads rk.stress_cycles=$cycles $extra ${KERNEL_ARGS:-}" \
	"$TOP/scripts/boot.sh" "$tag" reclaim_stress) || rc=$?
echo "$out"
# The test's own totals, from the console.
sed -n 's/\r$//; s/^# [^ ]*reclaim_stress\.c:[0-9]*:all_sites://p' "$LOGS/$tag.log"
echo "console: $LOGS/$tag.log; took $(( $(date +%s) - t0 )) s"
# boot.sh already failed on any FAIL (a SKIP of ours is one on a feature
# kernel, a short plan too); still, the stress test must have run and
# passed, every subtest: at least one PASS, not one SKIP.
grep -q '^FAIL' <<< "$out" && rc=1
grep -q "^SKIP $tag/reclaim_stress" <<< "$out" && rc=1
grep -q "^PASS $tag/reclaim_stress/" <<< "$out" || rc=1
[ $rc -eq 0 ] && echo "stress passed" || echo "stress FAILED"
exit $rc
