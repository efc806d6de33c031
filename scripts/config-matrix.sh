#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# config-matrix.sh [quick|full]: the feature in the configurations users
# build that the test kernels are not: uniprocessor, PREEMPT_RT, MEMCG=n,
# NUMA=n, each preemption model, and binder as a module (Debian's
# choice). Each entry is the feature config
# (configs base, arch, prod, sites, rkstack) plus a few overrides, and one
# of three checks:
#   refuse   Kconfig must drop CONFIG_RECLAIMABLE_STACK (olddefconfig only);
#   compile  every C file the series touches compiles (quick: seconds to
#            minutes, one shared output directory, no link);
#   build    the whole kernel builds and links (full).
# `make check` runs the quick form (refusals, and compile entries that
# pair two options each; PREEMPT_NONE, the third preemption model, is
# the test kernels' own, built and booted there); `make matrix` runs the full form, one entry per
# option, each a full build. One result line per entry.
. "$(dirname "$0")/lib.sh"

mode=${1:-quick}
CONFIG=rkstack
FRAGMENTS="base arch-$ARCH prod sites rkstack"

# name:check:override[,override...] (an override is CONFIG_X=y or X=n)
quick="up:refuse:SMP=n
	rt:refuse:EXPERT=y,PREEMPT_RT=y
	memcg-off+voluntary:compile:MEMCG=n,PREEMPT_VOLUNTARY=y
	numa-off+full:compile:NUMA=n,PREEMPT=y"
full="up:refuse:SMP=n
	rt:refuse:EXPERT=y,PREEMPT_RT=y
	memcg-off:build:MEMCG=n
	numa-off:build:NUMA=n
	preempt-none:build:PREEMPT_NONE=y
	preempt-voluntary:build:PREEMPT_VOLUNTARY=y
	preempt-full:build:PREEMPT=y
	binder-module:build:MODULES=y,ANDROID_BINDER_IPC=m"
case "$mode" in
quick) entries=$quick ;;
full) entries=$full ;;
*) die "usage: $0 [quick|full]" ;;
esac

results_open "config-matrix-$ARCH-$mode"

# configure NAME OVERRIDES: tinyconfig + fragments + overrides in $KOUT.
configure() {
	local frag=$KOUT/matrix-$1.frag f o
	mkdir -p "$KOUT"
	: > "$frag"
	IFS=, read -ra o <<< "$2"
	for f in "${o[@]}"; do
		case "$f" in
		*=n) echo "# CONFIG_${f%=n} is not set" >> "$frag" ;;
		*) echo "CONFIG_$f" >> "$frag" ;;
		esac
	done
	local frags=()
	for f in $FRAGMENTS; do frags+=("$TOP/configs/$f"); done
	kmake tinyconfig >/dev/null
	KCONFIG_CONFIG="$KOUT/.config" "$SRC/scripts/kconfig/merge_config.sh" \
		-m -O "$KOUT" "$KOUT/.config" "${frags[@]}" "$frag" >/dev/null
	kmake olddefconfig >/dev/null
	# The overrides themselves must hold, or the entry tests nothing.
	"$TOP/scripts/config-check.sh" "$KOUT/.config" "$frag" >/dev/null
}

has_feature() { grep -q '^CONFIG_RECLAIMABLE_STACK=y' "$KOUT/.config"; }

t0=$(date +%s)
for e in $entries; do
	IFS=: read -r name check overrides <<< "$e"
	tag="matrix/$ARCH/$name"
	KOUT=$BUILD/$ARCH-matrix
	[ "$check" = build ] && KOUT=$BUILD/$ARCH-matrix-$name
	log "config matrix: $name ($check: $overrides)"
	if ! configure "$name" "$overrides" 2> "$LOGS/matrix-$name.log"; then
		result fail "$tag" "overrides did not survive olddefconfig: $(tail -3 "$LOGS/matrix-$name.log" | tr '\n' ' ')"
		continue
	fi
	case "$check" in
	refuse)
		if has_feature; then
			result fail "$tag" "Kconfig offers the feature with $overrides"
		else
			result ok "$tag"
		fi
		continue
		;;
	esac
	if ! has_feature; then
		result fail "$tag" "CONFIG_RECLAIMABLE_STACK did not survive with $overrides"
		continue
	fi
	# Judged by the compiler's diagnostics (touched_objects() lists only
	# objects this config builds).
	rc=0
	if [ "$check" = compile ]; then
		mapfile -t objs < <(touched_objects)
		# An empty list would make kbuild build the whole kernel.
		[ ${#objs[@]} -gt 0 ] || die "no objects found in patches/"
		kmake prepare >> "$LOGS/matrix-$name.log" 2>&1 || rc=$?
		[ $rc -ne 0 ] ||
			kmake -k "${objs[@]}" >> "$LOGS/matrix-$name.log" 2>&1 || true
	else
		# With modules, modpost finds the symbols they use that the
		# series did not export (the wait-site guard is inline).
		targets=("${KIMAGE##*/}")
		grep -q '^CONFIG_MODULES=y' "$KOUT/.config" && targets+=(modules)
		kmake "${targets[@]}" >> "$LOGS/matrix-$name.log" 2>&1 || rc=$?
	fi
	if [ $rc -ne 0 ] || grep -qE '(error|warning):' "$LOGS/matrix-$name.log"; then
		grep -E '(error|warning):' "$LOGS/matrix-$name.log" | head -10 >&2 || true
		result fail "$tag" "build failed or warned; see $LOGS/matrix-$name.log"
	else
		result ok "$tag"
	fi
done
log "config matrix ($mode) took $(( $(date +%s) - t0 )) s"
