#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# checkpatch.sh [PATCH...]: run the unpacked tree's checkpatch.pl --strict
# on each patch (default: the whole series); one PASS/FAIL line per patch,
# appended to $LOGS/results. Debian's python3 runs spdxcheck (python3-ply).
. "$(dirname "$0")/lib.sh"

pristine=$BUILD/src/pristine
[ -x "$pristine/scripts/checkpatch.pl" ] || die "no $pristine: run 'make source'"
mkdir -p "$LOGS"
[ $# -gt 0 ] || set -- $(sed '/^#/d;/^$/d;s|^|'"$TOP"'/patches/|' "$TOP/patches/series")
rc=0
for p in "$@"; do
	p=$(realpath "$p")
	if out=$(cd "$pristine" && PATH=/usr/bin:$PATH \
		 scripts/checkpatch.pl --strict --quiet "$p" 2>&1) && [ -z "$out" ]; then
		echo "PASS checkpatch/${p##*/}"
	else
		echo "FAIL checkpatch/${p##*/}"
		echo "$out" | sed 's/^/    | /'
		rc=1
	fi
done | tee -a "$LOGS/results"
exit $rc
