#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rootfs-image.sh TARBALL CENSUS: the ext4 image make realworld boots: the
# cached Debian tarball (rootfs.sh), the test driver of guest/realworld/
# as a systemd unit, the census program, the servers' settings (memcached
# -t 16 -c 4096, redis io-threads 4, mariadb max_connections 1100).
# Rebuilt every time (about half a minute); prints its path.
. "$(dirname "$0")/lib.sh"

tarball=$1 census=$2
[ -s "$tarball" ] || die "rootfs-image.sh: no tarball '$tarball' (scripts/rootfs.sh builds it)"
[ -x "$census" ] || die "rootfs-image.sh: no census program '$census' (scripts/initramfs.sh builds it)"
dir=$BUILD/rootfs
tree=$dir/tree img=$dir/realworld-$ARCH.ext4
src=$TOP/guest/realworld

rm -rf "$tree"
mkdir -p "$tree"
tar -C "$tree" -xf "$tarball"

install -D -m 755 "$src/run" "$tree/usr/local/lib/rk/run"
install -D -m 755 "$src/servers.py" "$tree/usr/local/lib/rk/servers.py"
install -D -m 755 "$census" "$tree/usr/local/bin/census"
install -D -m 644 "$src/rk-realworld.service" "$tree/etc/systemd/system/rk-realworld.service"
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
