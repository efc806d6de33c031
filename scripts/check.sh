#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The whole test pyramid: for each (arch, config) in CHECK_MATRIX build what
# is stale, boot it with its tests, then print every failure and the
# closing "N passed, N failed" line. Exit status is non-zero on any failure.
. "$(dirname "$0")/lib.sh"

# arch:config:tests, space separated.
# base: the series applied, feature built out (the "off" build);
# rkstack: feature built in and switched on at boot.
matrix=${CHECK_MATRIX:-"x86_64:base:smoke_kstack x86_64:rkstack:all"}
t0=$(date +%s)
mkdir -p "$LOGS"
: > "$LOGS/results"

"$TOP/scripts/deps.sh"
"$TOP/scripts/source.sh"
"$TOP/scripts/checkpatch.sh" || true
for entry in $matrix; do
	IFS=: read -r a c tests <<< "$entry"
	tag="check-$a-$c"
	if ! ARCH=$a CONFIG=$c "$TOP/scripts/kernel.sh" ||
	   ! ARCH=$a CONFIG=$c "$TOP/scripts/initramfs.sh" >/dev/null; then
		echo "FAIL $tag/build: see messages above" | tee -a "$LOGS/results"
		continue
	fi
	ARCH=$a CONFIG=$c "$TOP/scripts/boot.sh" "$tag" "$tests"
done

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
