#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# kselftests.sh build|compare|check|report: the kernel tree's own selftests
# for futex, epoll, timers and sigaltstack (guest/kselftests.list), run on
# the unpatched 6.12 and on the feature kernel, compared test by test.
#   build    build them statically with the selftests' Makefiles ($TEST_CC,
#            uapi headers from $HDR) into $BUILD/$ARCH-kselftests/, with the
#            guest runner guest/kselftests (and guest/ksrate, for
#            scripts/ks-rate.sh; both force reclaim with guest/ksdrop,
#            /kselftests/drop); initramfs.sh copies that directory to
#            /kselftests and links the two as /bench/kselftests, ksrate
#   compare  build, rebuild the initramfs, boot CONFIG=vanilla and the
#            feature kernel (KS_CONFIG, default rkstack; KOUT_PREFIX
#            applies to it only) with "kselftests", then report
#   check    kernel.sh for both configs first, then compare (make check)
#   report VANILLA_CONSOLE PATCHED_CONSOLE [RETRY_CONSOLE [OFF_CONSOLE]]
#            compare consoles: one result line per test,
#            "PASS kselftests-regress/<test>" unless it passes on vanilla
#            (or fails differently) and fails on the patched kernel, also
#            in the retry if there was one (FAIL); a test that skips or
#            fails on both kernels, or only misses a latency limit
#            (TIMING), or that ends in the control (OFF_CONSOLE: the
#            patched kernel with the feature switched off) exactly as it
#            did with the feature on, twice (FAILS-FEATURE-OFF), shows no
#            regression but could not show one either: SKIP. In
#            $RESULTS_D/kselftests-$ARCH; the table, failures on both and
#            passes on retry included, goes to $LOGS/kselftests-$ARCH.txt
. "$(dirname "$0")/lib.sh"

list=$TOP/guest/kselftests.list
out=$BUILD/$ARCH-kselftests
cfg=${KS_CONFIG:-rkstack}
# The kernel the feature kernel is compared with: the unpatched 6.12
# (vanilla); make check passes base (series applied, feature built out),
# which it builds anyway, to save a cold build. Tables still say "vanilla".
basecfg=${KS_BASE:-vanilla}
# Tests whose only verdict is a 40 ms latency limit, which a TCG guest on a
# busy host misses now and then on either kernel (vanilla set-timer-lat:
# 35 to 467 ms in four runs): failing them on the patched kernel alone,
# with no timeout or crash, twice, is "TIMING", listed but not a failure.
timing=${KS_TIMING-"timers/nsleep-lat timers/set-timer-lat"}

build() {
	local st=$SRC/tools/testing/selftests d progs
	# initramfs.sh installs the uapi headers the tests build against.
	if [ ! -f "$HDR/.stamp" ] || [ "$SRC/.series-stamp" -nt "$HDR/.stamp" ]; then
		"$TOP/scripts/initramfs.sh" > /dev/null
	fi
	[ "$HDR/.stamp" -nt "$out/.stamp" ] && rm -rf "$out"
	for d in $(awk '!/^#/ && NF { print $3 }' "$list" | sort -u); do
		progs=$(awk -v d="$d" -v o="$out/$d/" '!/^#/ && $3 == d { print o $4 }' \
			"$list" | sort -u)
		mkdir -p "$out/$d"
		# shellcheck disable=SC2086 # one target per word
		selftest_make -s -C "$st/$d" OUTPUT="$out/$d" CC="$TEST_CC" \
			KHDR_INCLUDES="-isystem $HDR/include" USERLDFLAGS="-static -s" \
			$progs || return 1
	done
	install -m 755 "$TOP/guest/kselftests" "$out/run"
	install -m 755 "$TOP/guest/ksrate" "$out/rate"
	install -m 755 "$TOP/guest/ksdrop" "$out/drop"
	cp "$list" "$out/list"
	touch "$out/.stamp"
	log "kselftests for $ARCH in $out"
}

# parse CONSOLE: "key name status" for each result inside the kselftests
# frame. A case's key is its program and number, not its description,
# which some tests change when they fail ("futex_requeue many succeeds"
# / "... many returned: 0").
parse() {
	awk '{ sub(/\r$/, "") }
	/^@@RK-BEGIN kselftests/ { f = 1; next }
	/^@@RK-END kselftests/ { f = 0; next }
	f && /^(not )?ok [0-9]+ / {
		st = /^not ok/ ? "fail" : / # SKIP/ ? "skip" : "pass"
		if (/^not ok.* # TIMEOUT/) st = "timeout"
		else if (match($0, / # exit status 1[2-9][0-9]$/) && substr($0, RSTART + 15) + 0 <= 192)
			st = "killed"	# 128 + signal number
		n = /^not ok/ ? $3 : $2
		name = $0; sub(/^(not )?ok [0-9]+ /, "", name); sub(/ # .*/, "", name)
		key = name
		if (split(name, c, "/") > 2) key = c[1] "/" c[2] "/#" n
		print key, name, st
	}' "$1"
}

# table VANILLA PATCHED [RETRY [OFF]]: "test vanilla patched" for every
# test of either console, in order of first appearance, named as in the
# first console that has it; a test that failed on the patched kernel but
# passed in RETRY (a second patched boot running only the regressed
# programs), or is absent from it while its program passed, is "flaky";
# one that did not pass in RETRY either (the case itself ran there) and
# ended in OFF (a third boot of the patched kernel with the feature
# switched off, running the programs that still regressed; the case
# itself ran there) exactly as with the feature on, is
# "<status>/off-<status>": the switch does not change it. Never for the
# runner's own kselftests/ checks, which need the feature on.
table() {
	awk 'FILENAME == ARGV[1] { v[$1] = $3 } FILENAME == ARGV[2] { p[$1] = $3 }
	     FILENAME == ARGV[3] { r[$1] = $3; next }
	     FILENAME == ARGV[4] { k[$1] = $3; next }
	     !($1 in s) { s[$1] = 1; o[++n] = $1; name[$1] = $2 }
	     END { for (i = 1; i <= n; i++) {
		     t = o[i]; a = t in v ? v[t] : "missing"; b = t in p ? p[t] : "missing"
		     # Passed in the retry, or absent from a retry its program passed.
		     prog = split(t, c, "/") > 2 ? c[1] "/" c[2] : ""
		     ran = t in r	# the case itself, not only its program
		     if (prog != "" && !ran) r[t] = r[prog]
		     if (b != "pass" && b != a && r[t] == "pass") b = "flaky"
		     else if (b != "pass" && b != a && t !~ /^kselftests\// &&
			      ran && (t in k) && k[t] == b)
			     b = b "/off-" k[t]
		     print name[t], a, b } }' \
		<(parse "$1") <(parse "$2") <(parse "${3:-/dev/null}") \
		<(parse "${4:-/dev/null}")
}

# regressed VANILLA PATCHED [RETRY]: the programs (group/binary, comma
# separated) with a test that passed on vanilla, or ended otherwise
# there, and neither passed on the patched kernel nor in the retry.
regressed() {
	table "$@" | awk '$3 != "pass" && $3 != "flaky" && $3 != $2 {
		split($1, c, "/"); print c[1] "/" c[2] }' | sort -u | paste -sd, -
}

report() {
	local vcon=$1 pcon=$2 rcon=${3:-} ocon=${4:-} txt=$LOGS/kselftests-$ARCH.txt name v p verdict why
	[ -f "$vcon" ] && [ -f "$pcon" ] || die "report: need two console logs"
	# A control that did not run with the feature off exonerates nothing.
	if [ -n "$ocon" ] && ! grep -q 'vm.reclaimable_stacks=0,' "$ocon"; then
		echo "kselftests: $ocon did not run with the feature off: control ignored" >&2
		ocon=
	fi
	mkdir -p "$LOGS"
	{
		echo "kselftests, $ARCH: vanilla $vcon, patched $pcon${rcon:+, retry $rcon}${ocon:+, feature off $ocon}"
		printf '%-72s %-8s %-8s %s\n' test vanilla patched verdict
	} > "$txt"
	table "$vcon" "$pcon" "$rcon" "$ocon" |
	while read -r name v p; do
		verdict=PASS why=
		if [ "$p" = flaky ]; then
			verdict=PASS-ON-RETRY
		elif [[ "$p" = */off-* ]]; then
			verdict=FAILS-FEATURE-OFF
		elif [ "$p" != pass ] && [ "$p" = "$v" ]; then
			verdict=${p^^}-ON-BOTH
		elif [ "$p" = fail ] && [ "$v" = pass ] &&
		     [[ " $timing " = *" $(cut -d/ -f1,2 <<< "$name") "* ]]; then
			verdict=TIMING
		elif [ "$p" != pass ]; then
			verdict=FAIL
			if [ "$v" = pass ]; then
				why="passes on vanilla, fails patched"
				[ "$p" = fail ] || why="passes on vanilla, $p on patched"
			else
				why="vanilla: $v, patched: $p"
			fi
		fi
		printf '%-72s %-8s %-8s %s\n' "$name" "$v" "$p" "$verdict" >> "$txt"
		# Only the regressions are printed here; check.sh lists the skips.
		case "$verdict" in
		FAIL)	result fail "kselftests-regress/$name" "$why" ;;
		*-ON-BOTH) result skip "kselftests-regress/$name" "${v} on both kernels" > /dev/null ;;
		TIMING)	result skip "kselftests-regress/$name" \
				"over a latency limit on the patched kernel only" > /dev/null ;;
		FAILS-FEATURE-OFF) result skip "kselftests-regress/$name" \
				"$v on vanilla; ${p%%/*} on the patched kernel with the feature on, in the retry too, and the same with it switched off: not the runtime feature (the debug options, the kernel build or the series' always-on code)" > /dev/null ;;
		*)	result pass "kselftests-regress/$name" > /dev/null ;;
		esac
	done
	{
		echo
		echo "vanilla: $(grep -ho 'kselftests: all done in .*' "$vcon" | tr -d '\r')"
		echo "patched: $(grep -ho 'kselftests: all done in .*' "$pcon" | tr -d '\r')"
		echo "patched: $(grep -ho 'vm.reclaimable_stacks=[^,]*' "$pcon" | head -1)," \
		     "stack vmstat deltas during the run:" \
		     "$(sed -n 's/.*@@RK-KSELFTESTS-VMSTAT //p' "$pcon" | tr -d '\r')"
		echo "$(grep -c ' PASS$' "$txt") pass on the patched kernel," \
		     "$(grep -c ' PASS-ON-RETRY$' "$txt") only on a retry," \
		     "$(grep -c -- '-ON-BOTH$' "$txt") fail or skip on both," \
		     "$(grep -c ' TIMING$' "$txt") over a latency limit on the patched kernel only," \
		     "$(grep -c ' FAILS-FEATURE-OFF$' "$txt") not passed on the patched build with the feature off either," \
		     "$(grep -c ' FAIL$' "$txt") regressions"
		grep -E -- '-ON-BOTH$| PASS-ON-RETRY$| TIMING$| FAILS-FEATURE-OFF$| FAIL$' "$txt" || true
	} > "$txt.tail"
	cat "$txt.tail" >> "$txt"
	rm -f "$txt.tail"
	sed -n '/^$/,$p' "$txt"
	echo "table: $txt"
}

# boot_ks TAG: boot the current (CONFIG, KOUT_PREFIX) with the kselftests
# runner; prints the seconds it took.
boot_ks() {
	local t0=$SECONDS
	BOOT_TIMEOUT=${KS_BOOT_TIMEOUT:-$((600 * TIME_SCALE))} \
		"$TOP/scripts/boot.sh" "$1" kselftests "${KS_ARGS:-}" > /dev/null || true
	echo $((SECONDS - t0))
}

# drop_results TAG [NAME]: in the results file of boot TAG, drop the
# results TAG/NAME and TAG/NAME/... with their console excerpts; without
# NAME, the whole file.
drop_results() {
	local f=$RESULTS_D/$1 tmp=$LOGS/.results.ks.$$
	[ $# -gt 1 ] || { rm -f "$f"; return 0; }
	[ -f "$f" ] || return 0
	awk -v p="$1/$2" '/^(PASS|FAIL|SKIP) / {
		name = $2; sub(/:$/, "", name)
		drop = name == p || index(name, p "/") == 1 }
		!drop' "$f" > "$tmp"
	mv "$tmp" "$f"
}

compare() {
	local vtag=ks-$ARCH-$basecfg ptag=ks-$ARCH-$cfg tv tp tr=0 to=0 again still
	build || { result fail "kselftests-regress/build" "selftests failed to build"; return 1; }
	"$TOP/scripts/initramfs.sh" > /dev/null
	log "kselftests: booting $ARCH-$basecfg, then ${KOUT_PREFIX:-}$ARCH-$cfg"
	tv=$(KOUT_PREFIX='' CONFIG=$basecfg boot_ks "$vtag")
	tp=$(CONFIG=$cfg boot_ks "$ptag")
	rm -f "$LOGS/$ptag-retry.log" "$RESULTS_D/$ptag-retry" \
		"$LOGS/$ptag-off.log" "$RESULTS_D/$ptag-off"
	# Under TCG some tests are timing-bound (epoll60 busy-waits for ten
	# threads 300 times within 30 s): programs with a test that passed on
	# vanilla but not here run once more, alone, on the patched kernel.
	again=$(regressed "$LOGS/$vtag.log" "$LOGS/$ptag.log")
	if [ -n "$again" ]; then
		log "kselftests: again on ${KOUT_PREFIX:-}$ARCH-$cfg: $again"
		tr=$(CONFIG=$cfg KS_ARGS=$again boot_ks "$ptag-retry")
		# The control: what still fails runs once more on the same
		# kernel with the feature off. The kernel compared with is not
		# the patched build (make check compares the debug feature
		# kernel with a non-debug one), so a test at the edge of its
		# time limit can fail on the debug build alone (epoll60:
		# 2026-12-07). It runs the programs together in their lanes, and
		# a prefix filter takes in more programs than the ones named.
		still=$(regressed "$LOGS/$vtag.log" "$LOGS/$ptag.log" "$LOGS/$ptag-retry.log")
		if [ -n "$still" ]; then
			log "kselftests: with the feature off on ${KOUT_PREFIX:-}$ARCH-$cfg: $still"
			to=$(CONFIG=$cfg KS_ARGS="feature=off,$still" boot_ks "$ptag-off")
		fi
	fi
	# boot.sh wrote a results file per boot; of the patched guests' keep
	# all but the kselftests frame (kernel-splat, guest-finished, KUnit,
	# with their excerpts): the tests themselves are judged against
	# vanilla by report. Vanilla is only the reference.
	drop_results "$vtag"
	drop_results "$ptag" kselftests
	drop_results "$ptag-retry" kselftests
	drop_results "$ptag-off" kselftests
	cat "$RESULTS_D/$ptag" "$RESULTS_D/$ptag-retry" "$RESULTS_D/$ptag-off" 2>/dev/null |
		grep -E '^(PASS|FAIL|SKIP) ' || true
	report "$LOGS/$vtag.log" "$LOGS/$ptag.log" "${again:+$LOGS/$ptag-retry.log}" \
		"${still:+$LOGS/$ptag-off.log}"
	echo "boots: vanilla ${tv} s, patched ${tp} s, retry ${tr} s, feature off ${to} s, $((tv + tp + tr + to)) s in all" |
		tee -a "$LOGS/kselftests-$ARCH.txt"
}

case "${1:-}" in
compare|check|report) results_open "kselftests-$ARCH" ;;
esac
case "${1:-}" in
build)	build ;;
compare) compare ;;
check)
	if ! CONFIG=$basecfg "$TOP/scripts/kernel.sh" || ! CONFIG=$cfg "$TOP/scripts/kernel.sh"; then
		result fail "kselftests-regress/build" "kernel build failed"
		exit 1
	fi
	compare ;;
report)	report "${2:?}" "${3:?}" "${4:-}" "${5:-}" ;;
*)	die "usage: $0 build|compare|check|report VANILLA_CONSOLE PATCHED_CONSOLE [RETRY_CONSOLE [OFF_CONSOLE]]" ;;
esac
