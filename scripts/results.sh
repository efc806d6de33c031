#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.sh TAG CONSOLE_LOG QEMU_RC: turn one guest console into results.
# Prints "PASS tag/test" / "FAIL tag/test: reason" lines (with an excerpt of
# the console for failures) and appends them to $LOGS/results.
#   - each TAP "ok"/"not ok" line inside a test's frame is one result;
#     KTAP from KUnit at boot ("ok N name" at any indent, printk time
#     stamps stripped) counts the same way, as the frame "kunit";
#   - a test program that printed no TAP counts once, by its exit code;
#   - a kernel splat, a panic, a missing frame end, a hang (timeout) or a
#     failing QEMU exit is a failed result of its own.
. "$(dirname "$0")/lib.sh"

tag=$1 con=$2 qrc=$3
# WARNING: covers WARN() and every lockdep report; BUG: covers KFENCE,
# KASAN, soft lockups, sleeping-in-atomic and bad page state.
splat='WARNING:|-----------\[ cut here \]|BUG:|kernel BUG at|Oops|Kernel panic|'
splat+='INFO: task .* blocked for more than|hard LOCKUP|UBSAN:|'
splat+='pagealloc: memory corruption|general protection fault|list_add corruption|'
splat+='list_del corruption'

SPLAT=$splat awk -v tag="$tag" -v qrc="$qrc" '
BEGIN { splat = ENVIRON["SPLAT"] }
function res(ok, name, why) {
	if (ok) { print "PASS " tag "/" name; return }
	print "FAIL " tag "/" name (why != "" ? ": " why : "")
}
function excerpt(from,   i) {
	for (i = from; i <= NR && i < from + 40; i++) print "    | " lines[i]
}
{ sub(/\r$/, ""); lines[NR] = $0; plain = $0; sub(/^\[ *[0-9]+\.[0-9]+\] /, "", plain) }
# KUnit runs before /init: its KTAP (printk timestamps stripped) is the
# frame "kunit" until the guest starts the tests.
!started && cur == "" && plain ~ /^KTAP version/ { cur = "kunit"; ntap = 0; begin = NR }
/@@RK-START/ { started = 1; if (cur == "kunit") cur = "" }
/@@RK-BEGIN / { cur = $2; ntap = 0; begin = NR; next }
/@@RK-END / {
	if (ntap == 0) {
		res($3 == 0, $2, "exit status " $3)
		if ($3 != 0) excerpt(begin)
	} else if ($3 != 0 && nfail_in == 0) {
		res(0, $2, "exit status " $3 " after passing TAP results")
		excerpt(begin)
	}
	cur = ""; nfail_in = 0; next
}
/@@RK-DONE/ { done = 1 }
/@@RK-TIMEOUT/ { timedout = 1 }
cur != "" && plain ~ /^[ \t]*(not )?ok [0-9]+ / {
	line = plain; sub(/^[ \t]*/, "", line)
	ok = (line !~ /^not ok/)
	name = line; sub(/^(not )?ok [0-9]+ /, "", name); sub(/ # .*$/, "", name)
	ntap++
	if (!ok) { nfail_in++; res(0, cur "/" name, ""); excerpt(begin) }
	else res(1, cur "/" name)
}
$0 ~ splat && !(NR in seen) {
	nsplat++; seen[NR] = 1
	if (nsplat == 1) { res(0, "kernel-splat", $0); excerpt(NR > 5 ? NR - 5 : 1) }
}
END {
	if (nsplat == 0) res(1, "kernel-splat")
	if (timedout) { res(0, "guest-finished", "guest hung: killed after timeout"); excerpt(NR > 30 ? NR - 30 : 1) }
	else if (!started) { res(0, "guest-finished", "guest never reached /init"); excerpt(NR > 30 ? NR - 30 : 1) }
	else if (cur != "") { res(0, "guest-finished", "guest died inside test " cur); excerpt(NR > 30 ? NR - 30 : 1) }
	else if (!done || qrc != 0) { res(0, "guest-finished", "qemu exit status " qrc); excerpt(NR > 30 ? NR - 30 : 1) }
	else res(1, "guest-finished")
}' "$con" | tee -a "$LOGS/results"
