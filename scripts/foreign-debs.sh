#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Fetch the Debian packages of another architecture that the guest needs
# (FOREIGN_DEBS in lib.sh, e.g. busybox-static:arm64) and unpack them under
# $BUILD/debs-$ARCH/root without installing them. The first time, as root,
# it adds the architecture to dpkg and updates the package lists.
. "$(dirname "$0")/lib.sh"

[ -n "$FOREIGN_DEBS" ] || exit 0
dir=$BUILD/debs-$ARCH
[ "$(cat "$dir/.stamp" 2>/dev/null)" = "$FOREIGN_DEBS" ] && exit 0

root=no
[ "$(id -u)" -eq 0 ] && root=yes
update=no
for d in $FOREIGN_DEBS; do
	a=${d##*:}
	[ "$a" = "$(dpkg --print-architecture)" ] && continue
	dpkg --print-foreign-architectures | grep -qx "$a" && continue
	[ $root = yes ] || die "as root, once: dpkg --add-architecture $a && apt-get update"
	log "adding dpkg architecture $a"
	dpkg --add-architecture "$a"
	update=yes
done

export DEBIAN_FRONTEND=noninteractive
if [ $update = yes ]; then
	apt-get update -q >/dev/null || die "apt-get update failed"
fi
rm -rf "$dir"
mkdir -p "$dir/dl" "$dir/root"
# apt-get download as root warns that _apt cannot write here; harmless.
if ! (cd "$dir/dl" && apt-get download -q $FOREIGN_DEBS >/dev/null 2>&1); then
	[ $root = yes ] || die "apt-get download $FOREIGN_DEBS failed (stale lists? as root: apt-get update)"
	apt-get update -q >/dev/null || die "apt-get update failed"
	(cd "$dir/dl" && apt-get download -q $FOREIGN_DEBS >/dev/null 2>&1) ||
		die "apt-get download $FOREIGN_DEBS failed"
fi
for f in "$dir"/dl/*.deb; do
	dpkg -x "$f" "$dir/root" || die "dpkg -x $f failed"
done
echo "$FOREIGN_DEBS" > "$dir/.stamp"
log "unpacked $FOREIGN_DEBS in $dir/root"
