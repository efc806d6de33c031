#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# realworld-report.sh CONSOLE: the census tables (census-report.sh), the
# blocked-time table (@@RK-BLOCKTIMES lines, blocktimes.py), the
# per-server table (@@RK-SERVER fields, servers.py) and the drgn and crash
# steps' stack traces (kstack_readers.py) of a make realworld console, as
# markdown.
. "$(dirname "$0")/lib.sh"

con=$1
[ -f "$con" ] || die "realworld-report.sh: no console log '$con'"
lines=$(sed 's/\r$//' "$con")

# table TAG HEADER...: a markdown table of the console's "@@RK-TAG a|b|..."
# lines, one column per HEADER.
table() {
	local tag=$1 h
	shift
	printf '|'; for h in "$@"; do printf ' %s |' "$h"; done; echo
	printf '|'; for h in "$@"; do printf -- '---|'; done; echo
	sed -n "s/^@@RK-$tag //p" <<< "$lines" | awk -F'|' '{
		printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }'
}

"$TOP/scripts/census-report.sh" "$con"
echo "### How long the idle system's user threads stay blocked"
echo
echo "What a stack shrinker taking every stack blocked longer than the bar, all the time, would trade (guest/realworld/blocktimes.py): the share of blocked thread-time beyond the bar (memory it could hold back), and the sleeps per second that outlast the bar (each a stack mapped again at its wakeup)."
echo
table BLOCKTIMES "bar (ms)" "blocked time beyond the bar %" \
	"wakeups/s of stacks past the bar" "user threads" "window (s)"
echo
echo "### Servers"
echo
table SERVER server threads "idle conns" "KernelStack kB before" \
	"after reclaim" "memcg kernel_stack KiB before" "after reclaim" \
	"first request ms, unreclaimed (median of 5)" \
	"after reclaim (median of 5)" "keys read back right"
for reader in drgn crash; do
	echo
	echo "### $reader: stack traces of resident and reclaimed stacks"
	echo
	echo '```'
	sed -n "/^@@RK-BEGIN $reader\$/,/^@@RK-END $reader /{/^@@RK-/d;p}" <<< "$lines"
	echo '```'
done
