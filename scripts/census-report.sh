#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# census-report.sh CONSOLE: every census of a console log as markdown, one
# section per "@@RK-CENSUS WHERE line" group (bench/census, printed by
# make realworld's servers.py and guest driver, and by make demo's
# bench/demo.c), in the order they came.
. "$(dirname "$0")/lib.sh"

con=$1
[ -f "$con" ] || die "census-report.sh: no console log '$con'"
lines=$(sed 's/\r$//' "$con")

for where in $(sed -n 's/^@@RK-CENSUS \([^ ]*\) .*/\1/p' <<< "$lines" | uniq); do
	echo "### Census: $where"
	echo
	echo '```'
	sed -n "s/^@@RK-CENSUS $where //p" <<< "$lines"
	echo '```'
	echo
done
