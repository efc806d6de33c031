#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rootfs.sh: build (once) the Debian root file system of make realworld with
# mmdebstrap and print the path of its tarball. Cached in $BUILD/rootfs/,
# keyed by suite, architecture, sources and ROOTFS_PKGS (scripts/lib.sh):
# a change to any of them builds a new one.
. "$(dirname "$0")/lib.sh"

EXTRA_PKGS="$ROOTFS_HOST_PKGS" "$TOP/scripts/deps.sh" >&2
[ "$(id -u)" -eq 0 ] || die "mmdebstrap needs root here (mode root): run as root"

pkgs=$(echo $ROOTFS_PKGS | tr ' ' ',')
key=$(printf '%s\n' "$ROOTFS_SUITE" "$DEB_ARCH" "$ROOTFS_SOURCES" "$pkgs" | sha256sum | cut -c1-12)
dir=$BUILD/rootfs
tar=$dir/$ROOTFS_SUITE-$DEB_ARCH-$key.tar
# mmdebstrap picks its output format from the name: the temporary ends in .tar.
tmp=$dir/.partial-$key.tar
mkdir -p "$dir"
if [ ! -s "$tar" ]; then
	log "mmdebstrap $ROOTFS_SUITE ($DEB_ARCH): $pkgs"
	mapfile -t sources <<< "$ROOTFS_SOURCES"
	# Recommends stay out (as minbase does): only what the list names.
	if ! mmdebstrap --mode=root --variant=minbase --architectures="$DEB_ARCH" \
		--include="$pkgs" "$ROOTFS_SUITE" "$tmp" "${sources[@]}" \
		> "$dir/mmdebstrap-$key.log" 2>&1; then
		tail -20 "$dir/mmdebstrap-$key.log" >&2
		die "mmdebstrap failed; full log: $dir/mmdebstrap-$key.log"
	fi
	mv "$tmp" "$tar"
fi
echo "$tar"
