#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tcg-keyflip.sh [N]: does this QEMU's TCG survive text patching? Boots the
# x86_64 base kernel (the feature built out) BOOTS times (default 3) with
# multi-threaded TCG (BOOT_TCG=multi) and once with BOOT_TCG=single, each
# flipping the sched_switch tracepoint N times (default 100; single gets
# 10 x N) under two pipe loads (guest/tcg_keyflip). On QEMU 7.2 (Debian
# 12) every multi-threaded boot oopsed ("Oops: int3"), the single-threaded
# one did not: why boot.sh has BOOT_TCG. Results in results.d/tcg-keyflip-*.
export ARCH=x86_64 CONFIG=base
. "$(dirname "$0")/lib.sh"

prepare_guest
n=${1:-100}
for i in $(seq "${BOOTS:-3}"); do
	BOOT_TCG=multi "$TOP/scripts/boot.sh" "tcg-keyflip-multi-$i" tcg_keyflip "$n,2" || true
done
BOOT_TCG=single "$TOP/scripts/boot.sh" "tcg-keyflip-single" tcg_keyflip "$((n * 10)),2" || true
