#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure (from tinyconfig plus the fragments of $CONFIG) and build the
# kernel for ($ARCH, $CONFIG) in its own output directory, incrementally.
# KERNEL_CONFIGURE_ONLY=1: configure, do not build (bisect.sh).
. "$(dirname "$0")/lib.sh"

mkdir -p "$KOUT" "$LOGS"
frags=()
for f in $FRAGMENTS; do
	[ -f "$TOP/configs/$f" ] || die "config fragment configs/$f missing"
	frags+=("$TOP/configs/$f")
done

stamp=$( { cat "${frags[@]}"; cat "$SRC/.series-stamp" 2>/dev/null || true; } | sha256sum | cut -c1-16)
if [ "$(cat "$KOUT/.frag-stamp" 2>/dev/null)" != "$stamp" ]; then
	log "configuring $ARCH-$CONFIG from: $FRAGMENTS"
	kmake tinyconfig >/dev/null
	KCONFIG_CONFIG="$KOUT/.config" "$SRC/scripts/kconfig/merge_config.sh" \
		-m -O "$KOUT" "$KOUT/.config" "${frags[@]}" >/dev/null
	kmake olddefconfig >/dev/null
	"$TOP/scripts/config-check.sh" "$KOUT/.config" "${frags[@]}"
	echo "$stamp" > "$KOUT/.frag-stamp"
fi

[ "${KERNEL_CONFIGURE_ONLY:-0}" = 1 ] && exit 0

log "building $ARCH-$CONFIG ($(src_version))"
if ! kmake "${KIMAGE##*/}" > "$LOGS/build-$ARCH-$CONFIG.log" 2>&1; then
	grep -E 'error|Error' "$LOGS/build-$ARCH-$CONFIG.log" | head -30 >&2
	die "kernel build failed; full log: $LOGS/build-$ARCH-$CONFIG.log"
fi
grep -E 'warning:' "$LOGS/build-$ARCH-$CONFIG.log" >&2 || true
