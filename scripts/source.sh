#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Unpack Debian's kernel source once, then (re)apply patches/series to a
# working copy whenever the series changes. Files the series does not change
# keep their timestamps, so kbuild rebuilds only what a patch touched.
. "$(dirname "$0")/lib.sh"

[ -f "$SRC_TARBALL" ] || die "$SRC_TARBALL missing: run 'make deps' (as root)"
version=$(dpkg-query -W -f='${Version}' "$SRC_PKG")
pristine=$BUILD/src/pristine
patched=$BUILD/src/linux # always this tree, whatever KSRC or CONFIG say
mkdir -p "$BUILD/src"

if [ "$(cat "$pristine/.deb-version" 2>/dev/null)" != "$version" ]; then
	log "unpacking $SRC_PKG $version"
	rm -rf "$pristine" "$pristine.tmp"
	mkdir -p "$pristine.tmp"
	tar -xf "$SRC_TARBALL" -C "$pristine.tmp" --strip-components=1
	echo "$version" > "$pristine.tmp/.deb-version"
	mv "$pristine.tmp" "$pristine"
fi

stamp=$( (echo "$version"; cd "$TOP/patches" && cat series &&
	  sed '/^#/d' series | xargs -r cat) | sha256sum | cut -c1-16)
[ "$(cat "$patched/.series-stamp" 2>/dev/null)" = "$stamp" ] && exit 0

# Apply in a hard-linked scratch copy: patch(1) replaces files rather than
# writing through the link, so the pristine tree is never modified.
stage=$BUILD/src/stage
rm -rf "$stage"
cp -al "$pristine" "$stage"
n=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ -f "$TOP/patches/$p" ] || die "patches/series names missing file $p"
	if ! out=$(patch -d "$stage" -p1 -F0 -N --no-backup-if-mismatch \
			< "$TOP/patches/$p" 2>&1); then
		echo "$out" | grep -E 'FAILED|can.t find|Reversed|malformed|^patching' >&2
		die "patch $p does not apply to $SRC_PKG $version (see the hunk above)"
	fi
	n=$((n + 1))
done < "$TOP/patches/series"

# Copy only content changes into the build tree; -c and no -t so a file that
# changed back still gets a fresh mtime and is recompiled.
mkdir -p "$patched"
rsync -rlc --delete --exclude=/.series-stamp "$stage/" "$patched/"
rm -rf "$stage"
echo "$version" > "$BUILD/src/VERSION"
echo "$stamp" > "$patched/.series-stamp"
log "$SRC_PKG $version with $n patch(es) applied"
