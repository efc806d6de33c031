#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# realworld-report.sh CONSOLE: the census tables (census-report.sh), the
# per-server table (@@RK-SERVER fields, servers.py) and the drgn and crash
# steps' stack traces (kstack_readers.py) of a make realworld console, as
# markdown.
. "$(dirname "$0")/lib.sh"

con=$1
[ -f "$con" ] || die "realworld-report.sh: no console log '$con'"
lines=$(sed 's/\r$//' "$con")

"$TOP/scripts/census-report.sh" "$con"
echo "### Servers"
echo
echo "| server | threads | idle conns | KernelStack kB before | after reclaim | memcg kernel_stack KiB before | after reclaim | first request ms, unreclaimed (median of 5) | after reclaim (median of 5) | keys read back right |"
echo "|---|---|---|---|---|---|---|---|---|---|"
sed -n 's/^@@RK-SERVER //p' <<< "$lines" | awk -F'|' '{
	printf "|"; for (i = 1; i <= NF; i++) printf " %s |", $i; printf "\n" }'
for reader in drgn crash; do
	echo
	echo "### $reader: stack traces of resident and reclaimed stacks"
	echo
	echo '```'
	sed -n "/^@@RK-BEGIN $reader\$/,/^@@RK-END $reader /{/^@@RK-/d;p}" <<< "$lines"
	echo '```'
done
