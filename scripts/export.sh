#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate patches/ and patches/series from the commits of $BUILD/tree
# after the 'pristine' tag. Output depends only on the commits, so exporting
# an unchanged tree changes no byte.
. "$(dirname "$0")/lib.sh"

tree=$BUILD/tree
[ -d "$tree/.git" ] || die "no $tree: run 'make tree' first"
[ -z "$(git -C "$tree" status --porcelain --untracked-files=no)" ] ||
	die "$tree has uncommitted changes"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export_series "$tmp"
rm -f "$TOP"/patches/*.patch
cp "$tmp"/*.patch "$TOP/patches/" 2>/dev/null || true
cp "$tmp/series" "$TOP/patches/series"
log "exported $(grep -c . "$TOP/patches/series" || true) patch(es)"
"$TOP/scripts/checkpatch.sh" | grep -v "^PASS" >&2 || true
