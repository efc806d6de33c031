#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# mutants.sh [NAME...]: evidence that the tests catch what they are for.
# Each mutants/NAME.diff puts one fixed bug back into the patched tree
# (or breaks a fix as a regression would). Its header names the test
# programs to boot ("tests:"), their arguments ("args:", e.g. -t,CASE) and
# what must then fail ("expect-fail:", prefixes of result names such as
# reclaim_pressure/global.CASE, kunit/SUITE/CASE, or "kernel-splat:" for
# an oops). The x86_64 rkdebug
# kernel is rebuilt with the mutant and booted; the mutant is killed (a
# PASS) when every expected name has a FAIL, and survives (a FAIL) if
# one does not. The tree is restored after each mutant and the clean
# kernel rebuilt at the end. About 30 s per mutant, warm.
. "$(dirname "$0")/lib.sh"
export ARCH=x86_64 CONFIG=rkdebug
src=$BUILD/src/linux

"$TOP/scripts/deps.sh"
"$TOP/scripts/source.sh"
"$TOP/scripts/initramfs.sh" > /dev/null
if [ $# -gt 0 ]; then
	names=("$@")
else
	mapfile -t names < <(cd "$TOP/mutants" && ls -- *.diff | sed 's/\.diff$//')
fi
results_open mutants

# header FIELD FILE: the value of "# FIELD: value" in a mutant's header.
header() { sed -n "s/^# $1: *//p" "$2" | head -1; }

# Put the tree back: reverse the mutant and make the files it touched
# newer than their objects, so that kbuild compiles them again.
restore() {
	patch -d "$src" -p1 -R -s --no-backup-if-mismatch < "$1" ||
		die "cannot reverse $1: rerun scripts/source.sh after removing $src/.series-stamp"
	patch_files "$1" | (cd "$src" && xargs touch)
}

for name in "${names[@]}"; do
	diff=$TOP/mutants/$name.diff
	[ -f "$diff" ] || die "no mutant $diff"
	tests=$(header tests "$diff")
	args=$(header args "$diff")
	expect=$(header expect-fail "$diff")
	[ -n "$tests" ] && [ -n "$expect" ] || die "$diff: header needs tests: and expect-fail:"
	log "mutant $name: $(sed -n '1s/^# //p' "$diff")"
	patch -d "$src" -p1 -s --no-backup-if-mismatch < "$diff" ||
		die "$diff does not apply to $src"
	tag=mutant-$name
	if ! "$TOP/scripts/kernel.sh" > "$LOGS/$tag.build" 2>&1; then
		restore "$diff"
		result fail "mutant/$name" "does not build (see $LOGS/$tag.build)"
		continue
	fi
	out=$("$TOP/scripts/boot.sh" "$tag" "$tests" "$args" 2> /dev/null || true)
	restore "$diff"
	rm -f "$RESULTS_D/$tag"	# its FAILs are the point, not failures
	missed=
	for e in $expect; do
		grep -q "^FAIL $tag/$e" <<< "$out" || missed+=" $e"
	done
	if [ -z "$missed" ]; then
		result pass "mutant/$name" "killed by: $expect"
	else
		result fail "mutant/$name" "survived: no FAIL of$missed (console: $LOGS/$tag.log)"
	fi
done

log "rebuilding the clean kernel"
"$TOP/scripts/kernel.sh" > "$LOGS/mutants-clean.build" 2>&1 ||
	die "the clean kernel does not build after the mutants (see $LOGS/mutants-clean.build)"
results_total "$RESULTS_FILE"
[ "$(results_count FAIL "$RESULTS_FILE")" -eq 0 ]
