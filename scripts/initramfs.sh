#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest initramfs: busybox-static, /init, and every tests/*.c
# compiled statically against the unpacked tree's uapi headers and its
# kselftest harness; on x86_64 also Debian's perf and rt-tests with their
# shared libraries (GUEST_TOOLS, for bench/tools_ab.c).
. "$(dirname "$0")/lib.sh"

out=$BUILD/$ARCH-initramfs
root=$out/root
mkdir -p "$out"

if [ ! -f "$HDR/.stamp" ] || [ "$SRC/.series-stamp" -nt "$HDR/.stamp" ]; then
	log "installing uapi headers for $ARCH"
	make -C "$SRC" O="$HDR/obj" ARCH="$KARCH" INSTALL_HDR_PATH="$HDR" \
		headers_install >/dev/null
	touch "$HDR/.stamp"
fi

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,mnt,tests,etc}
cp "$BUSYBOX" "$root/bin/busybox"
for t in sh mount umount mkdir cat echo grep sed awk sleep poweroff sync \
	 ls dmesg head tail wc cut tr seq date uname true false test ps kill \
	 basename dirname nproc rm rmdir timeout touch; do
	ln -s busybox "$root/bin/$t"
done
install -m 755 "$TOP/guest/init" "$root/init"
mkdir -p "$root/bench"
install -m 755 "$TOP/guest/tcg_keyflip" "$root/bench/tcg_keyflip"
[ -z "$GUEST_TOOLS" ] || "$TOP/scripts/copy-dynamic.sh" "$root" $GUEST_TOOLS

# tests/*.c go to /tests (run by "all"), bench/*.c (demo and benchmarks,
# run only by name) to /bench, each built by its Makefile (tests/rk.mk,
# kselftest's lib.mk), which rebuilds what is stale.
for dir in tests bench; do
	mkdir -p "$out/$dir" "$root/$dir"
	selftest_make -s -C "$TOP/$dir" SELFTESTS="$SRC/tools/testing/selftests" \
		OUTPUT="$out/$dir" CC="$TEST_CC" KHDR_INCLUDES="-isystem $HDR/include" \
		RK_DEPS="$HDR/.stamp" || die "the programs of $dir/ failed to build"
	# What the sources make now, not what a removed one left behind.
	for c in "$TOP/$dir"/*.c; do
		cp "$out/$dir/$(basename "$c" .c)" "$root/$dir/"
	done
done

# Upstream kselftests, when scripts/kselftests.sh has built them.
if [ -d "$BUILD/$ARCH-kselftests" ]; then
	cp -r "$BUILD/$ARCH-kselftests" "$root/kselftests"
	ln -s ../kselftests/run "$root/bench/kselftests"
	ln -s ../kselftests/rate "$root/bench/ksrate"
fi

# Written aside and renamed: other guests may be booting the current one.
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) > "$out/initramfs.cpio.new"
mv "$out/initramfs.cpio.new" "$out/initramfs.cpio"
echo "$out/initramfs.cpio"
