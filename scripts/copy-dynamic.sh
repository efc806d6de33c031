#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# copy-dynamic.sh ROOT PROGRAM...: put host programs into the guest tree
# ROOT at the paths they have on the host, with every shared library ldd
# resolves for them and the dynamic loader, so that they run in a guest
# of the host's arch without an ld.so.cache (the loader's default
# directories are the ones ldd names). A program the host lacks is left
# out with a warning: whatever runs it in the guest then fails there.
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || die "usage: copy-dynamic.sh ROOT PROGRAM..."
root=$1
shift
[ -d "$root" ] || die "copy-dynamic.sh: no directory $root"

put() { # host path -> the same path under $root, symlinks followed
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}

for prog in "$@"; do
	if [ ! -x "$prog" ]; then
		echo "warning: $prog is not installed (make deps); left out of the guest" >&2
		continue
	fi
	put "$prog"
	# Static programs: ldd says "not a dynamic executable" and fails.
	out=$(LC_ALL=C ldd "$prog" 2>&1) || continue
	! grep -q 'not found' <<<"$out" || die "$prog: a library is missing: $(grep 'not found' <<<"$out")"
	# "libm.so.6 => /lib/.../libm.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)";
	# the vDSO has no path.
	for lib in $(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out"); do
		[ -e "$root$lib" ] || put "$lib"
	done
done
