#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make docs: build the documentation directories the series touches with
# the kernel's own Sphinx setup (make htmldocs, SPHINXDIRS) from the
# patched source, out of tree in $BUILD/docs, and fail on any warning
# that names a file the series adds or changes and that the unpatched
# tree's build does not give. Not in make check: about 2.5 minutes here
# with both trees' output kept, every file read again (SPHINXOPTS=-E),
# more on a first run. htmldocs also writes generated, git-ignored
# netlink pages into the source trees: $BUILD/src/{pristine,linux}, the
# harness's own copies.
. "$(dirname "$0")/lib.sh"

EXTRA_PKGS="python3-sphinx python3-yaml" "$TOP/scripts/deps.sh"
"$TOP/scripts/source.sh"
results_open docs
out=$BUILD/docs
mkdir -p "$out"
# The series' documentation files, from its patches.
files=$(sed -n 's|^+++ b/\(Documentation/.*\)|\1|p' "$TOP"/patches/[0-9]*.patch | sort -u)
[ -n "$files" ] || die "no Documentation/ file in patches/"
dirs=$(for f in $files; do f=${f#Documentation/}; echo "${f%%/*}"; done | sort -u | paste -sd' ')
PRISTINE=$BUILD/src/pristine
# warnings TREE OUT LOG: build TREE's docs for $dirs into OUT; LOG keeps
# the WARNING/ERROR lines, the tree's path and the line numbers dropped
# (the series moves lines), one "file: message" per line.
warnings() {
	# -E: read every file again, so that a warm run warns as a cold one.
	make -C "$1" O="$2" SPHINXDIRS="$dirs" SPHINXOPTS=-E htmldocs > "$3.full" 2>&1 || return 1
	# Without sphinx-build the kernel's Makefile prints SKIP and succeeds.
	for d in $dirs; do
		[ -s "$2/Documentation/output/$d/index.html" ] || return 1
	done
	# Both trees' paths and the output's, wherever they appear; every
	# occurrence kept (sort, not sort -u), so that comm counts repeats.
	{ grep -E 'WARNING|ERROR|CRITICAL' "$3.full" || true; } |
		sed -E "s|$1/||g; s|$2/||g; s|^(Documentation/[^:]*):[0-9]+:|\1:|" | sort > "$3"
}
# judge NAME LINES: PASS if LINES (warnings the unpatched tree lacks) is
# empty, else FAIL with them as the excerpt.
judge() {
	if [ -n "$2" ]; then
		result fail "$1" "$(wc -l <<< "$2") warning(s) the unpatched tree does not have"
		sed 's/^/    | /' <<< "$2"
	else
		result pass "$1"
	fi
}
log "htmldocs for: $dirs (the unpatched tree first, for its own warnings)"
t0=$SECONDS
if ! warnings "$PRISTINE" "$BUILD/docs-pristine" "$LOGS/docs-pristine.log"; then
	result fail "docs/htmldocs-pristine" "make htmldocs failed on the unpatched tree: see $LOGS/docs-pristine.log.full"
elif ! warnings "$SRC" "$out" "$LOGS/docs.log"; then
	result fail "docs/htmldocs" "make htmldocs failed: see $LOGS/docs.log.full"
else
	result pass "docs/htmldocs"
	# Partial builds (SPHINXDIRS) cannot resolve links into other
	# directories: such warnings are the unpatched tree's too, and only
	# what the series adds counts.
	new=$(comm -23 "$LOGS/docs.log" "$LOGS/docs-pristine.log")
	judge docs/new-warnings "$new"
	# The same, broken down by the series' files. An included text file
	# (kernel-parameters.txt) is not parsed by Sphinx: not claimed.
	for f in $files; do
		case "$f" in *.rst) ;; *) log "$f: included literally, not checked"; continue ;; esac
		judge "docs/$f" "$(awk -v f="$f:" 'index($0, f) == 1' <<< "$new")"
	done
fi
log "docs took $((SECONDS - t0)) s; logs $LOGS/docs.log{,.full}, HTML in $out"
results_total "$(results_file)"
[ "$(results_count FAIL "$(results_file)")" -eq 0 ]
