#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bisect.sh [objects|full]: is every step of the series a kernel? The
# patches of patches/series are applied one by one to a copy of the
# pristine source ($BUILD/bisect/src), and after each one the x86_64
# kernel is compiled with the feature on (rkstack) and off (base), each in
# its own output directory, incrementally (ccache):
#   objects  (default) the objects that patch changes which the config
#            builds (touched_objects()), and those that include a header
#            of the series it changes (header_users(): the scheduler when
#            stack_reclaim.h changes): compile errors and warnings there;
#            not link errors, nor breakage in a file the patch leaves
#            alone that includes a pristine header it changed (sched.h);
#   full     the whole kernel image: everything, at the price of a near
#            full rebuild after each patch that changes a common header.
# Each config is the one its fragments give on the whole series, put
# through olddefconfig at each step (which drops the options a step does
# not have yet). checkpatch.pl --strict runs on every patch too
# (checkpatch.sh).
#
# The series offers the feature on x86 only late, in review order (the
# unwinder hardening first), so up to there "on" would compile what
# "off" does. The x86 enable patch (found as the one patch that touches
# arch/x86/Kconfig; it must touch no file another patch touches) is
# therefore applied early, right after the patch that defines
# HAVE_ARCH_RECLAIMABLE_STACK, and skipped where the series reaches it:
# every step from there on compiles with the feature on. "off" is then
# RECLAIMABLE_STACK=n with the arch hook selected, as a distribution
# kernel with the whole series and the feature not chosen.
#
# One PASS/FAIL per patch and config, in
# $RESULTS_D/bisect-MODE; a failure's log is $LOGS/bisect-NNNN-CONFIG.log.
export ARCH=${ARCH:-x86_64}
. "$(dirname "$0")/lib.sh"

mode=${1:-objects}
case "$mode" in
objects|full) ;;
*) die "usage: $0 [objects|full]" ;;
esac
configs="rkstack base"
root=$BUILD/bisect
export KSRC=$root/src KOUT_PREFIX=bisect/

t0=$(date +%s)
"$TOP/scripts/source.sh"
"$TOP/scripts/checkpatch.sh" > /dev/null || true
results_open "bisect-$mode"
mkdir -p "$root" "$LOGS"
# The configs of the whole series, made in the patched tree.
for c in $configs; do
	CONFIG=$c KSRC=$BUILD/src/linux KOUT_PREFIX=bisect/ KERNEL_CONFIGURE_ONLY=1 \
		"$TOP/scripts/kernel.sh"
	cp "$root/$ARCH-$c/.config" "$root/$ARCH-$c.config"
done
# Hard links: patch(1) replaces the files it changes, never writes through.
rm -rf "$KSRC"
cp -al "$BUILD/src/pristine" "$KSRC"

series=$(series_patches)
early=$(grep -l '^+++ b/arch/x86/Kconfig$' $series) ||
	die "no patch of the series touches arch/x86/Kconfig"
[ "$(wc -w <<< "$early")" -eq 1 ] || die "more than one x86 enable patch: $early"
defines=$(grep -l '^+config HAVE_ARCH_RECLAIMABLE_STACK$' $series) ||
	die "no patch defines HAVE_ARCH_RECLAIMABLE_STACK"
for q in $series; do
	[ "$q" = "$early" ] && continue
	shared=$(comm -12 <(patch_files "$early") <(patch_files "$q"))
	[ -z "$shared" ] || die "${early##*/} cannot move: ${q##*/} also changes $shared"
done

# apply PATCH: onto $KSRC, exactly (no fuzz).
apply() {
	patch -d "$KSRC" -p1 -F0 -N --no-backup-if-mismatch -s < "$1" ||
		die "${1##*/} does not apply (see make check's am-test)"
}

n=0 failed=0
for path in $series; do
	p=${path##*/}
	n=$((n + 1))
	num=$(printf '%04d' "$n")
	if [ "$path" = "$early" ]; then
		log "$num ${p%.patch}: applied early, after ${defines##*/}"
	else
		apply "$path"
	fi
	[ "$path" != "$defines" ] || apply "$early"
	for c in $configs; do
		KOUT=$root/$ARCH-$c
		tag="bisect/$num-$c"
		out=$LOGS/bisect-$num-$c.log
		cp "$root/$ARCH-$c.config" "$KOUT/.config"
		rc=0
		kmake olddefconfig > "$out" 2>&1 || rc=$?
		if [ "$mode" = full ]; then
			[ $rc -ne 0 ] || kmake "${KIMAGE##*/}" >> "$out" 2>&1 || rc=$?
			what="kernel"
		else
			mapfile -t objs < <(export SRC=$KSRC
				{ touched_objects "$path"
				  header_users "$path"; } | sort -u)
			what="${#objs[@]} object(s)"
			if [ $rc -eq 0 ] && [ ${#objs[@]} -gt 0 ]; then
				kmake prepare >> "$out" 2>&1 &&
					kmake "${objs[@]}" >> "$out" 2>&1 || rc=$?
			fi
		fi
		if [ $rc -ne 0 ] || grep -qE '(warning|error):' "$out"; then
			result fail "$tag" "${p%.patch}: $what with $c failed or warned; see $out"
			grep -E '(warning|error):' "$out" | head -5 | result_excerpt
			failed=$((failed + 1))
		else
			result ok "$tag" > /dev/null
			rm -f "$out"
		fi
	done
	log "$num ${p%.patch}: built ($mode)"
done
log "bisect ($mode): $n patches x ($configs), $failed failure(s), $(( $(date +%s) - t0 )) s"
results_total "$(results_file)" "$RESULTS_D/checkpatch"
[ "$failed" -eq 0 ]
