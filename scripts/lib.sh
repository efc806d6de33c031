# SPDX-License-Identifier: GPL-2.0
# Common settings for every harness script. Sourced, never executed.
#
# Everything that differs between architectures lives in the arch_* table
# below; scripts only ever read the resulting variables, so adding an arch
# means adding one case here and one configs/arch-<ARCH> fragment.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
ARCH=${ARCH:-x86_64}
CONFIG=${CONFIG:-base}

# Debian package that carries the kernel source, and the version the series
# was last rebased on. A newer candidate is used (with a warning) only when
# the archive no longer offers this one.
SRC_PKG=linux-source-6.12
SRC_VERSION_PINNED=6.12.118-1~deb12u1
SRC_TARBALL=/usr/src/linux-source-6.12.tar.xz

SRC=${KSRC:-$BUILD/src/linux} # pristine + series applied (KSRC: build another tree)
KOUT=$BUILD/${KOUT_PREFIX:-}$ARCH-$CONFIG # kernel build directory for (arch, config)
HDR=$BUILD/$ARCH-headers      # headers_install output for test programs
LOGS=$BUILD/logs

die() { echo "error: $*" >&2; exit 1; }
log() { echo "==> $*" >&2; }

case "$ARCH" in
x86_64)
	KARCH=x86_64
	CROSS_COMPILE=
	KIMAGE=arch/x86/boot/bzImage
	QEMU=qemu-system-x86_64
	QEMU_MACHINE="-machine q35 -cpu max"
	QEMU_CONSOLE=ttyS0
	QEMU_PANIC_DEV="-device pvpanic"
	TEST_CC=gcc
	BUSYBOX=/bin/busybox
	APT_ARCH_PKGS="qemu-system-x86 busybox-static"
	;;
*)
	die "unsupported ARCH '$ARCH' (supported: x86_64)"
	;;
esac

# Config names map to fragment lists; 'base' is always first.
case "$CONFIG" in
base)	FRAGMENTS="base arch-$ARCH" ;;
debug)	FRAGMENTS="base arch-$ARCH debug" ;;
rkstack) FRAGMENTS="base arch-$ARCH rkstack" ;;
rkdebug) FRAGMENTS="base arch-$ARCH debug rkstack" ;;
*)	die "unknown CONFIG '$CONFIG' (known: base debug rkstack rkdebug)" ;;
esac

# Everything a build/boot needs from apt, by command or file it provides.
APT_PKGS="$SRC_PKG $APT_ARCH_PKGS flex bison bc libelf-dev libssl-dev cpio
	ccache xz-utils make gcc libc6-dev python3 python3-ply rsync kmod dwarves git"

# Kernel command line each config boots with.
case "$CONFIG" in
rk*)	CONFIG_ARGS="reclaimable_stacks=1" ;;
*)	CONFIG_ARGS="" ;;
esac

src_version() { cat "$BUILD/src/VERSION" 2>/dev/null || echo unknown; }

kmake() {
	make -C "$SRC" O="$KOUT" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" \
		CC="ccache ${CROSS_COMPILE}gcc" KBUILD_BUILD_TIMESTAMP=@0 \
		KBUILD_BUILD_USER=rkstack KBUILD_BUILD_HOST=qemu \
		-j"$(nproc)" "$@"
}

# Write the commits of the editing tree after tag 'pristine' to DIR as
# numbered patches plus a series file. Deterministic: no commit ids, no
# version signature, fixed abbreviation.
export_series() {
	git -C "$BUILD/tree" format-patch -q --zero-commit --no-signature \
		--no-numbered --abbrev=12 -o "$1" pristine..HEAD
	(cd "$1" && ls -- *.patch 2>/dev/null || true) > "$1/series"
}
