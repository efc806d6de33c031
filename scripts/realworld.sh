#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make realworld: a Debian bookworm userland (systemd as init, Debian's own
# server packages) on the feature kernel with what systemd needs
# (CONFIG=rkreal), booted from an ext4 image on a virtio disk. The guest
# prints a census of where every thread waits, then drives each server
# over loopback with its own clients through forced stack reclaim, and
# drgn and crash read reclaimed threads' stacks through /proc/kcore
# (crash 8.0.2 does not start on this kernel: README).
#   REALWORLD_SERVERS (memcached,redis,mariadb,jvm): servers.py's servers, in order;
#   RK_CONNS idle connections per server (1000) goes on the command line.
export CONFIG=${REALWORLD_CONFIG:-rkreal}
. "$(dirname "$0")/lib.sh"

servers=${REALWORLD_SERVERS:-memcached,redis,mariadb,jvm}
conns=${RK_CONNS:-1000}
names="memcached|redis|mariadb|jvm"
[[ "$servers" =~ ^($names)(,($names))*$ ]] ||
	die "REALWORLD_SERVERS=$servers: want a comma-separated list of ${names//|/, }"
int_in RK_CONNS "$conns" 1 4000
case "$CONFIG" in rk*) ;; *) die "make realworld needs a feature build (REALWORLD_CONFIG=rkreal)" ;; esac
[ "$ARCH" = x86_64 ] || die "make realworld runs on x86_64 only so far (ARCH=$ARCH)"

start=$(date +%s)
prepare_guest	# the initramfs step builds bench/census
tarball=$("$TOP/scripts/rootfs.sh")
img=$("$TOP/scripts/rootfs-image.sh" "$tarball" "$BUILD/$ARCH-initramfs/bench/census" "$KOUT/vmlinux")

out=$BUILD/realworld/$ARCH
mkdir -p "$out"
tag=realworld-$ARCH
rc=0
GUEST_MEM=${GUEST_MEM:-3072} BOOT_TIMEOUT=${BOOT_TIMEOUT:-1800} BOOT_DISK=$img \
	KERNEL_ARGS="${KERNEL_ARGS:-} rk.conns=$conns" \
	"$TOP/scripts/boot.sh" "$tag" "$servers" > "$out/results" || rc=$?
con=$LOGS/$tag.log

"$TOP/scripts/realworld-report.sh" "$con" > "$out/report.md"
cat "$out/report.md"
echo
cat "$out/results"
echo "report: $out/report.md; console: $con; $(( $(date +%s) - start )) s"
[ $rc -eq 0 ] && echo "realworld passed" || echo "realworld FAILED"
exit $rc
