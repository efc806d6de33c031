#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# lint.sh [baseline]: sparse (C=2) and W=1 over every object the series
# touches on $ARCH, built with the $CONFIG (default rkdebug) .config in
# a directory of its own ($BUILD/$ARCH-lint-$CONFIG), so that the kernel
# build keeps its objects. Diagnostics are compared without their line
# numbers, as a multiset, with those of the unpatched 6.12 on the same
# objects and config (lint/$ARCH-$CONFIG.baseline): any diagnostic the
# patched tree adds is the series' own, and one FAIL lists them. Upstream
# has diagnostics of its own in these files (about 200 on x86_64), which
# are not ours to fix.
#   baseline  compile the pristine tree instead and write the baseline
#             file (sparse and gcc from this Debian; `make lint` redoes it)
export CONFIG=${CONFIG:-rkdebug}
. "$(dirname "$0")/lib.sh"

mode=${1:-check}
base=$TOP/lint/$ARCH-$CONFIG.baseline
feature_config=$KOUT/.config
case "$mode" in
check) ;;
baseline) SRC=$BUILD/src/pristine ;;
*) die "usage: $0 [baseline]" ;;
esac
[ -f "$feature_config" ] || "$TOP/scripts/kernel.sh"
command -v sparse > /dev/null || die "no sparse: run scripts/deps.sh"
KOUT=$BUILD/$ARCH-lint-$CONFIG-$mode
out=$LOGS/lint-$ARCH-$CONFIG-$mode.log
mkdir -p "$KOUT" "$LOGS"
cp "$feature_config" "$KOUT/.config"

# Every touched object of the patched tree that the pristine one has too.
objects() {
	local o
	SRC=$BUILD/src/linux touched_objects | while read -r o; do
		[ -f "$SRC/${o%.o}.c" ] && echo "$o"
	done
}

# One diagnostic per line: "file: warning: text", no tree, no line number.
diagnostics() {
	grep -E '(warning|error): ' "$out" |
		sed -E "s,^$SRC/,,; s,^([^:]+):[0-9]+(:[0-9]+)?:,\1:," | LC_ALL=C sort
}

t0=$(date +%s)
mapfile -t objs < <(objects)
[ ${#objs[@]} -gt 0 ] || die "no objects found in patches/"
log "sparse and W=1 on ${#objs[@]} objects of $(basename "$SRC") ($ARCH-$CONFIG)"
{ kmake olddefconfig && kmake prepare; } > "$out" 2>&1 || die "cannot configure $KOUT: see $out"
# -k: one object's errors must not hide the others'; C=2 runs sparse on
# objects that are up to date, so every run checks every object.
kmake -k C=2 W=1 "${objs[@]}" > "$out" 2>&1 || true

if [ "$mode" = baseline ]; then
	mkdir -p "$(dirname "$base")"
	diagnostics > "$base"
	log "$(wc -l < "$base") diagnostics of the pristine tree in $base ($(( $(date +%s) - t0 )) s)"
	exit 0
fi

results_open "lint-$ARCH-$CONFIG"
tag="lint/$ARCH-$CONFIG/sparse-w1"
if [ ! -f "$base" ]; then
	result fail "$tag" "no baseline $base: run '$0 baseline'"
	exit 1
fi
new=$(LC_ALL=C comm -13 "$base" <(diagnostics))
log "lint took $(( $(date +%s) - t0 )) s; log in $out"
if [ -n "$new" ]; then
	result fail "$tag" "$(wc -l <<< "$new") diagnostic(s) the pristine tree does not have"
	result_excerpt <<< "$new"
	exit 1
fi
result ok "$tag"
