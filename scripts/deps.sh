#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install (as root) or name (otherwise) every Debian package the harness uses.
. "$(dirname "$0")/lib.sh"

missing=()
for p in $APT_PKGS ${EXTRA_PKGS:-}; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing+=("$p")
done
# Packages of another architecture for the guest (busybox for arm64).
[ ${#missing[@]} -eq 0 ] && exec "$TOP/scripts/foreign-debs.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "missing packages; run as root:" >&2
	echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
	exit 1
fi

log "installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null || die "apt-get update failed"

# Prefer the kernel source version the series was rebased on. The list is
# read whole first: grep -q stops at the first match, and with pipefail the
# SIGPIPE it leaves apt-cache made a present version look gone.
madison=$(apt-cache madison "$SRC_PKG")
pkgs=()
for p in "${missing[@]}"; do
	if [ "$p" = "$SRC_PKG" ] &&
	   grep -qF "| $SRC_VERSION_PINNED |" <<< "$madison"; then
		p="$SRC_PKG=$SRC_VERSION_PINNED"
	elif [ "$p" = "$SRC_PKG" ]; then
		echo "warning: $SRC_PKG $SRC_VERSION_PINNED is gone from the archive;" \
		     "using the candidate version" >&2
	fi
	pkgs+=("$p")
done
apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null ||
	die "apt-get install ${pkgs[*]} failed"
"$TOP/scripts/foreign-debs.sh"
