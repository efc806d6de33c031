#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# config-check.sh CONFIG FRAGMENT...: every option a fragment sets must have
# the same value in the final .config; name each one that did not survive.
. "$(dirname "$0")/lib.sh"

cfg=$1; shift
bad=0
while read -r line; do
	case "$line" in
	CONFIG_*=*)		want=$line; sym=${line%%=*} ;;
	'# CONFIG_'*' is not set') sym=${line#\# }; sym=${sym%% *}; want=$line ;;
	*)			continue ;;
	esac
	got=$(grep -E "^($sym=|# $sym is not set)" "$cfg" || true)
	# An unset bool may simply be absent (its dependencies are off).
	[ -z "$got" ] && [ "${want#\# }" != "$want" ] && continue
	if [ "$got" != "$want" ]; then
		echo "config: requested '$want' but got '${got:-<absent>}'" >&2
		bad=1
	fi
done < <(cat "$@")
[ $bad -eq 0 ] || die "requested options did not survive olddefconfig (see above)"
