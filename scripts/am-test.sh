#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# am-test.sh: the series as a maintainer takes it: `git am` of every patch
# of patches/series, in order, onto the pristine 6.12 source, and the
# result compared file by file with the tree patch(1) made of it
# ($BUILD/src/linux, which every kernel here is built from). Only the
# files the series names are put in the scratch repository, so it takes
# seconds; git am applies a patch only if its context matches exactly (no
# fuzz, no three-way merge), stricter than source.sh's patch -F0. One
# result line, in $RESULTS_D/am-test.
. "$(dirname "$0")/lib.sh"

pristine=$BUILD/src/pristine
patched=$BUILD/src/linux
"$TOP/scripts/source.sh"
results_open am-test
tag=am-test/git-am-onto-pristine
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "patches/series lists no patch"
# Every path a patch names, old or new (a rename names both).
mapfile -t files < <(sed -nE 's|^diff --git a/([^ ]+) b/([^ ]+)$|\1\n\2|p' \
	"${patches[@]}" | LC_ALL=C sort -u)

for f in "${files[@]}"; do
	[ -f "$pristine/$f" ] || continue
	mkdir -p "$tmp/$(dirname "$f")"
	cp -p "$pristine/$f" "$tmp/$f"
done
git() { command git -C "$tmp" -c user.name=am-test -c user.email=am-test@localhost "$@"; }
git init -q
git add -A -f
git commit -q --allow-empty -m "the files the series touches, pristine"

for p in "${patches[@]}"; do
	if ! out=$(git am -q "$p" 2>&1); then
		result fail "$tag" "git am stops at ${p##*/}"
		result_excerpt <<< "$out"
		exit 1
	fi
done

differ=()
for f in "${files[@]}"; do
	if [ -e "$tmp/$f" ] || [ -e "$patched/$f" ]; then
		cmp -s "$tmp/$f" "$patched/$f" || differ+=("$f")
	fi
done
if [ ${#differ[@]} -gt 0 ]; then
	result fail "$tag" "${#differ[@]} file(s) differ from the patch(1) tree"
	printf '%s\n' "${differ[@]}" | result_excerpt
	exit 1
fi
result ok "$tag"
log "git am: ${#patches[@]} patches onto the pristine ${#files[@]} files," \
	"same tree as patch(1)"
