#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# boot.sh TAG TESTS [ARGS]: boot the ($ARCH, $CONFIG) kernel under QEMU (TCG)
# running TESTS ("all", "a,b", or "shell" for an interactive guest), keep
# the console in $LOGS/TAG.log and print its parsed results (also in
# $RESULTS_D/TAG). Exit status non-zero if any of them is a FAIL.
#   BOOT_CLOCK=wall (default) or icount: QEMU's deterministic clock, guest
#   time advancing one nanosecond per guest instruction (single-threaded
#   TCG, slower; a guest clock_gettime() delta counts instructions).
#   BOOT_DISK=IMAGE: boot from that ext4 image on a virtio disk
#   (root=/dev/vda, its own /sbin/init) instead of the initramfs; the
#   guest's writes go to a temporary overlay, never to IMAGE.
. "$(dirname "$0")/lib.sh"

tag=$1 tests=$2 args=${3:-}
mem=${GUEST_MEM:-2048}
timeout=${BOOT_TIMEOUT:-$((900 * TIME_SCALE))}
kernel=$KOUT/$KIMAGE
initrd=$BUILD/$ARCH-initramfs/initramfs.cpio
[ -f "$kernel" ] || die "no kernel at $kernel: run 'make kernel'"
disk=${BOOT_DISK:-}
if [ -n "$disk" ]; then
	[ -f "$disk" ] || die "BOOT_DISK=$disk: no such image"
	boot=(-drive "file=$disk,if=virtio,format=raw,snapshot=on")
	rootargs="root=/dev/vda rootfstype=ext4 rw"
else
	[ -f "$initrd" ] || die "no initramfs at $initrd: run 'make initramfs'"
	boot=(-initrd "$initrd")
	rootargs=
fi
mkdir -p "$LOGS"

# Two NUMA nodes, one CPU each, so node-aware code paths are exercised.
half=$((mem / 2))
numa="-object memory-backend-ram,id=m0,size=${half}M -numa node,nodeid=0,cpus=0,memdev=m0
      -object memory-backend-ram,id=m1,size=${half}M -numa node,nodeid=1,cpus=1,memdev=m1"
cmdline="console=$QEMU_CONSOLE panic_on_warn=1 oops=panic hung_task_panic=1 softlockup_panic=1
	 panic=-1 sysctl.kernel.hung_task_timeout_secs=60 rk.tests=$tests
	 ${args:+rk.args=$args} $rootargs $CONFIG_ARGS ${KERNEL_ARGS:-}"
# pvpanic with -action panic=none: panic() calls its notifiers (pvpanic's
# first) before console_flush_on_panic(), and when the other CPU held the
# console lock at the time, the panic message is still unprinted; a QEMU
# that exited on the pvpanic event lost it (three silent "exit status 1"
# deaths on 2026-12-06). Now the guest flushes its console and reboots
# (panic=-1), which -no-reboot turns into an exit; the console scan
# reports the panic.
qemu=($QEMU $QEMU_MACHINE -smp 2,sockets=2 -m "$mem" $numa -kernel "$kernel"
      "${boot[@]}" -append "$(echo $cmdline)" -nographic -no-reboot
      $QEMU_PANIC_DEV -action panic=none)
case "${BOOT_CLOCK:-wall}" in
wall) ;;
icount) qemu+=(-icount shift=0,sleep=off,align=off) ;;
*) die "BOOT_CLOCK=$BOOT_CLOCK: want wall or icount" ;;
esac
# BOOT_TCG=single: one host thread runs every vCPU. QEMU 7.2's multi-threaded
# TCG lets a vCPU run an int3 that text_poke_bp() has already taken out
# again: a static key or tracepoint flipped while the other vCPU schedules
# oopses ("Oops: int3" at the patched site). Unpatched by our series too:
# on the base kernel, flipping the sched_switch tracepoint 100 times under
# two pipe loads oopsed in 3 boots of 3; with thread=single, 1000 flips
# did not (scripts/tcg-keyflip.sh). Boot-time flips hit it too (a demo
# boot oopsed in try_to_wake_up() before /init), so x86_64 boots so by
# default (BOOT_TCG_DEFAULT, lib.sh); -icount implies it.
case "${BOOT_TCG:-$BOOT_TCG_DEFAULT}" in
multi) ;;
single) [ "${BOOT_CLOCK:-wall}" = icount ] || qemu+=(-accel tcg,thread=single) ;;
*) die "BOOT_TCG=$BOOT_TCG: want multi or single" ;;
esac

if [ "$tests" = shell ]; then
	exec "${qemu[@]}"
fi

log "booting $ARCH-$CONFIG: $tests (console: $LOGS/$tag.log)"
rc=0
timeout --foreground -k 10 "$timeout" "${qemu[@]}" < /dev/null \
	> "$LOGS/$tag.log" 2>&1 || rc=$?
[ $rc -eq 124 ] && echo "@@RK-TIMEOUT after ${timeout}s" >> "$LOGS/$tag.log"
# Its exit status is ours: non-zero on any FAIL.
exec "$TOP/scripts/results.sh" "$tag" "$LOGS/$tag.log" "$rc"
