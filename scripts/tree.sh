#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Make $BUILD/tree: a git repository of the pristine source with one commit
# per patch of patches/series, for editing the series with git. An existing
# tree with commits not yet exported is never overwritten.
. "$(dirname "$0")/lib.sh"

tree=$BUILD/tree
pristine=$BUILD/src/pristine
"$TOP/scripts/source.sh"
if [ -d "$tree/.git" ]; then
	if [ -n "$(git -C "$tree" status --porcelain --untracked-files=no)" ]; then
		die "$tree has uncommitted changes; commit and 'make export', or remove it"
	fi
	tmp=$(mktemp -d)
	export_series "$tmp"
	if ! diff -r -x VERSION "$tmp" "$TOP/patches" >/dev/null; then
		rm -rf "$tmp"
		die "$tree has commits not in patches/; run 'make export' first, or remove it"
	fi
	rm -rf "$tmp"
	rm -rf "$tree"
fi

log "creating $tree"
mkdir -p "$tree"
rsync -a --exclude=/.deb-version "$pristine/" "$tree/"
git -C "$tree" init -q
git -C "$tree" add -A -f  # Debian's .gitignore ignores "/*"
git -C "$tree" -c user.name=pristine -c user.email=pristine@localhost \
	commit -q -m "$SRC_PKG $(src_version) pristine"
git -C "$tree" tag pristine
sed '/^#/d;/^$/d' "$TOP/patches/series" | while read -r p; do
	git -C "$tree" am -q --committer-date-is-author-date "$TOP/patches/$p" ||
		die "git am of $p failed"
done
log "$tree: pristine + $(git -C "$tree" rev-list --count pristine..HEAD) commit(s)"
