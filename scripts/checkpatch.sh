#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.sh [PATCH...]: run the unpacked tree's checkpatch.pl --strict
# on each patch (default: the whole series); one PASS/FAIL line per patch,
# in $RESULTS_D/checkpatch. Debian's python3 runs spdxcheck (python3-ply).
. "$(dirname "$0")/lib.sh"

pristine=$BUILD/src/pristine
[ -x "$pristine/scripts/checkpatch.pl" ] || die "no $pristine: run 'make source'"
results_open checkpatch
[ $# -gt 0 ] || set -- $(series_patches)
rc=0
for p in "$@"; do
	p=$(realpath "$p")
	if out=$(cd "$pristine" && PATH=/usr/bin:$PATH \
		 scripts/checkpatch.pl --strict --quiet "$p" 2>&1) && [ -z "$out" ]; then
		result pass "checkpatch/${p##*/}"
	else
		result fail "checkpatch/${p##*/}"
		echo "$out" | result_excerpt
		rc=1
	fi
done
exit $rc
