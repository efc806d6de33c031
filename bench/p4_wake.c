// SPDX-License-Identifier: GPL-2.0
/*
 * P4: wake-to-run latency of a thread whose stack was reclaimed.
 *
 * threads= threads each FUTEX_WAIT on their own word. The waker changes
 * one thread's word, takes t0 (CLOCK_MONOTONIC) and FUTEX_WAKEs that one
 * thread, which takes t1 as soon as its futex call returns: one sample is
 * t1 - t0. Threads are woken one at a time, the next only once the last
 * is blocked again (its /proc/self/task/<tid>/stat says S) and pause_ms
 * more have passed, which also lets the per-CPU page pool (16 pages per
 * CPU, refilled by a work item once half used) fill up again.
 *
 * Modes, all threads woken once in each, order rotated every round:
 *   unreclaimed  feature on, nothing reclaimed: the ttwu hook only.
 *   fast         every stack reclaimed first (drop_caches until vmstat
 *                stack_reclaim_stacks rose by threads); the wakeup maps
 *                pages from the pool. stack_repopulate_fast must rise by
 *                >= 90% of threads (metric fast_fraction).
 *   deferred     fail_stack_repopulate (ignore-deferred=Y probability=100
 *                times=-1) fails every fast path, so each wakeup goes to
 *                the worker; stack_repopulate_deferred must rise by
 *                threads (metric deferred_fraction).
 *
 * Where the woken thread runs matters more than anything else under TCG:
 * a wakeup onto the other, idle, CPU needs the host to schedule that
 * vCPU's thread, which on a loaded host costs anywhere from 20 us to
 * milliseconds. So with pin=1 (default) the waker and every waiter share
 * CPU 0: a sample is the waker's wakeup (with the fast path's page
 * mapping, or the hand-off to the worker), the rest of its futex call,
 * its going to sleep, and the switch to the woken thread; the pool refill
 * and the repopulation worker compete on that CPU, as they do for a
 * wake-affine wakeup. (Seen with 6.12 + series under TCG: the fast
 * wakeup that takes the pool below half, every third one with 3-page
 * stacks, kicks the refill, and its WQ_HIGHPRI worker runs before the
 * woken thread: about 100 us against 25 us for the other fast wakeups.)
 * pin=0 leaves placement to the scheduler (samples then mix both cases,
 * in proportions that vary from round to round).
 *
 * On a kernel without the feature only "vanilla" runs (the same as
 * unreclaimed). Reported: per round and mode median_us; over all rounds
 * per mode p50_us, p90_us, p99_us and count (round=0), and the
 * distribution of every sample (@@RK-HIST lines, rk_bench.h) for the
 * host's plot.
 *
 * Arguments: rounds= threads= pause_ms= pin=. Any other key is an
 * error (make bench boots each program with its own arguments).
 */
#define _GNU_SOURCE
#include <sched.h>
#include "rk_sites.h"
#include "rk_bench.h"
#include "rk_pin.h"

#define MAX_THREADS	4096
#define MAX_ROUNDS	1000
#define REBLOCK_MS	10000	/* a woken thread must block again by then */

static const char *const keys[] = {
	"rounds", "threads", "pause_ms", "pin",
	NULL
};

struct waiter {
	int word;		/* the waker bumps it; -1: exit */
	int ack;		/* the thread's last seen word, before blocking */
	pid_t tid;
	int bad;
	double t1;
} __attribute__((aligned(64)));	/* one cache line each */

static struct waiter w[MAX_THREADS];
static pthread_t tids[MAX_THREADS];
static long nthreads, pause_ms, pin;

/* With pin=1: the calling thread onto CPU 0. */
static void pin_self(void)
{
	if (pin)
		rk_pin_cpu(0);
}

static void *waiter_thread(void *arg)
{
	struct waiter *me = arg;
	int seen = 0;

	me->tid = syscall(SYS_gettid);
	pin_self();
	for (;;) {
		__atomic_store_n(&me->ack, seen, __ATOMIC_RELEASE);
		while (__atomic_load_n(&me->word, __ATOMIC_ACQUIRE) == seen)
			if (rk_futex(&me->word, FUTEX_WAIT_PRIVATE, seen) &&
			    errno != EAGAIN && errno != EINTR) {
				me->bad = 1;
				return NULL;
			}
		me->t1 = rk_now_us();
		seen = __atomic_load_n(&me->word, __ATOMIC_ACQUIRE);
		if (seen < 0)
			return NULL;
	}
}

/* 1 if thread tid of this process is sleeping (state S). */
static int sleeping(pid_t tid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int s = 0;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		s = p && p[1] == ' ' && p[2] == 'S';
	}
	fclose(f);
	return s;
}

/* Wait until thread i saw word @seq and sleeps again; 0 or -1. */
static int wait_blocked(int i, int seq)
{
	for (int ms = 0; ms < REBLOCK_MS; ms++) {
		if (__atomic_load_n(&w[i].ack, __ATOMIC_ACQUIRE) == seq &&
		    sleeping(w[i].tid))
			return 0;
		rk_sleep_ms(1);
	}
	fprintf(stderr, "thread %d (tid %d) did not block again within %d ms\n",
		i, w[i].tid, REBLOCK_MS);
	return -1;
}

/* Wake every thread once, one at a time; latencies to lat[]. 0 or -1. */
static int wake_all_once(double *lat)
{
	for (int i = 0; i < nthreads; i++) {
		int seq = __atomic_load_n(&w[i].word, __ATOMIC_RELAXED) + 1;
		double t0;

		__atomic_store_n(&w[i].word, seq, __ATOMIC_RELEASE);
		t0 = rk_now_us();
		if (rk_futex(&w[i].word, FUTEX_WAKE_PRIVATE, 1) < 0 ||
		    wait_blocked(i, seq) || w[i].bad)
			return -1;
		lat[i] = w[i].t1 - t0;
		rk_sleep_ms(pause_ms);
	}
	return 0;
}

/* Reclaim every waiter's stack: drop_caches until the counter says so. */
static int reclaim_all(void)
{
	long before = rk_vmstat("stack_reclaim_stacks"), got = 0;

	for (int tries = 0; tries < 4 && got < nthreads; tries++) {
		if (rk_drop_caches(4))
			return -1;
		got = rk_vmstat("stack_reclaim_stacks") - before;
	}
	if (got < nthreads)
		fprintf(stderr, "reclaimed %ld stacks, want >= %ld\n", got,
			nthreads);
	return got >= nthreads ? 0 : -1;
}

static struct rk_fail_saved fail;

static long saved_sysctl = -1;

static void restore(void)
{
	if (fail.set)
		rk_fail_fast(0, &fail);
	if (saved_sysctl >= 0)
		rk_write_file(RK_SYSCTL, saved_sysctl ? "1\n" : "0\n");
}

static const char *const mode_names[] = { "unreclaimed", "fast", "deferred" };

/* One mode, one round: every thread woken once. 0 or -1. */
static int run_mode(int mode, int round, double *lat, double *fraction)
{
	const char *counter = mode == 2 ? "stack_repopulate_deferred" :
			      "stack_repopulate_fast";
	long fast0, def0, fast1, def1, path0;

	if (mode == 2 && rk_fail_fast(1, &fail)) {
		fprintf(stderr, "cannot set up %s (CONFIG_FAIL_STACK_REPOPULATE?)\n",
			RK_FAIL_DIR);
		return -1;
	}
	if (mode > 0 && reclaim_all())
		return -1;
	fast0 = rk_vmstat("stack_repopulate_fast");
	def0 = rk_vmstat("stack_repopulate_deferred");
	path0 = rk_vmstat(counter);
	if (wake_all_once(lat))
		return -1;
	if (mode == 2 && rk_fail_fast(0, &fail))
		return -1;
	fast1 = rk_vmstat("stack_repopulate_fast");
	def1 = rk_vmstat("stack_repopulate_deferred");
	*fraction = (double)(rk_vmstat(counter) - path0) / nthreads;
	if (mode == 0 && (fast1 != fast0 || def1 != def0))
		printf("note: round %d unreclaimed: %ld fast and %ld deferred\n"
		       "repopulations (something else reclaimed stacks)\n",
		       round, fast1 - fast0, def1 - def0);
	if (mode == 1 && *fraction < 0.9) {
		fprintf(stderr, "round %d fast: only %.0f%% of wakeups took the fast path\n"
			"(%ld deferred): pool empty or memcg charge failed\n",
			round, *fraction * 100, def1 - def0);
		return -1;
	}
	if (mode == 2 && *fraction < 1) {
		fprintf(stderr, "round %d deferred: only %ld of %ld wakeups were deferred\n",
			round, def1 - def0, nthreads);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static double one[MAX_THREADS];
	double *pooled[3];
	int have = rk_have_feature(), nmodes = have ? 3 : 1, failed = 0;
	long rounds, n[3] = { 0 };

	rk_args_check(argc, argv, keys);
	rounds = rk_arg_long(argc, argv, "rounds", 10, 1, MAX_ROUNDS);
	nthreads = rk_arg_long(argc, argv, "threads", 32, 1, MAX_THREADS);
	pause_ms = rk_arg_long(argc, argv, "pause_ms", 2, 0, 1000);
	pin = rk_arg_long(argc, argv, "pin", 1, 0, 1);
	printf("p4_wake: rounds=%ld threads=%ld pause_ms=%ld pin=%ld%s\n", rounds,
	       nthreads, pause_ms, pin, have ? "" : " (no feature: vanilla only)");
	pin_self();

	for (int mode = 0; mode < 3; mode++) {
		pooled[mode] = malloc(rounds * nthreads * sizeof(double));
		if (!pooled[mode])
			return 1;
	}
	if (have) {
		saved_sysctl = rk_read_long(RK_SYSCTL);
		atexit(restore);
		if (rk_write_file(RK_SYSCTL, "1\n")) {
			fprintf(stderr, "cannot switch the feature on\n");
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++) {
		w[i].ack = -2;	/* not started */
		if (pthread_create(&tids[i], NULL, waiter_thread, &w[i])) {
			fprintf(stderr, "cannot create thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < nthreads; i++)
		if (wait_blocked(i, 0))
			return 1;

	for (int r = 0; r < rounds && !failed; r++) {
		for (int k = 0; k < nmodes && !failed; k++) {
			int mode = (r + k) % nmodes;
			const char *name = have ? mode_names[mode] : "vanilla";
			double frac;

			if (run_mode(mode, r, one, &frac)) {
				fprintf(stderr, "mode %s round %d failed\n", name, r);
				failed = 1;
				break;
			}
			memcpy(&pooled[mode][n[mode]], one, nthreads * sizeof(*one));
			n[mode] += nthreads;
			rk_report("p4_wake", name, r, "median_us",
				  rk_percentile(one, nthreads, 50));
			if (mode > 0)
				rk_report("p4_wake", name, r, mode == 1 ?
					  "fast_fraction" : "deferred_fraction", frac);
		}
	}
	if (failed) {
		/* A thread may be stuck: do not join, let exit take them. */
		return 1;
	}

	for (int i = 0; i < nthreads; i++) {
		__atomic_store_n(&w[i].word, -1, __ATOMIC_RELEASE);
		rk_futex(&w[i].word, FUTEX_WAKE_PRIVATE, 1);
	}
	for (int i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);

	for (int mode = 0; mode < nmodes; mode++) {
		const char *name = have ? mode_names[mode] : "vanilla";
		double p50 = rk_percentile(pooled[mode], n[mode], 50);

		rk_report("p4_wake", name, 0, "p50_us", p50);
		rk_report("p4_wake", name, 0, "p90_us",
			  rk_percentile(pooled[mode], n[mode], 90));
		rk_report("p4_wake", name, 0, "p99_us",
			  rk_percentile(pooled[mode], n[mode], 99));
		rk_report("p4_wake", name, 0, "count", n[mode]);
		rk_report_hist("p4_wake", name, pooled[mode], n[mode]);
		printf("%s: p50 %.1f us (x%.2f of %s)\n", name, p50,
		       p50 / rk_percentile(pooled[0], n[0], 50), have ?
		       "unreclaimed" : "vanilla");
	}
	return 0;
}
