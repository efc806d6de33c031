#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rootfs-image.sh TARBALL CENSUS VMLINUX: the ext4 image make realworld
# boots: the cached Debian tarball (rootfs.sh), the test driver of
# guest/realworld/ as a systemd unit, the JVM server (RkPool.java and its
# unit, started by the jvm step), the census program, the kernel's
# vmlinux for drgn (where Debian's -dbg packages put it, drgn's default
# path: /usr/lib/debug/boot/vmlinux-RELEASE), the servers' settings
# (memcached -t 16 -c 4096, redis io-threads 4, mariadb max_connections 1100).
# Rebuilt every time (47 s here: a 1.6 GB image, 890 MB used); prints its path.
. "$(dirname "$0")/lib.sh"

tarball=$1 census=$2 vmlinux=$3
[ -s "$tarball" ] || die "rootfs-image.sh: no tarball '$tarball' (scripts/rootfs.sh builds it)"
[ -x "$census" ] || die "rootfs-image.sh: no census program '$census' (scripts/initramfs.sh builds it)"
release=$(cat "$(dirname "$vmlinux")/include/config/kernel.release" 2>/dev/null) ||
	die "rootfs-image.sh: no kernel build beside '$vmlinux' (scripts/kernel.sh builds it)"
dir=$BUILD/rootfs
tree=$dir/tree img=$dir/realworld-$ARCH.ext4
src=$TOP/guest/realworld

rm -rf "$tree"
mkdir -p "$tree"
tar -C "$tree" -xf "$tarball"

install -D -m 755 "$src/run" "$tree/usr/local/lib/rk/run"
for py in rktap.py servers.py kstack_readers.py blocktimes.py; do
	install -D -m 755 "$src/$py" "$tree/usr/local/lib/rk/$py"
done
install -D -m 755 "$census" "$tree/usr/local/bin/census"
# drgn 0.0.22 knows the ORC format of Linux 4.14 to 6.2 only; 6.3 and 6.4
# changed the meaning of an entry's bits. Renamed, the ORC tables are not
# found and drgn unwinds with the DWARF CFI (.debug_frame), which it prefers
# anyway, instead of misreading ORC where the CFI has no entry (assembly).
mkdir -p "$tree/usr/lib/debug/boot"
objcopy --rename-section .orc_unwind=.orc_unwind.v3 \
	--rename-section .orc_unwind_ip=.orc_unwind_ip.v3 \
	"$vmlinux" "$tree/usr/lib/debug/boot/vmlinux-$release"
install -D -m 644 "$src/RkPool.java" "$tree/usr/local/lib/rk/RkPool.java"
for unit in rk-realworld.service rk-jvm.service; do
	install -D -m 644 "$src/$unit" "$tree/etc/systemd/system/$unit"
done
ln -sf ../rk-realworld.service "$tree/etc/systemd/system/multi-user.target.wants/rk-realworld.service"
# The console carries the framing: no login prompt on it.
ln -sf /dev/null "$tree/etc/systemd/system/serial-getty@$QEMU_CONSOLE.service"
echo rkreal > "$tree/etc/hostname"

conf=$tree/etc/memcached.conf
[ -f "$conf" ] || die "$conf missing"
sed -i '/^-[ct] /d' "$conf"
printf -- '-c 4096\n-t 16\n' >> "$conf"
conf=$tree/etc/redis/redis.conf
[ -f "$conf" ] || die "$conf missing"
printf 'io-threads 4\nio-threads-do-reads yes\n' >> "$conf"
[ -d "$tree/etc/mysql/mariadb.conf.d" ] || die "$tree/etc/mysql/mariadb.conf.d missing"
printf '[mysqld]\nmax_connections = 1100\n' > "$tree/etc/mysql/mariadb.conf.d/90-rk.cnf"

mb=$(( $(du -sm "$tree" | cut -f1) * 13 / 10 + 256 ))
rm -f "$img"
truncate -s "${mb}M" "$img"
mke2fs -q -F -t ext4 -L rkreal -d "$tree" "$img" || die "mke2fs -d $tree failed"
echo "$img"
