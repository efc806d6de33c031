#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# results.sh TAG CONSOLE_LOG QEMU_RC: turn one guest console into results.
# Writes them, one line each (see lib.sh), to $RESULTS_D/TAG (this boot's
# own file, replaced) and prints them; exits non-zero if any is a FAIL.
#   - KUnit at boot: the KTAP before /init, printk time stamps stripped,
#     parsed by the kernel tree's own KUnit parser (ktap-results.py): one
#     result per test case, never per suite; a case without a result line
#     (the kernel died or hung in it) is a FAIL. A kernel built with our
#     KUnit suites (CONFIG_RECLAIMABLE_STACK_KUNIT_TEST=y, or RK_KUNIT=1)
#     must report at least one case.
#   - each program's frame (@@RK-BEGIN/@@RK-END from guest/init): every
#     top-level TAP "ok"/"not ok" line is one result. Directives: "# SKIP"
#     is SKIP with its reason; "not ok # TODO" and "# XFAIL" (an expected
#     failure: nothing was shown to work, nothing regressed) are SKIP with
#     "TODO: ..."/"XFAIL: ..."; "ok # TODO" and "# XPASS" passed and are
#     PASS; any other "not ok" is a FAIL. The plan "1..N" must appear once
#     and N must equal the number of results ("1..0 # SKIP why": the whole
#     program skipped), else the program itself FAILs. A program that
#     printed no TAP counts once, by its exit code, except our tests/
#     programs, which must print TAP; a non-zero exit status after TAP
#     without a failed case (4, KSFT_SKIP, allowed after a skip) is a FAIL.
#   - on a feature kernel (CONFIG=rk*) a SKIP from one of our tests/
#     programs is a FAIL: there every test must run. RK_SKIP_OK (globs on
#     "program/case", set per matrix entry by check.sh's skip-ok=) lists
#     the skips allowed anyway. KUnit and bench/ SKIPs stay SKIP.
#   - a kernel splat, a panic, a frame without its end, a hang (timeout)
#     or a failing QEMU exit is a failed result of its own.
. "$(dirname "$0")/lib.sh"

tag=$1 con=$2 qrc=$3
mkdir -p "$RESULTS_D" "$LOGS"
# Our own test programs, by frame name: the ones the feature kernel must run.
ours=" $(cd "$TOP/tests" && ls -- *.c 2>/dev/null | sed 's/\.c$//' | tr '\n' ' ')"
feature=0
case "$CONFIG" in rk*) feature=1 ;; esac

# WARNING: covers WARN() and every lockdep report; BUG: covers KFENCE,
# KASAN, soft lockups, sleeping-in-atomic and bad page state.
splat='WARNING:|-----------\[ cut here \]|BUG:|kernel BUG at|Oops|Kernel panic|'
splat+='INFO: task .* blocked for more than|hard LOCKUP|UBSAN:|'
splat+='pagealloc: memory corruption|general protection fault|list_add corruption|'
splat+='list_del corruption'

# Does this kernel carry our KUnit suites (so KUnit must have run)?
kunit_expected() {
	case "${RK_KUNIT:-}" in
	1) return 0 ;;
	0) return 1 ;;
	esac
	grep -qs '^CONFIG_RECLAIMABLE_STACK_KUNIT_TEST=y' "$KOUT/.config"
}

# kunit_ktap: the console from KUnit's first "KTAP version" line up to
# /init's start, without printk time stamps (kunit.py would strip only the
# first line's prefix width, which grows with the seconds).
kunit_ktap() {
	awk '{ sub(/\r$/, ""); sub(/^\[ *[0-9]+\.[0-9]+\] ?/, "") }
	     /@@RK-START/ { exit }
	     /^KTAP version / { on = 1 }
	     on' "$con"
}

# kunit_results: one line per KUnit case, by the tree's own parser; its
# report goes to $LOGS/TAG.kunit.txt, the KTAP it read to $LOGS/TAG.ktap.
kunit_results() {
	local ktap=$LOGS/$tag.ktap kdir=$SRC/tools/testing/kunit found=
	kunit_ktap > "$ktap"
	if [ ! -s "$ktap" ]; then
		rm -f "$ktap"
	elif [ ! -f "$kdir/kunit_parser.py" ]; then
		echo "FAIL $tag/kunit: no KUnit parser at $kdir (run 'make source')"
		return 0
	elif ! found=$(python3 "$TOP/scripts/ktap-results.py" "$kdir" "$tag/kunit" "$ktap" \
			2> "$LOGS/$tag.kunit.txt"); then
		echo "FAIL $tag/kunit: the KUnit parser failed (see $LOGS/$tag.kunit.txt)"
		return 0
	fi
	[ -z "$found" ] || printf '%s\n' "$found"
	[ -n "$found" ] || ! kunit_expected ||
		echo "FAIL $tag/kunit: no KUnit case reported, but the kernel has our KUnit suites"
}

# frame_results: the programs' TAP, kernel splats and how the guest ended.
frame_results() {
	SPLAT=$splat OURS=$ours awk -v tag="$tag" -v qrc="$qrc" '
	BEGIN { splat = ENVIRON["SPLAT"]; ours = ENVIRON["OURS"] " " }
	function res(state, name, why) {
		print state " " tag "/" name (why != "" ? ": " why : "")
	}
	# The 40 console lines up to line "to", from the frame start at most.
	function excerpt(to, from,   i) {
		if (from < to - 39) from = to - 39
		if (from < 1) from = 1
		for (i = from; i <= to; i++) print "    | " lines[i]
	}
	function also(why, more) { return why == "" ? more : why "; " more }
	# How QEMU ended (boot.sh: -no-reboot; pvpanic with panic=none, so a
	# panic ends as a reboot, status 0; status 1 came from panic=exit-failure).
	function how(rc) {
		if (rc == 1) return "qemu exit status 1: a kernel panic (pvpanic)"
		if (rc == 0) return "qemu exit status 0: the guest reset (a panic, a triple fault or a reboot)"
		return "qemu exit status " rc
	}
	function new_frame(name) {
		cur = name; begin = NR; plan = -1; nplans = 0; planskip = ""
		ntap = 0; nfail = 0; nskip = 0
	}
	# One TAP result line of the current frame.
	function tap_result(   ok, num, rest, name, dir, kw, why) {
		ok = ($0 !~ /^not /)
		num = ok ? $2 : $3
		rest = $0; sub(/^(not )?ok [0-9]+ ?/, "", rest)
		name = rest; dir = ""
		if (match(rest, /(^| )#/)) {
			dir = substr(rest, RSTART + RLENGTH); name = substr(rest, 1, RSTART - 1)
		}
		sub(/^- /, "", name); sub(/[ \t]+$/, "", name)
		if (name == "") name = "#" num
		sub(/^[ \t]+/, "", dir)
		kw = toupper(dir); sub(/[^A-Z].*/, "", kw)
		why = dir; sub(/^[A-Za-z]+[ \t]*/, "", why)
		ntap++
		if (kw ~ /^SKIP/) {
			nskip++; res("SKIP", cur "/" name, why)
		} else if ((kw == "TODO" && !ok) || kw == "XFAIL") {
			nskip++; res("SKIP", cur "/" name, kw (why != "" ? ": " why : ""))
		} else if (ok) {
			res("PASS", cur "/" name)
		} else {
			nfail++; res("FAIL", cur "/" name, dir); excerpt(NR, begin)
		}
	}
	# The program as a whole, at its end (rc "" if the guest died in it).
	function end_frame(rc,   why) {
		why = ""
		if (nplans == 0 && ntap == 0) {
			if (index(ours, " " cur " ")) why = "no TAP output"
		} else if (nplans == 0) {
			why = "TAP plan missing (" ntap (ntap == 1 ? " result)" : " results)")
		} else if (nplans > 1) {
			why = "TAP plan printed " nplans " times"
		} else if (plan != ntap) {
			why = "TAP plan 1.." plan " but " ntap (ntap == 1 ? " result" : " results")
		}
		if (rc == "")
			why = also(why, "no exit status: the guest died in it")
		else if (rc != 0 && !(rc == 4 && (nskip > 0 || planskip != "")) && nfail == 0)
			why = also(why, "exit status " rc (ntap ? " after passing TAP results" : ""))
		if (why != "") {
			res("FAIL", cur, why); excerpt(NR, begin)
		} else if (nplans == 1 && plan == 0 && ntap == 0) {
			res("SKIP", cur, planskip != "" ? planskip : "no tests planned (1..0)")
		} else if (nplans == 0 && ntap == 0) {
			res("PASS", cur)
		}
		cur = ""
	}
	{ sub(/\r$/, ""); lines[NR] = $0 }
	/@@RK-START/ { started = 1 }
	/@@RK-BEGIN / { new_frame($2); next }
	/@@RK-END / { if (cur != "") end_frame($3); next }
	/@@RK-DONE/ { done = 1 }
	/@@RK-TIMEOUT/ { timedout = 1 }
	cur != "" && /^1\.\.[0-9]+/ {
		nplans++; plan = substr($1, 4) + 0
		if (match($0, /#[ \t]*[Ss][Kk][Ii][Pp]/)) {
			planskip = substr($0, RSTART + RLENGTH); sub(/^[A-Za-z]*[ \t]*/, "", planskip)
			if (planskip == "") planskip = "skipped"
		}
	}
	cur != "" && /^(not )?ok [0-9]+( |$)/ { tap_result() }
	# The first splat is reported at the end, with the 34 lines after it.
	$0 ~ splat && !splatline { splatline = NR }
	END {
		if (cur != "") { died = cur; end_frame("") }
		if (!splatline) res("PASS", "kernel-splat")
		else {
			res("FAIL", "kernel-splat", lines[splatline])
			excerpt(splatline + 34 < NR ? splatline + 34 : NR, splatline - 5)
		}
		if (timedout) { res("FAIL", "guest-finished", "guest hung: killed after timeout"); excerpt(NR) }
		else if (!started) { res("FAIL", "guest-finished", "guest never reached /init"); excerpt(NR) }
		else if (died != "") { res("FAIL", "guest-finished", "guest died inside test " died "; " how(qrc)); excerpt(NR) }
		else if (!done || qrc != 0) { res("FAIL", "guest-finished", "qemu exit status " qrc); excerpt(NR) }
		else res("PASS", "guest-finished")
	}' "$con"
}

# skip_allowed PROGRAM/CASE: does RK_SKIP_OK (globs) let it skip?
skip_allowed() {
	local pat pats
	read -ra pats <<< "${RK_SKIP_OK:-}"
	for pat in "${pats[@]}"; do
		# shellcheck disable=SC2053 # a glob on purpose
		[[ $1 == $pat ]] && return 0
	done
	return 1
}

# skip_policy: on a feature kernel our tests/ programs must run, so their
# SKIPs (not allowed by RK_SKIP_OK) become FAILs; every other line passes.
skip_policy() {
	local line rest name why
	while IFS= read -r line; do
		if [ "$feature" = 1 ] && [[ $line == "SKIP $tag/"* ]]; then
			rest=${line#"SKIP $tag/"}
			name=${rest%%: *} why=
			[ "$name" = "$rest" ] || why=${rest#*: }
			if [[ $ours == *" ${name%%/*} "* ]] && ! skip_allowed "$name"; then
				line="FAIL $tag/$name: skipped on a feature kernel${why:+ (SKIP: $why)}"
			fi
		fi
		printf '%s\n' "$line"
	done
}

out=$RESULTS_D/$tag
{ kunit_results; frame_results; } | skip_policy | tee "$out"
! grep -q '^FAIL ' "$out"
