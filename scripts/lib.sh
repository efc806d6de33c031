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

KOUT=$BUILD/${KOUT_PREFIX:-}$ARCH-$CONFIG # kernel build directory for (arch, config)
HDR=$BUILD/$ARCH-headers      # headers_install output for test programs
LOGS=$BUILD/logs

die() { echo "error: $*" >&2; exit 1; }
# int_in NAME VALUE MIN MAX: die unless VALUE is an integer in range.
int_in() {
	[[ "$2" =~ ^[0-9]+$ ]] && [ "$2" -ge "$3" ] && [ "$2" -le "$4" ] ||
		die "$1=$2: want an integer in [$3, $4]"
}
# Results: every boot (results.sh) and every other producer (checkpatch,
# model, demo, bench, kselftests, the harness self-test) writes a file of
# its own in $RESULTS_D, so that no two writers share one; check.sh
# empties the directory first and sums every file. A result is one line,
#   PASS name | FAIL name[: reason] | SKIP name[: reason]
# optionally followed by console excerpt lines starting with "    | ".
RESULTS_D=$LOGS/results.d
# results_open NAME: this script's results go to $RESULTS_D/NAME, emptied.
results_open() {
	mkdir -p "$RESULTS_D"
	RESULTS_FILE=$RESULTS_D/$1
	: > "$RESULTS_FILE"
}
# results_file: results_open's choice; without one, a file named after the
# calling script (never one shared with another script).
results_file() {
	mkdir -p "$RESULTS_D"
	echo "${RESULTS_FILE:-$RESULTS_D/$(basename "$0" .sh)}"
}
# result pass|fail|skip NAME [WHY]: print one result line and add it to
# results_file ("ok" is pass too).
result() {
	local state
	case "$1" in
	ok|pass) state=PASS ;;
	fail) state=FAIL ;;
	skip) state=SKIP ;;
	*) die "result: unknown state '$1'" ;;
	esac
	echo "$state $2${3:+: $3}" | tee -a "$(results_file)"
}
# result_excerpt: stdin, indented as a console excerpt, after the last result.
result_excerpt() { sed 's/^/    | /' | tee -a "$(results_file)"; }
# results_count STATE FILE...: how many STATE (PASS, FAIL, SKIP) lines.
results_count() { local s=$1; shift; cat -- "$@" 2>/dev/null | grep -c "^$s " || true; }
# results_total FILE...: the closing line CI parses, "P passed, F failed",
# with ", S skipped" appended when S > 0.
results_total() {
	local line skipped
	line="$(results_count PASS "$@") passed, $(results_count FAIL "$@") failed"
	skipped=$(results_count SKIP "$@")
	[ "$skipped" -eq 0 ] || line+=", $skipped skipped"
	echo "$line"
}
log() { echo "==> $*" >&2; }

case "$ARCH" in
x86_64)
	KARCH=x86_64
	CROSS_COMPILE=
	KIMAGE=arch/x86/boot/bzImage
	QEMU=qemu-system-x86_64
	# Multi-threaded TCG mishandles x86 text patching: see boot.sh.
	BOOT_TCG_DEFAULT=single
	QEMU_MACHINE="-machine q35 -cpu max"
	# Kernel arguments of a benchmark boot on the icount clock: see
	# bench.sh.
	ICOUNT_KARGS=clearcpuid=erms
	QEMU_CONSOLE=ttyS0
	QEMU_PANIC_DEV="-device pvpanic"
	TEST_CC=gcc
	BUSYBOX=/bin/busybox
	APT_ARCH_PKGS="qemu-system-x86 busybox-static"
	DEB_ARCH=amd64
	# Debian's own benchmark tools for bench/tools_ab.c, copied into the
	# initramfs with their shared libraries (scripts/copy-dynamic.sh, ldd:
	# host programs, so only where host and guest are one arch).
	GUEST_TOOL_PKGS="linux-perf rt-tests"
	GUEST_TOOLS="/usr/bin/perf /usr/bin/hackbench /usr/bin/cyclictest"
	FOREIGN_DEBS=
	TIME_SCALE=1
	;;
arm64)
	KARCH=arm64
	CROSS_COMPILE=aarch64-linux-gnu-
	KIMAGE=arch/arm64/boot/Image
	QEMU=qemu-system-aarch64
	BOOT_TCG_DEFAULT=multi
	# pauth-impdef: QEMU's own pointer-authentication hash, far cheaper
	# under TCG than the architected QARMA5.
	QEMU_MACHINE="-machine virt -cpu max,pauth-impdef=on"
	ICOUNT_KARGS=
	QEMU_CONSOLE=ttyAMA0
	QEMU_PANIC_DEV="-device pvpanic-pci"
	TEST_CC=aarch64-linux-gnu-gcc
	# Debian's arm64 busybox-static, downloaded and unpacked by deps.sh.
	FOREIGN_DEBS="busybox-static:arm64"
	BUSYBOX=$BUILD/debs-arm64/root/bin/busybox
	APT_ARCH_PKGS="qemu-system-arm gcc-aarch64-linux-gnu libc6-dev-arm64-cross"
	DEB_ARCH=arm64
	# No perf or rt-tests in the arm64 guest: they and their ~25 libraries
	# would have to be unpacked as foreign packages; tools_ab is x86_64 only.
	GUEST_TOOL_PKGS=
	GUEST_TOOLS=
	# Emulating another ISA under TCG is slower: boot and test timeouts
	# are multiplied by this.
	TIME_SCALE=2
	;;
*)
	die "unsupported ARCH '$ARCH' (supported: x86_64 arm64)"
	;;
esac

# Config names map to fragment lists; 'base' is always first.
case "$CONFIG" in
base)	FRAGMENTS="base arch-$ARCH prod" ;;
debug)	FRAGMENTS="base arch-$ARCH prod debug" ;;
rkstack) FRAGMENTS="base arch-$ARCH prod sites rkstack" ;;
rkdebug) FRAGMENTS="base arch-$ARCH prod debug sites rkstack rkdebug" ;;
# The feature build plus what a Debian userland with systemd needs (make
# realworld boots it from a disk image).
rkreal) FRAGMENTS="base arch-$ARCH prod sites rkstack userland" ;;
# Unpatched 6.12 with the same options minus the feature: the third column
# of the benchmarks. Built from the pristine source, never the series.
vanilla) FRAGMENTS="base arch-$ARCH prod sites"; KSRC=${KSRC:-$BUILD/src/pristine} ;;
*)	die "unknown CONFIG '$CONFIG' (known: base debug rkstack rkdebug rkreal vanilla)" ;;
esac

SRC=${KSRC:-$BUILD/src/linux} # pristine + series applied (KSRC: build another tree)

# Everything a build/boot needs from apt, by command or file it provides.
APT_PKGS="$SRC_PKG $APT_ARCH_PKGS $GUEST_TOOL_PKGS flex bison bc libelf-dev libssl-dev cpio
	ccache xz-utils make gcc libc6-dev python3 python3-ply rsync kmod dwarves git
	gnuplot-nox spin sparse"

# make realworld: the Debian root file system (scripts/rootfs.sh) and what
# building it needs from the host. A change to ROOTFS_PKGS rebuilds it.
ROOTFS_SUITE=bookworm
# One sources.list line each.
ROOTFS_SOURCES="deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian bookworm-updates main
deb http://deb.debian.org/debian-security bookworm-security main"
# openjdk-17-jre-headless: Debian's JRE carries the whole module image
# (jdk.compiler too), so "java RkPool.java" runs the JVM server from its
# source (guest/realworld/RkPool.java), no JDK needed. crash: the kernel
# crash dump analyser, run on the live kernel (guest/realworld/crash_stacks.py).
ROOTFS_PKGS="systemd-sysv udev procps memcached libmemcached-tools redis-server
	redis-tools mariadb-server mariadb-client python3 python3-pymysql python3-drgn
	crash openjdk-17-jre-headless"
ROOTFS_HOST_PKGS="mmdebstrap e2fsprogs"

# Kernel command line each config boots with.
case "$CONFIG" in
rk*)	CONFIG_ARGS="reclaimable_stacks=1" ;;
*)	CONFIG_ARGS="" ;;
esac

src_version() { cat "$BUILD/src/VERSION" 2>/dev/null || echo unknown; }

# prepare_guest: what a boot of ($ARCH, $CONFIG) needs, built where stale:
# the packages, the patched source, the kernel and the initramfs.
prepare_guest() {
	"$TOP/scripts/deps.sh"
	"$TOP/scripts/source.sh"
	"$TOP/scripts/kernel.sh"
	"$TOP/scripts/initramfs.sh" > /dev/null
}

# The compiler cache, under $BUILD. Depend mode: ccache takes the headers
# from the compiler's own -MD output (kbuild passes -Wp,-MMD) instead of
# running the preprocessor a second time on every miss. Measured here on
# kernel/ and mm/ of the debug config, 2 cores: no ccache 156 s, an empty
# cache in ccache's default mode 213 s, in depend mode 149 s; a warm rerun
# 17 s in both. A cold `make check` compiles three kernels.
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache}
export CCACHE_DEPEND=${CCACHE_DEPEND:-1}

# Only one kernel build at a time on this machine (2 cores): concurrent
# callers queue on a lock instead of thrashing each other.
kmake() {
	mkdir -p "$BUILD"
	flock "$BUILD/.kbuild.lock" make -C "$SRC" O="$KOUT" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE" \
		CC="ccache ${CROSS_COMPILE}gcc" KBUILD_BUILD_TIMESTAMP=@0 \
		KBUILD_BUILD_USER=rkstack KBUILD_BUILD_HOST=qemu \
		-j"$(nproc)" "$@"
}

# The kernel's directory under arch/ for $KARCH.
SRCARCH=$KARCH
[ "$KARCH" = x86_64 ] && SRCARCH=x86

# series_patches: the patch files of patches/series, in order, one path
# each. patch_files PATCH: the files PATCH changes, one each.
series_patches() { sed '/^#/d;/^$/d;s|^|'"$TOP"'/patches/|' "$TOP/patches/series"; }
patch_files() { sed -n 's,^+++ b/,,p' "$1" | sort -u; }

# selftest_make ARGS...: make for a kselftest-style Makefile (lib.mk), with
# none of the caller's build flags: lib.mk adds CFLAGS, LDFLAGS and LLVM
# from the environment, and a CFLAGS given to a make above us would come
# down in MAKEFLAGS and override every "CFLAGS +=" (a dynamic binary,
# which the busybox-only guest cannot run).
selftest_make() {
	env -u MAKEFLAGS -u MFLAGS -u CFLAGS -u CPPFLAGS \
		-u LDFLAGS -u LDLIBS -u TARGET_ARCH -u USERCFLAGS -u USERLDFLAGS \
		-u LLVM make "$@"
}

# touched_objects [PATCH...]: the objects ($SRC, $KOUT, $SRCARCH) that
# compile every C file the patches (default: the series) touch on this
# arch (config-matrix.sh, lint.sh, bisect.sh).
touched_objects() {
	[ $# -gt 0 ] || set -- $(series_patches)
	sed -n 's,^+++ b/\(.*\)\.c$,\1,p' "$@" | objects_of
}

# header_users PATCH: the objects that include a header PATCH changes
# which the pristine tree does not have (include/linux/stack_reclaim.h,
# the trace events), directly or through a header of their own directory
# (kernel/sched/sched.h), so that a step that changes such a header also
# compiles the scheduler that calls its hooks. Pristine headers are left
# out: the users of sched.h are the whole kernel (bisect.sh full).
header_users() {
	local h u
	sed -n 's,^+++ b/include/\(.*\.h\)$,\1,p' "$1" | sort -u |
		while read -r h; do
			[ -e "$BUILD/src/pristine/include/$h" ] && continue
			grep -rlF --include='*.[ch]' "#include <$h>" \
				"$SRC"/{kernel,mm,fs,drivers/android,arch/$SRCARCH} || true
		done | while read -r u; do
			case "$u" in
			*.c) echo "$u" ;;
			*.h) grep -lF "#include \"${u##*/}\"" "${u%/*}"/*.c || true ;;
			esac
		done | sed "s|^$SRC/||;s|\\.c\$||" | objects_of
}

# objects_of: for each DIR/NAME (no .c) on stdin, the object that
# compiles it on this arch and config: its own .o, or that of the file
# that #includes it (kernel/sched's build_utility.c includes loadavg.c;
# stack_reclaim.c its KUnit file). Sorted, each once.
objects_of() {
	local c dir inc
	sort -u | while read -r c; do
		case "$c" in
		arch/*) [[ "$c" == arch/$SRCARCH/* ]] || continue ;;
		esac
		[ -f "$SRC/$c.c" ] || continue
		dir=${c%/*}
		inc=$(grep -lF "#include \"${c##*/}.c\"" "$SRC/$dir"/*.c |
			head -1 || true)
		[ -n "$inc" ] && c=$dir/$(basename "$inc" .c)
		configured "$c" && echo "$c.o"
	done | sort -u
}

# configured DIR/NAME: the config builds DIR/NAME.o. Kbuild compiles a
# single-object target whether or not the config selects it (so with
# MEMCG=n, mm/memcontrol.o fails on missing declarations, which is no
# error of the series). An object is built when some Makefile line that
# names it ("obj-$(CONFIG_X) += NAME.o", or "comp-$(CONFIG_X) := NAME.o"
# for a composite comp.o, itself checked the same way) has its option
# set. Objects no Makefile line names count as built.
configured() {
	local dir=${1%/*} name=${1##*/} lines opt comp
	lines=$(sed -e ':a' -e '/\\$/N; s/\\\n/ /; ta' "$SRC/$dir/Makefile" |
		awk -v o="$name.o" '{ for (i = 3; i <= NF; i++) if ($i == o) {
			opt = "y"
			if (match($1, /\$\(CONFIG_[A-Z0-9_]+\)/))
				opt = substr($1, RSTART + 2, RLENGTH - 3)
			comp = $1
			sub(/-(y|\$\(CONFIG_[A-Z0-9_]+\))$/, "", comp)
			print opt, comp
			break } }')
	[ -z "$lines" ] && return 0
	while read -r opt comp; do
		[ "$opt" = y ] || grep -qE "^$opt=[ym]" "$KOUT/.config" || continue
		case "$comp" in
		obj|lib|"$name") return 0 ;;
		esac
		configured "$dir/$comp" && return 0
	done <<< "$lines"
	return 1
}

# Write the commits of the editing tree after tag 'pristine' to DIR as
# numbered patches plus a series file. Deterministic: no commit ids, no
# version signature, fixed abbreviation.
export_series() {
	git -C "$BUILD/tree" format-patch -q --zero-commit --no-signature \
		--no-numbered --abbrev=12 -o "$1" pristine..HEAD
	(cd "$1" && ls -- *.patch 2>/dev/null || true) > "$1/series"
	cover_letter > "$1/0000-cover-letter.patch"
}

# cover_letter: the series' 0000 mail on stdout, in git format-patch's
# form: cover/letter.txt (subject line, then the text), the last measured
# table (cover/bench.md, copied there from a `make bench` report), and
# the shortlog and diffstat of $BUILD/tree. Not in patches/series (it has
# no diff); as deterministic as the patches (the last commit's date).
cover_letter() {
	local t=$BUILD/tree n
	n=$(git -C "$t" rev-list --count pristine..HEAD)
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	git -C "$t" log -1 --format='From: %an <%ae>%nDate: %aD' HEAD
	printf 'Subject: [PATCH %02d/%02d] %s\n\n' 0 "$n" "$(head -1 "$TOP/cover/letter.txt")"
	tail -n +3 "$TOP/cover/letter.txt"
	echo
	cat "$TOP/cover/bench.md"
	echo
	git -C "$t" shortlog pristine..HEAD
	echo
	git -C "$t" diff --stat=72 --summary pristine..HEAD
	echo "-- "
	echo "$SRC_PKG $(src_version)"
}
