#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Model-check model/stack_reclaim.pml (the reclaimable stack state machine)
# with spin. For each configuration (bounds on wakeups, racing wakers,
# shrinker calls, sysctl writes) it verifies exhaustively:
#   safety-<cfg>    assertions (properties a, c, d, e, legal transitions,
#                   WARNs) and invalid end states (a task stuck forever)
#   liveness-<cfg>  ltl `live` [] (cond -> <> !cond) under weak fairness
#                   (pan -a -f): no lost wakeup (property b)
# With MODEL_MUTANTS=1 (the default) it also builds every deliberate bug
# (-DBUG_xxx) and requires that some run detects it: mutant-<BUG> passes only
# if pan reports an error, and its trail is kept in the log.
#
# Prints "PASS model/<name>" or "FAIL model/<name>: <reason>" per result,
# into $RESULTS_D/model, keeps pan's output in $LOGS/model-<name>.log,
# exits non-zero on any failure. MODEL_JOBS runs in parallel (default nproc).
. "$(dirname "$0")/lib.sh"

command -v spin >/dev/null ||
	die "spin not found: run 'make deps' (as root)"
command -v gcc >/dev/null ||
	die "gcc not found: apt-get install -y --no-install-recommends gcc libc6-dev"

MODEL=$TOP/model/stack_reclaim.pml
OUT=$BUILD/model
MODEL_MUTANTS=${MODEL_MUTANTS:-1}
JOBS=${MODEL_JOBS:-$(nproc)}
DEPTH=${MODEL_DEPTH:-20000}	# pan -m; a truncated search is a failure
MEMLIM=${MODEL_MEMLIM:-2048}	# MB per pan
[ -f "$MODEL" ] || die "$MODEL missing"
mkdir -p "$OUT" "$LOGS"

# name:defines (comma separated). Each is small enough to be exhaustive.
CONFIGS="core:-DROUNDS=2,-DNRACE=0,-DNSHRINK=2,-DNTOGGLE=0
	race:-DROUNDS=1,-DNRACE=1,-DNSHRINK=2,-DNTOGGLE=0
	reclaim:-DROUNDS=1,-DNRACE=0,-DNSHRINK=3,-DNTOGGLE=0
	toggle:-DROUNDS=1,-DNRACE=0,-DNSHRINK=2,-DNTOGGLE=2"

# Deliberate bugs (see the top comment of the model), each with the
# configuration expected to catch it first; if that one does not, every
# configuration is tried, safety and then liveness, before calling it missed.
# MODEL_MUTANT_LIST replaces the list (e.g. "BUG_NONE:core" shows a FAIL).
MUTANTS=${MODEL_MUTANT_LIST:-"BUG_SRECL_AFTER_UNLOCK:core BUG_SWITCHOUT_STORE:core
	BUG_SHRINK_NO_INUSE:core BUG_PENDING_NO_REF:core BUG_PENDING_BIT_FIRST:core
	BUG_HOOK_AFTER_ON_CPU:core BUG_WAKE_KEY_OFF:toggle BUG_SCAN_LRU_FIRST:core
	BUG_BLOCK_IGNORES_ON_CPU:core"}

cfg_defs() { local c; for c in $CONFIGS; do [ "${c%%:*}" = "$1" ] && echo "${c#*:}"; done; }

# pan NAME MODE DEFINES: build and run one verification in $OUT/NAME.
# Writes $OUT/NAME/status: "ok", "error" (pan found a violation; the trail is
# in the log) or "incomplete <reason>".
pan_run() {
	local name=$1 mode=$2 defs=${3//,/ } d=$OUT/$1 log=$LOGS/model-$1.log
	local cflags="${MODEL_CFLAGS:--O0} -w -DCOLLAPSE -DMEMLIM=$MEMLIM" args="-m$DEPTH -w22"

	rm -rf "$d"
	mkdir -p "$d"
	cp "$MODEL" "$d/"
	if [ "$mode" = safety ]; then
		cflags+=" -DNOCLAIM"
	else
		cflags+=" -DNFAIR=3"
		args+=" -a -f -N live"
	fi
	{
		echo "# $name: spin $defs -a stack_reclaim.pml; gcc $cflags; ./pan $args"
		(cd "$d" && spin $defs -a stack_reclaim.pml && gcc $cflags -o pan pan.c) 2>&1 ||
			{ echo "incomplete: spin/gcc failed" > "$d/status"; exit 0; }
		local t0=$(date +%s.%N)
		(cd "$d" && ./pan $args) 2>&1
		echo "# pan took $(echo "$(date +%s.%N) - $t0" | bc) s"
	} > "$log"
	[ -f "$d/status" ] && return 0
	if grep -q 'errors: [1-9]' "$log"; then
		echo error > "$d/status"
		# the counterexample, replayed: first the steps, then the end state
		{
			echo "# trail (spin -t -p -g):"
			(cd "$d" && spin $defs -t -p -g stack_reclaim.pml) 2>&1
		} >> "$log"
	elif grep -q 'max search depth too small' "$log"; then
		echo "incomplete: depth limit $DEPTH reached" > "$d/status"
	elif grep -q 'reached -DMEMLIM bound\|out of memory' "$log"; then
		echo "incomplete: memory limit $MEMLIM MB reached" > "$d/status"
	elif grep -q 'Search not completed\|error:' "$log"; then
		echo "incomplete: $(grep -m1 'Search not completed\|error:' "$log")" > "$d/status"
	elif grep -q 'errors: 0' "$log"; then
		echo ok > "$d/status"
	else
		echo "incomplete: no result from pan" > "$d/status"
	fi
}

# Run "NAME MODE DEFINES" lines from stdin, JOBS at a time.
run_all() {
	local name mode defs
	while read -r name mode defs; do
		[ -n "$name" ] || continue
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
		pan_run "$name" "$mode" "$defs" &
	done
	wait
}

status() { cat "$OUT/$1/status" 2>/dev/null || echo "incomplete: not run"; }
states() { grep -m1 'states, stored' "$LOGS/model-$1.log" 2>/dev/null | awk '{print $1}'; }

fail=0
results_open model
# verdict pass|fail NAME [WHY]: a result, remembering any failure.
verdict() {
	result "$@"
	[ "$1" != fail ] || fail=1
}

t0=$(date +%s)
log "model: spin on $MODEL, results in $LOGS/model-*.log"

# The model as written: every property must hold, every search complete.
for c in $CONFIGS; do
	echo "safety-${c%%:*} safety ${c#*:}"
	echo "liveness-${c%%:*} liveness ${c#*:}"
done | run_all

for c in $CONFIGS; do
	for m in safety liveness; do
		n=$m-${c%%:*}
		s=$(status "$n")
		case $s in
		ok) verdict pass "model/$n" ;;
		error) verdict fail "model/$n" "property violated, trail in $LOGS/model-$n.log" ;;
		*) verdict fail "model/$n" "${s#incomplete: } (see $LOGS/model-$n.log)" ;;
		esac
		log "$n: $(states "$n") states"
	done
done

# Every deliberate bug must be caught (pan stops at the first violation).
if [ "$MODEL_MUTANTS" = 1 ]; then
	for bc in $MUTANTS; do
		b=${bc%%:*} c=${bc#*:}
		echo "mutant-$b-safety-$c safety $(cfg_defs "$c"),-D$b"
	done | run_all
	for bc in $MUTANTS; do
		b=${bc%%:*} first=${bc#*:} caught=
		[ "$(status "mutant-$b-safety-$first")" = error ] && caught=mutant-$b-safety-$first
		if [ -z "$caught" ]; then
			for m in safety liveness; do
				for c in $CONFIGS; do
					n=mutant-$b-$m-${c%%:*}
					[ -f "$OUT/$n/status" ] || pan_run "$n" "$m" "${c#*:},-D$b"
					[ "$(status "$n")" = error ] && { caught=$n; break 2; }
				done
			done
		fi
		if [ -n "$caught" ]; then
			# the log of the run that caught it, under the mutant's name
			cp "$LOGS/model-$caught.log" "$LOGS/model-mutant-$b.log"
			verdict pass "model/mutant-$b"
			log "mutant-$b caught by ${caught#mutant-$b-}: $(grep -m1 -o 'pan:1: .*' "$LOGS/model-$caught.log" || true)"
		else
			verdict fail "model/mutant-$b" "not detected by any run (see $LOGS/model-mutant-$b-*.log)"
		fi
	done
fi

log "model: took $(( $(date +%s) - t0 )) s"
exit $fail
